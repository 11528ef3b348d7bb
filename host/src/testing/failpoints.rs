//! Fault injection as a decorator of the capabilities, switched on by the `ASC_FAILPOINT`
//! environment variable, so that end-to-end tests can break a real apply after its point of no
//! return. Only test builds (cargo feature `testing`) wrap their capabilities in it; without the
//! variable it changes nothing.
//!
//! - `delete-records`: the delete-records capability fails with a Kafka error once this instance
//!   has written a COMMITTED record (the permission probe before the commit still runs).
//! - `compact-after-commit`: right after COMMITTED is acknowledged, the data topic's
//!   `cleanup.policy` is changed to `compact` (as a careless operator might), so the re-check
//!   before delete refuses.
//! - `replay-stall`: the replay consumer's polls return nothing, as a broker that cannot serve
//!   the captured range would, so the guest's no-progress window must end the replay.
//!
//! `ASC_FAILPOINT_PAUSE=<stage>` with `ASC_FAILPOINT_PAUSE_FILE=<path>` stops an apply at a stage
//! (`before-commit`, `after-commit`, `after-delete`): the host creates `<path>.reached` and waits
//! (at most 120 s) until `<path>.go` exists, so a fault test can kill a broker at that moment.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use action_state_kafka::capabilities::{
    Answer, AnswerOf, Call, CallOn, Capabilities, ErrorKind, KafkaError, PolledBatch,
};

use crate::kafka::{KafkaClients, KafkaSettings};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failpoint {
    DeleteRecords,
    CompactAfterCommit,
    ReplayStall,
}

/// The failpoint this process runs with (`ASC_FAILPOINT`), read once.
fn active() -> Option<Failpoint> {
    static ACTIVE: OnceLock<Option<Failpoint>> = OnceLock::new();
    *ACTIVE.get_or_init(|| match std::env::var("ASC_FAILPOINT").as_deref() {
        Ok("delete-records") => Some(Failpoint::DeleteRecords),
        Ok("compact-after-commit") => Some(Failpoint::CompactAfterCommit),
        Ok("replay-stall") => Some(Failpoint::ReplayStall),
        _ => None,
    })
}

/// Where an apply can be paused for a fault test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    BeforeCommit,
    AfterCommit,
    AfterDelete,
}

impl Stage {
    fn name(self) -> &'static str {
        match self {
            Stage::BeforeCommit => "before-commit",
            Stage::AfterCommit => "after-commit",
            Stage::AfterDelete => "after-delete",
        }
    }
}

/// Blocks at `stage` when a pause for it is configured; otherwise returns at once.
fn pause(stage: Stage) {
    static PAUSE: OnceLock<Option<(String, PathBuf)>> = OnceLock::new();
    let configured = PAUSE.get_or_init(|| {
        let stage = std::env::var("ASC_FAILPOINT_PAUSE").ok()?;
        let file = std::env::var_os("ASC_FAILPOINT_PAUSE_FILE")?;
        Some((stage, PathBuf::from(file)))
    });
    let Some((wanted, file)) = configured else {
        return;
    };
    if wanted != stage.name() {
        return;
    }
    let reached = file.with_extension("reached");
    let go = file.with_extension("go");
    let _ = std::fs::write(&reached, stage.name());
    let deadline = Instant::now() + Duration::from_secs(120);
    while !go.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether an appended control value is a COMMITTED record (the stages key on it).
fn is_commit(value: &str) -> bool {
    action_state_format::ControlRecord::parse_value(value)
        .is_ok_and(|r| r.status == action_state_format::Status::Committed)
}

/// `compact-after-commit`: the data topic named by the committed record becomes compact-only,
/// changed through clients of its own (as another operator's tool would).
fn compact_data_topic(settings: &KafkaSettings, value: &str) {
    let Ok(record) = action_state_format::ControlRecord::parse_value(value) else {
        return;
    };
    let policy = [
        ("cleanup.policy", "compact"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    if let Ok(mut kafka) = KafkaClients::new(settings.clone()) {
        let _ = kafka.alter_topic_configs(&record.plan.topic, &policy);
    }
}

/// `inner`, broken as `ASC_FAILPOINT` and `ASC_FAILPOINT_PAUSE` say (neither set: exactly
/// `inner`). A layer: it looks at appends, deletions and replay polls and passes every call on.
pub struct Failpoints<C> {
    inner: C,
    active: Option<Failpoint>,
    /// Whether this instance appended a COMMITTED record.
    committed: bool,
    settings: KafkaSettings,
}

impl<C> Failpoints<C> {
    /// `settings` reach the cluster for `compact-after-commit`.
    pub fn from_env(inner: C, settings: &KafkaSettings) -> Self {
        Failpoints {
            inner,
            active: active(),
            committed: false,
            settings: settings.clone(),
        }
    }
}

impl<C: Capabilities> Capabilities for Failpoints<C> {
    type Writer = C::Writer;
    type Consumer = C::Consumer;

    fn call(&mut self, call: CallOn<'_, C>) -> AnswerOf<C> {
        match call {
            Call::Append {
                writer,
                topic,
                partition,
                key,
                value,
            } if is_commit(value) => {
                pause(Stage::BeforeCommit);
                let answer = self.inner.call(Call::Append {
                    writer,
                    topic,
                    partition,
                    key,
                    value,
                });
                if answer.is_ok() {
                    self.committed = true;
                    pause(Stage::AfterCommit);
                    if self.active == Some(Failpoint::CompactAfterCommit) {
                        compact_data_topic(&self.settings, value);
                    }
                }
                answer
            }
            Call::DeleteRecords { .. }
                if self.active == Some(Failpoint::DeleteRecords) && self.committed =>
            {
                Err(KafkaError::new(
                    ErrorKind::Other,
                    "failpoint delete-records is active",
                ))
            }
            Call::DeleteRecords { topic, before } => {
                let answer = self.inner.call(Call::DeleteRecords { topic, before });
                if self.committed {
                    pause(Stage::AfterDelete);
                }
                answer
            }
            // The replay consumer's polls (the control reader's ask for data) find nothing.
            Call::Poll {
                with_data: false,
                timeout_ms,
                ..
            } if self.active == Some(Failpoint::ReplayStall) => {
                std::thread::sleep(Duration::from_millis(u64::from(timeout_ms)));
                Ok(Answer::Polled(PolledBatch::default()))
            }
            call => self.inner.call(call),
        }
    }
}
