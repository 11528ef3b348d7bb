//! End-to-end at width (issue 26): a topic of 1,200 partitions on the shared broker, planned
//! from its marker, applied, checked with `status` and `check-recovery`. Every partition's
//! beginning afterwards is read by Kafka's own GetOffsetShell, and the human output must stay a
//! summary (`--all` and `--json` have every row). 1,200 partitions are more than two of the
//! host's 500-partition ListOffsets requests, so the split requests are exercised too (its
//! DeleteRecords is one request per leader; the splitting past 2,500 partitions per leader has
//! unit tests in `host/src/kafka/delete_records.rs`). The 5,000- and 10,000-partition runs live in `scripts/bench` (section 7).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use serde_json::Value;

use support::*;

const PARTITIONS: u32 = 1_200;
/// Records written to every partition.
const RECORDS: u64 = 4;

/// The plan's offset of partition `p`: 0 on every fourth partition (nothing to delete there),
/// 1 to 3 elsewhere.
fn planned(p: u32) -> u64 {
    u64::from(p % 4)
}

fn lines(text: &str) -> usize {
    text.lines().count()
}

#[test]
fn a_wide_plan_reaches_every_partition_and_its_output_stays_a_summary() {
    let mut kafka = kafka();
    let dir = scratch("wide");
    let topic = unique("wide");
    let control = format!("{topic}-control");
    create_topic(&mut kafka, &topic, PARTITIONS, &SAFE);
    let records: Vec<(u32, String, String)> = (0..PARTITIONS)
        .flat_map(|p| {
            (0..RECORDS).map(move |n| (p, format!("k-{p}-{n}"), format!("{{\"n\":{n}}}")))
        })
        .collect();
    kafka.produce_batch(&topic, &records).expect("produce");
    // The marker of the topic now (every end at RECORDS), and one with the plan's offsets.
    let now = marker_file(&dir, "now", &topic);
    let marker: Value = serde_json::from_str(&std::fs::read_to_string(&now).unwrap()).unwrap();
    let id = marker["topicId"].as_str().unwrap().to_owned();
    let offsets: serde_json::Map<String, Value> = (0..PARTITIONS)
        .map(|p| (p.to_string(), Value::from(planned(p))))
        .collect();
    let checkpoint = dir.join("c1.json");
    let text = serde_json::json!({ "schemaVersion": 1, "topic": topic, "topicId": id, "offsets": offsets });
    std::fs::write(&checkpoint, text.to_string()).unwrap();
    let plan = plan_file(&dir, &checkpoint, "c1");
    let plan = plan.to_str().unwrap();

    let applied = cli(&[
        "apply",
        "--plan",
        plan,
        "--control-topic",
        &control,
        "--bootstrap-servers",
        bootstrap(),
        "--yes",
    ]);
    expect_code(&applied, 0);
    let (review, result) = (stderr(&applied), stdout(&applied));
    for part in [
        "passed every check. 1,200 partitions:",
        "  to delete:  1,800 records on 900 partitions (300 already begin at it: 0, 4, 8, 12, 16 and 295 more)",
        "  boundary:   offsets 0..3",
        "  beginning:  offsets 0\n",
        "  end:        offsets 4\n",
        "… and 1,190 more partitions (--all prints every row; --json has every field)",
        "1800 records below the boundary will be deleted.",
    ] {
        assert!(
            review.contains(part),
            "{part:?} missing from the review:\n{review}"
        );
    }
    assert!(lines(&review) < 25, "a summary, not 1,200 rows:\n{review}");
    assert!(
        result.contains("is APPLIED: every partition now begins at or after its boundary, 1,200 partitions at offsets 0..3 ({0=0, 1=1, 2=2, 3=3, 4=0, …}; --all prints every partition); each begins exactly there"),
        "{result}"
    );

    // Kafka's own reader: every partition begins exactly at its planned offset.
    let expected: Vec<(u32, u64)> = (0..PARTITIONS).map(|p| (p, planned(p))).collect();
    assert_eq!(beginnings_by_kafka(&topic), expected);

    let status = cli(&[
        "status",
        "--control-topic",
        &control,
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&status, 0);
    let summary = stdout(&status);
    for part in [
        format!("Data topic {topic} (ID {id}): 1,200 partitions"),
        "  records:    3,000 readable".into(),
        "  every partition begins exactly at its boundary".into(),
        "… and 1,190 more partitions".into(),
    ] {
        assert!(
            summary.contains(&part),
            "{part:?} missing from status:\n{summary}"
        );
    }
    assert!(lines(&summary) < 30, "{summary}");
    // --all: every row; --json: every row, whatever the width.
    let every = cli(&[
        "status",
        "--control-topic",
        &control,
        "--bootstrap-servers",
        bootstrap(),
        "--all",
    ]);
    expect_code(&every, 0);
    assert!(lines(&stdout(&every)) > 1_200, "--all prints every row");
    let json = cli(&[
        "status",
        "--control-topic",
        &control,
        "--bootstrap-servers",
        bootstrap(),
        "--json",
    ]);
    expect_code(&json, 0);
    let report: Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(report["live"].as_array().map(Vec::len), Some(1_200));
    assert_eq!(
        report["boundary"].as_object().map(serde_json::Map::len),
        Some(1_200)
    );

    // A restore from the marker taken before the cleanup: allowed, summarised.
    let allowed = cli(&[
        "check-recovery",
        "--markers",
        now.to_str().unwrap(),
        "--control-topic",
        &control,
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&allowed, 0);
    let verdict = stdout(&allowed);
    assert!(
        verdict.contains(
            "  1,200 partitions; restore from offsets 4, beginning 0..3, end 4; 0 records to replay"
        ),
        "{verdict}"
    );
    assert!(
        verdict.contains("  1,200 partitions restore from above their boundary"),
        "{verdict}"
    );
    assert!(lines(&verdict) < 20, "{verdict}");
    // A restore from offset 0 everywhere: below the boundary on 900 partitions, every one of
    // them in --json, the first ones in the sentence.
    let zero: serde_json::Map<String, Value> = (0..PARTITIONS)
        .map(|p| (p.to_string(), Value::from(0)))
        .collect();
    let old = dir.join("c0.json");
    let text =
        serde_json::json!({ "schemaVersion": 1, "topic": topic, "topicId": id, "offsets": zero });
    std::fs::write(&old, text.to_string()).unwrap();
    let args = [
        "check-recovery",
        "--markers",
        old.to_str().unwrap(),
        "--control-topic",
        &control,
        "--bootstrap-servers",
        bootstrap(),
    ];
    let refused = cli(&args);
    expect_code(&refused, 6);
    let why = stderr(&refused);
    assert!(
        why.contains("900 partitions are below the boundary:"),
        "{why}"
    );
    assert!(why.contains("… and 890 more partitions"), "{why}");
    assert!(lines(&why) < 20, "{why}");
    let refused = cli(&[&args[..], &["--json"]].concat());
    expect_code(&refused, 6);
    let error: Value = serde_json::from_str(&stdout(&refused)).unwrap();
    assert_eq!(
        error["error"]["violations"].as_array().map(Vec::len),
        Some(900)
    );

    kafka.delete_topic(&topic).expect("delete the wide topic");
}
