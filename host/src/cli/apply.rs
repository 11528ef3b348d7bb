//! `apply`: the commit-before-delete protocol, run by the component, with a preview the operator
//! sees before the point of no return.

use std::io::{BufRead, IsTerminal};
use std::sync::{Arc, Mutex};

use action_state_cleanup::cleanup::{
    ApplyFailure, ApplyOptions, ApplyOutcome, ApplyReport, CleanupError, NewControlTopic,
    OperatorEvents, PartitionPreview, Plan, Review, Status,
};
use action_state_cleanup::kafka::KafkaClients;
use action_state_cleanup::trace;
use action_state_format::plan::ZERO_TOPIC_ID;
use action_state_kafka::policy::transactional_id;
use serde_json::json;

use super::args::ApplyArgs;
use super::failure::{DECLINED, Failure, TERMINATED};
use super::inputs::read_text;
use super::interrupt::{self, Stage};
use super::metrics::{MetricsFile, RunFacts};
use super::output::{offsets_json, print_json, table};
use super::retained::{HeldBelowNewest, Retained};
use super::session::{Progress, explained, instance_with, kafka_settings};
use super::wide;

/// Shows the review on stderr (stdout stays clean for `--json`) and, on a terminal, asks
/// before COMMITTED; reports the stage to the SIGINT watcher and retries as progress.
struct Reviewer {
    /// Print the preview (not with `--json`, whose report carries it).
    show: bool,
    /// Ask the operator (no `--yes`, not a dry run; `consent` made sure there is a terminal).
    ask: bool,
    /// The plan the component verified (`verified`), for the question, the interruption
    /// message and the metrics: the apply names it, the host asks nothing.
    verified: Arc<Mutex<Option<Plan>>>,
    /// For the interruption messages.
    control_topic: String,
    json: bool,
    /// Print every partition of a wide preview (`--all`).
    all: bool,
    /// A dry run: the control topic announced would be created, not will be.
    dry_run: bool,
    progress: Progress,
    guard: Guard,
}

/// `--max-delete-records` and `--max-delete-fraction`: how much a scheduled apply may delete.
/// A plan past either is declined at the review, so nothing is committed or created; the
/// sentence saying why is kept for the exit (3).
#[derive(Clone, Default)]
struct Guard {
    max_records: Option<u64>,
    max_fraction: Option<f64>,
    refusal: Arc<Mutex<Option<String>>>,
}

impl Guard {
    /// Why the plan deletes more than allowed, if it does.
    fn check(&self, plan_id: &str, topic: &str, preview: &[PartitionPreview]) -> Option<String> {
        let total: u64 = preview.iter().map(|p| p.records_to_delete).sum();
        let held: u64 = preview
            .iter()
            .map(|p| p.end.saturating_sub(p.beginning))
            .sum();
        let fraction = if held == 0 {
            0.0
        } else {
            total as f64 / held as f64
        };
        let what = format!(
            "plan {plan_id} would delete {total} {} of topic {topic} ({:.1} % of the {held} it holds)",
            if total == 1 { "record" } else { "records" },
            fraction * 100.0
        );
        if let Some(max) = self.max_records.filter(|&max| total > max) {
            return Some(format!("{what}, more than --max-delete-records {max}"));
        }
        if let Some(max) = self.max_fraction.filter(|&max| fraction > max) {
            return Some(format!(
                "{what}, more than --max-delete-fraction {max} ({:.1} %)",
                max * 100.0
            ));
        }
        None
    }

    fn refusal(&self) -> Option<String> {
        self.refusal
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

impl Reviewer {
    fn topic(&self) -> String {
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|plan| plan.topic.clone())
            .unwrap_or_default()
    }
}

impl OperatorEvents for Reviewer {
    fn verified(&mut self, plan: &Plan) {
        super::acl::set_topics(Some(&plan.topic), Some(&self.control_topic));
        // From here SIGINT and SIGTERM say where this plan stands (they were blocked so far).
        interrupt::watch(&plan.plan_id, &self.control_topic, self.dry_run, self.json);
        *self.verified.lock().unwrap_or_else(|p| p.into_inner()) = Some(plan.clone());
    }

    fn before_commit(
        &mut self,
        plan_id: &str,
        preview: &[PartitionPreview],
        created: Option<&NewControlTopic>,
    ) -> Review {
        // The operator answers the question from this review, so it is shown even with --json.
        if self.ask {
            promptln!(
                "{}",
                preview_text(plan_id, preview, created, self.dry_run, self.all)
            );
        } else if self.show {
            errln!(
                "{}",
                preview_text(plan_id, preview, created, self.dry_run, self.all)
            );
        }
        let topic = self.topic();
        if let Some(refusal) = self.guard.check(plan_id, &topic, preview) {
            *self.guard.refusal.lock().unwrap_or_else(|p| p.into_inner()) = Some(refusal);
            return Review::Decline;
        }
        if self.ask && !confirmed(&question(plan_id, &topic, preview)) {
            return Review::Decline;
        }
        interrupt::set_stage(Stage::Committing);
        Review::Proceed
    }

    fn committed(&mut self, _plan_id: &str) {
        interrupt::set_stage(Stage::Committed);
    }

    fn retrying(&mut self, message: &str, remaining_ms: u64) {
        self.progress.retrying(message, remaining_ms);
    }

    fn waiting(&mut self, what: &str, elapsed: std::time::Duration) {
        self.progress.waiting(what, elapsed);
    }
}

/// The confirmation question: what is deleted from where, for good.
pub fn question(plan_id: &str, topic: &str, preview: &[PartitionPreview]) -> String {
    let total: u64 = preview.iter().map(|p| p.records_to_delete).sum();
    let losing: Vec<String> = preview
        .iter()
        .filter(|p| p.records_to_delete > 0)
        .map(|p| format!("{} ({})", p.partition, p.records_to_delete))
        .collect();
    let shown = match losing.len() {
        0 => "no partition".to_owned(),
        n if n > 10 => format!("partitions {} and {} more", losing[..10].join(", "), n - 10),
        1 => format!("partition {}", losing[0]),
        _ => format!("partitions {}", losing.join(", ")),
    };
    format!(
        "Commit plan {plan_id} and delete {} of topic {topic} ({shown})? This cannot be undone. [y/N] ",
        wide::records(total)
    )
}

/// Asks on stderr and reads one line of stdin: only "y" or "yes" proceeds (end of input: no).
fn confirmed(question: &str) -> bool {
    prompt!("{question}");
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(_) => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
        Err(_) => false,
    }
}

/// The sentence that announces the control topic an apply creates with its commit (or, dry,
/// would create): it does not exist yet while the operator is asked.
pub fn creation_text(created: &NewControlTopic, dry_run: bool) -> String {
    format!(
        "{} control topic {} ({} partition, replication factor {}, min.insync.replicas {}, cleanup.policy=compact): a new cleanup history begins there.",
        if dry_run {
            "Would create"
        } else {
            "Will create"
        },
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
    dry_run: bool,
    all: bool,
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
    let creation = created.map_or(String::new(), |c| {
        format!("{}\n", creation_text(c, dry_run))
    });
    let header = ["partition", "beginning", "boundary", "end", "to delete"];
    if wide::whole(preview.len(), all) {
        return format!(
            "{creation}Plan {plan_id} passed every check. Per partition:\n{}\n{} below the boundary will be deleted.",
            table(&header, &rows),
            wide::records(total)
        );
    }
    format!(
        "{creation}Plan {plan_id} passed every check. {} partitions:\n{}\n{}\n{} below the boundary will be deleted.",
        wide::count(preview.len() as u64),
        preview_summary(preview),
        wide::rows_table(&header, &rows, all),
        wide::records(total)
    )
}

/// A wide preview at a glance: what is deleted where, the span of each column, and the
/// partitions that already begin at their boundary (nothing to delete there).
fn preview_summary(preview: &[PartitionPreview]) -> String {
    let total: u64 = preview.iter().map(|p| p.records_to_delete).sum();
    let losing = preview.iter().filter(|p| p.records_to_delete > 0).count();
    let at_boundary: Vec<&PartitionPreview> = preview
        .iter()
        .filter(|p| p.records_to_delete == 0)
        .collect();
    let untouched = if at_boundary.is_empty() {
        "none begins at its boundary yet".to_owned()
    } else {
        format!(
            "{} already begin at it: {}",
            wide::count(at_boundary.len() as u64),
            wide::named(&at_boundary, |p| p.partition.to_string())
        )
    };
    format!(
        "  to delete:  {} on {} partitions ({untouched})\n  boundary:   offsets {}\n  beginning:  offsets {}\n  end:        offsets {}",
        wide::counted_records(total),
        wide::count(losing as u64),
        wide::span(preview.iter().map(|p| p.boundary)),
        wide::span(preview.iter().map(|p| p.beginning)),
        wide::span(preview.iter().map(|p| p.end)),
    )
}

/// Without a terminal nobody can answer the question, so nobody consented: an unattended
/// apply (cron, CI, `ssh` or `kubectl exec` without -t, a pipe) must say `--yes` itself, as
/// terraform's apply needs -auto-approve. Refused before Kafka is contacted; a dry run
/// commits nothing and needs no consent.
fn consent(args: &ApplyArgs) -> Result<(), Failure> {
    if args.yes || args.dry_run || std::io::stdin().is_terminal() {
        return Ok(());
    }
    Err(Failure::usage(
        "apply asks the operator before it commits and deletes, but standard input is not a terminal, so nobody can answer: pass --yes to apply without the question (or --dry-run to review only)",
    )
    .with_hint("nothing durable happened: the apply stopped before contacting Kafka"))
}

pub fn apply(args: &ApplyArgs) -> Result<(), Failure> {
    let started = std::time::Instant::now();
    // Before any thread exists (the component runtime starts some): see `interrupt::block`.
    interrupt::block();
    let metrics = args
        .metrics_file
        .as_deref()
        .map(|path| MetricsFile::open(path, &args.control_topic))
        .transpose()?;
    if let Some(metrics) = metrics.clone() {
        // A ^C or SIGTERM ends the run from the signal thread: the metrics still say so, with
        // exit 130 or 143.
        interrupt::before_exit(move |code| {
            let facts = RunFacts {
                outcome: Some(if code == TERMINATED {
                    "terminated"
                } else {
                    "interrupted"
                }),
                ..RunFacts::default()
            };
            if let Err(sentence) = metrics.write(&facts, code, started.elapsed()) {
                errln!("warning: {sentence}");
            }
        });
    }
    let mut facts = RunFacts::default();
    let result = run(args, &mut facts);
    if let Some(metrics) = metrics {
        let code = result.as_ref().err().map_or(0, |failure| failure.code);
        if let Err(sentence) = metrics.write(&facts, code, started.elapsed()) {
            errln!("warning: {sentence}");
        }
    }
    result
}

/// The plan to apply: the reviewed file, or the one `--retained` makes now (with its account
/// of the points, shown on stderr unless `--json`, which carries it).
fn plan_text(args: &ApplyArgs) -> Result<(String, Option<Retained>), Failure> {
    if let Some(path) = &args.plan {
        return Ok((read_text(path, "plan file")?, None));
    }
    let (text, read) = super::retained::plan_from(&args.retained)?;
    if !args.out.json {
        errln!("{}", read.text(args.out.all).trim_end());
    }
    Ok((text, Some(read)))
}

fn run(args: &ApplyArgs, facts: &mut RunFacts) -> Result<(), Failure> {
    consent(args)?;
    let (plan_json, retained) = plan_text(args)?;
    let settings = kafka_settings(&args.kafka)?;
    let mut kafka = KafkaClients::new(settings)
        .map_err(|e| Failure::failed(format!("cannot start the Kafka client runtime: {e}")))?;
    // The clients connect while the component starts and checks; the transactional writer's
    // producer is made too (not initialised: that fences, and only the component decides when).
    let writer = (!args.dry_run).then(|| transactional_id(&args.control_topic));
    kafka.warm_up(writer.as_deref());
    super::acl::set_topics(None, Some(&args.control_topic));
    // Without --yes the operator is asked (`consent` refused a run without a terminal).
    let ask = !args.yes && !args.dry_run;
    let guard = Guard {
        max_records: args.max_delete_records,
        max_fraction: args.max_delete_fraction,
        refusal: Arc::default(),
    };
    // The plan's ID and topic come from the component (`verified`), once it parsed the document;
    // a document that is no plan is refused by the apply itself, with its message.
    let verified = Arc::new(Mutex::new(None));
    let events = Reviewer {
        show: !args.out.json,
        ask,
        verified: verified.clone(),
        control_topic: args.control_topic.clone(),
        json: args.out.json,
        all: args.out.all,
        dry_run: args.dry_run,
        progress: Progress,
        guard: guard.clone(),
    };
    let mut instance = instance_with(kafka, Box::new(events))?;
    let options = ApplyOptions {
        control_topic: args.control_topic.clone(),
        replication_factor: args.replication_factor,
        dry_run: args.dry_run,
        start_new_history: args.start_new_history,
    };
    let result = trace::timed(
        "apply (the component, every Kafka step above included)",
        || instance.apply(&plan_json, &options),
        |answer| match answer {
            Ok(Ok(report)) => format!("{:?}", report.outcome),
            Ok(Err(failed)) => format!("failed: {:?}", failed.error),
            Err(trap) => format!("trap: {trap}"),
        },
    );
    if let Some(plan) = verified.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        facts.plan_id = Some(plan.plan_id.clone());
        facts.topic = Some(plan.topic.clone());
    }
    let report = match result {
        Ok(Ok(report)) => report,
        Ok(Err(failed)) => {
            // Everything the operator is told comes with the failure: no further guest call.
            let failure = explained(&failed.error, failed.message.clone(), instance.settings())
                .with_class(failed.class);
            let bootstrap = instance.settings().bootstrap_servers().to_owned();
            return Err(explain_state(
                failure,
                &failed,
                &bootstrap,
                &args.control_topic,
            ));
        }
        Err(trap) => return Err(Failure::internal(&trap)),
    };
    if !args.out.json {
        super::warnings::show(&report.warnings);
    }
    facts.outcome = Some(outcome_name(report.outcome));
    if let Some(refusal) = guard.refusal() {
        facts.outcome = Some("refused");
        return Err(Failure::refused(refusal).with_hint(format!(
            "nothing was committed{}: if the plan is right, raise the limit; otherwise plan again from the recovery points still retained (a wrong or missing recovery point makes a plan reach too far)",
            if args.dry_run { " (a dry run)" } else { "" }
        )));
    }
    if report.outcome == ApplyOutcome::Declined {
        return Err(Failure {
            code: DECLINED,
            kind: "declined",
            message: outcome_text(&report, args.out.all),
            hint: Some("run the same apply again and answer y, or pass --yes".into()),
            violations: None,
        });
    }
    let counts = instance.counts();
    let deleted = records_deleted(&report);
    facts.records_deleted = deleted;
    let held = retained
        .as_ref()
        .and_then(|read| held_below_newest(read, &report));
    facts.records_held = held.as_ref().map(HeldBelowNewest::total);
    facts.requests = Some((
        counts.admin as u64,
        counts.control_reads as u64,
        counts.control_writes as u64,
    ));
    // The clients close with the instance (librdkafka's destroy waits for its threads).
    trace::timed(
        "close the component and its Kafka clients",
        || drop(instance),
        |_| String::new(),
    );
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
            "warnings": super::warnings::to_json(&report.warnings),
            "kafkaRequests": { "admin": counts.admin, "controlReads": counts.control_reads, "controlWrites": counts.control_writes },
            "recordsDeleted": deleted,
            "durationMs": started_ms(),
            "retained": retained.as_ref().map(Retained::json),
            "heldBelowNewestPoint": held.as_ref().map(HeldBelowNewest::json),
        }));
    } else {
        if let Some(created) = report
            .created_control_topic
            .as_ref()
            .filter(|_| args.dry_run)
        {
            outln!("{}", creation_text(created, true));
        }
        outln!("{}", outcome_text(&report, args.out.all));
        if let Some(held) = &held {
            outln!("{}", held.text());
        }
    }
    Ok(())
}

/// Records this run deleted: per partition, how far the beginning moved from the one reviewed
/// (nothing for a dry run, an already-applied plan, or a resumed plan's earlier deletion).
/// What the data topic holds below the newest retained point after this apply: from where each
/// partition begins now (the verified beginnings; the preview's without a deletion) to that
/// point's offset.
fn held_below_newest(read: &Retained, report: &ApplyReport) -> Option<HeldBelowNewest> {
    let ends: Vec<(u32, u64)> = report
        .preview
        .iter()
        .map(|p| (p.partition, p.end))
        .collect();
    let beginnings: Vec<(u32, u64)> = if report.beginnings_after.is_empty() {
        report
            .preview
            .iter()
            .map(|p| (p.partition, p.beginning))
            .collect()
    } else {
        report
            .beginnings_after
            .iter()
            .map(|po| (po.partition, po.offset))
            .collect()
    };
    read.held_below_newest(&beginnings, &ends)
}

fn records_deleted(report: &ApplyReport) -> u64 {
    report
        .preview
        .iter()
        .filter_map(|p| {
            let after = report
                .beginnings_after
                .iter()
                .find(|b| b.partition == p.partition)?;
            Some(after.offset.saturating_sub(p.beginning))
        })
        .sum()
}

/// Milliseconds since the process started (the trace's clock).
fn started_ms() -> u64 {
    u64::try_from(trace::since_start().as_millis()).unwrap_or(u64::MAX)
}

fn outcome_text(report: &ApplyReport, all: bool) -> String {
    match report.outcome {
        ApplyOutcome::Applied if wide::whole(report.target.len(), all) => format!(
            "Cleanup plan {} is APPLIED: every partition now begins at or after {}",
            report.plan_id,
            wide::offsets_brief(&report.target, all),
        ),
        ApplyOutcome::Applied => format!(
            "Cleanup plan {} is APPLIED: every partition now begins at or after its boundary, {}{}",
            report.plan_id,
            wide::offsets_brief(&report.target, all),
            past_the_boundary(report)
        ),
        ApplyOutcome::Resumed => format!(
            "Cleanup plan {} was COMMITTED; the deletion was completed and it is now APPLIED ({}){}",
            report.plan_id,
            wide::labelled_offsets("boundary", &report.target, all),
            past_the_boundary(report)
        ),
        ApplyOutcome::AlreadyApplied => format!(
            "Cleanup plan {} is already APPLIED; nothing was changed",
            report.plan_id
        ),
        ApplyOutcome::DryRun => format!(
            "Dry run: cleanup plan {} would be committed; nothing was changed",
            report.plan_id
        ),
        ApplyOutcome::Declined => format!(
            "declined: cleanup plan {} was not committed (the answer was not yes); nothing was created or deleted",
            report.plan_id,
        ),
    }
}

/// For a wide plan: the partitions that now begin past their boundary (records there were
/// deleted before, or by another plan), which the summarised boundary does not show.
fn past_the_boundary(report: &ApplyReport) -> String {
    if wide::whole(report.target.len(), false) || report.beginnings_after.is_empty() {
        return String::new();
    }
    let after: std::collections::HashMap<u32, u64> = report
        .beginnings_after
        .iter()
        .map(|po| (po.partition, po.offset))
        .collect();
    let past: Vec<(u32, u64, u64)> = report
        .target
        .iter()
        .filter_map(|t| {
            let begins = *after.get(&t.partition)?;
            (begins > t.offset).then_some((t.partition, begins, t.offset))
        })
        .collect();
    if past.is_empty() {
        return "; each begins exactly there".into();
    }
    format!(
        "; {} begin past it: {}",
        wide::count(past.len() as u64),
        wide::named(&past, |(p, begins, boundary)| format!(
            "{p} (at {begins}, boundary {boundary})"
        ))
    )
}

fn outcome_name(outcome: ApplyOutcome) -> &'static str {
    match outcome {
        ApplyOutcome::Applied => "applied",
        ApplyOutcome::Resumed => "resumed",
        ApplyOutcome::AlreadyApplied => "already-applied",
        ApplyOutcome::DryRun => "dry-run",
        ApplyOutcome::Declined => "declined",
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
fn config_fix(error: &CleanupError, topic: &str, bootstrap: &str) -> Option<String> {
    matches!(error, CleanupError::UnsafeTopicConfig(_)).then(|| format!(
        "nothing durable happened; to let reviewed plans be the only deletions, run: kafka-configs.sh --bootstrap-server {bootstrap} --alter --entity-type topics --entity-name {topic} --add-config 'cleanup.policy=[compact,delete],retention.ms=-1,retention.bytes=-1' (add --command-config FILE on a secured cluster), then apply again"
    ))
}

/// For a plan no apply can ever commit, since what it was made for is gone: running the same
/// apply again cannot work, a plan from a newer recovery point can.
fn never_applicable(error: &CleanupError, plan: &Plan, control_topic: &str) -> Option<String> {
    let nothing =
        "nothing was committed: the apply stopped before its point of no return (COMMITTED)";
    match error {
        CleanupError::BoundaryRegression(_) => Some(format!(
            "{nothing}; this plan from {} can never be applied: the boundary committed in {control_topic} is already past it (`status --control-topic {control_topic}` shows the plan and recovery point that set it); plan again from a recovery point newer than that one",
            plan.source_recovery_point
        )),
        CleanupError::OffsetsUnavailable(_) => Some(format!(
            "{nothing}; this plan from {} can never be applied: a plan offset lies outside what its partition holds now (the records before it were deleted since, or the topic was truncated); plan again from a newer recovery point",
            plan.source_recovery_point
        )),
        // The broker's missing topic IDs are a cluster to upgrade, not a plan to replace.
        CleanupError::TopicChanged(change) if change.found_topic_id != ZERO_TOPIC_ID => {
            Some(format!(
                "{nothing}; this plan from {} can never be applied: it was made for topic {} with ID {} and its partitions, and the live topic is not that one (recreated, or its partitions changed); plan again from a recovery point taken since",
                plan.source_recovery_point, plan.topic, plan.topic_id
            ))
        }
        _ => None,
    }
}

/// After a failed apply, says whether the plan is COMMITTED (retry finishes it) or nothing was
/// committed, from what the component reports with the failure: the status it last knew and
/// whether it sent COMMITTED at all. The host reads nothing more (a second read of a cluster
/// that just failed would only double the wait).
fn explain_state(
    failure: Failure,
    failed: &ApplyFailure,
    bootstrap: &str,
    control_topic: &str,
) -> Failure {
    let Some(plan) = &failed.plan else {
        return failure.with_hint(
            "nothing durable happened: the plan file was rejected before Kafka was contacted",
        );
    };
    match (failed.status, failed.commit_attempted) {
        (Some(Status::Committed), _) => failure.with_hint(format!(
            "plan {} is COMMITTED in {control_topic}: its boundary is binding; run the same apply again to finish the deletion",
            plan.plan_id
        )),
        (Some(Status::Applied), _) => {
            failure.with_hint(format!("plan {} is APPLIED in {control_topic}", plan.plan_id))
        }
        (None, true) => failure.with_hint(format!(
            "whether plan {} was committed is unknown: its COMMITTED record got no definite answer and {control_topic} could not be read again; once Kafka answers, run `status --control-topic {control_topic}`: if it lists the plan COMMITTED, run the same apply again to finish it, otherwise nothing was committed",
            plan.plan_id
        )),
        (None, false) => {
            let fix = config_fix(&failed.error, &plan.topic, bootstrap)
                .or_else(|| never_applicable(&failed.error, plan, control_topic));
            let hint = fix.unwrap_or_else(|| {
                let before = "nothing was committed: the apply stopped before its point of no return (COMMITTED)";
                match failure.hint.as_deref() {
                    Some(cause) => format!("{cause}; {before}"),
                    None => format!("{before}; run the same apply again once the cause is fixed"),
                }
            });
            failure.with_hint(hint)
        }
    }
}
