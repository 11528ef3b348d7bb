//! Snapshots read through a store: every real Flink fixture, served under an `s3://` URI by an
//! in-memory store, plans exactly as it does from the bytes handed over directly (the older
//! entry point), with the URI as recovery point; the store is asked for the `_metadata` and the
//! marker operator's files only; a location without `_metadata` names the `chk-N` folders.

#![allow(clippy::unwrap_used, clippy::panic, reason = "test harness")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use action_state_format::json;
use action_state_format::snapshot::store::{
    SnapshotFailure, SnapshotStore, StoreError, StoredSnapshot,
};
use action_state_format::snapshot::{OperatorRef, Snapshot, StateFile};

const ROOT: &str = "s3://snapshots/flink";

/// The fixture tree as objects, keyed by URI, with every request recorded.
struct Bucket {
    objects: BTreeMap<String, Vec<u8>>,
    asked: Vec<String>,
}

impl Bucket {
    fn of_fixtures() -> Bucket {
        let root = fixtures();
        let mut objects = BTreeMap::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let key = path.strip_prefix(&root).unwrap().display().to_string();
                    objects.insert(format!("{ROOT}/{key}"), std::fs::read(&path).unwrap());
                }
            }
        }
        Bucket {
            objects,
            asked: Vec::new(),
        }
    }
}

impl SnapshotStore for Bucket {
    fn read(&mut self, location: &str, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
        self.asked.push(location.to_owned());
        let bytes = self
            .objects
            .get(location)
            .ok_or_else(|| StoreError::NotFound(location.to_owned()))?;
        if bytes.len() as u64 > max_bytes {
            return Err(StoreError::TooLarge(bytes.len() as u64));
        }
        Ok(bytes.clone())
    }

    fn list(&mut self, location: &str) -> Result<Vec<String>, StoreError> {
        let prefix = format!("{}/", location.trim_end_matches('/'));
        let mut names: Vec<String> = self
            .objects
            .keys()
            .filter_map(|key| key.strip_prefix(&prefix))
            .map(|rest| match rest.split_once('/') {
                Some((folder, _)) => format!("{folder}/"),
                None => rest.to_owned(),
            })
            .collect();
        names.dedup();
        Ok(names)
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/snapshots")
}

/// Every snapshot directory, relative to the fixtures root.
fn snapshot_dirs() -> Vec<String> {
    let bucket = Bucket::of_fixtures();
    let mut dirs: Vec<String> = bucket
        .objects
        .keys()
        .filter_map(|key| key.strip_suffix("/_metadata"))
        .map(|dir| dir.strip_prefix(&format!("{ROOT}/")).unwrap().to_owned())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 18, "fixtures found: {dirs:?}");
    dirs
}

/// The plan the older entry point gives from bytes read off the disk.
fn direct_plan(dir: &str, recovery_point: &str, operator: &OperatorRef) -> Result<String, String> {
    let local = fixtures().join(dir);
    let metadata = std::fs::read(local.join("_metadata")).unwrap();
    let snapshot =
        Snapshot::read(&local.display().to_string(), &metadata).map_err(|e| e.to_string())?;
    let needed = snapshot.marker_files(operator).map_err(|e| e.to_string())?;
    let bytes: Vec<(String, Vec<u8>)> = needed
        .iter()
        .map(|f| (f.path.clone(), std::fs::read(local.join(&f.path)).unwrap()))
        .collect();
    let files: Vec<StateFile<'_>> = bytes
        .iter()
        .map(|(path, bytes)| StateFile { path, bytes })
        .collect();
    snapshot
        .plan(recovery_point, operator, &files)
        .map(|(plan, _)| plan.render_pretty())
        .map_err(|e| e.to_string())
}

#[test]
fn every_fixture_plans_from_the_store_as_from_its_bytes_with_the_uri_as_recovery_point() {
    let operator = OperatorRef::Uid("agent-operator".to_owned());
    let mut planned = 0;
    for dir in snapshot_dirs() {
        let uri = format!("{ROOT}/{dir}");
        let mut bucket = Bucket::of_fixtures();
        let from_store = StoredSnapshot::open(&mut bucket, &uri)
            .and_then(|mut s| s.plan(&mut bucket, None, &operator))
            .map(|p| p.plan.render_pretty());
        let direct = direct_plan(&dir, &uri, &operator);
        match (&from_store, &direct) {
            (Ok(store), Ok(direct)) => {
                assert_eq!(store, direct, "{dir}");
                assert!(store.contains(&format!("\"sourceRecoveryPoint\" : \"{uri}\"")));
                planned += 1;
            }
            (Err(SnapshotFailure::Refused(error)), Err(direct)) => {
                // The same refusal, naming the URI instead of the local directory.
                let local = fixtures().join(&dir).display().to_string();
                assert_eq!(error.to_string(), direct.replace(&local, &uri), "{dir}");
            }
            other => panic!("{dir}: store and direct disagree: {other:?}"),
        }
        // Only the `_metadata` and files under the snapshot's own job directory were asked for.
        let job = uri.rsplit_once('/').unwrap().0;
        assert_eq!(bucket.asked[0], format!("{uri}/_metadata"));
        assert!(
            bucket.asked.iter().all(|a| a.starts_with(job)),
            "{:?}",
            bucket.asked
        );
    }
    assert!(planned >= 8, "plans made: {planned}");
}

#[test]
fn a_checkpoint_reads_its_shared_state_through_the_parent_folder() {
    let dir = "flink-2.2/checkpoint-rocksdb-incremental/00000000000000000000000000002103/chk-2";
    let uri = format!("{ROOT}/{dir}");
    let mut bucket = Bucket::of_fixtures();
    let mut snapshot = StoredSnapshot::open(&mut bucket, &format!("{uri}/_metadata")).unwrap();
    let plan = snapshot
        .plan(
            &mut bucket,
            Some("s3://elsewhere/chk-2"),
            &OperatorRef::Uid("agent-operator".into()),
        )
        .unwrap();
    assert!(
        plan.plan
            .render_pretty()
            .contains("\"sourceRecoveryPoint\" : \"s3://elsewhere/chk-2\"")
    );
    assert_eq!(plan.reads.requests as usize, bucket.asked.len());
    let bytes: usize = bucket.asked.iter().map(|a| bucket.objects[a].len()).sum();
    assert_eq!(plan.reads.bytes, bytes as u64);
}

#[test]
fn a_job_directory_is_refused_naming_its_checkpoints() {
    let job = format!("{ROOT}/flink-2.2/checkpoint-unaligned/00000000000000000000000000002104");
    let mut bucket = Bucket::of_fixtures();
    let Err(SnapshotFailure::Store { message, error, .. }) =
        StoredSnapshot::open(&mut bucket, &job)
    else {
        panic!("a job directory opened as a snapshot");
    };
    assert_eq!(error, StoreError::NotFound(format!("{job}/_metadata")));
    assert_eq!(
        message,
        format!(
            "{job} is not a Flink checkpoint or savepoint: {job}/_metadata does not exist (give the snapshot directory or its _metadata file); it is a job's checkpoint directory holding chk-4: give one of them"
        )
    );
}

#[test]
fn store_errors_name_the_location() {
    struct Down;
    impl SnapshotStore for Down {
        fn read(&mut self, _: &str, _: u64) -> Result<Vec<u8>, StoreError> {
            Err(StoreError::Unreachable(
                "endpoint http://127.0.0.1:9 refused the connection".into(),
            ))
        }
        fn list(&mut self, _: &str) -> Result<Vec<String>, StoreError> {
            Err(StoreError::Unreachable("down".into()))
        }
    }
    let Err(SnapshotFailure::Store { message, .. }) = StoredSnapshot::open(&mut Down, "s3://b/sp")
    else {
        panic!("opened from a store that is down");
    };
    assert_eq!(
        message,
        "the store of s3://b/sp/_metadata could not be reached: endpoint http://127.0.0.1:9 refused the connection"
    );
}

/// The file-merged checkpoint a real Flink job wrote to S3 (`fixtures/snapshots/s3/`): its
/// markers are segments of one `taskowned/` file, planned as the State Processor API planned
/// them; a merged file too short for its segments is refused naming the bytes wanted and held.
#[test]
fn a_file_merged_checkpoint_reads_its_segments_and_refuses_a_short_file() {
    let case = fixtures().join("s3/flink-2.2/checkpoint-file-merging");
    let expected = std::fs::read_to_string(case.join("expected.json")).unwrap();
    let Ok(json::Value::Object(fields)) = json::parse(&expected) else {
        panic!("expected.json is not an object");
    };
    let text = |name: &str| match fields.iter().find(|(key, _)| key == name) {
        Some((_, json::Value::String(value))) => value.clone(),
        _ => panic!("expected.json has no {name}"),
    };
    let (uri, expected_plan) = (text("uri"), text("plan"));
    let uri = uri.as_str();
    let mut bucket = Bucket::of_fixtures();
    // The job wrote to s3://flink-state/: its objects under their own keys.
    let prefix = format!("{ROOT}/s3/flink-2.2/checkpoint-file-merging/bucket/");
    let moved: Vec<(String, Vec<u8>)> = bucket
        .objects
        .iter()
        .filter_map(|(key, bytes)| {
            key.strip_prefix(&prefix)
                .map(|rest| (format!("s3://flink-state/{rest}"), bytes.clone()))
        })
        .collect();
    assert!(moved.iter().any(|(key, _)| key.contains("/taskowned/")));
    bucket.objects.extend(moved.clone());
    let operator = OperatorRef::Uid("agent-operator".into());
    let plan = StoredSnapshot::open(&mut bucket, uri)
        .and_then(|mut s| s.plan(&mut bucket, None, &operator))
        .unwrap();
    assert_eq!(plan.plan.render_pretty(), expected_plan);
    assert!(bucket.asked.iter().any(|a| a.contains("/taskowned/")));

    for (key, bytes) in moved.iter().filter(|(key, _)| key.contains("/taskowned/")) {
        bucket
            .objects
            .insert(key.clone(), bytes[..bytes.len() / 2].to_vec());
    }
    let Err(SnapshotFailure::Refused(error)) = StoredSnapshot::open(&mut bucket, uri)
        .and_then(|mut s| s.plan(&mut bucket, None, &operator))
    else {
        panic!("a truncated merged file was planned");
    };
    let message = error.to_string();
    assert!(
        message.contains("merged file segment") && message.contains(" at byte "),
        "{message}"
    );
}
