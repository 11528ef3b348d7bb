//! The `plans` export. This file is shared with the cleanup component (included there with
//! `#[path]`): both generate the same binding module paths from the same WIT package.

use action_state_core as core;

use crate::Component;
use crate::bindings::action_state::cleanup::types::{
    CleanupError, ControlEntry, ControlRecord, PartitionOffset, Plan, RecoveryMarker,
    VersionedMarker,
};
use crate::bindings::exports::action_state::cleanup::plans::{Guest, PartitionAdvance};
use crate::convert::{from_offsets, to_offsets};

impl Guest for Component {
    fn verify_plan(plan_json: String) -> Result<Plan, CleanupError> {
        Ok(core::Plan::parse(&plan_json)?.into())
    }

    fn render_plan(p: Plan) -> String {
        // Rendering is a pure writer: it does not validate (seal-plan and verify-plan do).
        core::Plan {
            plan_id: p.plan_id,
            source_recovery_point: p.source_recovery_point,
            topic: p.topic,
            topic_id: p.topic_id,
            offsets: to_offsets(&p.offsets),
        }
        .render_pretty()
    }

    fn plan_from_markers(
        recovery_point: String,
        markers: Vec<String>,
    ) -> Result<Plan, CleanupError> {
        Ok(core::plan_from_marker_texts(&recovery_point, &markers)?.into())
    }

    fn seal_plan(
        source_recovery_point: String,
        topic: String,
        topic_id: String,
        offsets: Vec<PartitionOffset>,
    ) -> Result<Plan, CleanupError> {
        let offsets = crate::convert::checked_offsets(&offsets, "Cleanup plan")?;
        Ok(core::Plan::new(&source_recovery_point, &topic, &topic_id, offsets)?.into())
    }

    fn parse_marker(marker_json: String) -> Result<RecoveryMarker, CleanupError> {
        Ok(core::Marker::parse(&marker_json)?.into())
    }

    fn render_marker(m: VersionedMarker) -> String {
        core::Marker::Versioned(core::VersionedMarker {
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
        let mut history = core::ControlHistory::default();
        history.observe(&core::ControlEntry {
            offset: 0,
            key,
            value,
        })?;
        let record = history.operations().first().cloned().ok_or_else(|| {
            core::CleanupError::ControlTopicCorrupt("Cleanup control record was not kept".into())
        })?;
        Ok(record.into())
    }

    fn render_control_record(r: ControlRecord) -> String {
        core::ControlRecord {
            status: r.status.into(),
            plan: crate::convert::plan_unchecked(r.plan),
        }
        .render()
    }

    fn replay_control_log(entries: Vec<ControlEntry>) -> Result<Vec<ControlRecord>, CleanupError> {
        let entries: Vec<core::ControlEntry> = entries.into_iter().map(Into::into).collect();
        let history = core::ControlHistory::replay(&entries)?;
        Ok(history
            .operations()
            .iter()
            .cloned()
            .map(Into::into)
            .collect())
    }

    fn effective_boundary(plans: Vec<Plan>) -> Vec<PartitionOffset> {
        let plans: Vec<core::Plan> = plans
            .into_iter()
            .map(crate::convert::plan_unchecked)
            .collect();
        from_offsets(&core::boundary::effective_boundary(&plans))
    }

    fn check_advance(
        p: Plan,
        boundary: Vec<PartitionOffset>,
    ) -> Result<Vec<PartitionAdvance>, CleanupError> {
        let plan = crate::convert::plan_unchecked(p);
        let boundary = to_offsets(&boundary);
        core::boundary::check_advances(&plan, &boundary)?;
        Ok(core::boundary::advance_table(&plan, &boundary)
            .into_iter()
            .map(|(partition, from, to)| PartitionAdvance {
                partition,
                from,
                to,
            })
            .collect())
    }

    fn message(error: CleanupError) -> String {
        core::CleanupError::from(error).to_string()
    }
}
