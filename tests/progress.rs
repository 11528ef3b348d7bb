//! End-to-end: what the operator hears while the CLI waits for Kafka (issue 38 item 3). A
//! request that waits (a refused port, a dead leader) is reported in the CLI's words within
//! about 2 s, not after its whole timeout; librdkafka's own log lines (`%3|…|FAIL|…`) stay off
//! stderr unless `--debug` asks for them.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::*;

/// A port on 127.0.0.1 where nothing listens: bound by the OS, then released.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Runs the CLI and reads its stderr line by line as it comes: each line with when it came.
fn stderr_lines(args: &[&str]) -> (Vec<(Duration, String)>, Option<i32>) {
    let started = Instant::now();
    let mut child = Command::new(CLI)
        .args(args)
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_LIE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map(|line| (started.elapsed(), line.unwrap()))
        .collect();
    (lines, child.wait().unwrap().code())
}

#[test]
fn a_refused_port_is_reported_in_the_clis_words_while_the_request_waits() {
    let port = closed_port();
    let servers = format!("127.0.0.1:{port}");
    // --timeout 9: each request may wait 3 s, the step 9 s; the old CLI said nothing until the
    // first request had timed out.
    let (lines, code) = stderr_lines(&[
        "status",
        "--bootstrap-servers",
        &servers,
        "--control-topic",
        "any",
        "--timeout",
        "9",
    ]);
    let text: Vec<&str> = lines.iter().map(|(_, line)| line.as_str()).collect();
    assert_eq!(code, Some(4), "{text:#?}");
    let progress = text
        .iter()
        .position(|line| line.starts_with("progress: "))
        .unwrap_or_else(|| panic!("no progress line: {text:#?}"));
    let error = text
        .iter()
        .position(|line| line.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line: {text:#?}"));
    assert!(progress < error, "progress after the error: {text:#?}");
    // The line says how long the request has waited (2 s: it came while the request waited, not
    // when it ended) and why: the refused connection, named.
    let line = text[progress];
    assert!(
        line.contains("describe of any")
            && line.contains("waiting for the brokers' answer for 2 s")
            && line.contains(&format!(
                "no broker reachable yet: _TRANSPORT: 127.0.0.1:{port}/bootstrap: Connect to ipv4#127.0.0.1:{port} failed: Connection refused"
            )),
        "{line}"
    );
    assert!(
        !text.iter().any(|line| line.starts_with('%')),
        "a raw librdkafka line: {text:#?}"
    );
    eprintln!(
        "first progress line after {:.1} s (the error after {:.1} s): {line}",
        lines[progress].0.as_secs_f64(),
        lines[error].0.as_secs_f64()
    );
}

#[test]
fn librdkafka_log_lines_reach_stderr_only_with_debug() {
    let servers = format!("127.0.0.1:{}", closed_port());
    let args = [
        "status",
        "--bootstrap-servers",
        &servers,
        "--control-topic",
        "any",
        "--timeout",
        "3",
    ];
    let quiet = cli(&args);
    expect_code(&quiet, 4);
    let text = stderr(&quiet);
    assert!(
        !text.contains("librdkafka") && !text.contains("%3|"),
        "{text}"
    );
    let mut debug_args = args.to_vec();
    debug_args.push("--debug");
    let debug = cli(&debug_args);
    expect_code(&debug, 4);
    let text = stderr(&debug);
    assert!(
        text.lines()
            .any(|line| line.starts_with("librdkafka ") && line.contains("Connection refused")),
        "{text}"
    );
}

#[test]
fn with_one_bootstrap_broker_of_two_down_no_raw_client_log_line_reaches_stderr() {
    let dir = scratch("one-bootstrap-down");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    expect_code(
        &cli(&[
            "apply",
            "--yes",
            "--plan",
            plan.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
        ]),
        0,
    );
    // The dead one first: the consumer that reads the control topic tries it (librdkafka's
    // consumers printed `%3|…|FAIL|rdkafka#consumer-2| … Connection refused` here).
    let servers = format!("127.0.0.1:{},{}", closed_port(), bootstrap());
    let output = cli(&[
        "check-recovery",
        "--markers",
        c1.to_str().unwrap(),
        "--bootstrap-servers",
        &servers,
        "--control-topic",
        &control,
    ]);
    expect_code(&output, 0);
    let text = stderr(&output);
    assert!(
        !text.contains("%3|") && !text.contains("|FAIL|") && !text.contains("librdkafka"),
        "{text}"
    );
}
