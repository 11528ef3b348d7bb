//! The lowest layer: values and their encodings, with no Kafka client in sight. Imports nothing
//! from `kafka` or `protocol`.

pub mod boundary;
pub mod control;
pub mod control_history;
pub mod decimal;
pub mod decode;
pub mod error;
pub mod fields;
pub mod json;
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
