//! Hostile snapshot input: every real Flink snapshot under `fixtures/snapshots`, truncated at
//! every byte and with single bits flipped, is either read or refused with an `invalid-snapshot`
//! (or marker) sentence that names the file and a byte offset inside it: never a panic, and
//! never an answer for a truncated `_metadata`. A `_metadata` that lists one operator twice
//! is refused too, naming it.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test harness")]

use std::path::{Path, PathBuf};

use action_state_format::CleanupError;
use action_state_format::snapshot::metadata::OperatorState;
use action_state_format::snapshot::{MARKER_STATE, OperatorRef, Snapshot, StateFile};

fn snapshots() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/snapshots");
    collect(&root, &mut found);
    found.sort();
    found
}

fn collect(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, found);
        } else if path.file_name().is_some_and(|n| n == "_metadata") {
            found.push(path.parent().unwrap().to_path_buf());
        }
    }
}

/// Every state file the marker operators need, read from disk.
fn state_files(dir: &Path, metadata: &[u8]) -> Vec<(String, Vec<u8>)> {
    let location = dir.display().to_string();
    let snapshot = Snapshot::read(&location, metadata).unwrap();
    snapshot
        .all_marker_files()
        .unwrap()
        .into_iter()
        .map(|file| {
            let bytes = std::fs::read(dir.join(&file.path)).unwrap();
            (file.path, bytes)
        })
        .collect()
}

/// Reads everything a plan reads; the answer only has to be an answer.
fn read_all(
    location: &str,
    metadata: &[u8],
    files: &[(String, Vec<u8>)],
) -> Result<(), CleanupError> {
    let snapshot = Snapshot::read(location, metadata)?;
    let files: Vec<StateFile<'_>> = files
        .iter()
        .map(|(path, bytes)| StateFile { path, bytes })
        .collect();
    let summary = snapshot.summary(&files)?;
    for operator in summary.iter().filter(|op| op.markers.is_some()) {
        let _ = snapshot.plan(location, &OperatorRef::UidHash(operator.id.clone()), &files);
    }
    Ok(())
}

fn assert_names_file_and_offset(error: &CleanupError, file: &str, len: usize) {
    let message = error.to_string();
    if let CleanupError::InvalidSnapshot(_) = error {
        assert!(message.contains(file), "{message} does not name {file}");
        let offset: usize = message
            .split(" at byte ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no byte offset in {message}"));
        assert!(offset <= len, "{message}: offset beyond the {len} bytes");
    }
}

#[test]
fn every_truncated_metadata_is_refused_naming_file_and_offset() {
    let snapshots = snapshots();
    assert!(!snapshots.is_empty(), "fixtures/snapshots holds snapshots");
    for dir in snapshots {
        let metadata = std::fs::read(dir.join("_metadata")).unwrap();
        let location = dir.display().to_string();
        let files = state_files(&dir, &metadata);
        for cut in 0..metadata.len() {
            // Everything up to the last operator is needed; the trailing Java-serialized
            // checkpoint properties are not read, so cuts inside them may still answer.
            match Snapshot::read(&location, &metadata[..cut]) {
                Ok(_) => {}
                Err(error) => {
                    assert!(matches!(error, CleanupError::InvalidSnapshot(_)), "{error}");
                    assert_names_file_and_offset(&error, "_metadata", cut);
                }
            }
            if cut % 16 == 0 {
                let _ = read_all(&location, &metadata[..cut], &files);
            }
        }
        assert!(
            Snapshot::read(&location, &metadata[..metadata.len() / 2]).is_err(),
            "{location}: half a _metadata is refused"
        );
    }
}

#[test]
fn flipped_bits_in_metadata_and_state_files_never_panic() {
    for dir in snapshots() {
        let metadata = std::fs::read(dir.join("_metadata")).unwrap();
        let location = dir.display().to_string();
        let files = state_files(&dir, &metadata);
        let mut corrupt = metadata.clone();
        // A refusal names `_metadata` or a state file a corrupted handle points into (a merged
        // file's segment starts deep inside it): its offset lies within the longest of them.
        let longest = files
            .iter()
            .map(|(_, bytes)| bytes.len())
            .chain([corrupt.len()])
            .max()
            .unwrap_or(0);
        // Every third byte, the low or the high bit by turns (a debug build runs this in CI).
        for at in (0..corrupt.len()).step_by(3) {
            let bit = if at % 2 == 0 { 0x01u8 } else { 0x80 };
            corrupt[at] ^= bit;
            if let Err(error) = read_all(&location, &corrupt, &files) {
                assert_names_file_and_offset(&error, &location, longest);
            }
            corrupt[at] ^= bit;
        }
        for index in 0..files.len() {
            let mut files = files.clone();
            let len = files[index].1.len();
            // State files can be large: every 5th byte of the first 4 KiB, then every 211th.
            let positions = (0..len).filter(|at| (*at < 4096 && at % 5 == 0) || at % 211 == 0);
            for at in positions {
                files[index].1[at] ^= 0x40;
                let _ = read_all(&location, &metadata, &files);
                files[index].1[at] ^= 0x40;
            }
            for cut in (0..len).step_by(len / 32 + 1) {
                let mut cut_files = files.clone();
                cut_files[index].1.truncate(cut);
                let _ = read_all(&location, &metadata, &cut_files);
            }
        }
    }
}

/// Where operator entries start in `metadata`, in file order: an entry is its name and uid
/// (format version 5 and later, `writeUTF`, ASCII in the fixtures), then its 16-byte ID.
fn entry_starts(metadata: &[u8], version: i32, operators: &[OperatorState<'_>]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    for operator in operators {
        let id_at = from
            + metadata[from..]
                .windows(16)
                .position(|window| window == operator.id)
                .unwrap();
        let text_len = |text: &Option<String>| 2 + text.as_ref().map_or(0, String::len);
        let start = if version >= 5 {
            id_at - text_len(&operator.name) - text_len(&operator.uid)
        } else {
            id_at
        };
        starts.push(start);
        from = id_at + 16;
    }
    starts
}

/// `metadata` with a copy of operator `index`'s entry added after the last operator and the
/// operator count raised, as a hand edit or a corrupt writer could leave it; `id` replaces the
/// copy's OperatorID when given.
fn with_operator_copied(
    location: &str,
    metadata: &[u8],
    index: usize,
    id: Option<[u8; 16]>,
) -> Vec<u8> {
    let snapshot = Snapshot::read(location, metadata).unwrap();
    let operators = &snapshot.metadata.operators;
    let starts = entry_starts(metadata, snapshot.metadata.version, operators);
    // The checkpoint properties after the last operator are not read, so the shortest prefix
    // that still reads ends where the last operator does.
    let end = (0..=metadata.len())
        .find(|&cut| Snapshot::read(location, &metadata[..cut]).is_ok())
        .unwrap();
    let entry_end = starts.get(index + 1).copied().unwrap_or(end);
    let mut entry = metadata[starts[index]..entry_end].to_vec();
    if let Some(id) = id {
        let id_at = entry
            .windows(16)
            .position(|window| window == operators[index].id)
            .unwrap();
        entry[id_at..id_at + 16].copy_from_slice(&id);
    }
    let count_at = starts[0] - 4;
    let count = i32::from_be_bytes(metadata[count_at..starts[0]].try_into().unwrap());
    assert_eq!(
        count as usize,
        operators.len(),
        "{location}: the operator count"
    );
    let mut edited = [&metadata[..end], &entry, &metadata[end..]].concat();
    edited[count_at..starts[0]].copy_from_slice(&(count + 1).to_be_bytes());
    edited
}

/// Flink restores the last of two entries with one OperatorID (it keys operators by ID), so a
/// plan from the first could bind a boundary the restore of the same snapshot then breaks.
#[test]
fn a_metadata_that_lists_the_marker_operator_twice_is_refused_naming_it() {
    let mut doubled = 0;
    for dir in snapshots() {
        let metadata = std::fs::read(dir.join("_metadata")).unwrap();
        let location = dir.display().to_string();
        let snapshot = Snapshot::read(&location, &metadata).unwrap();
        let operators = &snapshot.metadata.operators;
        let Some(index) = operators.iter().position(|operator| {
            operator.subtasks.iter().any(|subtask| {
                let handles = subtask.managed_operator_state.iter();
                handles
                    .flat_map(|h| &h.states)
                    .any(|state| state.name == MARKER_STATE)
            })
        }) else {
            continue;
        };
        let id_hex = operators[index].id_hex();

        // The same edit under an unused ID reads: the copy is a well-formed entry.
        let unused = [0xa5; 16];
        let distinct = with_operator_copied(&location, &metadata, index, Some(unused));
        let read = Snapshot::read(&location, &distinct).unwrap();
        assert_eq!(
            read.metadata.operators.len(),
            operators.len() + 1,
            "{location}"
        );

        let twice = with_operator_copied(&location, &metadata, index, None);
        let Err(error) = Snapshot::read(&location, &twice) else {
            panic!("{location}: a _metadata that lists operator {id_hex} twice was read");
        };
        let message = error.to_string();
        assert!(
            matches!(error, CleanupError::InvalidSnapshot(_)),
            "{message}"
        );
        assert!(message.contains(&id_hex), "{location}: {message}");
        assert_names_file_and_offset(&error, &location, twice.len());
        doubled += 1;
    }
    assert!(doubled >= 2, "both Flink lines hold snapshots with markers");
}
