//! The capability contract 0.2 as the core sees it: one method per WIT import, no policy. The
//! cleanup component implements `Capabilities` over its imports, the conformance suite drives
//! them, and unit tests implement them over an in-memory fake; `policy` builds every retry,
//! wait and decoding rule on top, once.

use std::fmt;

use crate::offsets::PartitionOffsets;
use crate::ops::{ConfigEntry, OffsetSpec};

/// The case of a host's `kafka-error`: what a caller must tell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    UnknownTopic,
    Authorization,
    Authentication,
    Timeout,
    Transport,
    NotLeader,
    Fenced,
    PolicyViolation,
    OffsetOutOfRange,
    Other,
}

impl ErrorKind {
    /// Every case, in the WIT's order (`host/tests/components.rs` checks it against the WIT).
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::UnknownTopic,
        ErrorKind::Authorization,
        ErrorKind::Authentication,
        ErrorKind::Timeout,
        ErrorKind::Transport,
        ErrorKind::NotLeader,
        ErrorKind::Fenced,
        ErrorKind::PolicyViolation,
        ErrorKind::OffsetOutOfRange,
        ErrorKind::Other,
    ];

    /// Whether waiting and asking again may succeed: the cluster is briefly unreachable, slow or
    /// between leaders. Everything else is an answer.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout | ErrorKind::Transport | ErrorKind::NotLeader
        )
    }

    /// The WIT case name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::UnknownTopic => "unknown-topic",
            ErrorKind::Authorization => "authorization",
            ErrorKind::Authentication => "authentication",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Transport => "transport",
            ErrorKind::NotLeader => "not-leader",
            ErrorKind::Fenced => "fenced",
            ErrorKind::PolicyViolation => "policy-violation",
            ErrorKind::OffsetOutOfRange => "offset-out-of-range",
            ErrorKind::Other => "other",
        }
    }
}

/// A host's `kafka-error`: its case plus the broker's (or client's) code, name and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError {
    pub kind: ErrorKind,
    pub code: i32,
    pub name: String,
    pub message: String,
}

impl HostError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        HostError {
            kind,
            code: 0,
            name: String::new(),
            message: message.into(),
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // librdkafka messages usually start with the code name already.
        if self.name.is_empty() || self.message.contains(&self.name) {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.name, self.message)
        }
    }
}

impl std::error::Error for HostError {}

pub type CapResult<T> = Result<T, HostError>;

/// One partition's readable range: log start offset and last stable offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionRange {
    pub partition: u32,
    pub beginning: u64,
    pub end: u64,
}

/// `kafka-admin.topic-metadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    pub topic: String,
    pub topic_id: String,
    pub partitions: Vec<u32>,
    pub configs: Vec<ConfigEntry>,
    pub offsets: Vec<PartitionRange>,
}

/// `kafka-consumer.polled-record`: what the component sees of a consumed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolledRecord {
    pub partition: u32,
    pub offset: u64,
    pub has_key: bool,
    pub has_value: bool,
    pub utf8: bool,
    pub key: Option<String>,
    pub value: Option<String>,
}

/// `kafka-writer.writer`.
pub trait Writer {
    fn append(&mut self, topic: &str, partition: u32, key: &str, value: &str) -> CapResult<u64>;
}

/// `kafka-consumer.consumer`.
pub trait Consumer {
    fn assign(&mut self, start: &PartitionOffsets) -> CapResult<()>;
    fn position(&mut self) -> CapResult<PartitionOffsets>;
    fn poll(
        &mut self,
        max_records: u32,
        timeout_ms: u32,
        with_data: bool,
    ) -> CapResult<Vec<PolledRecord>>;
}

/// The imports of the `cleanup` world (without `operator-events`), one method each.
pub trait Capabilities {
    type Writer: Writer;
    type Consumer: Consumer;

    fn now_ms(&mut self) -> u64;
    fn sleep_ms(&mut self, ms: u32);
    fn operation_timeout_ms(&mut self) -> u32;

    fn describe(
        &mut self,
        topics: &[&str],
        config_names: &[&str],
        with_offsets: bool,
    ) -> CapResult<Vec<Option<TopicMetadata>>>;
    fn create_topic(
        &mut self,
        topic: &str,
        partitions: u32,
        replication_factor: u16,
        configs: &[ConfigEntry],
    ) -> CapResult<bool>;
    /// One entry per partition Kafka answered, as the host returned them (possibly incomplete).
    fn list_offsets(
        &mut self,
        topic: &str,
        partitions: &[u32],
        spec: OffsetSpec,
    ) -> CapResult<Vec<(u32, u64)>>;
    fn delete_records(
        &mut self,
        topic: &str,
        before: &PartitionOffsets,
    ) -> CapResult<Vec<(u32, u64)>>;

    fn open_writer(&mut self, transactional_id: Option<&str>) -> CapResult<Self::Writer>;
    fn open_consumer(&mut self, topic: &str) -> CapResult<Self::Consumer>;
}
