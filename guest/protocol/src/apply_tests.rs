//! Protocol tests of apply, check-recovery and status over the in-memory fake.

use crate::apply::{ApplyOptions, ApplyOutcome, Silent, apply};
use crate::recovery::{RecoveryMode, RecoveryPolicy, check_recovery};
use crate::replication::ApplyWarning;
use crate::status::status;
use action_state_format::control::{ControlRecord, Status};
use action_state_format::error::CleanupError;
use action_state_format::marker::{Marker, VersionedMarker};
use action_state_format::plan::Plan;
use action_state_kafka::fake::{CONTROL, DATA, FakeCaps, Fault, RECREATED_ID, TOPIC_ID};

pub(crate) fn plan(source: &str, a: u64, b: u64) -> Plan {
    Plan::new(
        source,
        DATA,
        TOPIC_ID,
        [(0, a), (1, b)].into_iter().collect(),
    )
    .unwrap()
}

fn options() -> ApplyOptions {
    ApplyOptions {
        control_topic: CONTROL.into(),
        replication_factor: Some(1),
        dry_run: false,
        start_new_history: false,
    }
}

fn run(kafka: &FakeCaps, p: &Plan) -> Result<ApplyOutcome, CleanupError> {
    apply(&mut kafka.policy(), &mut Silent, p, &options()).map(|r| r.outcome)
}

/// Options that allow creating the control topic of a data topic cleaned before (the tests
/// that start from a cleaned topic stand for a history whose control topic was lost).
fn new_history() -> ApplyOptions {
    ApplyOptions {
        start_new_history: true,
        ..options()
    }
}

fn run_new_history(kafka: &FakeCaps, p: &Plan) -> Result<ApplyOutcome, CleanupError> {
    apply(&mut kafka.policy(), &mut Silent, p, &new_history()).map(|r| r.outcome)
}

fn statuses(kafka: &FakeCaps) -> Vec<(String, Status)> {
    status(&mut kafka.policy(), CONTROL)
        .unwrap()
        .operations
        .into_iter()
        .map(|op| (op.plan.plan_id.clone(), op.status))
        .collect()
}

/// Appends a record to the control topic's log, as a writer that does not go through apply
/// would (a tombstone when `value` is `None`).
fn push_control(kafka: &FakeCaps, key: &str, value: Option<&str>) {
    let mut c = kafka.c();
    let end = c.topics[CONTROL].ends.get(0).unwrap_or(0);
    c.push(CONTROL, end, Some(key.as_bytes()), value.map(str::as_bytes));
}

fn marker(a: u64, b: u64) -> Marker {
    Marker::Versioned(VersionedMarker {
        topic: DATA.into(),
        topic_id: TOPIC_ID.into(),
        offsets: [(0, a), (1, b)].into_iter().collect(),
    })
}

fn enforced() -> RecoveryPolicy {
    RecoveryPolicy {
        topic: None,
        control_topic: Some(CONTROL.into()),
        tombstones_enabled: false,
    }
}

#[test]
fn commits_before_delete_and_marks_applied_after_verification() {
    let kafka = FakeCaps::new();
    let p = plan("checkpoint-42", 10, 20);
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Applied));
    assert_eq!(
        kafka.c().events,
        [
            "create:action-state-control",
            "append:COMMITTED",
            "delete:{0=10, 1=20}",
            "append:APPLIED"
        ]
    );
    assert_eq!(kafka.data().beginnings.to_string(), "{0=10, 1=20}");
    assert_eq!(
        status(&mut kafka.policy(), CONTROL)
            .unwrap()
            .boundary
            .to_string(),
        "{0=10, 1=20}"
    );
}

#[test]
fn delete_failure_leaves_committed_plan_and_reapply_finishes_it() {
    let kafka = FakeCaps::new();
    kafka.fail_on("delete_records", 2, Fault::Fail);
    let p = plan("checkpoint-42", 10, 20);
    assert!(matches!(run(&kafka, &p), Err(CleanupError::Kafka(_))));
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Committed)]);
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Resumed));
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Applied)]);
    let events = kafka.c().events.clone();
    let durable: Vec<&str> = events.iter().map(String::as_str).skip(1).collect();
    assert_eq!(
        durable,
        [
            "append:COMMITTED",
            "delete:{0=10, 1=20}",
            "delete:{0=10, 1=20}",
            "append:APPLIED"
        ]
    );
}

#[test]
fn applied_append_failure_retries_deletion_from_committed_plan() {
    let kafka = FakeCaps::new();
    // The policy writes a failed APPLIED record again with an idempotent writer (append 3).
    kafka.fail_on("append", 2, Fault::Fail);
    kafka.fail_on("append", 3, Fault::Fail);
    let p = plan("checkpoint-42", 10, 20);
    assert!(run(&kafka, &p).is_err());
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Committed)]);
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Resumed));
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Applied)]);
}

#[test]
fn committed_plan_resumes_after_kafka_beginning_passed_the_boundary() {
    let kafka = FakeCaps::new();
    kafka.fail_on("delete_records", 2, Fault::Fail);
    let p = plan("checkpoint-42", 10, 20);
    assert!(run(&kafka, &p).is_err());
    // Kafka's own cleaner (or a later operator) moved the beginning past the boundary.
    kafka.data().beginnings = [(0, 11), (1, 21)].into_iter().collect();
    kafka.c().events.clear();
    kafka.c().probes.clear();
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Resumed));
    // The deletion to the boundary is repeated (a no-op now: Kafka is already past it), with
    // no availability check, then the plan is marked applied.
    assert_eq!(kafka.c().probes, ["probe:{0=10, 1=20}"]);
    assert_eq!(kafka.c().events, ["append:APPLIED"]);
}

#[test]
fn applied_plan_is_idempotent_and_makes_no_writes() {
    let kafka = FakeCaps::new();
    let p = plan("checkpoint-42", 10, 20);
    run(&kafka, &p).unwrap();
    kafka.c().events.clear();
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::AlreadyApplied));
    assert!(kafka.c().events.is_empty());
}

#[test]
fn backward_boundary_is_refused_before_commit() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("checkpoint-42", 10, 20)).unwrap();
    kafka.c().events.clear();
    let error = run(&kafka, &plan("checkpoint-41", 9, 20)).unwrap_err();
    assert!(error.to_string().contains("does not advance"), "{error}");
    assert!(kafka.c().events.is_empty());
}

#[test]
fn later_plan_advances_every_partition() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("checkpoint-41", 10, 20)).unwrap();
    kafka.c().events.clear();
    assert_eq!(
        run(&kafka, &plan("checkpoint-42", 15, 25)),
        Ok(ApplyOutcome::Applied)
    );
    assert_eq!(
        kafka.c().events,
        ["append:COMMITTED", "delete:{0=15, 1=25}", "append:APPLIED"]
    );
}

#[test]
fn incomparable_committed_boundaries_are_refused_without_writes() {
    let kafka = FakeCaps::new();
    let (left, right) = (plan("left", 10, 30), plan("right", 20, 20));
    kafka.c().topics.insert(
        CONTROL.into(),
        action_state_kafka::fake::safe_topic("control-id", &[0], 0),
    );
    kafka
        .c()
        .topics
        .get_mut(CONTROL)
        .unwrap()
        .configs
        .insert("cleanup.policy".into(), "compact".into());
    for p in [&left, &right] {
        let record = ControlRecord {
            status: Status::Committed,
            plan: p.clone(),
        };
        push_control(&kafka, &p.plan_id, Some(&record.render()));
    }
    let error = run(&kafka, &right).unwrap_err();
    assert!(
        error.to_string().contains("incomparable boundaries"),
        "{error}"
    );
    assert!(kafka.c().events.is_empty());
}

#[test]
fn unavailable_offsets_are_refused_before_commit() {
    let kafka = FakeCaps::new();
    kafka.data().beginnings.insert(0, 11);
    let error = run_new_history(&kafka, &plan("rp", 10, 20)).unwrap_err();
    assert!(
        error.to_string().contains("available range is [11, 1000]"),
        "{error}"
    );
    let kafka = FakeCaps::new();
    kafka.data().ends.insert(1, 19);
    let error = run(&kafka, &plan("rp", 10, 20)).unwrap_err();
    assert!(
        error.to_string().contains("available range is [0, 19]"),
        "{error}"
    );
    assert!(!kafka.c().events.iter().any(|e| e.starts_with("append")));
}

#[test]
fn unsafe_data_topic_configuration_is_refused_before_commit() {
    let kafka = FakeCaps::new();
    kafka
        .data()
        .configs
        .insert("retention.ms".into(), "604800000".into());
    let error = run(&kafka, &plan("rp", 10, 20)).unwrap_err();
    assert!(
        matches!(error, CleanupError::UnsafeTopicConfig(_)),
        "{error}"
    );
    assert!(
        kafka.c().events.is_empty(),
        "nothing durable, not even the control topic"
    );
}

#[test]
fn configuration_is_rechecked_immediately_before_commit() {
    let kafka = FakeCaps::new();
    // Describes of a first apply: 1 the data and control topics, 2 the data topic's ranges
    // (a missing control topic of a cleaned data topic is not created), 3 the created control
    // topic, 4 its range (the history read), 5 the preview's ranges (the probe follows it), 6
    // right before commit, 7 the one the delete follows, 8 after the delete.
    kafka.fail_on("describe", 6, Fault::SetPolicy("compact".into()));
    assert!(matches!(
        run(&kafka, &plan("rp", 10, 20)),
        Err(CleanupError::UnsafeTopicConfig(_))
    ));
    assert!(!kafka.c().events.iter().any(|e| e.starts_with("append")));
}

#[test]
fn configuration_is_rechecked_before_and_after_delete() {
    let kafka = FakeCaps::new();
    // Describe 7 is the one the delete follows, 8 the check after it (see above).
    kafka.fail_on("describe", 7, Fault::SetPolicy("compact".into()));
    let p = plan("rp", 10, 20);
    assert!(matches!(
        run(&kafka, &p),
        Err(CleanupError::UnsafeTopicConfig(_))
    ));
    assert_eq!(
        kafka.c().events.last().map(String::as_str),
        Some("append:COMMITTED")
    );

    let kafka = FakeCaps::new();
    kafka.fail_on("describe", 8, Fault::SetPolicy("compact".into()));
    assert!(matches!(
        run(&kafka, &p),
        Err(CleanupError::UnsafeTopicConfig(_))
    ));
    assert_eq!(
        kafka.c().events.last().map(String::as_str),
        Some("delete:{0=10, 1=20}")
    );
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Committed)]);
}

#[test]
fn topic_identity_is_rechecked_before_commit_before_delete_and_after_delete() {
    let p = plan("rp", 10, 20);
    // Describes: 1 data and control together, 2 the data topic's ranges, 3 control after
    // create, 4 its range, 5 the preview's ranges (the probe follows it), 6 before commit, 7
    // before delete (the delete follows it), 8 after delete.
    for (call, last_event) in [
        (5, "create:action-state-control"),
        (6, "create:action-state-control"),
        (7, "append:COMMITTED"),
        (8, "delete:{0=10, 1=20}"),
    ] {
        let kafka = FakeCaps::new();
        kafka.fail_on("describe", call, Fault::RecreateTopic(RECREATED_ID.into()));
        let error = run(&kafka, &p).unwrap_err();
        assert!(
            matches!(error, CleanupError::TopicChanged(_)),
            "call {call}: {error}"
        );
        assert!(
            error
                .to_string()
                .contains(&format!("expected ID {TOPIC_ID} but found {RECREATED_ID}")),
            "{error}"
        );
        assert_eq!(
            kafka.c().events.last().map(String::as_str),
            Some(last_event),
            "call {call}"
        );
    }
}

/// The permission probe decides from the describe it follows; a topic recreated (empty) or
/// deleted right before that describe is named as the changed topic it is, not as a plan
/// offset the new topic cannot serve.
#[test]
fn a_topic_recreated_or_deleted_before_the_permission_probe_is_topic_changed() {
    for (fault, found) in [
        (
            Fault::RecreateEmptyTopic(RECREATED_ID.into()),
            format!("expected ID {TOPIC_ID} but found {RECREATED_ID}"),
        ),
        (Fault::DeleteTopic, format!("{DATA} does not exist")),
    ] {
        let kafka = FakeCaps::new();
        // Describe 3 is the preview's, the one the probe follows (1 both topics, 2 the data
        // topic's ranges; the control topic is created only after the answer).
        kafka.fail_on("describe", 3, fault);
        let error = run(&kafka, &plan("rp", 10, 20)).unwrap_err();
        assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
        assert!(error.to_string().contains(&found), "{error}");
        assert!(kafka.c().probes.is_empty(), "{:?}", kafka.c().probes);
        assert!(
            !kafka.c().events.iter().any(|e| e.starts_with("append")),
            "nothing committed"
        );
    }
}

#[test]
fn recreated_topic_and_changed_partitions_are_refused_before_commit() {
    let kafka = FakeCaps::new();
    kafka.data().topic_id = RECREATED_ID.into();
    assert!(matches!(
        run(&kafka, &plan("rp", 10, 20)),
        Err(CleanupError::TopicChanged(_))
    ));
    let kafka = FakeCaps::new();
    kafka.data().partitions = vec![0, 1, 2];
    let error = run(&kafka, &plan("rp", 10, 20)).unwrap_err();
    assert!(error.to_string().contains("changed partitions"), "{error}");
    assert!(kafka.c().events.is_empty());
}

#[test]
fn control_topic_tombstone_stops_apply_and_recovery_without_changing_boundary() {
    let kafka = FakeCaps::new();
    let p = plan("rp", 10, 20);
    run(&kafka, &p).unwrap();
    push_control(&kafka, &p.plan_id, None);
    kafka.c().events.clear();
    let error = run(&kafka, &plan("rp2", 15, 25)).unwrap_err();
    assert!(
        matches!(error, CleanupError::ControlTopicCorrupt(_)),
        "{error}"
    );
    assert!(kafka.c().events.is_empty());
    let refused = check_recovery(&mut kafka.policy(), &[marker(10, 20)], &enforced()).unwrap_err();
    assert!(
        refused.to_string().contains("cannot be deleted"),
        "{refused}"
    );
}

#[test]
fn plan_changed_under_known_id_is_refused() {
    let kafka = FakeCaps::new();
    let p = plan("rp", 10, 20);
    run(&kafka, &p).unwrap();
    let forged = ControlRecord {
        status: Status::Applied,
        plan: plan("rp", 11, 20),
    }
    .render();
    push_control(&kafka, &p.plan_id, Some(&forged));
    assert!(matches!(
        run(&kafka, &p),
        Err(CleanupError::ControlTopicCorrupt(_))
    ));
}

#[test]
fn control_topic_with_two_partitions_or_delete_policy_is_refused() {
    for (partitions, policy) in [(vec![0, 1], "compact"), (vec![0], "compact,delete")] {
        let kafka = FakeCaps::new();
        let mut control = action_state_kafka::fake::safe_topic("control-id", &partitions, 0);
        control
            .configs
            .insert("cleanup.policy".into(), policy.into());
        kafka.c().topics.insert(CONTROL.into(), control);
        let error = run(&kafka, &plan("rp", 10, 20)).unwrap_err();
        assert!(
            matches!(error, CleanupError::InvalidControlTopic(_)),
            "{error}"
        );
        assert!(kafka.c().events.is_empty());
    }
}

#[test]
fn invalid_arguments_are_refused_before_any_kafka_call() {
    let kafka = FakeCaps::new();
    let p = plan("rp", 10, 20);
    for (control, rf) in [(DATA, 1), (" ", 1), (CONTROL, 0), (CONTROL, 32768)] {
        let opts = ApplyOptions {
            control_topic: control.into(),
            replication_factor: Some(rf),
            dry_run: false,
            start_new_history: false,
        };
        let error = apply(&mut kafka.policy(), &mut Silent, &p, &opts).unwrap_err();
        assert!(matches!(error, CleanupError::InvalidArgument(_)), "{error}");
    }
    assert_eq!(kafka.c().total_calls(), 0);
}

#[test]
fn dry_run_previews_and_writes_nothing() {
    let kafka = FakeCaps::new();
    kafka.data().beginnings.insert(0, 4);
    let opts = ApplyOptions {
        dry_run: true,
        ..new_history()
    };
    let report = apply(&mut kafka.policy(), &mut Silent, &plan("rp", 10, 20), &opts).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::DryRun);
    assert_eq!(report.preview[0].records_to_delete, 6);
    assert_eq!(report.preview[1].records_to_delete, 20);
    assert!(kafka.c().events.is_empty());
}

#[test]
fn committed_boundary_refuses_older_restore_before_delete_succeeds() {
    let kafka = FakeCaps::new();
    kafka.fail_on("delete_records", 2, Fault::Fail);
    let _ = run(&kafka, &plan("c1", 10, 20));
    let error = check_recovery(&mut kafka.policy(), &[marker(9, 20)], &enforced()).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("from offset 9 because the committed cleanup boundary is 10"),
        "{error}"
    );
    let allowed = check_recovery(&mut kafka.policy(), &[marker(10, 21)], &enforced()).unwrap();
    assert!(matches!(
        allowed.decision.mode,
        RecoveryMode::Enforced { .. }
    ));
}

#[test]
fn recovery_fails_closed_without_a_committed_boundary() {
    let kafka = FakeCaps::new();
    let error = check_recovery(&mut kafka.policy(), &[marker(0, 0)], &enforced()).unwrap_err();
    assert!(error.to_string().contains("does not exist"), "{error}");
    run(&kafka, &plan("c1", 0, 0)).unwrap();
    kafka.c().logs.remove(&(CONTROL.to_owned(), 0));
    let error = check_recovery(&mut kafka.policy(), &[marker(0, 0)], &enforced()).unwrap_err();
    assert!(
        error.to_string().contains("contains no committed boundary"),
        "{error}"
    );
}

#[test]
fn recovery_decision_table_rows() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("c1", 10, 20)).unwrap();
    let legacy = Marker::Legacy([(0, 10), (1, 20)].into_iter().collect());
    let standard = RecoveryPolicy {
        topic: Some(DATA.into()),
        control_topic: None,
        tombstones_enabled: true,
    };
    // Not configured: legacy or versioned restore without enforcement (even below the boundary
    // the live range check still applies, and beginnings are now 10 and 20).
    assert_eq!(
        check_recovery(
            &mut kafka.policy(),
            std::slice::from_ref(&legacy),
            &standard
        )
        .unwrap()
        .decision
        .mode,
        RecoveryMode::Standard
    );
    assert!(check_recovery(&mut kafka.policy(), &[marker(10, 25)], &standard).is_ok());
    // Configured: legacy refused, tombstones refused, mixtures refused.
    let error = check_recovery(
        &mut kafka.policy(),
        std::slice::from_ref(&legacy),
        &RecoveryPolicy {
            topic: Some(DATA.into()),
            ..enforced()
        },
    )
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("requires versioned Kafka recovery markers"),
        "{error}"
    );
    let conflicting = RecoveryPolicy {
        tombstones_enabled: true,
        ..enforced()
    };
    assert!(matches!(
        check_recovery(&mut kafka.policy(), &[marker(10, 20)], &conflicting),
        Err(CleanupError::ConflictingPolicies(_))
    ));
    let error =
        check_recovery(&mut kafka.policy(), &[marker(10, 20), legacy], &standard).unwrap_err();
    assert!(error.to_string().contains("mixture"), "{error}");
    // Below the live beginning without enforcement: the range check refuses.
    let error = check_recovery(&mut kafka.policy(), &[marker(4, 20)], &standard).unwrap_err();
    assert!(
        error.to_string().contains("available range is [10, 1000]"),
        "{error}"
    );
    // A recreated topic is reported as such.
    kafka.data().topic_id = RECREATED_ID.into();
    let error = check_recovery(&mut kafka.policy(), &[marker(10, 20)], &standard).unwrap_err();
    assert!(
        error.to_string().contains("may have been recreated"),
        "{error}"
    );
}

#[test]
fn control_topic_is_fenced_before_it_is_read_and_dry_runs_do_not_fence() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("rp", 10, 20)).unwrap();
    // The second apply reads a control log that holds records: its consumer polls them.
    kafka.c().trace.clear();
    run(&kafka, &plan("rp2", 15, 25)).unwrap();
    let trace = kafka.c().trace.clone();
    let fence = trace
        .iter()
        .position(|op| *op == "open_writer")
        .expect("fenced");
    let read = trace
        .iter()
        .position(|op| *op == "open_consumer")
        .expect("read");
    assert!(fence < read, "fence before read: {trace:?}");
    assert_eq!(
        trace.iter().filter(|op| **op == "assign").count(),
        1,
        "one control read: {trace:?}"
    );
    let dry = FakeCaps::new();
    let opts = ApplyOptions {
        dry_run: true,
        ..options()
    };
    apply(&mut dry.policy(), &mut Silent, &plan("rp", 10, 20), &opts).unwrap();
    assert_eq!(dry.c().fences(), 0);
}

#[test]
fn concurrent_apply_that_fenced_us_wins_and_we_commit_nothing() {
    let kafka = FakeCaps::new();
    let ours = plan("ours", 10, 30);
    let theirs = plan("theirs", 20, 20);
    let record = ControlRecord {
        status: Status::Committed,
        plan: theirs.clone(),
    };
    kafka.c().concurrent_commit = Some((theirs.plan_id.clone(), record.render()));
    // Fenced at commit, the apply decides again on the winner's history and refuses.
    let error = run(&kafka, &ours).unwrap_err();
    assert!(
        matches!(error, CleanupError::BoundaryRegression(_)),
        "{error}"
    );
    assert_eq!(
        statuses(&kafka),
        [(theirs.plan_id.clone(), Status::Committed)]
    );
    assert!(
        !kafka.c().events.iter().any(|e| e.starts_with("delete")),
        "nothing deleted"
    );
    assert_eq!(kafka.c().fences(), 2, "fenced again before deciding again");
}

#[test]
fn the_loser_of_two_concurrent_applies_reports_that_it_committed_nothing() {
    let kafka = FakeCaps::new();
    let ours = plan("ours", 10, 30);
    let theirs = plan("theirs", 20, 20);
    let record = ControlRecord {
        status: Status::Committed,
        plan: theirs.clone(),
    };
    kafka.c().concurrent_commit = Some((theirs.plan_id.clone(), record.render()));
    let failure =
        crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &ours, &options())
            .unwrap_err();
    assert!(
        matches!(failure.error, CleanupError::BoundaryRegression(_)),
        "{}",
        failure.error
    );
    // Its COMMITTED was fenced, and the history read after fencing again does not hold it:
    // "nothing was committed", not "unknown".
    assert_eq!(failure.status, None);
    assert!(!failure.commit_attempted, "the loser committed nothing");
}

#[test]
fn concurrent_apply_of_the_same_plan_resumes_it_instead_of_failing() {
    let kafka = FakeCaps::new();
    let p = plan("same", 10, 20);
    let record = ControlRecord {
        status: Status::Committed,
        plan: p.clone(),
    };
    kafka.c().concurrent_commit = Some((p.plan_id.clone(), record.render()));
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Resumed));
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Applied)]);
    // The apply that took over got time to commit before this one decided again.
    assert_eq!(kafka.c().slept, [50]);
}

#[test]
fn committed_records_are_written_by_the_fenced_writer() {
    let kafka = FakeCaps::new();
    // The fake refuses a COMMITTED record written by an idempotent writer: a full apply
    // passing proves it came from the one transactional writer this apply opened, which
    // writes APPLIED too.
    assert_eq!(run(&kafka, &plan("rp", 10, 20)), Ok(ApplyOutcome::Applied));
    assert_eq!(
        kafka.c().opened,
        [Some(action_state_kafka::policy::transactional_id(CONTROL))]
    );
}

#[test]
fn delete_permission_is_probed_before_commit_and_a_refusal_leaves_nothing_behind() {
    let kafka = FakeCaps::new();
    kafka.data().beginnings.insert(0, 3);
    run_new_history(&kafka, &plan("rp", 10, 20)).unwrap();
    assert_eq!(kafka.c().probes, ["probe:{0=3, 1=0}"]);
    let trace = kafka.c().trace.clone();
    let probe = trace.iter().position(|op| *op == "delete_records").unwrap();
    let commit = trace.iter().position(|op| *op == "append").unwrap();
    assert!(probe < commit, "{trace:?}");

    let denied = FakeCaps::new();
    denied.fail_on("delete_records", 1, Fault::Fail);
    let error = run_new_history(&denied, &plan("rp", 10, 20)).unwrap_err();
    assert!(
        error.to_string().contains("permission probe before commit"),
        "{error}"
    );
    assert!(
        !denied.c().events.iter().any(|e| e.starts_with("append")),
        "nothing committed"
    );
}

#[test]
fn a_failed_apply_reports_the_plan_status_it_last_knew() {
    let p = plan("checkpoint-42", 10, 20);
    // Refused before the control topic was read: no status.
    let kafka = FakeCaps::new();
    kafka.fail_on("describe", 1, Fault::Fail);
    let failure = crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &p, &options())
        .unwrap_err();
    assert_eq!(failure.status, None);
    assert!(!failure.commit_attempted);
    // Failed after COMMITTED: the plan is COMMITTED.
    let kafka = FakeCaps::new();
    kafka.fail_on("delete_records", 2, Fault::Fail);
    let failure = crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &p, &options())
        .unwrap_err();
    assert_eq!(failure.status, Some(Status::Committed));
    assert!(matches!(failure.error, CleanupError::Kafka(_)));
    // A resumed apply that fails again still knows it found COMMITTED.
    kafka.fail_on("delete_records", 3, Fault::Fail);
    let failure = crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &p, &options())
        .unwrap_err();
    assert_eq!(failure.status, Some(Status::Committed));
}

#[test]
fn a_lost_answer_to_the_applied_append_is_settled_by_reading_the_history_again() {
    let p = plan("checkpoint-42", 10, 20);
    // COMMITTED is the first append, APPLIED the second: it reaches the log, its answer not.
    // The policy writes it again with an idempotent writer (the third append), which fails.
    let kafka = FakeCaps::new();
    kafka.fail_on("append", 2, Fault::LostAnswer);
    kafka.fail_on("append", 3, Fault::Fail);
    let failure = crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &p, &options())
        .unwrap_err();
    assert!(matches!(failure.error, CleanupError::Kafka(_)));
    assert_eq!(
        failure.status,
        Some(Status::Applied),
        "the failure must not claim COMMITTED when the log says APPLIED"
    );
    // The last read was the one after the failed append. When it fails too, the status is
    // unknown, never COMMITTED.
    // (Each read of the non-empty log assigns its consumer once.)
    let reads = kafka.c().count("assign");
    let kafka = FakeCaps::new();
    kafka.fail_on("append", 2, Fault::LostAnswer);
    kafka.fail_on("append", 3, Fault::Fail);
    kafka.fail_on("assign", reads, Fault::Fail);
    let failure = crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &p, &options())
        .unwrap_err();
    assert_eq!(failure.status, None);
    assert!(failure.commit_attempted, "unknown, not 'nothing committed'");
}

#[test]
fn a_commit_without_a_definite_answer_is_settled_by_fencing_again_and_the_apply_completes() {
    let p = plan("checkpoint-42", 10, 20);
    // The COMMITTED record reached the log, its answer did not: the apply fences again, finds
    // its plan COMMITTED and finishes it, without committing twice.
    let kafka = FakeCaps::new();
    kafka.fail_on("append", 1, Fault::LostAnswer);
    let report = apply(&mut kafka.policy(), &mut Silent, &p, &options()).unwrap();
    assert_eq!(report.status, Some(Status::Applied));
    let events = kafka.c().events.clone();
    assert_eq!(
        events.iter().filter(|e| *e == "append:COMMITTED").count(),
        1,
        "{events:?}"
    );
    assert_eq!(kafka.c().fences(), 2);
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Applied)]);
    // The COMMITTED append failed before writing: the apply fences again and commits it.
    let kafka = FakeCaps::new();
    kafka.fail_on("append", 1, Fault::Fail);
    let report = apply(&mut kafka.policy(), &mut Silent, &p, &options()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    assert_eq!(kafka.c().fences(), 2);
    assert_eq!(statuses(&kafka), [(p.plan_id.clone(), Status::Applied)]);
    // A failure of the delete after COMMITTED is no doubt about the commit: no second attempt.
    let kafka = FakeCaps::new();
    kafka.fail_on("delete_records", 2, Fault::Fail);
    let failure = crate::apply::apply_with_status(&mut kafka.policy(), &mut Silent, &p, &options())
        .unwrap_err();
    assert_eq!(failure.status, Some(Status::Committed));
    assert_eq!(kafka.c().fences(), 1);
}

#[test]
fn check_recovery_refuses_markers_of_another_topic_than_the_configured_one() {
    let kafka = FakeCaps::new();
    // Another job's topic exists too, and the markers name it.
    kafka.c().topics.insert(
        "other-job".into(),
        action_state_kafka::fake::safe_topic("other-id", &[0, 1], 1_000),
    );
    let foreign = Marker::Versioned(VersionedMarker {
        topic: "other-job".into(),
        topic_id: "other-id".into(),
        offsets: [(0, 10), (1, 20)].into_iter().collect(),
    });
    let expected = "Kafka action-state recovery marker references topic other-job, but the configured topic is action-state";
    let standard = RecoveryPolicy {
        topic: Some(DATA.into()),
        control_topic: None,
        tombstones_enabled: false,
    };
    let error = check_recovery(
        &mut kafka.policy(),
        std::slice::from_ref(&foreign),
        &standard,
    )
    .unwrap_err();
    assert!(matches!(error, CleanupError::InvalidMarker(_)), "{error}");
    assert_eq!(error.to_string(), expected);
    // With a control topic set, the same sentence (not "not dedicated").
    run(&kafka, &plan("c1", 10, 20)).unwrap();
    let enforced = RecoveryPolicy {
        topic: Some(DATA.into()),
        ..enforced()
    };
    let error = check_recovery(
        &mut kafka.policy(),
        std::slice::from_ref(&foreign),
        &enforced,
    )
    .unwrap_err();
    assert_eq!(error.to_string(), expected);
    // Markers of the configured topic are still allowed.
    assert!(check_recovery(&mut kafka.policy(), &[marker(10, 20)], &enforced).is_ok());
}

/// A plan value that no checked constructor would return: the zero topic ID, with a plan ID
/// computed over its (otherwise valid) contents.
fn forged_zero_id_plan() -> Plan {
    let offsets: action_state_format::offsets::PartitionOffsets =
        [(0, 10), (1, 20)].into_iter().collect();
    let zero = action_state_format::plan::ZERO_TOPIC_ID;
    Plan::forged(action_state_format::plan::PlanFields {
        plan_id: action_state_format::plan::compute_plan_id("c1", DATA, zero, &offsets),
        source_recovery_point: "c1".into(),
        topic: DATA.into(),
        topic_id: zero.into(),
        offsets,
    })
}

#[test]
fn apply_validates_the_plan_value_before_anything_durable() {
    let kafka = FakeCaps::new();
    kafka.data().topic_id = action_state_format::plan::ZERO_TOPIC_ID.into();
    let error = run(&kafka, &forged_zero_id_plan()).unwrap_err();
    assert!(matches!(error, CleanupError::InvalidPlan(_)), "{error}");
    assert!(error.to_string().contains("broker-provided"), "{error}");
    let events = kafka.c().events.clone();
    assert!(events.is_empty(), "durable effects: {events:?}");
    assert_eq!(kafka.c().fences(), 0);
    assert!(!kafka.c().topics.contains_key(CONTROL));
    // Later applies and recoveries are not blocked by a record nobody can read.
    kafka.data().topic_id = TOPIC_ID.into();
    assert_eq!(run(&kafka, &plan("c1", 10, 20)), Ok(ApplyOutcome::Applied));
}

#[test]
fn check_recovery_without_markers_or_topic_names_what_is_missing() {
    let kafka = FakeCaps::new();
    let policy = RecoveryPolicy {
        topic: None,
        control_topic: None,
        tombstones_enabled: false,
    };
    let error = check_recovery(&mut kafka.policy(), &[], &policy).unwrap_err();
    assert!(matches!(error, CleanupError::InvalidArgument(_)), "{error}");
    let message = error.to_string();
    assert!(
        !message.contains("egacy"),
        "no legacy marker was given: {message}"
    );
    assert_eq!(
        message,
        "No recovery markers were given and no data topic is configured; name the data topic explicitly"
    );
    // Legacy markers alone still get their own explanation.
    let legacy = Marker::Legacy([(0, 10), (1, 20)].into_iter().collect());
    let error = check_recovery(&mut kafka.policy(), &[legacy], &policy).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Legacy recovery markers do not name"),
        "{error}"
    );
}

#[test]
fn a_plan_for_a_recreated_topic_against_the_old_control_topic_is_topic_changed() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("c1", 10, 20)).unwrap();
    // The topic is recreated under the same name; a plan is made from its new markers.
    kafka.data().topic_id = RECREATED_ID.into();
    kafka.data().beginnings = [(0, 0), (1, 0)].into_iter().collect();
    let fresh = Plan::new(
        "c2",
        DATA,
        RECREATED_ID,
        [(0, 30), (1, 40)].into_iter().collect(),
    )
    .unwrap();
    let error = run(&kafka, &fresh).unwrap_err();
    assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
    let message = error.to_string();
    assert!(message.contains("the topic was recreated"), "{message}");
    assert!(
        message.contains(TOPIC_ID) && message.contains(RECREATED_ID),
        "{message}"
    );
    assert!(!message.contains("not dedicated"), "{message}");
    // Recovery of the recreated topic against the old control topic says the same.
    let error = check_recovery(
        &mut kafka.policy(),
        &[Marker::Versioned(VersionedMarker {
            topic: DATA.into(),
            topic_id: RECREATED_ID.into(),
            offsets: [(0, 30), (1, 40)].into_iter().collect(),
        })],
        &enforced(),
    )
    .unwrap_err();
    assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
    assert!(
        error.to_string().contains("the topic was recreated"),
        "{error}"
    );
}

/// A first apply (dry or not) on a data topic already cleaned up to 398 is refused as the start
/// of a second history, saying `says`, naming the partition and `--start-new-history`, before
/// any write or permission probe.
fn refused_as_a_second_history(kafka: &FakeCaps, says: &str) {
    for dry_run in [true, false] {
        let opts = ApplyOptions {
            dry_run,
            ..options()
        };
        let error = apply(
            &mut kafka.policy(),
            &mut Silent,
            &plan("typo", 400, 20),
            &opts,
        )
        .unwrap_err();
        assert!(
            matches!(error, CleanupError::InvalidControlTopic(_)),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains(says)
                && message.contains("partition 0 at 398")
                && message.contains("start-new-history"),
            "{message}"
        );
        assert!(
            kafka.c().events.is_empty(),
            "dry {dry_run}: {:?}",
            kafka.c().events
        );
        assert!(kafka.c().probes.is_empty(), "refused before the probe");
    }
}

#[test]
fn a_missing_control_topic_of_a_cleaned_data_topic_is_not_created_without_the_explicit_intent() {
    // A typo in the control topic's name: the data topic was cleaned up to 398 under the real
    // one, so a new history here would let restores the real history allows lose records.
    let kafka = FakeCaps::new();
    kafka.data().beginnings = [(0, 398), (1, 0)].into_iter().collect();
    refused_as_a_second_history(&kafka, "control topic action-state-control does not exist");
    assert!(
        kafka.c().fences() == 0,
        "no writer was opened for a missing topic"
    );
    // Said explicitly, the new history begins, and the report names what was created.
    let report = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("new", 400, 20),
        &new_history(),
    )
    .unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    let created = report.created_control_topic.expect("created");
    assert_eq!(
        (
            created.topic.as_str(),
            created.partitions,
            created.replication_factor,
            created.min_insync_replicas
        ),
        (CONTROL, 1, 1, 1)
    );
}

#[test]
fn the_preview_announces_the_control_topic_a_first_apply_creates() {
    struct Seen(Vec<Option<crate::apply::NewControlTopic>>);
    impl crate::apply::ApplyObserver for Seen {
        fn before_commit(
            &mut self,
            _plan: &Plan,
            _preview: &[crate::apply::PartitionPreview],
            created: Option<&crate::apply::NewControlTopic>,
        ) -> crate::apply::Review {
            self.0.push(created.cloned());
            crate::apply::Review::Proceed
        }
    }
    let kafka = cluster(3, "1");
    let dry = ApplyOptions {
        dry_run: true,
        replication_factor: Some(3),
        ..options()
    };
    let mut seen = Seen(Vec::new());
    let report = apply(&mut kafka.policy(), &mut seen, &plan("first", 10, 20), &dry).unwrap();
    let would = report
        .created_control_topic
        .expect("a dry run names what it would create");
    assert_eq!(
        (would.replication_factor, would.min_insync_replicas),
        (3, 2)
    );
    assert!(kafka.c().events.is_empty());
    apply(
        &mut kafka.policy(),
        &mut seen,
        &plan("first", 10, 20),
        &options(),
    )
    .unwrap();
    assert_eq!(seen.0.len(), 2);
    assert!(seen.0.iter().all(Option::is_some), "{:?}", seen.0);
    // The next plan finds the topic: nothing is announced.
    let report = apply(
        &mut kafka.policy(),
        &mut seen,
        &plan("second", 30, 40),
        &options(),
    )
    .unwrap();
    assert_eq!(report.created_control_topic, None);
    assert_eq!(seen.0.last(), Some(&None));
}

#[test]
fn status_tells_when_each_plan_was_committed_and_applied_and_which_plan_each_boundary_came_from() {
    let kafka = FakeCaps::new();
    kafka.c().now = 1_000;
    run(&kafka, &plan("first", 10, 20)).unwrap();
    kafka.c().now = 5_000;
    // The second plan is left COMMITTED: its deletion fails.
    // Delete calls 1 and 2 were the first apply's probe and deletion; 3 is this one's probe.
    kafka.fail_on("delete_records", 4, Fault::Fail);
    let second = plan("second", 30, 20);
    run(&kafka, &second).unwrap_err();
    let report = status(&mut kafka.policy(), CONTROL).unwrap();
    let times: Vec<(Option<i64>, Option<i64>)> = report
        .times
        .iter()
        .map(|t| (t.committed_at, t.applied_at))
        .collect();
    assert_eq!(times, [(Some(1_000), Some(1_000)), (Some(5_000), None)]);
    // Partition 0: the second plan's 30; partition 1: 20, held by both, the first seen.
    let first_id = report.operations[0].plan.plan_id.clone();
    assert_eq!(
        report.boundary_origins,
        [(0, second.plan_id.clone()), (1, first_id)]
    );
}

#[test]
fn a_data_topic_that_begins_past_the_committed_boundary_is_reported_as_a_broken_history() {
    // The real history committed {0=10, 1=20}; an apply through a mistyped control topic then
    // deleted partition 0 up to 15.
    let kafka = FakeCaps::new();
    run(&kafka, &plan("real", 10, 20)).unwrap();
    assert_eq!(
        status(&mut kafka.policy(), CONTROL).unwrap().broken_history,
        None
    );
    kafka.data().beginnings.insert(0, 15);
    let report = status(&mut kafka.policy(), CONTROL).unwrap();
    let sentence = report.broken_history.expect("reported");
    assert!(
        sentence.contains("Broken cleanup history")
            && sentence.contains("partition 0 begins at 15, boundary 10"),
        "{sentence}"
    );
    // A restore the history allows (10 >= boundary 10) but whose records are gone.
    let error = check_recovery(&mut kafka.policy(), &[marker(12, 20)], &enforced()).unwrap_err();
    assert!(matches!(error, CleanupError::RecoveryRefused(_)), "{error}");
    let message = error.to_string();
    assert!(
        message.contains("action-state-0 from offset 12")
            && message.contains("Broken cleanup history"),
        "{message}"
    );
    // A restore whose records are all still there is allowed.
    assert!(check_recovery(&mut kafka.policy(), &[marker(15, 20)], &enforced()).is_ok());
}

#[test]
fn a_control_topic_created_concurrently_by_the_apply_that_cleaned_the_topic_is_used() {
    // Two first applies at once: this one found no control topic, the other created it,
    // committed and deleted before this one read the beginnings. The control topic is asked
    // for again after the beginnings: it exists and holds that commit, so this is no second
    // history (an empty one would be: the commit comes before the delete).
    let kafka = FakeCaps::new();
    let p = plan("same", 10, 20);
    let committed = ControlRecord {
        status: Status::Committed,
        plan: p.clone(),
    };
    // Describe 1 finds no control topic, 2 reads the beginnings (the ranges).
    kafka.fail_on("describe", 2, Fault::CreateControlTopic(CONTROL.into()));
    kafka.fail_on(
        "describe",
        2,
        Fault::ConcurrentCleanup(p.plan_id.clone(), committed.render()),
    );
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Resumed));
    assert!(!kafka.c().events.iter().any(|e| e.starts_with("create:")));
}

#[test]
fn a_control_topic_another_first_apply_just_created_is_waited_for_until_described() {
    // Issue 34 item 4: the other apply's creation wins (ours answers "already exists"), and the
    // brokers that answer next know the topic's name but not yet its partition.
    let kafka = FakeCaps::new();
    kafka.fail_on("create_topic", 1, Fault::CreateControlTopic(CONTROL.into()));
    kafka.c().unknown_partitions.insert(CONTROL.into(), 3);
    let report = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("same", 10, 20),
        &options(),
    )
    .unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    assert_eq!(
        report.created_control_topic, None,
        "the other apply created it"
    );
    assert_eq!(
        kafka.c().unknown_partitions[CONTROL],
        0,
        "every lagging answer was asked again"
    );
}

/// Answers the review with `answer` and records what it was told.
struct Reviewer {
    answer: crate::apply::Review,
    reviewed: usize,
    committed: usize,
}

impl crate::apply::ApplyObserver for Reviewer {
    fn before_commit(
        &mut self,
        _plan: &Plan,
        _preview: &[crate::apply::PartitionPreview],
        _created: Option<&crate::apply::NewControlTopic>,
    ) -> crate::apply::Review {
        self.reviewed += 1;
        self.answer
    }

    fn committed(&mut self, _plan: &Plan) {
        self.committed += 1;
    }
}

#[test]
fn a_declined_review_commits_and_deletes_nothing_and_a_later_apply_still_commits() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("first", 10, 20)).unwrap();
    kafka.c().events.clear();
    let mut no = Reviewer {
        answer: crate::apply::Review::Decline,
        reviewed: 0,
        committed: 0,
    };
    let p = plan("second", 30, 40);
    let report = apply(&mut kafka.policy(), &mut no, &p, &options()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Declined);
    assert_eq!(report.status, None);
    assert_eq!(report.preview.len(), 2);
    assert_eq!((no.reviewed, no.committed), (1, 0));
    assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
    let mut yes = Reviewer {
        answer: crate::apply::Review::Proceed,
        ..no
    };
    let report = apply(&mut kafka.policy(), &mut yes, &p, &options()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    assert_eq!((yes.reviewed, yes.committed), (2, 1));
}

/// Answers the review with `answer` and records the control topic it was told about.
struct Announced {
    answer: crate::apply::Review,
    told: Vec<Option<crate::apply::NewControlTopic>>,
}

impl crate::apply::ApplyObserver for Announced {
    fn before_commit(
        &mut self,
        _plan: &Plan,
        _preview: &[crate::apply::PartitionPreview],
        created: Option<&crate::apply::NewControlTopic>,
    ) -> crate::apply::Review {
        self.told.push(created.cloned());
        self.answer
    }
}

#[test]
fn a_declined_first_apply_creates_no_control_topic_and_an_accepted_one_creates_it_after_the_answer()
{
    // Issue 34 item 5: nothing durable before the operator's answer, the control topic
    // included. The review still announces the topic a yes would create.
    let kafka = FakeCaps::new();
    let p = plan("first", 10, 20);
    let mut no = Announced {
        answer: crate::apply::Review::Decline,
        told: Vec::new(),
    };
    let report = apply(&mut kafka.policy(), &mut no, &p, &options()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Declined);
    assert_eq!(report.created_control_topic, None, "nothing was created");
    assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
    assert!(!kafka.c().topics.contains_key(CONTROL));
    assert_eq!(kafka.c().fences(), 0, "nobody was fenced either");
    let [Some(announced)] = no.told.as_slice() else {
        panic!("told once, of the topic a yes creates: {:?}", no.told);
    };
    assert_eq!(announced.topic, CONTROL);

    // Answered yes: created after the answer, then committed; asked once.
    let mut yes = Announced {
        answer: crate::apply::Review::Proceed,
        told: Vec::new(),
    };
    let report = apply(&mut kafka.policy(), &mut yes, &p, &options()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    assert_eq!(yes.told.len(), 1, "{:?}", yes.told);
    assert_eq!(
        report.created_control_topic.map(|c| c.topic),
        Some(CONTROL.to_owned())
    );
    assert_eq!(
        kafka.c().events,
        [
            "create:action-state-control",
            "append:COMMITTED",
            "delete:{0=10, 1=20}",
            "append:APPLIED"
        ]
    );
    let trace = kafka.c().trace.clone();
    let probe = trace.iter().position(|op| *op == "delete_records");
    let create = trace.iter().position(|op| *op == "create_topic");
    assert!(
        probe < create,
        "reviewed (probe) before creating: {trace:?}"
    );
}

#[test]
fn an_empty_control_topic_of_a_cleaned_data_topic_is_refused_like_a_missing_one() {
    // Issue 34 item 5: the typo guard of issue 20 also covers a control topic that exists but
    // holds no history (created by hand, or by an earlier declined apply of an old version).
    let kafka = FakeCaps::new();
    existing_control_topic(&kafka, 1);
    kafka.data().beginnings = [(0, 398), (1, 0)].into_iter().collect();
    refused_as_a_second_history(
        &kafka,
        "control topic action-state-control holds no cleanup history",
    );
    assert_eq!(
        run_new_history(&kafka, &plan("new", 400, 20)),
        Ok(ApplyOutcome::Applied)
    );
    // An empty control topic for a data topic that begins at 0 everywhere is a first apply.
    let fresh = FakeCaps::new();
    existing_control_topic(&fresh, 1);
    assert_eq!(
        run(&fresh, &plan("first", 10, 20)),
        Ok(ApplyOutcome::Applied)
    );
}

#[test]
fn an_empty_control_topic_is_guarded_from_the_describe_the_permission_probe_follows() {
    // Issue 40: the beginnings the new-history guard needs come from the preview's describe,
    // not from a describe of their own: 1 both topics, 2 the control range (the history), 3
    // the preview's (the probe follows it), 4 before commit, 5 before delete, 6 after.
    let fresh = FakeCaps::new();
    existing_control_topic(&fresh, 1);
    assert_eq!(
        run(&fresh, &plan("first", 10, 20)),
        Ok(ApplyOutcome::Applied)
    );
    assert_eq!(fresh.c().count("describe"), 6);
    // A cleaned data topic is refused before the probe is sent.
    let cleaned = FakeCaps::new();
    existing_control_topic(&cleaned, 1);
    cleaned.data().beginnings = [(0, 398), (1, 0)].into_iter().collect();
    assert!(matches!(
        run(&cleaned, &plan("typo", 400, 20)),
        Err(CleanupError::InvalidControlTopic(_))
    ));
    assert!(cleaned.c().probes.is_empty(), "{:?}", cleaned.c().probes);
}

#[test]
fn an_empty_control_topic_whose_first_apply_commits_and_deletes_meanwhile_is_used() {
    // Two first applies share an existing empty control topic: the other one commits and
    // deletes after this one read the empty history. Its beginnings are read before the
    // history is read again, so its commit is seen: no second history, a resume.
    let kafka = FakeCaps::new();
    existing_control_topic(&kafka, 1);
    let p = plan("same", 10, 20);
    let committed = ControlRecord {
        status: Status::Committed,
        plan: p.clone(),
    };
    // Describe 1 inspects both topics, 2 reads the (empty) control range, 3 the beginnings.
    kafka.fail_on(
        "describe",
        3,
        Fault::ConcurrentCleanup(p.plan_id.clone(), committed.render()),
    );
    assert_eq!(run(&kafka, &p), Ok(ApplyOutcome::Resumed));
}

#[test]
fn a_dry_run_ignores_a_declined_review() {
    let kafka = FakeCaps::new();
    let mut no = Reviewer {
        answer: crate::apply::Review::Decline,
        reviewed: 0,
        committed: 0,
    };
    let dry = ApplyOptions {
        dry_run: true,
        ..options()
    };
    let report = apply(&mut kafka.policy(), &mut no, &plan("first", 10, 20), &dry).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::DryRun);
    assert_eq!(no.reviewed, 1);
}

#[test]
fn a_failure_before_the_commit_append_says_this_run_committed_nothing() {
    let kafka = FakeCaps::new();
    kafka.data().beginnings.insert(0, 11);
    let failure = crate::apply::apply_with_status(
        &mut kafka.policy(),
        &mut Silent,
        &plan("rp", 10, 20),
        &new_history(),
    )
    .unwrap_err();
    assert!(!failure.commit_attempted);
    assert_eq!(failure.status, None);
}

#[test]
fn a_refused_restore_lists_every_partition_below_the_boundary() {
    let kafka = FakeCaps::new();
    run(&kafka, &plan("c1", 150, 60)).unwrap();
    let refusal = crate::recovery::check_recovery_detailed(
        &mut kafka.policy(),
        &[marker(100, 70), marker(120, 50)],
        &enforced(),
    )
    .unwrap_err();
    assert!(matches!(refusal.error, CleanupError::BoundaryViolation(_)));
    let rows: Vec<(u32, u64, u64)> = refusal
        .violations
        .iter()
        .map(|v| (v.partition, v.requested, v.boundary))
        .collect();
    assert_eq!(rows, [(0, 100, 150), (1, 50, 60)]);
    // Any other refusal lists no violation.
    let refusal = crate::recovery::check_recovery_detailed(
        &mut kafka.policy(),
        &[marker(150, 60)],
        &RecoveryPolicy {
            tombstones_enabled: true,
            ..enforced()
        },
    )
    .unwrap_err();
    assert!(refusal.violations.is_empty());
    assert_eq!(refusal.hint, None);
}

#[test]
fn a_refused_restore_names_the_plan_and_recovery_point_that_committed_the_boundary() {
    let kafka = FakeCaps::new();
    let c1 = plan("savepoint-c1", 150, 60);
    run(&kafka, &plan("savepoint-c0", 100, 40)).unwrap();
    run(&kafka, &c1).unwrap();
    let refusal = crate::recovery::check_recovery_detailed(
        &mut kafka.policy(),
        &[marker(120, 70)],
        &enforced(),
    )
    .unwrap_err();
    let hint = refusal.hint.expect("a hint");
    assert!(
        hint.contains(&format!(
            "committed by plan {} from recovery point savepoint-c1 (APPLIED)",
            c1.plan_id
        )) && hint.contains("restore from savepoint-c1 or a recovery point taken after it"),
        "{hint}"
    );
    assert!(!hint.contains("savepoint-c0"), "{hint}");
}

#[test]
fn a_control_topic_that_does_not_exist_is_named_as_such_not_as_a_refused_restore() {
    let kafka = FakeCaps::new();
    let error =
        crate::recovery::check_recovery(&mut kafka.policy(), &[marker(150, 60)], &enforced())
            .unwrap_err();
    assert!(
        matches!(&error, CleanupError::InvalidControlTopic(m)
            if m.contains(&format!("control topic {CONTROL} does not exist"))),
        "{error}"
    );
}

/// Options that leave the control topic's replication to the production default.
fn production() -> ApplyOptions {
    ApplyOptions {
        replication_factor: None,
        ..options()
    }
}

/// A fake cluster of `brokers` brokers with this `default.replication.factor`.
fn cluster(brokers: u32, default: &str) -> FakeCaps {
    let kafka = FakeCaps::new();
    kafka.c().brokers(brokers, default);
    kafka
}

/// A control topic that exists already with `rf` replicas (one partition, compact).
fn existing_control_topic(kafka: &FakeCaps, rf: u16) {
    let mut control = action_state_kafka::fake::safe_topic("control-id", &[0], 0);
    control
        .configs
        .insert("cleanup.policy".into(), "compact".into());
    control.replication_factor = rf;
    kafka.c().topics.insert(CONTROL.into(), control);
}

#[test]
fn without_a_factor_a_new_control_topic_gets_three_replicas_or_one_per_broker_whatever_the_cluster_default()
 {
    // (brokers, default.replication.factor) → (replication factor, min.insync.replicas).
    // Issue 34 item 7: Kafka ships default.replication.factor=1, and a cluster left at it must
    // not keep every boundary on one disk: the brokers decide, the cluster default does not.
    for (brokers, default, expected) in [
        (1, "3", (1, 1)),
        (2, "3", (2, 1)),
        (3, "3", (3, 2)),
        (5, "3", (3, 2)),
        (1, "1", (1, 1)),
        (2, "1", (2, 1)),
        (3, "1", (3, 2)),
        (5, "1", (3, 2)),
        (3, "2", (3, 2)),
        (5, "4", (3, 2)),
    ] {
        let kafka = cluster(brokers, default);
        let report = apply(
            &mut kafka.policy(),
            &mut Silent,
            &plan("rp", 10, 20),
            &production(),
        )
        .unwrap_or_else(|e| panic!("{brokers} brokers, default {default}: {e}"));
        assert_eq!(report.outcome, ApplyOutcome::Applied);
        let created = report.created_control_topic.expect("created");
        assert_eq!(
            (created.replication_factor, created.min_insync_replicas),
            expected,
            "{brokers} brokers, default.replication.factor {default}"
        );
        // What Kafka was asked for: that factor, and min.insync.replicas as a topic config.
        assert_eq!(kafka.c().created_with, [(CONTROL.to_owned(), expected.0)]);
        assert_eq!(
            kafka.c().topics[CONTROL].configs.get("min.insync.replicas"),
            Some(&expected.1.to_string())
        );
        // The topic has its production default: nothing to warn about, and the cluster was
        // described once for both decisions.
        assert_eq!(report.warnings, []);
        assert_eq!(kafka.c().count("describe_cluster"), 1);
    }
}

#[test]
fn a_dry_run_announces_the_production_default_and_creates_nothing() {
    let kafka = cluster(3, "3");
    let dry = ApplyOptions {
        dry_run: true,
        ..production()
    };
    let report = apply(&mut kafka.policy(), &mut Silent, &plan("rp", 10, 20), &dry).unwrap();
    let would = report.created_control_topic.expect("would create");
    assert_eq!(
        (would.replication_factor, would.min_insync_replicas),
        (3, 2)
    );
    assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
    assert!(kafka.c().created_with.is_empty());
}

#[test]
fn an_explicit_factor_wins_over_the_production_default() {
    for (factor, min_isr) in [(1, 1), (2, 1), (3, 2), (5, 2)] {
        let kafka = cluster(u32::from(factor).max(3), "3");
        let opts = ApplyOptions {
            replication_factor: Some(factor),
            ..options()
        };
        let report = apply(&mut kafka.policy(), &mut Silent, &plan("rp", 10, 20), &opts).unwrap();
        let created = report.created_control_topic.expect("created");
        assert_eq!(
            (created.replication_factor, created.min_insync_replicas),
            (factor, min_isr)
        );
        assert_eq!(kafka.c().created_with, [(CONTROL.to_owned(), factor)]);
        // Below the cluster's production default the operator hears it, with the fix.
        match factor {
            1 | 2 => assert!(
                matches!(
                    report.warnings.as_slice(),
                    [ApplyWarning::UnderReplicatedControlTopic(w)] if w.replication_factor == factor
                ),
                "{factor}: {:?}",
                report.warnings
            ),
            _ => {
                assert_eq!(report.warnings, [], "{factor}");
                assert_eq!(
                    kafka.c().calls.get("describe_cluster"),
                    Some(&1),
                    "one description of the cluster: its brokers, for the factor to fit"
                );
            }
        }
    }
}

#[test]
fn a_factor_the_cluster_cannot_hold_is_refused_in_a_dry_run_and_an_apply_before_anything_is_created()
 {
    for dry_run in [true, false] {
        let kafka = cluster(2, "1");
        let opts = ApplyOptions {
            replication_factor: Some(3),
            dry_run,
            ..options()
        };
        let error =
            apply(&mut kafka.policy(), &mut Silent, &plan("rp", 10, 20), &opts).unwrap_err();
        assert!(
            matches!(&error, CleanupError::InvalidArgument(m)
                if m.contains("replication factor 3") && m.contains("2 brokers (ID 1, 2)")
                    && m.contains("between 1 and 2")),
            "dry run {dry_run}: {error}"
        );
        assert!(kafka.c().created_with.is_empty(), "nothing created");
        assert!(
            !kafka.c().events.iter().any(|e| e.starts_with("append")),
            "nothing committed"
        );
    }
    // Without DescribeConfigs on the cluster the broker list alone decides.
    let kafka = cluster(1, "1");
    kafka.fail_on("describe_cluster", 1, Fault::Unauthorized);
    let error = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("rp", 10, 20),
        &ApplyOptions {
            replication_factor: Some(2),
            ..options()
        },
    )
    .unwrap_err();
    assert!(
        matches!(&error, CleanupError::InvalidArgument(m) if m.contains("1 broker (ID 1)")),
        "{error}"
    );
}

#[test]
fn an_existing_control_topic_with_fewer_replicas_than_the_production_default_warns_and_applies() {
    let kafka = cluster(3, "3");
    existing_control_topic(&kafka, 1);
    let report = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("rp", 10, 20),
        &production(),
    )
    .unwrap();
    assert_eq!(
        report.outcome,
        ApplyOutcome::Applied,
        "a warning, not a refusal"
    );
    assert_eq!(report.created_control_topic, None);
    let [ApplyWarning::UnderReplicatedControlTopic(warning)] = report.warnings.as_slice() else {
        panic!("one warning: {:?}", report.warnings);
    };
    assert_eq!(warning.control_topic, CONTROL);
    assert_eq!(warning.replication_factor, 1);
    assert_eq!(
        (
            warning.recommended.replication_factor,
            warning.recommended.min_insync_replicas
        ),
        (3, 2)
    );
    assert_eq!(warning.broker_count, 3);
    assert_eq!(warning.cluster_default_replication_factor, 3);
    assert!(
        warning.message.contains("kafka-reassign-partitions.sh")
            && warning.message.contains("min.insync.replicas=2"),
        "{}",
        warning.message
    );
    // The same with an explicit factor (it only matters for creation) and in a dry run.
    for opts in [
        options(),
        ApplyOptions {
            dry_run: true,
            ..options()
        },
    ] {
        let report = apply(
            &mut kafka.policy(),
            &mut Silent,
            &plan("rp2", 30, 40),
            &opts,
        )
        .unwrap();
        assert!(
            matches!(
                report.warnings.as_slice(),
                [ApplyWarning::UnderReplicatedControlTopic(_)]
            ),
            "{:?}",
            report.warnings
        );
    }
    // Already APPLIED: the warning still comes, nothing else happens.
    let again = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("rp", 10, 20),
        &production(),
    )
    .unwrap();
    assert_eq!(again.outcome, ApplyOutcome::AlreadyApplied);
    assert_eq!(again.warnings.len(), 1);
}

#[test]
fn a_control_topic_with_enough_replicas_costs_no_description_of_the_cluster() {
    for (brokers, default, rf) in [(3, "3", 3), (5, "3", 4), (1, "1", 1), (2, "1", 2)] {
        let kafka = cluster(brokers, default);
        existing_control_topic(&kafka, rf);
        let report = apply(
            &mut kafka.policy(),
            &mut Silent,
            &plan("rp", 10, 20),
            &production(),
        )
        .unwrap();
        assert_eq!(
            report.warnings,
            [],
            "{brokers} brokers, default {default}, RF {rf}"
        );
        // Three replicas are enough on any cluster: not even asked.
        assert_eq!(
            kafka.c().calls.contains_key("describe_cluster"),
            rf < 3,
            "{brokers} brokers, RF {rf}"
        );
    }
}

#[test]
fn without_the_clusters_description_nothing_is_created_and_an_existing_topic_is_unchecked() {
    // Creation with the production default needs it: refused before anything durable, naming
    // the way out.
    let kafka = cluster(3, "3");
    kafka.fail_on("describe_cluster", 1, Fault::Unauthorized);
    let error = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("rp", 10, 20),
        &production(),
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, CleanupError::Kafka(ref k) if !k.retriable),
        "{message}"
    );
    for said in [
        "new control topic action-state-control",
        "default.replication.factor",
        "(authorization)",
        "--replication-factor",
        "DescribeConfigs on the cluster",
    ] {
        assert!(message.contains(said), "{said:?} in {message}");
    }
    assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
    assert!(!kafka.c().topics.contains_key(CONTROL));
    // A value that is not a factor is no answer either.
    for value in ["0", "-1", "three"] {
        let kafka = cluster(3, value);
        let error = apply(
            &mut kafka.policy(),
            &mut Silent,
            &plan("rp", 10, 20),
            &production(),
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains(&format!("default.replication.factor={value}")),
            "{error}"
        );
        assert!(kafka.c().events.is_empty());
    }
    // An existing control topic: the apply goes on and says the check did not happen.
    let kafka = cluster(3, "3");
    existing_control_topic(&kafka, 1);
    kafka.fail_on("describe_cluster", 1, Fault::Unauthorized);
    let report = apply(
        &mut kafka.policy(),
        &mut Silent,
        &plan("rp", 10, 20),
        &production(),
    )
    .unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    let [ApplyWarning::ReplicationUnchecked(message)] = report.warnings.as_slice() else {
        panic!("{:?}", report.warnings);
    };
    assert!(
        message.contains("control topic action-state-control (1 replica)")
            && message.contains("was not checked")
            && message.contains("grant the principal DescribeConfigs on the cluster"),
        "{message}"
    );
}

#[test]
fn the_replication_warning_comes_once_per_apply_even_when_it_decides_again() {
    // Fenced before committing: the apply decides again from the start (a second inspection).
    let kafka = cluster(3, "3");
    existing_control_topic(&kafka, 1);
    let p = plan("same", 10, 20);
    let record = ControlRecord {
        status: Status::Committed,
        plan: p.clone(),
    };
    kafka.c().concurrent_commit = Some((p.plan_id.clone(), record.render()));
    let report = apply(&mut kafka.policy(), &mut Silent, &p, &production()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Resumed);
    let calls = kafka.c().calls.clone();
    assert!(calls["describe"] >= 2, "decided twice: {calls:?}");
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    assert_eq!(kafka.c().count("describe_cluster"), 1);
}

#[test]
fn an_id_that_is_no_kafka_topic_id_is_named_as_such_not_as_a_recreated_topic() {
    let kafka = FakeCaps::new();
    // SPEC's test vector ID: a valid plan, but no topic Kafka could have.
    let foreign = Plan::new(
        "rp",
        DATA,
        "topic-id",
        [(0, 10), (1, 20)].into_iter().collect(),
    )
    .unwrap();
    let error = run(&kafka, &foreign).unwrap_err();
    assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
    assert_eq!(
        error.to_string(),
        format!(
            "Kafka action-state topic {DATA} has topic ID {TOPIC_ID} (checked before commit), but the expected ID topic-id is not a Kafka topic ID (Kafka writes 16 bytes as 22 characters of URL-safe base64, as kafka-topics.sh --describe prints them), so it names no Kafka topic"
        )
    );
    assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
    let marker = Marker::Versioned(VersionedMarker {
        topic: DATA.into(),
        topic_id: "topic-id".into(),
        offsets: [(0, 10), (1, 20)].into_iter().collect(),
    });
    let standard = RecoveryPolicy {
        topic: None,
        control_topic: None,
        tombstones_enabled: false,
    };
    let error = check_recovery(&mut kafka.policy(), &[marker], &standard).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("topic-id is not a Kafka topic ID"),
        "{error}"
    );
    assert!(!error.to_string().contains("recreated"), "{error}");
}

/// A broker before Kafka 2.8 (or with inter.broker.protocol.version below 2.8) answers every
/// topic with the all-zero ID: apply and restores must say so, not suspect a recreated topic.
#[test]
fn a_broker_without_topic_ids_is_named_as_such_not_as_a_recreated_topic() {
    let kafka = FakeCaps::new();
    kafka.data().topic_id = action_state_format::plan::ZERO_TOPIC_ID.into();
    let applied = run(&kafka, &plan("rp", 10, 20)).unwrap_err();
    let standard = RecoveryPolicy {
        topic: None,
        control_topic: None,
        tombstones_enabled: false,
    };
    let restored = check_recovery(&mut kafka.policy(), &[marker(10, 20)], &standard).unwrap_err();
    for error in [applied, restored] {
        assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
        let message = error.to_string();
        assert!(
            message.contains("the broker reports no topic IDs"),
            "{message}"
        );
        assert!(
            message.contains("Kafka 2.8 or later with inter.broker.protocol.version 2.8 or later"),
            "{message}"
        );
        assert!(
            message.contains(TOPIC_ID),
            "names the expected ID: {message}"
        );
        assert!(!message.contains("recreated"), "{message}");
    }
    assert!(kafka.c().events.is_empty(), "{:?}", kafka.c().events);
}

#[test]
fn a_topic_id_in_standard_base64_is_refused_by_every_input_naming_its_kafka_form() {
    let offsets =
        || -> action_state_format::offsets::PartitionOffsets { [(0, 10)].into_iter().collect() };
    let standard = "/dCxXk8LR+qHr1Z2nQkB9w==";
    let plan = Plan::new("rp", DATA, standard, offsets())
        .unwrap_err()
        .to_string();
    assert!(plan.starts_with(&format!("Cleanup plan topicId {standard} is a Kafka topic ID written in standard or padded base64")), "{plan}");
    assert!(
        plan.contains(&format!(
            "as {RECREATED_ID} (URL-safe base64 without padding"
        )),
        "{plan}"
    );
    let text = format!(
        r#"{{"schemaVersion":1,"topic":"{DATA}","topicId":"{standard}","offsets":{{"0":10}}}}"#
    );
    let marker = Marker::parse(&text).unwrap_err().to_string();
    assert!(
        marker.contains(&format!(
            "Recovery marker topicId {standard} is a Kafka topic ID"
        )),
        "{marker}"
    );
    assert!(
        marker.ends_with("write the marker's topicId in that form"),
        "{marker}"
    );
    // The reference reader (escaped text) and marker values built by embedders say the same.
    let escaped = text.replace("\"topic\"", "\"t\\u006fpic\"");
    assert_eq!(Marker::parse(&escaped).unwrap_err().to_string(), marker);
    assert!(VersionedMarker::new(DATA, standard, offsets()).is_err());
    // A plan from such markers is refused before any plan is made.
    assert!(action_state_format::planning::plan_from_marker_texts("rp", &[text]).is_err());
    // The Kafka form itself is a topic ID like any other.
    assert!(Plan::new("rp", DATA, RECREATED_ID, offsets()).is_ok());
}
