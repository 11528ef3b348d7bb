//! A snapshot read through a store (SPEC §9): the host gives bytes by location — a local path,
//! a `file://`, `s3://`, `gs://`, `abfss://`… URI, a browser's picked file — and this module
//! decides which locations to ask for: the `_metadata`, then the state files of the marker
//! operator, every path resolved against the location the operator gave. One loop, so no
//! host repeats it.

use super::{NeededFile, OperatorRef, OperatorSummary, Snapshot, StateFile, join};
use crate::error::{CleanupError, FailureClass, Result};
use crate::marker::Marker;
use crate::plan::Plan;

/// The largest `_metadata` or state file read: far above any marker state, far below memory.
pub const MAX_OBJECT_BYTES: u64 = 1 << 30;

/// Why a store could not give the bytes of a location, as the host's client reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// No such object or file.
    NotFound(String),
    /// The store refused the credentials (the text names which source was used).
    Denied(String),
    /// The store could not be reached (the text names the endpoint).
    Unreachable(String),
    /// This host cannot read the location's scheme.
    Unsupported(String),
    /// The object is larger than the component asked for: its size.
    TooLarge(u64),
    /// Anything else the store's client reported.
    Failed(String),
}

impl StoreError {
    /// What a snapshot the store did not give means for whoever asked: the input is refused
    /// (nothing there, a scheme or size this host cannot read) or the store failed (credentials,
    /// endpoint, anything else).
    pub fn class(&self) -> FailureClass {
        match self {
            StoreError::NotFound(_) | StoreError::Unsupported(_) | StoreError::TooLarge(_) => {
                FailureClass::Refused
            }
            StoreError::Denied(_) | StoreError::Unreachable(_) | StoreError::Failed(_) => {
                FailureClass::Failed
            }
        }
    }
}

pub use super::discover::{Discovered, discover};

/// The one capability a host gives for snapshots.
pub trait SnapshotStore {
    /// The whole object or file at `location`, refused with `TooLarge` above `max_bytes`.
    fn read(&mut self, location: &str, max_bytes: u64) -> Result<Vec<u8>, StoreError>;
    /// The names one level below the folder `location` (folders end with `/`).
    fn list(&mut self, location: &str) -> Result<Vec<String>, StoreError>;
}

/// A snapshot that could not be used: refused by its contents, or unreadable in its store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotFailure {
    /// The format, operator or markers refused it (exit 3 in the CLI), or a Kafka-free argument.
    Refused(CleanupError),
    /// The store did not give a location's bytes; `message` is the sentence every host shows.
    Store {
        location: String,
        error: StoreError,
        message: String,
    },
}

impl From<CleanupError> for SnapshotFailure {
    fn from(error: CleanupError) -> Self {
        SnapshotFailure::Refused(error)
    }
}

/// What reading a snapshot cost: store requests made and bytes received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    pub requests: u32,
    pub bytes: u64,
}

/// A snapshot's `_metadata` and the state files read so far, by the paths `_metadata` gives.
#[derive(Debug)]
pub struct StoredSnapshot {
    location: String,
    directory: String,
    metadata_name: String,
    metadata: Vec<u8>,
    files: Vec<(String, Vec<u8>)>,
    reads: Reads,
}

/// A plan read from a store, with its marker count and what the reads cost.
#[derive(Debug, Clone)]
pub struct StoredPlan {
    pub plan: Plan,
    pub markers: usize,
    pub reads: Reads,
}

impl StoredSnapshot {
    /// Reads the `_metadata` of the snapshot at `location` (its directory, or the `_metadata`
    /// file itself, under any name). A missing snapshot is refused naming the location and, for
    /// a job's checkpoint directory, the `chk-N` folders it holds.
    pub fn open(
        store: &mut dyn SnapshotStore,
        location: &str,
    ) -> std::result::Result<Self, SnapshotFailure> {
        let mut reads = Reads::default();
        let trimmed = trimmed(location);
        let names_metadata = trimmed == "_metadata" || trimmed.ends_with("/_metadata");
        let (directory, metadata_name) = if names_metadata {
            (parent(trimmed), trimmed.to_owned())
        } else {
            (trimmed.to_owned(), join(trimmed, "_metadata"))
        };
        match read(store, &mut reads, &metadata_name) {
            Ok(metadata) => {
                return Ok(StoredSnapshot::new(
                    location,
                    directory,
                    metadata_name,
                    metadata,
                    reads,
                ));
            }
            Err(StoreError::NotFound(_)) if !names_metadata => {}
            Err(error) => return Err(store_failure(&metadata_name, error)),
        }
        // A `_metadata` under another name, given by its own path (Flink accepts that too).
        match read(store, &mut reads, trimmed) {
            Ok(metadata) => {
                return Ok(StoredSnapshot::new(
                    location,
                    parent(trimmed),
                    trimmed.to_owned(),
                    metadata,
                    reads,
                ));
            }
            Err(StoreError::NotFound(_)) => {}
            Err(error) => return Err(store_failure(trimmed, error)),
        }
        Err(not_a_snapshot(store, location, trimmed, &metadata_name))
    }

    fn new(
        location: &str,
        directory: String,
        metadata_name: String,
        metadata: Vec<u8>,
        reads: Reads,
    ) -> Self {
        StoredSnapshot {
            location: location.to_owned(),
            directory,
            metadata_name,
            metadata,
            files: Vec::new(),
            reads,
        }
    }

    /// The snapshot as the operator named it.
    pub fn location(&self) -> &str {
        &self.location
    }

    pub fn reads(&self) -> Reads {
        self.reads
    }

    /// The `_metadata`, read.
    pub fn snapshot(&self) -> Result<Snapshot<'_>> {
        Snapshot::read_named(&self.directory, self.metadata_name.clone(), &self.metadata)
    }

    /// Reads the state files `needed` that were not read before.
    fn fetch(
        &mut self,
        store: &mut dyn SnapshotStore,
        needed: Vec<NeededFile>,
    ) -> std::result::Result<(), SnapshotFailure> {
        for file in needed {
            if self.files.iter().any(|(path, _)| *path == file.path) {
                continue;
            }
            let location = resolve(&self.directory, &file.path);
            let bytes = read(store, &mut self.reads, &location).map_err(|error| {
                let mut failure = store_failure(&location, error);
                if let SnapshotFailure::Store { message, .. } = &mut failure {
                    *message = format!(
                        "Snapshot {} keeps markers in {location} (recorded as {}): {message}",
                        self.location, file.written
                    );
                }
                failure
            })?;
            self.files.push((file.path, bytes));
        }
        Ok(())
    }

    fn state_files(&self) -> Vec<StateFile<'_>> {
        self.files
            .iter()
            .map(|(path, bytes)| StateFile { path, bytes })
            .collect()
    }

    /// The plan of `operator`'s markers; `recovery_point` is what the plan records (the
    /// location as given when none).
    pub fn plan(
        &mut self,
        store: &mut dyn SnapshotStore,
        recovery_point: Option<&str>,
        operator: &OperatorRef,
    ) -> std::result::Result<StoredPlan, SnapshotFailure> {
        let needed = self.snapshot()?.marker_files(operator)?;
        self.fetch(store, needed)?;
        let recovery_point = recovery_point.unwrap_or(&self.location);
        let (plan, markers) =
            self.snapshot()?
                .plan(recovery_point, operator, &self.state_files())?;
        Ok(StoredPlan {
            plan,
            markers,
            reads: self.reads,
        })
    }

    /// The markers `operator` stored, as a restore of this snapshot would hand them over.
    pub fn restore_markers(
        &mut self,
        store: &mut dyn SnapshotStore,
        operator: &OperatorRef,
    ) -> std::result::Result<Vec<Marker>, SnapshotFailure> {
        let needed = self.snapshot()?.marker_files(operator)?;
        self.fetch(store, needed)?;
        Ok(self
            .snapshot()?
            .restore_markers(operator, &self.state_files())?)
    }

    /// Every operator, with the markers of each that keeps a marker state.
    pub fn inspect(
        &mut self,
        store: &mut dyn SnapshotStore,
    ) -> std::result::Result<(i32, u64, Vec<OperatorSummary>), SnapshotFailure> {
        let needed = self.snapshot()?.all_marker_files()?;
        self.fetch(store, needed)?;
        let snapshot = self.snapshot()?;
        let operators = snapshot.summary(&self.state_files())?;
        Ok((
            snapshot.metadata.version,
            snapshot.metadata.checkpoint_id,
            operators,
        ))
    }
}

/// One read, counted.
fn read(
    store: &mut dyn SnapshotStore,
    reads: &mut Reads,
    location: &str,
) -> Result<Vec<u8>, StoreError> {
    reads.requests = reads.requests.saturating_add(1);
    let bytes = store.read(location, MAX_OBJECT_BYTES)?;
    if bytes.len() as u64 > MAX_OBJECT_BYTES {
        return Err(StoreError::TooLarge(bytes.len() as u64));
    }
    reads.bytes = reads.bytes.saturating_add(bytes.len() as u64);
    Ok(bytes)
}

/// The refusal for a location with no `_metadata`: names the `chk-N` folders a job's
/// checkpoint directory holds, so the operator can pick one.
fn not_a_snapshot(
    store: &mut dyn SnapshotStore,
    location: &str,
    trimmed: &str,
    metadata_name: &str,
) -> SnapshotFailure {
    let mut message = format!(
        "{location} is not a Flink checkpoint or savepoint: {metadata_name} does not exist (give the snapshot directory or its _metadata file)"
    );
    if let Ok(names) = store.list(trimmed) {
        let mut checkpoints: Vec<(u64, &str)> = names
            .iter()
            .filter_map(|name| {
                let name = name.trim_end_matches('/');
                let n = name.strip_prefix("chk-")?.parse().ok()?;
                Some((n, name))
            })
            .collect();
        checkpoints.sort_unstable();
        if !checkpoints.is_empty() {
            let listed: Vec<&str> = checkpoints.iter().map(|(_, name)| *name).collect();
            message.push_str(&format!(
                "; it is a job's checkpoint directory holding {}: give one of them",
                listed.join(", ")
            ));
        }
    }
    SnapshotFailure::Store {
        location: metadata_name.to_owned(),
        error: StoreError::NotFound(metadata_name.to_owned()),
        message,
    }
}

/// The failure for a store error at `location`, with its sentence.
pub(super) fn store_failure(location: &str, error: StoreError) -> SnapshotFailure {
    let message = match &error {
        StoreError::NotFound(_) => format!("{location} does not exist"),
        StoreError::Denied(why) => format!("the store refused to give {location}: {why}"),
        StoreError::Unreachable(why) => {
            format!("the store of {location} could not be reached: {why}")
        }
        StoreError::Unsupported(why) => format!("cannot read {location}: {why}"),
        StoreError::TooLarge(size) => format!(
            "{location} holds {size} bytes, more than any snapshot file this tool reads ({MAX_OBJECT_BYTES})"
        ),
        StoreError::Failed(why) => format!("cannot read {location}: {why}"),
    };
    SnapshotFailure::Store {
        location: location.to_owned(),
        error,
        message,
    }
}

/// The folder holding `location` ("." for a bare name).
/// `location` without trailing `/` (a bare `/` stays as it is).
pub(crate) fn trimmed(location: &str) -> &str {
    let trimmed = location.trim_end_matches('/');
    if trimmed.is_empty() {
        location
    } else {
        trimmed
    }
}

pub(super) fn parent(location: &str) -> String {
    match location.rfind('/') {
        Some(0) => "/".to_owned(),
        Some(at) if !location[..at].ends_with(':') && !location[..at].ends_with("//") => {
            location[..at].to_owned()
        }
        Some(at) => location[..=at].to_owned(),
        None => ".".to_owned(),
    }
}

/// `path` (as `NeededFile::path` gives it: relative, possibly with leading `../`, or absolute)
/// read against the snapshot `directory`, without leaving the URI's bucket or root.
pub fn resolve(directory: &str, path: &str) -> String {
    if path.starts_with('/') {
        return path.to_owned();
    }
    let root = root_len(directory);
    let (root, folders) = directory.split_at(root);
    let mut segments: Vec<&str> = folders
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    let mut rest = path;
    while let Some(after) = rest.strip_prefix("../") {
        match segments.last() {
            Some(last) if *last != ".." => {
                segments.pop();
            }
            // Above a relative directory; a URI's bucket or `/` is never left.
            _ if root.is_empty() => segments.push(".."),
            _ => {}
        }
        rest = after;
    }
    segments.push(rest);
    let joined = segments.join("/");
    if root.is_empty() || root.ends_with('/') {
        format!("{root}{joined}")
    } else {
        format!("{root}/{joined}")
    }
}

/// How much of `location` is its scheme and authority (`s3://bucket/`) or its leading `/`,
/// which `..` never leaves.
fn root_len(location: &str) -> usize {
    match location.find("://") {
        Some(at) => {
            let authority = at + 3;
            location[authority..]
                .find('/')
                .map_or(location.len(), |slash| authority + slash + 1)
        }
        None => usize::from(location.starts_with('/')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::discover::order_key;

    #[test]
    fn resolves_relative_paths_and_parent_folders_inside_the_bucket() {
        let chk = "s3://bucket/flink/checkpoints/job/chk-7";
        assert_eq!(
            resolve(chk, "abc"),
            "s3://bucket/flink/checkpoints/job/chk-7/abc"
        );
        assert_eq!(
            resolve(chk, "../shared/x"),
            "s3://bucket/flink/checkpoints/job/shared/x"
        );
        assert_eq!(
            resolve("s3://bucket/chk-7", "../shared/x"),
            "s3://bucket/shared/x"
        );
        assert_eq!(
            resolve("/flink/job/chk-7", "../taskowned/y"),
            "/flink/job/taskowned/y"
        );
        assert_eq!(resolve("job/chk-7", "../shared/x"), "job/shared/x");
        assert_eq!(resolve("chk-7", "../shared/x"), "shared/x");
        assert_eq!(resolve(".", "f"), "f");
        assert_eq!(resolve("anything", "/abs/f"), "/abs/f");
        assert_eq!(resolve("file:///flink/sp", "f"), "file:///flink/sp/f");
        assert_eq!(resolve("s3://bucket", "../../f"), "s3://bucket/f");
        assert_eq!(resolve("../up/chk-1", "../../shared/f"), "../shared/f");
    }

    #[test]
    fn checkpoint_folders_are_ordered_by_number() {
        let mut names = ["chk-10", "savepoint-x", "chk-9"];
        names.sort_by_key(|n| order_key(n));
        assert_eq!(names, ["chk-9", "chk-10", "savepoint-x"]);
    }

    #[test]
    fn parent_keeps_roots() {
        assert_eq!(parent("s3://b/sp/_metadata"), "s3://b/sp");
        assert_eq!(parent("/_metadata"), "/");
        assert_eq!(parent("_metadata"), ".");
        assert_eq!(parent("dir/meta"), "dir");
    }
}
