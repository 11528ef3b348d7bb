//! The benchmark harness of action-state-cleanup: component vs native core, apply cost against a
//! real broker, replay throughput and start-up. Run it through `scripts/bench`; see README.md.

mod apply;
mod broker;
mod floor;
mod native;
mod plan;
mod process;
mod python;
mod replay;
mod report;
mod snapshot;
mod startup;
mod stats;
mod stores;
mod wide;
mod wide_topic;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use action_state_cleanup::CLEANUP_COMPONENT;
use action_state_cleanup::cleanup::{CleanupComponent, CleanupInstance, NoEvents};
use action_state_cleanup::engine::new_engine;
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};

use report::Report;

/// A harness error: a message. Anything displayable converts into it, so `?` works on the
/// host's `CapabilityError` (which is not a `std::error::Error`) as on I/O errors.
pub struct Fail(pub String);

impl std::fmt::Debug for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::fmt::Display> From<E> for Fail {
    fn from(error: E) -> Self {
        Fail(error.to_string())
    }
}

pub type R<T> = Result<T, Fail>;

/// An error with a message.
pub fn fail(message: impl Into<String>) -> Fail {
    Fail(message.into())
}

/// A wasmtime (trap or link) error as a harness error.
pub fn w<T>(result: wasmtime::Result<T>) -> R<T> {
    result.map_err(|e| fail(format!("{e:?}")))
}

/// A component call: trap or typed error both end the benchmark with their description.
pub fn call<T, E: std::fmt::Debug>(result: wasmtime::Result<Result<T, E>>) -> R<T> {
    w(result)?.map_err(|e| fail(format!("component returned an error: {e:?}")))
}

/// What every benchmark needs: paths, the broker, the compiled component.
pub struct Ctx {
    pub repo: PathBuf,
    /// Scratch files (gitignored `bench/out`).
    pub out: PathBuf,
    /// The release CLI next to this binary.
    pub cli: PathBuf,
    /// Precompiled-component cache used by this process and by warm CLI runs.
    pub cache_dir: PathBuf,
    pub bootstrap: Option<String>,
    /// State dir of a broker started by `scripts/kafka` for this run (request log, node id 1).
    pub broker_state: Option<PathBuf>,
    pub component: CleanupComponent,
}

impl Ctx {
    /// A component instance whose Kafka capabilities are never called.
    pub fn offline_instance(&self) -> R<CleanupInstance> {
        let kafka = KafkaClients::new(KafkaSettings::new("offline.invalid:9092"))?;
        w(self.component.instantiate(kafka, Box::new(NoEvents)))
    }

    pub fn settings(&self) -> R<KafkaSettings> {
        let bootstrap = self.bootstrap.as_deref().ok_or_else(|| fail("no broker"))?;
        let mut settings = KafkaSettings::new(bootstrap);
        // Extra librdkafka properties for every client of the harness (experiments only).
        if let Ok(extra) = std::env::var("ASC_BENCH_KAFKA_PROPERTIES") {
            for pair in extra.split(',').filter(|p| !p.trim().is_empty()) {
                settings.set_pair(pair).map_err(fail)?;
            }
        }
        Ok(settings)
    }

    pub fn kafka(&self) -> R<KafkaClients> {
        Ok(KafkaClients::new(self.settings()?)?)
    }
}

fn env_usize(name: &str, default: usize) -> R<usize> {
    match std::env::var(name) {
        Ok(text) if !text.trim().is_empty() => {
            let clean: String = text.chars().filter(|c| *c != '_' && *c != ',').collect();
            clean
                .trim()
                .parse()
                .map_err(|_| fail(format!("{name}={text:?} is not a number")))
        }
        _ => Ok(default),
    }
}

const USAGE: &str =
    "usage: action-state-bench [--only plan,apply,process,replay,startup,python,snapshot,stores,wide] [--report FILE]
Environment: ASC_KAFKA_BOOTSTRAP (broker for apply and replay; without it they are skipped),
ASC_BENCH_BROKER_STATE (scripts/kafka state dir of that broker: enables wire-level request counts),
ASC_BENCH_REPLAY_RECORDS (default 1000000), ASC_BENCH_REPLAY_VALUE_BYTES (1024),
ASC_BENCH_REPLAY_ROUNDS (5), ASC_BENCH_APPLY_ROUNDS (5), ASC_BENCH_PROCESS_ROUNDS (10), ASC_BENCH_VERIFY_RUNS (30),
ASC_BENCH_KAFKA_PROPERTIES (k=v,… librdkafka properties for every harness client; experiments),
ASC_BENCH_SNAPSHOT_LINES (flink-2.2,flink-1.20), ASC_BENCH_SNAPSHOT_CLI_RUNS (60),
ASC_BENCH_SNAPSHOT_JVM_RUNS (3; 0 skips the JVM side), ASC_BENCH_WIDE_BOOTSTRAP (the 3-node
cluster of section 7, wide, which only --only wide runs), ASC_BENCH_WIDE_STATE (its state dir),
ASC_BENCH_WIDE_PARTITIONS (5000,10000), ASC_BENCH_WIDE_RECORDS (20), ASC_BENCH_WIDE_ROUNDS (1),
ASC_BENCH_WIDE_REPLICATION (3),
ASC_CACHE_DIR (warm component cache).";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Child modes of the start-up benchmark: one measurement in a fresh process.
    if args.get(1).is_some_and(|a| a.starts_with("probe-")) {
        if let Err(e) = startup::probe(&args[1..]) {
            eprintln!("probe failed: {e:?}");
            std::process::exit(1);
        }
        return;
    }
    // The floor of the process benchmark: one apply's Kafka work in a fresh process.
    if args.get(1).is_some_and(|a| a == "floor-process") {
        if let Err(e) = process::floor_child(&args[2..]) {
            eprintln!("floor-process failed: {e:?}");
            std::process::exit(1);
        }
        return;
    }
    // A wide data topic for experiments by hand (the wide-topic section makes its own).
    if args.get(1).is_some_and(|a| a == "wide-topic") {
        if let Err(e) = wide_topic::prepare_from_args(&args[2..]) {
            eprintln!("wide-topic failed: {e:?}");
            std::process::exit(1);
        }
        return;
    }
    if let Err(e) = run(&args[1..]) {
        eprintln!("bench: error: {e:?}");
        std::process::exit(1);
    }
}

fn run(args: &[String]) -> R<()> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let repo = repo.canonicalize().unwrap_or(repo);
    let Some((only, report_path)) = parse_args(args)? else {
        println!("{USAGE}");
        return Ok(());
    };
    if std::env::var_os("ASC_FAILPOINT").is_some() {
        return Err(fail(
            "unset ASC_FAILPOINT: the harness sets it only for its child processes",
        ));
    }
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("out");
    std::fs::create_dir_all(&out)?;
    let cli = std::env::current_exe()?
        .parent()
        .ok_or_else(|| fail("no exe dir"))?
        .join("action-state-cleanup");
    if !cli.is_file() {
        return Err(fail(format!(
            "{} is missing: build it with cargo build --release -p action-state-cleanup",
            cli.display()
        )));
    }
    refuse_testing_build(&cli)?;
    let cache_dir =
        action_state_cleanup::engine::cache_dir().unwrap_or_else(|| out.join("component-cache"));
    let bootstrap = std::env::var("ASC_KAFKA_BOOTSTRAP")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let broker_state = std::env::var_os("ASC_BENCH_BROKER_STATE").map(PathBuf::from);

    let started = Instant::now();
    let load_at_start = load_average();
    let mut report = Report {
        environment: environment(&repo, &cli, bootstrap.as_deref()),
        ..Report::default()
    };
    let engine = w(new_engine())?;
    let component = w(CleanupComponent::new(&engine, CLEANUP_COMPONENT))?;
    let ctx = Ctx {
        repo,
        out,
        cli,
        cache_dir,
        bootstrap,
        broker_state,
        component,
    };

    for text in sections(&ctx, &only, &mut report)? {
        report.section(text);
    }
    report.goals.sort_by_key(|g| goal_order(&g.goal));
    report.load = Some(format!(
        "Load average (1, 5, 15 min) on {} cores: {load_at_start} at the start, {} at the end.",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    ));
    report.environment.push(format!(
        "Whole run: {:.0} s; load average at the end: {}",
        started.elapsed().as_secs_f64(),
        load_average()
    ));
    let busy = load_average()
        .split_whitespace()
        .next()
        .and_then(|l| l.parse::<f64>().ok())
        .unwrap_or(0.0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    if busy > cores {
        report.environment.push(format!(
            "**Caution:** the machine was busy (load {busy:.1} on {cores:.0} cores): absolute times \
             are inflated and spreads wide; the alternated ratios are the numbers to compare."
        ));
    }
    let text = report.render();
    println!("{text}");
    std::fs::write(&report_path, &text)?;
    eprintln!("bench: wrote {}", report_path.display());
    Ok(())
}

/// `--only` and `--report`; `None` for `--help`.
fn parse_args(args: &[String]) -> R<Option<(Vec<String>, PathBuf)>> {
    let mut only: Vec<String> = [
        "plan", "apply", "process", "replay", "startup", "python", "snapshot", "stores",
    ]
    .map(String::from)
    .to_vec();
    let mut report_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("REPORT.md");
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--only" => {
                let list = rest.next().ok_or_else(|| fail(USAGE))?;
                only = list.split(',').map(|s| s.trim().to_owned()).collect();
            }
            "--report" => report_path = PathBuf::from(rest.next().ok_or_else(|| fail(USAGE))?),
            "-h" | "--help" => return Ok(None),
            other => return Err(fail(format!("unknown argument {other:?}\n{USAGE}"))),
        }
    }
    Ok(Some((only, report_path)))
}

/// Runs the chosen sections and returns their texts in the report's order.
fn sections(ctx: &Ctx, only: &[String], report: &mut Report) -> R<Vec<String>> {
    let mut sections: Vec<(u32, String)> = Vec::new();
    let wants = |name: &str| only.iter().any(|o| o == name);
    if wants("plan") {
        sections.push((1, plan::run(ctx, report)?));
    }
    if wants("startup") {
        sections.push((4, startup::run(ctx, report)?));
    }
    if wants("python") {
        sections.push((5, python::run(ctx, report)?));
    }
    if wants("snapshot") {
        sections.push((6, snapshot::run(ctx, report)?));
    }
    if wants("stores") {
        sections.push((8, stores::run(ctx, report)?));
    }
    // Not in the default set: it needs a 3-node cluster and takes tens of minutes.
    if wants("wide") {
        sections.push((7, wide::run(ctx, report)?));
    }
    for (name, number) in [("apply", 2), ("process", 2), ("replay", 3)] {
        if !wants(name) {
            continue;
        }
        if ctx.bootstrap.is_none() {
            sections.push((
                number,
                format!("## {number}. {name}\n\nSkipped: no broker (ASC_KAFKA_BOOTSTRAP unset).\n"),
            ));
            continue;
        }
        let text = match name {
            "apply" => apply::run(ctx, report)?,
            "process" => process::run(ctx, report)?,
            _ => replay::run(ctx, report)?,
        };
        sections.push((number, text));
    }
    sections.sort_by_key(|(n, _)| *n);
    Ok(sections.into_iter().map(|(_, text)| text).collect())
}

/// The measured CLI must be the shipped one: built without the `testing` feature, whose
/// failpoints and test hooks sit inside the capability calls being timed.
fn refuse_testing_build(cli: &Path) -> R<()> {
    let output = std::process::Command::new(cli).arg("--version").output()?;
    let version = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(fail(format!(
            "{} --version failed: {version}",
            cli.display()
        )));
    }
    if version.lines().any(|l| l.starts_with("build: testing")) {
        return Err(fail(format!(
            "{} was built with the `testing` feature: build it on its own, \
             cargo build --release -p action-state-cleanup (scripts/bench does)",
            cli.display()
        )));
    }
    Ok(())
}

fn goal_order(goal: &str) -> usize {
    // In the order: goal 1 plan, goal 2 apply, goal 3 replay, then the rest.
    [
        "Plan",
        "Fresh apply",
        "Already-applied",
        "Resumed",
        "Replay",
        "`verify`",
        "Snapshot",
        "Wide",
    ]
    .iter()
    .position(|p| goal.starts_with(p))
    .unwrap_or(usize::MAX)
}

pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn environment(repo: &Path, cli: &Path, bootstrap: Option<&str>) -> Vec<String> {
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    let commit = git(&["describe", "--always", "--dirty", "--abbrev=12"])
        .unwrap_or_else(|| "unknown".into());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines().next().map(|l| {
                l.split_whitespace()
                    .nth(1)
                    .unwrap_or("0")
                    .parse::<u64>()
                    .unwrap_or(0)
            })
        })
        .map(|kb| format!("{:.1} GiB", kb as f64 / 1048576.0))
        .unwrap_or_default();
    let date = Command::new("date")
        .arg("-u")
        .arg("+%Y-%m-%d %H:%M UTC")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let (_, librdkafka) = rdkafka::util::get_rdkafka_version();
    vec![
        format!("Date: {date}; commit `{commit}`"),
        format!(
            "Machine: {cpu}, {cores} cores, {memory} RAM (shared with other builds); load average at the start: {}",
            load_average()
        ),
        format!(
            "Builds: release bench binary and CLI `{}`; wasmtime 48.0.8, librdkafka {librdkafka}",
            cli.display()
        ),
        format!(
            "Broker: {}",
            bootstrap.map_or("none (apply and replay skipped)".to_owned(), |b| format!(
                "single-node Kafka 4 (KRaft) at {b}"
            ))
        ),
    ]
}
