//! The capability conformance suite (guest/conformance, world `conformance`) against this host's
//! imports and a real broker: every check passes against the real capabilities and a dead
//! address (the `unauthorized` and `unauthenticated` targets run on the SASL broker of
//! tests/authorization.rs); and the suite fails against a host that lies in each way it checks.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

mod support;

use std::time::Duration;

use action_state_cleanup::CONFORMANCE_COMPONENT_PATH;
use action_state_cleanup::cleanup::Lie;
use action_state_cleanup::cleanup::conformance::{Inputs, Report, Target, run_starting, run_with};
use action_state_cleanup::engine::new_engine;
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};

use support::{bootstrap, create_topic, produce, unique};

fn settings(bootstrap: &str, timeout: Duration) -> KafkaSettings {
    let mut settings = KafkaSettings::new(bootstrap);
    settings.timeout = timeout;
    settings
}

fn suite(settings: KafkaSettings, target: Target, lie: Option<Lie>) -> Report {
    let engine = new_engine().unwrap();
    let inputs = Inputs {
        target,
        topic_prefix: format!("{}-", unique("conformance")),
        existing_topic: None,
    };
    run_with(
        &engine,
        CONFORMANCE_COMPONENT_PATH,
        KafkaClients::new(settings).unwrap(),
        &inputs,
        lie,
    )
    .unwrap()
}

fn failed(report: &Report) -> Vec<String> {
    report
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: {}", c.name, c.detail))
        .collect()
}

#[test]
fn the_rust_host_passes_every_check_against_a_live_broker() {
    let report = suite(
        settings(bootstrap(), Duration::from_secs(30)),
        Target::Live,
        None,
    );
    assert!(report.checks.len() >= 30, "{} checks", report.checks.len());
    assert_eq!(failed(&report), Vec::<String>::new());
}

#[test]
fn the_rust_host_passes_every_check_on_a_dead_connection() {
    // Nothing listens on port 1.
    let report = suite(
        settings("127.0.0.1:1", Duration::from_secs(3)),
        Target::Unreachable,
        None,
    );
    assert!(report.checks.len() >= 6, "{} checks", report.checks.len());
    assert_eq!(failed(&report), Vec::<String>::new());
}

/// Each lie must fail the check that names its capability.
#[test]
fn the_suite_fails_a_host_that_lies() {
    let cases: [(Lie, &str); 9] = [
        (Lie::EndPlusOne, "list-offsets latest is the end"),
        (
            Lie::NoFencing,
            "the older writer's append fails with fenced",
        ),
        (
            Lie::MissingIsError,
            "describe answers none for a topic that does not exist",
        ),
        (
            Lie::EverythingIsOther,
            "list-offsets of a missing topic fails with unknown-topic",
        ),
        (
            Lie::DataAlways,
            "poll without data gives presence but no texts",
        ),
        (Lie::NoSleep, "sleep-ms(30) lets now-ms advance"),
        (Lie::NoTopicIds, "describe gives the topic's own ID"),
        // One lie, two facts the control topic's replication is decided on: both checks fail.
        (
            Lie::ReplicationUnknown,
            "describe gives the replication factor a topic was created with",
        ),
        (
            Lie::ReplicationUnknown,
            "describe-cluster answers every requested broker config name in order",
        ),
    ];
    let mut reports: Vec<(Lie, Vec<String>)> = Vec::new();
    for (lie, check) in cases {
        if !reports.iter().any(|(l, _)| *l == lie) {
            let report = suite(
                settings(bootstrap(), Duration::from_secs(30)),
                Target::Live,
                Some(lie),
            );
            reports.push((lie, failed(&report)));
        }
        let failures = &reports.iter().find(|(l, _)| *l == lie).unwrap().1;
        assert!(
            failures.iter().any(|f| f.contains(check)),
            "{lie:?}: expected the check {check:?} to fail, but the failures were {failures:?}"
        );
    }
}

#[test]
fn the_suite_fails_a_host_that_reports_a_dead_connection_as_other() {
    let report = suite(
        settings("127.0.0.1:1", Duration::from_secs(3)),
        Target::Unreachable,
        Some(Lie::EverythingIsOther),
    );
    let failures = failed(&report);
    assert!(
        failures
            .iter()
            .any(|f| f.contains("fails with transport or timeout")),
        "{failures:?}"
    );
}

/// Runs target `recreated-during-delete` with its harness (wit/suite.wit): a topic with records
/// that, about 500 ms after `run` is called, is deleted and, 1.5 s after its deletion shows,
/// created again under the same name with exactly 10 records.
fn recreated_during_delete(lie: Option<Lie>) -> Report {
    let topic = unique("recreated");
    let mut kafka = support::kafka();
    create_topic(&mut kafka, &topic, 1, &support::SAFE);
    produce(&mut kafka, &topic, 0, 20);
    let inputs = Inputs {
        target: Target::RecreatedDuringDelete,
        topic_prefix: format!("{}-", unique("conformance")),
        existing_topic: Some(topic.clone()),
    };
    let mut harness = None;
    let report = run_starting(
        &new_engine().unwrap(),
        CONFORMANCE_COMPONENT_PATH,
        KafkaClients::new(settings(bootstrap(), Duration::from_secs(10))).unwrap(),
        &inputs,
        lie,
        || {
            harness = Some(std::thread::spawn(move || {
                delete_and_recreate(kafka, &topic)
            }))
        },
    )
    .unwrap();
    harness.expect("the suite ran").join().unwrap();
    report
}

fn delete_and_recreate(mut kafka: KafkaClients, topic: &str) {
    let name = [topic.to_owned()];
    std::thread::sleep(Duration::from_millis(500));
    kafka.delete_topic(topic).unwrap();
    let gone = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        kafka.describe_topics(&name).unwrap()[0].is_none()
    });
    assert!(gone, "{topic} was still described 15 s after its deletion");
    std::thread::sleep(Duration::from_millis(1_500));
    // Deletion finishes asynchronously on the broker: the name is free a little later.
    let created = (0..150).any(|_| {
        let created = kafka
            .create_topic(topic, 1, 1, &support::configs(&support::SAFE))
            .is_ok_and(|created| created);
        if !created {
            std::thread::sleep(Duration::from_millis(100));
        }
        created
    });
    assert!(created, "{topic} could not be created again");
    support::wait_for_topic(&mut kafka, topic, 1);
    produce(&mut kafka, topic, 0, 10);
}

/// The thin-host duty of `delete-records`: sent once, so a topic deleted and recreated under
/// the same name while the call is in flight keeps every record.
#[test]
fn the_rust_host_sends_a_deletion_once_while_the_topic_is_recreated() {
    let report = recreated_during_delete(None);
    assert_eq!(failed(&report), Vec::<String>::new());
    assert!(report.checks.len() >= 8, "{} checks", report.checks.len());
}

/// A host that resends a deletion answered `unknown-topic` (kafka-clients' Admin.deleteRecords
/// does) reaches the recreated topic: the target fails it. A resend that arrives after the
/// harness's records deletes five of them; one that arrives before them (the topic is visible
/// a moment before its records) is answered OFFSET_OUT_OF_RANGE more than a second after the
/// call began. Which one happens is the broker's timing; each fails its own check.
#[test]
fn the_suite_fails_a_host_that_resends_a_deletion() {
    let failures = failed(&recreated_during_delete(Some(Lie::ResendsDeletes)));
    let resent_to_the_new_topic = [
        "the recreated topic keeps every record",
        "delete-records of a deleted topic answers at once",
    ];
    assert!(
        failures.iter().any(|f| resent_to_the_new_topic
            .iter()
            .any(|check| f.contains(check))),
        "{failures:?}"
    );
    assert!(
        !failures
            .iter()
            .any(|f| f.contains("describe stops finding") || f.contains("the harness recreated")),
        "the harness did not do its part: {failures:?}"
    );
}
