//! End-to-end: apply as a scheduler runs it (issue 37) — no terminal, every setting from the
//! environment (`ASC_BOOTSTRAP_SERVERS`, `ASC_CONTROL_TOPIC`, `ASC_KAFKA_CONFIG`, `ASC_PLAN`,
//! `ASC_YES`, `ASC_MAX_DELETE_FRACTION`, `ASC_METRICS_FILE`), the command line of the README's
//! CronJob and systemd unit: `action-state-cleanup apply --json`. Run twice, the second run is a
//! no-op with exit 0; the metrics file says what each run did. A plan that would delete more
//! than `--max-delete-records` or `--max-delete-fraction` allow is refused with exit 3 before
//! anything durable (not even the control topic is created), in a dry run too, and the metrics
//! file records the failed run while keeping the last success.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use support::*;

/// The settings a scheduled job would hold in its environment (no secret on the command line).
const SETTINGS: [&str; 15] = [
    "ASC_BOOTSTRAP_SERVERS",
    "ASC_CONTROL_TOPIC",
    "ASC_KAFKA_CONFIG",
    "ASC_PLAN",
    "ASC_YES",
    "ASC_MAX_DELETE_RECORDS",
    "ASC_MAX_DELETE_FRACTION",
    "ASC_METRICS_FILE",
    "ASC_TIMEOUT",
    "ASC_REPLICATION_FACTOR",
    "ASC_RETAINED",
    "ASC_EXCLUDE",
    "ASC_OPERATOR_UID",
    "ASC_OPERATOR_UID_HASH",
    "ASC_FLINK_CONFIG",
];

/// `action-state-cleanup ARGS` with stdin not a terminal and exactly `env` of the settings.
fn scheduled(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(CLI);
    command
        .args(args)
        .stdin(Stdio::null())
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_LIE");
    for name in SETTINGS {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("the CLI runs")
}

/// Seconds since the Unix epoch of an RFC 3339 UTC time as `status --json` writes it
/// (`2026-12-05T03:30:12.345Z`), computed here independently of the CLI's formatter.
fn unix_seconds(at: &str) -> f64 {
    let number = |range: std::ops::Range<usize>| -> i64 { at[range].parse().unwrap() };
    assert!(at.len() == 24 && at.ends_with('Z'), "{at}");
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    // Days from 1970-01-01, counting leap years (every 4th, not every 100th, every 400th).
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let month_days = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let days: i64 = (1970..year)
        .map(|y| if leap(y) { 366 } else { 365 })
        .sum::<i64>()
        + month_days[..(month - 1) as usize].iter().sum::<i64>()
        + day
        - 1;
    let seconds = days * 86_400 + number(11..13) * 3600 + number(14..16) * 60 + number(17..19);
    seconds as f64 + number(20..23) as f64 / 1000.0
}

/// The value of one series of the metrics file (`NAME{...} VALUE`, `NAME` without the prefix).
fn metric(path: &Path, name: &str) -> f64 {
    let text = std::fs::read_to_string(path).unwrap();
    let series = format!("action_state_cleanup_apply_{name}{{");
    text.lines()
        .find(|line| line.starts_with(&series))
        .and_then(|line| line.rsplit(' ').next())
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in:\n{text}"))
}

#[test]
fn the_documented_scheduled_apply_runs_twice_and_the_second_run_changes_nothing() {
    let dir = scratch("unattended");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let metrics = dir.join("action-state-cleanup.prom");
    // The Kafka tools' client.properties, as a Secret would mount it (here: no credentials).
    let config = dir.join("client.properties");
    std::fs::write(&config, "client.id=nightly-cleanup\n").unwrap();
    let env = [
        ("ASC_BOOTSTRAP_SERVERS", bootstrap()),
        ("ASC_CONTROL_TOPIC", control.as_str()),
        ("ASC_KAFKA_CONFIG", config.to_str().unwrap()),
        ("ASC_PLAN", plan.to_str().unwrap()),
        ("ASC_YES", "true"),
        ("ASC_MAX_DELETE_FRACTION", "0.9"),
        ("ASC_METRICS_FILE", metrics.to_str().unwrap()),
    ];

    // C1 keeps 150 and 60: 210 of the 240 records go (87.5 %, under the 90 % allowed).
    let first = scheduled(&["apply", "--json"], &env);
    expect_code(&first, 0);
    let report = json_doc(&first);
    assert_eq!(report["outcome"], "applied", "{report}");
    assert_eq!(report["recordsDeleted"], 210, "{report}");
    assert!(report["durationMs"].as_u64().unwrap() > 0, "{report}");
    assert!(stderr(&first).is_empty(), "{}", stderr(&first));
    assert_eq!(
        beginnings(&mut kafka(), &topic, &[0, 1]),
        [(0, 150), (1, 60)]
    );
    assert_eq!(metric(&metrics, "last_run_exit_code"), 0.0);
    assert_eq!(metric(&metrics, "last_run_records_deleted"), 210.0);
    let first_success = metric(&metrics, "last_success_timestamp_seconds");
    assert!(first_success > 1.7e9, "a Unix time: {first_success}");
    let text = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        text.contains(&format!(
            "action_state_cleanup_apply_last_run_info{{control_topic=\"{control}\",topic=\"{topic}\","
        )) && text.contains("outcome=\"applied\"} 1\n")
            && text.contains("# TYPE action_state_cleanup_apply_last_run_exit_code gauge\n"),
        "{text}"
    );

    // `status` says when the plan was COMMITTED and APPLIED (the control records' Kafka
    // timestamps, taken during the run just made) and which recovery point the boundary is from.
    let status = scheduled(&["status", "--json"], &env);
    expect_code(&status, 0);
    let status = json_doc(&status);
    let operation = &status["operations"][0];
    let plan_id = operation["planId"].as_str().unwrap();
    for field in ["committedAt", "appliedAt"] {
        let at = operation[field]
            .as_str()
            .unwrap_or_else(|| panic!("{field}: {status}"));
        let seconds = unix_seconds(at);
        assert!(
            (first_success - 120.0..=first_success + 1.0).contains(&seconds),
            "{field} {at} is not the run's time ({first_success}): {status}"
        );
    }
    assert_eq!(
        status["boundaryOrigins"],
        serde_json::json!({ "0": plan_id, "1": plan_id }),
        "{status}"
    );
    let text = stdout(&scheduled(&["status"], &env));
    assert!(
        text.contains(&format!(
            "      committed {}, applied {}",
            operation["committedAt"].as_str().unwrap(),
            operation["appliedAt"].as_str().unwrap()
        )) && text.contains(&format!("  from C1 (plan {plan_id}) on partitions [0, 1]")),
        "{text}"
    );

    // The same run again, as the next night's: nothing to do, exit 0, nothing deleted.
    let second = scheduled(&["apply", "--json"], &env);
    expect_code(&second, 0);
    let report = json_doc(&second);
    assert_eq!(report["outcome"], "already-applied", "{report}");
    assert_eq!(report["recordsDeleted"], 0, "{report}");
    assert_eq!(metric(&metrics, "last_run_exit_code"), 0.0);
    assert_eq!(metric(&metrics, "last_run_records_deleted"), 0.0);
    assert!(metric(&metrics, "last_success_timestamp_seconds") >= first_success);

    // Without ASC_YES nobody consented: refused before Kafka (exit 2), and the metrics say so.
    let without_yes: Vec<(&str, &str)> = env
        .iter()
        .copied()
        .filter(|(name, _)| *name != "ASC_YES")
        .collect();
    expect_code(&scheduled(&["apply", "--json"], &without_yes), 2);
    assert_eq!(metric(&metrics, "last_run_exit_code"), 2.0);
    assert!(metric(&metrics, "last_success_timestamp_seconds") >= first_success);
}

#[test]
fn a_plan_deleting_more_than_the_limits_allow_is_refused_before_anything_durable() {
    let dir = scratch("unattended-guard");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let metrics = dir.join("cleanup.prom");
    // An earlier success the file remembers.
    std::fs::write(
        &metrics,
        format!(
            "action_state_cleanup_apply_last_success_timestamp_seconds{{control_topic=\"{control}\"}} 1700000000.000\n"
        ),
    )
    .unwrap();
    let base = [
        ("ASC_BOOTSTRAP_SERVERS", bootstrap()),
        ("ASC_CONTROL_TOPIC", control.as_str()),
        ("ASC_PLAN", plan.to_str().unwrap()),
        ("ASC_YES", "1"),
        ("ASC_METRICS_FILE", metrics.to_str().unwrap()),
    ];
    let with = |extra: (&'static str, &'static str)| {
        let mut env = base.to_vec();
        env.push(extra);
        env
    };
    let cases = [
        (
            with(("ASC_MAX_DELETE_RECORDS", "200")),
            "more than --max-delete-records 200",
        ),
        (
            with(("ASC_MAX_DELETE_FRACTION", "0.5")),
            "more than --max-delete-fraction 0.5 (50.0 %)",
        ),
    ];
    for (env, limit) in cases {
        for dry_run in [true, false] {
            let args: &[&str] = if dry_run {
                &["apply", "--json", "--dry-run"]
            } else {
                &["apply", "--json"]
            };
            let output = scheduled(args, &env);
            expect_code(&output, 3);
            let error = &json_doc(&output)["error"];
            let message = error["message"].as_str().unwrap();
            let plan_id = json_doc(&scheduled(
                &["verify", "--plan", plan.to_str().unwrap(), "--json"],
                &[],
            ))["planId"]
                .as_str()
                .unwrap()
                .to_owned();
            assert_eq!(
                message,
                format!(
                    "plan {plan_id} would delete 210 records of topic {topic} (87.5 % of the 240 it holds), {limit}"
                )
            );
            assert!(
                error["hint"]
                    .as_str()
                    .unwrap()
                    .starts_with("nothing was committed"),
                "{error}"
            );
            assert_eq!(metric(&metrics, "last_run_exit_code"), 3.0);
            assert_eq!(metric(&metrics, "last_run_records_deleted"), 0.0);
            assert_eq!(
                metric(&metrics, "last_success_timestamp_seconds"),
                1_700_000_000.0
            );
        }
    }
    // Nothing durable: the records are all there and the control topic was never created.
    let mut kafka = kafka();
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 0), (1, 0)]);
    assert!(
        kafka
            .describe_topics(std::slice::from_ref(&control))
            .unwrap()[0]
            .is_none(),
        "the control topic was not created"
    );
    // A limit that is not a fraction is a usage error.
    let output = scheduled(&["apply", "--max-delete-fraction", "2"], &base);
    expect_code(&output, 2);
    assert!(
        stderr(&output).contains("a fraction between 0 and 1 is needed"),
        "{}",
        stderr(&output)
    );
}

/// `apply --retained` plans in the run itself: a recovery point that cannot be planned (here:
/// none has the operator named) stops the run with exit 3 before Kafka is contacted (the
/// bootstrap address is unreachable), naming the point, and the metrics file records the
/// failure, so a schedule whose retained points went wrong alerts instead of deleting.
#[test]
fn a_scheduled_apply_whose_retained_point_cannot_be_planned_stops_before_kafka() {
    let dir = scratch("unattended-retained");
    let metrics = dir.join("cleanup.prom");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/snapshots/retained/flink-2.2")
        .canonicalize()
        .unwrap();
    let retained = format!(
        "{},{}",
        fixtures.join("checkpoints").display(),
        fixtures.join("savepoints").display()
    );
    let env = [
        ("ASC_BOOTSTRAP_SERVERS", "127.0.0.1:1"),
        ("ASC_CONTROL_TOPIC", "never-created"),
        ("ASC_RETAINED", retained.as_str()),
        ("ASC_OPERATOR_UID", "no-such-operator"),
        ("ASC_YES", "true"),
        ("ASC_METRICS_FILE", metrics.to_str().unwrap()),
        ("ASC_TIMEOUT", "3"),
    ];
    let output = scheduled(&["apply", "--json"], &env);
    expect_code(&output, 3);
    let error = &json_doc(&output)["error"];
    let message = error["message"].as_str().unwrap();
    let first_point = fixtures.join("checkpoints/00000000000000000000000000002121/chk-4");
    assert!(
        message.starts_with(&format!(
            "retained recovery point {}: ",
            first_point.display()
        )) && message.contains("no-such-operator"),
        "{error}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .starts_with("nothing was planned"),
        "{error}"
    );
    assert_eq!(metric(&metrics, "last_run_exit_code"), 3.0);
    assert_eq!(metric(&metrics, "last_run_records_deleted"), 0.0);

    // A plan file and --retained at once is a usage error: which plan is meant is unclear.
    let both = scheduled(
        &["apply", "--plan", "cleanup-plan.json", "--json"],
        &env[..6],
    );
    expect_code(&both, 2);
}
