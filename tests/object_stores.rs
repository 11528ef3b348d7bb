//! Snapshots where Flink keeps them: every real Flink fixture, uploaded as it is to a real S3 API
//! server (moto's, started by `scripts/stores`), a GCS API server (fake-gcs-server), Azure's
//! blob emulator (Azurite) and Hadoop's MiniDFSCluster, plans from its `s3://` URI byte for byte as its
//! local copy plans with that URI as `--recovery-point`; `snapshot` lists the same; the store's
//! endpoint and keys come from the AWS environment or from Flink's own configuration file; a
//! missing snapshot, a store that is down and refused credentials are each told apart, naming
//! the URI, within seconds, and never print a secret.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::panic,
    reason = "test harness: a failure is a failed test"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

#[path = "support/stores.rs"]
mod stores;
mod support;

use support::{error_kind, expect_code, json_doc, scratch, stderr, stdout, unique};

const SECRET: &str = "s3cr3t-never-printed";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The bucket holding `fixtures/snapshots` under `flink/`, uploaded once per test process.
fn bucket() -> &'static str {
    static BUCKET: OnceLock<String> = OnceLock::new();
    BUCKET.get_or_init(|| {
        let endpoint = stores::s3_endpoint();
        let bucket = unique("snapshots").to_ascii_lowercase().replace('_', "-");
        stores::create_bucket(endpoint, &bucket);
        let uploaded = stores::upload_tree(
            endpoint,
            &bucket,
            &repo().join("fixtures/snapshots"),
            "flink",
        );
        assert!(uploaded > 50, "uploaded {uploaded} fixture files");
        bucket
    })
}

/// The CLI from the repository root with none of the caller's store settings, and `envs`.
fn cli(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(support::CLI);
    command.args(args).current_dir(repo());
    for (key, _) in std::env::vars() {
        if key.starts_with("AWS_")
            || key.starts_with("GOOGLE_")
            || key.starts_with("AZURE_")
            || key == "FLINK_CONF_DIR"
            || key == "ASC_FLINK_CONFIG"
        {
            command.env_remove(key);
        }
    }
    // No instance-metadata lookups, no shared credentials of the machine.
    command.env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent");
    command.env("AWS_EC2_METADATA_DISABLED", "true");
    for (key, value) in envs {
        command.env(key, value);
    }
    command.output().expect("the CLI runs")
}

fn aws_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", endpoint.to_owned()),
        ("AWS_ACCESS_KEY_ID", "testing".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", SECRET.to_owned()),
        ("AWS_REGION", "us-east-1".to_owned()),
    ]
}

fn with_aws(args: &[&str], endpoint: &str) -> Output {
    let envs = aws_env(endpoint);
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    cli(args, &envs)
}

/// Every fixture case: its snapshot directory relative to `fixtures/snapshots`, and the
/// operator arguments its `expected.json` names.
fn cases() -> Vec<(String, Vec<String>)> {
    let root = repo().join("fixtures/snapshots");
    let mut cases = Vec::new();
    for line in std::fs::read_dir(&root).unwrap() {
        let line = line.unwrap().path();
        if !line.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&line).unwrap() {
            let expected = case.unwrap().path().join("expected.json");
            if !expected.is_file() {
                continue;
            }
            let expected: Value =
                serde_json::from_str(&std::fs::read_to_string(&expected).unwrap()).unwrap();
            let dir = expected["checkpoint"]
                .as_str()
                .unwrap()
                .strip_prefix("fixtures/snapshots/")
                .unwrap()
                .to_owned();
            let operator = match expected["operatorUid"].as_str() {
                Some(uid) => vec!["--operator-uid".to_owned(), uid.to_owned()],
                None => vec![
                    "--operator-uid-hash".to_owned(),
                    expected["operatorUidHash"].as_str().unwrap().to_owned(),
                ],
            };
            cases.push((dir, operator));
        }
    }
    cases.sort();
    assert!(cases.len() >= 18, "fixture cases: {cases:?}");
    cases
}

fn args<'a>(head: &[&'a str], operator: &'a [String]) -> Vec<&'a str> {
    let mut all = head.to_vec();
    all.extend(operator.iter().map(String::as_str));
    all
}

/// Plans every fixture case from the URI `uri_of(index, dir)` gives (with `envs`) and from its
/// local copy with that URI as `--recovery-point`: the same plan byte for byte, recording the
/// URI, or the same refusal naming the URI where the local run names its path. Never a secret
/// on stderr. At least 8 cases plan (both Flink lines).
fn plans_like_local_copies(uri_of: impl Fn(usize, &str) -> String, envs: &[(&str, &str)]) {
    let mut planned = 0;
    for (index, (dir, operator)) in cases().into_iter().enumerate() {
        let uri = uri_of(index, &dir);
        let local = format!("fixtures/snapshots/{dir}");
        let from_store = cli(&args(&["plan", "--checkpoint", &uri], &operator), envs);
        let from_disk = cli(
            &args(
                &["plan", "--checkpoint", &local, "--recovery-point", &uri],
                &operator,
            ),
            &[],
        );
        assert_eq!(
            from_store.status.code(),
            from_disk.status.code(),
            "{dir}: {}",
            stderr(&from_store)
        );
        if from_disk.status.success() {
            assert_eq!(stdout(&from_store), stdout(&from_disk), "{dir}");
            assert!(
                stdout(&from_store).contains(&format!("\"sourceRecoveryPoint\" : \"{uri}\"")),
                "{dir}: {}",
                stdout(&from_store)
            );
            planned += 1;
        } else {
            assert_eq!(
                stderr(&from_store),
                stderr(&from_disk).replace(&local, &uri),
                "{dir}"
            );
        }
        assert!(!stderr(&from_store).contains(SECRET));
    }
    assert!(planned >= 8, "cases planned: {planned}");
}

#[test]
fn every_fixture_plans_from_s3_byte_for_byte_as_its_local_copy_with_the_uri_as_recovery_point() {
    let bucket = bucket();
    let envs = aws_env(stores::s3_endpoint());
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    plans_like_local_copies(|_, dir| format!("s3://{bucket}/flink/{dir}"), &envs);
}

/// `fixtures/snapshots/s3/<line>/<case>/`: snapshots a real Flink job wrote into an S3 server
/// through Flink's own S3 filesystem (flink-s3-fs-presto), their objects (`bucket/<key>`) and
/// the Java tool's plan from the same `s3://` URI (the State Processor API reading through that
/// filesystem; `java/snapshot-fixtures/generate-s3`).
fn flink_written_s3_cases() -> Vec<(PathBuf, Value)> {
    let root = repo().join("fixtures/snapshots/s3");
    let mut cases = Vec::new();
    for line in std::fs::read_dir(&root).unwrap() {
        for case in std::fs::read_dir(line.unwrap().path()).unwrap() {
            let dir = case.unwrap().path();
            let text = std::fs::read_to_string(dir.join("expected.json")).unwrap();
            cases.push((dir, serde_json::from_str(&text).unwrap()));
        }
    }
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases
}

#[test]
fn snapshots_flink_wrote_to_s3_plan_from_their_uri_as_the_java_tools_path_plans_them() {
    let endpoint = stores::s3_endpoint();
    // The bucket the job wrote to: a checkpoint's `_metadata` names its files by absolute
    // `s3://flink-state/…` URIs.
    stores::ensure_bucket(endpoint, "flink-state");
    // The keys the job's Flink read (s3.* of its configuration), nothing from the AWS environment.
    let conf = scratch("flink-written-s3");
    std::fs::write(
        conf.join("config.yaml"),
        format!(
            "s3.endpoint: {endpoint}\ns3.path.style.access: true\ns3.access-key: flink\ns3.secret-key: flink-secret\n"
        ),
    )
    .unwrap();
    let conf = conf.to_str().unwrap();
    let cases = flink_written_s3_cases();
    assert!(cases.len() >= 3, "{cases:?}");
    let mut read_a_state_file = false;
    for (dir, expected) in &cases {
        stores::upload_tree_once(endpoint, "flink-state", &dir.join("bucket"));
        let uri = expected["uri"].as_str().unwrap();
        let uid = expected["operatorUid"].as_str().unwrap();
        let plan = [
            "plan",
            "--checkpoint",
            uri,
            "--operator-uid",
            uid,
            "--flink-config",
            conf,
        ];
        let text = cli(&plan, &[("AWS_REGION", "us-east-1")]);
        expect_code(&text, 0);
        assert_eq!(
            stdout(&text),
            expected["plan"].as_str().unwrap(),
            "{}",
            dir.display()
        );
        let json = cli(
            &[&plan[..], &["--json"]].concat(),
            &[("AWS_REGION", "us-east-1")],
        );
        expect_code(&json, 0);
        let doc = json_doc(&json);
        let requests = doc["snapshotReads"]["requests"].as_u64().unwrap();
        read_a_state_file |= requests > 1;
        assert!(requests <= 3, "{}: {}", dir.display(), doc["snapshotReads"]);
    }
    assert!(
        read_a_state_file,
        "some case keeps its markers in a state file of their own"
    );
}

#[test]
fn a_checkpoint_reads_its_shared_state_and_reports_what_it_read() {
    let endpoint = stores::s3_endpoint();
    let dir = "flink-2.2/checkpoint-rocksdb-incremental/00000000000000000000000000002103/chk-2";
    let uri = format!("s3://{}/flink/{dir}", bucket());
    let output = with_aws(
        &[
            "plan",
            "--checkpoint",
            &uri,
            "--operator-uid",
            "agent-operator",
            "--json",
        ],
        endpoint,
    );
    expect_code(&output, 0);
    let doc = json_doc(&output);
    assert_eq!(doc["plan"]["sourceRecoveryPoint"], uri.as_str());
    // Only the `_metadata` and the marker operator's files: never the whole checkpoint.
    let reads = &doc["snapshotReads"];
    let local = repo().join("fixtures/snapshots").join(dir);
    let metadata = std::fs::metadata(local.join("_metadata")).unwrap().len();
    let total: u64 = std::fs::read_dir(&local)
        .unwrap()
        .chain(std::fs::read_dir(local.join("../shared")).unwrap())
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let requests = reads["requests"].as_u64().unwrap();
    let bytes = reads["bytes"].as_u64().unwrap();
    assert!((1..=3).contains(&requests), "{reads}");
    assert!(
        bytes >= metadata && bytes < total,
        "{reads}: metadata {metadata}, all {total}"
    );
}

#[test]
fn snapshot_lists_from_s3_what_it_lists_from_disk() {
    let endpoint = stores::s3_endpoint();
    for dir in [
        "flink-2.2/savepoint-canonical/savepoint",
        "flink-1.20/checkpoint-unaligned/00000000000000000000000000002104/chk-4",
    ] {
        let uri = format!("s3://{}/flink/{dir}", bucket());
        let local = format!("fixtures/snapshots/{dir}");
        let from_s3 = with_aws(&["snapshot", &uri, "--json"], endpoint);
        let from_disk = cli(&["snapshot", &local, "--json"], &[]);
        expect_code(&from_s3, 0);
        let mut s3_doc = json_doc(&from_s3);
        let mut disk_doc = json_doc(&from_disk);
        assert_eq!(s3_doc["snapshot"], uri.as_str());
        s3_doc["snapshot"] = Value::Null;
        disk_doc["snapshot"] = Value::Null;
        assert_eq!(s3_doc, disk_doc, "{dir}");
    }
}

/// Flink's own configuration gives the endpoint and keys, in either file format, through
/// `--flink-config` (file or directory) or `FLINK_CONF_DIR`, with no AWS variable set.
#[test]
fn flink_configuration_gives_the_store_settings() {
    let endpoint = stores::s3_endpoint();
    let uri = format!(
        "s3://{}/flink/flink-2.2/savepoint-canonical/savepoint",
        bucket()
    );
    let expected = cli(
        &[
            "plan",
            "--checkpoint",
            "fixtures/snapshots/flink-2.2/savepoint-canonical/savepoint",
            "--recovery-point",
            &uri,
            "--operator-uid",
            "agent-operator",
        ],
        &[],
    );
    expect_code(&expected, 0);
    let nested = scratch("flink-conf-nested");
    std::fs::write(
        nested.join("config.yaml"),
        format!(
            "# Flink 2 configuration\ns3:\n  endpoint: {endpoint}\n  path.style.access: true\n  access-key: testing\n  secret-key: \"{SECRET}\"\nstate:\n  checkpoints:\n    dir: s3://{}/flink\n",
            bucket()
        ),
    )
    .unwrap();
    let flat = scratch("flink-conf-flat");
    std::fs::write(
        flat.join("flink-conf.yaml"),
        format!(
            "s3.endpoint: {endpoint}\ns3.path.style.access: true\ns3.access-key: testing\ns3.secret-key: {SECRET}\n"
        ),
    )
    .unwrap();
    let plan = [
        "plan",
        "--checkpoint",
        &uri,
        "--operator-uid",
        "agent-operator",
    ];
    let config_file = nested.join("config.yaml").display().to_string();
    // Each route: extra arguments, extra environment.
    type Route<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>);
    let routes: Vec<Route<'_>> = vec![
        (vec!["--flink-config", &config_file], vec![]),
        (vec![], vec![("FLINK_CONF_DIR", flat.to_str().unwrap())]),
        (vec![], vec![("ASC_FLINK_CONFIG", nested.to_str().unwrap())]),
    ];
    for (extra, envs) in routes {
        let mut all = plan.to_vec();
        all.extend(extra.iter().copied());
        let envs: Vec<(&str, &str)> = envs
            .into_iter()
            .chain([("AWS_REGION", "us-east-1")])
            .collect();
        let output = cli(&all, &envs);
        expect_code(&output, 0);
        assert_eq!(stdout(&output), stdout(&expected), "{all:?} {envs:?}");
    }
}

#[test]
fn a_missing_snapshot_is_refused_naming_the_uri_and_the_checkpoints_there() {
    let endpoint = stores::s3_endpoint();
    let missing = format!("s3://{}/flink/no-such-savepoint", bucket());
    let output = with_aws(
        &[
            "plan",
            "--checkpoint",
            &missing,
            "--operator-uid",
            "x",
            "--json",
        ],
        endpoint,
    );
    expect_code(&output, 3);
    let message = json_doc(&output)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains(&format!("{missing}/_metadata does not exist")),
        "{message}"
    );
    let job = format!(
        "s3://{}/flink/flink-2.2/checkpoint-unaligned/00000000000000000000000000002104",
        bucket()
    );
    let output = with_aws(
        &["plan", "--checkpoint", &job, "--operator-uid", "x"],
        endpoint,
    );
    expect_code(&output, 3);
    assert!(
        stderr(&output)
            .contains("it is a job's checkpoint directory holding chk-4: give one of them"),
        "{}",
        stderr(&output)
    );
    let output = cli(
        &[
            "plan",
            "--checkpoint",
            "ftp://files.example/flink/sp",
            "--operator-uid",
            "x",
        ],
        &[],
    );
    expect_code(&output, 3);
    assert!(
        stderr(&output).contains("not ftp://"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_store_that_is_down_fails_at_once_naming_its_endpoint() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let uri = "s3://anything/savepoint-1";
    let started = Instant::now();
    let output = with_aws(
        &["plan", "--checkpoint", uri, "--operator-uid", "x", "--json"],
        &endpoint,
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    expect_code(&output, 4);
    assert_eq!(error_kind(&output), "snapshot-store");
    let error = &json_doc(&output)["error"];
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("{uri}/_metadata could not be reached")),
        "{message}"
    );
    assert!(message.contains(&endpoint), "{message}");
    assert!(!stdout(&output).contains(SECRET));
}

#[test]
fn refused_credentials_name_their_source_and_never_the_secret() {
    let endpoint = stores::s3_auth_endpoint();
    let uri = "s3://guarded/savepoint-1";
    let started = Instant::now();
    let output = with_aws(
        &["plan", "--checkpoint", uri, "--operator-uid", "x"],
        endpoint,
    );
    assert!(started.elapsed() < Duration::from_secs(15));
    expect_code(&output, 4);
    let said = stderr(&output);
    assert!(
        said.contains(&format!("the store refused to give {uri}/_metadata")),
        "{said}"
    );
    assert!(
        said.contains("credentials from AWS_ACCESS_KEY_ID from the environment"),
        "{said}"
    );
    assert!(!said.contains(SECRET), "{said}");
    // The same through Flink's configuration names that file.
    let conf = scratch("flink-conf-refused");
    std::fs::write(
        conf.join("config.yaml"),
        format!("s3.endpoint: {endpoint}\ns3.access-key: testing\ns3.secret-key: {SECRET}\n"),
    )
    .unwrap();
    let output = cli(
        &[
            "plan",
            "--checkpoint",
            uri,
            "--operator-uid",
            "x",
            "--flink-config",
            conf.to_str().unwrap(),
        ],
        &[("AWS_REGION", "us-east-1")],
    );
    expect_code(&output, 4);
    let said = stderr(&output);
    assert!(
        said.contains(&format!(
            "credentials from s3.access-key in {}",
            conf.join("config.yaml").display()
        )),
        "{said}"
    );
    assert!(!said.contains(SECRET), "{said}");
}

/// `check-recovery --checkpoint s3://…` decides from the markers the job would restore, read from
/// the store: the same verdict and sentence as from the local copy.
#[test]
fn check_recovery_reads_the_snapshot_from_the_store() {
    let endpoint = stores::s3_endpoint();
    let bootstrap = support::bootstrap();
    support::fixture_topic(&mut support::kafka());
    for dir in [
        "flink-1.20/savepoint-canonical/savepoint",
        "flink-2.2/savepoint-legacy/savepoint",
    ] {
        let uri = format!("s3://{}/flink/{dir}", bucket());
        let local = format!("fixtures/snapshots/{dir}");
        let check = |location: &str| {
            with_aws(
                &[
                    "check-recovery",
                    "--checkpoint",
                    location,
                    "--operator-uid",
                    "agent-operator",
                    "--topic",
                    "action-state",
                    "--bootstrap-servers",
                    bootstrap,
                    "--timeout",
                    "15",
                ],
                endpoint,
            )
        };
        let from_s3 = check(&uri);
        let from_disk = check(&local);
        expect_code(&from_s3, 6);
        assert_eq!(
            stderr(&from_s3),
            stderr(&from_disk).replace(&local, &uri),
            "{dir}"
        );
    }
}

/// Google Cloud Storage: every fixture from fake-gcs-server's `gs://` bucket plans as from disk.
#[test]
fn every_fixture_plans_from_gcs_as_its_local_copy() {
    let endpoint = stores::gcs_endpoint();
    let bucket = unique("gcs-snapshots")
        .to_ascii_lowercase()
        .replace('_', "-");
    let uploaded = stores::gcs_upload_tree(
        endpoint,
        &bucket,
        &repo().join("fixtures/snapshots"),
        "flink",
    );
    assert!(uploaded > 50, "uploaded {uploaded}");
    // The emulator's endpoint, as a service-account file names a private endpoint.
    let key = scratch("gcs-key").join("service-account.json");
    std::fs::write(
        &key,
        format!(
            r#"{{"gcs_base_url": "{endpoint}", "disable_oauth": true, "client_email": "", "private_key": "", "private_key_id": ""}}"#
        ),
    )
    .unwrap();
    let key = key.display().to_string();
    plans_like_local_copies(
        |_, dir| format!("gs://{bucket}/flink/{dir}"),
        &[("GOOGLE_SERVICE_ACCOUNT", &key)],
    );
    let missing = format!("gs://{bucket}/flink/none");
    let output = cli(
        &["plan", "--checkpoint", &missing, "--operator-uid", "x"],
        &[("GOOGLE_SERVICE_ACCOUNT", &key)],
    );
    expect_code(&output, 3);
    assert!(
        stderr(&output).contains(&format!("{missing}/_metadata does not exist")),
        "{}",
        stderr(&output)
    );
}

/// Azure Blob Storage and ADLS Gen2: every fixture from Azurite plans as from disk, through
/// `abfss://` and `wasbs://` alike; the account key may come from Flink's configuration
/// (`fs.azure.account.key.<account>.<host>`), and a wrong one is refused naming that file.
#[test]
fn every_fixture_plans_from_azure_as_its_local_copy() {
    let endpoint = stores::azure_endpoint();
    let container = unique("azsnap").to_ascii_lowercase().replace('_', "-");
    let uploaded =
        stores::azure_upload_tree(&container, &repo().join("fixtures/snapshots"), "flink");
    assert!(uploaded > 50, "uploaded {uploaded}");
    let emulator = [
        ("AZURE_STORAGE_USE_EMULATOR", "true"),
        ("AZURITE_BLOB_STORAGE_URL", endpoint),
    ];
    // Both URI forms Flink's Azure filesystem writes, taking turns.
    plans_like_local_copies(
        |index, dir| {
            if index % 2 == 0 {
                format!("abfss://{container}@devstoreaccount1.dfs.core.windows.net/flink/{dir}")
            } else {
                format!("wasbs://{container}@devstoreaccount1.blob.core.windows.net/flink/{dir}")
            }
        },
        &emulator,
    );

    let uri = format!(
        "abfss://{container}@devstoreaccount1.dfs.core.windows.net/flink/flink-2.2/savepoint-canonical/savepoint"
    );
    let plan = [
        "plan",
        "--checkpoint",
        uri.as_str(),
        "--operator-uid",
        "agent-operator",
    ];
    let conf = scratch("flink-conf-azure");
    // Azurite's published development key.
    let key =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    std::fs::write(
        conf.join("config.yaml"),
        format!("fs.azure.account.key.devstoreaccount1.dfs.core.windows.net: {key}\n"),
    )
    .unwrap();
    let conf_dir = conf.display().to_string();
    let mut with_conf = emulator.to_vec();
    with_conf.push(("FLINK_CONF_DIR", &conf_dir));
    expect_code(&cli(&plan, &with_conf), 0);
    let wrong = format!("{}AAAA", &key[..key.len() - 6]) + "==";
    std::fs::write(
        conf.join("config.yaml"),
        format!("fs.azure.account.key.devstoreaccount1.dfs.core.windows.net: {wrong}\n"),
    )
    .unwrap();
    let output = cli(&plan, &with_conf);
    expect_code(&output, 4);
    let said = stderr(&output);
    assert!(
        said.contains(&format!(
            "credentials from fs.azure.account.key of devstoreaccount1 in {}",
            conf.join("config.yaml").display()
        )),
        "{said}"
    );
    assert!(!said.contains(&wrong) && !said.contains(key), "{said}");
}

/// HDFS: every fixture written into a real MiniDFSCluster plans from its `hdfs://` URI as from
/// disk; a NameNode that is down fails at once, naming it.
#[test]
fn every_fixture_plans_from_hdfs_as_its_local_copy() {
    let namenode = stores::hdfs_endpoint();
    let prefix = unique("hdfs-snapshots");
    let uploaded = stores::hdfs_upload_tree(namenode, &repo().join("fixtures/snapshots"), &prefix);
    assert!(uploaded > 50, "uploaded {uploaded}");
    plans_like_local_copies(|_, dir| format!("{namenode}/{prefix}/{dir}"), &[]);
    let job = format!(
        "{namenode}/{prefix}/flink-2.2/checkpoint-unaligned/00000000000000000000000000002104"
    );
    let output = cli(&["plan", "--checkpoint", &job, "--operator-uid", "x"], &[]);
    expect_code(&output, 3);
    assert!(
        stderr(&output).contains("holding chk-4: give one of them"),
        "{}",
        stderr(&output)
    );

    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("hdfs://{}", closed.local_addr().unwrap());
    drop(closed);
    let started = Instant::now();
    let output = cli(
        &[
            "plan",
            "--checkpoint",
            &format!("{down}/sp"),
            "--operator-uid",
            "x",
        ],
        &[],
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    expect_code(&output, 4);
    assert!(
        stderr(&output).contains(&format!("NameNode {}", &down["hdfs://".len()..])),
        "{}",
        stderr(&output)
    );
}
