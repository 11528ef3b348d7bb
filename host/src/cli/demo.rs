//! `demo`: the acceptance story of SPEC §1 against a real broker, step by step.

use std::path::PathBuf;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use action_state_cleanup::cleanup::{
    ApplyOptions, CleanupInstance, NoEvents, OperatorEvents, RecoveryPolicy, RestoreSource,
};
use action_state_cleanup::kafka::KafkaClients;
use serde_json::json;

use super::args::DemoArgs;
use super::failure::Failure;
use super::output::{offsets_text, print_json};
use super::session::{answer, instance, kafka_settings};

/// The broker script of this repository (override with ASC_KAFKA_SCRIPT).
fn kafka_script() -> PathBuf {
    std::env::var_os("ASC_KAFKA_SCRIPT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/kafka")))
}

fn script(args: &[&str]) -> Result<String, Failure> {
    // The script's own progress shows on stderr, except in a --json run that keeps it empty:
    // there its last line goes into the error, if the script fails.
    let quiet = super::output::stderr_quiet();
    let output = Command::new(kafka_script())
        .args(args)
        .stderr(if quiet {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::inherit()
        })
        .output()
        .map_err(|e| Failure::failed(format!("cannot run {}: {e}", kafka_script().display())))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        let last = said
            .lines()
            .last()
            .map_or(String::new(), |line| format!(": {line}"));
        return Err(Failure::failed(format!(
            "{} {} failed ({}){last}",
            kafka_script().display(),
            args.join(" "),
            output.status
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// The bootstrap list of a broker `scripts/kafka` already runs, if any. "None running" is the
/// normal first-run answer, so the script's note about it stays off the operator's screen.
fn running_bootstrap() -> Option<String> {
    let output = Command::new(kafka_script())
        .arg("bootstrap")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let bootstrap = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !bootstrap.is_empty()).then_some(bootstrap)
}

/// A broker started by the demo is stopped when the demo ends, whatever happens.
struct StartedBroker;

impl Drop for StartedBroker {
    fn drop(&mut self) {
        let _ = script(&["stop"]);
    }
}

struct Narrator {
    json: bool,
}

impl Narrator {
    fn say(&self, text: &str) {
        if !self.json {
            outln!("{text}");
        }
    }
}

struct Printer;
impl OperatorEvents for Printer {
    fn before_commit(
        &mut self,
        plan_id: &str,
        preview: &[action_state_cleanup::cleanup::PartitionPreview],
        created: Option<&action_state_cleanup::cleanup::NewControlTopic>,
    ) -> action_state_cleanup::cleanup::Review {
        outln!(
            "{}",
            super::apply::preview_text(plan_id, preview, created, false, false)
        );
        action_state_cleanup::cleanup::Review::Proceed
    }
}

pub fn demo(args: &DemoArgs) -> Result<(), Failure> {
    let narrator = Narrator {
        json: args.out.json,
    };
    let mut kafka_args = args.kafka.clone();
    let mut _broker = None;
    if kafka_args.bootstrap_servers.is_none()
        && kafka_args.kafka_config.is_none()
        && kafka_args.properties.is_empty()
    {
        let running = running_bootstrap();
        let bootstrap = match running {
            Some(bootstrap) => bootstrap,
            None => {
                narrator.say("Starting a local Kafka broker (scripts/kafka start)…");
                let bootstrap = script(&["start"])?;
                _broker = Some(StartedBroker);
                bootstrap
            }
        };
        kafka_args.bootstrap_servers = Some(bootstrap);
    }
    let settings = kafka_settings(&kafka_args)?;
    narrator.say(&format!("Kafka: {}", settings.bootstrap_servers()));
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let topic = format!("demo-action-state-{stamp}");
    let control = format!("{topic}-cleanup-control");

    let mut setup =
        KafkaClients::new(settings.clone()).map_err(|e| Failure::failed(e.to_string()))?;
    create_data_topic(&mut setup, &topic)?;
    narrator.say(&format!(
        "1. Created data topic {topic} (2 partitions, cleanup.policy=compact,delete, no retention)."
    ));

    let events: Box<dyn OperatorEvents> = if args.out.json {
        Box::new(NoEvents)
    } else {
        Box::new(Printer)
    };
    let mut component = instance(settings, events)?;
    write_actions(&mut setup, &topic, 0, 0, 100)?;
    write_actions(&mut setup, &topic, 1, 0, 40)?;
    let c0 = snapshot(&mut component, &topic)?;
    narrator.say(&format!(
        "2. Checkpoint C0 after 100 actions on partition 0: marker {c0}"
    ));
    write_actions(&mut setup, &topic, 0, 100, 150)?;
    write_actions(&mut setup, &topic, 1, 40, 60)?;
    let c1 = snapshot(&mut component, &topic)?;
    narrator.say(&format!(
        "3. Checkpoint C1 after 150 actions on partition 0: marker {c1}"
    ));
    write_actions(&mut setup, &topic, 0, 150, 180)?;

    let result = component.plan_from_markers("C1", std::slice::from_ref(&c1));
    let plan = answer(&mut component, result)?;
    let plan_text = component
        .render_plan(&plan)
        .map_err(|e| Failure::internal(&e))?;
    narrator.say(&format!("4. Plan from C1 (offline, `plan`):\n{plan_text}"));

    narrator.say(&format!("5. Apply with control topic {control} (`apply`):"));
    let options = ApplyOptions {
        control_topic: control.clone(),
        replication_factor: None,
        dry_run: false,
        start_new_history: false,
    };
    let report = match component.apply(&plan_text, &options) {
        Ok(Ok(report)) => report,
        Ok(Err(failure)) => return Err(refusal(&mut component, failure.error)),
        Err(trap) => return Err(Failure::internal(&trap)),
    };
    narrator.say(&format!(
        "   Plan {} is APPLIED; partitions now begin at {}",
        report.plan_id,
        offsets_text(&report.beginnings_after)
    ));

    let policy = RecoveryPolicy {
        topic: None,
        control_topic: Some(control.clone()),
        tombstones_enabled: false,
    };
    match component.check_recovery(&RestoreSource::Texts(vec![c1.clone()]), &policy) {
        Ok(Ok(_)) => {}
        Ok(Err(refusal)) => {
            return Err(Failure::failed(format!(
                "the demo expected C1 to be restorable, but: {}",
                refusal.message
            )));
        }
        Err(trap) => return Err(Failure::internal(&trap)),
    }
    narrator.say("6. Restore from C1 (`check-recovery`): allowed.");
    let refusal = match component.check_recovery(&RestoreSource::Texts(vec![c0.clone()]), &policy) {
        Ok(Err(refusal)) => refusal.message,
        Ok(Ok(_)) => {
            return Err(Failure::failed(
                "the demo expected C0 to be refused, but it was allowed",
            ));
        }
        Err(trap) => return Err(Failure::internal(&trap)),
    };
    narrator.say(&format!(
        "7. Restore from C0 (`check-recovery`): refused: {refusal}"
    ));
    if args.out.json {
        print_json(&json!({
            "topic": topic, "controlTopic": control, "c0": c0, "c1": c1,
            "planId": report.plan_id, "beginningsAfter": super::output::offsets_json(&report.beginnings_after),
            "c1Allowed": true, "c0Refusal": refusal,
        }));
    } else {
        outln!(
            "Done: C1 and newer stay restorable; C0 is refused instead of silently repeating 100..149's side effects."
        );
    }
    Ok(())
}

fn create_data_topic(kafka: &mut KafkaClients, topic: &str) -> Result<(), Failure> {
    let configs = [
        ("cleanup.policy", "compact,delete"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .map(|(k, v)| (k.to_owned(), v.to_owned()));
    kafka
        .create_topic_and_wait(topic, 2, 1, &configs)
        .map_err(|e| Failure::failed(e.to_string()))?;
    Ok(())
}

/// Writes action states with keys `action-<n>` for n in [from, to) on one partition.
fn write_actions(
    kafka: &mut KafkaClients,
    topic: &str,
    partition: u32,
    from: u64,
    to: u64,
) -> Result<(), Failure> {
    let records: Vec<(u32, String, String)> = (from..to)
        .map(|n| {
            (
                partition,
                format!("action-{partition}-{n}"),
                format!("{{\"action\":{n},\"done\":true}}"),
            )
        })
        .collect();
    kafka
        .produce_batch(topic, &records)
        .map_err(|e| Failure::failed(e.to_string()))
}

fn snapshot(component: &mut CleanupInstance, topic: &str) -> Result<String, Failure> {
    let result = component.snapshot_marker(topic);
    answer(component, result)
}

/// A component error as a command failure, with the component's own sentence.
fn refusal(
    component: &mut CleanupInstance,
    error: action_state_cleanup::cleanup::CleanupError,
) -> Failure {
    match component.message(&error) {
        Ok(message) => Failure::from_component(&error, message),
        Err(trap) => Failure::internal(&trap),
    }
}
