//! The `recovery` export: the decision table at restore time, markers at checkpoint time, and
//! the recovery-session resource that replays.

use std::cell::RefCell;

use action_state_protocol::replay::ReplayOptions as CoreReplayOptions;

use crate::Component;
use crate::bindings::action_state::cleanup::types::{BoundaryViolation, CleanupError};
use crate::bindings::exports::action_state::cleanup::recovery::{
    Guest, GuestRecoverySession, PartitionProgress, PartitionRange, RecoveryPolicy,
    RecoveryRefusal, RecoverySession, RecoveryVerdict, ReplayBatch, ReplayOptions, RestoreSource,
    StoreFailure,
};
use crate::convert::from_offsets;
use crate::imports::{HostKafka, host_kafka};
use crate::plans::{operator_ref, state_files};
use crate::snapshots::{HostStore, to_wit};
use action_state_format::planning::parse_markers;
use action_state_format::snapshot::Snapshot;
use action_state_format::snapshot::store::{SnapshotFailure, StoredSnapshot};
use action_state_format::{CleanupError as CoreError, FailureClass, Marker};

impl Guest for Component {
    type RecoverySession = Session;

    fn check_recovery(
        source: RestoreSource,
        policy: RecoveryPolicy,
    ) -> Result<RecoveryVerdict, RecoveryRefusal> {
        let markers =
            restore_markers(source).map_err(|unread| unread.refusal(policy.topic.clone()))?;
        let topic = policy.topic.clone().or_else(|| {
            markers.iter().find_map(|marker| match marker {
                Marker::Versioned(versioned) => Some(versioned.topic.clone()),
                Marker::Legacy(_) => None,
            })
        });
        let check = action_state_protocol::recovery::check_recovery_detailed(
            &mut host_kafka(),
            &markers,
            &policy.into(),
        )
        .map_err(|refusal| RecoveryRefusal {
            topic,
            ..refused(*refusal)
        })?;
        Ok(verdict(check))
    }

    fn snapshot_marker(topic: String) -> Result<String, CleanupError> {
        let marker = action_state_protocol::status::snapshot_marker(&mut host_kafka(), &topic)?;
        Ok(action_state_format::Marker::Versioned(marker).render())
    }
}

/// Why the markers of a source could not be read.
enum Unread {
    /// Their texts, files or snapshot were refused.
    Refused(CoreError),
    /// The store did not give a file of the snapshot; the class says whether that is wrong
    /// input or a failing store.
    Store(StoreFailure, FailureClass),
}

impl Unread {
    /// The error a failed restore records for it.
    fn error(&self) -> CoreError {
        match self {
            Unread::Refused(error) => error.clone(),
            Unread::Store(failure, _) => CoreError::InvalidArgument(failure.message.clone()),
        }
    }

    /// The refusal of a check or restore whose markers could not be read.
    fn refusal(self, topic: Option<String>) -> RecoveryRefusal {
        match self {
            Unread::Refused(error) => RecoveryRefusal {
                topic,
                ..refused(error.into())
            },
            Unread::Store(failure, class) => RecoveryRefusal {
                error: CoreError::InvalidArgument(failure.message.clone()).into(),
                message: failure.message.clone(),
                class: class.into(),
                store: Some(failure),
                violations: Vec::new(),
                hint: None,
                topic,
            },
        }
    }
}

/// The markers a restore from `source` would use: texts and files split and parsed as given,
/// a snapshot's as a runtime restoring it would hand them over.
fn restore_markers(source: RestoreSource) -> Result<Vec<Marker>, Unread> {
    match source {
        RestoreSource::Texts(texts) => parse_markers(&texts).map_err(Unread::Refused),
        RestoreSource::Files(files) => {
            let mut texts = Vec::new();
            for file in &files {
                texts.extend(
                    action_state_format::split_named_marker_file(&file.name, &file.text)
                        .map_err(Unread::Refused)?,
                );
            }
            parse_markers(&texts).map_err(Unread::Refused)
        }
        RestoreSource::Snapshot(source) => Snapshot::read(".", &source.metadata)
            .and_then(|snapshot| {
                snapshot
                    .restore_markers(&operator_ref(source.operator), &state_files(&source.files))
            })
            .map_err(Unread::Refused),
        RestoreSource::Stored(stored) => StoredSnapshot::open(&mut HostStore, &stored.location)
            .and_then(|mut snapshot| {
                snapshot.restore_markers(&mut HostStore, &operator_ref(stored.operator))
            })
            .map_err(|failure| match failure {
                SnapshotFailure::Refused(error) => Unread::Refused(error),
                SnapshotFailure::Store {
                    location,
                    error,
                    message,
                } => Unread::Store(
                    StoreFailure {
                        location,
                        message,
                        error: to_wit(error.clone()),
                    },
                    error.class(),
                ),
            }),
    }
}

/// A refused restore as the export answers it: the error, its sentence and class, and for a
/// boundary violation every partition below the boundary and who committed it.
fn refused(refusal: action_state_protocol::recovery::RecoveryRefusal) -> RecoveryRefusal {
    RecoveryRefusal {
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
        store: None,
        topic: None,
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
        markers: RestoreSource,
        options: ReplayOptions,
    ) -> Result<RecoveryVerdict, RecoveryRefusal> {
        let mut state = self.state.borrow_mut();
        let state = &mut *state;
        let options = CoreReplayOptions {
            poll_timeout_ms: options.poll_timeout_ms,
            stall_timeout_ms: options.stall_timeout_ms,
        };
        // Markers that could not be read fail the restore inside the core session too, so that
        // every failure of a restore takes its failure rule (checkpoints refused unless the same
        // restore was retried).
        let read = restore_markers(markers);
        let markers = read.as_ref().map(Vec::clone).map_err(Unread::error);
        let topic = Some(state.session.topic().to_owned());
        match state
            .session
            .restore_read(&mut state.kafka, markers, options)
        {
            Ok(check) => Ok(verdict(check)),
            Err(refusal) => Err(match read {
                Err(unread) => unread.refusal(topic),
                Ok(_) => RecoveryRefusal {
                    topic,
                    ..refused(*refusal)
                },
            }),
        }
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
