//! Flink checkpoints and savepoints, wherever they are kept: `plan --checkpoint`, `snapshot`
//! and `check-recovery --checkpoint`. The component reads them through the `snapshot-store`
//! import (local files and the object stores, `crate::stores`) and decides which files it needs.

use action_state_cleanup::cleanup::{
    CleanupInstance, OperatorRef, SnapshotFailure, SnapshotPlan, SnapshotStoreError,
    SnapshotSummary, StoreFailure,
};

use super::args::CheckpointArgs;
use super::failure::{FAILED, Failure, REFUSED};
use super::session::answer;

/// A snapshot as the operator named it: a directory or `_metadata` path, or a store URI
/// (`s3://…`). The location exactly as given becomes the plan's `sourceRecoveryPoint`, as in
/// the Java tool, unless `--recovery-point` names where the job will restore it from.
pub struct SnapshotAt {
    pub location: String,
}

impl SnapshotAt {
    pub fn new(location: impl Into<String>) -> Self {
        SnapshotAt {
            location: location.into(),
        }
    }

    /// The plan of `operator`'s markers, with what reading the snapshot cost.
    pub fn plan(
        &self,
        instance: &mut CleanupInstance,
        operator: &OperatorRef,
        recovery_point: Option<&str>,
    ) -> Result<SnapshotPlan, Failure> {
        let planned = instance.plan_snapshot(&self.location, recovery_point, operator);
        stored(instance, planned)
    }

    /// Every operator, with the markers of those that keep them.
    pub fn inspect(&self, instance: &mut CleanupInstance) -> Result<SnapshotSummary, Failure> {
        let summary = instance.inspect_stored_snapshot(&self.location);
        stored(instance, summary)
    }
}

/// A snapshot answer as a command result: a refused snapshot in the component's words (exit
/// 3), a store that did not give a file as the component said it (exit 3 when the file or
/// scheme is not there, 4 when the store could not be read).
pub fn stored<T>(
    instance: &mut CleanupInstance,
    result: wasmtime::Result<Result<T, SnapshotFailure>>,
) -> Result<T, Failure> {
    match result {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(SnapshotFailure::Refused(error))) => answer(instance, Ok(Err(error))),
        Ok(Err(SnapshotFailure::Store(failure))) => Err(store_failure(failure)),
        Err(trap) => Err(Failure::internal(&trap)),
    }
}

/// A store that did not give a file, as the component said it: exit 3 when the file or scheme
/// is not there, 4 when the store could not be read, with where credentials and endpoints come
/// from.
pub fn store_failure(failure: StoreFailure) -> Failure {
    let (code, kind, hint) = match &failure.error {
        SnapshotStoreError::NotFound(_) => (REFUSED, "refused", None),
        SnapshotStoreError::Unsupported(_) | SnapshotStoreError::TooLarge(_) => {
            (REFUSED, "refused", None)
        }
        SnapshotStoreError::Denied(_) => (
            FAILED,
            "snapshot-store",
            Some(
                "give the CLI the credentials the job's Flink uses: the cloud's environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT_KEY…) or Flink's configuration (--flink-config or FLINK_CONF_DIR)",
            ),
        ),
        SnapshotStoreError::Unreachable(_) => (
            FAILED,
            "snapshot-store",
            Some(
                "check the store's endpoint (AWS_ENDPOINT_URL or s3.endpoint in Flink's configuration; the NameNode of an hdfs:// URI) and that it is reachable from here",
            ),
        ),
        SnapshotStoreError::Failed(_) => (FAILED, "snapshot-store", None),
    };
    Failure {
        code,
        kind,
        message: failure.message,
        hint: hint.map(str::to_owned),
        violations: None,
    }
}

/// Reads snapshots with Flink's configuration at `flink_config` when the operator named one.
pub fn use_flink_config(
    instance: &mut CleanupInstance,
    flink_config: Option<&std::path::Path>,
) -> Result<(), Failure> {
    if let Some(path) = flink_config {
        if !path.exists() {
            return Err(Failure::usage(format!(
                "--flink-config {}: no such file or directory (give Flink's config.yaml or flink-conf.yaml, or its conf directory)",
                path.display()
            )));
        }
        instance.use_snapshot_stores(
            action_state_cleanup::stores::SnapshotStores::with_flink_config(path.to_path_buf()),
        );
    }
    Ok(())
}

/// The snapshot and operator that `--checkpoint` and `--operator-uid(-hash)` name, if any.
pub fn selected(args: &CheckpointArgs) -> Result<Option<(SnapshotAt, OperatorRef)>, Failure> {
    let Some(checkpoint) = &args.checkpoint else {
        if args.operator_uid.is_some() || args.operator_uid_hash.is_some() {
            return Err(Failure::usage(
                "--operator-uid and --operator-uid-hash select the operator of a snapshot: give --checkpoint (or, for plan, --retained) too",
            ));
        }
        return Ok(None);
    };
    Ok(Some((
        SnapshotAt::new(checkpoint.clone()),
        operator(args, "--checkpoint")?,
    )))
}

/// The operator `--operator-uid` or `--operator-uid-hash` names (exactly one is needed with
/// `with`, the option that reads snapshots).
pub fn operator(args: &CheckpointArgs, with: &str) -> Result<OperatorRef, Failure> {
    operator_named(&args.operator_uid, &args.operator_uid_hash, with)
}

/// The operator a uid or a uid hash names: exactly one of them is needed with `with`.
pub fn operator_named(
    uid: &Option<String>,
    hash: &Option<String>,
    with: &str,
) -> Result<OperatorRef, Failure> {
    match (uid, hash) {
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
