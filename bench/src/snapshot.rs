//! Benchmark 6, plan straight from a Flink snapshot: the release CLI's `plan --checkpoint`
//! against the JVM path a user of the Flink Agents Java tool takes (a Flink batch job reading the
//! markers with the State Processor API, `PlanWithStateProcessorApi` in `java/snapshot-fixtures`),
//! both as fresh processes over the committed fixtures in `fixtures/snapshots/`. Every run's
//! output is checked against the case's `expected.json` before its time counts.

mod section;

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::report::Report;
use crate::{Ctx, R, env_usize, fail};
use section::{goals, section_text, table_rows};

/// Flink's own module flags for Java 17 (its `env.java.opts.all`), as `generate` passes them.
pub(crate) const JAVA_OPENS: [&str; 15] = [
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.text=ALL-UNNAMED",
    "--add-opens=java.base/java.time=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED",
];
pub(crate) const JVM_MAIN: &str = "io.actionstate.snapshotfixtures.PlanWithStateProcessorApi";
/// Where a retained checkpoint's `_metadata` points its state handles (absolute paths).
const CHECKPOINT_ROOT: &str = "/flink/checkpoints";
const GNU_TIME: &str = "/usr/bin/time";
/// The one refusal measured per line.
const REFUSAL_CASE: &str = "savepoint-legacy";
const LARGE_CASE: &str = "savepoint-large-markers";

enum Expect {
    Plan(String),
    Error(String),
}

struct Case {
    line: String,
    name: String,
    /// As `expected.json` gives it: relative to the repository root (the working directory of
    /// both sides), and the plan's `sourceRecoveryPoint`.
    checkpoint: String,
    uid: Option<String>,
    uid_hash: String,
    partitions: usize,
    expect: Expect,
}

impl Case {
    fn operator_args(&self) -> [String; 2] {
        match &self.uid {
            Some(uid) => ["--operator-uid".into(), uid.clone()],
            None => ["--operator-uid-hash".into(), self.uid_hash.clone()],
        }
    }
}

fn cases(repo: &Path, lines: &[String]) -> R<Vec<Case>> {
    let mut out = Vec::new();
    for line in lines {
        let dir = repo.join("fixtures/snapshots").join(line);
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| fail(format!("{}: {e}", dir.display())))?
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("expected.json").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let text = std::fs::read_to_string(dir.join(&name).join("expected.json"))?;
            let json: serde_json::Value = serde_json::from_str(&text)?;
            let field = |key: &str| json.get(key).and_then(|v| v.as_str()).map(str::to_owned);
            let (expect, partitions) = match (field("plan"), field("error")) {
                (Some(plan), _) => {
                    let parsed: serde_json::Value = serde_json::from_str(&plan)?;
                    let n = parsed
                        .get("offsets")
                        .and_then(|o| o.as_object())
                        .map_or(0, |o| o.len());
                    (Expect::Plan(plan), n)
                }
                (None, Some(error)) if name == REFUSAL_CASE => (Expect::Error(error), 0),
                _ => continue,
            };
            out.push(Case {
                line: line.clone(),
                checkpoint: field("checkpoint")
                    .ok_or_else(|| fail(format!("{line}/{name}: no checkpoint")))?,
                uid: field("operatorUid"),
                uid_hash: field("operatorUidHash")
                    .ok_or_else(|| fail(format!("{line}/{name}: no operatorUidHash")))?,
                name,
                partitions,
                expect,
            });
        }
    }
    Ok(out)
}

/// One finished process.
struct Run {
    seconds: f64,
    success: bool,
    stdout: String,
    stderr: String,
    /// Peak RSS in KiB (GNU time's `%M`), when measured.
    peak_kib: Option<u64>,
}

/// Runs `argv` in `cwd`, timed from spawn to exit; with `rss`, under `/usr/bin/time -f %M`
/// (one extra exec, so only for runs whose time is long or not counted).
fn spawn_timed(
    argv: &[OsString],
    cwd: &Path,
    envs: &[(&str, &Path)],
    rss: Option<&Path>,
) -> R<Run> {
    let (program, args): (OsString, Vec<OsString>) = match rss {
        Some(file) => {
            let mut args: Vec<OsString> = vec!["-f".into(), "%M".into(), "-o".into(), file.into()];
            args.extend(argv.iter().cloned());
            (GNU_TIME.into(), args)
        }
        None => (argv[0].clone(), argv[1..].to_vec()),
    };
    let mut command = Command::new(program);
    command.args(args).current_dir(cwd).stdin(Stdio::null());
    for (k, v) in envs {
        command.env(k, v);
    }
    let started = Instant::now();
    let output = command.output()?;
    let seconds = started.elapsed().as_secs_f64();
    let peak_kib = match rss {
        // GNU time writes "Command exited with non-zero status N" first when it does.
        Some(file) => std::fs::read_to_string(file)?
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok()),
        None => None,
    };
    Ok(Run {
        seconds,
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        peak_kib,
    })
}

/// The output matches `expected.json`: the exact plan text on stdout, or a failure whose
/// message contains the expected refusal.
fn check(case: &Case, side: &str, run: &Run) -> R<()> {
    let ok = match &case.expect {
        Expect::Plan(plan) => run.success && run.stdout == *plan,
        Expect::Error(error) => !run.success && run.stderr.contains(error.as_str()),
    };
    if ok {
        return Ok(());
    }
    let tail: String = run
        .stderr
        .lines()
        .rev()
        .take(6)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join("\n");
    Err(fail(format!(
        "{side} on {}/{}: output differs from expected.json (exit success {}); stdout:\n{}\nstderr (end):\n{tail}",
        case.line, case.name, run.success, run.stdout
    )))
}

/// The JVM side of one Flink line, built, or why it is not measured.
pub(crate) struct Jvm {
    pub(crate) classpath: String,
}

fn tool_missing(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_or(true, |s| !s.success())
}

/// Builds `java/snapshot-fixtures` for `line` (`mvn -q -P LINE compile
/// dependency:build-classpath`, as its `generate` script does) and returns its classpath.
pub(crate) fn build_jvm(ctx: &Ctx, line: &str) -> Result<Jvm, String> {
    if tool_missing("java", "-version") {
        return Err("`java` not found on the PATH (Java 17 needed)".into());
    }
    if tool_missing("mvn", "-v") {
        return Err("`mvn` (Maven) not found on the PATH".into());
    }
    let project = ctx.repo.join("java/snapshot-fixtures");
    let target = project.join("target").join(line);
    let classpath_file = target.join("classpath.txt");
    eprintln!("bench: snapshot: building java/snapshot-fixtures -P {line} with Maven");
    let output = Command::new("nice")
        .arg("mvn")
        .arg("-q")
        .arg("-f")
        .arg(project.join("pom.xml"))
        .args(["-P", line, "compile", "dependency:build-classpath"])
        .arg(format!("-Dmdep.outputFile={}", classpath_file.display()))
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("mvn: {e}"))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stdout);
        let tail: Vec<&str> = text.lines().rev().take(5).collect();
        return Err(format!(
            "Maven build of java/snapshot-fixtures -P {line} failed: {}",
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ));
    }
    let dependencies = std::fs::read_to_string(&classpath_file)
        .map_err(|e| format!("{}: {e}", classpath_file.display()))?;
    Ok(Jvm {
        classpath: format!(
            "{}:{}",
            target.join("classes").display(),
            dependencies.trim()
        ),
    })
}

/// The JVM command for one case. A retained checkpoint's `_metadata` names its state files by
/// absolute path under `/flink/checkpoints/<job>/`, where the generator wrote them: the JVM reads
/// them there, so the fixture's job directory is bind-mounted over that path in a private mount
/// namespace (`unshare -m`, which then execs the JVM: same process, same peak RSS). Savepoints
/// have relative handles and need nothing.
fn jvm_argv(jvm: &Jvm, repo: &Path, case: &Case) -> Result<Vec<OsString>, String> {
    let mut argv: Vec<OsString> = Vec::new();
    let chk = Path::new(&case.checkpoint);
    let is_checkpoint = chk
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("chk-"));
    if is_checkpoint {
        let job_dir = repo.join(chk.parent().ok_or("checkpoint without a job directory")?);
        let job = job_dir
            .file_name()
            .ok_or("checkpoint without a job directory")?;
        let mount_point = Path::new(CHECKPOINT_ROOT).join(job);
        if !mount_point.is_dir() {
            return Err(format!(
                "its state handles are absolute paths under {}, which does not exist here",
                mount_point.display()
            ));
        }
        if tool_missing("unshare", "--version") {
            return Err("`unshare` not found (needed to bind-mount the checkpoint)".into());
        }
        argv.extend(
            [
                "unshare",
                "-m",
                "sh",
                "-c",
                "mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"",
                "sh",
            ]
            .map(OsString::from),
        );
        argv.push(job_dir.into());
        argv.push(mount_point.into());
    }
    argv.push("java".into());
    argv.extend(JAVA_OPENS.map(OsString::from));
    argv.push("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn".into());
    argv.push("-cp".into());
    argv.push(jvm.classpath.clone().into());
    argv.push(JVM_MAIN.into());
    argv.push("--checkpoint".into());
    argv.push(case.checkpoint.clone().into());
    argv.extend(case.operator_args().map(OsString::from));
    Ok(argv)
}

struct Row {
    case: String,
    line: String,
    partitions: usize,
    cli: Vec<f64>,
    cli_kib: Option<u64>,
    jvm: Vec<f64>,
    jvm_kib: Option<u64>,
    jvm_note: Option<String>,
}

/// The plan command of one fixture, as the CLI and as the JVM tool run it, in the fixture's line.
struct Sides<'a> {
    cli_runs: usize,
    jvm_runs: usize,
    jvms: &'a [(String, Result<Jvm, String>)],
    envs: &'a [(&'a str, &'a Path)],
    rss: Option<&'a Path>,
}

pub fn run(ctx: &Ctx, report: &mut Report) -> R<String> {
    let lines: Vec<String> = std::env::var("ASC_BENCH_SNAPSHOT_LINES")
        .unwrap_or_else(|_| "flink-2.2,flink-1.20".into())
        .split(',')
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect();
    let cli_runs = env_usize("ASC_BENCH_SNAPSHOT_CLI_RUNS", 60)?.max(1);
    let jvm_runs = env_usize("ASC_BENCH_SNAPSHOT_JVM_RUNS", 3)?;
    let cases = cases(&ctx.repo, &lines)?;
    if cases.is_empty() {
        return Err(fail("no snapshot fixtures under fixtures/snapshots"));
    }
    let gnu_time = Path::new(GNU_TIME).is_file();
    let rss_file = ctx.out.join("snapshot-peak-rss.txt");
    let jvms = jvms(ctx, &lines, jvm_runs);
    let sides = Sides {
        cli_runs,
        jvm_runs,
        jvms: &jvms,
        envs: &[("ASC_CACHE_DIR", ctx.cache_dir.as_path())],
        rss: gnu_time.then_some(rss_file.as_path()),
    };
    let mut rows = Vec::new();
    for case in &cases {
        rows.push(measure_case(ctx, case, &sides)?);
    }
    let (table_rows, worst_ratio) = table_rows(&rows);
    goals(report, &rows, worst_ratio);
    Ok(section_text(cli_runs, jvm_runs, gnu_time, &table_rows))
}

/// The JVM tool of each Flink line, or why it cannot run.
fn jvms(ctx: &Ctx, lines: &[String], jvm_runs: usize) -> Vec<(String, Result<Jvm, String>)> {
    let mut jvms = Vec::new();
    for line in lines {
        let jvm = if jvm_runs == 0 {
            Err("ASC_BENCH_SNAPSHOT_JVM_RUNS=0".into())
        } else {
            build_jvm(ctx, line)
        };
        if let Err(why) = &jvm {
            eprintln!("bench: snapshot: JVM side of {line} not measured: {why}");
        }
        jvms.push((line.clone(), jvm));
    }
    jvms
}

/// Every run of one fixture: a warm-up CLI run, then the JVM runs spread between the CLI runs.
fn measure_case(ctx: &Ctx, case: &Case, sides: &Sides) -> R<Row> {
    let (cli_runs, jvm_runs, jvms, envs, rss) = (
        sides.cli_runs,
        sides.jvm_runs,
        sides.jvms,
        sides.envs,
        sides.rss,
    );
    eprintln!("bench: snapshot: {}/{}", case.line, case.name);
    let mut cli_argv: Vec<OsString> = vec![
        ctx.cli.clone().into(),
        "plan".into(),
        "--checkpoint".into(),
        case.checkpoint.clone().into(),
    ];
    cli_argv.extend(case.operator_args().map(OsString::from));
    // One unrecorded, checked CLI run under GNU time: warm-up and peak RSS.
    let warm = spawn_timed(&cli_argv, &ctx.repo, envs, rss)?;
    check(case, "CLI", &warm)?;
    let jvm = jvms
        .iter()
        .find(|(l, _)| *l == case.line)
        .map(|(_, j)| j)
        .ok_or_else(|| fail("no JVM entry"))?;
    let jvm_argv = match jvm {
        Ok(jvm) => jvm_argv(jvm, &ctx.repo, case),
        Err(why) => Err(why.clone()),
    };
    let mut row = Row {
        case: case.name.clone(),
        line: case.line.clone(),
        partitions: case.partitions,
        cli: Vec::new(),
        cli_kib: warm.peak_kib,
        jvm: Vec::new(),
        jvm_kib: None,
        jvm_note: jvm_argv.as_ref().err().cloned(),
    };
    // JVM runs spread over the CLI runs: JVM, a share of CLI runs, JVM, …
    let slots = if jvm_argv.is_ok() { jvm_runs.max(1) } else { 1 };
    for slot in 0..slots {
        if let Ok(argv) = &jvm_argv {
            let r = spawn_timed(argv, &ctx.repo, &[], rss)?;
            check(case, "JVM (State Processor API)", &r)?;
            row.jvm.push(r.seconds);
            row.jvm_kib = row.jvm_kib.max(r.peak_kib);
        }
        let share = cli_runs / slots + usize::from(slot < cli_runs % slots);
        for _ in 0..share {
            let r = spawn_timed(&cli_argv, &ctx.repo, envs, None)?;
            check(case, "CLI", &r)?;
            row.cli.push(r.seconds);
        }
    }
    Ok(row)
}
