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

/// (partition, beginning, end).
pub type PartitionRange = (u32, u64, u64);

pub trait KafkaOps {
    /// Describes topics (with each one's replica count) and reads their configuration in one
    /// round trip.
    fn inspect_topics(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>>;

    /// `inspect_topics` with every partition's range (beginning, end) from the same round trip:
    /// one call where a describe and two offset listings would be three.
    fn inspect_ranges(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Option<TopicState>>>;

    /// The cluster's brokers and the named configuration entries of one of them.
    fn describe_cluster(&mut self, names: &[&str]) -> KafkaResult<ClusterDescription>;

    /// Beginning and end of each partition in one round trip. The default lists them in turn.
    fn offset_range(
        &mut self,
        topic: &str,
        partitions: &[u32],
    ) -> KafkaResult<Vec<PartitionRange>> {
        let beginnings = self.list_offsets(topic, partitions, OffsetSpec::Earliest)?;
        let ends = self.list_offsets(topic, partitions, OffsetSpec::Latest)?;
        Ok(partitions
            .iter()
            .filter_map(|p| Some((*p, beginnings.get(*p)?, ends.get(*p)?)))
            .collect())
    }

    /// Describes each topic in one request; `None` for a topic that does not exist.
    fn describe_topics(&mut self, topics: &[&str]) -> KafkaResult<Vec<Option<TopicDescription>>>;

    /// Reads the named configuration entries of each topic in one request.
    fn describe_configs(
        &mut self,
        topics: &[&str],
        names: &[&str],
    ) -> KafkaResult<Vec<Vec<ConfigEntry>>>;

    /// Sends the creation of a topic and returns without waiting until metadata shows it;
    /// `Ok(false)` when it already existed. Whatever next asks about the topic waits for it
    /// instead, so the caller can do other work meanwhile (apply fences its control topic's
    /// writer while the topic it just created propagates). The default creates and waits.
    fn request_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> KafkaResult<bool> {
        self.create_topic(topic, partitions, replication_factor, configs)
    }

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

    /// Deletes every record below `before` per partition of the physical topic `expected`
    /// (its name, ID and partitions); returns the resulting beginnings (low watermarks) Kafka
    /// reported.
    ///
    /// DeleteRecords names a topic only by its name, so a topic deleted and recreated under the
    /// same name would lose its prefix instead. Every attempt, a retry after any error included,
    /// is therefore sent only after a describe made within this call confirmed `expected`'s
    /// identity; a changed or missing identity ends the call with `topic-changed` and nothing
    /// sent. What remains is the one round trip between that describe and the request, which
    /// Kafka's DeleteRecords (no topic-ID form) cannot close.
    fn delete_records(
        &mut self,
        expected: &TopicDescription,
        before: &PartitionOffsets,
    ) -> crate::error::Result<PartitionOffsets>;

    /// `delete_records` below offsets decided from the description each attempt is sent after:
    /// every attempt describes `expected.topic` (with the configuration entries `names` and,
    /// with `with_ranges`, every partition's range), hands the answer (`None`: the topic is
    /// missing) to `decide`, which checks it and returns the offsets to delete below or
    /// refuses, and sends the delete only once the identity is confirmed too. A retry describes
    /// and decides again. `decide` is the caller's last check: the description it sees is the
    /// one the request follows, with no other Kafka call between them.
    fn delete_described(
        &mut self,
        expected: &TopicDescription,
        names: &[&str],
        with_ranges: bool,
        decide: &mut dyn FnMut(Option<&TopicState>) -> crate::error::Result<PartitionOffsets>,
    ) -> crate::error::Result<PartitionOffsets>;

    /// Reads every record of the single-partition control topic, from its beginning to the end
    /// offset captured when the read started. Records that are not text are corruption.
    fn read_control_log(&mut self, topic: &str) -> crate::error::Result<Vec<ControlEntry>>;

    /// Reads the records of the single-partition control topic in [`beginning`, `end`): the
    /// range a describe of the control topic answered (`inspect_ranges`), so a reader that
    /// needs no fence before it reads makes no second request for it.
    fn read_control_range(
        &mut self,
        topic: &str,
        beginning: u64,
        end: u64,
    ) -> crate::error::Result<Vec<ControlEntry>>;

    /// Becomes the only writer of the control topic, fencing earlier writers.
    fn fence_control(&mut self, topic: &str) -> KafkaResult<()>;

    /// Waits `ms` milliseconds (the protocol's own pauses, e.g. after being fenced).
    fn pause(&mut self, ms: u32);

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
