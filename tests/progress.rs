//! End-to-end: what the operator hears while the CLI waits for Kafka (issue 38 item 3). A
//! request that waits (a refused port, a dead leader) is reported in the CLI's words within
//! about 2 s, not after its whole timeout; librdkafka's own log lines (`%3|…|FAIL|…`) stay off
//! stderr unless `--debug` asks for them. An append whose broker stops answering (the process
//! stopped with SIGSTOP while the apply is paused right before its COMMITTED write) is reported
//! the same way, and the apply ends well once the broker answers again.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "support/cluster.rs"]
mod cluster;
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cluster::Cluster;

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

/// Sends SIGCONT to a stopped broker when dropped, so that a failed assertion never leaves it
/// stopped (its cluster guard could not stop it then).
struct Stopped(String);

impl Stopped {
    fn stop(pid: String) -> Stopped {
        signal("-STOP", &pid);
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal("-CONT", &self.0);
    }
}

fn signal(which: &str, pid: &str) {
    let status = Command::new("kill").args([which, pid]).status().unwrap();
    assert!(status.success(), "kill {which} {pid}");
}

#[test]
fn an_append_to_a_broker_that_stopped_answering_is_reported_while_it_waits() {
    let cluster = Cluster::start(1, false);
    let dir = scratch("slow-append");
    let topic = unique("slow-append");
    let control = format!("{topic}-control");
    let mut kafka = cluster.kafka();
    create_topic(&mut kafka, &topic, 1, &SAFE);
    produce(&mut kafka, &topic, 0, 20);
    let marker = Command::new(CLI)
        .args(["marker", "--topic", &topic])
        .args(cluster.cli_args(None))
        .output()
        .unwrap();
    expect_code(&marker, 0);
    let markers = dir.join("markers.json");
    std::fs::write(&markers, stdout(&marker).trim()).unwrap();
    let plan = plan_file(&dir, &markers, "C1");

    // The apply stops right before its COMMITTED append (test failpoint); the broker is stopped
    // then, and the append is sent to a broker that takes it and does not answer.
    let pause = dir.join("pause");
    let started = Instant::now();
    let mut child = Command::new(CLI)
        .args(["apply", "--yes", "--plan", plan.to_str().unwrap()])
        .args(["--control-topic", &control, "--timeout", "60"])
        .args(cluster.cli_args(None))
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_LIE")
        .env("ASC_FAILPOINT_PAUSE", "before-commit")
        .env("ASC_FAILPOINT_PAUSE_FILE", &pause)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr_pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stderr_pipe)
            .lines()
            .map(|line| (started.elapsed(), line.unwrap()))
            .collect::<Vec<_>>()
    });
    while !pause.with_extension("reached").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "apply ended before its commit"
        );
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "pause not reached"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = std::fs::read_to_string(cluster.state.join("node-1.pid")).unwrap();
    let stopped = Stopped::stop(pid.trim().to_owned());
    std::fs::write(pause.with_extension("go"), "go").unwrap();
    let sent = started.elapsed();
    // 6 s: past the first progress line (2 s) and the next (7 s would be the second), within
    // the request's bound (a third of --timeout 60: 20 s) and the broker's session timeout.
    std::thread::sleep(Duration::from_secs(6));
    drop(stopped);
    let status = child.wait().unwrap();
    let output_stdout = {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut text).unwrap();
        text
    };
    let lines = reader.join().unwrap();
    let text: Vec<String> = lines
        .iter()
        .map(|(at, line)| format!("{:.1}s {line}", at.as_secs_f64()))
        .collect();
    assert_eq!(status.code(), Some(0), "{output_stdout}\n{text:#?}");
    let progress: Vec<&(Duration, String)> = lines
        .iter()
        .filter(|(_, line)| line.starts_with("progress: "))
        .collect();
    let (at, line) = progress
        .first()
        .unwrap_or_else(|| panic!("no progress line while the append waited: {text:#?}"));
    assert!(
        line.contains(&format!("append to {control} partition 0"))
            && line.contains("waiting for the brokers' answer for 2 s"),
        "{line}"
    );
    // The line came while the broker was stopped: 2 s after the append was sent, not when it
    // was answered (the broker answered after 6 s).
    let after = at.saturating_sub(sent);
    assert!(
        after >= Duration::from_millis(1500) && after < Duration::from_millis(5500),
        "the first progress line {after:?} after the append was sent: {text:#?}"
    );
    assert!(
        !text.iter().any(|line| line.contains(" %")),
        "a raw librdkafka line: {text:#?}"
    );
    // The apply finished once the broker answered: the records below the plan are gone.
    assert_eq!(
        beginnings(&mut kafka, &topic, &[0]),
        [(0, 20)],
        "{output_stdout}"
    );
    eprintln!("stderr of the apply:\n{}", text.join("\n"));
}
