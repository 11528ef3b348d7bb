//! Commands that never touch Kafka: `plan` and `verify`.

use std::fs::OpenOptions;
use std::io::Write;

use action_state_cleanup::cleanup::CleanupInstance;
use action_state_cleanup::cleanup::{MarkerFilesPlan, Plan};
use serde_json::json;

use super::args::{PlanArgs, SnapshotArgs, VerifyArgs};
use super::failure::Failure;
use super::inputs::{plan_marker_files, read_text};
use super::output::{offsets_json, print_json, table};
use super::session::{answer, offline_instance};
use super::snapshot::{SnapshotOnDisk, operator_ref};

pub fn plan(args: &PlanArgs) -> Result<(), Failure> {
    // Refuse an existing output before any work, not after it (the Java tool checks last).
    if let Some(output) = args.output.as_ref().filter(|output| output.exists()) {
        return Err(Failure::refused(format!(
            "plan file {} already exists; plans are never overwritten, choose another --output",
            output.display()
        )));
    }
    let mut instance = offline_instance()?;
    let MarkerFilesPlan { plan, markers } = match &args.checkpoint {
        Some(checkpoint) => {
            let operator = operator_ref(
                args.operator_uid.as_deref(),
                args.operator_uid_hash.as_deref(),
            )?;
            SnapshotOnDisk::open(checkpoint)?.plan(&mut instance, operator)?
        }
        None => {
            let recovery_point = args
                .recovery_point
                .as_deref()
                .ok_or_else(|| Failure::usage("--recovery-point is required with --markers"))?;
            plan_marker_files(&mut instance, recovery_point, &args.markers)?
        }
    };
    let text = instance
        .render_plan(&plan)
        .map_err(|e| Failure::internal(&e))?;
    let Some(output) = &args.output else {
        if args.out.json {
            print_json(
                &json!({ "planId": plan.plan_id, "markers": markers, "plan": plan_json(&plan) }),
            );
        } else {
            out!("{text}");
        }
        return Ok(());
    };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(output)
        .map_err(|e| {
            Failure::failed(format!("cannot create plan file {}: {e}", output.display()))
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| {
            Failure::failed(format!("cannot write plan file {}: {e}", output.display()))
        })?;
    let absolute = std::path::absolute(output).unwrap_or_else(|_| output.clone());
    if args.out.json {
        print_json(
            &json!({ "planId": plan.plan_id, "output": absolute, "markers": markers, "plan": plan_json(&plan) }),
        );
    } else {
        outln!(
            "Created cleanup plan {} at {}",
            plan.plan_id,
            absolute.display()
        );
        errln!("{}", summary(&plan, markers as usize));
    }
    Ok(())
}

pub fn verify(args: &VerifyArgs) -> Result<(), Failure> {
    let text = read_text(&args.plan, "plan file")?;
    let mut instance: CleanupInstance = offline_instance()?;
    let result = instance.verify_plan(&text);
    let plan = answer(&mut instance, result).map_err(|mut failure| {
        failure.message = format!("plan file {}: {}", args.plan.display(), failure.message);
        failure
    })?;
    if args.out.json {
        print_json(&json!({ "valid": true, "planId": plan.plan_id, "plan": plan_json(&plan) }));
    } else {
        outln!("{}", plan.plan_id);
        errln!("{}", summary(&plan, 0));
    }
    Ok(())
}

pub fn snapshot(args: &SnapshotArgs) -> Result<(), Failure> {
    let snapshot = SnapshotOnDisk::open(&args.path)?;
    let mut instance = offline_instance()?;
    let summary = snapshot.inspect(&mut instance)?;
    if args.out.json {
        print_json(&super::snapshot::summary_json(&snapshot.location, &summary));
    } else {
        out!(
            "{}",
            super::snapshot::summary_text(&snapshot.location, &summary)
        );
    }
    Ok(())
}

pub fn plan_json(plan: &Plan) -> serde_json::Value {
    json!({
        "schemaVersion": plan.schema_version,
        "planId": plan.plan_id,
        "sourceRecoveryPoint": plan.source_recovery_point,
        "topic": plan.topic,
        "topicId": plan.topic_id,
        "offsets": offsets_json(&plan.offsets),
    })
}

/// What a reviewer wants to see: where the plan comes from and the first offset kept per partition.
fn summary(plan: &Plan, markers: usize) -> String {
    let mut out = format!(
        "recovery point: {}\ntopic:          {} (ID {})\npartitions:     {}",
        plan.source_recovery_point,
        plan.topic,
        plan.topic_id,
        plan.offsets.len()
    );
    if markers > 0 {
        out.push_str(&format!("\nmarkers read:   {markers}"));
    }
    let shown: Vec<Vec<String>> = plan
        .offsets
        .iter()
        .take(20)
        .map(|po| vec![po.partition.to_string(), po.offset.to_string()])
        .collect();
    out.push('\n');
    out.push_str(&table(&["partition", "keep from offset"], &shown));
    if plan.offsets.len() > shown.len() {
        out.push_str(&format!(
            "\n… and {} more partitions (see the plan file)",
            plan.offsets.len() - shown.len()
        ));
    }
    out
}
