//! The `coordinator` export: apply and control-topic status.

use crate::Component;
use crate::bindings::action_state::cleanup::types::CleanupError;
use crate::bindings::exports::action_state::cleanup::coordinator::{
    ApplyFailure, ApplyOptions, ApplyOutcome, ApplyReport, ApplyWarning, BoundaryOrigin,
    ControlTopicReplication, Guest, LivePartition, PartitionPreview, PlanTimes, StatusReport,
};
use crate::convert::from_offsets;
use crate::imports::{HostObserver, host_kafka};

impl Guest for Component {
    fn apply(plan_json: String, options: ApplyOptions) -> Result<ApplyReport, ApplyFailure> {
        let plan = action_state_format::Plan::parse(&plan_json).map_err(|error| ApplyFailure {
            message: error.to_string(),
            class: error.class().into(),
            error: error.into(),
            status: None,
            commit_attempted: false,
            plan: None,
        })?;
        crate::bindings::action_state::cleanup::operator_events::verified(&plan.clone().into());
        let options = action_state_protocol::ApplyOptions {
            control_topic: options.control_topic,
            replication_factor: options.replication_factor,
            dry_run: options.dry_run,
            start_new_history: options.start_new_history,
        };
        let report = action_state_protocol::apply_with_status(
            &mut host_kafka(),
            &mut HostObserver,
            &plan,
            &options,
        )
        .map_err(|failure| ApplyFailure {
            message: failure.error.to_string(),
            class: failure.error.class().into(),
            error: failure.error.into(),
            status: failure.status.map(Into::into),
            commit_attempted: failure.commit_attempted,
            plan: Some(plan.clone().into()),
        })?;
        Ok(ApplyReport {
            plan_id: report.plan_id,
            outcome: match report.outcome {
                action_state_protocol::ApplyOutcome::Applied => ApplyOutcome::Applied,
                action_state_protocol::ApplyOutcome::Resumed => ApplyOutcome::Resumed,
                action_state_protocol::ApplyOutcome::AlreadyApplied => ApplyOutcome::AlreadyApplied,
                action_state_protocol::ApplyOutcome::DryRun => ApplyOutcome::DryRun,
                action_state_protocol::ApplyOutcome::Declined => ApplyOutcome::Declined,
            },
            status: report.status.map(Into::into),
            preview: report.preview.into_iter().map(Into::into).collect(),
            target: from_offsets(&report.target),
            beginnings_after: from_offsets(&report.beginnings_after),
            marked_applied: report.marked_applied,
            created_control_topic: report.created_control_topic.as_ref().map(Into::into),
            warnings: report.warnings.into_iter().map(warning).collect(),
        })
    }

    fn preview_plan(plan_json: String) -> Result<Vec<PartitionPreview>, CleanupError> {
        let plan = action_state_format::Plan::parse(&plan_json)?;
        let preview = action_state_protocol::preview::preview_plan(&mut host_kafka(), &plan)?;
        Ok(preview.into_iter().map(Into::into).collect())
    }

    fn control_status(control_topic: String) -> Result<StatusReport, CleanupError> {
        let report = action_state_protocol::status::status(&mut host_kafka(), &control_topic)?;
        Ok(StatusReport {
            control_topic: report.control_topic,
            operations: report.operations.into_iter().map(Into::into).collect(),
            times: report
                .times
                .into_iter()
                .map(|t| PlanTimes {
                    committed_at: t.committed_at,
                    applied_at: t.applied_at,
                })
                .collect(),
            boundary: from_offsets(&report.boundary),
            boundary_origins: report
                .boundary_origins
                .into_iter()
                .map(|(partition, plan_id)| BoundaryOrigin { partition, plan_id })
                .collect(),
            topic: report.topic,
            topic_id: report.topic_id,
            live_topic_id: report.live_topic_id,
            live: report
                .live
                .into_iter()
                .map(|l| LivePartition {
                    partition: l.partition,
                    beginning: l.beginning,
                    end: l.end,
                    boundary: l.boundary,
                })
                .collect(),
            broken_history: report.broken_history,
        })
    }
}

fn warning(warning: action_state_protocol::replication::ApplyWarning) -> ApplyWarning {
    match warning {
        action_state_protocol::replication::ApplyWarning::UnderReplicatedControlTopic(w) => {
            ApplyWarning::UnderReplicatedControlTopic(ControlTopicReplication {
                control_topic: w.control_topic,
                replication_factor: w.replication_factor,
                recommended_replication_factor: w.recommended.replication_factor,
                recommended_min_insync_replicas: w.recommended.min_insync_replicas,
                broker_count: w.broker_count,
                cluster_default_replication_factor: w.cluster_default_replication_factor,
                reassignment: w.reassignment,
                message: w.message,
            })
        }
        action_state_protocol::replication::ApplyWarning::ReplicationUnchecked(message) => {
            ApplyWarning::ReplicationUnchecked(message)
        }
    }
}
