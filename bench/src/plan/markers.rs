//! The benchmark's marker files on disk: writing N subtask markers of N partitions each, and
//! reading them back in file-name order.

use std::path::{Path, PathBuf};

use action_state_format::marker::{Marker, VersionedMarker};
use action_state_format::offsets::PartitionOffsets;

use super::{Rng, TOPIC, TOPIC_ID};
use crate::{R, fail};

/// Writes `n` subtask markers of `n` partitions each, as a Flink job's checkpoint would hold
/// them: every subtask saw every partition, offsets in the millions to billions, subtasks a few
/// hundred thousand records apart. Returns the files' total size.
pub(super) fn write_markers(dir: &Path, n: usize) -> R<u64> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let mut rng = Rng(n as u64);
    let bases: Vec<u64> = (0..n)
        .map(|_| 5_000_000 + rng.next() % 2_000_000_000)
        .collect();
    let mut bytes = 0;
    for subtask in 0..n {
        let offsets: PartitionOffsets = (0..n)
            .map(|p| (p as u32, bases[p] + rng.next() % 500_000))
            .collect();
        let marker =
            VersionedMarker::new(TOPIC, TOPIC_ID, offsets).map_err(|e| fail(e.to_string()))?;
        let text = Marker::Versioned(marker).render();
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("subtask-{subtask:04}.json")), text)?;
    }
    Ok(bytes)
}

pub(super) fn read_markers(dir: &Path) -> R<Vec<String>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.sort();
    Ok(paths
        .iter()
        .map(std::fs::read_to_string)
        .collect::<Result<_, _>>()?)
}
