//! Every `--json` document the CLI prints, from real commands against the real broker, against
//! its schema in docs/json/: the `format` version first, every required field with its type,
//! fields in the schema's order, the marker in its own order, nothing on stderr unless
//! `--verbose`, and every error document's `exitCode` equal to the process's exit code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a panic is a failed test"
)]

#[path = "support/json_schema.rs"]
mod json_schema;

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use json_schema::Schemas;
use support::*;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn schemas() -> Schemas {
    Schemas::new(&repo().join("docs/json"))
}

/// The one JSON document on stdout.
fn document(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e})\n--- stdout\n{}\n--- stderr\n{}",
            stdout(output),
            stderr(output)
        )
    })
}

/// Runs a `--json` command that must exit `code` and print a document of `schema`: valid, in
/// the schema's field order, `format` first, and nothing on stderr. Returns the document.
fn checked(args: &[&str], code: i32, schema: &str) -> Value {
    let output = cli(args);
    expect_code(&output, code);
    let value = document(&output);
    assert_document(&value, schema, args);
    assert_eq!(
        stderr(&output),
        "",
        "{args:?}: --json without --verbose prints nothing on stderr"
    );
    if schema == "error.schema.json" {
        assert_eq!(
            value["error"]["exitCode"],
            json!(code),
            "{args:?}: error.exitCode is the exit code"
        );
    }
    value
}

fn assert_document(value: &Value, schema: &str, args: &[&str]) {
    let schemas = schemas();
    let errors = schemas.errors(schema, value);
    assert!(
        errors.is_empty(),
        "{args:?} against {schema}:\n{}\n{value:#}",
        errors.join("\n")
    );
    let order = schemas.order_errors(schema, value);
    assert!(
        order.is_empty(),
        "{args:?}: {}\n{value:#}",
        order.join("\n")
    );
    let first = value.as_object().and_then(|o| o.keys().next()).cloned();
    assert_eq!(
        first.as_deref(),
        Some("format"),
        "{args:?}: format comes first"
    );
}

#[test]
fn every_command_prints_the_document_its_schema_describes() {
    let dir = scratch("json-schemas");
    let (topic, c0, c1) = story(&dir);
    let control = format!("{topic}-control");
    let (c0, c1) = (c0.to_str().unwrap(), c1.to_str().unwrap());
    let kafka = ["--bootstrap-servers", bootstrap()];
    let with = |args: &[&str], more: &[&str]| -> Vec<String> {
        args.iter()
            .chain(more)
            .map(|a| (*a).to_owned())
            .chain(["--json".to_owned()])
            .collect()
    };
    let run = |args: Vec<String>, code: i32, schema: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        checked(&args, code, schema)
    };

    // marker: the marker in its own field order, byte for byte what `marker` prints.
    let marker = run(
        with(&["marker", "--topic", &topic], &kafka),
        0,
        "marker.schema.json",
    );
    let plain = cli(&[
        "marker",
        "--topic",
        &topic,
        "--bootstrap-servers",
        bootstrap(),
    ]);
    expect_code(&plain, 0);
    assert_eq!(
        serde_json::to_string(&marker["marker"]).unwrap(),
        stdout(&plain).trim(),
        "marker --json keeps the marker's fields and partitions in the marker's order"
    );

    // plan: printed, with the live preview; written to a file, without Kafka.
    let plan_path = dir.join("plan.json");
    let plan_file = plan_path.to_str().unwrap();
    let printed = run(
        with(&["plan", "--markers", c1, "--recovery-point", "C1"], &kafka),
        0,
        "plan.schema.json",
    );
    assert!(printed["preview"].is_array(), "{printed:#}");
    let written = run(
        with(
            &[
                "plan",
                "--markers",
                c1,
                "--recovery-point",
                "C1",
                "--output",
                plan_file,
            ],
            &[],
        ),
        0,
        "plan.schema.json",
    );
    assert!(
        written["output"].is_string() && written["preview"].is_null(),
        "{written:#}"
    );
    // An unreachable broker: the plan is made and the preview says why it is missing.
    let unreachable = run(
        with(
            &["plan", "--markers", c1, "--recovery-point", "C1"],
            &["--bootstrap-servers", "127.0.0.1:1", "--timeout", "2"],
        ),
        0,
        "plan.schema.json",
    );
    assert!(
        unreachable["preview"]["error"].is_object(),
        "{unreachable:#}"
    );

    run(
        with(&["verify", "--plan", plan_file], &[]),
        0,
        "verify.schema.json",
    );

    let target = ["--control-topic", control.as_str()];
    let apply_args = |more: &[&str]| {
        let mut args = vec!["apply", "--plan", plan_file];
        args.extend(more);
        args.extend(kafka);
        args.extend(target);
        with(&args, &[])
    };
    let dry = run(apply_args(&["--dry-run"]), 0, "apply.schema.json");
    assert_eq!(dry["outcome"], "dry-run");
    let applied = run(apply_args(&["--yes"]), 0, "apply.schema.json");
    assert_eq!(applied["outcome"], "applied");
    // A run without --yes and no terminal to ask on: the usage error is a document too.
    run(apply_args(&[]), 2, "error.schema.json");

    let status = run(
        with(&["status"], &[&kafka[..], &target[..]].concat()),
        0,
        "status.schema.json",
    );
    assert_eq!(status["operations"][0]["status"], "APPLIED");

    let check = |markers: &str| {
        with(
            &["check-recovery", "--markers", markers],
            &[&kafka[..], &target[..]].concat(),
        )
    };
    run(check(c1), 0, "check-recovery.schema.json");
    let refused = run(check(c0), 6, "error.schema.json");
    assert!(refused["error"]["violations"].is_array(), "{refused:#}");

    let recover = |markers: &str| {
        with(
            &["recover", "--markers", markers],
            &[&kafka[..], &target[..]].concat(),
        )
    };
    run(recover(c1), 0, "recover.schema.json");
    run(recover(c0), 6, "error.schema.json");

    // Usage errors (clap's own and the CLI's) and a Kafka failure are documents too.
    run(with(&["status"], &kafka), 2, "error.schema.json");
    run(
        with(&["verify", "--plan", "/nonexistent/plan.json"], &[]),
        3,
        "error.schema.json",
    );
    run(
        with(
            &["status", "--control-topic", "c"],
            &["--bootstrap-servers", "127.0.0.1:1", "--timeout", "2"],
        ),
        4,
        "error.schema.json",
    );
    run(with(&["verify", "--plan", c1], &[]), 3, "error.schema.json");

    run(with(&["demo"], &kafka), 0, "demo.schema.json");
}

#[test]
fn snapshot_documents_fit_their_schema() {
    let root = repo().join("fixtures/snapshots");
    let mut checked_any = false;
    for flink in std::fs::read_dir(&root).unwrap() {
        let flink = flink.unwrap().path();
        if !flink.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&flink).unwrap() {
            let expected = case.unwrap().path().join("expected.json");
            let Ok(text) = std::fs::read_to_string(&expected) else {
                continue;
            };
            let expected: Value = serde_json::from_str(&text).unwrap();
            let checkpoint = repo().join(expected["checkpoint"].as_str().unwrap());
            let path = checkpoint.to_str().unwrap();
            checked(&["snapshot", path, "--json"], 0, "snapshot.schema.json");
            checked_any = true;
        }
    }
    assert!(
        checked_any,
        "no Flink snapshot fixture under {}",
        root.display()
    );
    checked(
        &["snapshot", "/nonexistent", "--json"],
        3,
        "error.schema.json",
    );
}

#[test]
fn verbose_shows_the_human_text_on_stderr_beside_the_document() {
    let output = cli(&[
        "verify",
        "--plan",
        "/nonexistent/plan.json",
        "--json",
        "--verbose",
    ]);
    // A missing input file is bad input (exit 3), not an unreachable Kafka (issue 38, item 6).
    expect_code(&output, 3);
    assert_eq!(document(&output)["error"]["exitCode"], 3);
    assert!(
        stderr(&output).starts_with("error: "),
        "--verbose keeps the error sentence on stderr: {}",
        stderr(&output)
    );
    let usage = cli(&["status", "--json", "--verbose"]);
    expect_code(&usage, 2);
    assert_eq!(document(&usage)["error"]["kind"], "usage");
    assert!(
        stderr(&usage).contains("--control-topic"),
        "{}",
        stderr(&usage)
    );
}

/// The validator itself: a document with a field missing, of the wrong type, of another format
/// or out of order is refused (so a schema test can fail).
#[test]
fn the_schema_check_refuses_a_broken_document() {
    let schemas = schemas();
    let good = json!({
        "format": 1,
        "controlTopic": "c", "topic": "t", "topicId": "id", "liveTopicId": null,
        "boundary": { "0": 5, "1": 7 },
        "operations": [{ "planId": "p", "status": "APPLIED", "sourceRecoveryPoint": "C1", "offsets": { "0": 5 } }],
        "live": [{ "partition": 0, "beginning": 5, "end": 9, "boundary": 5 }],
        "brokenHistory": null, "unfinished": [],
        "addedLater": "a field a later version may add"
    });
    assert_eq!(
        schemas.errors("status.schema.json", &good),
        Vec::<String>::new()
    );
    assert_eq!(
        schemas.order_errors("status.schema.json", &good),
        Vec::<String>::new()
    );

    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("boundary");
    assert!(!schemas.errors("status.schema.json", &missing).is_empty());

    let mut wrong_type = good.clone();
    wrong_type["operations"][0]["offsets"]["0"] = json!("5");
    assert!(!schemas.errors("status.schema.json", &wrong_type).is_empty());

    let mut negative = good.clone();
    negative["live"][0]["end"] = json!(-1);
    assert!(!schemas.errors("status.schema.json", &negative).is_empty());

    let mut other_format = good.clone();
    other_format["format"] = json!(2);
    assert!(
        !schemas
            .errors("status.schema.json", &other_format)
            .is_empty()
    );

    let mut bad_status = good.clone();
    bad_status["operations"][0]["status"] = json!("DONE");
    assert!(!schemas.errors("status.schema.json", &bad_status).is_empty());

    // topic moved to the end.
    let mut reordered: serde_json::Map<String, Value> = good
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k != "topic")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    reordered.insert("topic".into(), good["topic"].clone());
    assert!(
        !schemas
            .order_errors("status.schema.json", &Value::Object(reordered))
            .is_empty()
    );

    let error = json!({ "format": 1, "error": { "kind": "usage", "message": "m", "hint": null } });
    assert!(
        !schemas.errors("error.schema.json", &error).is_empty(),
        "an error without exitCode"
    );
}

/// The README names every schema file, and every schema file it names exists.
#[test]
fn the_readme_lists_every_schema() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let mut files: Vec<String> = std::fs::read_dir(repo().join("docs/json"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for file in &files {
        assert!(
            readme.contains(&format!("docs/json/{file}")),
            "README does not mention docs/json/{file}"
        );
    }
    for named in readme.split("docs/json/").skip(1) {
        let name: String = named
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
            .collect();
        if name.ends_with(".json") {
            assert!(
                files.contains(&name),
                "README names docs/json/{name}, which does not exist"
            );
        }
    }
}
