//! Commands that never touch Kafka: `plan` and `verify`.

use std::fs::OpenOptions;
use std::io::Write;

use action_state_cleanup::cleanup::CleanupInstance;
use action_state_cleanup::cleanup::{MarkerFilesPlan, Plan};
use serde_json::json;

use action_state_cleanup::cleanup::PartitionPreview;

use super::args::{KafkaArgs, PlanArgs, SnapshotArgs, VerifyArgs};
use super::failure::Failure;
use super::inputs::{plan_marker_files, read_text};
use super::output::{offsets_json, print_json, table};
use super::session::{Progress, answer, instance, kafka_settings, offline_instance};
use super::snapshot::{SnapshotAt, operator, selected, use_flink_config};
use super::wide;

pub fn plan(args: &PlanArgs) -> Result<(), Failure> {
    // Refuse an existing output before any work, not after it (the Java tool checks last).
    if let Some(output) = args.output.as_ref().filter(|output| output.exists()) {
        return Err(Failure::refused(format!(
            "plan file {} already exists; plans are never overwritten, choose another --output",
            output.display()
        )));
    }
    let mut instance = offline_instance()?;
    use_flink_config(&mut instance, args.snapshot.flink_config.as_deref())?;
    let mut retained = None;
    let mut reads = None;
    // The plan document as the component rendered it with the plan (a snapshot's, the retained
    // points'); marker files are planned one file at a time and rendered after.
    let mut document = None;
    let MarkerFilesPlan { plan, markers } = match selected(&args.snapshot) {
        _ if !args.retained.is_empty() => {
            let operator = operator(&args.snapshot, "--retained")?;
            let (planned, read) =
                super::retained::plan(&mut instance, &args.retained, &args.exclude, &operator)?;
            reads = Some(read.reads());
            document = Some(read.document().to_owned());
            retained = Some(read);
            planned
        }
        selection => match selection? {
            Some((snapshot, operator)) => {
                let planned =
                    snapshot.plan(&mut instance, &operator, args.recovery_point.as_deref())?;
                reads = Some(
                    json!({ "requests": planned.reads.requests, "bytes": planned.reads.bytes }),
                );
                document = Some(planned.text);
                MarkerFilesPlan {
                    plan: planned.plan,
                    markers: planned.markers,
                }
            }
            None => {
                let recovery_point = args
                    .recovery_point
                    .as_deref()
                    .ok_or_else(|| Failure::usage("--recovery-point is required with --markers"))?;
                plan_marker_files(&mut instance, recovery_point, &args.markers)?
            }
        },
    };
    let retained_json = retained.as_ref().map(super::retained::Retained::json);
    if let Some(read) = retained.as_ref().filter(|_| !args.out.json) {
        errln!("{}", read.text(args.out.all).trim_end());
    }
    let text = match document {
        Some(text) => text,
        None => instance
            .render_plan(&plan)
            .map_err(|e| Failure::internal(&e))?,
    };
    // Checked before anything is written: a configuration mistake is a usage error.
    let settings = wants_kafka(&args.kafka)
        .then(|| kafka_settings(&args.kafka))
        .transpose()?;
    // A live topic that is not the one the markers were taken from (recreated: another ID;
    // or other partitions) can never be cleaned by this plan: refused before a plan file
    // exists, as apply would refuse it. Any other failure to review only warns.
    super::acl::set_topics(Some(&plan.topic), None);
    let review = match settings.map(|settings| preview(settings, &text)) {
        Some(Err(failure)) if failure.kind == "topic-changed" => {
            return Err(failure.with_hint(format!(
                "no plan was written: the live topic is not the one the markers of {} were taken from, so no apply could ever use this plan; plan from a recovery point taken since the topic changed (or check --bootstrap-servers)",
                plan.source_recovery_point
            )));
        }
        review => review,
    };
    let Some(output) = &args.output else {
        if args.out.json {
            print_json(
                &json!({ "planId": plan.plan_id, "markers": markers, "plan": plan_json(&plan), "preview": review_json(&review), "retained": retained_json, "snapshotReads": reads }),
            );
        } else {
            out!("{text}");
            errln!("{}", review_text(&review, &plan, None, args.out.all));
        }
        return Ok(());
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(output)
        .map_err(|e| {
            Failure::failed(format!("cannot create plan file {}: {e}", output.display()))
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| {
            Failure::failed(format!("cannot write plan file {}: {e}", output.display()))
        })?;
    let absolute = std::path::absolute(output).unwrap_or_else(|_| output.clone());
    if args.out.json {
        print_json(
            &json!({ "planId": plan.plan_id, "output": absolute, "markers": markers, "plan": plan_json(&plan), "preview": review_json(&review), "retained": retained_json, "snapshotReads": reads }),
        );
    } else {
        outln!(
            "Created cleanup plan {} at {}",
            plan.plan_id,
            absolute.display()
        );
        errln!("{}", summary(&plan, markers as usize, args.out.all));
        errln!(
            "{}",
            review_text(&review, &plan, Some(&absolute), args.out.all)
        );
    }
    Ok(())
}

/// Whether the operator gave `plan` a way to reach Kafka.
fn wants_kafka(kafka: &KafkaArgs) -> bool {
    kafka.bootstrap_servers.is_some()
        || kafka.kafka_config.is_some()
        || !kafka.properties.is_empty()
}

/// What the plan would delete on the live topic (`coordinator.preview-plan`; read-only).
fn preview(
    settings: action_state_cleanup::kafka::KafkaSettings,
    plan_text: &str,
) -> Result<Vec<PartitionPreview>, Failure> {
    let mut instance = instance(settings, Box::new(Progress))?;
    let result = instance.preview_plan(plan_text);
    answer(&mut instance, result)
}

type Review = Option<Result<Vec<PartitionPreview>, Failure>>;

fn review_json(review: &Review) -> serde_json::Value {
    match review {
        None => serde_json::Value::Null,
        Some(Ok(rows)) => {
            json!(rows.iter().map(|p| json!({
            "partition": p.partition, "beginning": p.beginning, "planOffset": p.boundary,
            "end": p.end, "recordsToDelete": p.records_to_delete,
        })).collect::<Vec<_>>())
        }
        Some(Err(failure)) => json!({
            "error": { "kind": failure.kind, "message": failure.message, "hint": failure.hint }
        }),
    }
}

/// The review on stderr: the live deletion per partition, why it could not be read, or how to
/// see it.
fn review_text(review: &Review, plan: &Plan, file: Option<&std::path::Path>, all: bool) -> String {
    match review {
        None => format!(
            "To see what it would delete: action-state-cleanup apply --plan {} --control-topic TOPIC --bootstrap-servers SERVERS --dry-run (or give plan --bootstrap-servers)",
            file.map_or("FILE".into(), |f| f.display().to_string())
        ),
        Some(Ok(rows)) => {
            let total: u64 = rows.iter().map(|p| p.records_to_delete).sum();
            let cells: Vec<Vec<String>> = rows
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
            let header = ["partition", "beginning", "plan offset", "end", "to delete"];
            let summary = if wide::whole(rows.len(), all) {
                String::new()
            } else {
                format!(
                    "  {} partitions: plan offsets {}, beginning {}, end {}; {} partitions already begin at the plan offset\n",
                    wide::count(rows.len() as u64),
                    wide::span(rows.iter().map(|p| p.boundary)),
                    wide::span(rows.iter().map(|p| p.beginning)),
                    wide::span(rows.iter().map(|p| p.end)),
                    wide::count(rows.iter().filter(|p| p.records_to_delete == 0).count() as u64)
                )
            };
            format!(
                "On the live topic {} now:\n{summary}{}\nApplied now, this plan would delete {} (a control topic with a higher committed boundary would refuse it).",
                plan.topic,
                wide::rows_table(&header, &cells, all),
                wide::records(total)
            )
        }
        Some(Err(failure)) => {
            let hint = failure
                .hint
                .as_ref()
                .map_or(String::new(), |h| format!("\nhint: {h}"));
            format!(
                "warning: the plan was made, but checking it against the live topic failed: {}{hint}",
                failure.message
            )
        }
    }
}

pub fn verify(args: &VerifyArgs) -> Result<(), Failure> {
    let text = read_text(&args.plan, "plan file")?;
    let mut instance: CleanupInstance = offline_instance()?;
    let result = instance.verify_plan(&text);
    let plan = answer(&mut instance, result).map_err(|mut failure| {
        failure.message = format!("plan file {}: {}", args.plan.display(), failure.message);
        failure
    })?;
    if args.out.json {
        print_json(&json!({ "valid": true, "planId": plan.plan_id, "plan": plan_json(&plan) }));
    } else {
        outln!("{}", plan.plan_id);
        errln!("{}", summary(&plan, 0, args.out.all));
    }
    Ok(())
}

pub fn snapshot(args: &SnapshotArgs) -> Result<(), Failure> {
    let snapshot = SnapshotAt::new(args.path.clone());
    let mut instance = offline_instance()?;
    use_flink_config(&mut instance, args.flink_config.as_deref())?;
    let summary = snapshot.inspect(&mut instance)?;
    if args.out.json {
        print_json(&super::snapshot::summary_json(&snapshot.location, &summary));
    } else {
        out!(
            "{}",
            super::snapshot::summary_text(&snapshot.location, &summary)
        );
    }
    Ok(())
}

pub fn plan_json(plan: &Plan) -> serde_json::Value {
    json!({
        "schemaVersion": plan.schema_version,
        "planId": plan.plan_id,
        "sourceRecoveryPoint": plan.source_recovery_point,
        "topic": plan.topic,
        "topicId": plan.topic_id,
        "offsets": offsets_json(&plan.offsets),
    })
}

/// What a reviewer wants to see: where the plan comes from and the first offset kept per partition.
fn summary(plan: &Plan, markers: usize, all: bool) -> String {
    let mut out = format!(
        "recovery point: {}\ntopic:          {} (ID {})\npartitions:     {}",
        plan.source_recovery_point,
        plan.topic,
        plan.topic_id,
        plan.offsets.len()
    );
    if markers > 0 {
        out.push_str(&format!("\nmarkers read:   {markers}"));
    }
    let shown: Vec<Vec<String>> = plan
        .offsets
        .iter()
        .take(if all { usize::MAX } else { wide::FULL_ROWS })
        .map(|po| vec![po.partition.to_string(), po.offset.to_string()])
        .collect();
    out.push('\n');
    out.push_str(&table(&["partition", "keep from offset"], &shown));
    if plan.offsets.len() > shown.len() {
        out.push_str(&format!(
            "\n… and {} more partitions (see the plan file, or --all)",
            plan.offsets.len() - shown.len()
        ));
    }
    out
}
