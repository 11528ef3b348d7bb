//! End-to-end: restores through the cleanup component's recovery session against a real broker,
//! via the `recover` / `check-recovery` commands and via the host library as a runtime would.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use action_state_cleanup::CLEANUP_COMPONENT;
use action_state_cleanup::cleanup::{
    ApplyOptions, CleanupComponent, CleanupError, CleanupInstance, FailureClass, NoEvents,
    OperatorRef, RecoveryPolicy, ReplayOptions, RestoreSource, StoredSnapshot,
};
use action_state_cleanup::engine::new_engine;
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};
use support::*;

fn recover(markers: &[&Path], extra: &[&str], envs: &[(&str, &str)]) -> std::process::Output {
    let mut args = vec!["recover", "--bootstrap-servers", bootstrap()];
    for marker in markers {
        args.push("--markers");
        args.push(marker.to_str().unwrap());
    }
    args.extend_from_slice(extra);
    run(&args, envs)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn apply_plan(dir: &Path, markers: &Path, control: &str) {
    let plan = plan_file(dir, markers, "rp");
    expect_code(
        &cli(&[
            "apply",
            "--yes",
            "--plan",
            plan.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            control,
        ]),
        0,
    );
}

fn legacy_of(marker: &Path, dir: &Path) -> PathBuf {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(marker).unwrap()).unwrap();
    write(
        dir,
        &format!("legacy-{}.json", unique("l")),
        &json["offsets"].to_string(),
    )
}

#[test]
fn decision_table_without_a_control_topic_restores_legacy_and_versioned_markers() {
    let dir = scratch("rows-standard");
    let (topic, c0, _c1) = story(&dir);
    let legacy = legacy_of(&c0, &dir);
    let output = recover(&[&legacy], &["--topic", &topic, "--json"], &[]);
    expect_code(&output, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["enforced"], false);
    assert_eq!(json["recordsReplayed"], 80 + 20);
    let output = recover(&[&c0], &["--json", "--tombstones"], &[]);
    expect_code(&output, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        json["partitions"][0],
        serde_json::json!({"partition": 0, "from": 100, "to": 180, "records": 80, "tombstones": 0})
    );
}

#[test]
fn decision_table_with_a_control_topic_refuses_what_it_must() {
    let dir = scratch("rows-enforced");
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let mut kafka = kafka();

    // Configured, but the control topic does not exist: a wrong --control-topic (or a deleted
    // history), exit 3 like any input that names nothing, never "restore refused" (6); the same
    // for check-recovery.
    let missing = recover(&[&c1], &["--control-topic", &control], &[]);
    expect_code(&missing, 3);
    let check = cli(&[
        "check-recovery",
        "--markers",
        c1.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
    ]);
    expect_code(&check, 3);
    for output in [&missing, &check] {
        let said = stderr(output);
        assert!(
            said.contains(&format!("control topic {control} does not exist"))
                && !said.contains("restore refused"),
            "{said}"
        );
    }
    // Holds no committed plan yet: the restore is refused.
    create_topic(&mut kafka, &control, 1, &[("cleanup.policy", "compact")]);
    let empty = recover(&[&c1], &["--control-topic", &control], &[]);
    expect_code(&empty, 6);
    assert!(
        stderr(&empty).contains("contains no committed boundary"),
        "{}",
        stderr(&empty)
    );

    apply_plan(&dir, &c1, &control);
    // Committed boundary, versioned at or above it: replay.
    expect_code(&recover(&[&c1], &["--control-topic", &control], &[]), 0);
    // Below it: refused, naming partition, requested offset and boundary, every partition
    // below it, and which plan and recovery point committed the boundary.
    let below = recover(&[&c0], &["--control-topic", &control], &[]);
    expect_code(&below, 6);
    let said = stderr(&below);
    assert!(
        said.contains(&format!(
            "{topic}-0 from offset 100 because the committed cleanup boundary is 150"
        )) && said.contains("every partition below the boundary")
            && said.contains("hint: the boundary was committed by plan ")
            && said.contains("from recovery point rp (APPLIED): restore from rp or a recovery point taken after it"),
        "{said}"
    );
    // --json: the same violations as check-recovery's, and the same hint.
    let json_of = |output: &std::process::Output| -> serde_json::Value {
        serde_json::from_str(&stdout(output)).unwrap()
    };
    let below = recover(&[&c0], &["--control-topic", &control, "--json"], &[]);
    expect_code(&below, 6);
    let checked = cli(&[
        "check-recovery",
        "--markers",
        c0.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
        "--json",
    ]);
    expect_code(&checked, 6);
    let (recovered, checked) = (json_of(&below), json_of(&checked));
    assert_eq!(
        recovered["error"]["violations"],
        serde_json::json!([
            {"topic": topic, "partition": 0, "requested": 100, "boundary": 150},
            {"topic": topic, "partition": 1, "requested": 40, "boundary": 60},
        ]),
        "{recovered}"
    );
    assert_eq!(
        recovered["error"]["violations"],
        checked["error"]["violations"]
    );
    assert_eq!(recovered["error"]["hint"], checked["error"]["hint"]);
    assert_eq!(recovered["error"]["kind"], "boundary-violation");
    // Legacy markers with a control topic: no physical identity, no comparable boundary.
    let legacy = legacy_of(&c1, &dir);
    let refused = recover(
        &[&legacy],
        &["--topic", &topic, "--control-topic", &control],
        &[],
    );
    expect_code(&refused, 6);
    assert!(
        stderr(&refused).contains("requires versioned Kafka recovery markers"),
        "{}",
        stderr(&refused)
    );
    // Tombstones together with a control topic.
    let conflicting = recover(
        &[&c1],
        &["--control-topic", &control, "--tombstones", "--json"],
        &[],
    );
    expect_code(&conflicting, 6);
    let json: serde_json::Value = serde_json::from_str(&stdout(&conflicting)).unwrap();
    assert_eq!(json["error"]["kind"], "conflicting-policies");
    // Legacy mixed with versioned, with or without a control topic.
    let mixed = recover(&[&c1, &legacy], &[], &[]);
    expect_code(&mixed, 6);
    assert!(
        stderr(&mixed).contains("mixture of versioned and legacy"),
        "{}",
        stderr(&mixed)
    );
}

#[test]
fn offsets_below_the_beginning_after_an_apply_are_refused_even_without_enforcement() {
    let dir = scratch("below-beginning");
    let (topic, c0, c1) = story(&dir);
    apply_plan(&dir, &c1, &format!("{topic}-control"));
    let output = recover(&[&c0], &[], &[]);
    expect_code(&output, 6);
    assert!(
        stderr(&output).contains("Offset 100 of")
            && stderr(&output).contains("available range is [150, 180]"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn recreated_topic_between_checkpoint_and_restore_is_reported_as_such() {
    let dir = scratch("recreated");
    let (topic, _c0, c1) = story(&dir);
    let mut kafka = kafka();
    recreate_topic(&mut kafka, &topic, 2);
    let output = recover(&[&c1], &[], &[]);
    expect_code(&output, 6);
    assert!(
        stderr(&output).contains("may have been recreated"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn stalled_replay_fails_within_the_window_instead_of_hanging() {
    let dir = scratch("stall");
    let (_topic, c0, _c1) = story(&dir);
    let started = std::time::Instant::now();
    let output = recover(
        &[&c0],
        &["--stall-timeout", "2"],
        &[("ASC_FAILPOINT", "replay-stall")],
    );
    expect_code(&output, 4);
    let message = stderr(&output);
    assert!(
        message.contains("made no progress for 2000 ms"),
        "{message}"
    );
    assert!(
        message.contains(
            "current positions are {0=100, 1=40} and target end offsets are {0=180, 1=60}"
        ),
        "{message}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "bounded: {:?}",
        started.elapsed()
    );
}

#[test]
fn replay_of_100k_records_over_8_partitions_equals_an_independent_read() {
    let dir = scratch("bulk");
    let mut kafka = kafka();
    let topic = unique("bulk");
    create_topic(&mut kafka, &topic, 8, &SAFE);
    // Keys repeat (updates) and some are tombstoned, so the map is not just the record count.
    let mut records = Vec::with_capacity(100_000);
    for n in 0..100_000u64 {
        let partition = (n % 8) as u32;
        records.push((
            partition,
            format!("action-{}", n % 40_000),
            format!("{{\"step\":{n}}}"),
        ));
    }
    kafka.produce_batch(&topic, &records).unwrap();
    let tombstoned: Vec<String> = (0..500).map(|k| format!("action-{}", k * 8)).collect();
    for key in &tombstoned {
        // Same partition as the key's records: key k always lands on partition k % 8 above.
        kafka.produce(&topic, 0, Some(key), None).unwrap();
    }
    let marker = write(
        &dir,
        "start.json",
        &format!(
            "{{\"schemaVersion\":1,\"topic\":\"{topic}\",\"topicId\":\"{}\",\"offsets\":{{{}}}}}",
            topic_id(&mut kafka, &topic),
            (0..8)
                .map(|p| format!("\"{p}\":0"))
                .collect::<Vec<_>>()
                .join(",")
        ),
    );
    let dump = dir.join("state.json");
    let output = recover(
        &[&marker],
        &["--json", "--dump-state", dump.to_str().unwrap()],
        &[],
    );
    expect_code(&output, 0);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["recordsReplayed"], 100_500);

    let independent = independent_read(&mut kafka, &topic, 8);
    let replayed: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    assert_eq!(replayed.len(), independent.len());
    assert!(
        replayed == independent,
        "component replay and plain consumer disagree"
    );
    assert_eq!(report["statesRecovered"], independent.len());
    assert!(!replayed.contains_key("action-0") && replayed.contains_key("action-1"));
}

/// Reads every record with a plain consumer (no component) and applies puts and tombstones.
fn independent_read(
    kafka: &mut KafkaClients,
    topic: &str,
    partitions: u32,
) -> BTreeMap<String, String> {
    let ends = kafka
        .list_offsets(
            topic,
            &(0..partitions).collect::<Vec<_>>(),
            action_state_cleanup::kafka::ffi::Spec::Latest,
        )
        .unwrap();
    let mut consumer = kafka.replay_consumer(topic).unwrap();
    consumer
        .assign(&(0..partitions).map(|p| (p, 0)).collect::<Vec<_>>())
        .unwrap();
    let mut per_partition: BTreeMap<u32, Vec<(u64, String, Option<String>)>> = BTreeMap::new();
    let mut seen = 0u64;
    let total: u64 = ends.iter().map(|(_, e)| e).sum();
    for _ in 0..200 {
        if seen >= total {
            break;
        }
        for record in consumer
            .poll(10_000, std::time::Duration::from_secs(5))
            .unwrap()
        {
            seen += 1;
            per_partition.entry(record.partition).or_default().push((
                record.offset,
                record.key.unwrap(),
                record.value,
            ));
        }
    }
    assert_eq!(seen, total, "the independent read got every record");
    let mut state = BTreeMap::new();
    for (_, records) in per_partition {
        for (_, key, value) in records {
            match value {
                Some(value) => state.insert(key, value),
                None => state.remove(&key),
            };
        }
    }
    state
}

fn instance(bootstrap: &str) -> CleanupInstance {
    let engine = new_engine().unwrap();
    let component = CleanupComponent::new(&engine, CLEANUP_COMPONENT).unwrap();
    component
        .instantiate(
            KafkaClients::new(KafkaSettings::new(bootstrap)).unwrap(),
            Box::new(NoEvents),
        )
        .unwrap()
}

const REPLAY: ReplayOptions = ReplayOptions {
    poll_timeout_ms: 200,
    stall_timeout_ms: 20_000,
};

#[test]
fn checkpoint_taken_during_recovery_never_lets_a_cleanup_delete_what_the_restore_needs() {
    let dir = scratch("mid-recovery");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let c1_text = std::fs::read_to_string(&c1).unwrap();
    let mut runtime = instance(bootstrap());
    let policy = RecoveryPolicy {
        topic: Some(topic.clone()),
        control_topic: None,
        tombstones_enabled: false,
    };

    // Restore from C1 and stop halfway through its replay (30 records after C1 on partition 0).
    let session = runtime.start_session(&topic, &policy).unwrap().unwrap();
    runtime
        .restore(
            &session,
            &RestoreSource::Texts(vec![c1_text.clone()]),
            REPLAY,
        )
        .unwrap()
        .unwrap();
    let first = runtime.next_batch(&session, 10).unwrap().unwrap();
    assert!(
        !first.done && !first.records.is_empty(),
        "replay is under way"
    );
    let mid = runtime.session_snapshot(&session).unwrap().unwrap();
    let mid_json: serde_json::Value = serde_json::from_str(&mid).unwrap();
    assert_eq!(
        mid_json["offsets"],
        serde_json::json!({"0": 150, "1": 60}),
        "restored offsets, not live ends"
    );

    // Plan and apply from that mid-recovery checkpoint.
    let plan = runtime
        .plan_from_markers("mid-recovery-checkpoint", std::slice::from_ref(&mid))
        .unwrap()
        .unwrap();
    let plan_json = runtime.render_plan(&plan).unwrap();
    let options = ApplyOptions {
        control_topic: control.clone(),
        replication_factor: Some(1),
        dry_run: false,
        start_new_history: false,
    };
    runtime.apply(&plan_json, &options).unwrap().unwrap();

    // Restore from that checkpoint again: every action written after C1 is still replayed.
    let enforced = RecoveryPolicy {
        control_topic: Some(control),
        ..policy
    };
    let mut again = instance(bootstrap());
    let session = again.start_session(&topic, &enforced).unwrap().unwrap();
    again
        .restore(&session, &RestoreSource::Texts(vec![mid.clone()]), REPLAY)
        .unwrap()
        .unwrap();
    let mut replayed = Vec::new();
    loop {
        let batch = again.next_batch(&session, 1_000).unwrap().unwrap();
        replayed.extend(batch.records.into_iter().map(|r| (r.partition, r.offset)));
        if batch.done {
            break;
        }
    }
    replayed.sort_unstable();
    let expected: Vec<(u32, u64)> = (150..180).map(|o| (0, o)).collect();
    assert_eq!(replayed, expected, "all 30 actions written after C1");
    // After replay, a checkpoint carries live end offsets again.
    let after = again.session_snapshot(&session).unwrap().unwrap();
    let after_json: serde_json::Value = serde_json::from_str(&after).unwrap();
    assert_eq!(
        after_json["offsets"],
        serde_json::json!({"0": 180, "1": 60})
    );
}

#[test]
fn snapshot_refuses_when_the_topic_changed_while_the_job_was_running() {
    let mut kafka = kafka();
    let topic = unique("grow");
    create_topic(&mut kafka, &topic, 2, &SAFE);
    let mut runtime = instance(bootstrap());
    let policy = RecoveryPolicy {
        topic: Some(topic.clone()),
        control_topic: None,
        tombstones_enabled: false,
    };
    let session = runtime.start_session(&topic, &policy).unwrap().unwrap();
    runtime.session_snapshot(&session).unwrap().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/kafka");
    let altered = std::process::Command::new(script)
        .args(["topics", "--alter", "--topic", &topic, "--partitions", "3"])
        .env("ASC_KAFKA_BOOTSTRAP", bootstrap())
        .output()
        .unwrap();
    assert!(
        altered.status.success(),
        "{}",
        String::from_utf8_lossy(&altered.stderr)
    );
    wait_for_topic(&mut kafka, &topic, 3);
    let error = runtime.session_snapshot(&session).unwrap().unwrap_err();
    let message = runtime.message(&error).unwrap();
    assert!(
        message.contains(
            "changed partitions (while the job was running): expected [0, 1] but found [0, 1, 2]"
        ),
        "{message}"
    );
}

#[test]
fn a_failed_restore_of_other_markers_refuses_checkpoints_until_a_restore_completes() {
    let dir = scratch("failed-restore");
    let (topic, _c0, c1) = story(&dir);
    let c1_text = std::fs::read_to_string(&c1).unwrap();
    let mut runtime = instance(bootstrap());
    let policy = RecoveryPolicy {
        topic: Some(topic.clone()),
        control_topic: None,
        tombstones_enabled: false,
    };
    let session = runtime.start_session(&topic, &policy).unwrap().unwrap();
    runtime
        .restore(
            &session,
            &RestoreSource::Texts(vec![c1_text.clone()]),
            REPLAY,
        )
        .unwrap()
        .unwrap();
    let first = runtime.next_batch(&session, 10).unwrap().unwrap();
    assert!(!first.done, "replay is under way");
    // Another restore fails (its marker asks for offset 500 of partition 0, past the end).
    let beyond = c1_text.replace("\"0\":150", "\"0\":500");
    assert_ne!(beyond, c1_text);
    let error = runtime
        .restore(
            &session,
            &RestoreSource::Texts(vec![beyond.clone()]),
            REPLAY,
        )
        .unwrap()
        .unwrap_err();
    let message = runtime.message(&error.error).unwrap();
    assert!(message.contains("is not available"), "{message}");
    assert_eq!(error.message, message, "the refusal carries its sentence");
    assert_eq!(error.topic.as_deref(), Some(topic.as_str()));
    // The runtime may already hold the other point's state, which replayed nothing: C1's
    // offsets may not be checkpointed, nor the live ends.
    let refused = runtime.session_snapshot(&session).unwrap().unwrap_err();
    let message = runtime.message(&refused).unwrap();
    assert!(
        message.contains("failed") && message.contains("restore again"),
        "{message}"
    );
    // The interrupted replay cannot continue; a new restore can, and after it completes the
    // session is live again.
    let refused = runtime.next_batch(&session, 10).unwrap().unwrap_err();
    let message = runtime.message(&refused).unwrap();
    assert!(message.contains("restore again"), "{message}");
    runtime
        .restore(
            &session,
            &RestoreSource::Texts(vec![c1_text.clone()]),
            REPLAY,
        )
        .unwrap()
        .unwrap();
    while !runtime.next_batch(&session, 1_000).unwrap().unwrap().done {}
    let live = runtime.session_snapshot(&session).unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_str(&live).unwrap();
    assert_eq!(json["offsets"], serde_json::json!({"0": 180, "1": 60}));
}

#[test]
fn a_restore_whose_consumer_cannot_be_opened_refuses_checkpoints_through_the_component() {
    // Through wasmtime and the component's adapter: the consumer open fails before the core
    // session sees the restore. A checkpoint must not then carry the live end offsets (the
    // state was never replayed), and neither must one after markers that do not parse.
    let dir = scratch("consumer-open-fails");
    let (topic, _c0, c1) = story(&dir);
    let c1_text = std::fs::read_to_string(&c1).unwrap();
    let policy = RecoveryPolicy {
        topic: Some(topic.clone()),
        control_topic: None,
        tombstones_enabled: false,
    };
    for broken in ["consumer", "markers"] {
        let mut runtime = instance(bootstrap());
        let session = runtime.start_session(&topic, &policy).unwrap().unwrap();
        let markers = if broken == "consumer" {
            runtime.misbehave(Some(action_state_cleanup::cleanup::Lie::ConsumerOpenFails));
            vec![c1_text.clone()]
        } else {
            vec!["{\"topic\": ".to_owned()]
        };
        let error = runtime
            .restore(&session, &RestoreSource::Texts(markers.clone()), REPLAY)
            .unwrap()
            .unwrap_err();
        let message = runtime.message(&error.error).unwrap();
        assert!(!message.is_empty(), "{broken}");
        runtime.misbehave(None);
        let refused = runtime.session_snapshot(&session).unwrap().unwrap_err();
        assert!(
            matches!(
                refused,
                action_state_cleanup::cleanup::CleanupError::RecoveryRefused(_)
            ),
            "{broken}: {}",
            runtime.message(&refused).unwrap()
        );
        assert!(
            runtime.next_batch(&session, 10).unwrap().is_err(),
            "{broken}"
        );
        // A restore that completes makes checkpoints possible again.
        runtime
            .restore(
                &session,
                &RestoreSource::Texts(vec![c1_text.clone()]),
                REPLAY,
            )
            .unwrap()
            .unwrap();
        while !runtime.next_batch(&session, 1_000).unwrap().unwrap().done {}
        assert!(
            runtime.session_snapshot(&session).unwrap().is_ok(),
            "{broken}"
        );
    }
}

#[test]
fn a_fresh_start_with_nothing_to_replay_can_checkpoint_before_any_batch() {
    let mut kafka = kafka();
    let topic = unique("fresh");
    create_topic(&mut kafka, &topic, 2, &SAFE);
    produce(&mut kafka, &topic, 0, 7);
    let mut runtime = instance(bootstrap());
    let policy = RecoveryPolicy {
        topic: Some(topic.clone()),
        control_topic: None,
        tombstones_enabled: false,
    };
    let session = runtime.start_session(&topic, &policy).unwrap().unwrap();
    runtime
        .restore(&session, &RestoreSource::Texts(Vec::new()), REPLAY)
        .unwrap()
        .unwrap();
    // No next-batch: with nothing to replay the session is live at once.
    let marker = runtime.session_snapshot(&session).unwrap().unwrap();
    let json: serde_json::Value = serde_json::from_str(&marker).unwrap();
    assert_eq!(json["offsets"], serde_json::json!({"0": 7, "1": 0}));
    let batch = runtime.next_batch(&session, 10).unwrap().unwrap();
    assert!(batch.done && batch.records.is_empty());
}

#[test]
fn check_recovery_refuses_markers_of_another_topic_naming_both() {
    let dir = scratch("other-topic");
    let (topic, _c0, c1) = story(&dir);
    let (other, _o0, o1) = story(&scratch("other-topic-b"));
    let control = format!("{topic}-control");
    let expected = format!(
        "Kafka action-state recovery marker references topic {other}, but the configured topic is {topic}"
    );
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check-recovery",
            "--bootstrap-servers",
            bootstrap(),
            "--topic",
            &topic,
            "--markers",
            o1.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        cli(&args)
    };
    let standard = check(&[]);
    expect_code(&standard, 3);
    assert!(
        stderr(&standard).contains(&expected),
        "{}",
        stderr(&standard)
    );
    apply_plan(&dir, &c1, &control);
    let enforced = check(&["--control-topic", &control, "--json"]);
    expect_code(&enforced, 3);
    assert_eq!(error_kind(&enforced), "invalid-marker");
    assert!(
        stdout(&enforced).contains(&expected),
        "{}",
        stdout(&enforced)
    );
    // The configured topic's own markers are allowed.
    let own = cli(&[
        "check-recovery",
        "--bootstrap-servers",
        bootstrap(),
        "--topic",
        &topic,
        "--control-topic",
        &control,
        "--markers",
        c1.to_str().unwrap(),
    ]);
    expect_code(&own, 0);
}

#[test]
fn a_recreated_topic_against_its_old_control_topic_is_reported_as_recreated() {
    let dir = scratch("recreated-control");
    let (topic, _c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    apply_plan(&dir, &c1, &control);
    let mut kafka = kafka();
    let old_id = topic_id(&mut kafka, &topic);
    recreate_topic(&mut kafka, &topic, 2);
    produce(&mut kafka, &topic, 0, 5);
    let new_id = topic_id(&mut kafka, &topic);
    let fresh = marker_file(&dir, "after-recreate", &topic);
    // Planning and applying from the recreated topic's markers against the old control topic.
    let plan = plan_file(&dir, &fresh, "after-recreate");
    let applied = cli(&[
        "apply",
        "--yes",
        "--plan",
        plan.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
        "--json",
    ]);
    // Restoring the recreated topic's marker with the old control topic.
    let checked = cli(&[
        "check-recovery",
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
        "--markers",
        fresh.to_str().unwrap(),
        "--json",
    ]);
    // apply refuses (3); check-recovery refuses the restore (6).
    for (output, code) in [(&applied, 3), (&checked, 6)] {
        expect_code(output, code);
        assert_eq!(error_kind(output), "topic-changed", "{}", stdout(output));
        let text = stdout(output);
        assert!(text.contains("the topic was recreated"), "{text}");
        assert!(text.contains(&old_id) && text.contains(&new_id), "{text}");
        assert!(!text.contains("not dedicated"), "{text}");
    }
}

/// `apply`'s failure and `check-recovery`'s refusal answer the whole use case in the one call:
/// the plan as verified (apply; none for a rejected document), the sentence `message` renders
/// for the error, and the class a host's exit code follows.
#[test]
fn a_failed_apply_or_refused_restore_carries_its_sentence_and_its_class() {
    let mut runtime = instance(bootstrap());
    let options = ApplyOptions {
        control_topic: unique("failure-control"),
        replication_factor: Some(1),
        dry_run: false,
        start_new_history: false,
    };

    let rejected = runtime
        .apply("{\"schemaVersion\": 1", &options)
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(rejected.error, CleanupError::InvalidPlan(_)),
        "{:?}",
        rejected.error
    );
    assert!(rejected.plan.is_none(), "a rejected document is no plan");
    assert_eq!(rejected.class, FailureClass::Refused);
    assert_eq!(rejected.message, runtime.message(&rejected.error).unwrap());

    // A plan for a topic this cluster does not have: refused as topic-changed, the plan known.
    let topic = unique("failure-missing");
    let marker = format!(
        r#"{{"schemaVersion":1,"topic":"{topic}","topicId":"AAAAAAAAAAAAAAAAAAAAAQ","offsets":{{"0":5}}}}"#
    );
    let plan = runtime
        .plan_from_markers("checkpoint-7", std::slice::from_ref(&marker))
        .unwrap()
        .unwrap();
    let plan_json = runtime.render_plan(&plan).unwrap();
    let missing = runtime.apply(&plan_json, &options).unwrap().unwrap_err();
    assert!(
        matches!(missing.error, CleanupError::TopicChanged(_)),
        "{:?}",
        missing.error
    );
    let carried = missing.plan.as_ref().expect("the failure carries the plan");
    assert_eq!(
        (
            &carried.plan_id,
            &carried.topic,
            &carried.source_recovery_point
        ),
        (&plan.plan_id, &plan.topic, &plan.source_recovery_point)
    );
    assert_eq!(missing.class, FailureClass::Refused);
    assert!(!missing.commit_attempted);
    assert_eq!(missing.message, runtime.message(&missing.error).unwrap());
    assert!(missing.message.contains(&topic), "{}", missing.message);

    // check-recovery's refusal answers the same way: its sentence and what it means.
    let standard = RecoveryPolicy {
        topic: None,
        control_topic: None,
        tombstones_enabled: false,
    };
    let conflicting = RecoveryPolicy {
        topic: None,
        control_topic: Some(unique("failure-control")),
        tombstones_enabled: true,
    };
    let refused = runtime
        .check_recovery(&RestoreSource::Texts(vec![marker.clone()]), &conflicting)
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(refused.error, CleanupError::ConflictingPolicies(_)),
        "{:?}",
        refused.error
    );
    assert_eq!(refused.class, FailureClass::RestoreRefused);
    assert_eq!(refused.message, runtime.message(&refused.error).unwrap());
    let gone = runtime
        .check_recovery(&RestoreSource::Texts(vec![marker.clone()]), &standard)
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(gone.error, CleanupError::InvalidArgument(_)),
        "{:?}",
        gone.error
    );
    assert_eq!(
        gone.class,
        FailureClass::Refused,
        "a topic that does not exist is wrong input"
    );
    assert_eq!(
        gone.topic.as_deref(),
        Some(topic.as_str()),
        "the refusal names the marker's topic, whose grants a refused request needs"
    );
    assert!(gone.store.is_none());
    let malformed = runtime
        .check_recovery(
            &RestoreSource::Texts(vec!["{\"schemaVersion\": 1".to_owned()]),
            &standard,
        )
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(malformed.error, CleanupError::InvalidMarker(_)),
        "{:?}",
        malformed.error
    );
    assert_eq!(malformed.class, FailureClass::Refused);

    // The component reads a snapshot it is pointed at itself: one that is not there is a
    // store failure, refused (nothing to read), and names the object it asked for.
    let nowhere = std::env::temp_dir().join(unique("no-snapshot"));
    let absent = runtime
        .check_recovery(
            &RestoreSource::Stored(StoredSnapshot {
                location: nowhere.display().to_string(),
                operator: OperatorRef::Uid("agent-operator".into()),
            }),
            &standard,
        )
        .unwrap()
        .unwrap_err();
    let store = absent.store.expect("a store failure");
    assert_eq!(store.location, format!("{}/_metadata", nowhere.display()));
    assert_eq!(absent.class, FailureClass::Refused);
    assert_eq!(absent.message, store.message);
    assert!(
        absent.message.contains("does not exist"),
        "{}",
        absent.message
    );
}
