//! Reading the operator's files: plan files and marker sources.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use action_state_cleanup::cleanup::{CleanupInstance, MarkerFile, MarkerFilesPlan};

use super::failure::Failure;
use super::session::answer;

/// The path that names standard input.
pub const STDIN: &str = "-";

/// Plans and marker sets are small; anything larger than this is not one of ours and is refused
/// before it reaches the guest's memory.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads a UTF-8 text file, refusing oversized or non-UTF-8 input with the path in the message.
pub fn read_text(path: &Path, what: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    read_text_into(path, what, &mut bytes).map(str::to_owned)
}

/// `read_text` into `bytes` (replacing what it held, keeping its memory): for many files in a
/// row, so that each is read into memory the previous ones already used.
pub fn read_text_into<'a>(
    path: &Path,
    what: &str,
    bytes: &'a mut Vec<u8>,
) -> Result<&'a str, Failure> {
    let cannot_read =
        |e: std::io::Error| Failure::failed(format!("cannot read {what} {}: {e}", path.display()));
    bytes.clear();
    if path == Path::new(STDIN) {
        // `-`: the text comes from standard input (`… | action-state-cleanup verify --plan -`).
        std::io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(bytes)
            .map_err(cannot_read)?;
    } else {
        // A file that is not there (or not readable by us) is the operator's input, named
        // wrongly: refused like a malformed one, not reported as a failing cluster or disk.
        let mut file = fs::File::open(path)
            .map_err(|e| Failure::refused(format!("cannot read {what} {}: {e}", path.display())))?;
        let length = file.metadata().map_err(cannot_read)?.len();
        if length > MAX_INPUT_BYTES {
            return Err(Failure::refused(format!(
                "{what} {} is {length} bytes, more than the {MAX_INPUT_BYTES} bytes a {what} may have",
                path.display(),
            )));
        }
        // At most one byte past the limit: a file that grew since is refused, not read whole.
        (&mut file)
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(bytes)
            .map_err(cannot_read)?;
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Failure::refused(format!(
            "{what} {} is more than the {MAX_INPUT_BYTES} bytes a {what} may have",
            path.display(),
        )));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::refused(format!(
            "{what} {} is not UTF-8 text (invalid byte at position {})",
            path.display(),
            e.valid_up_to()
        ))
    })
}

/// How a marker source is named in messages.
fn source_name(path: &Path) -> String {
    if path == Path::new(STDIN) {
        "(standard input)".to_owned()
    } else {
        path.display().to_string()
    }
}

/// The files of marker sources, in a stable order: files as given, directories as their
/// `*.json` files sorted by name.
pub fn marker_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = fs::read_dir(path)
                .map_err(|e| {
                    Failure::failed(format!(
                        "cannot list marker directory {}: {e}",
                        path.display()
                    ))
                })?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|ext| ext == "json") && p.is_file())
                .collect();
            found.sort();
            if found.is_empty() {
                return Err(Failure::refused(format!(
                    "marker directory {} contains no *.json files",
                    path.display()
                )));
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// The plan of the markers of marker sources (see `marker_paths`), and how many markers they
/// held. Each file is read into the same buffer and handed to the component on its own
/// (`marker-files-planner`), which keeps only the running minimum: a fresh process touches
/// one file's worth of new memory on each side instead of every file's.
pub fn plan_marker_files(
    instance: &mut CleanupInstance,
    recovery_point: &str,
    paths: &[PathBuf],
) -> Result<MarkerFilesPlan, Failure> {
    let paths = marker_paths(paths)?;
    let planner = instance
        .start_marker_files(recovery_point)
        .map_err(|e| Failure::internal(&e))?;
    let mut bytes = Vec::new();
    for path in &paths {
        let text = read_text_into(path, "marker file", &mut bytes)?;
        let added = instance.add_marker_file(&planner, &source_name(path), text);
        answer(instance, added)?;
    }
    let planned = instance.finish_marker_files(planner);
    answer(instance, planned)
}

/// The files of marker sources (see `marker_paths`) as the component takes them: each named
/// as a refusal names it, its text whole (the component splits it).
pub fn marker_files(paths: &[PathBuf]) -> Result<Vec<MarkerFile>, Failure> {
    let mut bytes = Vec::new();
    marker_paths(paths)?
        .iter()
        .map(|path| {
            Ok(MarkerFile {
                name: source_name(path),
                text: read_text_into(path, "marker file", &mut bytes)?.to_owned(),
            })
        })
        .collect()
}
