//! End-to-end: two operators applying at once, as two real CLI processes against one control
//! topic. Rounds: `ASC_FENCE_ROUNDS` (default 50).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::*;

fn rounds() -> u64 {
    std::env::var("ASC_FENCE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(50)
}

fn marker(dir: &Path, name: &str, topic: &str, id: &str, p0: u64, p1: u64) -> PathBuf {
    let path = dir.join(format!("{name}.json"));
    std::fs::write(
        &path,
        format!("{{\"schemaVersion\":1,\"topic\":\"{topic}\",\"topicId\":\"{id}\",\"offsets\":{{\"0\":{p0},\"1\":{p1}}}}}"),
    )
    .unwrap();
    path
}

fn plan(dir: &Path, name: &str, topic: &str, id: &str, p0: u64, p1: u64) -> PathBuf {
    let markers = marker(dir, &format!("marker-{name}"), topic, id, p0, p1);
    let path = dir.join(format!("plan-{name}.json"));
    expect_code(
        &cli(&[
            "plan",
            "--markers",
            markers.to_str().unwrap(),
            "--recovery-point",
            name,
            "--output",
            path.to_str().unwrap(),
        ]),
        0,
    );
    path
}

fn spawn_apply(plan: &Path, control: &str) -> std::process::Child {
    Command::new(CLI)
        .args([
            "apply",
            "--yes",
            "--plan",
            plan.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            control,
            "--json",
        ])
        .env_remove("ASC_FAILPOINT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A data topic with 2 partitions and `records` records on each.
fn topic_with(records: u64) -> (String, String) {
    let mut kafka = kafka();
    let topic = unique("fence");
    create_topic(&mut kafka, &topic, 2, &SAFE);
    produce(&mut kafka, &topic, 0, records);
    produce(&mut kafka, &topic, 1, records);
    let id = topic_id(&mut kafka, &topic);
    (topic, id)
}

#[test]
fn of_two_concurrent_applies_of_incomparable_plans_exactly_one_commits() {
    let rounds = rounds();
    let dir = scratch("fence");
    let (topic, id) = topic_with(10 * rounds + 10);
    let control = format!("{topic}-control");
    let (mut wins_a, mut wins_b) = (0, 0);
    for round in 1..=rounds {
        // Incomparable with each other, and both above anything an earlier round committed.
        let a = plan(
            &dir,
            &format!("a{round}"),
            &topic,
            &id,
            10 * round + 5,
            10 * round,
        );
        let b = plan(
            &dir,
            &format!("b{round}"),
            &topic,
            &id,
            10 * round,
            10 * round + 5,
        );
        let (child_a, child_b) = (spawn_apply(&a, &control), spawn_apply(&b, &control));
        let (out_a, out_b) = (
            child_a.wait_with_output().unwrap(),
            child_b.wait_with_output().unwrap(),
        );
        let codes = (out_a.status.code(), out_b.status.code());
        // The loser: fenced (exit 7), or refused deciding again on the winner's history (3).
        let loser = match codes {
            (Some(0), Some(3 | 7)) => {
                wins_a += 1;
                &out_b
            }
            (Some(3 | 7), Some(0)) => {
                wins_b += 1;
                &out_a
            }
            _ => panic!(
                "round {round}: exactly one apply must commit, got {codes:?}\nA: {}{}\nB: {}{}",
                stdout(&out_a),
                stderr(&out_a),
                stdout(&out_b),
                stderr(&out_b)
            ),
        };
        let kind = error_kind(loser);
        assert_eq!(
            loser.status.code() == Some(7),
            kind == "fenced",
            "round {round}: exit 7 is the fenced loser's, and only its"
        );
        // Fenced at commit, the loser decides again on the winner's history: its plan no longer
        // advances the boundary, or (when the winner already deleted) its offsets are gone.
        assert!(
            ["fenced", "boundary-regression", "offsets-unavailable"].contains(&kind.as_str()),
            "round {round}: loser kind {kind}: {}",
            stderr(loser)
        );
        // Its COMMITTED was fenced (aborted) and the history read after fencing again does not
        // hold it: the loser says it committed nothing, never that this is unknown; and a plan
        // overtaken by the winner's boundary is never sent back to "run the same apply again".
        let error: serde_json::Value = serde_json::from_str(&stdout(loser)).unwrap();
        let hint = error["error"]["hint"].as_str().unwrap_or("");
        assert!(
            hint.starts_with("nothing was committed") && !hint.contains("unknown"),
            "round {round}: loser ({kind}) hint: {hint}"
        );
        if kind != "fenced" {
            assert!(
                hint.contains("plan again from") && !hint.contains("run the same apply again"),
                "round {round}: loser ({kind}) hint: {hint}"
            );
        }
        // The control topic never holds incomparable boundaries: status replays and validates it.
        let status = cli(&[
            "status",
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
            "--json",
        ]);
        expect_code(&status, 0);
        let json: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
        assert_eq!(
            json["operations"].as_array().unwrap().len() as u64,
            round,
            "round {round}: one plan per round"
        );
    }
    eprintln!("{rounds} rounds: A won {wins_a}, B won {wins_b}");
    // Every later apply and recovery still works.
    let next = plan(
        &dir,
        "after",
        &topic,
        &id,
        10 * rounds + 10,
        10 * rounds + 10,
    );
    expect_code(
        &cli(&[
            "apply",
            "--yes",
            "--plan",
            next.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
        ]),
        0,
    );
    let restore = marker(
        &dir,
        "restore",
        &topic,
        &id,
        10 * rounds + 10,
        10 * rounds + 10,
    );
    expect_code(
        &cli(&[
            "check-recovery",
            "--markers",
            restore.to_str().unwrap(),
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
        ]),
        0,
    );
}

#[test]
fn two_concurrent_applies_of_the_same_plan_both_end_applied() {
    let rounds = rounds().min(20);
    let dir = scratch("fence-same");
    let (topic, id) = topic_with(10 * rounds + 10);
    let control = format!("{topic}-control");
    for round in 1..=rounds {
        let same = plan(
            &dir,
            &format!("s{round}"),
            &topic,
            &id,
            10 * round,
            10 * round,
        );
        let (one, two) = (spawn_apply(&same, &control), spawn_apply(&same, &control));
        for output in [
            one.wait_with_output().unwrap(),
            two.wait_with_output().unwrap(),
        ] {
            expect_code(&output, 0);
            let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
            let outcome = json["outcome"].as_str().unwrap().to_owned();
            assert!(
                ["applied", "resumed", "already-applied"].contains(&outcome.as_str()),
                "round {round}: {outcome}"
            );
        }
        let status = cli(&[
            "status",
            "--bootstrap-servers",
            bootstrap(),
            "--control-topic",
            &control,
            "--json",
        ]);
        let json: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
        let last = json["operations"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["status"], "APPLIED", "round {round}");
    }
}
