//! End-to-end: the CLI's offline commands over the shared fixtures, usage errors and exit codes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use support::*;

fn fixtures(prefix: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut dirs: Vec<PathBuf> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    dirs.sort();
    dirs
}

fn read(dir: &Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap()
}

#[test]
fn verify_accepts_and_refuses_every_plan_fixture_like_the_harness() {
    let cases = fixtures("plan-");
    assert!(cases.len() >= 40, "fixtures present");
    for dir in cases {
        let output = cli(&["verify", "--plan", dir.join("plan.json").to_str().unwrap()]);
        if dir.join("error.txt").exists() {
            expect_code(&output, 3);
            let wanted = read(&dir, "error.txt");
            assert!(
                stderr(&output).contains(wanted.trim_end_matches('\n')),
                "{}: {}",
                dir.display(),
                stderr(&output)
            );
        } else {
            expect_code(&output, 0);
            assert_eq!(
                stdout(&output),
                read(&dir, "plan-id.txt"),
                "{}",
                dir.display()
            );
        }
    }
}

#[test]
fn plan_files_written_by_the_cli_are_byte_identical_to_the_java_format() {
    let mut checked = 0;
    for dir in fixtures("markers-")
        .into_iter()
        .filter(|d| d.join("expected.json").exists())
    {
        let texts: Vec<String> = serde_json::from_str(&read(&dir, "markers.json")).unwrap();
        let scratch = scratch("markers");
        for (index, text) in texts.iter().enumerate() {
            fs::write(scratch.join(format!("{index:04}.json")), text).unwrap();
        }
        let output_path = scratch.join("plan.json");
        let output = cli(&[
            "plan",
            "--markers",
            scratch.to_str().unwrap(),
            "--recovery-point",
            &read(&dir, "recovery-point.txt"),
            "--output",
            output_path.to_str().unwrap(),
        ]);
        expect_code(&output, 0);
        assert_eq!(
            fs::read(&output_path).unwrap(),
            fs::read(dir.join("expected.json")).unwrap(),
            "{}",
            dir.display()
        );
        checked += 1;
    }
    assert!(checked >= 5, "valid marker fixtures checked: {checked}");
}

#[test]
fn plan_accepts_a_json_array_of_markers_and_writes_to_stdout() {
    let dir = scratch("array");
    let file = dir.join("markers.json");
    fs::write(
        &file,
        r#"[{"schemaVersion":1,"topic":"action-state","topicId":"topic-id","offsets":{"0":15,"1":30}},
            {"schemaVersion":1,"topic":"action-state","topicId":"topic-id","offsets":{"0":10,"1":35}}]"#,
    )
    .unwrap();
    let output = cli(&[
        "plan",
        "--markers",
        file.to_str().unwrap(),
        "--recovery-point",
        "checkpoint-42",
    ]);
    expect_code(&output, 0);
    assert!(
        stdout(&output).contains("\"0\" : 10,\n    \"1\" : 30\n"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn plan_never_overwrites_an_existing_file() {
    let dir = scratch("overwrite");
    let marker = dir.join("m.json");
    fs::write(
        &marker,
        r#"{"schemaVersion":1,"topic":"t","topicId":"id","offsets":{"0":1}}"#,
    )
    .unwrap();
    let existing = dir.join("plan.json");
    fs::write(&existing, "keep me").unwrap();
    let output = cli(&[
        "plan",
        "--markers",
        marker.to_str().unwrap(),
        "--recovery-point",
        "rp",
        "--output",
        existing.to_str().unwrap(),
    ]);
    expect_code(&output, 3);
    assert!(
        stderr(&output).contains("already exists"),
        "{}",
        stderr(&output)
    );
    assert_eq!(fs::read_to_string(&existing).unwrap(), "keep me");
}

#[test]
fn legacy_markers_cannot_authorize_a_plan() {
    let dir = scratch("legacy");
    let marker = dir.join("m.json");
    fs::write(&marker, r#"{"0":100}"#).unwrap();
    let output = cli(&[
        "plan",
        "--markers",
        marker.to_str().unwrap(),
        "--recovery-point",
        "rp",
        "--json",
    ]);
    expect_code(&output, 3);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["error"]["kind"], "invalid-marker");
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("requires versioned Kafka recovery markers")
    );
}

#[test]
fn usage_errors_exit_2_and_help_teaches() {
    expect_code(&cli(&["apply", "--control-topic", "c"]), 2);
    expect_code(&cli(&["verify", "--plan", "p.json", "--typo", "x"]), 2);
    expect_code(
        &cli(&[
            "apply",
            "--plan",
            "p",
            "--control-topic",
            "c",
            "--replication-factor",
            "0",
            "--bootstrap-servers",
            "x:1",
        ]),
        2,
    );
    let help = cli(&["apply", "--help"]);
    expect_code(&help, 0);
    assert!(stdout(&help).contains("COMMITTED"), "{}", stdout(&help));
    let missing_servers = cli(&["status", "--control-topic", "c"]);
    expect_code(&missing_servers, 2);
    assert!(stderr(&missing_servers).contains("no Kafka bootstrap servers"));
}

/// A plan or marker file that is not there is the operator's input named wrongly: exit 3 (input
/// rejected), not 4, which scripts read as "Kafka or I/O failed, try again" (issue 38, item 6).
#[test]
fn a_missing_input_file_is_rejected_input_not_a_failure() {
    let output = cli(&["verify", "--plan", "/nonexistent/plan.json"]);
    expect_code(&output, 3);
    assert!(stderr(&output).contains("cannot read plan file /nonexistent/plan.json"));
    let output = cli(&[
        "plan",
        "--markers",
        "/nonexistent/markers.json",
        "--recovery-point",
        "C1",
    ]);
    expect_code(&output, 3);
    assert!(
        stderr(&output).contains("/nonexistent/markers.json"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn verify_json_reports_the_plan() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/plan-spec-test-vector/plan.json");
    let output = cli(&["verify", "--plan", path.to_str().unwrap(), "--json"]);
    expect_code(&output, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        json["planId"],
        "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d"
    );
    assert_eq!(
        json["plan"]["offsets"],
        serde_json::json!({"0": 10, "1": 20})
    );
}

#[test]
fn a_marker_with_the_zero_topic_id_is_an_invalid_marker_named_by_position() {
    let dir = scratch("zero-id");
    let file = dir.join("markers.json");
    fs::write(
        &file,
        r#"[{"schemaVersion":1,"topic":"action-state","topicId":"AAAAAAAAAAAAAAAAAAAAAA","offsets":{"0":15}}]"#,
    )
    .unwrap();
    let output = cli(&[
        "plan",
        "--markers",
        file.to_str().unwrap(),
        "--recovery-point",
        "rp",
        "--json",
    ]);
    expect_code(&output, 3);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["error"]["kind"], "invalid-marker");
    assert_eq!(
        json["error"]["message"],
        format!(
            "Checkpoint-aligned cleanup requires a broker-provided Kafka topic ID, but the marker of file {} names topic action-state with the unknown ID AAAAAAAAAAAAAAAAAAAAAA",
            file.display()
        )
    );
}

fn plan_json(markers: &[&Path]) -> (i32, serde_json::Value) {
    let mut args = vec!["plan".to_owned()];
    for path in markers {
        args.push("--markers".to_owned());
        args.push(path.to_str().unwrap().to_owned());
    }
    args.extend(["--recovery-point", "rp", "--json"].map(str::to_owned));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = cli(&args);
    let json = serde_json::from_str(&stdout(&output)).unwrap();
    (output.status.code().unwrap(), json)
}

fn versioned(offsets: &str) -> String {
    format!(
        r#"{{"schemaVersion":1,"topic":"action-state","topicId":"topic-id","offsets":{offsets}}}"#
    )
}

#[test]
fn a_directory_of_marker_files_plans_like_the_same_markers_in_one_array() {
    // One marker per file (the everyday layout), markers one per line, and an array, in one
    // directory; the plan and count equal those of all the markers written as one array.
    let dir = scratch("marker-dir");
    let markers = [
        versioned(r#"{"0":15,"1":30}"#),
        versioned(r#"{"1":35,"0":10}"#),
        versioned(r#"{"0":12,"1":31}"#),
        versioned(r#"{"0":11,"1":40}"#),
        versioned(r#"{"0":99,"1":29}"#),
    ];
    let files = dir.join("files");
    fs::create_dir(&files).unwrap();
    fs::write(files.join("a.json"), &markers[0]).unwrap();
    fs::write(files.join("b.json"), format!("\n  {}\n", markers[1])).unwrap();
    fs::write(
        files.join("c.json"),
        format!("{}\n{}\n", markers[2], markers[3]),
    )
    .unwrap();
    fs::write(files.join("d.json"), format!("[{}]", markers[4])).unwrap();
    fs::write(files.join("ignored.txt"), "not a marker").unwrap();
    let array = dir.join("all.json");
    fs::write(&array, format!("[{}]", markers.join(",\n"))).unwrap();

    let (code, from_files) = plan_json(&[&files]);
    assert_eq!(code, 0, "{from_files}");
    let (code, from_array) = plan_json(&[&array]);
    assert_eq!(code, 0, "{from_array}");
    assert_eq!(from_files, from_array);
    assert_eq!(from_files["markers"], 5);
    assert_eq!(
        from_files["plan"]["offsets"],
        serde_json::json!({"0": 10, "1": 29})
    );
}

#[test]
fn a_later_file_that_is_not_a_marker_file_is_reported_before_an_earlier_bad_marker() {
    // Files are split before any marker is read, whichever order the component reads them in.
    let dir = scratch("marker-order");
    let bad_marker = dir.join("a.json");
    fs::write(&bad_marker, versioned(r#"{"0":-1}"#)).unwrap();
    let not_markers = dir.join("b.json");
    fs::write(&not_markers, "[]").unwrap();
    let (code, json) = plan_json(&[&bad_marker, &not_markers]);
    assert_eq!(code, 3, "{json}");
    assert_eq!(json["error"]["kind"], "invalid-marker");
    assert_eq!(
        json["error"]["message"],
        format!(
            "Recovery marker file {} holds an empty array",
            not_markers.display()
        )
    );
    // Alone, the bad marker is what is reported, by its file.
    let (code, json) = plan_json(&[&bad_marker]);
    assert_eq!(code, 3, "{json}");
    let message = json["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("the marker of file {}:", bad_marker.display())),
        "{message}"
    );
}

#[test]
fn check_recovery_names_a_marker_file_that_is_not_one_before_contacting_kafka() {
    // Nothing listens at the bootstrap address: the file is refused first, by name.
    let dir = scratch("check-recovery-file");
    let good = dir.join("a.json");
    fs::write(&good, versioned(r#"{"0":1}"#)).unwrap();
    let bad = dir.join("b.json");
    fs::write(&bad, format!("[{}", versioned(r#"{"0":1}"#))).unwrap();
    let output = cli(&[
        "check-recovery",
        "--markers",
        good.to_str().unwrap(),
        bad.to_str().unwrap(),
        "--bootstrap-servers",
        "127.0.0.1:9",
        "--json",
    ]);
    expect_code(&output, 3);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["error"]["kind"], "invalid-marker");
    assert_eq!(
        json["error"]["message"],
        format!(
            "Recovery marker file {} is not valid JSON: the value starting at byte 0 is not closed",
            bad.display()
        )
    );
}

/// Every way a configuration can be refused or fail, with a planted secret in it: the secret
/// never reaches stdout or stderr, in human or `--json` output.
#[test]
fn no_output_ever_shows_a_configured_secret() {
    const SECRET: &str = "PLANTED-SECRET-7f3a";
    let dir = scratch("secrets");
    let file = |name: &str, text: &str| {
        let path = dir.join(name);
        fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let jaas = |module: &str| {
        format!("sasl.jaas.config={module} required username=\"alice\" password=\"{SECRET}\";\n")
    };
    let unknown_module = file("custom.properties", &jaas("com.example.CustomLoginModule"));
    let kerberos = file(
        "kerberos.properties",
        &format!(
            "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required keyTab=\"/k\" password=\"{SECRET}\";\n"
        ),
    );
    let jks = file(
        "jks.properties",
        &format!("ssl.truststore.location=/etc/trust.jks\nssl.truststore.password={SECRET}\n"),
    );
    let bad_value = file(
        "bad.properties",
        &format!("sasl.password={SECRET}\nsocket.timeout.ms=not-a-number\n"),
    );
    // A JAAS login that translates, then a dead address: the failure is a Kafka one.
    let plain = file(
        "plain.properties",
        &format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n{}",
            jaas("org.apache.kafka.common.security.plain.PlainLoginModule")
        ),
    );
    let cases: Vec<(Vec<String>, i32)> = vec![
        (vec!["--command-config".into(), unknown_module], 2),
        (vec!["--kafka-config".into(), kerberos], 2),
        (vec!["--kafka-config".into(), jks], 2),
        (vec!["--kafka-config".into(), bad_value], 2),
        (vec!["-X".into(), format!("sasl.password{SECRET}")], 2),
        (
            vec![
                "-X".into(),
                format!("ssl.key.password={SECRET}"),
                "-X".into(),
                format!("bogus.property={SECRET}"),
            ],
            2,
        ),
        (vec!["--kafka-config".into(), plain], 4),
    ];
    for (config, code) in cases {
        for json in [false, true] {
            let mut args = vec![
                "status".to_owned(),
                "--control-topic".into(),
                "c".into(),
                "--bootstrap-server".into(),
                "127.0.0.1:1".into(),
                "--timeout".into(),
                "2".into(),
            ];
            args.extend(config.iter().cloned());
            if json {
                args.push("--json".into());
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let output = cli(&args);
            expect_code(&output, code);
            let all = format!("{}{}", stdout(&output), stderr(&output));
            assert!(!all.contains(SECRET), "{args:?} shows the secret:\n{all}");
            assert!(!all.trim().is_empty(), "{args:?} says nothing");
        }
    }
}

/// Runs the CLI with `input` on its standard input.
fn with_stdin(args: &[&str], input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(CLI)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_dash_reads_the_plan_or_the_markers_from_standard_input() {
    let marker = r#"{"schemaVersion":1,"topic":"orders","topicId":"AAAAAAAAAAAAAAAAAAAAAQ","offsets":{"0":10,"1":20}}"#;
    let planned = with_stdin(
        &["plan", "--markers", "-", "--recovery-point", "C1"],
        marker,
    );
    expect_code(&planned, 0);
    let plan = stdout(&planned);
    let verified = with_stdin(&["verify", "--plan", "-"], &plan);
    expect_code(&verified, 0);
    assert!(plan.contains(stdout(&verified).trim()), "{plan}");
    // A refusal names standard input as the source.
    let refused = with_stdin(&["plan", "--markers", "-", "--recovery-point", "C1"], "[]");
    expect_code(&refused, 3);
    assert!(
        stderr(&refused).contains("(standard input)"),
        "{}",
        stderr(&refused)
    );
}

#[test]
fn a_usage_error_in_json_mode_is_json_too() {
    let output = cli(&["verify", "--json", "--no-such-flag"]);
    expect_code(&output, 2);
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(json["error"]["kind"], "usage");
    assert_eq!(json["error"]["exitCode"], 2);
    assert!(
        json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--no-such-flag"),
        "{json}"
    );
}
