//! Benchmark 7: a fresh `apply` of a wide plan (5,000 and 10,000 partitions by default) on a
//! 3-node cluster at replication factor 3, against Kafka's own `kafka-delete-records.sh`
//! (`DeleteRecordsCommand`, JVM start included) deleting the same offsets of an identical topic,
//! in the same run. Both are timed as processes under `/usr/bin/time` (wall, CPU, peak RSS), and
//! every result is checked by an independent reader (Kafka's GetOffsetShell) before it counts.
//!
//! The two topics of one size never exist at once: a node holds one open file per partition
//! replica it has written to, and two 10,000-partition topics at replication factor 3 need more
//! than the 20,000 a process may open here. Each side creates its topic, fills it, runs, is
//! checked, and deletes it; which side goes first alternates between sizes and rounds.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};
use action_state_format::plan::Plan;

use crate::report::{Goal, Report, table};
use crate::stats::{dur, ratio};
use crate::wide_topic::{self, KafkaTools};
use crate::{Ctx, R, env_usize, fail, load_average};

/// Who deletes: this tool's `apply`, or Kafka's `kafka-delete-records.sh`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Apply,
    Peer,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Apply => "apply",
            Side::Peer => "delete-records.sh",
        }
    }
}

/// One timed process: wall and CPU seconds, peak RSS.
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    wall: f64,
    cpu: f64,
    rss_kib: u64,
}

/// One side's run at one size.
struct Run {
    usage: Usage,
    /// Partitions whose beginning the independent reader found at the planned offset.
    verified: usize,
    /// apply: seconds per Kafka capability (ASC_TRACE_KAFKA) with call counts.
    calls: BTreeMap<String, (u32, f64)>,
    /// delete-records.sh: partitions it reported an error for.
    peer_errors: usize,
    /// apply: `status` and `check-recovery` (a marker at the plan's offsets) right after it.
    queries: Option<Queries>,
}

/// The read-only commands after an apply: their usage, and what `status` printed.
struct Queries {
    status: Usage,
    check_recovery: Usage,
    status_text: String,
}

/// The plan's offset of partition `p`: 10 to 16 of the 20 records (the issue's shape).
fn planned(p: u32) -> u64 {
    10 + u64::from(p % 7)
}

/// The section's knobs, from the environment.
struct Settings {
    sizes: Vec<u32>,
    records: u64,
    rounds: usize,
    replication: u16,
    /// The cluster's brokers, as its metadata lists them (the section's text names them).
    nodes: usize,
}

impl Settings {
    fn from_env(bootstrap: &str) -> R<Settings> {
        let sizes = std::env::var("ASC_BENCH_WIDE_PARTITIONS")
            .unwrap_or_else(|_| "5000,10000".into())
            .split(',')
            .map(|s| s.trim().replace('_', "").parse::<u32>())
            .collect::<Result<_, _>>()
            .map_err(|e| fail(format!("ASC_BENCH_WIDE_PARTITIONS: {e}")))?;
        let records = env_usize("ASC_BENCH_WIDE_RECORDS", 20)? as u64;
        if records < 17 {
            return Err(fail(
                "ASC_BENCH_WIDE_RECORDS must be at least 17 (plans delete up to 16)",
            ));
        }
        Ok(Settings {
            sizes,
            records,
            rounds: env_usize("ASC_BENCH_WIDE_ROUNDS", 1)?,
            replication: env_usize("ASC_BENCH_WIDE_REPLICATION", 3)? as u16,
            nodes: wide_topic::node_count(bootstrap)?,
        })
    }
}

/// Both sides at one size in one round.
struct Pair {
    size: u32,
    round: usize,
    first: Side,
    apply: Run,
    peer: Run,
}

impl Pair {
    /// apply's wall time over the peer's.
    fn quotient(&self) -> f64 {
        self.apply.usage.wall / self.peer.usage.wall
    }
}

pub fn run(ctx: &Ctx, report: &mut Report) -> R<String> {
    let Some(bootstrap) = std::env::var("ASC_BENCH_WIDE_BOOTSTRAP")
        .ok()
        .filter(|b| !b.trim().is_empty())
    else {
        return Ok("## 7. Wide topics\n\nSkipped: no 3-node cluster (ASC_BENCH_WIDE_BOOTSTRAP unset; `scripts/bench --only wide` starts one).\n".into());
    };
    let settings = Settings::from_env(&bootstrap)?;
    let load_before = load_average();
    let started = Instant::now();
    let (pairs, failure) = measure(ctx, &bootstrap, &settings)?;
    let load_after = load_average();

    let mut out = String::from("## 7. Wide topics: apply against kafka-delete-records.sh\n\n");
    out.push_str(&runs_table(&settings, &pairs));
    if let Some(error) = &failure {
        eprintln!("bench: wide: stopped: {error}");
        let _ = writeln!(
            out,
            "\n**The measurement stopped** after the rows above: {error}"
        );
    }
    let _ = writeln!(
        out,
        "\nLoad average (1, 5, 15 min) on {} cores: {load_before} before this section, {load_after} after; the section took {:.0} s.\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        started.elapsed().as_secs_f64()
    );
    out.push_str(&traces(&pairs));
    out.push_str(&queries_table(&pairs));
    for size in &settings.sizes {
        let quotients: Vec<f64> = pairs
            .iter()
            .filter(|p| p.size == *size)
            .map(Pair::quotient)
            .collect();
        if quotients.is_empty() {
            report.goals.push(Goal {
                goal: format!(
                    "Wide apply: fresh apply of {size} partitions ({}-node cluster, RF {}) ≤ 1.0× kafka-delete-records.sh",
                    settings.nodes, settings.replication
                ),
                measured: format!(
                    "not measured: {}",
                    failure.as_deref().unwrap_or("no round ran")
                ),
                met: None,
                analysis: String::new(),
            });
            continue;
        }
        let median = crate::stats::median(&quotients);
        report.goals.push(Goal {
            goal: format!(
                "Wide apply: fresh apply of {size} partitions ({}-node cluster, RF {}) ≤ 1.0× kafka-delete-records.sh",
                settings.nodes, settings.replication
            ),
            measured: ratio(median),
            met: Some(median <= 1.0),
            analysis: String::new(),
        });
    }
    Ok(out)
}

/// Every size and round, each side on its own topic; which side goes first alternates.
/// A failure stops the measurement; the pairs measured before it are still reported.
fn measure(ctx: &Ctx, bootstrap: &str, settings: &Settings) -> R<(Vec<Pair>, Option<String>)> {
    let tools = KafkaTools::new(&ctx.repo)?;
    let dir = ctx.out.join("wide");
    std::fs::create_dir_all(&dir)?;
    warm_up(ctx, bootstrap, &dir, settings.replication)?;
    let mut pairs = Vec::new();
    let failure = measure_pairs(ctx, bootstrap, settings, &tools, &dir, &mut pairs)
        .err()
        .map(|e| e.0);
    Ok((pairs, failure))
}

fn measure_pairs(
    ctx: &Ctx,
    bootstrap: &str,
    settings: &Settings,
    tools: &KafkaTools,
    dir: &Path,
    pairs: &mut Vec<Pair>,
) -> R<()> {
    for (index, &size) in settings.sizes.iter().enumerate() {
        for round in 0..settings.rounds {
            let order = if (index + round) % 2 == 0 {
                [Side::Peer, Side::Apply]
            } else {
                [Side::Apply, Side::Peer]
            };
            let (mut apply, mut peer) = (None, None);
            for side in order {
                eprintln!(
                    "bench: wide {size} partitions, round {}: {}",
                    round + 1,
                    side.name()
                );
                let run = one_side(
                    ctx,
                    tools,
                    bootstrap,
                    dir,
                    side,
                    size,
                    settings.records,
                    settings.replication,
                )?;
                match side {
                    Side::Apply => apply = Some(run),
                    Side::Peer => peer = Some(run),
                }
            }
            let (Some(apply), Some(peer)) = (apply, peer) else {
                return Err(fail("a side of the wide benchmark did not run"));
            };
            pairs.push(Pair {
                size,
                round: round + 1,
                first: order[0],
                apply,
                peer,
            });
        }
    }
    Ok(())
}

/// What was measured, and both sides' wall, CPU and peak RSS with the ratio.
fn runs_table(settings: &Settings, pairs: &[Pair]) -> String {
    let Settings {
        records,
        replication,
        nodes,
        ..
    } = *settings;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "A fresh apply (a new control topic, created with `--replication-factor {replication}`) of a plan over every partition of a topic with {records} records per partition, replication factor {replication}, on a {nodes}-node cluster (`scripts/kafka start --brokers {nodes}`), against `kafka-delete-records.sh` (Kafka's `DeleteRecordsCommand` with kafka-run-class.sh's JVM options, JVM start included) deleting the same offsets (10 to 16) of an identical topic, in the same run. Both are processes timed by `/usr/bin/time` (wall, user + system CPU, peak RSS). After each, Kafka's GetOffsetShell reads every partition's beginning; the last column counts the partitions found exactly at the planned offset (apply, then delete-records.sh). The topics are created in parts of {} partitions (Kafka refuses more in one request) and deleted after their run (two such topics exceed the open-file limit of a node). A warm-up apply of 8 partitions ran first (the cluster's first transactional producer creates `__transaction_state`; the CLI's component cache is warm).\n",
        wide_topic::PARTITIONS_PER_REQUEST
    );
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .map(|pair| {
            let (size, apply, peer) = (pair.size, &pair.apply, &pair.peer);
            vec![
                format!("{size}"),
                format!("{}", pair.round),
                format!("{} first", pair.first.name()),
                dur(apply.usage.wall),
                dur(apply.usage.cpu),
                format!("{:.0} MiB", apply.usage.rss_kib as f64 / 1024.0),
                dur(peer.usage.wall),
                dur(peer.usage.cpu),
                format!("{:.0} MiB", peer.usage.rss_kib as f64 / 1024.0),
                ratio(pair.quotient()),
                format!(
                    "{}/{size} and {}/{size}{}",
                    apply.verified,
                    peer.verified,
                    if peer.peer_errors > 0 {
                        format!(" (delete-records.sh reported {} errors)", peer.peer_errors)
                    } else {
                        String::new()
                    }
                ),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "partitions",
            "round",
            "order",
            "apply wall",
            "apply CPU",
            "apply peak RSS",
            "delete-records.sh wall",
            "its CPU",
            "its peak RSS",
            "apply ÷ peer (wall)",
            "verified",
        ],
        &rows,
    ));
    out
}

/// Where each apply's wall clock went, per Kafka capability.
fn traces(pairs: &[Pair]) -> String {
    let mut out = String::from(
        "Where each apply's wall clock went (`ASC_TRACE_KAFKA=1`: seconds in each capability, calls in parentheses; the rest is outside any Kafka call):\n\n",
    );
    for pair in pairs {
        let calls = &pair.apply.calls;
        let inside: f64 = calls.values().map(|(_, s)| s).sum();
        let parts: Vec<String> = calls
            .iter()
            .map(|(name, (n, s))| format!("{name} {} ({n})", dur(*s)))
            .collect();
        let _ = writeln!(
            out,
            "- {} partitions, round {}: {}; outside: {}",
            pair.size,
            pair.round,
            parts.join(", "),
            dur(pair.apply.usage.wall - inside)
        );
    }
    out
}

/// The CPU of `status` and `check-recovery` after each apply, and the first `status` output.
fn queries_table(pairs: &[Pair]) -> String {
    let mut out = String::from(
        "\nCPU of the commands whose CPU grew with the square of the partitions before issue 26 (user + system, wall in parentheses), each a process right after the apply, against the same topic and control topic:\n\n",
    );
    let with_queries = || {
        pairs
            .iter()
            .filter_map(|pair| pair.apply.queries.as_ref().map(|q| (pair, q)))
    };
    let rows: Vec<Vec<String>> = with_queries()
        .map(|(pair, q)| {
            vec![
                format!("{}", pair.size),
                format!("{}", pair.round),
                dur(pair.apply.usage.cpu),
                format!("{} ({})", dur(q.status.cpu), dur(q.status.wall)),
                format!(
                    "{} ({})",
                    dur(q.check_recovery.cpu),
                    dur(q.check_recovery.wall)
                ),
                format!("{} lines", q.status_text.lines().count()),
            ]
        })
        .collect();
    out.push_str(&table(
        &[
            "partitions",
            "round",
            "apply CPU",
            "status CPU",
            "check-recovery CPU",
            "status output",
        ],
        &rows,
    ));
    if let Some((pair, q)) = with_queries().next() {
        let _ = writeln!(
            out,
            "\n`status` of the {}-partition topic after its apply (the topic name includes a timestamp):\n\n```\n{}\n```",
            pair.size,
            q.status_text.trim_end()
        );
    }
    out
}

/// Applies an 8-partition plan once, unmeasured: the cluster's first transactional producer
/// creates `__transaction_state`, a fixed cost of a cluster's first apply ever.
fn warm_up(ctx: &Ctx, bootstrap: &str, dir: &Path, replication: u16) -> R<()> {
    let topic = format!("asc-bench-wide-warm-{}", stamp());
    wide_topic::create(bootstrap, &topic, 8, replication, &[])?;
    wide_topic::fill(bootstrap, &topic, 8, 20)?;
    let plan = plan_file(bootstrap, dir, &topic, 8)?;
    let usage = apply(
        ctx,
        bootstrap,
        &plan,
        &format!("{topic}-control"),
        replication,
        dir,
    )?;
    eprintln!("bench: wide warm-up apply took {}", dur(usage.0.wall));
    wide_topic::delete(bootstrap, &topic)?;
    Ok(())
}

fn stamp() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

#[allow(clippy::too_many_arguments, reason = "one benchmark step, spelt out")]
fn one_side(
    ctx: &Ctx,
    tools: &KafkaTools,
    bootstrap: &str,
    dir: &Path,
    side: Side,
    size: u32,
    records: u64,
    replication: u16,
) -> R<Run> {
    let tag = match side {
        Side::Apply => "a",
        Side::Peer => "p",
    };
    let topic = format!("asc-bench-wide-{tag}-{size}-{}", stamp());
    let filled = Instant::now();
    wide_topic::create(
        bootstrap,
        &topic,
        size,
        replication,
        &[("file.delete.delay.ms", "1000")],
    )?;
    wide_topic::fill(bootstrap, &topic, size, records)?;
    eprintln!(
        "bench: {topic} created and filled in {}",
        dur(filled.elapsed().as_secs_f64())
    );
    let mut run = match side {
        Side::Apply => {
            let plan = plan_file(bootstrap, dir, &topic, size)?;
            let (usage, calls) = apply(
                ctx,
                bootstrap,
                &plan,
                &format!("{topic}-control"),
                replication,
                dir,
            )?;
            let queries = queries(ctx, bootstrap, dir, &topic, size)?;
            Run {
                usage,
                verified: 0,
                calls,
                peer_errors: 0,
                queries: Some(queries),
            }
        }
        Side::Peer => peer(tools, bootstrap, dir, &topic, size)?,
    };
    let beginnings = wide_topic::beginnings_by_kafka(tools, bootstrap, &topic)?;
    run.verified = (0..size)
        .filter(|p| beginnings.get(p) == Some(&planned(*p)))
        .count();
    if run.verified != size as usize && side == Side::Apply {
        return Err(fail(format!(
            "apply left {} of {size} partitions of {topic} away from the plan",
            size as usize - run.verified
        )));
    }
    wide_topic::delete(bootstrap, &topic)?;
    if side == Side::Apply {
        wide_topic::delete(bootstrap, &format!("{topic}-control"))?;
    }
    wait_until_removed(&topic)?;
    Ok(run)
}

/// Waits until no node keeps a directory of `topic` (`ASC_BENCH_WIDE_STATE`, the cluster's
/// state dir): its files, open until then, must be closed before the next topic is filled.
fn wait_until_removed(topic: &str) -> R<()> {
    let Some(state) = std::env::var_os("ASC_BENCH_WIDE_STATE") else {
        return Ok(());
    };
    let started = Instant::now();
    loop {
        let mut left = 0usize;
        for node in std::fs::read_dir(&state)? {
            let node = node?.path();
            let is_data = node
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("data-"));
            if !is_data {
                continue;
            }
            for entry in std::fs::read_dir(&node)? {
                if entry?.file_name().to_string_lossy().starts_with(topic) {
                    left += 1;
                }
            }
        }
        if left == 0 {
            return Ok(());
        }
        if started.elapsed().as_secs() > 600 {
            return Err(fail(format!(
                "{left} directories of {topic} are still on disk 600 s after its deletion"
            )));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// The topic ID of `topic`, as the cluster describes it.
fn topic_id(bootstrap: &str, topic: &str) -> R<String> {
    let mut kafka = KafkaClients::new(KafkaSettings::new(bootstrap))?;
    Ok(kafka
        .describe_topics(&[topic.to_owned()])?
        .into_iter()
        .next()
        .flatten()
        .ok_or_else(|| fail(format!("{topic} vanished")))?
        .topic_id)
}

/// The plan of every partition of `topic` at `planned`, written where the CLI reads it.
fn plan_file(bootstrap: &str, dir: &Path, topic: &str, size: u32) -> R<std::path::PathBuf> {
    let id = topic_id(bootstrap, topic)?;
    let offsets = (0..size).map(|p| (p, planned(p))).collect();
    let plan = Plan::new("bench-wide", topic, &id, offsets).map_err(|e| fail(e.to_string()))?;
    let path = dir.join(format!("{topic}.plan.json"));
    std::fs::write(&path, plan.render_pretty())?;
    Ok(path)
}

/// `status` and `check-recovery` of the applied topic, each timed as a process: the CPU the
/// issue measured growing with the square of the partitions, and the summary an operator reads.
fn queries(ctx: &Ctx, bootstrap: &str, dir: &Path, topic: &str, size: u32) -> R<Queries> {
    let control = format!("{topic}-control");
    let mut status = Command::new(&ctx.cli);
    status
        .args([
            "status",
            "--control-topic",
            &control,
            "--bootstrap-servers",
            bootstrap,
        ])
        .env("ASC_CACHE_DIR", &ctx.cache_dir);
    let (status_usage, output) = timed(status, dir)?;
    let status_text = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(fail(format!("status failed: {status_text}")));
    }
    let id = topic_id(bootstrap, topic)?;
    let offsets: Vec<String> = (0..size)
        .map(|p| format!("\"{p}\":{}", planned(p)))
        .collect();
    let marker = dir.join(format!("{topic}.marker.json"));
    std::fs::write(
        &marker,
        format!(
            "{{\"schemaVersion\":1,\"topic\":\"{topic}\",\"topicId\":\"{id}\",\"offsets\":{{{}}}}}",
            offsets.join(",")
        ),
    )?;
    let mut check = Command::new(&ctx.cli);
    check
        .arg("check-recovery")
        .arg("--markers")
        .arg(&marker)
        .args([
            "--control-topic",
            &control,
            "--bootstrap-servers",
            bootstrap,
        ])
        .env("ASC_CACHE_DIR", &ctx.cache_dir);
    let (check_usage, output) = timed(check, dir)?;
    if !output.status.success() {
        return Err(fail(format!(
            "check-recovery failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(Queries {
        status: status_usage,
        check_recovery: check_usage,
        status_text,
    })
}

/// `command` under `/usr/bin/time`: its wall and CPU seconds and peak RSS, and its output.
fn timed(command: Command, dir: &Path) -> R<(Usage, std::process::Output)> {
    let times = dir.join("time.txt");
    let program = command.get_program().to_owned();
    let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
    let mut wrapped = Command::new("/usr/bin/time");
    wrapped
        .arg("-o")
        .arg(&times)
        .args(["-f", "%e %U %S %M"])
        .arg(program)
        .args(args);
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    let output = wrapped.output()?;
    let text = std::fs::read_to_string(&times)?;
    let fields: Vec<f64> = text
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .map(|f| f.parse::<f64>().unwrap_or(f64::NAN))
        .collect();
    let [wall, user, system, rss] = fields[..] else {
        return Err(fail(format!("unexpected /usr/bin/time output {text:?}")));
    };
    Ok((
        Usage {
            wall,
            cpu: user + system,
            rss_kib: rss as u64,
        },
        output,
    ))
}

type Calls = BTreeMap<String, (u32, f64)>;

/// The release CLI's apply of `plan`, traced; fails unless it ends APPLIED.
fn apply(
    ctx: &Ctx,
    bootstrap: &str,
    plan: &Path,
    control: &str,
    replication: u16,
    dir: &Path,
) -> R<(Usage, Calls)> {
    let mut command = Command::new(&ctx.cli);
    command
        .arg("apply")
        .arg("--plan")
        .arg(plan)
        .args([
            "--control-topic",
            control,
            "--bootstrap-servers",
            bootstrap,
            "--yes",
        ])
        .args(["--replication-factor", &replication.to_string()])
        .env("ASC_TRACE_KAFKA", "1")
        .env("ASC_CACHE_DIR", &ctx.cache_dir)
        .env_remove("ASC_FAILPOINT");
    let (usage, output) = timed(command, dir)?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() || !stdout.contains("is APPLIED") {
        return Err(fail(format!(
            "apply of {} failed ({:?}):\n{stdout}\n{}",
            plan.display(),
            output.status.code(),
            stderr
                .lines()
                .filter(|l| !l.starts_with("kafka: "))
                .collect::<Vec<_>>()
                .join("\n")
        )));
    }
    Ok((usage, trace(&stderr)))
}

/// Seconds and calls per capability from `ASC_TRACE_KAFKA` lines (`kafka: NAME … N ms: …`).
fn trace(stderr: &str) -> Calls {
    let mut calls = Calls::new();
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix("kafka: ") else {
            continue;
        };
        let Some((call, _)) = rest.split_once(" ms: ") else {
            continue;
        };
        let Some((head, ms)) = call.rsplit_once(' ') else {
            continue;
        };
        let name = head.split_whitespace().next().unwrap_or(head).to_owned();
        let seconds = ms.parse::<f64>().unwrap_or(0.0) / 1000.0;
        let entry = calls.entry(name).or_default();
        entry.0 += 1;
        entry.1 += seconds;
    }
    calls
}

/// `kafka-delete-records.sh --offset-json-file F`: Kafka's DeleteRecordsCommand in a JVM.
fn peer(tools: &KafkaTools, bootstrap: &str, dir: &Path, topic: &str, size: u32) -> R<Run> {
    let mut json = String::from("{\"partitions\":[");
    for p in 0..size {
        if p > 0 {
            json.push(',');
        }
        let _ = write!(
            json,
            "{{\"topic\":\"{topic}\",\"partition\":{p},\"offset\":{}}}",
            planned(p)
        );
    }
    json.push_str("],\"version\":1}");
    let offsets = dir.join(format!("{topic}.offsets.json"));
    std::fs::write(&offsets, json)?;
    let mut command = tools.command("org.apache.kafka.tools.DeleteRecordsCommand");
    command
        .args(["--bootstrap-server", bootstrap, "--offset-json-file"])
        .arg(&offsets);
    let (usage, output) = timed(command, dir)?;
    if !output.status.success() {
        return Err(fail(format!(
            "kafka-delete-records.sh failed ({:?}): {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let peer_errors = stdout.lines().filter(|l| l.contains("error:")).count();
    Ok(Run {
        usage,
        verified: 0,
        calls: Calls::new(),
        peer_errors,
        queries: None,
    })
}

#[cfg(test)]
mod tests {
    use super::trace;

    #[test]
    fn trace_lines_are_summed_per_capability() {
        let text = "kafka: describe [\"t\"] 12 ms: ok\nkafka: delete-records t 900 ms: ok\nkafka: delete-records t 100 ms: ok\nPlan …\n";
        let calls = trace(text);
        assert_eq!(calls["describe"], (1, 0.012));
        assert_eq!(calls["delete-records"], (2, 1.0));
    }
}
