//! Test-only fault injection, switched on by the `ASC_FAILPOINT` environment variable, so that
//! end-to-end tests can break a real apply after its point of no return. Unset, nothing happens.
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

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failpoint {
    DeleteRecords,
    CompactAfterCommit,
    ReplayStall,
}

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
    fn name(self) -> &'static str {
        match self {
            Stage::BeforeCommit => "before-commit",
            Stage::AfterCommit => "after-commit",
            Stage::AfterDelete => "after-delete",
        }
    }
}

/// Blocks at `stage` when a pause for it is configured; otherwise returns at once.
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
