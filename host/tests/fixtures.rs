//! Runs every golden scenario in `fixtures/` through the safety core (native) and through the
//! built `validator.wasm` component, and requires both to give the expected bytes, the expected
//! error and the same message. `BLESS=1` rewrites the expected files from the core's answers.
//!
//! Scenario kinds, by directory name: `plan-*` (plan.json), `markers-*` (recovery-point.txt +
//! markers.json), `control-*` (control-log.json). See fixtures/README.md.

#![allow(
    clippy::expect_used,
    reason = "test harness: a failure is a failed test"
)]

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use action_state_cleanup::VALIDATOR_COMPONENT_PATH;
use action_state_cleanup::engine::new_engine;
use action_state_cleanup::validator::bindings::action_state::cleanup::types as wit;
use action_state_cleanup::validator::{ValidatorComponent, ValidatorInstance};
use libtest_mimic::{Arguments, Failed, Trial};

/// What a scenario produced: the expected files' contents, or an error message.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// (file name, contents) pairs, e.g. ("expected.json", …), ("plan-id.txt", …).
    Files(Vec<(&'static str, String)>),
    Error(String),
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let engine = new_engine().expect("engine");
    let validator = Arc::new(
        ValidatorComponent::from_file(&engine, Path::new(VALIDATOR_COMPONENT_PATH))
            .expect("validator.wasm loads with an empty linker"),
    );
    let mut scenarios: Vec<PathBuf> = fs::read_dir(&root)
        .expect("fixtures directory")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        // `snapshots/` holds Flink snapshots, tested by tests/snapshots.rs.
        .filter(|path| path.is_dir() && !path.ends_with("snapshots"))
        .collect();
    scenarios.sort();
    let trials = scenarios
        .into_iter()
        .map(|dir| {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let validator = Arc::clone(&validator);
            Trial::test(format!("fixture::{name}"), move || {
                run_scenario(&dir, &validator)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn read(dir: &Path, file: &str) -> Result<String, Failed> {
    fs::read_to_string(dir.join(file)).map_err(|e| format!("{}/{file}: {e}", dir.display()).into())
}

fn run_scenario(dir: &Path, validator: &ValidatorComponent) -> Result<(), Failed> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut instance = validator.instantiate().map_err(|e| e.to_string())?;
    let (native, component) = if name.starts_with("plan-") {
        let input = read(dir, "plan.json")?;
        (plan_native(&input), plan_component(&mut instance, &input)?)
    } else if name.starts_with("markers-") {
        let recovery_point = read(dir, "recovery-point.txt")?;
        let markers = marker_texts(&read(dir, "markers.json")?)?;
        (
            markers_native(&recovery_point, &markers),
            markers_component(&mut instance, &recovery_point, &markers)?,
        )
    } else if name.starts_with("control-") {
        let entries = control_entries(&read(dir, "control-log.json")?)?;
        (
            control_native(&entries),
            control_component(&mut instance, &entries)?,
        )
    } else {
        return Err(format!("unknown scenario kind: {name}").into());
    };
    if native != component {
        return Err(format!(
            "core and component disagree:\n core: {native:?}\n wasm: {component:?}"
        )
        .into());
    }
    if std::env::var_os("BLESS").is_some() {
        return bless(dir, &native);
    }
    check_expected(dir, &native)
}

fn check_expected(dir: &Path, outcome: &Outcome) -> Result<(), Failed> {
    let expects_error = dir.join("error.txt").exists();
    match outcome {
        Outcome::Error(message) if expects_error => {
            let wanted = read(dir, "error.txt")?;
            let wanted = wanted.trim_end_matches('\n');
            if message.contains(wanted) {
                Ok(())
            } else {
                Err(format!("error message does not contain {wanted:?}:\n {message}").into())
            }
        }
        Outcome::Error(message) => Err(format!("expected success, got error: {message}").into()),
        Outcome::Files(_) if expects_error => Err(format!(
            "expected an error containing {:?}, got success",
            read(dir, "error.txt")?
        )
        .into()),
        Outcome::Files(files) => {
            for (file, actual) in files {
                let expected = read(dir, file)?;
                if expected != *actual {
                    return Err(format!(
                        "{file} differs:\n--- expected\n{expected}\n--- actual\n{actual}"
                    )
                    .into());
                }
            }
            Ok(())
        }
    }
}

fn bless(dir: &Path, outcome: &Outcome) -> Result<(), Failed> {
    let write = |file: &str, text: &str| {
        fs::write(dir.join(file), text).map_err(|e| Failed::from(e.to_string()))
    };
    match outcome {
        Outcome::Error(message) => {
            if !dir.join("error.txt").exists() {
                write("error.txt", &format!("{message}\n"))?;
            }
            for stale in ["expected.json", "expected.txt", "plan-id.txt"] {
                let _ = fs::remove_file(dir.join(stale));
            }
        }
        Outcome::Files(files) => {
            let _ = fs::remove_file(dir.join("error.txt"));
            for (file, text) in files {
                write(file, text)?;
            }
        }
    }
    Ok(())
}

// --- plans ---------------------------------------------------------------------------------

fn plan_files(rendered: String, plan_id: &str) -> Outcome {
    Outcome::Files(vec![
        ("expected.json", rendered),
        ("plan-id.txt", format!("{plan_id}\n")),
    ])
}

fn plan_native(input: &str) -> Outcome {
    match action_state_format::Plan::parse(input) {
        Ok(plan) => plan_files(plan.render_pretty(), &plan.plan_id),
        Err(error) => Outcome::Error(error.to_string()),
    }
}

fn plan_component(instance: &mut ValidatorInstance, input: &str) -> Result<Outcome, Failed> {
    let verdict = instance
        .verify_plan(input)
        .map_err(|e| format!("trap: {e:#}"))?;
    component_plan_outcome(instance, verdict)
}

fn component_plan_outcome(
    instance: &mut ValidatorInstance,
    verdict: Result<wit::Plan, wit::CleanupError>,
) -> Result<Outcome, Failed> {
    Ok(match verdict {
        Ok(plan) => {
            let rendered = instance
                .render_plan(&plan)
                .map_err(|e| format!("trap: {e:#}"))?;
            plan_files(rendered, &plan.plan_id)
        }
        Err(error) => Outcome::Error(
            instance
                .message(&error)
                .map_err(|e| format!("trap: {e:#}"))?,
        ),
    })
}

// --- markers -------------------------------------------------------------------------------

fn marker_texts(json: &str) -> Result<Vec<String>, Failed> {
    match action_state_format::json::parse(json).map_err(|e| e.to_string())? {
        action_state_format::json::Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                action_state_format::json::Value::String(text) => Ok(text),
                other => Err(format!(
                    "markers.json elements must be strings, found {}",
                    other.kind()
                )
                .into()),
            })
            .collect(),
        _ => Err("markers.json must be an array of strings".into()),
    }
}

fn markers_native(recovery_point: &str, markers: &[String]) -> Outcome {
    let plan = action_state_format::parse_markers(markers)
        .and_then(|m| action_state_format::plan_from_markers(recovery_point, &m));
    match plan {
        Ok(plan) => plan_files(plan.render_pretty(), &plan.plan_id),
        Err(error) => Outcome::Error(error.to_string()),
    }
}

fn markers_component(
    instance: &mut ValidatorInstance,
    recovery_point: &str,
    markers: &[String],
) -> Result<Outcome, Failed> {
    let verdict = instance
        .plan_from_markers(recovery_point, markers)
        .map_err(|e| format!("trap: {e:#}"))?;
    component_plan_outcome(instance, verdict)
}

// --- control logs --------------------------------------------------------------------------

fn control_entries(json: &str) -> Result<Vec<action_state_format::ControlEntry>, Failed> {
    let action_state_format::json::Value::Array(items) =
        action_state_format::json::parse(json).map_err(|e| e.to_string())?
    else {
        return Err("control-log.json must be an array".into());
    };
    let text = |value: &action_state_format::json::Value| match value {
        action_state_format::json::Value::String(s) => Ok(Some(s.clone())),
        action_state_format::json::Value::Null => Ok(None),
        other => Err(Failed::from(format!(
            "key and value must be strings or null, found {}",
            other.kind()
        ))),
    };
    items
        .iter()
        .map(|item| {
            let field = |name: &str| match item {
                action_state_format::json::Value::Object(members) => members
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .unwrap_or(action_state_format::json::Value::Null),
                _ => action_state_format::json::Value::Null,
            };
            let offset = field("offset")
                .as_i64()
                .ok_or("each entry needs an integer offset")?;
            Ok(action_state_format::ControlEntry {
                offset: u64::try_from(offset).map_err(|e| e.to_string())?,
                key: text(&field("key"))?,
                value: text(&field("value"))?,
                timestamp: None,
            })
        })
        .collect()
}

fn history_text(
    lines: impl Iterator<Item = (String, &'static str)>,
    boundary: &action_state_format::PartitionOffsets,
) -> Outcome {
    let mut text: String = lines
        .map(|(id, status)| format!("{id} {status}\n"))
        .collect();
    text.push_str(&format!("boundary {boundary}\n"));
    Outcome::Files(vec![("expected.txt", text)])
}

fn control_native(entries: &[action_state_format::ControlEntry]) -> Outcome {
    match action_state_format::ControlHistory::replay(entries) {
        Ok(history) => history_text(
            history
                .operations()
                .iter()
                .map(|op| (op.plan.plan_id.clone(), op.status.as_str())),
            &history.boundary(),
        ),
        Err(error) => Outcome::Error(error.to_string()),
    }
}

fn control_component(
    instance: &mut ValidatorInstance,
    entries: &[action_state_format::ControlEntry],
) -> Result<Outcome, Failed> {
    let entries: Vec<wit::ControlEntry> = entries
        .iter()
        .map(|e| wit::ControlEntry {
            offset: e.offset,
            key: e.key.clone(),
            value: e.value.clone(),
        })
        .collect();
    let trap = |e: wasmtime::Error| Failed::from(format!("trap: {e:#}"));
    match instance.replay_control_log(&entries).map_err(trap)? {
        Ok(records) => {
            let plans: Vec<wit::Plan> = records.iter().map(|r| r.plan.clone()).collect();
            let boundary = match instance.effective_boundary(&plans).map_err(trap)? {
                Ok(boundary) => boundary,
                Err(error) => return Ok(Outcome::Error(instance.message(&error).map_err(trap)?)),
            };
            let boundary = boundary
                .iter()
                .map(|po| (po.partition, po.offset))
                .collect();
            Ok(history_text(
                records.into_iter().map(|r| {
                    let status = match r.status {
                        wit::Status::Committed => "COMMITTED",
                        wit::Status::Applied => "APPLIED",
                    };
                    (r.plan.plan_id, status)
                }),
                &boundary,
            ))
        }
        Err(error) => Ok(Outcome::Error(instance.message(&error).map_err(trap)?)),
    }
}
