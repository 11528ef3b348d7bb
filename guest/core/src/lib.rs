//! The safety core of checkpoint-aligned Kafka action-state cleanup.
//!
//! Plain Rust with no WebAssembly bindings: the component adapters in `guest/validator` and
//! `guest/cleanup` convert WIT values to these types and back, and every host runs the same
//! decisions. Data in, data out; where a protocol must talk to Kafka step by step it drives
//! `policy::Policy` over the `capabilities::Capabilities` the cleanup component implements over
//! its imports.

pub mod apply;
pub mod boundary;
pub mod capabilities;
pub mod classified;
pub mod control;
pub mod decimal;
pub mod decode;
pub mod error;
pub mod fields;
pub mod json;
pub mod kafka_codes;
pub mod kafka_types;
pub mod marker;
pub mod marker_file;
pub mod offsets;
pub mod plan;
pub mod planning;
pub mod policy;
pub mod preview;
pub mod recovery;
pub mod replay;
pub mod replication;
pub mod sha256;
pub mod snapshot;
pub mod status;
pub mod topic_id;
pub mod topics;

#[cfg(test)]
mod apply_tests;
#[cfg(test)]
mod fake;
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
pub use control::{ControlEntry, ControlHistory, ControlRecord, Status};
pub use error::{CleanupError, KafkaError, Result};
pub use marker::{Marker, VersionedMarker};
pub use marker_file::{plan_from_marker_files, split_marker_file, split_named_marker_file};
pub use offsets::PartitionOffsets;
pub use plan::{Plan, PlanFields, compute_plan_id};
pub use planning::{parse_markers, plan_from_marker_texts, plan_from_markers};
