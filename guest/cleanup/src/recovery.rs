//! The `recovery` export: the decision table at restore time, markers at checkpoint time, and
//! the recovery-session resource that replays.

use std::cell::RefCell;

use action_state_core as core;
use core::replay::{PolledBatch, RecordSource, ReplayOptions as CoreReplayOptions};

use crate::Component;
use crate::bindings::action_state::cleanup::kafka_consumer;
use crate::bindings::action_state::cleanup::types::{BoundaryViolation, CleanupError};
use crate::bindings::exports::action_state::cleanup::recovery::{
    Guest, GuestRecoverySession, PartitionProgress, PartitionRange, RecoveryPolicy,
    RecoveryRefusal, RecoverySession, RecoveryVerdict, ReplayBatch, ReplayOptions,
};
use crate::convert::{from_offsets, to_offsets};
use crate::imports::{HostKafka, host_kafka};

impl Guest for Component {
    type RecoverySession = Session;

    fn check_recovery(
        markers: Vec<String>,
        policy: RecoveryPolicy,
    ) -> Result<RecoveryVerdict, RecoveryRefusal> {
        let refused = |refusal: Box<core::recovery::RecoveryRefusal>| RecoveryRefusal {
            error: refusal.error.into(),
            violations: refusal
                .violations
                .into_iter()
                .map(|v| BoundaryViolation {
                    topic: v.topic,
                    partition: v.partition,
                    requested: v.requested,
                    boundary: v.boundary,
                })
                .collect(),
        };
        let markers = core::planning::parse_markers(&markers)
            .map_err(|error| refused(Box::new(error.into())))?;
        let check =
            core::recovery::check_recovery_detailed(&mut host_kafka(), &markers, &policy.into())
                .map_err(refused)?;
        Ok(verdict(check))
    }

    fn snapshot_marker(topic: String) -> Result<String, CleanupError> {
        let marker = core::status::snapshot_marker(&mut host_kafka(), &topic)?;
        Ok(core::Marker::Versioned(marker).render())
    }
}

impl From<RecoveryPolicy> for core::recovery::RecoveryPolicy {
    fn from(policy: RecoveryPolicy) -> Self {
        core::recovery::RecoveryPolicy {
            topic: policy.topic,
            control_topic: policy.control_topic,
            tombstones_enabled: policy.tombstones_enabled,
        }
    }
}

fn verdict(check: core::recovery::RecoveryCheck) -> RecoveryVerdict {
    RecoveryVerdict {
        topic: check.decision.topic,
        boundary: match check.decision.mode {
            core::recovery::RecoveryMode::Standard => None,
            core::recovery::RecoveryMode::Enforced { boundary } => Some(from_offsets(&boundary)),
        },
        versioned: check.decision.versioned,
        ranges: check
            .ranges
            .into_iter()
            .map(|(partition, requested, beginning, end)| PartitionRange {
                partition,
                requested,
                beginning,
                end,
            })
            .collect(),
    }
}

/// The poll indices of the records to replay. Never inlined, so that this loop over every
/// record is not part of the large `next-batch` export function (see `accept_poll` in the core).
#[inline(never)]
fn record_indices(records: &[core::replay::ReplayedRecord]) -> Vec<u32> {
    records.iter().map(|r| r.index).collect()
}

/// The host's consumer resource as the core's record source: polls without data, since the
/// host keeps the records and hands the accepted ones to the runtime.
struct HostSource(kafka_consumer::Consumer);

/// A consumer error as a failed step. The replay consumer is not driven through the policy, so
/// its errors take the core's case for their protocol code here, as the policy's do.
fn kafka(operation: &str, cause: core::capabilities::HostError) -> core::KafkaError {
    let cause = cause.classified();
    core::KafkaError {
        operation: operation.into(),
        message: format!("{cause} ({})", cause.kind.name()),
        retriable: cause.kind.is_transient(),
        cause: Some(cause),
    }
}

impl RecordSource for HostSource {
    fn assign(&mut self, start: &core::PartitionOffsets) -> core::ops::KafkaResult<()> {
        self.0
            .assign(&from_offsets(start))
            .map_err(|e| kafka("consumer-assign", e.into()))
    }

    fn position(&mut self) -> core::ops::KafkaResult<core::PartitionOffsets> {
        self.0
            .position()
            .map(|p| to_offsets(&p))
            .map_err(|e| kafka("consumer-position", e.into()))
    }

    fn poll(&mut self, max_records: u32, timeout_ms: u32) -> core::ops::KafkaResult<PolledBatch> {
        self.0
            .poll(max_records, timeout_ms, false)
            .map_err(Into::into)
            .and_then(crate::imports::polled_batch)
            .map_err(|e| kafka("consumer-poll", e))
    }
}

/// The session resource: the core session, its Kafka policy and its consumer (opened at the
/// first restore).
pub struct Session {
    state: RefCell<SessionState>,
}

struct SessionState {
    session: core::replay::RecoverySession,
    kafka: HostKafka,
    source: Option<HostSource>,
}

/// The session's consumer of `topic`, opened on first use.
fn open_source<'a>(
    source: &'a mut Option<HostSource>,
    topic: &str,
) -> Result<&'a mut HostSource, core::CleanupError> {
    if source.is_none() {
        let consumer = kafka_consumer::Consumer::open(topic)
            .map_err(|e| core::CleanupError::Kafka(kafka("consumer-open", e.into())))?;
        *source = Some(HostSource(consumer));
    }
    source
        .as_mut()
        .ok_or_else(|| core::CleanupError::kafka("consumer-open", "no consumer"))
}

impl SessionState {
    /// The core session, its Kafka policy and its consumer (opened on first use).
    fn parts(
        &mut self,
    ) -> Result<
        (
            &mut core::replay::RecoverySession,
            &mut HostKafka,
            &mut HostSource,
        ),
        core::CleanupError,
    > {
        let source = open_source(&mut self.source, self.session.topic())?;
        Ok((&mut self.session, &mut self.kafka, source))
    }
}

impl GuestRecoverySession for Session {
    fn start(topic: String, policy: RecoveryPolicy) -> Result<RecoverySession, CleanupError> {
        let mut kafka = host_kafka();
        let session = core::replay::RecoverySession::start(&mut kafka, &topic, policy.into())?;
        Ok(RecoverySession::new(Session {
            state: RefCell::new(SessionState {
                session,
                kafka,
                source: None,
            }),
        }))
    }

    fn restore(
        &self,
        markers: Vec<String>,
        options: ReplayOptions,
    ) -> Result<RecoveryVerdict, CleanupError> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let options = CoreReplayOptions {
            poll_timeout_ms: options.poll_timeout_ms,
            stall_timeout_ms: options.stall_timeout_ms,
        };
        // The markers are parsed and a consumer that could not be opened is reported inside the
        // core session, so that every failure of a restore takes its failure rule (checkpoints
        // refused unless the same restore was retried).
        let source = open_source(&mut state.source, state.session.topic())
            .map(|s| s as &mut dyn RecordSource);
        let check = state
            .session
            .restore_texts(&mut state.kafka, source, &markers, options)?;
        Ok(verdict(check))
    }

    fn next_batch(&self, max_records: u32) -> Result<ReplayBatch, CleanupError> {
        let mut state = self.state.borrow_mut();
        let (session, kafka, source) = state.parts()?;
        let batch = session.next_batch(kafka, source, max_records)?;
        Ok(ReplayBatch {
            records: record_indices(&batch.records),
            done: batch.done,
            progress: batch
                .progress
                .into_iter()
                .map(|(partition, position, target)| PartitionProgress {
                    partition,
                    position,
                    target,
                })
                .collect(),
        })
    }

    fn snapshot_marker(&self) -> Result<String, CleanupError> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let marker = state.session.snapshot_marker(&mut state.kafka)?;
        Ok(core::Marker::Versioned(marker).render())
    }
}
