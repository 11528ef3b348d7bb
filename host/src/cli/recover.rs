//! `recover`: a runtime's full validated restore, as a dry run with a report.

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use action_state_cleanup::cleanup::{RecoveryPolicy, ReplayOptions};
use serde_json::json;

use super::args::RecoverArgs;
use super::check::{refusal_failure, refused_restore, restore_source};
use super::failure::Failure;
use super::output::{offsets_json, print_json};
use super::session::{self, answer, instance, kafka_settings};

/// Poll wait per consumer call; the stall window is a multiple of it.
const POLL_TIMEOUT_MS: u32 = 500;

#[derive(Debug, Default, Clone, Copy)]
struct PartitionReport {
    requested: u64,
    end: u64,
    records: u64,
    tombstones: u64,
}

/// Shows how far a long replay got: a live line on a terminal, a line every few seconds otherwise.
struct Progress {
    total: u64,
    started: Instant,
    last: Instant,
    terminal: bool,
    shown: bool,
}

impl Progress {
    fn new(total: u64) -> Self {
        let now = Instant::now();
        Progress {
            total,
            started: now,
            last: now,
            terminal: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    fn update(&mut self, done: u64) {
        let every = if self.terminal {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(5)
        };
        if self.last.elapsed() < every || self.started.elapsed() < Duration::from_secs(1) {
            return;
        }
        self.last = Instant::now();
        self.shown = true;
        let percent = if self.total == 0 {
            100.0
        } else {
            done as f64 * 100.0 / self.total as f64
        };
        let width = 30;
        let filled = ((percent / 100.0) * width as f64) as usize;
        let bar = format!(
            "[{}{}]",
            "#".repeat(filled.min(width)),
            " ".repeat(width - filled.min(width))
        );
        let line = format!("replay {bar} {done}/{} records ({percent:.1}%)", self.total);
        if self.terminal {
            err!("\r{line}");
        } else {
            errln!("{line}");
        }
    }

    fn finish(&self) {
        if self.terminal && self.shown {
            errln!();
        }
    }
}

pub fn recover(args: &RecoverArgs) -> Result<(), Failure> {
    let mut instance = instance(kafka_settings(&args.kafka)?, Box::new(session::Progress))?;
    super::snapshot::use_flink_config(&mut instance, args.snapshot.flink_config.as_deref())?;
    // The component reads the markers where they are kept, for the check and for the restore.
    let source = restore_source(&args.snapshot, &args.markers)?;
    let all = args.out.all;
    let control = args.control_topic.as_deref();
    let mut policy = RecoveryPolicy {
        topic: args.topic.clone(),
        control_topic: args.control_topic.clone(),
        tombstones_enabled: args.tombstones,
    };
    let topic = match &args.topic {
        Some(topic) => topic.clone(),
        // The session is of the topic the markers name: the check a restore makes says which
        // (and refuses what the restore would refuse).
        None => match instance.check_recovery(&source, &policy) {
            Ok(Ok(verdict)) => verdict.topic,
            Ok(Err(refusal)) => return Err(refusal_failure(&instance, refusal, control, all)),
            Err(trap) => return Err(Failure::internal(&trap)),
        },
    };
    policy.topic = Some(topic.clone());
    super::acl::set_topics(Some(&topic), control);
    let result = instance.start_session(&topic, &policy);
    let session = answer(&mut instance, result)
        .map_err(|failure| refused_restore(failure.restore_refused(), &[], None, all))?;
    let options = ReplayOptions {
        poll_timeout_ms: POLL_TIMEOUT_MS,
        stall_timeout_ms: args.stall_timeout.saturating_mul(1000),
    };
    let verdict = match instance.restore(&session, &source, options) {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(refusal)) => return Err(refusal_failure(&instance, refusal, control, all)),
        Err(trap) => return Err(Failure::internal(&trap)),
    };

    let mut partitions: BTreeMap<u32, PartitionReport> = verdict
        .ranges
        .iter()
        .map(|r| {
            (
                r.partition,
                PartitionReport {
                    requested: r.requested,
                    end: r.end,
                    ..PartitionReport::default()
                },
            )
        })
        .collect();
    let total: u64 = verdict
        .ranges
        .iter()
        .map(|r| r.end.saturating_sub(r.requested))
        .sum();
    let mut progress = Progress::new(total);
    let mut state: HashMap<String, String> = HashMap::new();
    let mut replayed = 0u64;
    let started = Instant::now();
    loop {
        let result = instance.next_batch(&session, args.batch);
        let batch = answer(&mut instance, result)?;
        for record in batch.records {
            let report = partitions.entry(record.partition).or_default();
            report.records += 1;
            match record.value {
                Some(value) => {
                    state.insert(record.key, value);
                }
                None => {
                    report.tombstones += 1;
                    state.remove(&record.key);
                }
            }
            replayed += 1;
        }
        progress.update(replayed);
        if batch.done {
            break;
        }
    }
    progress.finish();
    let elapsed = started.elapsed();
    if let Some(path) = &args.dump_state {
        let sorted: BTreeMap<&String, &String> = state.iter().collect();
        let text = serde_json::to_string(&sorted).map_err(|e| Failure::failed(e.to_string()))?;
        std::fs::write(path, text).map_err(|e| {
            Failure::failed(format!("cannot write state dump {}: {e}", path.display()))
        })?;
    }
    let _ = instance.end_session(session);
    let rate = replayed as f64 / elapsed.as_secs_f64().max(1e-9);
    if args.out.json {
        print_json(&json!({
            "allowed": true,
            "topic": topic,
            "enforced": verdict.boundary.is_some(),
            "boundary": verdict.boundary.as_deref().map(offsets_json),
            "recordsReplayed": replayed,
            "statesRecovered": state.len(),
            "seconds": elapsed.as_secs_f64(),
            "recordsPerSecond": rate,
            "partitions": partitions.iter().map(|(p, r)| json!({
                "partition": p, "from": r.requested, "to": r.end, "records": r.records, "tombstones": r.tombstones
            })).collect::<Vec<_>>(),
        }));
        return Ok(());
    }
    let mode = if verdict.boundary.is_some() {
        "at or above the committed boundary"
    } else {
        "standard recovery, no boundary enforced"
    };
    outln!(
        "Restore of {topic} allowed ({mode}); replayed {} in {:.2} s ({rate:.0} records/s).",
        super::wide::records(replayed),
        elapsed.as_secs_f64()
    );
    let rows: Vec<Vec<String>> = partitions
        .iter()
        .map(|(p, r)| {
            vec![
                p.to_string(),
                format!("[{}, {})", r.requested, r.end),
                r.records.to_string(),
                r.tombstones.to_string(),
            ]
        })
        .collect();
    outln!(
        "{}",
        super::wide::rows_table(
            &["partition", "replayed range", "records", "tombstones"],
            &rows,
            args.out.all
        )
    );
    outln!("{} action states recovered.", state.len());
    Ok(())
}
