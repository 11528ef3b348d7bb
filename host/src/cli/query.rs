//! Read-only commands against Kafka: `status`, `check-recovery`, `marker`.

use action_state_cleanup::cleanup::{RecoveryPolicy, Status, StatusReport};
use serde_json::json;

use super::apply::status_name;
use super::args::{CheckRecoveryArgs, MarkerArgs, StatusArgs};
use super::failure::{ATTENTION, Failure};
use super::inputs::load_markers;
use super::output::{offsets_json, offsets_text, print_json, table};
use super::session::{Progress, answer, instance, kafka_settings};
use super::snapshot::selected;

/// `status`: exits 0 when the history is whole and every plan APPLIED, `ATTENTION` when a plan
/// is COMMITTED but unfinished (an apply stopped after its point of no return) or the history
/// is broken.
pub fn status(args: &StatusArgs) -> Result<u8, Failure> {
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(Progress))?;
    let result = instance.status(&args.control_topic);
    let report = answer(&mut instance, result)?;
    let unfinished: Vec<&str> = report
        .operations
        .iter()
        .filter(|op| op.status == Status::Committed)
        .map(|op| op.plan.plan_id.as_str())
        .collect();
    let code = if unfinished.is_empty() && report.broken_history.is_none() {
        0
    } else {
        ATTENTION
    };
    print_status(args, &report, &unfinished);
    Ok(code)
}

fn print_status(args: &StatusArgs, report: &StatusReport, unfinished: &[&str]) {
    if args.out.json {
        print_json(&json!({
            "controlTopic": report.control_topic,
            "topic": report.topic,
            "topicId": report.topic_id,
            "liveTopicId": report.live_topic_id,
            "boundary": offsets_json(&report.boundary),
            "operations": report.operations.iter().map(|op| json!({
                "planId": op.plan.plan_id,
                "status": status_name(op.status),
                "sourceRecoveryPoint": op.plan.source_recovery_point,
                "offsets": offsets_json(&op.plan.offsets),
            })).collect::<Vec<_>>(),
            "live": report.live.iter().map(|l| json!({
                "partition": l.partition, "beginning": l.beginning, "end": l.end, "boundary": l.boundary
            })).collect::<Vec<_>>(),
            "brokenHistory": report.broken_history,
            "unfinished": unfinished,
        }));
        return;
    }
    if let Some(sentence) = &report.broken_history {
        errln!("warning: {sentence}");
    }
    for plan_id in unfinished {
        errln!(
            "warning: plan {plan_id} is COMMITTED but not APPLIED: an apply stopped after its point of no return (its boundary is binding); run the same apply again to finish the deletion"
        );
    }
    outln!(
        "Control topic {}: {} plan(s)",
        report.control_topic,
        report.operations.len()
    );
    for op in &report.operations {
        outln!(
            "  {} {:9} from {} {}",
            op.plan.plan_id,
            status_name(op.status),
            op.plan.source_recovery_point,
            offsets_text(&op.plan.offsets)
        );
    }
    let Some(topic) = &report.topic else {
        outln!("No boundary committed yet.");
        return;
    };
    outln!("Effective boundary: {}", offsets_text(&report.boundary));
    let recorded = report.topic_id.as_deref().unwrap_or("?");
    match report.live_topic_id.as_deref() {
        None => outln!("Data topic {topic} (ID {recorded}) does not exist any more."),
        Some(live) if live != recorded => {
            outln!("Data topic {topic} was recreated: recorded ID {recorded}, live ID {live}.")
        }
        Some(_) => {
            outln!("Data topic {topic} (ID {recorded}):");
            let rows: Vec<Vec<String>> = report
                .live
                .iter()
                .map(|l| {
                    vec![
                        l.partition.to_string(),
                        l.beginning.to_string(),
                        l.boundary.to_string(),
                        l.end.to_string(),
                    ]
                })
                .collect();
            outln!(
                "{}",
                table(&["partition", "beginning", "boundary", "end"], &rows)
            );
        }
    }
}

pub fn check_recovery(args: &CheckRecoveryArgs) -> Result<(), Failure> {
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(Progress))?;
    let markers = match selected(&args.snapshot)? {
        Some((snapshot, operator)) => snapshot.marker_texts(&mut instance, operator)?,
        None => load_markers(&mut instance, &args.markers)?,
    };
    let policy = RecoveryPolicy {
        topic: args.topic.clone(),
        control_topic: args.control_topic.clone(),
        tombstones_enabled: args.tombstones,
    };
    let (result, violations) = match instance.check_recovery(&markers, &policy) {
        Ok(Ok(verdict)) => (Ok(Ok(verdict)), Vec::new()),
        Ok(Err(refusal)) => (Ok(Err(refusal.error)), refusal.violations),
        Err(trap) => (Err(trap), Vec::new()),
    };
    let verdict = answer(&mut instance, result).map_err(|mut failure| {
        failure.message = format!("restore refused: {}", failure.message);
        if violations.len() > 1 {
            let rows: Vec<Vec<String>> = violations
                .iter()
                .map(|v| vec![v.partition.to_string(), v.requested.to_string(), v.boundary.to_string()])
                .collect();
            failure.message.push_str(&format!(
                "; every partition below the boundary:\n{}",
                table(&["partition", "requested", "boundary"], &rows)
            ));
        }
        if !violations.is_empty() {
            failure.violations = Some(json!(violations
                .iter()
                .map(|v| json!({ "topic": v.topic, "partition": v.partition, "requested": v.requested, "boundary": v.boundary }))
                .collect::<Vec<_>>()));
        }
        failure.restore_refused()
    })?;
    if args.out.json {
        print_json(&json!({
            "allowed": true,
            "topic": verdict.topic,
            "enforced": verdict.boundary.is_some(),
            "boundary": verdict.boundary.as_deref().map(offsets_json),
            "versioned": verdict.versioned,
            "ranges": verdict.ranges.iter().map(|r| json!({
                "partition": r.partition, "requested": r.requested, "beginning": r.beginning, "end": r.end
            })).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    match &verdict.boundary {
        Some(boundary) => outln!(
            "Restore allowed: every partition of {} is at or above the committed boundary {}",
            verdict.topic,
            offsets_text(boundary)
        ),
        None => outln!(
            "Restore allowed (standard recovery, no control topic configured) for {}",
            verdict.topic
        ),
    }
    let rows: Vec<Vec<String>> = verdict
        .ranges
        .iter()
        .map(|r| {
            vec![
                r.partition.to_string(),
                r.requested.to_string(),
                r.beginning.to_string(),
                r.end.to_string(),
                r.end.saturating_sub(r.requested).to_string(),
            ]
        })
        .collect();
    outln!(
        "{}",
        table(
            &["partition", "restore from", "beginning", "end", "to replay"],
            &rows
        )
    );
    Ok(())
}

pub fn marker(args: &MarkerArgs) -> Result<(), Failure> {
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(Progress))?;
    let result = instance.snapshot_marker(&args.topic);
    let marker = answer(&mut instance, result)?;
    if args.out.json {
        let value: serde_json::Value =
            serde_json::from_str(&marker).map_err(|e| Failure::failed(e.to_string()))?;
        print_json(&json!({ "marker": value }));
    } else {
        outln!("{marker}");
    }
    Ok(())
}
