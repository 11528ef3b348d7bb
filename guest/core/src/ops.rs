//! The Kafka operations the protocols need, as a small trait. The cleanup component implements it
//! over its WIT imports; unit tests implement it over an in-memory fake. Each method is one
//! capability call, so counting calls counts broker round trips.

use crate::control::ControlEntry;
use crate::error::KafkaError;
use crate::offsets::PartitionOffsets;

/// What Kafka says about one topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDescription {
    pub topic: String,
    /// Kafka's 22-character URL-safe base64 topic UUID.
    pub topic_id: String,
    /// Partition numbers, ascending.
    pub partitions: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    /// The log start offset (the "beginning"): the first offset still readable.
    Earliest,
    /// The high watermark (the "end"): the next offset to be written.
    Latest,
}

/// One topic configuration value; `None` when the broker has no value for the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub name: String,
    pub value: Option<String>,
}

pub type KafkaResult<T> = Result<T, KafkaError>;

/// Why a control-topic append did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendError {
    /// A concurrent apply fenced this writer; nothing was written.
    Fenced(String),
    Failed(KafkaError),
}

pub trait KafkaOps {
    /// Describes each topic in one request; `None` for a topic that does not exist.
    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>>;

    /// Reads the named configuration entries of each topic in one request.
    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>>;

    /// Creates a topic; `Ok(false)` when it already existed (another apply may have won).
    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool>;

    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> KafkaResult<PartitionOffsets>;

    /// Deletes every record below `before` per partition; returns the resulting beginnings
    /// (low watermarks) Kafka reported.
    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> KafkaResult<PartitionOffsets>;

    /// Reads every record of the single-partition control topic, from its beginning to the end
    /// offset captured when the read started.
    fn read_control_log(&mut self, topic: &str) -> KafkaResult<Vec<ControlEntry>>;

    /// Becomes the only writer of the control topic, fencing earlier writers.
    fn fence_control(&mut self, topic: &str) -> KafkaResult<()>;

    /// Appends one record durably; with `fenced`, in a transaction of the writer `fence_control`
    /// created (failing with `AppendError::Fenced` if a newer writer fenced it). Returns its offset.
    fn append_control(
        &mut self,
        topic: &str,
        key: &str,
        value: &str,
        fenced: bool,
    ) -> Result<u64, AppendError>;
}
