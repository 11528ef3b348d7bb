//! The safety core of checkpoint-aligned Kafka action-state cleanup.
//!
//! Plain Rust with no WebAssembly bindings: the component adapters in `guest/validator` and
//! `guest/cleanup` convert WIT values to these types and back, and every host runs the same
//! decisions. Data in, data out; where a protocol must talk to Kafka step by step it drives
//! `policy::Policy` over the `capabilities::Capabilities` the cleanup component implements over
//! its imports.
//!
//! The modules sit in three layers, each importing only from itself and the layers below it,
//! with no import cycle among them (`tests/layers.rs` checks both):
//!
//! - `format`: values and their encodings, pure and Kafka-free: plans, markers, control records,
//!   offsets, JSON, the fast decoder, savepoint metadata, the errors and the WIT `kafka-error`.
//! - `kafka`: the capability contract the hosts implement (`capabilities`), the WIT's Kafka
//!   types, and `policy`, the one seam that turns the contract into retried, classified answers.
//! - `protocol`: the steps that talk to Kafka through the policy: apply, recovery, replay,
//!   status, preview and the control topic's replication settings.
//!
//! Every module is also re-exported at the crate root (`crate::plan`, `action_state_core::apply`),
//! the paths the other crates and the modules themselves use.

pub mod format;
pub mod kafka;
pub mod protocol;

pub use format::{
    boundary, control, control_history, decimal, decode, error, fields, json, kafka_error, marker,
    marker_file, offsets, parse, plan, planning, sha256, snapshot, topic_id,
};
pub use kafka::{capabilities, classified, kafka_codes, kafka_types, policy, topics};
pub use protocol::{apply, preview, recovery, replay, replication, status};

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
pub use control::{ControlEntry, ControlRecord, Status};
pub use control_history::{ControlHistory, PlanTimes};
pub use error::{CleanupError, KafkaFailure, Result};
pub use marker::{Marker, VersionedMarker};
pub use marker_file::{plan_from_marker_files, split_marker_file, split_named_marker_file};
pub use offsets::PartitionOffsets;
pub use plan::{ListedPlan, Plan, PlanFields, compute_plan_id};
pub use planning::{parse_markers, plan_from_marker_texts, plan_from_markers};
