//! The plain data the Kafka policy and the protocols exchange: topic descriptions and states,
//! configuration entries, offset specs, the cluster's description and why an append failed.
//! `policy::Policy` is the one Kafka abstraction; these are its words.

use action_state_format::error::KafkaFailure;
use action_state_format::offsets::PartitionOffsets;

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

pub type PolicyResult<T> = Result<T, KafkaFailure>;

/// Why a control-topic append did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppendError {
    /// A concurrent apply fenced this writer; nothing was written.
    Fenced(String),
    Failed(KafkaFailure),
}

/// A topic's metadata with the configuration entries that were asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicState {
    pub description: TopicDescription,
    pub configs: Vec<ConfigEntry>,
    /// The smallest replica count over its partitions.
    pub replication_factor: u16,
    /// Every partition's range, ascending by partition, when asked for (`inspect_ranges`);
    /// empty otherwise.
    pub ranges: Vec<PartitionRange>,
}

/// What the cluster says about its brokers (`kafka-admin.cluster-description`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterDescription {
    /// Broker IDs, ascending, without duplicates.
    pub brokers: Vec<u32>,
    /// One entry per requested name, as the broker with the lowest ID reports it.
    pub configs: Vec<ConfigEntry>,
}

/// WIT `kafka-admin.partition-range`: one partition's readable range, its log start offset and
/// its last stable offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionRange {
    pub partition: u32,
    pub beginning: u64,
    pub end: u64,
}

/// Each range's log start offset, by partition.
pub fn beginnings(ranges: &[PartitionRange]) -> PartitionOffsets {
    ranges.iter().map(|r| (r.partition, r.beginning)).collect()
}

/// Each range's last stable offset, by partition.
pub fn ends(ranges: &[PartitionRange]) -> PartitionOffsets {
    ranges.iter().map(|r| (r.partition, r.end)).collect()
}
