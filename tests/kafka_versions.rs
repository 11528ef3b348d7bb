//! End-to-end: one short operator workflow (marker, plan, apply, status, check-recovery allowed
//! and refused, recover) with the built CLI against whatever broker `ASC_KAFKA_BOOTSTRAP` names.
//! `cargo test` runs it on the suite's broker (Kafka 4); `scripts/test-kafka-versions` runs it
//! again on each older Kafka the README supports (2.8 with ZooKeeper, 3.3 and 3.9 in KRaft mode),
//! each started by `scripts/kafka` with `ASC_KAFKA_VERSION`, so that the supported range is
//! tested, not claimed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use support::*;

fn json_of(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output))
        .unwrap_or_else(|e| panic!("--json output does not parse ({e}): {}", stdout(output)))
}

#[test]
fn the_operator_workflow_runs_on_this_broker() {
    let dir = scratch("versions");
    // Two partitions: C0 after 100/40 records, C1 after 150/60 (each marker taken by the CLI's
    // `marker` command from the live topic), then 30 more on partition 0.
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");

    // The topic's ID, as the broker reports it, is in the markers: no topic ID (all zeros) is
    // what a broker without topic IDs would give, and every later step would refuse it.
    let marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&c1).unwrap()).unwrap();
    assert_eq!(marker["topicId"], topic_id(&mut kafka(), &topic).as_str());
    assert_ne!(marker["topicId"], "AAAAAAAAAAAAAAAAAAAAAA");

    // Plan C1, with a look at the live topic.
    let plan = dir.join("plan-c1.json");
    let planned = cli(&[
        "plan",
        "--markers",
        c1.to_str().unwrap(),
        "--recovery-point",
        "C1",
        "--output",
        plan.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&planned, 0);
    let review = format!("{}{}", stdout(&planned), stderr(&planned));
    assert!(review.contains("210 records"), "{review}");

    // Apply it: the control topic is created, the plan committed, the records deleted.
    let applied = cli(&[
        "apply",
        "--yes",
        "--json",
        "--plan",
        plan.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
    ]);
    expect_code(&applied, 0);
    assert_eq!(
        json_of(&applied)["outcome"],
        "applied",
        "{}",
        stdout(&applied)
    );
    assert_eq!(
        beginnings(&mut kafka(), &topic, &[0, 1]),
        vec![(0, 150), (1, 60)],
        "the broker's log start offsets after the apply"
    );

    // Status: one plan, applied, nothing unfinished (exit 0).
    let status = cli(&[
        "status",
        "--json",
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
    ]);
    expect_code(&status, 0);
    let status = json_of(&status);
    assert_eq!(
        status["operations"].as_array().map(Vec::len),
        Some(1),
        "{status}"
    );
    assert_eq!(status["operations"][0]["status"], "APPLIED", "{status}");
    assert_eq!(status["unfinished"], serde_json::json!([]), "{status}");

    // Restores: C1 is allowed, C0 (below the boundary) refused with exit 6.
    let check = |markers: &std::path::Path| {
        cli(&[
            "check-recovery",
            "--json",
            "--markers",
            markers.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
        ])
    };
    expect_code(&check(&c1), 0);
    let refused = check(&c0);
    expect_code(&refused, 6);
    assert_eq!(
        json_of(&refused)["error"]["violations"],
        serde_json::json!([
            {"topic": topic, "partition": 0, "requested": 100, "boundary": 150},
            {"topic": topic, "partition": 1, "requested": 40, "boundary": 60},
        ])
    );

    // Recover from C1: the 30 records written after it are replayed.
    let recovered = cli(&[
        "recover",
        "--json",
        "--markers",
        c1.to_str().unwrap(),
        "--bootstrap-servers",
        bootstrap(),
        "--control-topic",
        &control,
    ]);
    expect_code(&recovered, 0);
    let recovered = json_of(&recovered);
    assert_eq!(recovered["enforced"], true, "{recovered}");
    assert_eq!(recovered["recordsReplayed"], 30, "{recovered}");
}
