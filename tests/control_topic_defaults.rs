//! End-to-end (issue 22 item 4, issue 34 item 7): the control topic's production defaults, on
//! one private three-node cluster left at the `default.replication.factor` Kafka ships (1), as
//! an untuned cluster is:
//!
//! - a first apply without `--replication-factor` creates the control topic with three replicas
//!   and `min.insync.replicas=2` all the same (the brokers decide, not the cluster default),
//!   read back with Kafka's own `kafka-topics --describe`;
//! - an apply against an existing control topic with one replica goes on, and warns on stderr
//!   and in `--json` with the reassignment that fixes it; that reassignment, run with Kafka's
//!   `kafka-reassign-partitions`, gives the topic three replicas, and the warning is gone.
//!
//! The single-broker default (one replica, `min.insync.replicas=1`) is in tests/apply.rs.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

#[path = "support/cluster.rs"]
mod cluster;
mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use action_state_cleanup::kafka::KafkaClients;
use cluster::Cluster;
use support::{CLI, expect_code, stderr, stdout, unique};

/// `apply --plan P --control-topic C --yes` on the cluster, without `--replication-factor`.
fn apply(cluster: &Cluster, plan: &Path, control: &str, extra: &[&str]) -> Output {
    Command::new(CLI)
        .args(["apply", "--yes", "--plan", plan.to_str().unwrap()])
        .args(cluster.cli_args(None))
        .args(["--control-topic", control])
        .args(extra)
        .env_remove("ASC_FAILPOINT")
        .env_remove("ASC_FAILPOINT_PAUSE")
        .env_remove("ASC_FAILPOINT_PAUSE_FILE")
        .output()
        .unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e})\n--- stdout\n{}\n--- stderr\n{}",
            stdout(output),
            stderr(output)
        )
    })
}

/// A data topic with three replicas, 40 records on each of two partitions, and a plan that
/// deletes the first `keep_from` of each. Returns (topic, plan file).
fn data_topic(
    kafka: &mut KafkaClients,
    dir: &Path,
    keep_from: u64,
) -> (String, std::path::PathBuf) {
    let topic = unique("defaults");
    assert!(
        kafka
            .create_topic(&topic, 2, 3, &support::configs(&support::SAFE))
            .expect("create data topic")
    );
    support::wait_for_topic(kafka, &topic, 2);
    let records: Vec<(u32, String, String)> = (0..40)
        .flat_map(|n| [0, 1].map(|p| (p, format!("k{p}-{n}"), format!("v{n}"))))
        .collect();
    kafka.produce_batch(&topic, &records).expect("produce");
    let id = support::topic_id(kafka, &topic);
    let plan = support::two_partition_plan(dir, &topic, &topic, &id, [keep_from, keep_from]);
    (topic, plan)
}

#[test]
fn on_three_untuned_brokers_the_control_topic_gets_three_replicas_and_an_under_replicated_one_warns()
 {
    let started = Instant::now();
    let cluster = Cluster::start_untuned(3);
    let cluster_ready = started.elapsed();
    let dir = support::scratch("control-defaults");
    let mut kafka = cluster.kafka();

    // 1. A first apply creates the control topic with the production default.
    let (topic, plan) = data_topic(&mut kafka, &dir, 10);
    let control = format!("{topic}-control");
    let applied = apply(&cluster, &plan, &control, &["--json"]);
    expect_code(&applied, 0);
    let report = json(&applied);
    assert_eq!(report["outcome"], "applied", "{report}");
    assert_eq!(
        report["createdControlTopic"],
        serde_json::json!({"name": control, "partitions": 1, "replicationFactor": 3, "minInsyncReplicas": 2}),
        "{report}"
    );
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");
    // Read back with Kafka's own tool, not from the CLI's report.
    let created = cluster
        .describe(&control)
        .expect("the control topic exists");
    assert_eq!(created.replication_factor, 3, "{created:?}");
    assert_eq!(created.partitions.len(), 1, "{created:?}");
    assert_eq!(created.partitions[0].replicas.len(), 3, "{created:?}");
    assert!(
        created.configs.contains("min.insync.replicas=2")
            && created.configs.contains("cleanup.policy=compact"),
        "{created:?}"
    );

    // 2. A control topic an operator made with one replica: the apply goes on, and warns.
    let (topic, plan) = data_topic(&mut kafka, &dir, 10);
    let control = format!("{topic}-control");
    assert!(
        kafka
            .create_topic(
                &control,
                1,
                1,
                &support::configs(&[("cleanup.policy", "compact")])
            )
            .expect("create the control topic with one replica")
    );
    support::wait_for_topic(&mut kafka, &control, 1);
    // The human output says it on stderr, with the command that fixes it.
    let dry = apply(&cluster, &plan, &control, &["--dry-run"]);
    expect_code(&dry, 0);
    let said = stderr(&dry);
    for part in [
        format!(
            "warning: Kafka cleanup control topic {control} has 1 replica but a control topic needs 3 on this cluster (3 brokers: 3 replicas, or one per broker when there are fewer)"
        ),
        "kafka-reassign-partitions.sh --bootstrap-server <bootstrap> --reassignment-json-file control-replicas.json --execute".to_owned(),
        format!("--entity-name {control} --add-config min.insync.replicas=2"),
    ] {
        assert!(said.contains(&part), "{part:?} in:\n{said}");
    }
    // --json has it as a typed field; the apply itself is not refused.
    let applied = apply(&cluster, &plan, &control, &["--json"]);
    expect_code(&applied, 0);
    let report = json(&applied);
    assert_eq!(report["outcome"], "applied", "{report}");
    let warnings = report["warnings"].as_array().expect("warnings");
    assert_eq!(warnings.len(), 1, "{report}");
    let warning = &warnings[0];
    assert_eq!(warning["kind"], "under-replicated-control-topic");
    assert_eq!(warning["controlTopic"], control.as_str());
    assert_eq!(warning["replicationFactor"], 1);
    assert_eq!(warning["recommendedReplicationFactor"], 3);
    assert_eq!(warning["recommendedMinInsyncReplicas"], 2);
    assert_eq!(warning["brokerCount"], 3);
    // Reported for the operator (why a topic made without a factor has one replica); it did not
    // decide the recommendation.
    assert_eq!(warning["clusterDefaultReplicationFactor"], 1);
    let reassignment = warning["reassignment"].as_str().unwrap().to_owned();
    assert_eq!(
        reassignment,
        format!(
            "{{\"version\":1,\"partitions\":[{{\"topic\":\"{control}\",\"partition\":0,\"replicas\":[1,2,3]}}]}}"
        )
    );
    assert!(
        warning["message"].as_str().unwrap().contains(&reassignment),
        "{warning}"
    );

    // 3. The fix it names works: Kafka's reassignment tool adds the replicas, the config tool
    // sets min.insync.replicas, and the next apply has nothing to warn about.
    let file = dir.join("control-replicas.json");
    std::fs::write(&file, &reassignment).unwrap();
    let file = file.to_str().unwrap();
    cluster.script_ok(&["reassign", "--reassignment-json-file", file, "--execute"]);
    cluster.wait_for_isr(&[&control], 3, Duration::from_secs(120));
    cluster.script_ok(&[
        "configs",
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        &control,
        "--add-config",
        "min.insync.replicas=2",
    ]);
    let fixed = cluster
        .describe(&control)
        .expect("the control topic exists");
    assert_eq!(fixed.replication_factor, 3, "{fixed:?}");
    let again = apply(&cluster, &plan, &control, &["--json"]);
    expect_code(&again, 0);
    let report = json(&again);
    assert_eq!(report["outcome"], "already-applied", "{report}");
    assert_eq!(report["warnings"], serde_json::json!([]), "{report}");

    eprintln!(
        "three-node cluster ready after {:.1} s; the test took {:.1} s in all",
        cluster_ready.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
