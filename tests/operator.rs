//! End-to-end: what an operator sees at the moments that matter (issue 22): the confirmation
//! before COMMITTED on a terminal, the plan's review against the live topic, a wrong bootstrap
//! address, ^C during apply, and a refused restore with every violating partition.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use support::*;

fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The CLI on a pseudo-terminal (util-linux `script`), as an operator runs it: `answer` is
/// typed once `prompt` appears on the terminal (or at once when `prompt` is empty). Returns
/// everything the terminal showed and the CLI's exit code.
fn on_terminal(args: &[&str], prompt: &str, answer: &str) -> (String, Option<i32>) {
    let command = std::iter::once(CLI)
        .chain(args.iter().copied())
        .map(quoted)
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("ASC_FAILPOINT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux script runs");
    let shown = Arc::new(Mutex::new(Vec::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let shown = shown.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                shown.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        })
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !prompt.is_empty() && !String::from_utf8_lossy(&shown.lock().unwrap()).contains(prompt) {
        assert!(
            Instant::now() < deadline,
            "no {prompt:?} on the terminal: {}",
            String::from_utf8_lossy(&shown.lock().unwrap())
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(answer.as_bytes()).unwrap();
    stdin.flush().unwrap();
    let status = child.wait().expect("script ends");
    drop(stdin);
    reader.join().unwrap();
    let text = String::from_utf8_lossy(&shown.lock().unwrap()).into_owned();
    (text, status.code())
}

fn apply_args<'a>(plan: &'a Path, control: &'a str) -> Vec<&'a str> {
    vec![
        "apply",
        "--plan",
        plan.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        control,
    ]
}

/// `apply_args` with `--yes`: the consent of a run without a terminal.
fn scripted_apply_args<'a>(plan: &'a Path, control: &'a str) -> Vec<&'a str> {
    let mut args = apply_args(plan, control);
    args.push("--yes");
    args
}

fn plan_id(plan: &Path) -> String {
    let output = cli(&["verify", "--plan", plan.to_str().unwrap()]);
    expect_code(&output, 0);
    stdout(&output).trim().to_owned()
}

#[test]
fn on_a_terminal_apply_asks_before_commit_and_anything_but_yes_commits_nothing() {
    let dir = scratch("confirm");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let id = plan_id(&plan);

    let (shown, code) = on_terminal(&apply_args(&plan, &control), "[y/N]", "n\n");
    assert_eq!(code, Some(1), "declined exits 1: {shown}");
    assert!(
        shown.contains(&format!(
            "Commit plan {id} and delete 210 records of topic {topic} (partitions 0 (150), 1 (60))? This cannot be undone. [y/N]"
        )),
        "the question names the topic, partitions and records: {shown}"
    );
    assert!(
        shown.contains("partition  beginning  boundary  end  to delete"),
        "{shown}"
    );
    assert!(shown.contains("was not committed"), "{shown}");
    // The review announced the control topic a yes creates; the no created nothing (issue 34
    // item 5: nothing durable before the operator's answer).
    assert!(
        shown.contains(&format!("Will create control topic {control} (1 partition")),
        "{shown}"
    );
    let mut kafka = kafka();
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 0), (1, 0)]);
    assert!(
        kafka
            .describe_topics(std::slice::from_ref(&control))
            .expect("describe")[0]
            .is_none(),
        "a declined apply leaves no control topic behind"
    );

    let (shown, code) = on_terminal(&apply_args(&plan, &control), "[y/N]", "yes\n");
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("is APPLIED"), "{shown}");
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);
}

#[test]
fn with_json_on_a_terminal_the_question_is_still_asked_and_the_answer_is_a_document() {
    // --json keeps stderr empty, except for what the operator must read to answer.
    let dir = scratch("confirm-json");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let mut args = apply_args(&plan, &control);
    args.push("--json");
    let (shown, code) = on_terminal(&args, "[y/N]", "n\n");
    assert_eq!(code, Some(1), "declined exits 1: {shown}");
    assert!(
        shown.contains("partition  beginning  boundary  end  to delete"),
        "the review the question is about: {shown}"
    );
    assert!(
        shown.contains("\"format\": 1") && shown.contains("\"kind\": \"declined\""),
        "the declined apply is a --json document: {shown}"
    );
    assert!(
        !shown.contains("error: "),
        "the error sentence stays off stderr: {shown}"
    );
}

#[test]
fn yes_skips_the_question() {
    let dir = scratch("yes");
    let (topic, c0, _c1) = story(&dir);
    let control = format!("{topic}-control");
    let first = plan_file(&dir, &c0, "C0");
    let (shown, code) = on_terminal(&scripted_apply_args(&first, &control), "", "");
    assert_eq!(code, Some(0), "{shown}");
    assert!(!shown.contains("[y/N]"), "--yes asks nothing: {shown}");
    assert!(shown.contains("is APPLIED"), "{shown}");
    let help = cli(&["apply", "--help"]);
    assert!(stdout(&help).contains("--yes"), "{}", stdout(&help));
}

/// The CLI with `stdin` as its standard input (no terminal).
fn without_terminal(args: &[&str], stdin: Stdio, input: &[u8]) -> Output {
    let mut child = Command::new(CLI)
        .args(args)
        .env_remove("ASC_FAILPOINT")
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(mut pipe) = child.stdin.take() {
        // The CLI may refuse before it reads anything: a closed pipe is no failure here.
        let _ = pipe.write_all(input);
    }
    child.wait_with_output().unwrap()
}

#[test]
fn without_a_terminal_and_without_yes_apply_refuses_before_anything_durable_naming_yes() {
    // Issue 34 item 6: `kubectl exec` or `ssh` without -t, a cron job: nobody can answer, so
    // nobody consented (terraform's rule for apply without -auto-approve). A pipe that says
    // "y" is no terminal either.
    let dir = scratch("unattended");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let args = apply_args(&plan, &control);
    let mut json = args.clone();
    json.push("--json");
    for (what, output) in [
        ("no stdin", without_terminal(&args, Stdio::null(), b"")),
        (
            "a pipe saying y",
            without_terminal(&args, Stdio::piped(), b"y\n"),
        ),
        ("--json", without_terminal(&json, Stdio::null(), b"")),
    ] {
        expect_code(&output, 2);
        // --json: the sentence is the error document's (stderr stays empty without --verbose).
        let said = if what == "--json" {
            assert_eq!(stderr(&output), "", "{what}: stderr stays empty");
            stdout(&output)
        } else {
            stderr(&output)
        };
        assert!(
            said.contains("--yes") && said.contains("not a terminal"),
            "{what}: {said}"
        );
        assert!(!said.contains("[y/N]"), "{what}: nobody is asked: {said}");
        assert!(
            !said.contains("passed every check"),
            "{what}: refused first: {said}"
        );
    }
    let mut kafka = kafka();
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 0), (1, 0)]);
    assert!(
        kafka
            .describe_topics(std::slice::from_ref(&control))
            .expect("describe")[0]
            .is_none(),
        "the control topic was not created"
    );
    // A dry run changes nothing and needs no consent; --yes is the consent.
    let mut dry = args.clone();
    dry.push("--dry-run");
    expect_code(&without_terminal(&dry, Stdio::null(), b""), 0);
    let applied = without_terminal(&scripted_apply_args(&plan, &control), Stdio::null(), b"");
    expect_code(&applied, 0);
    assert!(
        stdout(&applied).contains("is APPLIED"),
        "{}",
        stdout(&applied)
    );
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);
}

#[test]
fn plan_with_bootstrap_servers_shows_what_it_would_delete_and_without_says_how() {
    let dir = scratch("plan-review");
    let (topic, _c0, c1) = story(&dir);
    let output = dir.join("reviewed.json");
    let reviewed = cli(&[
        "plan",
        "--markers",
        c1.to_str().unwrap(),
        "--recovery-point",
        "C1",
        "--output",
        output.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&reviewed, 0);
    let review = stderr(&reviewed);
    assert!(
        review.contains(&format!("On the live topic {topic} now:"))
            && review.contains("partition  beginning  plan offset  end  to delete")
            && review.contains("        0          0          150  180        150")
            && review.contains("        1          0           60   60         60")
            && review.contains("this plan would delete 210 records"),
        "{review}"
    );
    let json = cli(&[
        "plan",
        "--markers",
        c1.to_str().unwrap(),
        "--recovery-point",
        "C1",
        "--bootstrap-servers",
        bootstrap(),
        "--json",
    ]);
    expect_code(&json, 0);
    let value: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(
        value["preview"][0],
        serde_json::json!({"partition": 0, "beginning": 0, "planOffset": 150, "end": 180, "recordsToDelete": 150})
    );
    // Nothing was written to Kafka.
    assert_eq!(beginnings(&mut kafka(), &topic, &[0, 1]), [(0, 0), (1, 0)]);

    let offline = cli(&[
        "plan",
        "--markers",
        c1.to_str().unwrap(),
        "--recovery-point",
        "C1",
        "--output",
        dir.join("offline.json").to_str().unwrap(),
    ]);
    expect_code(&offline, 0);
    assert!(
        stderr(&offline).contains("To see what it would delete: action-state-cleanup apply --plan")
            && stderr(&offline).contains("--dry-run"),
        "{}",
        stderr(&offline)
    );
}

/// A plan whose markers name a topic that was recreated since (another topic ID) can never be
/// applied: `plan --bootstrap-servers` refuses it (exit 3) and writes no plan file, where it used
/// to write it and exit 0 with a warning (issue 38, item 6).
#[test]
fn plan_with_bootstrap_servers_refuses_a_topic_recreated_since_the_markers() {
    let dir = scratch("plan-recreated");
    let (topic, _c0, c1) = story(&dir);
    let mut kafka = kafka();
    let old_id = topic_id(&mut kafka, &topic);
    recreate_topic(&mut kafka, &topic, 2);
    let output = dir.join("never.json");
    let refused = cli(&[
        "plan",
        "--markers",
        c1.to_str().unwrap(),
        "--recovery-point",
        "C1",
        "--output",
        output.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&refused, 3);
    let said = stderr(&refused);
    assert!(
        said.contains("may have been recreated")
            && said.contains(&old_id)
            && said.contains("hint: no plan was written")
            && !said.contains("warning"),
        "{said}"
    );
    assert!(!output.exists(), "no plan file");
}

/// `status` against `servers` with a 6 s timeout: the output and how long it took.
fn status_against(servers: &str) -> (Output, Duration) {
    let started = Instant::now();
    let output = cli(&[
        "status",
        "--bootstrap-servers",
        servers,
        "--control-topic",
        "any",
        "--timeout",
        "6",
    ]);
    (output, started.elapsed())
}

/// `--timeout 6` plus what a loaded test machine needs to start the process and load the
/// component; the command used to take twice its timeout (12 s here).
const IN_TIME: Duration = Duration::from_millis(8_500);

#[test]
fn a_wrong_bootstrap_address_is_named_told_dns_from_refused_shows_progress_and_ends_in_time() {
    let (dns, took) = status_against("no-such-broker.invalid:9092");
    expect_code(&dns, 4);
    let text = stderr(&dns);
    assert!(
        text.contains("waiting: Kafka describe failed"),
        "progress: {text}"
    );
    assert!(
        text.contains("Failed to resolve 'no-such-broker.invalid:9092'"),
        "{text}"
    );
    assert!(
        text.contains("hint: the host name in --bootstrap-servers no-such-broker.invalid:9092 does not resolve (DNS)"),
        "{text}"
    );
    assert!(took < IN_TIME, "--timeout 6 took {took:?}");

    // A port where nothing listens: refused, not DNS.
    let (refused, took) = status_against("127.0.0.1:1");
    expect_code(&refused, 4);
    let text = stderr(&refused);
    assert!(text.contains("Connection refused"), "{text}");
    assert!(
        text.contains("hint: the connection to 127.0.0.1:1 was refused"),
        "{text}"
    );
    assert!(took < IN_TIME, "--timeout 6 took {took:?}");
}

#[test]
fn an_apply_against_a_wrong_address_ends_within_its_timeout_saying_nothing_was_committed() {
    let dir = scratch("unreachable");
    let (_topic, _c0, c1) = story(&dir);
    let plan = plan_file(&dir, &c1, "C1");
    let started = Instant::now();
    let output = cli(&[
        "apply",
        "--yes",
        "--plan",
        plan.to_str().unwrap(),
        "--bootstrap-servers",
        "127.0.0.1:1",
        "--control-topic",
        "any",
        "--timeout",
        "6",
    ]);
    let took = started.elapsed();
    expect_code(&output, 4);
    assert!(took < IN_TIME, "--timeout 6 took {took:?}");
    assert!(
        stderr(&output)
            .contains("nothing was committed: the apply stopped before its point of no return"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn ctrl_c_at_the_question_says_nothing_was_committed() {
    let dir = scratch("sigint-question");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let (shown, code) = on_terminal(&apply_args(&plan, &control), "[y/N]", "\u{3}");
    assert_eq!(code, Some(130), "{shown}");
    assert!(
        shown.contains("error: interrupted before the point of no return: nothing was committed"),
        "{shown}"
    );
    // Nothing at all: not even the control topic (it is created only after a yes).
    assert!(
        kafka()
            .describe_topics(std::slice::from_ref(&control))
            .expect("describe")[0]
            .is_none(),
        "{shown}"
    );
}

#[test]
fn sigint_after_commit_says_the_plan_is_left_committed_and_the_same_apply_finishes_it() {
    signalled_after_commit("INT", 130, "interrupted", "interrupted");
}

/// SIGTERM is how a scheduler stops a run (a CronJob's deadline, `systemctl stop`): answered
/// like ^C, with 128 + 15.
#[test]
fn sigterm_after_commit_says_the_plan_is_left_committed_and_the_metrics_say_terminated() {
    signalled_after_commit("TERM", 143, "terminated (SIGTERM)", "terminated");
}

/// An apply paused after its deletion (COMMITTED, not APPLIED) gets `signal`: it exits `code`
/// saying `words` and where the plan stands, the metrics file records it as `outcome`, and the
/// same apply then finishes the plan.
fn signalled_after_commit(signal: &str, code: i32, words: &str, outcome: &str) {
    let dir = scratch(&format!("sig{}-committed", signal.to_lowercase()));
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let id = plan_id(&plan);
    let pause = dir.join("pause");
    let metrics = dir.join("apply.prom");
    let child = Command::new(CLI)
        .args(scripted_apply_args(&plan, &control))
        .arg("--metrics-file")
        .arg(&metrics)
        .env_remove("ASC_FAILPOINT")
        .env("ASC_FAILPOINT_PAUSE", "after-delete")
        .env("ASC_FAILPOINT_PAUSE_FILE", &pause)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pause.with_extension("reached").exists() {
        assert!(
            Instant::now() < deadline,
            "the apply never reached the pause"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    expect_code(&output, code);
    assert!(
        stderr(&output).contains(&format!(
            "{words} after the point of no return: plan {id} is left COMMITTED in {control}"
        )) && stderr(&output).contains("run the same apply again to finish it"),
        "{}",
        stderr(&output)
    );
    // The metrics file says so too: a scheduled run stopped by a signal is not a silent gap.
    let written = std::fs::read_to_string(&metrics).unwrap();
    assert!(
        written.contains("action_state_cleanup_apply_last_run_exit_code{")
            && written.lines().any(|l| l
                .starts_with("action_state_cleanup_apply_last_run_exit_code{")
                && l.ends_with(&format!(" {code}")))
            && written.contains(&format!("outcome=\"{outcome}\"")),
        "{written}"
    );
    let finished = cli(&scripted_apply_args(&plan, &control));
    expect_code(&finished, 0);
    assert!(
        stdout(&finished).contains("was COMMITTED"),
        "{}",
        stdout(&finished)
    );
}

#[test]
fn a_refused_restore_exits_6_listing_every_partition_below_the_boundary() {
    let dir = scratch("refused-restore");
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    expect_code(
        &cli(&scripted_apply_args(&plan_file(&dir, &c1, "C1"), &control)),
        0,
    );
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check-recovery",
            "--markers",
            c0.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
        ];
        args.extend_from_slice(extra);
        cli(&args)
    };
    let refused = check(&[]);
    expect_code(&refused, 6);
    let text = stderr(&refused);
    assert!(
        text.contains("partition  requested  boundary")
            && text.contains("        0        100       150")
            && text.contains("        1         40        60"),
        "{text}"
    );
    let refused = check(&["--json"]);
    expect_code(&refused, 6);
    let value: serde_json::Value = serde_json::from_str(&stdout(&refused)).unwrap();
    assert_eq!(value["error"]["kind"], "boundary-violation");
    assert_eq!(value["error"]["exitCode"], 6);
    assert_eq!(
        value["error"]["violations"],
        serde_json::json!([
            {"topic": topic, "partition": 0, "requested": 100, "boundary": 150},
            {"topic": topic, "partition": 1, "requested": 40, "boundary": 60},
        ])
    );
    // Malformed input stays exit 3.
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"schemaVersion\":1}").unwrap();
    let malformed = cli(&[
        "check-recovery",
        "--markers",
        bad.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
    ]);
    expect_code(&malformed, 3);
}
