//! The middle layer: the capability contract the hosts implement, the WIT's Kafka types, and the
//! policy that turns the contract into retried, classified answers. Imports from `format` only.

pub mod capabilities;
pub mod classified;
pub mod kafka_codes;
pub mod kafka_types;
pub mod policy;
pub mod topics;
