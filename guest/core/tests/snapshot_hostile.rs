//! Hostile snapshot input: every real Flink snapshot under `fixtures/snapshots`, truncated at
//! every byte and with single bits flipped, is either read or refused with an `invalid-snapshot`
//! (or marker) sentence that names the file and a byte offset inside it: never a panic, and
//! never an answer for a truncated `_metadata`.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test harness")]

use std::path::{Path, PathBuf};

use action_state_core::CleanupError;
use action_state_core::snapshot::{OperatorRef, Snapshot, StateFile};

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
        // Every third byte, the low or the high bit by turns (a debug build runs this in CI).
        for at in (0..corrupt.len()).step_by(3) {
            let bit = if at % 2 == 0 { 0x01u8 } else { 0x80 };
            corrupt[at] ^= bit;
            if let Err(error) = read_all(&location, &corrupt, &files) {
                assert_names_file_and_offset(&error, &location, corrupt.len());
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
