//! The `recovery` export: the decision table at restore time, markers at checkpoint time, and
//! the recovery-session resource that replays.

use std::cell::RefCell;

use action_state_core as core;
use core::replay::{ConsumedRecord, RecordSource, ReplayOptions as CoreReplayOptions};

use crate::Component;
use crate::bindings::action_state::cleanup::kafka_consumer;
use crate::bindings::action_state::cleanup::types::CleanupError;
use crate::bindings::exports::action_state::cleanup::recovery::{
    Guest, GuestRecoverySession, PartitionProgress, PartitionRange, RecoveryPolicy,
    RecoverySession, RecoveryVerdict, ReplayBatch, ReplayOptions, ReplayedRecord,
};
use crate::convert::{from_offsets, to_offsets};
use crate::imports::HostKafka;

impl Guest for Component {
    type RecoverySession = Session;

    fn check_recovery(
        markers: Vec<String>,
        policy: RecoveryPolicy,
    ) -> Result<RecoveryVerdict, CleanupError> {
        let markers = core::planning::parse_markers(&markers)?;
        let check = core::recovery::check_recovery(&mut HostKafka, &markers, &policy.into())?;
        Ok(verdict(check))
    }

    fn snapshot_marker(topic: String) -> Result<String, CleanupError> {
        let marker = core::status::snapshot_marker(&mut HostKafka, &topic)?;
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

/// The host's consumer resource as the core's record source.
struct HostSource(kafka_consumer::ReplayConsumer);

impl RecordSource for HostSource {
    fn assign(&mut self, start: &core::PartitionOffsets) -> core::ops::KafkaResult<()> {
        self.0.assign(&from_offsets(start)).map_err(Into::into)
    }

    fn position(&mut self) -> core::ops::KafkaResult<core::PartitionOffsets> {
        self.0
            .position()
            .map(|p| to_offsets(&p))
            .map_err(Into::into)
    }

    fn poll(
        &mut self,
        max_records: u32,
        timeout_ms: u32,
    ) -> core::ops::KafkaResult<Vec<ConsumedRecord>> {
        let records = self
            .0
            .poll(max_records, timeout_ms)
            .map_err(core::KafkaError::from)?;
        Ok(records
            .into_iter()
            .map(|r| ConsumedRecord {
                partition: r.partition,
                offset: r.offset,
                key: r.key,
                value: r.value,
                decode_error: r.decode_error,
            })
            .collect())
    }
}

/// The session resource: the core session plus its consumer, created at the first restore.
pub struct Session {
    state: RefCell<(core::replay::RecoverySession, Option<HostSource>)>,
}

impl Session {
    fn source<'a>(
        session: &core::replay::RecoverySession,
        source: &'a mut Option<HostSource>,
    ) -> &'a mut HostSource {
        source
            .get_or_insert_with(|| HostSource(kafka_consumer::ReplayConsumer::new(session.topic())))
    }
}

impl GuestRecoverySession for Session {
    fn start(topic: String, policy: RecoveryPolicy) -> Result<RecoverySession, CleanupError> {
        let session = core::replay::RecoverySession::start(&mut HostKafka, &topic, policy.into())?;
        Ok(RecoverySession::new(Session {
            state: RefCell::new((session, None)),
        }))
    }

    fn restore(
        &self,
        markers: Vec<String>,
        options: ReplayOptions,
    ) -> Result<RecoveryVerdict, CleanupError> {
        let markers = core::planning::parse_markers(&markers)?;
        let mut state = self.state.borrow_mut();
        let (session, source) = &mut *state;
        let source = Session::source(session, source);
        let options = CoreReplayOptions {
            poll_timeout_ms: options.poll_timeout_ms,
            stall_timeout_ms: options.stall_timeout_ms,
        };
        Ok(verdict(session.restore(
            &mut HostKafka,
            source,
            &markers,
            options,
        )?))
    }

    fn next_batch(&self, max_records: u32) -> Result<ReplayBatch, CleanupError> {
        let mut state = self.state.borrow_mut();
        let (session, source) = &mut *state;
        let source = Session::source(session, source);
        let batch = session.next_batch(&mut HostKafka, source, max_records)?;
        Ok(ReplayBatch {
            records: batch
                .records
                .into_iter()
                .map(|r| ReplayedRecord {
                    partition: r.partition,
                    offset: r.offset,
                    key: r.key,
                    value: r.value,
                })
                .collect(),
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
        let marker = state.0.snapshot_marker(&mut HostKafka)?;
        Ok(core::Marker::Versioned(marker).render())
    }
}
