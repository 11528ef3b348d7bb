//! The typed errors of the safety core. Each case mirrors a case of the WIT `cleanup-error`
//! variant; `Display` renders the one-sentence message every host prints.

use std::fmt;

use crate::offsets::{PartitionOffsets, brief_partitions, partition_difference};

/// A partition whose requested offset is below the committed boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryViolation {
    pub topic: String,
    pub partition: u32,
    pub requested: u64,
    pub boundary: u64,
}

/// A plan that would move some partition's boundary backwards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundaryRegression {
    pub plan_id: String,
    pub partition: u32,
    pub planned: u64,
    pub boundary: u64,
}

/// The data topic is not the physical topic that was expected (recreated, or partitions changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicChange {
    pub topic: String,
    /// When the check ran, e.g. "checked immediately before delete".
    pub context: String,
    pub expected_topic_id: String,
    pub found_topic_id: String,
    pub expected_partitions: Vec<u32>,
    pub found_partitions: Vec<u32>,
}

/// A requested offset outside the range Kafka can currently serve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeViolation {
    pub topic: String,
    pub partition: u32,
    pub requested: u64,
    pub beginning: Option<u64>,
    pub end: Option<u64>,
}

/// WIT `kafka-failure`: a Kafka step that failed after the core's retries; `retriable` says
/// whether running the command again may succeed, `cause` is the last `kafka-error` a host
/// capability reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaFailure {
    pub operation: String,
    pub message: String,
    pub retriable: bool,
    pub cause: Option<crate::kafka_error::KafkaError>,
}

impl KafkaFailure {
    /// A failure the core itself detected (no host error behind it).
    pub fn new(operation: impl Into<String>, message: impl Into<String>, retriable: bool) -> Self {
        KafkaFailure {
            operation: operation.into(),
            message: message.into(),
            retriable,
            cause: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CleanupError {
    /// A plan document or value that breaks a rule of SPEC §2; nothing was done.
    InvalidPlan(String),
    /// A recovery marker that breaks a rule of SPEC §2–§3; nothing was done.
    InvalidMarker(String),
    /// A Flink checkpoint or savepoint file that this reader cannot read (truncated, corrupt,
    /// or a format it does not know); nothing was done.
    InvalidSnapshot(String),
    /// A command argument that is out of range or contradicts another (topic names, factors).
    InvalidArgument(String),
    /// A restore below the committed boundary (SPEC §6).
    BoundaryViolation(BoundaryViolation),
    /// A plan that does not advance the effective boundary (SPEC §4).
    BoundaryRegression(BoundaryRegression),
    /// The live data topic is not the one the plan or marker names.
    TopicChanged(Box<TopicChange>),
    /// The data topic's configuration would let Kafka delete records on its own.
    UnsafeTopicConfig(String),
    /// The control topic is missing, has the wrong shape or the wrong configuration.
    InvalidControlTopic(String),
    /// A plan offset or restore offset outside [beginning, end] of its partition.
    OffsetsUnavailable(RangeViolation),
    /// After DeleteRecords a partition still begins below its target; the plan stays COMMITTED.
    DeleteUnverified(RangeViolation),
    /// The control topic holds a record that breaks SPEC §7; apply and recovery stop.
    ControlTopicCorrupt(String),
    /// The recovery decision table refuses (no boundary yet, legacy markers, mixtures).
    RecoveryRefused(String),
    /// Cleanup and per-key tombstones were both enabled.
    ConflictingPolicies(String),
    /// Another writer holds the control topic.
    Fenced(String),
    /// Replay made no progress within the configured window.
    ReplayStalled(String),
    /// A replayed record could not be decoded.
    ReplayRecordInvalid(String),
    /// A Kafka client failure or timeout.
    Kafka(KafkaFailure),
}

pub type Result<T, E = CleanupError> = std::result::Result<T, E>;

/// What a refusal or failure means for whoever runs the component (WIT `failure-class`): the one
/// mapping from error cases to a host's exit code or exception class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureClass {
    /// A check refused the input: a plan, marker, option or control topic.
    Refused,
    /// Kafka failed, or stopped making progress, beyond the retries.
    Failed,
    /// Another apply of the same control topic fenced this run's writer.
    Fenced,
    /// The recovery rules refuse the restore.
    RestoreRefused,
}

impl CleanupError {
    /// A stable kebab-case name for the case, matching the WIT variant case.
    pub fn kind(&self) -> &'static str {
        match self {
            CleanupError::InvalidPlan(_) => "invalid-plan",
            CleanupError::InvalidMarker(_) => "invalid-marker",
            CleanupError::InvalidSnapshot(_) => "invalid-snapshot",
            CleanupError::InvalidArgument(_) => "invalid-argument",
            CleanupError::BoundaryViolation(_) => "boundary-violation",
            CleanupError::BoundaryRegression(_) => "boundary-regression",
            CleanupError::TopicChanged(_) => "topic-changed",
            CleanupError::UnsafeTopicConfig(_) => "unsafe-topic-config",
            CleanupError::InvalidControlTopic(_) => "invalid-control-topic",
            CleanupError::OffsetsUnavailable(_) => "offsets-unavailable",
            CleanupError::DeleteUnverified(_) => "delete-unverified",
            CleanupError::ControlTopicCorrupt(_) => "control-topic-corrupt",
            CleanupError::RecoveryRefused(_) => "recovery-refused",
            CleanupError::ConflictingPolicies(_) => "conflicting-policies",
            CleanupError::Fenced(_) => "fenced",
            CleanupError::ReplayStalled(_) => "replay-stalled",
            CleanupError::ReplayRecordInvalid(_) => "replay-record-invalid",
            CleanupError::Kafka(_) => "kafka",
        }
    }

    /// What this error means as the stop of an apply.
    pub fn class(&self) -> FailureClass {
        match self {
            CleanupError::Kafka(_) | CleanupError::ReplayStalled(_) => FailureClass::Failed,
            CleanupError::Fenced(_) => FailureClass::Fenced,
            _ => FailureClass::Refused,
        }
    }

    /// What this error means as the answer to a restore: the recovery rules refuse it, or (a
    /// wrong marker or argument, a control topic that does not exist or is not one, so no
    /// boundary was checked) the input is refused, or Kafka failed.
    pub fn restore_class(&self) -> FailureClass {
        match self {
            CleanupError::BoundaryViolation(_)
            | CleanupError::RecoveryRefused(_)
            | CleanupError::ConflictingPolicies(_)
            | CleanupError::TopicChanged(_)
            | CleanupError::OffsetsUnavailable(_)
            | CleanupError::ControlTopicCorrupt(_) => FailureClass::RestoreRefused,
            _ => self.class(),
        }
    }

    pub fn kafka(operation: impl Into<String>, message: impl Into<String>) -> Self {
        CleanupError::Kafka(KafkaFailure::new(operation, message, false))
    }
}

fn or_unknown(value: Option<u64>) -> String {
    value.map_or_else(|| "unknown".to_owned(), |v| v.to_string())
}

impl fmt::Display for CleanupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CleanupError::InvalidPlan(message)
            | CleanupError::InvalidMarker(message)
            | CleanupError::InvalidSnapshot(message)
            | CleanupError::InvalidArgument(message)
            | CleanupError::UnsafeTopicConfig(message)
            | CleanupError::InvalidControlTopic(message)
            | CleanupError::ControlTopicCorrupt(message)
            | CleanupError::RecoveryRefused(message)
            | CleanupError::ConflictingPolicies(message)
            | CleanupError::Fenced(message)
            | CleanupError::ReplayStalled(message)
            | CleanupError::ReplayRecordInvalid(message) => f.write_str(message),
            CleanupError::BoundaryViolation(v) => write!(
                f,
                "Cannot restore Kafka action state for {}-{} from offset {} because the committed cleanup boundary is {}",
                v.topic, v.partition, v.requested, v.boundary
            ),
            CleanupError::BoundaryRegression(r) => write!(
                f,
                "Cleanup plan {} does not advance the committed boundary: partition {} would move from {} back to {}",
                r.plan_id, r.partition, r.boundary, r.planned
            ),
            CleanupError::TopicChanged(c) if c.found_topic_id.is_empty() => write!(
                f,
                "Kafka action-state topic {} does not exist ({}); expected ID {}",
                c.topic, c.context, c.expected_topic_id
            ),
            CleanupError::TopicChanged(c) if c.found_topic_id == crate::topic_id::ZERO_TOPIC_ID => {
                write!(
                    f,
                    "Kafka action-state topic {} has the all-zero topic ID ({}): {}, so the expected ID {} cannot be confirmed",
                    c.topic,
                    c.context,
                    crate::topic_id::NO_TOPIC_IDS,
                    c.expected_topic_id
                )
            }
            CleanupError::TopicChanged(c)
                if c.expected_topic_id != c.found_topic_id
                    && !crate::topic_id::is_kafka_form(&c.expected_topic_id) =>
            {
                write!(
                    f,
                    "Kafka action-state topic {} has topic ID {} ({}), but the expected ID {} is not a Kafka topic ID (Kafka writes 16 bytes as 22 characters of URL-safe base64, as kafka-topics.sh --describe prints them), so it names no Kafka topic",
                    c.topic, c.found_topic_id, c.context, c.expected_topic_id
                )
            }
            CleanupError::TopicChanged(c) if c.expected_topic_id != c.found_topic_id => write!(
                f,
                "Kafka action-state topic {} changed ({}): expected ID {} but found {}; the topic may have been recreated",
                c.topic, c.context, c.expected_topic_id, c.found_topic_id
            ),
            CleanupError::TopicChanged(c) => write!(
                f,
                "Kafka action-state topic {} changed partitions ({}): expected {} but found {}{}",
                c.topic,
                c.context,
                brief_partitions(&c.expected_partitions),
                brief_partitions(&c.found_partitions),
                partition_difference(&c.expected_partitions, &c.found_partitions)
            ),
            CleanupError::OffsetsUnavailable(r) => write!(
                f,
                "Offset {} of {}-{} is not available: the available range is [{}, {}]",
                r.requested,
                r.topic,
                r.partition,
                or_unknown(r.beginning),
                or_unknown(r.end)
            ),
            CleanupError::DeleteUnverified(r) => write!(
                f,
                "Kafka cleanup for {}-{} requested offset {} but beginning offset is {}; the plan stays COMMITTED and can be applied again",
                r.topic,
                r.partition,
                r.requested,
                or_unknown(r.beginning)
            ),
            CleanupError::Kafka(k) => write!(f, "Kafka {} failed: {}", k.operation, k.message),
        }
    }
}

impl std::error::Error for CleanupError {}

impl From<KafkaFailure> for CleanupError {
    fn from(error: KafkaFailure) -> Self {
        CleanupError::Kafka(error)
    }
}

/// Helper for messages that print a boundary: `{0=10, 1=20}` like the Java tool.
pub fn format_boundary(offsets: &PartitionOffsets) -> String {
    offsets.to_string()
}
