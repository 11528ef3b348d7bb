//! Recovery markers read straight out of a Flink checkpoint or savepoint (README "Planning from
//! a Flink snapshot"; SPEC §9). The `_metadata` file lists every operator's state handles; the
//! marker operator's union list state `recoveryMarker` holds one Kryo-serialized marker per
//! subtask, inline in `_metadata` or in a state file beside it. This module reads both and
//! tells its caller which state files it needs: a host reads bytes, the component decides.

mod discover;
pub mod input;
pub mod kryo;
mod markers;
pub mod metadata;
pub mod operator_id;
pub mod retained;
pub mod store;
mod summary;

pub use summary::{OperatorSummary, StateSummary};

use crate::error::{CleanupError, Result};
use input::{Input, SnapshotError};
use kryo::{Dialect, Element};
use metadata::{Metadata, OperatorState, Stream, hex};

/// The union list state in which Flink Agents' operator keeps its recovery markers.
pub const MARKER_STATE: &str = "recoveryMarker";

/// The operator whose markers are read, as the Java tool's `plan` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperatorRef {
    /// `--operator-uid`: the string given to `uid(...)` in the job.
    Uid(String),
    /// `--operator-uid-hash`: the 32 hex digits of the OperatorID (jobs without a uid).
    UidHash(String),
}

impl OperatorRef {
    fn id(&self) -> Result<[u8; 16]> {
        match self {
            OperatorRef::Uid(uid) => Ok(operator_id::from_uid(uid)),
            OperatorRef::UidHash(hash) => parse_hash(hash),
        }
    }

    /// The OperatorID as Flink prints it (32 lowercase hex digits).
    pub fn id_hex(&self) -> Result<String> {
        self.id().map(|id| hex(&id))
    }

    fn describe(&self) -> String {
        match self {
            OperatorRef::Uid(uid) => format!("uid {uid:?}"),
            OperatorRef::UidHash(hash) => format!("uid hash {hash}"),
        }
    }
}

fn parse_hash(hash: &str) -> Result<[u8; 16]> {
    let digits = hash.trim();
    let valid = digits.len() == 32 && digits.bytes().all(|b| b.is_ascii_hexdigit());
    if !valid {
        return Err(CleanupError::InvalidArgument(format!(
            "Operator uid hash {hash:?} is not 32 hexadecimal digits (an OperatorID as Flink prints it)"
        )));
    }
    let mut id = [0u8; 16];
    for (byte, pair) in id.iter_mut().zip(digits.as_bytes().chunks_exact(2)) {
        *byte = (hex_value(pair[0]) << 4) | hex_value(pair[1]);
    }
    Ok(id)
}

/// The value of one hex digit (already checked to be one).
fn hex_value(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        _ => digit
            .to_ascii_lowercase()
            .wrapping_sub(b'a')
            .wrapping_add(10),
    }
}

/// A state file the markers live in: `path` is what to open, relative to the snapshot
/// directory unless it is absolute; `written` is the path as `_metadata` records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NeededFile {
    pub path: String,
    pub written: String,
}

/// The bytes of a state file, by the `path` of its `NeededFile`.
#[derive(Debug, Clone, Copy)]
pub struct StateFile<'a> {
    pub path: &'a str,
    pub bytes: &'a [u8],
}

/// One marker element as stored, with where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMarker {
    pub subtask: u32,
    /// The element's position in its subtask's state (0-based).
    pub element: usize,
    pub element_count: usize,
    pub element_value: Element,
}

/// A checkpoint or savepoint's `_metadata`, read.
#[derive(Debug, Clone)]
pub struct Snapshot<'a> {
    /// The snapshot directory as given (without a trailing `/_metadata`), "." when empty.
    directory: String,
    metadata_name: String,
    pub metadata: Metadata<'a>,
}

impl<'a> Snapshot<'a> {
    /// Reads `_metadata`. `location` is the snapshot as the operator gave it: its directory, or
    /// the `_metadata` file itself; it names files in every message.
    pub fn read(location: &str, bytes: &'a [u8]) -> Result<Snapshot<'a>> {
        let trimmed = location.trim_end_matches('/');
        let directory = match trimmed.strip_suffix("_metadata") {
            Some(rest) if rest.is_empty() || rest.ends_with('/') => rest.trim_end_matches('/'),
            _ => trimmed,
        };
        let directory = if directory.is_empty() { "." } else { directory };
        Snapshot::read_named(directory, join(directory, "_metadata"), bytes)
    }

    /// Reads a `_metadata` kept under another name (`metadata_name`, a file in `directory`, which
    /// is what relative state paths are read against).
    pub fn read_named(
        directory: &str,
        metadata_name: String,
        bytes: &'a [u8],
    ) -> Result<Snapshot<'a>> {
        let directory = directory.to_owned();
        // The metadata borrows `bytes` only; its file name is re-attached to errors below.
        let metadata = metadata::read("_metadata", bytes)
            .map_err(|error| invalid(renamed(error, &metadata_name)))?;
        Ok(Snapshot {
            directory,
            metadata_name,
            metadata,
        })
    }

    pub fn directory(&self) -> &str {
        &self.directory
    }

    /// The Kryo that wrote the state: Flink 1.x (metadata version 4 and older) ships Kryo 2.24,
    /// Flink 2.x (versions 5 and 6) Kryo 5.
    pub fn dialect(&self) -> Dialect {
        if self.metadata.version >= 5 {
            Dialect::Kryo5
        } else {
            Dialect::Kryo2
        }
    }

    /// The operator `which` names, or a refusal naming the operators the snapshot holds.
    pub fn operator(&self, which: &OperatorRef) -> Result<&OperatorState<'a>> {
        let id = which.id()?;
        if let Some(operator) = self.metadata.operators.iter().find(|op| op.id == id) {
            return Ok(operator);
        }
        let present: Vec<String> = self
            .metadata
            .operators
            .iter()
            .map(|op| match &op.uid {
                Some(uid) => format!("{} (uid {uid:?})", op.id_hex()),
                None => op.id_hex(),
            })
            .collect();
        Err(CleanupError::InvalidArgument(format!(
            "Snapshot {} has no operator with {} (OperatorID {}); its operators are {}",
            self.metadata_name,
            which.describe(),
            hex(&id),
            if present.is_empty() {
                "none".to_owned()
            } else {
                present.join(", ")
            }
        )))
    }

    /// The state files that hold `which`'s markers, each once, in the order first needed.
    pub fn marker_files(&self, which: &OperatorRef) -> Result<Vec<NeededFile>> {
        self.files_of(std::iter::once(self.operator(which)?))
    }

    /// The state files that hold the markers of `operators`, each once, in the order needed.
    fn files_of<'o>(
        &self,
        operators: impl Iterator<Item = &'o OperatorState<'a>>,
    ) -> Result<Vec<NeededFile>>
    where
        'a: 'o,
    {
        let mut files: Vec<NeededFile> = Vec::new();
        for operator in operators {
            for (_, handle, _) in marker_states(operator) {
                if let Some(file) = self.needed(&handle.stream)?
                    && !files.contains(&file)
                {
                    files.push(file);
                }
            }
        }
        Ok(files)
    }

    /// Where a stream's bytes are, for a host to read (`None`: inline in `_metadata`).
    fn needed(&self, stream: &Stream<'_>) -> Result<Option<NeededFile>> {
        match stream {
            Stream::Inline { .. } | Stream::Empty => Ok(None),
            Stream::Relative { path, .. } => Ok(Some(NeededFile {
                path: path.clone(),
                written: path.clone(),
            })),
            // A merged file (`execution.checkpointing.file-merging.enabled`) is read whole; the
            // stream is its segment.
            Stream::File { path, at, .. } | Stream::Segment { path, at, .. } => {
                Ok(Some(NeededFile {
                    path: self.local_path(path, *at)?,
                    written: path.clone(),
                }))
            }
        }
    }

    /// A checkpoint's state files are recorded by absolute URI (`file:/flink/checkpoints/<job>/
    /// chk-7/…`, `…/<job>/shared/…`). They are read relative to the checkpoint directory given,
    /// so a checkpoint copied with its job directory reads the same as where Flink wrote it.
    fn local_path(&self, written: &str, at: usize) -> Result<String> {
        let marker = format!("/chk-{}/", self.metadata.checkpoint_id);
        if let Some(at) = written.find(&marker) {
            return Ok(written[at + marker.len()..].to_owned());
        }
        for shared in ["/shared/", "/taskowned/"] {
            if let Some(at) = written.rfind(shared) {
                return Ok(format!("..{}", &written[at..]));
            }
        }
        match written.strip_prefix("file:") {
            Some(path) => Ok(format!("/{}", path.trim_start_matches('/'))),
            None => Err(invalid(SnapshotError {
                file: self.metadata_name.clone(),
                offset: at,
                problem: format!(
                    "the marker state file {} lies neither in chk-{}/ nor in the job's shared/ or taskowned/ folder, so it cannot be found from the snapshot's location",
                    printable(written),
                    self.metadata.checkpoint_id
                ),
            })),
        }
    }

    /// The display name of a needed file: the snapshot directory joined with its path.
    pub fn file_name(&self, path: &str) -> String {
        if path.starts_with('/') {
            path.to_owned()
        } else {
            join(&self.directory, path)
        }
    }

    /// Every element of `which`'s `recoveryMarker` state, subtask by subtask. `files` holds the
    /// bytes of the files `marker_files` named.
    pub fn stored_markers(
        &self,
        which: &OperatorRef,
        files: &[StateFile<'_>],
    ) -> Result<Vec<StoredMarker>> {
        let operator = self.operator(which)?;
        let mut markers = Vec::new();
        let mut found_state = false;
        for (subtask, handle, state) in marker_states(operator) {
            found_state = true;
            let (name, input, base) = match &handle.stream {
                Stream::Inline { bytes, at } => (self.metadata_name.clone(), *bytes, *at),
                Stream::Empty => {
                    if state.offsets.is_empty() {
                        continue;
                    }
                    return Err(CleanupError::InvalidSnapshot(format!(
                        "Snapshot {} lists {} elements of state {MARKER_STATE} for subtask {subtask} but no stream that holds them",
                        self.metadata_name,
                        state.offsets.len()
                    )));
                }
                stream => {
                    let Some(file) = self.needed(stream)? else {
                        continue;
                    };
                    let name = self.file_name(&file.path);
                    let bytes = files
                        .iter()
                        .find(|f| f.path == file.path)
                        .ok_or_else(|| {
                            CleanupError::InvalidSnapshot(format!(
                                "Snapshot {} keeps the markers of subtask {subtask} in {}, which was not supplied",
                                self.metadata_name,
                                printable(&name)
                            ))
                        })?
                        .bytes;
                    match stream {
                        Stream::Segment { start, size, .. } => {
                            let Some(segment) = segment_of(bytes, *start, *size) else {
                                return Err(segment_error(&name, bytes, *start, *size, subtask));
                            };
                            (name, segment, usize::try_from(*start).unwrap_or(usize::MAX))
                        }
                        _ => (name, bytes, 0),
                    }
                }
            };
            let stream = Input::window(&name, input, base);
            for (element, offset) in state.offsets.iter().enumerate() {
                let mut at = stream
                    .at(*offset, "a recoveryMarker element")
                    .map_err(invalid)?;
                let value = kryo::read_element(&mut at, self.dialect()).map_err(invalid)?;
                markers.push(StoredMarker {
                    subtask,
                    element,
                    element_count: state.offsets.len(),
                    element_value: value,
                });
            }
        }
        if !found_state {
            return Err(CleanupError::InvalidMarker(format!(
                "Operator {} in snapshot {} has no operator state named {MARKER_STATE}; it is not the Flink Agents action operator",
                operator_label(operator),
                self.metadata_name
            )));
        }
        Ok(markers)
    }
}

fn operator_label(operator: &OperatorState<'_>) -> String {
    match &operator.uid {
        Some(uid) => format!("{uid:?} ({})", operator.id_hex()),
        None => operator.id_hex(),
    }
}

/// The subtasks' handles that carry the marker state.
fn marker_states<'o, 'a>(
    operator: &'o OperatorState<'a>,
) -> impl Iterator<
    Item = (
        u32,
        &'o metadata::OperatorStateHandle<'a>,
        &'o metadata::NamedState,
    ),
> {
    operator.subtasks.iter().flat_map(|subtask| {
        subtask
            .managed_operator_state
            .iter()
            .flat_map(move |handle| {
                handle
                    .states
                    .iter()
                    .filter(|state| state.name == MARKER_STATE)
                    .map(move |state| (subtask.index, handle, state))
            })
    })
}

/// A name read from the snapshot, escaped when it holds control characters (a corrupt class
/// name must not break the one-line message).
fn printable(name: &str) -> String {
    if name.chars().any(char::is_control) {
        format!("{name:?}")
    } else {
        name.to_owned()
    }
}

pub(crate) fn join(directory: &str, name: &str) -> String {
    if directory == "." {
        name.to_owned()
    } else {
        format!("{directory}/{name}")
    }
}

fn renamed(mut error: SnapshotError, name: &str) -> SnapshotError {
    error.file = name.to_owned();
    error
}

fn invalid(error: SnapshotError) -> CleanupError {
    CleanupError::InvalidSnapshot(error.to_string())
}

/// Why a merged file does not hold a segment, naming the file and the byte where it falls short.
fn segment_error(name: &str, bytes: &[u8], start: u64, size: u64, subtask: u32) -> CleanupError {
    let whole = Input::window(name, bytes, 0);
    let what = format!("the merged file segment holding subtask {subtask}'s markers");
    let error = match whole.at(start, &what) {
        Err(error) => error,
        Ok(mut at) => match at.take(usize::try_from(size).unwrap_or(usize::MAX), &what) {
            Err(error) => error,
            Ok(_) => whole.error(format!("{what} could not be taken")),
        },
    };
    invalid(error)
}

/// The `size` bytes from `start` of a merged file, when the file holds them.
fn segment_of(bytes: &[u8], start: u64, size: u64) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    let end = start.checked_add(usize::try_from(size).ok()?)?;
    bytes.get(start..end)
}
