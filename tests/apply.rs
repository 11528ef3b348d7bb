//! End-to-end: the built CLI (with its embedded cleanup component) against a real Kafka broker.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "support/cluster.rs"]
mod cluster;
mod support;

use std::path::Path;

use support::*;

fn apply(plan: &Path, control: &str, envs: &[(&str, &str)]) -> std::process::Output {
    apply_with(plan, control, &[], envs)
}

fn apply_with(
    plan: &Path,
    control: &str,
    extra: &[&str],
    envs: &[(&str, &str)],
) -> std::process::Output {
    // A script's apply consents with --yes (no terminal here).
    let mut args = vec![
        "apply",
        "--yes",
        "--plan",
        plan.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        control,
    ];
    args.extend_from_slice(extra);
    run(&args, envs)
}

fn apply_json(plan: &Path, control: &str) -> std::process::Output {
    apply_with(plan, control, &["--json"], &[])
}

/// `status --control-topic C` against the test broker, with `extra` arguments.
fn status(control: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "status",
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        control,
    ];
    args.extend_from_slice(extra);
    cli(&args)
}

fn check_recovery(markers: &Path, control: &str) -> std::process::Output {
    cli(&[
        "check-recovery",
        "--markers",
        markers.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        control,
    ])
}

fn plan_id(plan: &Path) -> String {
    let output = cli(&["verify", "--plan", plan.to_str().unwrap()]);
    expect_code(&output, 0);
    stdout(&output).trim().to_owned()
}

#[test]
fn spec_story_applies_c1_and_refuses_c0_naming_both_offsets() {
    let dir = scratch("story");
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let applied = apply(&plan, &control, &[]);
    expect_code(&applied, 0);
    assert!(
        stdout(&applied).contains("is APPLIED"),
        "{}",
        stdout(&applied)
    );
    assert!(
        stderr(&applied).contains("records below the boundary will be deleted"),
        "preview shown: {}",
        stderr(&applied)
    );

    let mut kafka = kafka();
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);

    let refused = check_recovery(&c0, &control);
    expect_code(&refused, 6);
    let message = stderr(&refused);
    assert!(
        message.contains(&format!(
            "{topic}-0 from offset 100 because the committed cleanup boundary is 150"
        )),
        "{message}"
    );

    expect_code(&check_recovery(&c1, &control), 0);
}

#[test]
fn commit_is_written_before_delete_and_applied_after() {
    let dir = scratch("order");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let id = plan_id(&plan);
    // A failed delete shows the COMMITTED record already durable before any deletion happened.
    let failed = apply(&plan, &control, &[("ASC_FAILPOINT", "delete-records")]);
    expect_code(&failed, 4);
    assert!(
        stderr(&failed).contains("is COMMITTED"),
        "{}",
        stderr(&failed)
    );
    let mut kafka = kafka();
    assert_eq!(
        beginnings(&mut kafka, &topic, &[0, 1]),
        [(0, 0), (1, 0)],
        "nothing deleted yet"
    );
    let records = control_records(&mut kafka, &control);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].0.as_deref(), Some(id.as_str()));
    assert!(
        records[0]
            .1
            .as_deref()
            .unwrap()
            .contains("\"status\":\"COMMITTED\"")
    );
    // `status` flags the unfinished plan for a monitoring script: exit 5 and its ID.
    let flagged = status(&control, &["--json"]);
    expect_code(&flagged, 5);
    let json: serde_json::Value = serde_json::from_str(&stdout(&flagged)).unwrap();
    assert_eq!(json["unfinished"], serde_json::json!([id]));

    let resumed = apply(&plan, &control, &[]);
    expect_code(&resumed, 0);
    assert!(
        stdout(&resumed).contains("was COMMITTED"),
        "{}",
        stdout(&resumed)
    );
    let statuses: Vec<bool> = control_records(&mut kafka, &control)
        .iter()
        .map(|(_, v)| v.as_deref().unwrap().contains("\"status\":\"APPLIED\""))
        .collect();
    assert_eq!(statuses, [false, true], "COMMITTED then APPLIED");
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);
}

#[test]
fn policy_changed_after_commit_leaves_plan_committed_and_second_apply_finishes() {
    let dir = scratch("policy");
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let refused = apply(
        &plan,
        &control,
        &[("ASC_FAILPOINT", "compact-after-commit")],
    );
    expect_code(&refused, 3);
    let message = stderr(&refused);
    assert!(
        message.contains("cleanup.policy=compact,delete") && message.contains("is COMMITTED"),
        "{message}"
    );
    let mut kafka = kafka();
    assert_eq!(
        beginnings(&mut kafka, &topic, &[0, 1]),
        [(0, 0), (1, 0)],
        "the re-check stopped the delete"
    );
    // A COMMITTED boundary is binding at once, before any deletion.
    expect_code(&check_recovery(&c0, &control), 6);

    kafka.alter_topic_configs(&topic, &configs(&SAFE)).unwrap();
    let finished = apply(&plan, &control, &[]);
    expect_code(&finished, 0);
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);
}

#[test]
fn reapplying_an_applied_plan_changes_nothing() {
    let dir = scratch("again");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    expect_code(&apply(&plan, &control, &[]), 0);
    let mut kafka = kafka();
    let before = control_records(&mut kafka, &control).len();
    let again = apply(&plan, &control, &[]);
    expect_code(&again, 0);
    assert!(
        stdout(&again).contains("already APPLIED"),
        "{}",
        stdout(&again)
    );
    assert_eq!(control_records(&mut kafka, &control).len(), before);
}

#[test]
fn recreated_data_topic_is_refused_before_anything_durable() {
    let dir = scratch("recreated");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let mut kafka = kafka();
    let old_id = topic_id(&mut kafka, &topic);
    recreate_topic(&mut kafka, &topic, 2);
    assert_ne!(topic_id(&mut kafka, &topic), old_id);
    let refused = apply(&plan, &control, &[]);
    expect_code(&refused, 3);
    assert!(
        stderr(&refused).contains("may have been recreated"),
        "{}",
        stderr(&refused)
    );
    assert!(stderr(&refused).contains(&old_id), "{}", stderr(&refused));
    // Running the same apply again can never work: the hint says to plan anew.
    let hint = stderr(&refused);
    assert!(
        hint.contains("hint: nothing was committed")
            && hint.contains("this plan from C1 can never be applied")
            && hint.contains("plan again from a recovery point taken since")
            && !hint.contains("run the same apply again"),
        "{hint}"
    );
    assert!(
        kafka
            .describe_topics(std::slice::from_ref(&control))
            .unwrap()[0]
            .is_none(),
        "control topic untouched"
    );
}

#[test]
fn unsafe_data_topic_configuration_is_refused_before_commit() {
    let dir = scratch("unsafe");
    let mut kafka = kafka();
    let topic = unique("unsafe");
    create_topic(&mut kafka, &topic, 1, &[("cleanup.policy", "compact")]);
    produce(&mut kafka, &topic, 0, 10);
    let marker = marker_file(&dir, "m", &topic);
    let plan = plan_file(&dir, &marker, "cp-1");
    let control = format!("{topic}-control");
    let refused = apply_json(&plan, &control);
    expect_code(&refused, 3);
    assert_eq!(error_kind(&refused), "unsafe-topic-config");
    // The hint is the way out: the exact Kafka tools' command, and that nothing happened
    // (no dead end: the control topic does not exist yet, which says nothing was committed).
    let json: serde_json::Value = serde_json::from_str(&stdout(&refused)).unwrap();
    let hint = json["error"]["hint"].as_str().unwrap_or("");
    assert!(
        hint.contains("nothing durable happened")
            && hint.contains(&format!(
                "kafka-configs.sh --bootstrap-server {} --alter --entity-type topics --entity-name {topic} --add-config 'cleanup.policy=[compact,delete],retention.ms=-1,retention.bytes=-1'",
                bootstrap()
            )),
        "{hint}"
    );
    assert_eq!(beginnings(&mut kafka, &topic, &[0]), [(0, 0)]);
    assert!(
        kafka
            .describe_topics(std::slice::from_ref(&control))
            .unwrap()[0]
            .is_none(),
        "nothing durable: no control topic"
    );
}

#[test]
fn control_topic_with_two_partitions_or_delete_policy_is_refused() {
    let dir = scratch("control-shape");
    let (topic, _c0, c1) = story(&dir);
    let plan = plan_file(&dir, &c1, "C1");
    let mut kafka = kafka();
    let two = format!("{topic}-control-two");
    create_topic(&mut kafka, &two, 2, &[("cleanup.policy", "compact")]);
    let refused = apply(&plan, &two, &[]);
    expect_code(&refused, 3);
    assert!(
        stderr(&refused).contains("exactly one partition"),
        "{}",
        stderr(&refused)
    );
    let both = format!("{topic}-control-both");
    create_topic(
        &mut kafka,
        &both,
        1,
        &[("cleanup.policy", "compact,delete")],
    );
    let refused = apply(&plan, &both, &[]);
    expect_code(&refused, 3);
    assert!(
        stderr(&refused).contains("cleanup.policy=compact without delete retention"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 0), (1, 0)]);
}

#[test]
fn tombstone_or_forged_record_in_control_topic_stops_apply_and_recovery() {
    for forgery in ["tombstone", "forged"] {
        let dir = scratch(forgery);
        let (topic, c0, c1) = story(&dir);
        let control = format!("{topic}-control");
        let plan0 = plan_file(&dir, &c0, "C0");
        expect_code(&apply(&plan0, &control, &[]), 0);
        let id = plan_id(&plan0);
        let mut kafka = kafka();
        let value = match forgery {
            "tombstone" => None,
            _ => {
                let (_, applied) = control_records(&mut kafka, &control).pop().unwrap();
                Some(applied.unwrap().replace("\"0\":100", "\"0\":90"))
            }
        };
        kafka
            .produce(&control, 0, Some(&id), value.as_deref())
            .unwrap();

        let plan1 = plan_file(&dir, &c1, "C1");
        let refused = apply_json(&plan1, &control);
        expect_code(&refused, 3);
        assert_eq!(error_kind(&refused), "control-topic-corrupt", "{forgery}");
        let recovery = check_recovery(&c1, &control);
        expect_code(&recovery, 6);
        assert!(
            stderr(&recovery).contains("Cleanup control record at offset"),
            "{forgery}: {}",
            stderr(&recovery)
        );
        assert_eq!(
            beginnings(&mut kafka, &topic, &[0, 1]),
            [(0, 100), (1, 40)],
            "{forgery}: C1 was not applied"
        );
    }
}

#[test]
fn backward_plan_is_refused_and_boundary_kept() {
    let dir = scratch("backward");
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    expect_code(&apply(&plan_file(&dir, &c1, "C1"), &control, &[]), 0);
    let refused = apply(&plan_file(&dir, &c0, "C0"), &control, &[]);
    expect_code(&refused, 3);
    assert!(
        stderr(&refused).contains("does not advance the committed boundary"),
        "{}",
        stderr(&refused)
    );
    // A stale plan: the same apply can never work, a plan from a newer recovery point can.
    let hint = stderr(&refused);
    assert!(
        hint.contains("this plan from C0 can never be applied")
            && hint.contains("plan again from a recovery point newer than that one")
            && !hint.contains("run the same apply again"),
        "{hint}"
    );
    let mut kafka = kafka();
    assert_eq!(control_records(&mut kafka, &control).len(), 2);
}

#[test]
fn topic_id_matches_kafkas_own_tool() {
    let mut kafka = kafka();
    let topic = unique("uuid");
    create_topic(&mut kafka, &topic, 1, &SAFE);
    let ours = topic_id(&mut kafka, &topic);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka");
    let described = std::process::Command::new(script)
        .args(["topics", "--describe", "--topic", &topic])
        .env("ASC_KAFKA_BOOTSTRAP", bootstrap())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&described.stdout);
    assert!(
        text.contains(&format!("TopicId: {ours}")),
        "Kafka's tool printed: {text}"
    );
    assert_eq!(ours.len(), 22);
}

/// `topics --describe --topic T` of Kafka's own tool against the test broker, parsed.
fn described_by_kafka(topic: &str) -> cluster::TopicState {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka");
    let described = std::process::Command::new(script)
        .args(["topics", "--describe", "--topic", topic])
        .env("ASC_KAFKA_BOOTSTRAP", bootstrap())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&described.stdout);
    cluster::parse_describe(&text).unwrap_or_else(|| panic!("Kafka's tool printed: {text}"))
}

#[test]
fn on_a_single_broker_the_default_control_topic_has_one_replica_and_min_insync_replicas_one() {
    let dir = scratch("single-broker");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let applied = apply_json(&plan_file(&dir, &c1, "C1"), &control);
    expect_code(&applied, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout(&applied)).unwrap();
    assert_eq!(
        report["createdControlTopic"],
        serde_json::json!({"name": control, "partitions": 1, "replicationFactor": 1, "minInsyncReplicas": 1}),
        "{report}"
    );
    // One broker: one replica is the production default, so nothing to warn about.
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    let created = described_by_kafka(&control);
    assert_eq!(created.replication_factor, 1, "{created:?}");
    assert!(
        created.configs.contains("min.insync.replicas=1")
            && created.configs.contains("cleanup.policy=compact"),
        "{created:?}"
    );
    // --help says what the default is.
    let help = cli(&["apply", "--help"]);
    expect_code(&help, 0);
    let help = stdout(&help)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains("3 replicas, or one per broker when there are fewer, whatever the brokers' default.replication.factor says")
            && help.contains("kafka-reassign-partitions"),
        "{help}"
    );
}

#[test]
fn status_reports_history_boundary_and_live_offsets() {
    let dir = scratch("status");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    expect_code(&apply(&plan, &control, &[]), 0);
    let output = status(&control, &["--json"]);
    expect_code(&output, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["operations"][0]["planId"], plan_id(&plan).as_str());
    assert_eq!(json["operations"][0]["status"], "APPLIED");
    assert_eq!(json["boundary"], serde_json::json!({"0": 150, "1": 60}));
    assert_eq!(
        json["live"][0],
        serde_json::json!({"partition": 0, "beginning": 150, "end": 180, "boundary": 150})
    );
}

/// Runs the CLI with its stdout connected to a pipe whose reader already went away
/// (`… | true`), and stderr to a fresh pipe whose reader closes too when `close_stderr`.
fn with_closed_stdout(args: &[&str], close_stderr: bool) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut command = std::process::Command::new(support::CLI);
    command
        .args(args)
        .env_remove("ASC_FAILPOINT")
        .stdout(writer);
    if close_stderr {
        let (err_reader, err_writer) = std::io::pipe().unwrap();
        drop(err_reader);
        command.stderr(err_writer);
    } else {
        command.stderr(std::process::Stdio::piped());
    }
    command.output().unwrap()
}

#[test]
fn every_command_whose_reader_went_away_exits_quietly() {
    let dir = scratch("closed-pipe");
    let (topic, c0, c1) = story(&dir);
    let plan = plan_file(&dir, &c1, "C1");
    let control = format!("{topic}-control");
    let (plan, c0, c1) = (
        plan.to_str().unwrap(),
        c0.to_str().unwrap(),
        c1.to_str().unwrap(),
    );
    let kafka = ["--bootstrap-servers", bootstrap()];
    let with_kafka = |args: &[&'static str]| -> Vec<String> {
        args.iter()
            .map(|a| (*a).to_owned())
            .chain(kafka.iter().map(|a| (*a).to_owned()))
            .collect()
    };
    let control_args = ["--control-topic", control.as_str()];
    let mut commands: Vec<Vec<String>> = vec![
        vec!["--help".into()],
        vec!["--version".into()],
        vec![
            "plan".into(),
            "--markers".into(),
            c1.into(),
            "--recovery-point".into(),
            "C1".into(),
        ],
        vec!["verify".into(), "--plan".into(), plan.into()],
        ["marker", "--topic", topic.as_str()]
            .into_iter()
            .chain(kafka)
            .map(str::to_owned)
            .collect(),
    ];
    for (command, extra) in [
        ("apply", vec!["--plan", plan, "--dry-run"]),
        ("apply", vec!["--plan", plan, "--yes"]),
        ("status", vec![]),
        ("check-recovery", vec!["--markers", c1]),
        ("check-recovery", vec!["--markers", c0]),
        ("recover", vec!["--markers", c1]),
    ] {
        let mut args = with_kafka(&[command]);
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        args.extend(control_args.iter().map(|a| (*a).to_owned()));
        commands.push(args.clone());
        args.push("--json".into());
        commands.push(args);
    }
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        for close_stderr in [false, true] {
            let output = with_closed_stdout(&args, close_stderr);
            let err = String::from_utf8_lossy(&output.stderr);
            assert!(
                !err.contains("panicked") && !err.contains("Broken pipe"),
                "{args:?}: {err}"
            );
            // 141: the status a shell shows for a tool killed by SIGPIPE; a command that
            // printed nothing on stdout (a refusal explained on stderr) keeps its own code.
            let code = output.status.code();
            assert!(
                matches!(code, Some(141) | Some(0) | Some(3) | Some(6)),
                "{args:?} (stderr closed: {close_stderr}): {code:?} {err}"
            );
            assert_ne!(code, Some(101), "{args:?}");
        }
    }
}

#[test]
fn a_mistyped_control_topic_does_not_start_a_second_history() {
    // Tried as a new user would: the real history committed C1 ({0=150, 1=60}); a later plan
    // applied with a typo in --control-topic must not create the typo topic and delete.
    let dir = scratch("typo");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-cleanup");
    let typo = format!("{topic}-cleanpu");
    expect_code(&apply(&plan_file(&dir, &c1, "C1"), &control, &[]), 0);
    let later = marker_file(&dir, "c2", &topic);
    let plan = plan_file(&dir, &later, "C2");
    let mut kafka = kafka();
    for extra in [&["--dry-run"][..], &[][..]] {
        let refused = apply_with(&plan, &typo, extra, &[]);
        expect_code(&refused, 3);
        let message = stderr(&refused);
        assert!(
            message.contains(&format!("control topic {typo} does not exist"))
                && message.contains("partition 0 at 150")
                && message.contains("start-new-history")
                // The component's sentence names no host's spelling of the option.
                && !message.contains("(CLI:"),
            "{message}"
        );
        assert!(
            kafka.describe_topics(std::slice::from_ref(&typo)).unwrap()[0].is_none(),
            "{extra:?}: the typo topic was not created"
        );
    }
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);

    // Said explicitly, the second history begins: the preview announces the new topic.
    let second = apply_with(&plan, &typo, &["--start-new-history"], &[]);
    expect_code(&second, 0);
    assert!(
        stderr(&second).contains(&format!(
            "Will create control topic {typo} (1 partition, replication factor 1"
        )),
        "{}",
        stderr(&second)
    );
    // The real history now sees its data topic begin past its boundary: a broken history.
    let broken = status(&control, &[]);
    // 5: the history needs an operator.
    expect_code(&broken, 5);
    assert!(
        stderr(&broken).contains("Broken cleanup history")
            && stderr(&broken).contains("partition 0 begins at 180, boundary 150"),
        "{}",
        stderr(&broken)
    );
    // A restore that history allows (C1, at its boundary) is refused as a broken history.
    let refused = check_recovery(&c1, &control);
    expect_code(&refused, 6);
    assert!(
        stderr(&refused).contains("Broken cleanup history"),
        "{}",
        stderr(&refused)
    );
}

/// A broker before Kafka 2.8 (or with inter.broker.protocol.version below 2.8) answers every
/// topic with the all-zero ID. Such a broker cannot be started here, so the CLI's test host
/// answers as one would (`ASC_LIE=no-topic-ids`): `marker` refuses instead of printing the zero
/// ID, and apply and check-recovery name the broker, not a recreated topic; nothing changes.
#[test]
fn a_broker_without_topic_ids_is_refused_by_marker_and_named_by_apply_and_check_recovery() {
    let dir = scratch("no-topic-ids");
    let (topic, _c0, c1) = story(&dir);
    let plan = plan_file(&dir, &c1, "C1");
    let control = format!("{topic}-control");
    let no_ids = [("ASC_LIE", "no-topic-ids")];
    let why = "the broker reports no topic IDs (Kafka 2.8 or later with inter.broker.protocol.version 2.8 or later is needed)";

    let marker = run(
        &[
            "marker",
            "--topic",
            &topic,
            "--bootstrap-servers",
            bootstrap(),
        ],
        &no_ids,
    );
    expect_code(&marker, 3);
    assert_eq!(stdout(&marker), "", "no marker is printed");
    assert!(stderr(&marker).contains(why), "{}", stderr(&marker));
    assert!(stderr(&marker).contains(&topic), "{}", stderr(&marker));

    let applied = apply_with(&plan, &control, &[], &no_ids);
    expect_code(&applied, 3);
    let checked = run(
        &[
            "check-recovery",
            "--markers",
            c1.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
        ],
        &no_ids,
    );
    expect_code(&checked, 6);
    for refused in [&applied, &checked] {
        let message = stderr(refused);
        assert!(message.contains(why), "{message}");
        assert!(!message.contains("recreated"), "{message}");
    }
    let mut kafka = kafka();
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 0), (1, 0)]);
    assert!(
        kafka
            .describe_topics(std::slice::from_ref(&control))
            .unwrap()
            .iter()
            .all(Option::is_none),
        "no control topic was created"
    );
}

#[test]
fn an_empty_control_topic_does_not_start_a_second_history_either() {
    // Issue 34 item 5: the typo guard of issue 20 for a control topic that exists but holds no
    // record (made by hand with the mistyped name, say), on a data topic cleaned before.
    let dir = scratch("empty-control");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-cleanup");
    let typo = format!("{topic}-cleanpu");
    expect_code(&apply(&plan_file(&dir, &c1, "C1"), &control, &[]), 0);
    let mut kafka = kafka();
    create_topic(&mut kafka, &typo, 1, &[("cleanup.policy", "compact")]);
    let later = marker_file(&dir, "c2", &topic);
    let plan = plan_file(&dir, &later, "C2");
    for extra in [&["--dry-run"][..], &[][..]] {
        let refused = apply_with(&plan, &typo, extra, &[]);
        expect_code(&refused, 3);
        let message = stderr(&refused);
        assert!(
            message.contains(&format!("control topic {typo} holds no cleanup history"))
                && message.contains("partition 0 at 150")
                && message.contains("start-new-history")
                && !message.contains("(CLI:"),
            "{extra:?}: {message}"
        );
    }
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 150), (1, 60)]);
    assert!(control_records(&mut kafka, &typo).is_empty());
    // Said explicitly, the empty topic begins the new history.
    expect_code(&apply_with(&plan, &typo, &["--start-new-history"], &[]), 0);
    assert_eq!(control_records(&mut kafka, &typo).len(), 2);
}

/// A replication factor the cluster cannot hold (3 on this single broker) is refused before
/// anything is created, by a dry run as by an apply, naming the brokers (issue 38, item 6): the
/// apply used to pass the review and fail at the topic's creation with Kafka's raw error.
#[test]
fn a_replication_factor_the_cluster_cannot_hold_is_refused_by_dry_run_and_apply() {
    let dir = scratch("factor");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let plan = plan_file(&dir, &c1, "C1");
    let mut kafka = kafka();
    for extra in [&["--dry-run"][..], &[][..]] {
        let args = [extra, &["--replication-factor", "3", "--json"][..]].concat();
        let refused = apply_with(&plan, &control, &args, &[]);
        expect_code(&refused, 3);
        let json: serde_json::Value = serde_json::from_str(&stdout(&refused)).unwrap();
        let message = json["error"]["message"].as_str().unwrap();
        assert_eq!(json["error"]["kind"], "invalid-argument", "{message}");
        assert!(
            message.contains(&format!(
                "control topic {control} cannot be created with replication factor 3"
            )) && message.contains("1 broker")
                && message.contains("between 1 and 1"),
            "{extra:?}: {message}"
        );
        assert!(
            kafka
                .describe_topics(std::slice::from_ref(&control))
                .unwrap()[0]
                .is_none(),
            "{extra:?}: no control topic"
        );
    }
    assert_eq!(beginnings(&mut kafka, &topic, &[0, 1]), [(0, 0), (1, 0)]);
}

/// One record is "1 record" in the preview and the question's summary.
#[test]
fn a_preview_of_one_record_says_record() {
    let dir = scratch("one-record");
    let topic = unique("one");
    let mut kafka = kafka();
    create_topic(&mut kafka, &topic, 1, &SAFE);
    produce(&mut kafka, &topic, 0, 3);
    let id = topic_id(&mut kafka, &topic);
    let marker = dir.join("m.json");
    std::fs::write(
        &marker,
        format!(r#"{{"schemaVersion":1,"topic":"{topic}","topicId":"{id}","offsets":{{"0":1}}}}"#),
    )
    .unwrap();
    let plan = plan_file(&dir, &marker, "C1");
    let dry = apply_with(&plan, &format!("{topic}-control"), &["--dry-run"], &[]);
    expect_code(&dry, 0);
    assert!(
        stderr(&dry).contains("\n1 record below the boundary will be deleted."),
        "{}",
        stderr(&dry)
    );
}
