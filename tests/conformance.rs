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
use action_state_cleanup::cleanup::conformance::{Inputs, Report, Target, run_with};
use action_state_cleanup::engine::new_engine;
use action_state_cleanup::kafka::{KafkaClients, KafkaSettings};

use support::{bootstrap, unique};

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
