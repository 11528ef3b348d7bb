//! Local files: plain paths and `file:` URIs.

use std::io::{ErrorKind, Read};
use std::path::Path;

use super::StoreError;

pub fn read(path: &Path, location: &str, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
    let file = std::fs::File::open(path).map_err(|e| error(e, location))?;
    let size = file.metadata().map_err(|e| error(e, location))?;
    if size.is_dir() {
        // A directory is not the object asked for: the component then tries what is inside.
        return Err(StoreError::NotFound(format!("{location} is a directory")));
    }
    if size.len() > max_bytes {
        return Err(StoreError::TooLarge(size.len()));
    }
    let mut bytes = Vec::with_capacity(size.len() as usize);
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| error(e, location))?;
    if bytes.len() as u64 > max_bytes {
        return Err(StoreError::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

pub fn list(path: &Path, location: &str) -> Result<Vec<String>, StoreError> {
    let entries = std::fs::read_dir(path).map_err(|e| error(e, location))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| error(e, location))?;
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

fn error(e: std::io::Error, location: &str) -> StoreError {
    match e.kind() {
        ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::IsADirectory => {
            StoreError::NotFound(format!("{location}: {e}"))
        }
        ErrorKind::PermissionDenied => StoreError::Denied(format!("{location}: {e}")),
        _ => StoreError::Failed(format!("{location}: {e}")),
    }
}
