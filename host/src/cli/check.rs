//! The `check-recovery` command: whether a restore from a snapshot or marker files is allowed,
//! and how a refused restore is reported (shared with `recover`).

use action_state_cleanup::cleanup::{
    BoundaryViolation, CleanupInstance, RecoveryPolicy, RecoveryRefusal, RecoveryVerdict,
    RestoreSource, StoredSnapshot,
};
use serde_json::json;

use super::args::CheckRecoveryArgs;
use super::failure::Failure;
use super::inputs::marker_files;
use super::output::{offsets_json, print_json};
use super::session::{Progress, explained, instance, kafka_settings};
use super::snapshot::selected;
use super::wide;

/// A refused check or restore as the command's failure, from what the refusal carries: a store
/// that did not give a file as `snapshot` reports it, else the component's sentence with what
/// it means (exit 6 for a restore the recovery rules refuse), every partition below the
/// boundary and who committed it, and the grants of the topic it concerns.
pub fn refusal_failure(
    instance: &CleanupInstance,
    refusal: RecoveryRefusal,
    control_topic: Option<&str>,
    all: bool,
) -> Failure {
    if let Some(store) = refusal.store {
        return super::snapshot::store_failure(store);
    }
    super::acl::set_topics(refusal.topic.as_deref(), control_topic);
    let failure =
        explained(&refusal.error, refusal.message, instance.settings()).with_class(refusal.class);
    refused_restore(failure, &refusal.violations, refusal.hint, all)
}

/// Where the markers of a restore are, as `--checkpoint` (with the operator) or `--markers`
/// name them: the component reads them (a snapshot through its store).
pub fn restore_source(
    snapshot: &super::args::CheckpointArgs,
    markers: &[std::path::PathBuf],
) -> Result<RestoreSource, Failure> {
    Ok(match selected(snapshot)? {
        Some((snapshot, operator)) => RestoreSource::Stored(StoredSnapshot {
            location: snapshot.location,
            operator,
        }),
        None => RestoreSource::Files(marker_files(markers)?),
    })
}

pub fn check_recovery(args: &CheckRecoveryArgs) -> Result<(), Failure> {
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(Progress))?;
    super::snapshot::use_flink_config(&mut instance, args.snapshot.flink_config.as_deref())?;
    // The component reads the markers where they are kept and checks them: one guest call.
    let source = restore_source(&args.snapshot, &args.markers)?;
    let policy = RecoveryPolicy {
        topic: args.topic.clone(),
        control_topic: args.control_topic.clone(),
        tombstones_enabled: args.tombstones,
    };
    let verdict = match instance.check_recovery(&source, &policy) {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(refusal)) => {
            let control = args.control_topic.as_deref();
            return Err(refusal_failure(&instance, refusal, control, args.out.all));
        }
        Err(trap) => return Err(Failure::internal(&trap)),
    };
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
    let all = args.out.all;
    match &verdict.boundary {
        Some(boundary) => outln!(
            "Restore allowed: every partition of {} is at or above the {}",
            verdict.topic,
            wide::labelled_offsets("committed boundary", boundary, all)
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
    if !wide::whole(rows.len(), all) {
        outln!("{}", ranges_summary(&verdict));
    }
    outln!(
        "{}",
        wide::rows_table(
            &["partition", "restore from", "beginning", "end", "to replay"],
            &rows,
            all
        )
    );
    Ok(())
}

/// A refused restore as `check-recovery` and `recover` report it: exit 6 with "restore refused"
/// when the recovery rules refused it, every partition below the boundary (a table, and
/// `error.violations` in `--json`), and the component's hint: which plan and recovery point
/// committed the boundary.
pub fn refused_restore(
    failure: Failure,
    violations: &[BoundaryViolation],
    hint: Option<String>,
    all: bool,
) -> Failure {
    let mut failure = failure;
    if violations.len() > 1 {
        let rows: Vec<Vec<String>> = violations
            .iter()
            .map(|v| {
                vec![
                    v.partition.to_string(),
                    v.requested.to_string(),
                    v.boundary.to_string(),
                ]
            })
            .collect();
        let which = if wide::whole(rows.len(), all) {
            "every partition below the boundary".to_owned()
        } else {
            format!(
                "{} partitions are below the boundary",
                wide::count(rows.len() as u64)
            )
        };
        failure.message.push_str(&format!(
            "; {which}:\n{}",
            wide::rows_table(&["partition", "requested", "boundary"], &rows, all)
        ));
    }
    if !violations.is_empty() {
        failure.violations = Some(json!(violations
            .iter()
            .map(|v| json!({ "topic": v.topic, "partition": v.partition, "requested": v.requested, "boundary": v.boundary }))
            .collect::<Vec<_>>()));
    }
    match hint {
        Some(hint) => failure.with_hint(hint),
        None => failure,
    }
}

/// A wide restore at a glance: the span of each column, what is replayed, and where the
/// restore starts past the committed boundary (the partitions that differ from it).
fn ranges_summary(verdict: &RecoveryVerdict) -> String {
    let ranges = &verdict.ranges;
    let replay: u64 = ranges
        .iter()
        .map(|r| r.end.saturating_sub(r.requested))
        .sum();
    let mut text = format!(
        "  {} partitions; restore from offsets {}, beginning {}, end {}; {} to replay",
        wide::count(ranges.len() as u64),
        wide::span(ranges.iter().map(|r| r.requested)),
        wide::span(ranges.iter().map(|r| r.beginning)),
        wide::span(ranges.iter().map(|r| r.end)),
        wide::counted_records(replay)
    );
    if let Some(boundary) = &verdict.boundary {
        let at: std::collections::HashMap<u32, u64> = boundary
            .iter()
            .map(|po| (po.partition, po.offset))
            .collect();
        let above: Vec<(u32, u64, u64)> = ranges
            .iter()
            .filter_map(|r| {
                let b = *at.get(&r.partition)?;
                (r.requested > b).then_some((r.partition, r.requested, b))
            })
            .collect();
        text.push_str(&if above.is_empty() {
            "\n  every partition restores from exactly its boundary".to_owned()
        } else {
            format!(
                "\n  {} partitions restore from above their boundary: {}",
                wide::count(above.len() as u64),
                wide::named(&above, |(p, from, b)| format!(
                    "{p} (from {from}, boundary {b})"
                ))
            )
        });
    }
    text
}
