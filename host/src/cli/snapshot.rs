//! Flink checkpoints and savepoints on disk: `plan --checkpoint` and `snapshot`. The component
//! reads `_metadata` and names the state files it needs; this module only reads bytes.

use std::path::{Path, PathBuf};

use action_state_cleanup::cleanup::{
    CleanupInstance, MarkerFilesPlan, MarkerSource, OperatorRef, SnapshotFile, SnapshotSource,
    SnapshotSummary,
};

use super::args::CheckpointArgs;
use super::failure::Failure;
use super::session::answer;

/// A snapshot as the operator named it: `location` exactly as given (it becomes the plan's
/// `sourceRecoveryPoint`, as in the Java tool), its directory and `_metadata` bytes.
pub struct SnapshotOnDisk {
    pub location: String,
    directory: PathBuf,
    pub metadata: Vec<u8>,
}

/// The largest `_metadata` or state file read: far above any marker state, far below memory.
const MAX_FILE_BYTES: u64 = 1 << 30;

impl SnapshotOnDisk {
    /// `path` is the snapshot directory or its `_metadata` file.
    pub fn open(path: &Path) -> Result<Self, Failure> {
        let location = path.to_string_lossy().into_owned();
        let (directory, metadata_path) = if path.is_dir() {
            (path.to_path_buf(), path.join("_metadata"))
        } else {
            let directory = path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            (directory, path.to_path_buf())
        };
        if !metadata_path.is_file() {
            return Err(Failure::refused(format!(
                "{} is not a Flink checkpoint or savepoint: {} does not exist (give the snapshot directory or its _metadata file)",
                path.display(),
                metadata_path.display()
            )));
        }
        let metadata = read_file(&metadata_path)?;
        Ok(SnapshotOnDisk {
            location,
            directory,
            metadata,
        })
    }

    /// Reads the state files the component asks for (`None`: those of every marker operator).
    pub fn files(
        &self,
        instance: &mut CleanupInstance,
        operator: Option<&OperatorRef>,
    ) -> Result<Vec<SnapshotFile>, Failure> {
        let needed = instance.snapshot_files(&self.location, &self.metadata, operator);
        let needed = answer(instance, needed)?;
        needed
            .into_iter()
            .map(|file| {
                let path = if file.path.starts_with('/') {
                    PathBuf::from(&file.path)
                } else {
                    self.directory.join(&file.path)
                };
                let bytes = read_file(&path).map_err(|mut failure| {
                    failure.message = format!(
                        "snapshot {} keeps markers in {} (recorded as {}): {}",
                        self.location,
                        path.display(),
                        file.written,
                        failure.message
                    );
                    failure
                })?;
                Ok(SnapshotFile {
                    path: file.path,
                    bytes,
                })
            })
            .collect()
    }

    /// The plan of `operator`'s markers.
    pub fn plan(
        &self,
        instance: &mut CleanupInstance,
        operator: OperatorRef,
    ) -> Result<MarkerFilesPlan, Failure> {
        let files = self.files(instance, Some(&operator))?;
        let source = MarkerSource::Snapshot(SnapshotSource {
            metadata: self.metadata.clone(),
            operator,
            files,
        });
        let planned = instance.plan(&self.location, &source);
        answer(instance, planned)
    }

    /// `operator`'s markers as marker texts (versioned or legacy), for the recovery check: a
    /// restore is decided from the markers the job would restore, whatever they are.
    pub fn marker_texts(
        &self,
        instance: &mut CleanupInstance,
        operator: OperatorRef,
    ) -> Result<Vec<String>, Failure> {
        let summary = self.inspect(instance)?;
        // Refuses an operator that is not there, naming those that are.
        let needed = instance.snapshot_files(&self.location, &self.metadata, Some(&operator));
        answer(instance, needed)?;
        let id = instance.operator_id(&operator);
        let id = answer(instance, id)?;
        let Some(op) = summary.operators.iter().find(|op| op.id == id) else {
            return Err(Failure::refused(format!(
                "snapshot {} has no operator {id}",
                self.location
            )));
        };
        let markers = op.markers.as_ref().ok_or_else(|| {
            Failure::refused(format!(
                "operator {id} in snapshot {} keeps no recoveryMarker state",
                self.location
            ))
        })?;
        markers
            .iter()
            .map(|m| marker_text(m).ok_or_else(|| {
                Failure::refused(format!(
                    "snapshot {}: subtask {} stored a {} as its recovery marker, which no runtime can restore from",
                    self.location, m.subtask, m.class
                ))
            }))
            .collect()
    }

    /// Every operator, with the markers of those that keep them.
    pub fn inspect(&self, instance: &mut CleanupInstance) -> Result<SnapshotSummary, Failure> {
        let files = self.files(instance, None)?;
        let summary = instance.inspect_snapshot(&self.location, &self.metadata, &files);
        answer(instance, summary)
    }
}

fn read_file(path: &Path) -> Result<Vec<u8>, Failure> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| Failure::refused(format!("cannot read {}: {e}", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::failed(format!("cannot read {}: {e}", path.display())))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Failure::refused(format!(
            "{} is larger than {MAX_FILE_BYTES} bytes, more than any snapshot file this tool reads",
            path.display()
        )));
    }
    Ok(bytes)
}

/// The snapshot and operator that `--checkpoint` and `--operator-uid(-hash)` name, if any.
pub fn selected(args: &CheckpointArgs) -> Result<Option<(SnapshotOnDisk, OperatorRef)>, Failure> {
    let Some(checkpoint) = &args.checkpoint else {
        if args.operator_uid.is_some() || args.operator_uid_hash.is_some() {
            return Err(Failure::usage(
                "--operator-uid and --operator-uid-hash select the operator of a snapshot: give --checkpoint (or, for plan, --retained) too",
            ));
        }
        return Ok(None);
    };
    Ok(Some((
        SnapshotOnDisk::open(checkpoint)?,
        operator(args, "--checkpoint")?,
    )))
}

/// The operator `--operator-uid` or `--operator-uid-hash` names (exactly one is needed with
/// `with`, the option that reads snapshots).
pub fn operator(args: &CheckpointArgs, with: &str) -> Result<OperatorRef, Failure> {
    match (&args.operator_uid, &args.operator_uid_hash) {
        (Some(uid), None) => Ok(OperatorRef::Uid(uid.clone())),
        (None, Some(hash)) => Ok(OperatorRef::UidHash(hash.clone())),
        _ => Err(Failure::usage(format!(
            "Exactly one of --operator-uid or --operator-uid-hash is required with {with}"
        ))),
    }
}

/// `snapshot --json`: the component's summary as one object.
pub fn summary_json(location: &str, summary: &SnapshotSummary) -> serde_json::Value {
    use serde_json::json;
    let operators: Vec<serde_json::Value> = summary
        .operators
        .iter()
        .map(|op| {
            json!({
                "id": op.id,
                "uid": op.uid,
                "name": op.name,
                "parallelism": op.parallelism,
                "maxParallelism": op.max_parallelism,
                "subtasks": op.subtasks,
                "finishedSubtasks": op.finished_subtasks,
                "operatorStates": op.operator_states.iter().map(|s| json!({
                    "name": s.name, "distribution": s.distribution, "elements": s.elements,
                })).collect::<Vec<_>>(),
                "keyedState": op.keyed_state,
                "channelState": op.channel_state,
                "coordinatorState": op.coordinator_state,
                "markers": op.markers.as_ref().map(|markers| markers.iter().map(|m| json!({
                    "subtask": m.subtask,
                    "class": m.class,
                    "schemaVersion": m.schema_version,
                    "topic": m.topic,
                    "topicId": m.topic_id,
                    "offsets": super::output::offsets_json(&m.offsets),
                })).collect::<Vec<_>>()),
            })
        })
        .collect();
    json!({
        "snapshot": location,
        "formatVersion": summary.format_version,
        "checkpointId": summary.checkpoint_id,
        "operators": operators,
    })
}

/// What the snapshot is, as far as its path says (its `_metadata` does not: a savepoint carries
/// a checkpoint ID too, from the same counter): "checkpoint 12" for Flink's `chk-12`
/// directories, "savepoint (checkpoint ID 3)" for `savepoint-…` ones, else the ID alone.
fn snapshot_kind(location: &str, checkpoint_id: u64) -> String {
    // The innermost directory that says what it is decides (`…/savepoint-1a2b3c-…/` or
    // `…/<job id>/chk-12/`).
    let named = std::path::Path::new(location)
        .components()
        .rev()
        .filter_map(|c| c.as_os_str().to_str())
        .find_map(|name| {
            if name.starts_with("savepoint-") {
                Some(true)
            } else if name.starts_with("chk-") {
                Some(false)
            } else {
                None
            }
        });
    match named {
        Some(true) => format!("savepoint (checkpoint ID {checkpoint_id})"),
        Some(false) => format!("checkpoint {checkpoint_id}"),
        None => format!("checkpoint ID {checkpoint_id}"),
    }
}

/// `snapshot` for a person: one block per operator, markers summarised.
pub fn summary_text(location: &str, summary: &SnapshotSummary) -> String {
    let mut out = format!(
        "snapshot {location}: {}, _metadata format version {} ({} operators)\n",
        snapshot_kind(location, summary.checkpoint_id),
        summary.format_version,
        summary.operators.len()
    );
    for op in &summary.operators {
        out.push_str(&format!("\noperator {}", op.id));
        if let Some(uid) = &op.uid {
            out.push_str(&format!("  uid {uid}"));
        }
        if let Some(name) = &op.name {
            out.push_str(&format!("  name {name:?}"));
        }
        out.push_str(&format!(
            "\n  parallelism {} (max {}), {} subtask states",
            op.parallelism, op.max_parallelism, op.subtasks
        ));
        if op.finished_subtasks > 0 {
            out.push_str(&format!(", {} finished", op.finished_subtasks));
        }
        out.push('\n');
        for state in &op.operator_states {
            out.push_str(&format!(
                "  operator state {} ({}, {} elements)\n",
                state.name, state.distribution, state.elements
            ));
        }
        let mut kinds = Vec::new();
        if op.keyed_state {
            kinds.push("keyed state");
        }
        if op.channel_state {
            kinds.push("channel state (in-flight data)");
        }
        if op.coordinator_state {
            kinds.push("coordinator state");
        }
        if !kinds.is_empty() {
            out.push_str(&format!("  also: {}\n", kinds.join(", ")));
        }
        if let Some(markers) = &op.markers {
            for m in markers {
                match (&m.topic, &m.topic_id, m.schema_version) {
                    (Some(topic), Some(id), Some(schema)) => {
                        let (low, high) = offset_range(&m.offsets);
                        out.push_str(&format!(
                            "  marker of subtask {}: schema {schema}, topic {topic} (ID {id}), {} partitions, offsets {low}..{high}\n",
                            m.subtask,
                            m.offsets.len()
                        ));
                    }
                    _ => out.push_str(&format!(
                        "  marker of subtask {}: {} ({} partitions)\n",
                        m.subtask,
                        m.class,
                        m.offsets.len()
                    )),
                }
            }
            if markers.is_empty() {
                out.push_str("  markers: none stored\n");
            }
        }
    }
    out
}

fn offset_range(offsets: &[action_state_cleanup::cleanup::PartitionOffset]) -> (u64, u64) {
    let low = offsets.iter().map(|p| p.offset).min().unwrap_or(0);
    let high = offsets.iter().map(|p| p.offset).max().unwrap_or(0);
    (low, high)
}

/// A stored marker in the marker JSON of SPEC §2 (versioned, or a legacy bare map).
fn marker_text(marker: &action_state_cleanup::cleanup::StoredMarker) -> Option<String> {
    let offsets: serde_json::Map<String, serde_json::Value> = marker
        .offsets
        .iter()
        .map(|po| (po.partition.to_string(), serde_json::Value::from(po.offset)))
        .collect();
    let value = match (&marker.topic, &marker.topic_id, marker.schema_version) {
        (Some(topic), Some(topic_id), Some(schema)) => serde_json::json!({
            "schemaVersion": schema, "topic": topic, "topicId": topic_id, "offsets": offsets,
        }),
        _ if marker.class == "java.util.HashMap" => serde_json::Value::Object(offsets),
        _ => return None,
    };
    Some(value.to_string())
}
