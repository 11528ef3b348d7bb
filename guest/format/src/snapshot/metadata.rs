//! The `_metadata` file of a Flink checkpoint or savepoint, as Flink 1.20 (format version 4)
//! and Flink 2.x (versions 5 and 6) write it: every operator with every subtask's state
//! handles. Only operator-state handles are kept in full (they lead to the markers); every other
//! handle is walked exactly as Flink's `MetadataV2V3SerializerBase` writes it, so that the next
//! operator is reached, and a handle type this reader does not know is refused by name.

use super::input::{Input, Read};

/// `Checkpoints.HEADER_MAGIC_NUMBER`.
const MAGIC: i32 = 0x4960672d;
/// `MetadataV2V3SerializerBase.MASTER_STATE_MAGIC_NUMBER`.
const MASTER_STATE_MAGIC: i32 = 0xc96b1696_u32 as i32;

// Handle type tags of `MetadataV2V3SerializerBase`.
const NULL_HANDLE: u8 = 0;
const BYTE_STREAM_STATE_HANDLE: u8 = 1;
const FILE_STREAM_STATE_HANDLE: u8 = 2;
const KEY_GROUPS_HANDLE: u8 = 3;
const PARTITIONABLE_OPERATOR_STATE_HANDLE: u8 = 4;
const INCREMENTAL_KEY_GROUPS_HANDLE: u8 = 5;
const RELATIVE_STREAM_STATE_HANDLE: u8 = 6;
const SAVEPOINT_KEY_GROUPS_HANDLE: u8 = 7;
const CHANGELOG_HANDLE: u8 = 8;
const CHANGELOG_BYTE_INCREMENT_HANDLE: u8 = 9;
const CHANGELOG_FILE_INCREMENT_HANDLE: u8 = 10;
const INCREMENTAL_KEY_GROUPS_HANDLE_V2: u8 = 11;
const KEY_GROUPS_HANDLE_V2: u8 = 12;
const CHANGELOG_FILE_INCREMENT_HANDLE_V2: u8 = 13;
const CHANGELOG_HANDLE_V2: u8 = 14;
const SEGMENT_FILE_HANDLE: u8 = 15;
const EMPTY_SEGMENT_FILE_HANDLE: u8 = 16;
const SEGMENT_PARTITIONABLE_OPERATOR_STATE_HANDLE: u8 = 17;

/// The first and last `_metadata` versions read here (Flink 1.20 writes 4, Flink 2.2 writes 6).
pub const OLDEST_VERSION: i32 = 3;
pub const NEWEST_VERSION: i32 = 6;

#[derive(Debug, Clone)]
pub struct Metadata<'a> {
    pub version: i32,
    pub checkpoint_id: u64,
    pub operators: Vec<OperatorState<'a>>,
}

#[derive(Debug, Clone)]
pub struct OperatorState<'a> {
    /// The OperatorID's 16 bytes as Flink prints them (lower part, then upper part).
    pub id: [u8; 16],
    /// Written from format version 5 (Flink 2.x) on, when the job set them.
    pub name: Option<String>,
    pub uid: Option<String>,
    pub parallelism: i32,
    pub max_parallelism: i32,
    pub coordinator_state: bool,
    /// Every subtask finished before the snapshot (no state at all).
    pub fully_finished: bool,
    pub subtasks: Vec<SubtaskState<'a>>,
}

impl OperatorState<'_> {
    pub fn id_hex(&self) -> String {
        hex(&self.id)
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone)]
pub struct SubtaskState<'a> {
    pub index: u32,
    pub finished: bool,
    pub managed_operator_state: Option<OperatorStateHandle<'a>>,
    pub raw_operator_state: Option<OperatorStateHandle<'a>>,
    pub managed_keyed_state: bool,
    pub raw_keyed_state: bool,
    pub input_channel_handles: u32,
    pub output_channel_handles: u32,
}

/// One subtask's operator state: each named state's element offsets into one stream.
#[derive(Debug, Clone)]
pub struct OperatorStateHandle<'a> {
    pub states: Vec<NamedState>,
    pub stream: Stream<'a>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    SplitDistribute,
    Union,
    Broadcast,
}

impl Distribution {
    pub fn name(self) -> &'static str {
        match self {
            Distribution::SplitDistribute => "SPLIT_DISTRIBUTE",
            Distribution::Union => "UNION",
            Distribution::Broadcast => "BROADCAST",
        }
    }
}

#[derive(Debug, Clone)]
pub struct NamedState {
    pub name: String,
    pub distribution: Distribution,
    /// Where each element starts in the handle's stream.
    pub offsets: Vec<u64>,
}

/// Where the bytes of an operator-state stream are.
#[derive(Debug, Clone)]
pub enum Stream<'a> {
    /// Small state, inline in `_metadata`; `at` is the offset of its first byte there.
    Inline { bytes: &'a [u8], at: usize },
    /// A file named by an absolute path or URI (checkpoints); `at` is where `_metadata` names it.
    File { path: String, size: u64, at: usize },
    /// A file beside `_metadata`, named relative to the snapshot directory (savepoints).
    Relative { path: String, size: u64 },
    /// A segment of a merged file (`execution.checkpointing.file-merging.enabled`): the stream
    /// is the `size` bytes from `start` of the file named by an absolute path or URI.
    Segment {
        path: String,
        start: u64,
        size: u64,
        at: usize,
    },
    /// No stream (an operator state handle with nothing behind it).
    Empty,
}

/// Reads a whole `_metadata` file. `file` names it in errors.
pub fn read<'a>(file: &'a str, bytes: &'a [u8]) -> Read<Metadata<'a>> {
    let mut input = Input::new(file, bytes);
    let magic = input.i32("the magic number 0x4960672d of a Flink checkpoint metadata file")?;
    if magic != MAGIC {
        return Err(Input::new(file, bytes).error(format!(
            "expected the magic number 0x4960672d of a Flink checkpoint metadata file but found 0x{:08x}",
            magic as u32
        )));
    }
    let version_at = input.clone();
    let version = input.i32("the metadata format version")?;
    if !(OLDEST_VERSION..=NEWEST_VERSION).contains(&version) {
        return Err(version_at.error(format!(
            "found metadata format version {version}; this reader knows versions {OLDEST_VERSION} to {NEWEST_VERSION} (Flink 1.20 writes 4, Flink 2.2 writes 6)"
        )));
    }
    let id_at = input.clone();
    let checkpoint_id = u64::try_from(input.i64("the checkpoint ID")?)
        .map_err(|_| id_at.error("expected a non-negative checkpoint ID"))?;
    let masters = input.count("the number of master states", 8)?;
    for _ in 0..masters {
        skip_master_state(&mut input)?;
    }
    // An operator takes at least 16 + 4 + 4 + 1 + 4 bytes.
    let count = input.count("the number of operators", 29)?;
    let mut operators: Vec<OperatorState<'a>> = Vec::new();
    let mut id_offsets = Vec::new();
    for _ in 0..count {
        let (operator, id_at) = read_operator(&mut input, version)?;
        // Flink restores operators from a map keyed by OperatorID, so of two entries with one
        // ID it loads the last: no entry can be trusted to be the state the job restores.
        if let Some(first) = operators.iter().position(|known| known.id == operator.id) {
            return Err(id_at.error(format!(
                "expected each OperatorID once but found operator {} again (first at byte {}); Flink would restore only its last entry, so the snapshot is refused as damaged or edited",
                label(&operator),
                id_offsets[first]
            )));
        }
        id_offsets.push(id_at.offset());
        operators.push(operator);
    }
    // Versions 4 and later end with the Java-serialized checkpoint properties, which say nothing
    // about markers; they are not read.
    Ok(Metadata {
        version,
        checkpoint_id,
        operators,
    })
}

fn skip_master_state(input: &mut Input<'_>) -> Read<()> {
    let at = input.clone();
    if input.i32("a master state's magic number")? != MASTER_STATE_MAGIC {
        return Err(at.error("expected a master state's magic number 0xc96b1696"));
    }
    let length = input.count("a master state's length", 1)?;
    input.take(length as usize, "a master state")?;
    Ok(())
}

/// An operator entry, and a reader positioned at its OperatorID (where a repeated ID is named).
fn read_operator<'a>(input: &mut Input<'a>, version: i32) -> Read<(OperatorState<'a>, Input<'a>)> {
    let (name, uid) = if version >= 5 {
        let name = input.utf("an operator name")?;
        let uid = input.utf("an operator uid")?;
        (non_empty(name), non_empty(uid))
    } else {
        (None, None)
    };
    let id_at = input.clone();
    let id: [u8; 16] = input.array("an OperatorID")?;
    let parallelism = input.i32("an operator's parallelism")?;
    let max_parallelism = input.i32("an operator's maximum parallelism")?;
    let coordinator_state = !matches!(read_stream(input, "coordinator state")?, Stream::Empty);
    let subtasks_at = input.clone();
    let subtasks = input.i32("the number of subtask states")?;
    let mut operator = OperatorState {
        id,
        name,
        uid,
        parallelism,
        max_parallelism,
        coordinator_state,
        fully_finished: subtasks < 0,
        subtasks: Vec::new(),
    };
    if subtasks < 0 {
        return Ok((operator, id_at));
    }
    // A subtask takes at least 4 (index) + 4 + 4 + 1 + 1 + 4 + 4 bytes.
    if (subtasks as usize).saturating_mul(22) > input.remaining() {
        return Err(subtasks_at.error(format!(
            "expected the number of subtask states but found {subtasks}, which the {} bytes left cannot hold",
            input.remaining()
        )));
    }
    for _ in 0..subtasks {
        let stored = input.i32("a subtask index")?;
        let (index, finished) = if stored < 0 {
            ((-(stored as i64) - 1) as u32, true)
        } else {
            (stored as u32, false)
        };
        let subtask = if finished {
            SubtaskState {
                index,
                finished,
                managed_operator_state: None,
                raw_operator_state: None,
                managed_keyed_state: false,
                raw_keyed_state: false,
                input_channel_handles: 0,
                output_channel_handles: 0,
            }
        } else {
            read_subtask(input, index, version)?
        };
        operator.subtasks.push(subtask);
    }
    Ok((operator, id_at))
}

/// An operator as messages name it: its ID, and its uid when the file records one.
fn label(operator: &OperatorState<'_>) -> String {
    match &operator.uid {
        Some(uid) => format!("{} (uid {uid:?})", operator.id_hex()),
        None => operator.id_hex(),
    }
}

fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

fn read_subtask<'a>(input: &mut Input<'a>, index: u32, version: i32) -> Read<SubtaskState<'a>> {
    let managed_operator_state = optional_operator_state(input, "managed operator state")?;
    let raw_operator_state = optional_operator_state(input, "raw operator state")?;
    let managed_keyed_state = skip_keyed_handle(input, "managed keyed state")?;
    let raw_keyed_state = skip_keyed_handle(input, "raw keyed state")?;
    let input_channel_handles = skip_channel_handles(input, version, "input channel state")?;
    let output_channel_handles = skip_channel_handles(input, version, "output channel state")?;
    Ok(SubtaskState {
        index,
        finished: false,
        managed_operator_state,
        raw_operator_state,
        managed_keyed_state,
        raw_keyed_state,
        input_channel_handles,
        output_channel_handles,
    })
}

/// `int` presence flag, then an operator-state handle.
fn optional_operator_state<'a>(
    input: &mut Input<'a>,
    what: &str,
) -> Read<Option<OperatorStateHandle<'a>>> {
    if input.i32(&format!("the presence flag of the {what}"))? == 0 {
        return Ok(None);
    }
    let at = input.clone();
    let tag = input.u8(&format!("the {what} handle type"))?;
    match tag {
        NULL_HANDLE => Ok(None),
        PARTITIONABLE_OPERATOR_STATE_HANDLE | SEGMENT_PARTITIONABLE_OPERATOR_STATE_HANDLE => {
            let states = read_named_states(input)?;
            if tag == SEGMENT_PARTITIONABLE_OPERATOR_STATE_HANDLE {
                input.utf("a file-merging task-owned directory")?;
                input.utf("a file-merging shared directory")?;
                input.u8("a file-merging empty flag")?;
            }
            let stream = read_stream(input, what)?;
            Ok(Some(OperatorStateHandle { states, stream }))
        }
        other => Err(at.error(format!(
            "expected an operator state handle (type 4 or 17) for the {what} but found type {other}"
        ))),
    }
}

fn read_named_states(input: &mut Input<'_>) -> Read<Vec<NamedState>> {
    // A state takes at least 2 (name) + 1 (mode) + 4 (count) bytes.
    let count = input.count("the number of named operator states", 7)?;
    let mut states = Vec::new();
    for _ in 0..count {
        let name = input.utf("an operator state name")?;
        let mode_at = input.clone();
        let distribution = match input.u8("a distribution mode")? {
            0 => Distribution::SplitDistribute,
            1 => Distribution::Union,
            2 => Distribution::Broadcast,
            other => {
                return Err(mode_at.error(format!(
                    "expected the distribution mode of state {name:?} (0, 1 or 2) but found {other}"
                )));
            }
        };
        let elements = input.count(&format!("the number of elements of state {name:?}"), 8)?;
        let mut offsets = Vec::with_capacity(elements as usize);
        for _ in 0..elements {
            let at = input.clone();
            let offset = input.i64("an element offset")?;
            offsets.push(
                u64::try_from(offset).map_err(|_| {
                    at.error(format!("expected an element offset but found {offset}"))
                })?,
            );
        }
        states.push(NamedState {
            name,
            distribution,
            offsets,
        });
    }
    Ok(states)
}

/// A stream state handle (`serializeStreamStateHandle`).
fn read_stream<'a>(input: &mut Input<'a>, what: &str) -> Read<Stream<'a>> {
    let at = input.clone();
    let tag = input.u8(&format!("the {what} stream handle type"))?;
    match tag {
        NULL_HANDLE => Ok(Stream::Empty),
        FILE_STREAM_STATE_HANDLE => {
            let size = file_size(input)?;
            let at = input.offset();
            let path = input.utf("a state file path")?;
            Ok(Stream::File { path, size, at })
        }
        BYTE_STREAM_STATE_HANDLE => {
            input.utf("an inline state handle name")?;
            let length = input.count("the length of inline state", 1)?;
            let at = input.offset();
            let bytes = input.take(length as usize, "inline state")?;
            Ok(Stream::Inline { bytes, at })
        }
        RELATIVE_STREAM_STATE_HANDLE => {
            let path = input.utf("a relative state file path")?;
            let size = file_size(input)?;
            Ok(Stream::Relative { path, size })
        }
        KEY_GROUPS_HANDLE => {
            skip_key_group_offsets(input)?;
            read_stream(input, what)?;
            Ok(Stream::Empty)
        }
        SEGMENT_FILE_HANDLE => {
            let start = non_negative(input, "a segment start")?;
            let size = non_negative(input, "a segment size")?;
            input.i32("a segment scope")?;
            let at = input.offset();
            let path = input.utf("a segment file path")?;
            input.utf("a logical file ID")?;
            Ok(Stream::Segment {
                path,
                start,
                size,
                at,
            })
        }
        EMPTY_SEGMENT_FILE_HANDLE => Ok(Stream::Empty),
        other => Err(at.error(format!(
            "expected a stream state handle type (0, 1, 2, 3, 6, 15 or 16) for the {what} but found {other}"
        ))),
    }
}

fn non_negative(input: &mut Input<'_>, what: &str) -> Read<u64> {
    let at = input.clone();
    let value = input.i64(what)?;
    u64::try_from(value).map_err(|_| at.error(format!("expected {what} but found {value}")))
}

fn file_size(input: &mut Input<'_>) -> Read<u64> {
    let at = input.clone();
    let size = input.i64("a state file size")?;
    u64::try_from(size)
        .map_err(|_| at.error(format!("expected a state file size but found {size}")))
}

fn skip_key_group_offsets(input: &mut Input<'_>) -> Read<()> {
    input.i32("the first key group")?;
    let groups = input.count("the number of key groups", 8)?;
    input.skip_items(u64::from(groups), 8, "key-group offsets")
}

/// Walks one keyed-state handle; `true` when there was one.
fn skip_keyed_handle(input: &mut Input<'_>, what: &str) -> Read<bool> {
    let at = input.clone();
    let tag = input.u8(&format!("the {what} handle type"))?;
    match tag {
        NULL_HANDLE => return Ok(false),
        KEY_GROUPS_HANDLE | KEY_GROUPS_HANDLE_V2 | SAVEPOINT_KEY_GROUPS_HANDLE => {
            skip_key_group_offsets(input)?;
            read_stream(input, what)?;
            if tag == KEY_GROUPS_HANDLE_V2 {
                input.utf("a state handle ID")?;
            }
        }
        INCREMENTAL_KEY_GROUPS_HANDLE | INCREMENTAL_KEY_GROUPS_HANDLE_V2 => {
            input.i64("an incremental handle's checkpoint ID")?;
            input.utf("a state backend identifier")?;
            input.i32("the first key group")?;
            input.i32("the number of key groups")?;
            if tag == INCREMENTAL_KEY_GROUPS_HANDLE_V2 {
                input.i64("a checkpointed size")?;
            }
            read_stream(input, "incremental state metadata")?;
            skip_local_path_handles(input, "shared incremental state")?;
            skip_local_path_handles(input, "private incremental state")?;
            if tag == INCREMENTAL_KEY_GROUPS_HANDLE_V2 {
                input.utf("a state handle ID")?;
            }
        }
        CHANGELOG_HANDLE | CHANGELOG_HANDLE_V2 => {
            input.i32("the first key group")?;
            input.i32("the number of key groups")?;
            input.i64("a checkpointed size")?;
            let materialized = input.count("the number of materialized handles", 1)?;
            for _ in 0..materialized {
                skip_keyed_handle(input, "materialized changelog state")?;
            }
            let deltas = input.count("the number of changelog handles", 1)?;
            for _ in 0..deltas {
                skip_keyed_handle(input, "changelog state")?;
            }
            input.i64("a materialization ID")?;
            if tag == CHANGELOG_HANDLE_V2 {
                input.i64("a changelog checkpoint ID")?;
            }
            input.utf("a state handle ID")?;
        }
        CHANGELOG_BYTE_INCREMENT_HANDLE => {
            input.i32("the first key group")?;
            input.i32("the number of key groups")?;
            input.i64("a changelog start")?;
            input.i64("a changelog end")?;
            let changes = input.count("the number of state changes", 8)?;
            for _ in 0..changes {
                input.i32("a state change's key group")?;
                let length = input.count("a state change's length", 1)?;
                input.take(length as usize, "a state change")?;
            }
            input.utf("a state handle ID")?;
        }
        CHANGELOG_FILE_INCREMENT_HANDLE | CHANGELOG_FILE_INCREMENT_HANDLE_V2 => {
            input.i32("the first key group")?;
            input.i32("the number of key groups")?;
            let handles = input.count("the number of changelog files", 9)?;
            for _ in 0..handles {
                input.i64("a changelog file offset")?;
                read_stream(input, "changelog file")?;
            }
            input.i64("a changelog state size")?;
            input.i64("a checkpointed size")?;
            input.utf("a state handle ID")?;
            if tag == CHANGELOG_FILE_INCREMENT_HANDLE_V2 {
                input.utf("a changelog storage identifier")?;
            }
        }
        other => {
            return Err(at.error(format!(
                "expected a keyed state handle type for the {what} but found {other}"
            )));
        }
    }
    Ok(true)
}

fn skip_local_path_handles(input: &mut Input<'_>, what: &str) -> Read<()> {
    let count = input.count(&format!("the number of {what} files"), 3)?;
    for _ in 0..count {
        input.utf("a local file name")?;
        read_stream(input, what)?;
    }
    Ok(())
}

/// Channel state of unaligned checkpoints: version 6 writes a type tag per handle and may merge
/// channels into one handle; versions 3 to 5 write plain per-channel handles.
fn skip_channel_handles(input: &mut Input<'_>, version: i32, what: &str) -> Read<u32> {
    let count = input.count(&format!("the number of {what} handles"), 9)?;
    for _ in 0..count {
        let merged = if version >= 6 {
            let at = input.clone();
            match input.u8(&format!("the {what} handle type"))? {
                1 | 2 => false,
                3 | 4 => true,
                other => {
                    return Err(at.error(format!(
                        "expected a channel state handle type (1 to 4) for the {what} but found {other}"
                    )));
                }
            }
        } else {
            false
        };
        input.i32("a channel state's subtask index")?;
        if merged {
            input.i64("a channel state size")?;
            read_stream(input, what)?;
            let length = input.count("the length of merged channel offsets", 1)?;
            input.take(length as usize, "merged channel offsets")?;
        } else {
            input.i32("a channel's gate or partition index")?;
            input.i32("a channel's index")?;
            let offsets = input.count("the number of channel state offsets", 8)?;
            input.skip_items(u64::from(offsets), 8, "channel state offsets")?;
            input.i64("a channel state size")?;
            read_stream(input, what)?;
        }
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIRST: [u8; 16] = [0x32; 16];
    const SECOND: [u8; 16] = [0x7a; 16];

    /// A version 4 `_metadata` with no master state whose operators are all fully finished
    /// (no subtask state): the smallest file that lists operators. Each entry is 29 bytes.
    fn metadata_listing(ids: &[[u8; 16]]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(MAGIC.to_be_bytes());
        out.extend(4i32.to_be_bytes());
        out.extend(7i64.to_be_bytes()); // checkpoint ID
        out.extend(0i32.to_be_bytes()); // master states
        out.extend((ids.len() as i32).to_be_bytes());
        for id in ids {
            out.extend(id);
            out.extend(2i32.to_be_bytes()); // parallelism
            out.extend(128i32.to_be_bytes()); // maximum parallelism
            out.push(NULL_HANDLE); // no coordinator state
            out.extend((-1i32).to_be_bytes()); // fully finished
        }
        out
    }

    #[test]
    fn operators_with_distinct_ids_are_read_in_file_order() {
        let bytes = metadata_listing(&[FIRST, SECOND]);
        let metadata = read("_metadata", &bytes).unwrap();
        let ids: Vec<[u8; 16]> = metadata.operators.iter().map(|op| op.id).collect();
        assert_eq!(ids, [FIRST, SECOND]);
    }

    /// Flink keys the operators it restores by OperatorID, so of two entries with one ID it
    /// restores the last; a reader that took either could plan from state the job never loads.
    #[test]
    fn an_operator_id_listed_twice_is_refused_at_its_second_entry() {
        let bytes = metadata_listing(&[FIRST, SECOND, FIRST]);
        let error = read("_metadata", &bytes).unwrap_err();
        // Header 24 bytes, then 29 per operator: the third entry's ID starts at 24 + 2 * 29.
        assert_eq!(error.offset, 82, "{error}");
        let message = error.to_string();
        assert!(message.contains(&hex(&FIRST)), "{message}");
        assert!(message.contains("first at byte 24"), "{message}");
    }
}
