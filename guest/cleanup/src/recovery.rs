//! The `recovery` export: the decision table at restore time, markers at checkpoint time, and
//! the recovery-session resource that replays.

use std::cell::RefCell;

use action_state_protocol::replay::ReplayOptions as CoreReplayOptions;

use crate::Component;
use crate::bindings::action_state::cleanup::types::{BoundaryViolation, CleanupError};
use crate::bindings::exports::action_state::cleanup::recovery::{
    Guest, GuestRecoverySession, PartitionProgress, PartitionRange, RecoveryPolicy,
    RecoveryRefusal, RecoverySession, RecoveryVerdict, ReplayBatch, ReplayOptions,
};
use crate::convert::from_offsets;
use crate::imports::{HostKafka, host_kafka};

impl Guest for Component {
    type RecoverySession = Session;

    fn check_recovery(
        markers: Vec<String>,
        policy: RecoveryPolicy,
    ) -> Result<RecoveryVerdict, RecoveryRefusal> {
        let refused =
            |refusal: Box<action_state_protocol::recovery::RecoveryRefusal>| RecoveryRefusal {
                message: refusal.error.to_string(),
                class: refusal.error.restore_class().into(),
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
                hint: refusal.hint,
            };
        let markers = action_state_format::planning::parse_markers(&markers)
            .map_err(|error| refused(Box::new(error.into())))?;
        let check = action_state_protocol::recovery::check_recovery_detailed(
            &mut host_kafka(),
            &markers,
            &policy.into(),
        )
        .map_err(refused)?;
        Ok(verdict(check))
    }

    fn snapshot_marker(topic: String) -> Result<String, CleanupError> {
        let marker = action_state_protocol::status::snapshot_marker(&mut host_kafka(), &topic)?;
        Ok(action_state_format::Marker::Versioned(marker).render())
    }
}

impl From<RecoveryPolicy> for action_state_protocol::recovery::RecoveryPolicy {
    fn from(policy: RecoveryPolicy) -> Self {
        action_state_protocol::recovery::RecoveryPolicy {
            topic: policy.topic,
            control_topic: policy.control_topic,
            tombstones_enabled: policy.tombstones_enabled,
        }
    }
}

fn verdict(check: action_state_protocol::recovery::RecoveryCheck) -> RecoveryVerdict {
    RecoveryVerdict {
        topic: check.decision.topic,
        boundary: match check.decision.mode {
            action_state_protocol::recovery::RecoveryMode::Standard => None,
            action_state_protocol::recovery::RecoveryMode::Enforced { boundary } => {
                Some(from_offsets(&boundary))
            }
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
fn record_indices(records: &[action_state_protocol::replay::ReplayedRecord]) -> Vec<u32> {
    records.iter().map(|r| r.index).collect()
}

/// The session resource: the core session and its Kafka policy, which holds the session's
/// consumer (opened by the first restore).
pub struct Session {
    state: RefCell<SessionState>,
}

struct SessionState {
    session: action_state_protocol::replay::RecoverySession,
    kafka: HostKafka,
}

impl GuestRecoverySession for Session {
    fn start(topic: String, policy: RecoveryPolicy) -> Result<RecoverySession, CleanupError> {
        let mut kafka = host_kafka();
        let session = action_state_protocol::replay::RecoverySession::start(
            &mut kafka,
            &topic,
            policy.into(),
        )?;
        Ok(RecoverySession::new(Session {
            state: RefCell::new(SessionState { session, kafka }),
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
        // The markers are parsed and the consumer opened inside the core session, so that every
        // failure of a restore takes its failure rule (checkpoints refused unless the same
        // restore was retried).
        let check = state
            .session
            .restore_texts(&mut state.kafka, &markers, options)?;
        Ok(verdict(check))
    }

    fn next_batch(&self, max_records: u32) -> Result<ReplayBatch, CleanupError> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let batch = state.session.next_batch(&mut state.kafka, max_records)?;
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
        Ok(action_state_format::Marker::Versioned(marker).render())
    }
}
