//! Finding the recovery points below a retained location by listing folders: a job's
//! `chk-N` folders, a savepoint directory's `savepoint-*`, or one snapshot.

use super::join;
use super::store::{
    Reads, SnapshotFailure, SnapshotStore, StoreError, parent, store_failure, trimmed,
};

/// The recovery points below a retained location (`plan --retained`): a Flink checkpoint
/// directory (`<job-id>/chk-N/_metadata` of every job, or one job's `chk-N`), a savepoint
/// directory (every `savepoint-*`), or one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Discovered {
    /// Snapshot directories: `chk-N` by N before any other name, the rest by name; each once.
    pub snapshots: Vec<String>,
    /// `chk-N` folders with no `_metadata` (in progress, failed or being deleted): not recovery
    /// points, named so that nothing is left out in silence.
    pub incomplete: Vec<String>,
    pub reads: Reads,
}

/// Folders of a job's checkpoint directory that hold state files, never a snapshot of their own.
const STATE_FOLDERS: [&str; 2] = ["shared", "taskowned"];

/// Every snapshot at or below `location`, one or two folder levels down, by listing folders
/// only (no `_metadata` is read here). A location that is not there is the store's `NotFound`.
pub fn discover(
    store: &mut dyn SnapshotStore,
    location: &str,
) -> std::result::Result<Discovered, SnapshotFailure> {
    let trimmed = trimmed(location);
    let mut found = Discovered::default();
    if trimmed == "_metadata" || trimmed.ends_with("/_metadata") {
        let directory = parent(trimmed);
        let names = list(store, &mut found.reads, &directory)?;
        if !names.iter().any(|n| n == "_metadata") {
            return Err(store_failure(
                trimmed,
                StoreError::NotFound(trimmed.to_owned()),
            ));
        }
        found.snapshots.push(directory);
        return Ok(found);
    }
    let names = list(store, &mut found.reads, trimmed)?;
    scan(store, trimmed, &names, 0, &mut found)?;
    found.snapshots.dedup();
    Ok(found)
}

fn list(
    store: &mut dyn SnapshotStore,
    reads: &mut Reads,
    location: &str,
) -> std::result::Result<Vec<String>, SnapshotFailure> {
    reads.requests = reads.requests.saturating_add(1);
    store
        .list(location)
        .map_err(|error| store_failure(location, error))
}

/// A snapshot directory here, or the snapshots one or two levels below (`<job-id>/chk-N`).
fn scan(
    store: &mut dyn SnapshotStore,
    directory: &str,
    names: &[String],
    depth: usize,
    found: &mut Discovered,
) -> std::result::Result<(), SnapshotFailure> {
    if names.iter().any(|n| n == "_metadata") {
        found.snapshots.push(directory.to_owned());
        return Ok(());
    }
    let mut children: Vec<&str> = names.iter().filter_map(|n| n.strip_suffix('/')).collect();
    children.sort_by_key(|name| order_key(name));
    for child in children {
        let path = join(directory, child);
        let inner = list(store, &mut found.reads, &path)?;
        if inner.iter().any(|n| n == "_metadata") {
            found.snapshots.push(path);
        } else if checkpoint_number(child).is_some() {
            found.incomplete.push(path);
        } else if depth == 0 && !STATE_FOLDERS.contains(&child) {
            scan(store, &path, &inner, depth + 1, found)?;
        }
    }
    Ok(())
}

fn checkpoint_number(name: &str) -> Option<u64> {
    name.strip_prefix("chk-")?.parse().ok()
}

/// `chk-N` in numeric order, before any other name; the rest by name.
pub(super) fn order_key(name: &str) -> (u8, u64, String) {
    match checkpoint_number(name) {
        Some(n) => (0, n, name.to_owned()),
        None => (1, 0, name.to_owned()),
    }
}
