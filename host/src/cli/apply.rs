//! `apply`: the commit-before-delete protocol, run by the component, with a preview the operator
//! sees before the point of no return.

use action_state_cleanup::cleanup::{
    ApplyOptions, ApplyOutcome, ApplyReport, CleanupError, NewControlTopic, OperatorEvents,
    PartitionPreview, Status,
};
use serde_json::json;

use super::args::ApplyArgs;
use super::failure::Failure;
use super::inputs::read_text;
use super::output::{offsets_json, offsets_text, print_json, table};
use super::session::{answer, instance, kafka_settings};

/// Prints the preview to stderr (stdout stays clean for `--json`).
struct PreviewPrinter;

impl OperatorEvents for PreviewPrinter {
    fn before_commit(
        &mut self,
        plan_id: &str,
        preview: &[PartitionPreview],
        created: Option<&NewControlTopic>,
    ) {
        errln!("{}", preview_text(plan_id, preview, created));
    }
}

/// The sentence that announces a control topic an apply creates (or, dry, would create).
pub fn creation_text(created: &NewControlTopic, dry_run: bool) -> String {
    format!(
        "{} control topic {} ({} partition, replication factor {}, min.insync.replicas {}, cleanup.policy=compact): a new cleanup history begins there.",
        if dry_run { "Would create" } else { "Created" },
        created.name,
        created.partitions,
        created.replication_factor,
        created.min_insync_replicas
    )
}

pub fn created_json(created: Option<&NewControlTopic>) -> serde_json::Value {
    created.map_or(serde_json::Value::Null, |c| {
        json!({
            "name": c.name, "partitions": c.partitions,
            "replicationFactor": c.replication_factor, "minInsyncReplicas": c.min_insync_replicas,
        })
    })
}

pub fn preview_text(
    plan_id: &str,
    preview: &[PartitionPreview],
    created: Option<&NewControlTopic>,
) -> String {
    let rows: Vec<Vec<String>> = preview
        .iter()
        .map(|p| {
            vec![
                p.partition.to_string(),
                p.beginning.to_string(),
                p.boundary.to_string(),
                p.end.to_string(),
                p.records_to_delete.to_string(),
            ]
        })
        .collect();
    let total: u64 = preview.iter().map(|p| p.records_to_delete).sum();
    let creation = created.map_or(String::new(), |c| format!("{}\n", creation_text(c, false)));
    format!(
        "{creation}Plan {plan_id} passed every check. Per partition:\n{}\n{total} records below the boundary will be deleted.",
        table(
            &["partition", "beginning", "boundary", "end", "to delete"],
            &rows
        )
    )
}

pub fn apply(args: &ApplyArgs) -> Result<(), Failure> {
    let plan_json = read_text(&args.plan, "plan file")?;
    let settings = kafka_settings(&args.kafka)?;
    let events: Box<dyn OperatorEvents> = if args.out.json {
        Box::new(action_state_cleanup::cleanup::NoEvents)
    } else {
        Box::new(PreviewPrinter)
    };
    let mut instance = instance(settings, events)?;
    let options = ApplyOptions {
        control_topic: args.control_topic.clone(),
        replication_factor: args.replication_factor,
        dry_run: args.dry_run,
        start_new_history: args.start_new_history,
    };
    let result = instance.apply(&plan_json, &options);
    let report = match result {
        Ok(Ok(report)) => report,
        Ok(Err(failed)) => {
            let known = failed.status;
            let failure = match answer(&mut instance, Ok(Err::<(), _>(failed.error))) {
                Err(failure) => failure,
                Ok(()) => Failure::failed("the apply failed without an error"),
            };
            return Err(explain_state(
                &mut instance,
                failure,
                known,
                &plan_json,
                &args.control_topic,
            ));
        }
        Err(trap) => return Err(Failure::internal(&trap)),
    };
    let counts = instance.counts();
    if args.out.json {
        print_json(&json!({
            "planId": report.plan_id,
            "outcome": outcome_name(report.outcome),
            "status": report.status.map(status_name),
            "preview": report.preview.iter().map(|p| json!({
                "partition": p.partition, "beginning": p.beginning, "boundary": p.boundary, "end": p.end, "recordsToDelete": p.records_to_delete
            })).collect::<Vec<_>>(),
            "target": offsets_json(&report.target),
            "beginningsAfter": offsets_json(&report.beginnings_after),
            "markedApplied": report.marked_applied,
            "createdControlTopic": created_json(report.created_control_topic.as_ref()),
            "kafkaRequests": { "admin": counts.admin, "controlReads": counts.control_reads, "controlWrites": counts.control_writes },
        }));
    } else {
        if let Some(created) = report
            .created_control_topic
            .as_ref()
            .filter(|_| args.dry_run)
        {
            outln!("{}", creation_text(created, true));
        }
        outln!("{}", outcome_text(&report));
    }
    Ok(())
}

fn outcome_text(report: &ApplyReport) -> String {
    match report.outcome {
        ApplyOutcome::Applied => format!(
            "Cleanup plan {} is APPLIED: every partition now begins at or after {}",
            report.plan_id,
            offsets_text(&report.target)
        ),
        ApplyOutcome::Resumed => format!(
            "Cleanup plan {} was COMMITTED; the deletion was completed and it is now APPLIED (boundary {})",
            report.plan_id,
            offsets_text(&report.target)
        ),
        ApplyOutcome::AlreadyApplied => format!(
            "Cleanup plan {} is already APPLIED; nothing was changed",
            report.plan_id
        ),
        ApplyOutcome::DryRun => format!(
            "Dry run: cleanup plan {} would be committed; nothing was changed",
            report.plan_id
        ),
    }
}

fn outcome_name(outcome: ApplyOutcome) -> &'static str {
    match outcome {
        ApplyOutcome::Applied => "applied",
        ApplyOutcome::Resumed => "resumed",
        ApplyOutcome::AlreadyApplied => "already-applied",
        ApplyOutcome::DryRun => "dry-run",
    }
}

pub fn status_name(status: Status) -> &'static str {
    match status {
        Status::Committed => "COMMITTED",
        Status::Applied => "APPLIED",
    }
}

/// For a data topic whose configuration is refused: the Kafka tools' command that makes it safe
/// (nothing was committed, so applying again afterwards starts over).
fn config_fix(failure: &Failure, topic: &str, bootstrap: &str) -> Option<String> {
    (failure.kind == "unsafe-topic-config").then(|| format!(
        "nothing durable happened; to let reviewed plans be the only deletions, run: kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type topics --entity-name {topic} --add-config 'cleanup.policy=[compact,delete],retention.ms=-1,retention.bytes=-1' (add --command-config FILE on a secured cluster), then apply again"
    ))
}

/// After a failed apply, says whether the plan is COMMITTED (retry finishes it) or nothing
/// durable happened: from the status the component reports with the failure, or, when it does
/// not know it (it stopped before reading, or a COMMITTED append's outcome is unknown), by
/// reading the control topic once more (best effort).
fn explain_state(
    instance: &mut action_state_cleanup::cleanup::CleanupInstance,
    failure: Failure,
    known: Option<Status>,
    plan_json: &str,
    control_topic: &str,
) -> Failure {
    let Ok(Ok(plan)) = instance.verify_plan(plan_json) else {
        return failure.with_hint(
            "nothing durable happened: the plan file was rejected before Kafka was contacted",
        );
    };
    let status = match known {
        Some(status) => Some(status),
        None => match instance.status(control_topic) {
            Ok(Ok(report)) => report.operations.into_iter().find(|op| op.plan.plan_id == plan.plan_id).map(|op| op.status),
            // No control topic: nothing can have been committed.
            Ok(Err(CleanupError::RecoveryRefused(_))) => None,
            _ => return failure.with_hint(format!("whether plan {} was committed is unknown: control topic {control_topic} could not be read either; once Kafka answers, run `status --control-topic {control_topic}`: if it lists the plan COMMITTED, run the same apply again to finish it, otherwise nothing durable happened", plan.plan_id)),
        },
    };
    match status {
        Some(Status::Committed) => failure.with_hint(format!(
            "plan {} is COMMITTED in {control_topic}: its boundary is binding; run the same apply again to finish the deletion",
            plan.plan_id
        )),
        Some(Status::Applied) => failure.with_hint(format!("plan {} is APPLIED in {control_topic}", plan.plan_id)),
        None => {
            let bootstrap = instance.settings().bootstrap_servers().to_owned();
            let hint = config_fix(&failure, &plan.topic, &bootstrap)
                .unwrap_or_else(|| "nothing durable happened: the plan was not committed".to_owned());
            failure.with_hint(hint)
        }
    }
}
