//! The top layer of the safety core: the steps that talk to Kafka through
//! `action_state_kafka::policy::Policy` — apply, recovery, replay, status, preview and the control
//! topic's replication settings. Builds on `action-state-format` and `action-state-kafka`.
//!
//! Plain Rust with no WebAssembly bindings: the cleanup component (`guest/cleanup`) converts WIT
//! values to these types and back over its imports, and every host runs the same decisions.

pub mod apply;
pub mod preview;
pub mod recovery;
pub mod replay;
pub mod replication;
pub mod status;

#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod policy_tests;
#[cfg(test)]
mod replay_tests;
#[cfg(test)]
mod round_trip_tests;

pub use apply::{
    ApplyFailure, ApplyOptions, ApplyOutcome, ApplyReport, PartitionPreview, Review, apply,
    apply_with_status,
};
