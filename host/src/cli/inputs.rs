//! Reading the operator's files: plan files and marker sources.

use std::fs;
use std::path::{Path, PathBuf};

use action_state_cleanup::cleanup::{CleanupInstance, MarkerFile};

use super::failure::Failure;
use super::session::answer;

/// Plans and marker sets are small; anything larger than this is not one of ours and is refused
/// before it reaches the guest's memory.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Reads a UTF-8 text file, refusing oversized or non-UTF-8 input with the path in the message.
pub fn read_text(path: &Path, what: &str) -> Result<String, Failure> {
    let metadata = fs::metadata(path)
        .map_err(|e| Failure::failed(format!("cannot read {what} {}: {e}", path.display())))?;
    if metadata.len() > MAX_INPUT_BYTES {
        return Err(Failure::refused(format!(
            "{what} {} is {} bytes, more than the {} bytes a {what} may have",
            path.display(),
            metadata.len(),
            MAX_INPUT_BYTES
        )));
    }
    let bytes = fs::read(path)
        .map_err(|e| Failure::failed(format!("cannot read {what} {}: {e}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| {
        Failure::refused(format!(
            "{what} {} is not UTF-8 text (invalid byte at position {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Reads marker sources, in a stable order: files as given, directories as their `*.json`
/// files sorted by name. Each file is named by its path.
pub fn marker_files(paths: &[PathBuf]) -> Result<Vec<MarkerFile>, Failure> {
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
            for file in found {
                files.push(marker_file(&file)?);
            }
        } else {
            files.push(marker_file(path)?);
        }
    }
    Ok(files)
}

fn marker_file(path: &Path) -> Result<MarkerFile, Failure> {
    Ok(MarkerFile {
        name: path.display().to_string(),
        text: read_text(path, "marker file")?,
    })
}

/// The marker texts of marker sources (see `marker_files`), each file split by the component
/// (`plans.split-markers`): a JSON array gives its elements, markers one per line give each.
pub fn load_markers(
    instance: &mut CleanupInstance,
    paths: &[PathBuf],
) -> Result<Vec<String>, Failure> {
    let mut markers = Vec::new();
    for file in marker_files(paths)? {
        let split = instance.split_markers(&file.text);
        markers.extend(answer(instance, split).map_err(|mut failure| {
            // The component's sentence names "Recovery marker file"; the host knows which one.
            if let Some(rest) = failure.message.strip_prefix("Recovery marker file ") {
                failure.message = format!("Recovery marker file {} {rest}", file.name);
            }
            failure
        })?);
    }
    Ok(markers)
}
