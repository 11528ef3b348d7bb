//! Benchmark 2b: apply as an operator runs it — one `action-state-cleanup apply --plan F
//! --control-topic C --bootstrap-servers B --yes --json` process per apply, timed from spawn to
//! exit — against a floor process doing the same Kafka work with no checks (this binary's
//! `floor-process` mode, `floor::fresh`: describe, list earliest and latest offsets,
//! `init_transactions`, one transaction with the COMMITTED record, DeleteRecords, the APPLIED
//! record), spawned and timed the same way. Two cases: the control topic already exists and is
//! empty; and the first apply, which creates its control topic (the floor creates it too).
//!
//! P, the peer the issue measured against, is the same floor written with confluent-kafka
//! (`bench/peer/confluent_floor.py`), one Python process per apply, spawned and timed alike; it
//! runs when `ASC_BENCH_PYTHON` names a Python that imports confluent_kafka (`scripts/bench`
//! makes one, `bench/out/peer-venv`) and only in the first case (it does not create topics).
//! In each round the three sides take turns at going first.
//!
//! Every apply gets a data topic of its own (8 partitions, 120 records each, a plan at offset
//! 100 + partition), all made before the first timed run: making topics and producing records
//! right before a timed run would load the broker during it.

mod section;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use action_state_cleanup::kafka::KafkaSettings;
use action_state_format::control::{Status, render_value};
use action_state_format::offsets::PartitionOffsets;
use action_state_format::plan::Plan;

use crate::floor;
use crate::native::BulkProducer;
use crate::report::Report;
use crate::stats::{Ab, Timing};
use crate::{Ctx, R, env_usize, fail};
use section::section;

const PARTITIONS: u32 = 8;
const RECORDS: u64 = 120;
const PLAN_AT: u64 = 100;
/// The goal: the CLI process within this factor of the floor process (1.5 is its aim).
const PROCESS_FACTOR: f64 = 2.0;

/// The two cases: whether the control topic exists (empty) before the apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Existing,
    Creating,
}

impl Case {
    fn label(self) -> &'static str {
        match self {
            Case::Existing => "control topic exists (empty)",
            Case::Creating => "first apply: creates the control topic",
        }
    }

    fn arg(self) -> &'static str {
        match self {
            Case::Existing => "existing",
            Case::Creating => "creating",
        }
    }
}

/// One apply's topics and plan file.
struct Prepared {
    control: String,
    data: String,
    plan: PathBuf,
}

/// What one CLI apply printed.
struct CliRun {
    timing: Timing,
    requests: String,
}

fn prepare(ctx: &Ctx, case: Case, name: &str) -> R<Prepared> {
    let mut kafka = ctx.kafka()?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis();
    let data = format!("asc-bench-process-{name}-{stamp}");
    let safe = [
        ("cleanup.policy", "compact,delete"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    kafka.create_topic_and_wait(&data, PARTITIONS, 1, &safe)?;
    let producer = BulkProducer::new(ctx)?;
    for p in 0..PARTITIONS {
        for n in 0..RECORDS {
            let value = format!("{{\"step\":{n},\"status\":\"done\"}}");
            producer.send(&data, p as i32, &format!("action-{p}-{n}"), Some(&value))?;
        }
    }
    producer.flush()?;
    let control = format!("{data}-control");
    if case == Case::Existing {
        let configs = [("cleanup.policy", "compact"), ("min.insync.replicas", "1")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()));
        kafka.create_topic_and_wait(&control, 1, 1, &configs)?;
    }
    let topic_id = kafka
        .describe_topics(std::slice::from_ref(&data))?
        .into_iter()
        .next()
        .flatten()
        .ok_or_else(|| fail(format!("topic {data} vanished")))?
        .topic_id;
    let offsets: PartitionOffsets = (0..PARTITIONS)
        .map(|p| (p, PLAN_AT + u64::from(p)))
        .collect();
    let plan = Plan::new(&format!("chk-{name}"), &data, &topic_id, offsets)
        .map_err(|e| fail(e.to_string()))?;
    let path = ctx.out.join("process").join(format!("{name}.json"));
    std::fs::write(&path, plan.render_pretty())?;
    Ok(Prepared {
        control,
        data,
        plan: path,
    })
}

fn bootstrap(ctx: &Ctx) -> R<String> {
    ctx.bootstrap.clone().ok_or_else(|| fail("no broker"))
}

/// One CLI apply process, spawn to exit; `trace` adds `--trace` (its timeline on stderr).
fn cli_apply(ctx: &Ctx, p: &Prepared, trace: bool) -> R<(CliRun, String)> {
    let mut command = Command::new(&ctx.cli);
    command.args(["apply", "--plan"]).arg(&p.plan).args([
        "--control-topic",
        &p.control,
        "--bootstrap-servers",
        &bootstrap(ctx)?,
        "--yes",
        "--json",
    ]);
    if trace {
        command.arg("--trace");
    }
    let started = Instant::now();
    let output = command.output()?;
    let elapsed = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    if !output.status.success() {
        return Err(fail(format!(
            "CLI apply of {} failed ({}): {stdout}{stderr}",
            p.plan.display(),
            output.status
        )));
    }
    let report: serde_json::Value = serde_json::from_str(stdout.trim())?;
    if report["outcome"] != "applied" {
        return Err(fail(format!("CLI apply did not apply: {stdout}")));
    }
    let k = &report["kafkaRequests"];
    let requests = format!(
        "{} / {} / {}",
        k["admin"], k["controlReads"], k["controlWrites"]
    );
    Ok((
        CliRun {
            timing: Timing::total(elapsed),
            requests,
        },
        stderr,
    ))
}

/// The Python that runs the confluent-kafka peer (`ASC_BENCH_PYTHON`), if one is set.
fn peer_python() -> Option<PathBuf> {
    std::env::var_os("ASC_BENCH_PYTHON")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// One confluent-kafka floor process (`bench/peer/confluent_floor.py`), spawn to exit.
fn peer_process(ctx: &Ctx, python: &Path, p: &Prepared) -> R<Timing> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peer/confluent_floor.py");
    let started = Instant::now();
    let output = Command::new(python)
        .arg(&script)
        .args([&bootstrap(ctx)?, &p.data, &p.control])
        .arg(&p.plan)
        .output()?;
    let elapsed = started.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(fail(format!(
            "confluent-kafka floor process failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    for line in String::from_utf8_lossy(&output.stderr).lines() {
        if line.starts_with("floor: ") {
            eprintln!("bench: process: peer {line} (process {elapsed:.3} s)");
        }
    }
    Ok(Timing::total(elapsed))
}

/// One floor process, spawn to exit.
fn floor_process(ctx: &Ctx, case: Case, p: &Prepared) -> R<Timing> {
    let exe = std::env::current_exe()?;
    let started = Instant::now();
    let output = Command::new(exe)
        .args([
            "floor-process",
            case.arg(),
            &bootstrap(ctx)?,
            &p.data,
            &p.control,
        ])
        .arg(&p.plan)
        .output()?;
    let elapsed = started.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(fail(format!(
            "floor process failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    // The floor's own phases, for a look by hand at where its time goes (the log, not the report).
    for line in String::from_utf8_lossy(&output.stderr).lines() {
        if line.starts_with("floor: ") {
            eprintln!(
                "bench: process: {} {line} (process {elapsed:.3} s)",
                case.arg()
            );
        }
    }
    Ok(Timing::total(elapsed))
}

/// The child mode: `floor-process existing|creating BOOTSTRAP DATA CONTROL PLAN_FILE`.
pub fn floor_child(args: &[String]) -> R<()> {
    let [case, bootstrap, data, control, plan] = args else {
        return Err(fail(
            "usage: floor-process existing|creating BOOTSTRAP DATA CONTROL PLAN_FILE",
        ));
    };
    let plan = Plan::parse(&std::fs::read_to_string(plan)?).map_err(|e| fail(e.to_string()))?;
    let settings = KafkaSettings::new(bootstrap);
    let target = floor::Target { data, control };
    let step = floor::Step {
        before: &plan.offsets,
        key: &plan.plan_id,
        committed: &render_value(Status::Committed, &plan),
        applied: &render_value(Status::Applied, &plan),
    };
    let timing = match case.as_str() {
        "existing" => floor::fresh(&settings, &target, &step)?,
        "creating" => floor::fresh_creating(&settings, &target, &step)?,
        other => return Err(fail(format!("unknown floor case {other:?}"))),
    };
    // Where the floor's own time went, for a look by hand (the harness ignores it).
    let phases: Vec<String> = timing
        .phases
        .iter()
        .map(|(name, seconds)| format!("{name} {:.1} ms", seconds * 1000.0))
        .collect();
    eprintln!("floor: {}", phases.join(", "));
    // Exit at once, as the CLI does: the clients' threads are not waited for.
    std::process::exit(0);
}

fn load() -> String {
    crate::load_average()
}

/// One round's topics: the CLI's, the floor's, and the peer's (when the peer runs).
struct RoundTopics {
    cli: Prepared,
    floor: Prepared,
    peer: Option<Prepared>,
}

/// What one case measured: CLI (B) vs floor (A), the CLI vs the peer (A = peer) when it ran.
struct CaseResult {
    case: Case,
    floor: Ab,
    peer: Option<Ab>,
    requests: Vec<String>,
    timeline: String,
}

#[derive(Clone, Copy)]
enum Who {
    Cli,
    Floor,
    Peer,
}

pub fn run(ctx: &Ctx, report: &mut Report) -> R<String> {
    let rounds = env_usize("ASC_BENCH_PROCESS_ROUNDS", 10)?;
    std::fs::create_dir_all(ctx.out.join("process"))?;
    let python = peer_python();
    let cases = [Case::Existing, Case::Creating];
    let with_peer = |case: Case| python.is_some() && case == Case::Existing;
    eprintln!(
        "bench: process: making data topics ({PARTITIONS} partitions × {RECORDS} records){}",
        if python.is_some() {
            ", with the confluent-kafka peer"
        } else {
            "; no confluent-kafka peer (ASC_BENCH_PYTHON unset)"
        }
    );
    let mut prepared: Vec<Vec<RoundTopics>> = Vec::new();
    for case in cases {
        let mut sets = Vec::new();
        // One extra set warms the component cache and the broker; one more is traced.
        for round in 0..rounds + 2 {
            let name = format!("{}-{round}", case.arg());
            sets.push(RoundTopics {
                cli: prepare(ctx, case, &format!("c-{name}"))?,
                floor: prepare(ctx, case, &format!("f-{name}"))?,
                peer: if with_peer(case) {
                    Some(prepare(ctx, case, &format!("p-{name}"))?)
                } else {
                    None
                },
            });
        }
        prepared.push(sets);
    }
    let load_before = load();
    let mut results: Vec<CaseResult> = Vec::new();
    for (case, sets) in cases.into_iter().zip(&prepared) {
        let mut sets = sets.iter();
        let warm = sets.next().ok_or_else(|| fail("no topics"))?;
        cli_apply(ctx, &warm.cli, false)?;
        floor_process(ctx, case, &warm.floor)?;
        if let (Some(python), Some(peer)) = (&python, &warm.peer) {
            peer_process(ctx, python, peer)?;
        }
        let mut floor = Ab::default();
        let mut peer = with_peer(case).then(Ab::default);
        let mut requests = Vec::new();
        for round in 0..rounds {
            let topics = sets.next().ok_or_else(|| fail("too few topics"))?;
            // Each side takes its turn at going first: F, CLI, P; then CLI, P, F; …
            let mut order = vec![Who::Floor, Who::Cli];
            if topics.peer.is_some() {
                order.push(Who::Peer);
            }
            let turn = round % order.len();
            order.rotate_left(turn);
            for who in order {
                match who {
                    Who::Floor => floor.a.0.push(floor_process(ctx, case, &topics.floor)?),
                    Who::Cli => {
                        let (run, _) = cli_apply(ctx, &topics.cli, false)?;
                        floor.b.0.push(run.timing.clone());
                        if let Some(peer) = peer.as_mut() {
                            peer.b.0.push(run.timing);
                        }
                        requests.push(run.requests);
                    }
                    Who::Peer => {
                        if let (Some(python), Some(p), Some(ab)) =
                            (&python, &topics.peer, peer.as_mut())
                        {
                            ab.a.0.push(peer_process(ctx, python, p)?);
                        }
                    }
                }
            }
        }
        let traced = sets.next().ok_or_else(|| fail("too few topics"))?;
        let (_, timeline) = cli_apply(ctx, &traced.cli, true)?;
        eprintln!(
            "bench: process: {}: CLI {} vs floor {}{}",
            case.label(),
            floor.b.summary(),
            floor.a.summary(),
            peer.as_ref()
                .map(|p| format!(" vs confluent-kafka peer {}", p.a.summary()))
                .unwrap_or_default()
        );
        results.push(CaseResult {
            case,
            floor,
            peer,
            requests,
            timeline,
        });
    }
    let load_after = load();
    Ok(section(report, rounds, &results, &load_before, &load_after))
}
