//! The lowest layer of the safety core: values and their encodings, pure and with no Kafka
//! client in sight — plans, markers, control records, offsets, JSON, the fast decoder, Flink
//! snapshot metadata, the errors and the WIT `kafka-error`. Depends on no other crate of the
//! core: `action-state-kafka` and `action-state-protocol` build on it, and the validator and
//! reader components use it alone, which shows they hold no Kafka.

pub mod boundary;
pub mod control;
pub mod control_history;
pub mod decimal;
pub mod decode;
pub mod error;
pub mod fields;
pub mod json;
mod json_scan;
pub mod kafka_error;
pub mod marker;
pub mod marker_file;
pub mod offsets;
pub mod parse;
pub mod plan;
pub mod planning;
pub mod sha256;
pub mod snapshot;
pub mod topic_id;

pub use control::{ControlEntry, ControlRecord, Status};
pub use control_history::{ControlHistory, PlanTimes};
pub use error::{CleanupError, FailureClass, KafkaFailure, Result};
pub use marker::{Marker, VersionedMarker};
pub use marker_file::{plan_from_marker_files, split_marker_file, split_named_marker_file};
pub use offsets::PartitionOffsets;
pub use plan::{ListedPlan, Plan, PlanFields, compute_plan_id};
pub use planning::{parse_markers, plan_from_marker_texts, plan_from_markers};
