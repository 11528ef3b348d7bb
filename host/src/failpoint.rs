//! Test-only fault injection, switched on by the `ASC_FAILPOINT` environment variable, so that
//! end-to-end tests can break a real apply after its point of no return. Compiled in only with
//! the `testing` cargo feature (the tests enable it; release builds do not): without it every
//! function here is inert.
//!
//! - `delete-records`: the delete-records capability fails with a Kafka error once this process
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

#[cfg(feature = "testing")]
use std::path::PathBuf;
#[cfg(feature = "testing")]
use std::sync::OnceLock;
#[cfg(feature = "testing")]
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    DeleteRecords,
    CompactAfterCommit,
    ReplayStall,
}

#[cfg(not(feature = "testing"))]
pub fn active() -> Option<Failpoint> {
    None
}

#[cfg(feature = "testing")]
pub fn active() -> Option<Failpoint> {
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
pub enum Stage {
    BeforeCommit,
    AfterCommit,
    AfterDelete,
}

impl Stage {
    #[cfg_attr(not(feature = "testing"), expect(dead_code, reason = "used by pause"))]
    fn name(self) -> &'static str {
        match self {
            Stage::BeforeCommit => "before-commit",
            Stage::AfterCommit => "after-commit",
            Stage::AfterDelete => "after-delete",
        }
    }
}

#[cfg(not(feature = "testing"))]
pub fn pause(_stage: Stage) {}

/// Blocks at `stage` when a pause for it is configured; otherwise returns at once.
#[cfg(feature = "testing")]
pub fn pause(stage: Stage) {
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
pub fn is_commit(value: &str) -> bool {
    cfg!(feature = "testing")
        && action_state_core::ControlRecord::parse_value(value)
            .is_ok_and(|r| r.status == action_state_core::Status::Committed)
}

/// `compact-after-commit`: the data topic named by the committed record becomes compact-only.
#[cfg(feature = "testing")]
pub fn compact_data_topic(kafka: &mut crate::kafka::KafkaClients, value: &str) {
    if let Ok(record) = action_state_core::ControlRecord::parse_value(value) {
        let policy = [
            ("cleanup.policy", "compact"),
            ("retention.ms", "-1"),
            ("retention.bytes", "-1"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let _ = kafka.alter_topic_configs(&record.plan.topic, &policy);
    }
}

#[cfg(not(feature = "testing"))]
pub fn compact_data_topic(_kafka: &mut crate::kafka::KafkaClients, _value: &str) {}
