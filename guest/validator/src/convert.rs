//! Conversions between WIT types and core types, in one place. Shared with the cleanup
//! component through `#[path]`, since both generate identical binding paths.

use crate::bindings::action_state::cleanup::types::{
    BoundaryRegression, BoundaryViolation, CleanupError, ControlEntry, ControlRecord, FailureClass,
    KafkaDetail, KafkaError, KafkaFailure, PartitionOffset, Plan, RangeViolation, RecoveryMarker,
    Status, TopicChange, VersionedMarker,
};

pub fn to_offsets(offsets: &[PartitionOffset]) -> action_state_format::PartitionOffsets {
    offsets.iter().map(|po| (po.partition, po.offset)).collect()
}

pub fn from_offsets(offsets: &action_state_format::PartitionOffsets) -> Vec<PartitionOffset> {
    offsets
        .iter()
        .map(|(partition, offset)| PartitionOffset { partition, offset })
        .collect()
}

/// Offsets an embedder supplied: each partition once (a list could otherwise name one twice,
/// and a map would silently keep the last) and within the ranges the parser accepts. The
/// embedder controls these values, so they are checked like parsed input; `invalid` chooses
/// the error case.
pub fn checked_offsets(
    offsets: &[PartitionOffset],
    subject: &str,
    invalid: fn(String) -> action_state_format::CleanupError,
) -> Result<action_state_format::PartitionOffsets, action_state_format::CleanupError> {
    let mut checked = action_state_format::PartitionOffsets::new();
    for po in offsets {
        if let Some(first) = checked.get(po.partition) {
            return Err(invalid(format!(
                "{subject} contains duplicate Kafka partition {} (offsets {first} and {})",
                po.partition, po.offset
            )));
        }
        checked.insert(po.partition, po.offset);
    }
    checked.check_ranges(subject).map_err(invalid)?;
    Ok(checked)
}

/// A plan record taken as given, for pure writers and arithmetic that do not trust its ID.
pub fn plan_unchecked(p: Plan) -> action_state_format::PlanFields {
    action_state_format::PlanFields {
        plan_id: p.plan_id,
        source_recovery_point: p.source_recovery_point,
        topic: p.topic,
        topic_id: p.topic_id,
        offsets: to_offsets(&p.offsets),
    }
}

impl From<action_state_format::Plan> for Plan {
    fn from(p: action_state_format::Plan) -> Self {
        let p = p.into_fields();
        Plan {
            schema_version: action_state_format::plan::PLAN_SCHEMA_VERSION,
            offsets: from_offsets(&p.offsets),
            plan_id: p.plan_id,
            source_recovery_point: p.source_recovery_point,
            topic: p.topic,
            topic_id: p.topic_id,
        }
    }
}

impl From<action_state_format::ListedPlan> for Plan {
    fn from(p: action_state_format::ListedPlan) -> Self {
        Plan {
            schema_version: action_state_format::plan::PLAN_SCHEMA_VERSION,
            offsets: listed_offsets(p.offsets),
            plan_id: p.plan_id,
            source_recovery_point: p.source_recovery_point,
            topic: p.topic,
            topic_id: p.topic_id,
        }
    }
}

/// Kept out of the export functions it would otherwise be inlined into: a JVM host compiles
/// each guest function into one method, and HotSpot leaves methods over 8,000 bytes of bytecode
/// (the large exports) to its interpreter, so a per-partition loop must not live in one.
#[inline(never)]
fn listed_offsets(offsets: Vec<(u32, u64)>) -> Vec<PartitionOffset> {
    offsets
        .into_iter()
        .map(|(partition, offset)| PartitionOffset { partition, offset })
        .collect()
}

impl From<action_state_format::Marker> for RecoveryMarker {
    fn from(m: action_state_format::Marker) -> Self {
        match m {
            action_state_format::Marker::Versioned(v) => {
                RecoveryMarker::Versioned(VersionedMarker {
                    offsets: from_offsets(&v.offsets),
                    topic: v.topic,
                    topic_id: v.topic_id,
                })
            }
            action_state_format::Marker::Legacy(offsets) => {
                RecoveryMarker::Legacy(from_offsets(&offsets))
            }
        }
    }
}

/// The core's one mapping of errors to what they mean for a host.
impl From<action_state_format::FailureClass> for FailureClass {
    fn from(class: action_state_format::FailureClass) -> Self {
        match class {
            action_state_format::FailureClass::Refused => FailureClass::Refused,
            action_state_format::FailureClass::Failed => FailureClass::Failed,
            action_state_format::FailureClass::Fenced => FailureClass::Fenced,
            action_state_format::FailureClass::RestoreRefused => FailureClass::RestoreRefused,
        }
    }
}

impl From<action_state_format::Status> for Status {
    fn from(s: action_state_format::Status) -> Self {
        match s {
            action_state_format::Status::Committed => Status::Committed,
            action_state_format::Status::Applied => Status::Applied,
        }
    }
}

impl From<Status> for action_state_format::Status {
    fn from(s: Status) -> Self {
        match s {
            Status::Committed => action_state_format::Status::Committed,
            Status::Applied => action_state_format::Status::Applied,
        }
    }
}

impl From<action_state_format::ControlRecord> for ControlRecord {
    fn from(r: action_state_format::ControlRecord) -> Self {
        ControlRecord {
            status: r.status.into(),
            plan: r.plan.into(),
        }
    }
}

impl From<ControlEntry> for action_state_format::ControlEntry {
    fn from(e: ControlEntry) -> Self {
        action_state_format::ControlEntry {
            offset: e.offset,
            key: e.key,
            value: e.value,
            timestamp: None,
        }
    }
}

impl From<action_state_format::KafkaFailure> for KafkaFailure {
    fn from(e: action_state_format::KafkaFailure) -> Self {
        KafkaFailure {
            operation: e.operation,
            message: e.message,
            retriable: e.retriable,
            cause: e.cause.map(Into::into),
        }
    }
}

impl From<KafkaFailure> for action_state_format::KafkaFailure {
    fn from(e: KafkaFailure) -> Self {
        action_state_format::KafkaFailure {
            operation: e.operation,
            message: e.message,
            retriable: e.retriable,
            cause: e.cause.map(Into::into),
        }
    }
}

/// The one table between the WIT `kafka-error` cases and the core's `ErrorKind`.
impl From<action_state_format::kafka_error::KafkaError> for KafkaError {
    fn from(e: action_state_format::kafka_error::KafkaError) -> Self {
        use action_state_format::kafka_error::ErrorKind as K;
        let detail = KafkaDetail {
            code: e.code,
            name: e.name,
            message: e.message,
        };
        match e.kind {
            K::UnknownTopic => KafkaError::UnknownTopic(detail),
            K::Authorization => KafkaError::Authorization(detail),
            K::Authentication => KafkaError::Authentication(detail),
            K::Timeout => KafkaError::Timeout(detail),
            K::Transport => KafkaError::Transport(detail),
            K::NotLeader => KafkaError::NotLeader(detail),
            K::Fenced => KafkaError::Fenced(detail),
            K::PolicyViolation => KafkaError::PolicyViolation(detail),
            K::OffsetOutOfRange => KafkaError::OffsetOutOfRange(detail),
            K::Other => KafkaError::Other(detail),
        }
    }
}

impl From<KafkaError> for action_state_format::kafka_error::KafkaError {
    fn from(e: KafkaError) -> Self {
        use action_state_format::kafka_error::ErrorKind as K;
        let (kind, detail) = match e {
            KafkaError::UnknownTopic(d) => (K::UnknownTopic, d),
            KafkaError::Authorization(d) => (K::Authorization, d),
            KafkaError::Authentication(d) => (K::Authentication, d),
            KafkaError::Timeout(d) => (K::Timeout, d),
            KafkaError::Transport(d) => (K::Transport, d),
            KafkaError::NotLeader(d) => (K::NotLeader, d),
            KafkaError::Fenced(d) => (K::Fenced, d),
            KafkaError::PolicyViolation(d) => (K::PolicyViolation, d),
            KafkaError::OffsetOutOfRange(d) => (K::OffsetOutOfRange, d),
            KafkaError::Other(d) => (K::Other, d),
        };
        action_state_format::kafka_error::KafkaError {
            kind,
            code: detail.code,
            name: detail.name,
            message: detail.message,
        }
    }
}

impl From<action_state_format::error::RangeViolation> for RangeViolation {
    fn from(r: action_state_format::error::RangeViolation) -> Self {
        RangeViolation {
            topic: r.topic,
            partition: r.partition,
            requested: r.requested,
            beginning: r.beginning,
            end: r.end,
        }
    }
}

impl From<RangeViolation> for action_state_format::error::RangeViolation {
    fn from(r: RangeViolation) -> Self {
        action_state_format::error::RangeViolation {
            topic: r.topic,
            partition: r.partition,
            requested: r.requested,
            beginning: r.beginning,
            end: r.end,
        }
    }
}

impl From<action_state_format::CleanupError> for CleanupError {
    fn from(e: action_state_format::CleanupError) -> Self {
        use action_state_format::CleanupError as C;
        match e {
            C::InvalidPlan(m) => CleanupError::InvalidPlan(m),
            C::InvalidMarker(m) => CleanupError::InvalidMarker(m),
            C::InvalidSnapshot(m) => CleanupError::InvalidSnapshot(m),
            C::InvalidArgument(m) => CleanupError::InvalidArgument(m),
            C::BoundaryViolation(v) => CleanupError::BoundaryViolation(BoundaryViolation {
                topic: v.topic,
                partition: v.partition,
                requested: v.requested,
                boundary: v.boundary,
            }),
            C::BoundaryRegression(r) => CleanupError::BoundaryRegression(BoundaryRegression {
                plan_id: r.plan_id,
                partition: r.partition,
                planned: r.planned,
                boundary: r.boundary,
            }),
            C::TopicChanged(c) => CleanupError::TopicChanged(TopicChange {
                topic: c.topic,
                context: c.context,
                expected_topic_id: c.expected_topic_id,
                found_topic_id: c.found_topic_id,
                expected_partitions: c.expected_partitions,
                found_partitions: c.found_partitions,
            }),
            C::UnsafeTopicConfig(m) => CleanupError::UnsafeTopicConfig(m),
            C::InvalidControlTopic(m) => CleanupError::InvalidControlTopic(m),
            C::OffsetsUnavailable(r) => CleanupError::OffsetsUnavailable(r.into()),
            C::DeleteUnverified(r) => CleanupError::DeleteUnverified(r.into()),
            C::ControlTopicCorrupt(m) => CleanupError::ControlTopicCorrupt(m),
            C::RecoveryRefused(m) => CleanupError::RecoveryRefused(m),
            C::ConflictingPolicies(m) => CleanupError::ConflictingPolicies(m),
            C::Fenced(m) => CleanupError::Fenced(m),
            C::ReplayStalled(m) => CleanupError::ReplayStalled(m),
            C::ReplayRecordInvalid(m) => CleanupError::ReplayRecordInvalid(m),
            C::Kafka(k) => CleanupError::Kafka(k.into()),
        }
    }
}

impl From<CleanupError> for action_state_format::CleanupError {
    fn from(e: CleanupError) -> Self {
        use action_state_format::CleanupError as C;
        match e {
            CleanupError::InvalidPlan(m) => C::InvalidPlan(m),
            CleanupError::InvalidMarker(m) => C::InvalidMarker(m),
            CleanupError::InvalidSnapshot(m) => C::InvalidSnapshot(m),
            CleanupError::InvalidArgument(m) => C::InvalidArgument(m),
            CleanupError::BoundaryViolation(v) => {
                C::BoundaryViolation(action_state_format::error::BoundaryViolation {
                    topic: v.topic,
                    partition: v.partition,
                    requested: v.requested,
                    boundary: v.boundary,
                })
            }
            CleanupError::BoundaryRegression(r) => {
                C::BoundaryRegression(action_state_format::error::BoundaryRegression {
                    plan_id: r.plan_id,
                    partition: r.partition,
                    planned: r.planned,
                    boundary: r.boundary,
                })
            }
            CleanupError::TopicChanged(c) => {
                C::TopicChanged(Box::new(action_state_format::error::TopicChange {
                    topic: c.topic,
                    context: c.context,
                    expected_topic_id: c.expected_topic_id,
                    found_topic_id: c.found_topic_id,
                    expected_partitions: c.expected_partitions,
                    found_partitions: c.found_partitions,
                }))
            }
            CleanupError::UnsafeTopicConfig(m) => C::UnsafeTopicConfig(m),
            CleanupError::InvalidControlTopic(m) => C::InvalidControlTopic(m),
            CleanupError::OffsetsUnavailable(r) => C::OffsetsUnavailable(r.into()),
            CleanupError::DeleteUnverified(r) => C::DeleteUnverified(r.into()),
            CleanupError::ControlTopicCorrupt(m) => C::ControlTopicCorrupt(m),
            CleanupError::RecoveryRefused(m) => C::RecoveryRefused(m),
            CleanupError::ConflictingPolicies(m) => C::ConflictingPolicies(m),
            CleanupError::Fenced(m) => C::Fenced(m),
            CleanupError::ReplayStalled(m) => C::ReplayStalled(m),
            CleanupError::ReplayRecordInvalid(m) => C::ReplayRecordInvalid(m),
            CleanupError::Kafka(k) => C::Kafka(k.into()),
        }
    }
}
