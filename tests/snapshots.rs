//! Planning straight from real Flink checkpoints and savepoints: every case under
//! `fixtures/snapshots/<flink line>/<case>/` was written by a real Flink job, and its
//! `expected.json` by Flink's own readers (State Processor API for the markers,
//! `Checkpoints.loadCheckpointMetadata` for the operators); see java/snapshot-fixtures. The CLI
//! must give the Java tool's plan byte for byte, or its refusal, and list the same operators.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "test harness: a failure is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod support;

const CLI: &str = env!("CARGO_BIN_EXE_action-state-cleanup");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The CLI run from the repository root, where the fixtures' `checkpoint` paths are relative.
fn cli(args: &[&str]) -> Output {
    Command::new(CLI)
        .args(args)
        .current_dir(repo())
        .output()
        .expect("the CLI runs")
}

fn cases() -> Vec<(PathBuf, Value)> {
    let mut cases = Vec::new();
    for line in std::fs::read_dir(repo().join("fixtures/snapshots")).expect("fixtures/snapshots") {
        let line = line.unwrap().path();
        if !line.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&line).unwrap() {
            let case = case.unwrap().path();
            let expected = case.join("expected.json");
            if expected.is_file() {
                let text = std::fs::read_to_string(&expected).unwrap();
                cases.push((case, serde_json::from_str(&text).expect("expected.json")));
            }
        }
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

fn operator_args(expected: &Value) -> Vec<String> {
    match expected["operatorUid"].as_str() {
        Some(uid) => vec!["--operator-uid".into(), uid.into()],
        None => vec![
            "--operator-uid-hash".into(),
            expected["operatorUidHash"].as_str().unwrap().into(),
        ],
    }
}

fn plan(checkpoint: &str, expected: &Value) -> Output {
    let mut args = vec!["plan".to_owned(), "--checkpoint".into(), checkpoint.into()];
    args.extend(operator_args(expected));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    cli(&args)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn both_flink_lines_and_every_case_are_present() {
    let cases = cases();
    for line in ["flink-2.2", "flink-1.20"] {
        for case in [
            "savepoint-canonical",
            "savepoint-native-rocksdb",
            "checkpoint-rocksdb-incremental",
            "checkpoint-unaligned",
            "savepoint-large-markers",
            "savepoint-legacy",
            "savepoint-two-topic-ids",
            "savepoint-empty",
            "savepoint-no-uid",
        ] {
            let path = repo().join("fixtures/snapshots").join(line).join(case);
            assert!(
                cases.iter().any(|(dir, _)| *dir == path),
                "missing fixture {line}/{case}"
            );
        }
    }
}

#[test]
fn every_snapshot_plans_to_the_java_tools_plan_or_refusal() {
    for (dir, expected) in cases() {
        let checkpoint = expected["checkpoint"].as_str().unwrap();
        let output = plan(checkpoint, &expected);
        let case = dir.display();
        if let Some(plan) = expected["plan"].as_str() {
            assert_eq!(
                output.status.code(),
                Some(0),
                "{case}: {}",
                text(&output.stderr)
            );
            assert_eq!(text(&output.stdout), plan, "{case}: plan differs");
        } else {
            let error = expected["error"].as_str().unwrap();
            assert_eq!(output.status.code(), Some(3), "{case}: exit code");
            let stderr = text(&output.stderr);
            assert!(stderr.contains(error), "{case}: {stderr} lacks {error:?}");
            assert!(output.stdout.is_empty(), "{case}: a refusal prints no plan");
        }
    }
}

#[test]
fn the_metadata_file_itself_may_be_given_and_names_the_recovery_point() {
    for (dir, expected) in cases() {
        let Some(plan) = expected["plan"].as_str() else {
            continue;
        };
        let checkpoint = expected["checkpoint"].as_str().unwrap();
        let metadata = format!("{checkpoint}/_metadata");
        let output = plan_output(&metadata, &expected);
        let got: Value = serde_json::from_str(&output).unwrap();
        let want: Value = serde_json::from_str(plan).unwrap();
        assert_eq!(got["sourceRecoveryPoint"], metadata, "{}", dir.display());
        assert_eq!(got["offsets"], want["offsets"], "{}", dir.display());
        assert_eq!(got["topicId"], want["topicId"], "{}", dir.display());
    }
}

fn plan_output(checkpoint: &str, expected: &Value) -> String {
    let output = plan(checkpoint, expected);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    text(&output.stdout)
}

/// A savepoint is called one, not "checkpoint 1" (Flink gives savepoints a checkpoint ID from
/// the same counter); a retained checkpoint's `chk-N` directory is checkpoint N.
#[test]
fn snapshot_names_a_savepoint_a_savepoint_and_a_checkpoint_by_its_number() {
    for (dir, expected) in cases() {
        let checkpoint = expected["checkpoint"].as_str().unwrap();
        let output = cli(&["snapshot", checkpoint]);
        assert_eq!(output.status.code(), Some(0), "{}", dir.display());
        let first = text(&output.stdout).lines().next().unwrap_or("").to_owned();
        let id = &expected["checkpointId"];
        let said = if checkpoint.contains("/savepoint-") {
            format!(": savepoint (checkpoint ID {id}),")
        } else {
            format!(": checkpoint {id},")
        };
        assert!(first.contains(&said), "{}: {first}", dir.display());
    }
}

#[test]
fn snapshot_lists_the_operators_flink_lists() {
    for (dir, expected) in cases() {
        let checkpoint = expected["checkpoint"].as_str().unwrap();
        let output = cli(&["snapshot", "--json", checkpoint]);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}: {}",
            dir.display(),
            text(&output.stderr)
        );
        let got: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(got["formatVersion"], expected["metadataVersion"]);
        assert_eq!(got["checkpointId"], expected["checkpointId"]);
        let operators = expected["operators"].as_array().unwrap();
        assert_eq!(
            got["operators"].as_array().unwrap().len(),
            operators.len(),
            "{}",
            dir.display()
        );
        for want in operators {
            let id = want["id"].as_str().unwrap();
            let op = got["operators"]
                .as_array()
                .unwrap()
                .iter()
                .find(|op| op["id"] == id)
                .unwrap_or_else(|| panic!("{}: operator {id} missing", dir.display()));
            let mut states: Vec<&str> = op["operatorStates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["name"].as_str().unwrap())
                .collect();
            states.sort_unstable();
            let mut want_states: Vec<&str> = want["operatorStates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect();
            want_states.sort_unstable();
            assert_eq!(states, want_states, "{} {id}", dir.display());
            assert_eq!(op["parallelism"], want["parallelism"]);
            assert_eq!(op["maxParallelism"], want["maxParallelism"]);
            let keyed = want["managedKeyedState"].as_bool().unwrap()
                || want["rawKeyedState"].as_bool().unwrap();
            assert_eq!(op["keyedState"], keyed, "{} {id}", dir.display());
            assert_eq!(
                op["channelState"],
                want["channelState"],
                "{} {id}",
                dir.display()
            );
            assert_eq!(op["coordinatorState"], want["coordinatorState"]);
        }
        // The markers the snapshot shows are the ones Flink's State Processor API read.
        let hash = expected["operatorUidHash"].as_str().unwrap();
        let op = got["operators"]
            .as_array()
            .unwrap()
            .iter()
            .find(|op| op["id"] == hash)
            .unwrap();
        let mut shown: Vec<String> = op["markers"]
            .as_array()
            .unwrap()
            .iter()
            .map(marker_key)
            .collect();
        let mut read: Vec<String> = expected["markers"]
            .as_array()
            .unwrap()
            .iter()
            .map(marker_key)
            .collect();
        shown.sort();
        read.sort();
        assert_eq!(shown, read, "{}", dir.display());
    }
}

/// A marker as comparable text: class, topic, ID and offsets.
fn marker_key(marker: &Value) -> String {
    format!(
        "{} {} {} {}",
        marker["class"], marker["topic"], marker["topicId"], marker["offsets"]
    )
}

#[test]
fn a_uid_that_is_not_in_the_snapshot_names_the_operators_that_are() {
    let (_, expected) = cases()
        .into_iter()
        .find(|(dir, _)| dir.ends_with("flink-2.2/savepoint-canonical"))
        .expect("the canonical 2.2 savepoint");
    let checkpoint = expected["checkpoint"].as_str().unwrap();
    let output = cli(&[
        "plan",
        "--checkpoint",
        checkpoint,
        "--operator-uid",
        "no-such-operator",
    ]);
    assert_eq!(output.status.code(), Some(3));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("no operator with uid \"no-such-operator\""),
        "{stderr}"
    );
    assert!(stderr.contains("(uid \"agent-operator\")"), "{stderr}");
    assert!(
        stderr.contains(expected["operatorUidHash"].as_str().unwrap()),
        "{stderr}"
    );
}

#[test]
fn a_missing_state_file_is_named() {
    let (_, expected) = cases()
        .into_iter()
        .find(|(dir, _)| dir.ends_with("flink-2.2/savepoint-large-markers"))
        .expect("the large-marker 2.2 savepoint");
    let source = repo().join(expected["checkpoint"].as_str().unwrap());
    let copy = std::env::temp_dir().join(format!("asc-snapshot-{}", std::process::id()));
    std::fs::create_dir_all(&copy).unwrap();
    std::fs::copy(source.join("_metadata"), copy.join("_metadata")).unwrap();
    let mut args = vec![
        "plan".to_owned(),
        "--checkpoint".into(),
        copy.display().to_string(),
    ];
    args.extend(operator_args(&expected));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = cli(&args);
    std::fs::remove_dir_all(&copy).ok();
    assert_eq!(output.status.code(), Some(3), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("keeps markers in"), "{stderr}");
    assert!(stderr.contains(&copy.display().to_string()), "{stderr}");
}

#[test]
fn a_directory_without_metadata_is_refused_by_name() {
    let output = cli(&["plan", "--checkpoint", "fixtures", "--operator-uid", "x"]);
    assert_eq!(output.status.code(), Some(3));
    assert!(text(&output.stderr).contains("fixtures/_metadata does not exist"));
}

/// `check-recovery --checkpoint` decides from the markers the snapshot holds: against a live
/// `action-state` topic (whose broker-given ID is not the one the snapshot's job recorded) the
/// restore is refused naming the snapshot's topic ID; legacy markers (standard recovery) are
/// checked against the live range, naming the lowest offset the snapshot asks for.
#[test]
fn check_recovery_reads_the_markers_of_the_snapshot_the_job_would_restore() {
    let bootstrap = support::bootstrap();
    support::fixture_topic(&mut support::kafka());
    let canonical = "fixtures/snapshots/flink-1.20/savepoint-canonical/savepoint";
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join(canonical).join("../expected.json")).unwrap(),
    )
    .unwrap();
    let recorded_id = expected["markers"][0]["topicId"].as_str().unwrap();
    let output = cli(&[
        "check-recovery",
        "--checkpoint",
        canonical,
        "--operator-uid",
        "agent-operator",
        "--bootstrap-servers",
        bootstrap,
        "--timeout",
        "15",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    assert!(stderr.contains(recorded_id), "{stderr}");
    // `recover` reads the same snapshot the same way (issue 38, item 4: it took no --checkpoint).
    let output = cli(&[
        "recover",
        "--checkpoint",
        canonical,
        "--operator-uid",
        "agent-operator",
        "--bootstrap-servers",
        bootstrap,
        "--timeout",
        "15",
    ]);
    let recovered = text(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{recovered}");
    assert!(
        recovered.contains("restore refused") && recovered.contains(recorded_id),
        "{recovered}"
    );

    let legacy = "fixtures/snapshots/flink-2.2/savepoint-legacy/savepoint";
    let output = cli(&[
        "check-recovery",
        "--checkpoint",
        legacy,
        "--operator-uid",
        "agent-operator",
        "--topic",
        "action-state",
        "--bootstrap-servers",
        bootstrap,
        "--timeout",
        "15",
    ]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    // Subtask 0 of the legacy savepoint asks for partition 0 from offset 100; the topic is empty.
    assert!(
        stderr.contains("Offset 100 of action-state-0 is not available"),
        "{stderr}"
    );
}

/// A truncated `_metadata` is refused with exit 3 and one sentence naming the file and the byte
/// offset where it stops making sense; so is one with a flipped magic number.
#[test]
fn a_damaged_metadata_is_refused_naming_file_and_offset() {
    let source =
        repo().join("fixtures/snapshots/flink-2.2/savepoint-canonical/savepoint/_metadata");
    let bytes = std::fs::read(&source).unwrap();
    let dir = std::env::temp_dir().join(format!("asc-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let metadata = dir.join("_metadata");
    let given = dir.display().to_string();
    let cases: [(Vec<u8>, &str); 2] = [
        (bytes[..bytes.len() / 2].to_vec(), ": expected "),
        (
            [&[0x49, 0x60, 0x67, 0x2e][..], &bytes[4..]].concat(),
            "expected the magic number 0x4960672d of a Flink checkpoint metadata file but found 0x4960672e",
        ),
    ];
    for (damaged, why) in cases {
        std::fs::write(&metadata, &damaged).unwrap();
        let output = cli(&[
            "plan",
            "--checkpoint",
            &given,
            "--operator-uid",
            "agent-operator",
        ]);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(3), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "Flink snapshot file {given}/_metadata is not readable at byte"
            )),
            "{stderr}"
        );
        assert!(stderr.contains(why), "{stderr}");
        assert_eq!(
            stderr
                .trim_end()
                .lines()
                .filter(|l| l.starts_with("error:"))
                .count(),
            1
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Flink restores the last of two `_metadata` entries with one OperatorID; a file that lists
/// the marker operator's ID twice (here a hand edit gives another operator that ID, before
/// the marker operator's entry) is refused with exit 3 naming the ID, not planned from either.
#[test]
fn a_metadata_that_names_one_operator_id_twice_is_refused_naming_it() {
    let source =
        repo().join("fixtures/snapshots/flink-1.20/savepoint-canonical/savepoint/_metadata");
    let mut bytes = std::fs::read(&source).unwrap();
    let marker_id = "327a323a2b5110fcc96c46bc0746e725";
    let other_id = "2e588ce1c86a9d46e2e85186773ce4fd";
    let id_bytes = |hex: &str| -> Vec<u8> {
        (0..hex.len())
            .step_by(2)
            .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).unwrap())
            .collect()
    };
    let other = id_bytes(other_id);
    let at = bytes.windows(16).position(|w| w == other).unwrap();
    bytes[at..at + 16].copy_from_slice(&id_bytes(marker_id));
    let dir = std::env::temp_dir().join(format!("asc-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("_metadata"), &bytes).unwrap();
    let given = dir.display().to_string();
    let output = cli(&[
        "plan",
        "--checkpoint",
        &given,
        "--operator-uid",
        "agent-operator",
    ]);
    std::fs::remove_dir_all(&dir).ok();
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "Flink snapshot file {given}/_metadata is not readable at byte"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("found operator {marker_id} again")),
        "{stderr}"
    );
}
