//! The `plans` export. This file is shared with the cleanup component (included there with
//! `#[path]`): both generate the same binding module paths from the same WIT package.

use crate::Component;
use crate::bindings::action_state::cleanup::types::{
    CleanupError, ControlEntry, ControlRecord, PartitionOffset, Plan, RecoveryMarker,
    VersionedMarker,
};
use crate::bindings::exports::action_state::cleanup::plans::{
    Guest, MarkerFile, MarkerFilesPlan, MarkerSource, OperatorRef, OperatorStateInfo,
    PartitionAdvance, SnapshotFile, SnapshotFileRef, SnapshotOperator, SnapshotSummary,
    StoredMarker,
};
use crate::convert::{checked_offsets, from_offsets, to_offsets};

impl Guest for Component {
    fn compute_plan(
        recovery_point: String,
        source: MarkerSource,
    ) -> Result<MarkerFilesPlan, CleanupError> {
        let (plan, markers) = match source {
            MarkerSource::Texts(texts) => {
                let mut planner = action_state_format::planning::MarkerPlanner::new();
                for text in &texts {
                    planner.add(text);
                }
                planner.finish(&recovery_point)?
            }
            MarkerSource::Files(files) => {
                let files: Vec<(&str, &str)> = files
                    .iter()
                    .map(|f| (f.name.as_str(), f.text.as_str()))
                    .collect();
                return Ok(files_plan(action_state_format::plan_from_marker_files(
                    &recovery_point,
                    &files,
                )?));
            }
            MarkerSource::Snapshot(source) => {
                let snapshot = action_state_format::snapshot::Snapshot::read(
                    &recovery_point,
                    &source.metadata,
                )?;
                let files = state_files(&source.files);
                snapshot.plan(&recovery_point, &operator_ref(source.operator), &files)?
            }
        };
        Ok(MarkerFilesPlan {
            plan: plan.into(),
            markers: u32::try_from(markers).unwrap_or(u32::MAX),
        })
    }

    fn snapshot_files(
        location: String,
        metadata: Vec<u8>,
        operator: Option<OperatorRef>,
    ) -> Result<Vec<SnapshotFileRef>, CleanupError> {
        let snapshot = action_state_format::snapshot::Snapshot::read(&location, &metadata)?;
        let files = match operator {
            Some(operator) => snapshot.marker_files(&operator_ref(operator))?,
            None => snapshot.all_marker_files()?,
        };
        Ok(files
            .into_iter()
            .map(|f| SnapshotFileRef {
                path: f.path,
                written: f.written,
            })
            .collect())
    }

    fn operator_id(operator: OperatorRef) -> Result<String, CleanupError> {
        Ok(operator_ref(operator).id_hex()?)
    }

    fn inspect_snapshot(
        location: String,
        metadata: Vec<u8>,
        files: Vec<SnapshotFile>,
    ) -> Result<SnapshotSummary, CleanupError> {
        let snapshot = action_state_format::snapshot::Snapshot::read(&location, &metadata)?;
        let operators = snapshot.summary(&state_files(&files))?;
        Ok(SnapshotSummary {
            format_version: snapshot.metadata.version,
            checkpoint_id: snapshot.metadata.checkpoint_id,
            operators: operators.into_iter().map(snapshot_operator).collect(),
        })
    }

    fn verify_plan(plan_json: String) -> Result<Plan, CleanupError> {
        // The offsets stay a list from the text to the WIT plan (no map built and dropped).
        Ok(action_state_format::Plan::parse_listed(&plan_json)?.into())
    }

    fn render_plan(p: Plan) -> String {
        // Rendering is a pure writer: it does not validate (seal-plan and verify-plan do).
        crate::convert::plan_unchecked(p).render_pretty()
    }

    fn plan_from_markers(
        recovery_point: String,
        markers: Vec<String>,
    ) -> Result<Plan, CleanupError> {
        Ok(action_state_format::plan_from_marker_texts(&recovery_point, &markers)?.into())
    }

    fn plan_from_marker_files(
        recovery_point: String,
        files: Vec<MarkerFile>,
    ) -> Result<MarkerFilesPlan, CleanupError> {
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|f| (f.name.as_str(), f.text.as_str()))
            .collect();
        Ok(files_plan(action_state_format::plan_from_marker_files(
            &recovery_point,
            &files,
        )?))
    }

    fn seal_plan(
        source_recovery_point: String,
        topic: String,
        topic_id: String,
        offsets: Vec<PartitionOffset>,
    ) -> Result<Plan, CleanupError> {
        let offsets = checked_offsets(
            &offsets,
            "Cleanup plan",
            action_state_format::CleanupError::InvalidPlan,
        )?;
        Ok(
            action_state_format::Plan::new(&source_recovery_point, &topic, &topic_id, offsets)?
                .into(),
        )
    }

    fn parse_marker(marker_json: String) -> Result<RecoveryMarker, CleanupError> {
        Ok(action_state_format::Marker::parse(&marker_json)?.into())
    }

    fn split_markers(text: String) -> Result<Vec<String>, CleanupError> {
        Ok(action_state_format::split_marker_file(&text)?)
    }

    fn split_marker_file(name: String, text: String) -> Result<Vec<String>, CleanupError> {
        Ok(action_state_format::split_named_marker_file(&name, &text)?)
    }

    fn render_marker(m: VersionedMarker) -> String {
        action_state_format::Marker::Versioned(action_state_format::VersionedMarker {
            topic: m.topic,
            topic_id: m.topic_id,
            offsets: to_offsets(&m.offsets),
        })
        .render()
    }

    fn parse_control_record(
        key: Option<String>,
        value: Option<String>,
    ) -> Result<ControlRecord, CleanupError> {
        let mut history = action_state_format::ControlHistory::default();
        history.observe(&action_state_format::ControlEntry {
            offset: 0,
            key,
            value,
            timestamp: None,
        })?;
        let record = history.operations().first().cloned().ok_or_else(|| {
            action_state_format::CleanupError::ControlTopicCorrupt(
                "Cleanup control record was not kept".into(),
            )
        })?;
        Ok(record.into())
    }

    fn render_control_record(r: ControlRecord) -> String {
        action_state_format::control::render_value(
            r.status.into(),
            &crate::convert::plan_unchecked(r.plan),
        )
    }

    fn replay_control_log(entries: Vec<ControlEntry>) -> Result<Vec<ControlRecord>, CleanupError> {
        let entries: Vec<action_state_format::ControlEntry> =
            entries.into_iter().map(Into::into).collect();
        let history = action_state_format::ControlHistory::replay(&entries)?;
        Ok(history
            .operations()
            .iter()
            .cloned()
            .map(Into::into)
            .collect())
    }

    fn effective_boundary(plans: Vec<Plan>) -> Result<Vec<PartitionOffset>, CleanupError> {
        let offsets = plans
            .iter()
            .enumerate()
            .map(|(index, p)| {
                let subject = format!("Cleanup plan at position {}", index + 1);
                checked_offsets(
                    &p.offsets,
                    &subject,
                    action_state_format::CleanupError::InvalidPlan,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(from_offsets(
            &action_state_format::boundary::effective_boundary(&offsets),
        ))
    }

    fn check_advance(
        p: Plan,
        boundary: Vec<PartitionOffset>,
    ) -> Result<Vec<PartitionAdvance>, CleanupError> {
        let offsets = checked_offsets(
            &p.offsets,
            "Cleanup plan",
            action_state_format::CleanupError::InvalidPlan,
        )?;
        let plan = action_state_format::PlanFields {
            offsets,
            ..crate::convert::plan_unchecked(p)
        };
        let boundary = checked_offsets(
            &boundary,
            "Cleanup boundary",
            action_state_format::CleanupError::InvalidArgument,
        )?;
        action_state_format::boundary::check_advances(&plan, &boundary)?;
        Ok(
            action_state_format::boundary::advance_table(&plan, &boundary)
                .into_iter()
                .map(|(partition, from, to)| PartitionAdvance {
                    partition,
                    from,
                    to,
                })
                .collect(),
        )
    }

    fn message(error: CleanupError) -> String {
        action_state_format::CleanupError::from(error).to_string()
    }
}

pub fn files_plan((plan, markers): (action_state_format::Plan, usize)) -> MarkerFilesPlan {
    MarkerFilesPlan {
        plan: plan.into(),
        markers: u32::try_from(markers).unwrap_or(u32::MAX),
    }
}

pub fn operator_ref(operator: OperatorRef) -> action_state_format::snapshot::OperatorRef {
    match operator {
        OperatorRef::Uid(uid) => action_state_format::snapshot::OperatorRef::Uid(uid),
        OperatorRef::UidHash(hash) => action_state_format::snapshot::OperatorRef::UidHash(hash),
    }
}

pub fn state_files(files: &[SnapshotFile]) -> Vec<action_state_format::snapshot::StateFile<'_>> {
    files
        .iter()
        .map(|f| action_state_format::snapshot::StateFile {
            path: &f.path,
            bytes: &f.bytes,
        })
        .collect()
}

pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

pub fn snapshot_operator(op: action_state_format::snapshot::OperatorSummary) -> SnapshotOperator {
    SnapshotOperator {
        id: op.id,
        uid: op.uid,
        name: op.name,
        parallelism: op.parallelism,
        max_parallelism: op.max_parallelism,
        subtasks: count(op.subtasks),
        finished_subtasks: count(op.finished_subtasks),
        operator_states: op
            .states
            .into_iter()
            .map(|s| OperatorStateInfo {
                name: s.name,
                distribution: s.distribution.to_owned(),
                elements: count(s.elements),
            })
            .collect(),
        keyed_state: op.keyed_state,
        channel_state: op.channel_state,
        coordinator_state: op.coordinator_state,
        markers: op
            .markers
            .map(|markers| markers.into_iter().map(stored_marker).collect()),
    }
}

fn stored_marker(marker: action_state_format::snapshot::StoredMarker) -> StoredMarker {
    use action_state_format::snapshot::kryo::{Element, HASH_MAP_CLASS, MARKER_CLASS};
    let offsets = |entries: &[(i32, i64)]| -> Vec<PartitionOffset> {
        entries
            .iter()
            .filter_map(|&(p, o)| {
                Some(PartitionOffset {
                    partition: u32::try_from(p).ok()?,
                    offset: u64::try_from(o).ok()?,
                })
            })
            .collect()
    };
    let empty = |class: &str| StoredMarker {
        subtask: marker.subtask,
        class: class.to_owned(),
        schema_version: None,
        topic: None,
        topic_id: None,
        offsets: Vec::new(),
    };
    match marker.element_value {
        Element::Versioned {
            schema_version,
            topic,
            topic_id,
            offsets: entries,
        } => StoredMarker {
            subtask: marker.subtask,
            class: MARKER_CLASS.to_owned(),
            schema_version: Some(schema_version),
            topic,
            topic_id,
            offsets: entries.as_deref().map(offsets).unwrap_or_default(),
        },
        Element::Legacy(entries) => StoredMarker {
            offsets: offsets(&entries),
            ..empty(HASH_MAP_CLASS)
        },
        Element::Null => empty("null"),
        Element::Other(class) => empty(&class),
    }
}
