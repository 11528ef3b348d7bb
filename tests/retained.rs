//! `plan --retained` (issue 37, item 1), offline: the real Flink 2.2 snapshots of
//! `fixtures/snapshots` laid out as Flink keeps them — a checkpoint directory
//! (`<job-id>/chk-N`, with `shared/` state and a `chk-N` still without `_metadata`) and a
//! savepoint directory (`savepoint-*`) — are found, each planned, and planned together; a point
//! that cannot be planned (another topic ID, no such operator) stops the plan naming it, and
//! `--exclude` leaves it out; a location without snapshots is refused. The same layout uploaded
//! to a real S3 API server (moto's) plans alike from its `s3://` URIs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "support/stores.rs"]
mod stores;
mod support;

use std::path::{Path, PathBuf};

use support::*;

fn fixture(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/snapshots/flink-2.2")
        .join(case)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `<root>/checkpoints/<job>/chk-2` and `<job2>/chk-4` (+ an incomplete `chk-5`), and
/// `<root>/savepoints/savepoint-2103aa-0001` (+ `extra` savepoints given as (name, case)).
fn layout(name: &str, extra: &[(&str, &str)]) -> PathBuf {
    let root = scratch(name);
    let job_a = "00000000000000000000000000002103";
    let job_b = "00000000000000000000000000002104";
    copy_dir(
        &fixture("checkpoint-rocksdb-incremental").join(job_a),
        &root.join("checkpoints").join(job_a),
    );
    copy_dir(
        &fixture("checkpoint-unaligned").join(job_b),
        &root.join("checkpoints").join(job_b),
    );
    // A checkpoint in progress: state files written, no `_metadata` yet.
    let in_progress = root.join("checkpoints").join(job_b).join("chk-5");
    std::fs::create_dir_all(&in_progress).unwrap();
    std::fs::write(in_progress.join("a1b2c3-state"), b"partial").unwrap();
    copy_dir(
        &fixture("savepoint-canonical").join("savepoint"),
        &root.join("savepoints/savepoint-2103aa-0001"),
    );
    for (savepoint, case) in extra {
        copy_dir(
            &fixture(case).join("savepoint"),
            &root.join("savepoints").join(savepoint),
        );
    }
    root
}

#[test]
fn every_retained_point_is_found_planned_and_named_in_the_review() {
    let root = layout("retained", &[]);
    let checkpoints = root.join("checkpoints");
    let savepoints = root.join("savepoints");
    let output = cli(&[
        "plan",
        "--retained",
        checkpoints.to_str().unwrap(),
        savepoints.to_str().unwrap(),
        "--operator-uid",
        "agent-operator",
        "--json",
    ]);
    expect_code(&output, 0);
    let report = json_doc(&output);
    let retained = &report["retained"];
    let points: Vec<&str> = retained["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["location"].as_str().unwrap())
        .collect();
    let chk2 = checkpoints.join("00000000000000000000000000002103/chk-2");
    let chk4 = checkpoints.join("00000000000000000000000000002104/chk-4");
    let savepoint = savepoints.join("savepoint-2103aa-0001");
    assert_eq!(
        points,
        [
            chk2.to_str().unwrap(),
            chk4.to_str().unwrap(),
            savepoint.to_str().unwrap()
        ]
    );
    // Each point alone, as `plan --checkpoint` plans it; the plan is the minimum over them.
    let mut minimum: Option<Vec<u64>> = None;
    for (index, location) in points.iter().enumerate() {
        let alone = json_doc(&cli(&[
            "plan",
            "--checkpoint",
            location,
            "--operator-uid",
            "agent-operator",
            "--json",
        ]));
        let offsets: Vec<u64> = (0..4)
            .map(|p| alone["plan"]["offsets"][p.to_string()].as_u64().unwrap())
            .collect();
        assert_eq!(
            retained["points"][index]["offsets"]["0"].as_u64().unwrap(),
            offsets[0]
        );
        minimum = Some(match minimum {
            None => offsets,
            Some(m) => m.iter().zip(&offsets).map(|(a, b)| *a.min(b)).collect(),
        });
    }
    let minimum = minimum.unwrap();
    for (partition, offset) in minimum.iter().enumerate() {
        let key = partition.to_string();
        assert_eq!(report["plan"]["offsets"][&key].as_u64().unwrap(), *offset);
        assert_eq!(
            retained["boundedBy"][&key]["offset"].as_u64().unwrap(),
            *offset
        );
    }
    // These snapshots of one job hold the same markers: every point bounds every partition,
    // and the first found is recorded.
    assert_eq!(retained["boundsEveryPartition"], true);
    assert_eq!(retained["recorded"], chk2.to_str().unwrap());
    assert_eq!(
        report["plan"]["sourceRecoveryPoint"],
        chk2.to_str().unwrap()
    );
    assert_eq!(
        retained["incomplete"][0],
        checkpoints
            .join("00000000000000000000000000002104/chk-5")
            .to_str()
            .unwrap()
    );

    // The text review names every point and the folder that is no recovery point.
    let text = cli(&[
        "plan",
        "--retained",
        checkpoints.to_str().unwrap(),
        savepoints.to_str().unwrap(),
        "--operator-uid",
        "agent-operator",
    ]);
    expect_code(&text, 0);
    let review = stderr(&text);
    assert!(
        review.contains("Planned from 3 retained recovery points:")
            && review.contains(&format!(
                "{}  bounds 4 of 4 partitions",
                savepoint.display()
            ))
            && review.contains("chk-5 has no _metadata"),
        "{review}"
    );
}

#[test]
fn a_point_that_cannot_be_planned_stops_the_plan_unless_excluded() {
    let root = layout(
        "retained-refused",
        &[
            ("savepoint-9999aa-0002", "savepoint-two-topic-ids"),
            ("savepoint-7777bb-0003", "savepoint-no-uid"),
        ],
    );
    let savepoints = root.join("savepoints");
    let two_ids = savepoints.join("savepoint-9999aa-0002");
    let no_uid = savepoints.join("savepoint-7777bb-0003");
    let plan = |extra: &[&str]| {
        let mut args = vec![
            "plan",
            "--retained",
            savepoints.to_str().unwrap(),
            "--operator-uid",
            "agent-operator",
            "--json",
        ];
        args.extend_from_slice(extra);
        cli(&args)
    };
    // In name order, the savepoint with the job's other operator hashing is met first.
    let refused = plan(&[]);
    expect_code(&refused, 3);
    let error = &json_doc(&refused)["error"];
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("retained recovery point {}: ", no_uid.display())),
        "{message}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .ends_with(&format!("leave it out with --exclude {}", no_uid.display())),
        "{error}"
    );
    let refused = plan(&["--exclude", no_uid.to_str().unwrap()]);
    expect_code(&refused, 3);
    let message = json_doc(&refused)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.starts_with(&format!("retained recovery point {}: ", two_ids.display()))
            && message.contains("q3Vh0dGOR9mxpL4Fj2kW7A"),
        "{message}"
    );
    let planned = plan(&[
        "--exclude",
        no_uid.to_str().unwrap(),
        "--exclude",
        two_ids.join("_metadata").to_str().unwrap(),
    ]);
    expect_code(&planned, 0);
    let report = json_doc(&planned);
    assert_eq!(report["retained"]["points"].as_array().unwrap().len(), 1);
    assert_eq!(report["retained"]["excluded"].as_array().unwrap().len(), 2);
    assert_eq!(
        report["retained"]["unmatchedExclusions"],
        serde_json::json!([])
    );
    // An exclusion that names no point found is reported, not ignored in silence; one that
    // leaves out every point is refused.
    let stale = savepoints.join("savepoint-gone-0009");
    let planned = plan(&[
        "--exclude",
        no_uid.to_str().unwrap(),
        "--exclude",
        two_ids.to_str().unwrap(),
        "--exclude",
        stale.to_str().unwrap(),
    ]);
    expect_code(&planned, 0);
    assert_eq!(
        json_doc(&planned)["retained"]["unmatchedExclusions"],
        serde_json::json!([stale.to_str().unwrap()])
    );
    let kept = json_doc(&planned)["retained"]["points"][0]["location"]
        .as_str()
        .unwrap()
        .to_owned();
    let refused = plan(&[
        "--exclude",
        no_uid.to_str().unwrap(),
        "--exclude",
        two_ids.to_str().unwrap(),
        "--exclude",
        &kept,
    ]);
    expect_code(&refused, 3);
    assert!(
        json_doc(&refused)["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("every recovery point found was excluded"),
        "{}",
        json_doc(&refused)["error"]
    );

    // A location with no snapshot below it, and one that does not exist.
    let empty = scratch("retained-empty");
    for location in [empty.clone(), empty.join("missing")] {
        let output = cli(&[
            "plan",
            "--retained",
            location.to_str().unwrap(),
            "--operator-uid",
            "agent-operator",
        ]);
        expect_code(&output, 3);
        assert!(
            stderr(&output).contains(&format!("retained location {}", location.display())),
            "{}",
            stderr(&output)
        );
    }
    // The operator is needed, as for --checkpoint.
    let output = cli(&["plan", "--retained", savepoints.to_str().unwrap()]);
    expect_code(&output, 2);
    assert!(
        stderr(&output)
            .contains("--operator-uid or --operator-uid-hash is required with --retained"),
        "{}",
        stderr(&output)
    );
}

/// The layout uploaded as it is to moto's S3 server: `--retained s3://…/checkpoints
/// s3://…/savepoints` finds the same points (by URI), plans the same offsets and records the
/// URI of the same bounding point; `--exclude` takes a URI.
#[test]
fn retained_points_in_s3_plan_as_on_disk() {
    let root = layout("retained-s3", &[]);
    let endpoint = stores::s3_endpoint();
    let bucket = unique("retained").to_ascii_lowercase().replace('_', "-");
    stores::create_bucket(endpoint, &bucket);
    stores::upload_tree(endpoint, &bucket, &root, "flink");
    let uri = format!("s3://{bucket}/flink");
    let aws = [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
    ];
    let local_root = root.display().to_string();
    let plan = |base: &str, extra: &[&str]| {
        let checkpoints = format!("{base}/checkpoints");
        let savepoints = format!("{base}/savepoints");
        let mut args = vec![
            "plan",
            "--retained",
            checkpoints.as_str(),
            savepoints.as_str(),
            "--operator-uid",
            "agent-operator",
            "--json",
        ];
        args.extend_from_slice(extra);
        let output = run(&args, &aws);
        expect_code(&output, 0);
        json_doc(&output)
    };
    let on_disk = plan(&local_root, &[]);
    let in_s3 = plan(&uri, &[]);
    let located = |doc: &serde_json::Value, key: &str| -> Vec<String> {
        doc["retained"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.get("location").unwrap_or(p).as_str().unwrap().to_owned())
            .collect()
    };
    let expected: Vec<String> = located(&on_disk, "points")
        .iter()
        .map(|l| l.replace(&local_root, &uri))
        .collect();
    assert_eq!(located(&in_s3, "points"), expected);
    assert_eq!(
        located(&in_s3, "incomplete"),
        located(&on_disk, "incomplete")
            .iter()
            .map(|l| l.replace(&local_root, &uri))
            .collect::<Vec<_>>()
    );
    assert_eq!(in_s3["plan"]["offsets"], on_disk["plan"]["offsets"]);
    assert_eq!(
        in_s3["plan"]["sourceRecoveryPoint"].as_str().unwrap(),
        on_disk["plan"]["sourceRecoveryPoint"]
            .as_str()
            .unwrap()
            .replace(&local_root, &uri)
    );
    // --exclude by URI leaves that point out.
    let savepoint = format!("{uri}/savepoints/savepoint-2103aa-0001");
    let excluded = plan(&uri, &["--exclude", &savepoint]);
    assert!(!located(&excluded, "points").contains(&savepoint));
    assert_eq!(located(&excluded, "points").len(), expected.len() - 1);
}

/// One real job's retained points (`fixtures/snapshots/retained/`, written by
/// `java/snapshot-fixtures/generate-retained`): the three `chk-N` a running job kept
/// (`num-retained: 3`, markers advancing with every checkpoint) and a savepoint taken while it
/// ran. The plan is, per partition, the minimum over the Java tool's plan of each point alone
/// (computed here), recorded under the point that holds every minimum; each point's own offsets
/// are the Java tool's; the same from moto's S3 server by URI.
#[test]
fn a_real_jobs_retained_points_plan_to_the_minimum_of_each_points_java_plan() {
    use std::collections::BTreeMap;

    let repo = format!("{}/..", env!("CARGO_MANIFEST_DIR"));
    let root = format!("{repo}/fixtures/snapshots/retained/flink-2.2");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{root}/points.json")).unwrap())
            .unwrap();
    // Each point's location (relative to the repository) and its own plan's offsets.
    let own: Vec<(String, serde_json::Map<String, serde_json::Value>)> = expected["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| {
            let plan: serde_json::Value =
                serde_json::from_str(point["plan"].as_str().unwrap()).unwrap();
            (
                point["location"].as_str().unwrap().to_owned(),
                plan["offsets"].as_object().unwrap().clone(),
            )
        })
        .collect();
    assert!(own.len() >= 4, "three checkpoints and a savepoint: {own:?}");
    let mut minimum: BTreeMap<u32, (u64, Vec<String>)> = BTreeMap::new();
    for (location, offsets) in &own {
        for (partition, offset) in offsets {
            let (partition, offset) = (partition.parse().unwrap(), offset.as_u64().unwrap());
            let entry = minimum.entry(partition).or_insert((offset, Vec::new()));
            if offset < entry.0 {
                *entry = (offset, Vec::new());
            }
            if offset == entry.0 {
                entry.1.push(location.clone());
            }
        }
    }
    let oldest = &minimum.values().next().unwrap().1[0];
    assert!(
        minimum
            .values()
            .all(|(_, holders)| holders == &vec![oldest.clone()]),
        "one point holds every minimum: {minimum:?}"
    );

    let endpoint = stores::s3_endpoint();
    let bucket = unique("retained-real")
        .to_ascii_lowercase()
        .replace('_', "-");
    stores::create_bucket(endpoint, &bucket);
    stores::upload_tree(endpoint, &bucket, Path::new(&root), "job");
    let aws = [
        ("AWS_ENDPOINT_URL", endpoint),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
    ];
    let local = format!("{repo}/fixtures/snapshots/retained/flink-2.2");
    let in_s3 = format!("s3://{bucket}/job");
    for base in [local.as_str(), in_s3.as_str()] {
        // The fixture's locations, as found under `base`.
        let found = |location: &str| {
            format!(
                "{base}/{}",
                location
                    .strip_prefix("fixtures/snapshots/retained/flink-2.2/")
                    .unwrap()
            )
        };
        let checkpoints = format!("{base}/checkpoints");
        let savepoints = format!("{base}/savepoints");
        let output = run(
            &[
                "plan",
                "--retained",
                &checkpoints,
                &savepoints,
                "--operator-uid",
                "agent-operator",
                "--json",
            ],
            &aws,
        );
        expect_code(&output, 0);
        let doc = json_doc(&output);
        let retained = &doc["retained"];
        let points: Vec<(String, serde_json::Value)> = retained["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["location"].as_str().unwrap().to_owned(),
                    p["offsets"].clone(),
                )
            })
            .collect();
        let wanted: Vec<(String, serde_json::Value)> = own
            .iter()
            .map(|(location, offsets)| {
                (found(location), serde_json::Value::Object(offsets.clone()))
            })
            .collect();
        assert_eq!(points, wanted, "{base}");
        for (partition, (offset, holders)) in &minimum {
            let key = partition.to_string();
            assert_eq!(
                doc["plan"]["offsets"][&key].as_u64(),
                Some(*offset),
                "{base}"
            );
            let bounded: Vec<String> = holders.iter().map(|h| found(h)).collect();
            assert_eq!(
                retained["boundedBy"][&key]["points"],
                serde_json::json!(bounded),
                "{base}"
            );
        }
        assert_eq!(retained["recorded"].as_str().unwrap(), found(oldest));
        assert_eq!(retained["boundsEveryPartition"], true);
        assert_eq!(doc["plan"]["sourceRecoveryPoint"], retained["recorded"]);
    }
}
