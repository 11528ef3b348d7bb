//! Test-only fault injection, switched on by the `ASC_FAILPOINT` environment variable, so that
//! end-to-end tests can break a real apply after its point of no return. Unset, nothing happens.
//!
//! - `delete-records`: the delete-records capability fails with a Kafka error.
//! - `compact-after-commit`: right after COMMITTED is acknowledged, the data topic's
//!   `cleanup.policy` is changed to `compact` (as a careless operator might), so the re-check
//!   before delete refuses.
//! - `replay-stall`: the replay consumer's polls return nothing, as a broker that cannot serve
//!   the captured range would, so the guest's no-progress window must end the replay.

use std::sync::OnceLock;

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
