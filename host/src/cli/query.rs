//! Read-only commands against Kafka: `status`, `marker` (`check-recovery` is in `check`).

use action_state_cleanup::cleanup::{LivePartition, PlanTimes, Status, StatusReport};
use serde_json::json;

use super::apply::status_name;
use super::args::{MarkerArgs, StatusArgs};
use super::failure::{ATTENTION, Failure};
use super::output::{offsets_json, print_json, utc_time};
use super::retained::HeldBelowNewest;
use super::session::{Progress, answer, instance, kafka_settings};
use super::wide;

/// `status`: exits 0 when the history is whole and every plan APPLIED, `ATTENTION` when a plan
/// is COMMITTED but unfinished (an apply stopped after its point of no return) or the history
/// is broken.
pub fn status(args: &StatusArgs) -> Result<u8, Failure> {
    let retained = (!args.retained.retained.is_empty())
        .then(|| super::retained::plan_from(&args.retained))
        .transpose()?
        .map(|(_, read)| read);
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(Progress))?;
    super::acl::set_topics(None, Some(&args.control_topic));
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
    let held = retained.as_ref().and_then(|read| {
        let beginnings: Vec<(u32, u64)> = report
            .live
            .iter()
            .map(|l| (l.partition, l.beginning))
            .collect();
        let ends: Vec<(u32, u64)> = report.live.iter().map(|l| (l.partition, l.end)).collect();
        read.held_below_newest(&beginnings, &ends)
    });
    print_status(args, &report, &unfinished, held.as_ref());
    Ok(code)
}

fn print_status(
    args: &StatusArgs,
    report: &StatusReport,
    unfinished: &[&str],
    held: Option<&HeldBelowNewest>,
) {
    if args.out.json {
        print_json(&json!({
            "controlTopic": report.control_topic,
            "topic": report.topic,
            "topicId": report.topic_id,
            "liveTopicId": report.live_topic_id,
            "boundary": offsets_json(&report.boundary),
            "boundaryOrigins": report.boundary_origins.iter()
                .map(|o| (o.partition.to_string(), json!(o.plan_id)))
                .collect::<serde_json::Map<_, _>>(),
            "operations": report.operations.iter().zip(times(report)).map(|(op, t)| json!({
                "planId": op.plan.plan_id,
                "status": status_name(op.status),
                "sourceRecoveryPoint": op.plan.source_recovery_point,
                "offsets": offsets_json(&op.plan.offsets),
                "committedAt": t.committed_at.map(utc_time),
                "appliedAt": t.applied_at.map(utc_time),
            })).collect::<Vec<_>>(),
            "live": report.live.iter().map(|l| json!({
                "partition": l.partition, "beginning": l.beginning, "end": l.end, "boundary": l.boundary
            })).collect::<Vec<_>>(),
            "brokenHistory": report.broken_history,
            "unfinished": unfinished,
            "heldBelowNewestPoint": held.map(HeldBelowNewest::json),
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
    let all = args.out.all;
    outln!(
        "Control topic {}: {} plan(s)",
        report.control_topic,
        report.operations.len()
    );
    for (op, t) in report.operations.iter().zip(times(report)) {
        outln!(
            "  {} {:9} from {} {}",
            op.plan.plan_id,
            status_name(op.status),
            op.plan.source_recovery_point,
            wide::offsets_brief(&op.plan.offsets, all)
        );
        outln!("      {}", when(&t));
    }
    let Some(topic) = &report.topic else {
        outln!("No boundary committed yet.");
        return;
    };
    outln!(
        "Effective boundary: {}",
        wide::offsets_brief(&report.boundary, all)
    );
    for line in origin_lines(report) {
        outln!("{line}");
    }
    let recorded = report.topic_id.as_deref().unwrap_or("?");
    match report.live_topic_id.as_deref() {
        None => outln!("Data topic {topic} (ID {recorded}) does not exist any more."),
        Some(live) if live != recorded => {
            outln!("Data topic {topic} was recreated: recorded ID {recorded}, live ID {live}.")
        }
        Some(_) if !wide::whole(report.live.len(), all) => {
            outln!(
                "Data topic {topic} (ID {recorded}): {} partitions",
                wide::count(report.live.len() as u64)
            );
            outln!("{}", live_summary(&report.live));
            outln!("{}", live_table(&report.live, all));
        }
        Some(_) => {
            outln!("Data topic {topic} (ID {recorded}):");
            outln!("{}", live_table(&report.live, all));
        }
    }
    if let Some(held) = held {
        outln!("{}", held.text());
    }
}

/// Each operation's times (none for a report from a component that had none to give).
fn times(report: &StatusReport) -> impl Iterator<Item = PlanTimes> + '_ {
    report
        .times
        .iter()
        .cloned()
        .chain(std::iter::repeat(PlanTimes {
            committed_at: None,
            applied_at: None,
        }))
}

/// `committed 2026-12-05T03:30:12.345Z, applied …` from the control records' timestamps.
fn when(times: &PlanTimes) -> String {
    let at = |time: Option<i64>, absent: &str| time.map_or_else(|| absent.to_owned(), utc_time);
    format!(
        "committed {}, applied {}",
        at(
            times.committed_at,
            "(time unknown: its COMMITTED record was compacted away)"
        ),
        at(times.applied_at, "not yet")
    )
}

/// Where the effective boundary came from: per plan that sets it somewhere, its recovery point
/// and the partitions it sets.
fn origin_lines(report: &StatusReport) -> Vec<String> {
    let mut by_plan: Vec<(&str, Vec<u32>)> = Vec::new();
    for origin in &report.boundary_origins {
        match by_plan.iter_mut().find(|(id, _)| *id == origin.plan_id) {
            Some((_, partitions)) => partitions.push(origin.partition),
            None => by_plan.push((&origin.plan_id, vec![origin.partition])),
        }
    }
    by_plan
        .into_iter()
        .map(|(plan_id, partitions)| {
            let point = report
                .operations
                .iter()
                .find(|op| op.plan.plan_id == plan_id)
                .map_or("?", |op| op.plan.source_recovery_point.as_str());
            format!(
                "  from {point} (plan {plan_id}) on {}",
                partitions_text(&partitions)
            )
        })
        .collect()
}

fn partitions_text(partitions: &[u32]) -> String {
    let word = if partitions.len() == 1 {
        "partition"
    } else {
        "partitions"
    };
    format!(
        "{word} {}",
        action_state_format::offsets::brief_partitions(partitions)
    )
}

/// The live partitions: beginning, boundary and end per partition.
fn live_table(live: &[LivePartition], all: bool) -> String {
    let rows: Vec<Vec<String>> = live
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
    wide::rows_table(&["partition", "beginning", "boundary", "end"], &rows, all)
}

/// A wide topic's live state at a glance: the span of each column, what is kept, and the
/// partitions that do not begin at their boundary (a deletion still to run, or records
/// deleted outside this history).
fn live_summary(live: &[LivePartition]) -> String {
    let kept: u64 = live.iter().map(|l| l.end.saturating_sub(l.beginning)).sum();
    let below: Vec<&LivePartition> = live.iter().filter(|l| l.beginning < l.boundary).collect();
    let past: Vec<&LivePartition> = live.iter().filter(|l| l.beginning > l.boundary).collect();
    let mut lines = vec![format!(
        "  boundary:   offsets {}\n  beginning:  offsets {}\n  end:        offsets {}\n  records:    {} readable",
        wide::span(live.iter().map(|l| l.boundary)),
        wide::span(live.iter().map(|l| l.beginning)),
        wide::span(live.iter().map(|l| l.end)),
        wide::count(kept)
    )];
    let show = |l: &&LivePartition| {
        format!(
            "{} (at {}, boundary {})",
            l.partition, l.beginning, l.boundary
        )
    };
    if below.is_empty() && past.is_empty() {
        lines.push("  every partition begins exactly at its boundary".into());
    }
    if !below.is_empty() {
        lines.push(format!(
            "  {} partitions begin below their boundary (a deletion still to run): {}",
            wide::count(below.len() as u64),
            wide::named(&below, show)
        ));
    }
    if !past.is_empty() {
        lines.push(format!(
            "  {} partitions begin past their boundary: {}",
            wide::count(past.len() as u64),
            wide::named(&past, show)
        ));
    }
    lines.join("\n")
}

pub fn marker(args: &MarkerArgs) -> Result<(), Failure> {
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(Progress))?;
    super::acl::set_topics(Some(&args.topic), None);
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
