//! The middle layer of the safety core: the capability contract the hosts implement
//! (`capabilities`), the WIT's Kafka types, and `policy`, the one seam that turns the contract
//! into retried, classified answers. Builds on `action-state-format` only. With the `testing`
//! feature, `fake` is an in-memory Kafka behind the same contract, for the protocol's unit tests.

pub mod call;
pub mod capabilities;
pub mod classified;
pub mod kafka_codes;
pub mod kafka_types;
pub mod leaf;
pub mod policy;
pub mod topics;

#[cfg(any(test, feature = "testing"))]
#[allow(
    clippy::expect_used,
    clippy::new_without_default,
    reason = "test code: a broken invariant of the fake fails the test that met it"
)]
pub mod fake;
