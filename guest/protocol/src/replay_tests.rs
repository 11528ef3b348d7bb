//! Tests of the recovery session over the fake cluster, through the real policy: the session
//! reads with the policy's replay consumer of the fake.

use crate::recovery::RecoveryPolicy;
use crate::replay::{RecoverySession, ReplayOptions, ReplayedRecord};
use action_state_format::error::CleanupError;
use action_state_format::marker::{Marker, VersionedMarker};
use action_state_kafka::fake::{
    CONTROL, DATA, FakeCaps, Fault, RECREATED_ID, ScriptedPolls, TOPIC_ID,
};
use action_state_kafka::policy::Policy;

const OPTIONS: ReplayOptions = ReplayOptions {
    poll_timeout_ms: 100,
    stall_timeout_ms: 1_000,
};

fn marker(a: u64, b: u64) -> Marker {
    Marker::Versioned(VersionedMarker {
        topic: DATA.into(),
        topic_id: TOPIC_ID.into(),
        offsets: [(0, a), (1, b)].into_iter().collect(),
    })
}

fn standard() -> RecoveryPolicy {
    RecoveryPolicy {
        topic: None,
        control_topic: None,
        tombstones_enabled: false,
    }
}

/// Partition 0 holds offsets 0..10 (key k<n>), partition 1 offsets 0..4; ends 10 and 4. The
/// policy is the session's: one per session, as a host has.
fn setup() -> (FakeCaps, Policy<FakeCaps>) {
    let kafka = FakeCaps::new();
    kafka.data().ends = [(0, 0), (1, 0)].into_iter().collect();
    for offset in 0..10 {
        record(
            &kafka,
            0,
            offset,
            &format!("k{offset}"),
            Some(&format!("v{offset}")),
        );
    }
    for offset in 0..4 {
        record(&kafka, 1, offset, &format!("p1-{offset}"), Some("x"));
    }
    let policy = kafka.policy();
    (kafka, policy)
}

/// A record of the data topic (its partition's end moves past it).
fn record(kafka: &FakeCaps, partition: u32, offset: u64, key: &str, value: Option<&str>) {
    kafka.c().push_to(
        DATA,
        partition,
        offset,
        Some(key.as_bytes()),
        value.map(str::as_bytes),
    );
}

/// The logged record of `partition` at `offset`, to break.
fn logged(
    kafka: &FakeCaps,
    partition: u32,
    offset: u64,
) -> std::cell::RefMut<'_, action_state_kafka::capabilities::PolledRecord> {
    std::cell::RefMut::map(kafka.c(), |c| {
        c.logs
            .get_mut(&(DATA.to_owned(), partition))
            .and_then(|log| log.iter_mut().find(|r| r.offset == offset))
            .expect("the record is logged")
    })
}

fn drain(session: &mut RecoverySession, policy: &mut Policy<FakeCaps>) -> Vec<ReplayedRecord> {
    let mut all = Vec::new();
    loop {
        let batch = session.next_batch(policy, 3).unwrap();
        all.extend(batch.records);
        if batch.done {
            return all;
        }
    }
}

#[test]
fn replays_exactly_the_requested_range_up_to_the_captured_end() {
    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(6, 1)], OPTIONS)
        .unwrap();
    // Records written after the end was captured must not be replayed.
    record(&kafka, 0, 10, "late", Some("late"));
    let records = drain(&mut session, &mut policy);
    let offsets: Vec<(u32, u64)> = records.iter().map(|r| (r.partition, r.offset)).collect();
    assert_eq!(offsets.len(), 7);
    let mut sorted = offsets.clone();
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        [(0, 6), (0, 7), (0, 8), (0, 9), (1, 1), (1, 2), (1, 3)]
    );
    assert!(!records.iter().any(|r| r.partition == 0 && r.offset >= 10));
}

#[test]
fn empty_polls_do_not_end_the_replay() {
    let (kafka, mut policy) = setup();
    kafka.c().empty_polls = 5;
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(0, 0)], OPTIONS)
        .unwrap();
    assert_eq!(drain(&mut session, &mut policy).len(), 14);
}

#[test]
fn stalled_replay_fails_within_the_window_naming_positions_and_targets() {
    let (kafka, mut policy) = setup();
    kafka.c().stalled = true;
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(2, 4)], OPTIONS)
        .unwrap();
    let admin = |kafka: &FakeCaps| {
        let c = kafka.c();
        c.total_calls() - c.count("poll")
    };
    let admin_before = admin(&kafka);
    let error = session.next_batch(&mut policy, 10).unwrap_err();
    assert!(matches!(error, CleanupError::ReplayStalled(_)));
    let message = error.to_string();
    assert!(message.contains("no progress for 1000 ms"), "{message}");
    assert!(
        message.contains("current positions are {0=2} and target end offsets are {0=10}"),
        "{message}"
    );
    assert_eq!(
        admin(&kafka),
        admin_before,
        "no Kafka admin calls while polling"
    );
}

#[test]
fn undecodable_or_keyless_record_fails_with_partition_and_offset() {
    for broken in ["decode", "keyless"] {
        let (kafka, mut policy) = setup();
        {
            let mut record = logged(&kafka, 0, 7);
            match broken {
                "decode" => record.utf8 = false,
                _ => record.has_key = false,
            }
        }
        let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
        session
            .restore(&mut policy, &[marker(5, 4)], OPTIONS)
            .unwrap();
        let error = loop {
            match session.next_batch(&mut policy, 100) {
                Ok(batch) => assert!(!batch.done, "{broken}: replay must not finish"),
                Err(error) => break error,
            }
        };
        assert!(
            matches!(error, CleanupError::ReplayRecordInvalid(_)),
            "{error}"
        );
        assert!(
            error.to_string().contains("action-state-0 at offset 7"),
            "{error}"
        );
    }
}

#[test]
fn compaction_gaps_before_the_end_still_finish_the_replay() {
    let (kafka, mut policy) = setup();
    // Offsets 7..9 were compacted away because their keys were written again at offset 10,
    // after the end was captured: the consumer jumps from 7 to 10 and beyond.
    kafka
        .c()
        .logs
        .get_mut(&(DATA.to_owned(), 0))
        .unwrap()
        .retain(|r| r.offset < 7);
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(5, 4)], OPTIONS)
        .unwrap();
    record(&kafka, 0, 10, "k7", Some("newer"));
    let records = drain(&mut session, &mut policy);
    assert_eq!(records.iter().map(|r| r.offset).collect::<Vec<_>>(), [5, 6]);
}

#[test]
fn checkpoint_during_recovery_keeps_the_restored_offsets_until_replay_completes() {
    let (_, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(3, 1)], OPTIONS)
        .unwrap();
    let first = session.next_batch(&mut policy, 2).unwrap();
    assert!(!first.done && !first.records.is_empty());
    let mid = session.snapshot_marker(&mut policy).unwrap();
    assert_eq!(
        mid.offsets.to_string(),
        "{0=3, 1=1}",
        "mid-recovery marker carries the restored offsets"
    );
    drain(&mut session, &mut policy);
    let after = session.snapshot_marker(&mut policy).unwrap();
    assert_eq!(
        after.offsets.to_string(),
        "{0=10, 1=4}",
        "after replay: live end offsets"
    );
}

#[test]
fn topic_change_while_running_is_refused_with_both_identities() {
    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    kafka.data().partitions = vec![0, 1, 2];
    let error = session
        .snapshot_marker(&mut policy)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "changed partitions (while the job was running): expected [0, 1] but found [0, 1, 2]"
        ),
        "{error}"
    );
    kafka.data().partitions = vec![0, 1];
    kafka.data().topic_id = RECREATED_ID.into();
    let error = session
        .restore(&mut policy, &[marker(0, 0)], OPTIONS)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!("expected ID {TOPIC_ID} but found {RECREATED_ID}")),
        "{error}"
    );
}

#[test]
fn identity_is_rechecked_with_the_offsets_after_they_are_read_and_after_replay() {
    // Describes: 1 start, 2 restore (with the ranges), 3 after the ranges were read.
    for call in [2, 3] {
        let (kafka, mut policy) = setup();
        let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
        kafka.fail_on(
            "describe",
            call,
            Fault::RecreateTopic("late-recreate".into()),
        );
        let error = session
            .restore(&mut policy, &[marker(0, 0)], OPTIONS)
            .unwrap_err();
        assert!(
            matches!(error, CleanupError::TopicChanged(_)),
            "call {call}: {error}"
        );
        assert!(
            kafka.c().assignments.is_empty(),
            "call {call}: nothing assigned after a failed check"
        );
    }

    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(8, 3)], OPTIONS)
        .unwrap();
    kafka.data().topic_id = "recreated-during-replay".into();
    let error = loop {
        match session.next_batch(&mut policy, 100) {
            Ok(batch) => assert!(!batch.done),
            Err(error) => break error,
        }
    };
    assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
}

#[test]
fn restore_enforces_the_committed_boundary() {
    let (kafka, mut policy) = setup();
    let plan = action_state_format::plan::Plan::new(
        "c1",
        DATA,
        TOPIC_ID,
        [(0, 5), (1, 2)].into_iter().collect(),
    )
    .unwrap();
    crate::apply::apply(
        &mut kafka.policy(),
        &mut crate::apply::Silent,
        &plan,
        &crate::apply::ApplyOptions {
            control_topic: CONTROL.into(),
            replication_factor: Some(1),
            dry_run: false,
            start_new_history: false,
        },
    )
    .unwrap();
    let recovery = RecoveryPolicy {
        topic: None,
        control_topic: Some(CONTROL.into()),
        tombstones_enabled: false,
    };
    let mut session = RecoverySession::start(&mut policy, DATA, recovery).unwrap();
    let assigned = kafka.c().assignments.len();
    let error = session
        .restore(&mut policy, &[marker(4, 2)], OPTIONS)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("action-state-0 from offset 4 because the committed cleanup boundary is 5"),
        "{error}"
    );
    assert_eq!(
        kafka.c().assignments.len(),
        assigned + 1,
        "only the control topic's consumer was assigned (to read the boundary)"
    );
    session
        .restore(&mut policy, &[marker(5, 2)], OPTIONS)
        .unwrap();
    assert_eq!(drain(&mut session, &mut policy).len(), 5 + 2);
}

#[test]
fn a_failed_batch_ends_the_replay_instead_of_skipping_records() {
    let (kafka, mut policy) = setup();
    logged(&kafka, 0, 3).has_key = false;
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(0, 4)], OPTIONS)
        .unwrap();
    let error = session.next_batch(&mut policy, 100).unwrap_err();
    assert!(
        matches!(error, CleanupError::ReplayRecordInvalid(_)),
        "{error}"
    );
    // Records 0..2 were taken in the failed batch: continuing would skip them.
    let again = session.next_batch(&mut policy, 100).unwrap_err();
    assert!(
        again
            .to_string()
            .contains("failed earlier and cannot continue"),
        "{again}"
    );
    // A checkpoint now still carries the restored offsets.
    assert_eq!(
        session
            .snapshot_marker(&mut policy)
            .unwrap()
            .offsets
            .to_string(),
        "{0=0, 1=4}"
    );
}

#[test]
fn a_failed_restore_keeps_the_unfinished_replays_restored_offsets() {
    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(3, 1)], OPTIONS)
        .unwrap();
    let first = session.next_batch(&mut policy, 2).unwrap();
    assert!(!first.done && !first.records.is_empty(), "replay under way");
    // The retried restore fails on a Kafka error while it reads the offsets to replay.
    let calls = kafka.c().count("describe");
    kafka.fail_on("describe", calls + 1, Fault::Fail);
    let error = session
        .restore(&mut policy, &[marker(3, 1)], OPTIONS)
        .unwrap_err();
    assert!(matches!(error, CleanupError::Kafka(_)), "{error}");
    // The state still holds only part of [restored, end): a checkpoint must carry the restored
    // offsets, never the live ends.
    let marker_now = session.snapshot_marker(&mut policy).unwrap();
    assert_eq!(marker_now.offsets.to_string(), "{0=3, 1=1}");
    // The old replay cannot go on (the failed restore may have moved the consumer).
    let refused = session.next_batch(&mut policy, 100).unwrap_err();
    assert!(refused.to_string().contains("restore again"), "{refused}");
    // A later restore that succeeds and completes makes the session live again.
    session
        .restore(&mut policy, &[marker(3, 1)], OPTIONS)
        .unwrap();
    assert_eq!(
        session
            .snapshot_marker(&mut policy)
            .unwrap()
            .offsets
            .to_string(),
        "{0=3, 1=1}",
        "a new replay under way still carries its restored offsets"
    );
    drain(&mut session, &mut policy);
    assert_eq!(
        session
            .snapshot_marker(&mut policy)
            .unwrap()
            .offsets
            .to_string(),
        "{0=10, 1=4}"
    );
}

#[test]
fn a_failed_restore_with_no_unfinished_replay_refuses_checkpoints_until_one_completes() {
    let (_, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    // Offset 11 is past the end of partition 0: the restore is refused.
    let error = session
        .restore(&mut policy, &[marker(11, 1)], OPTIONS)
        .unwrap_err();
    assert!(
        matches!(error, CleanupError::OffsetsUnavailable(_)),
        "{error}"
    );
    let refused = session.snapshot_marker(&mut policy).unwrap_err();
    assert!(
        matches!(refused, CleanupError::RecoveryRefused(_)),
        "{refused}"
    );
    let message = refused.to_string();
    assert!(
        message.contains("restore of action-state failed") && message.contains("restore again"),
        "{message}"
    );
    session
        .restore(&mut policy, &[marker(3, 1)], OPTIONS)
        .unwrap();
    drain(&mut session, &mut policy);
    assert_eq!(
        session
            .snapshot_marker(&mut policy)
            .unwrap()
            .offsets
            .to_string(),
        "{0=10, 1=4}"
    );
}

#[test]
fn a_restore_with_nothing_to_replay_is_live_at_once() {
    // A fresh start: no markers, nothing to restore or replay.
    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session.restore(&mut policy, &[], OPTIONS).unwrap();
    // Before any next-batch: this failed with "Recovery marker offsets must not be empty".
    let fresh = session.snapshot_marker(&mut policy).unwrap();
    assert!(!session.is_replaying(), "nothing to replay: live at once");
    assert_eq!(fresh.offsets.to_string(), "{0=10, 1=4}");
    // Markers at the end offsets: nothing to replay either.
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(10, 4)], OPTIONS)
        .unwrap();
    assert!(!session.is_replaying());
    // The live job writes on: a checkpoint now carries the new end offsets.
    kafka.data().ends = [(0, 12), (1, 4)].into_iter().collect();
    assert_eq!(
        session
            .snapshot_marker(&mut policy)
            .unwrap()
            .offsets
            .to_string(),
        "{0=12, 1=4}"
    );
    // A runtime that still asks for a batch is told the replay is done.
    let batch = session.next_batch(&mut policy, 10).unwrap();
    assert!(batch.done && batch.records.is_empty());
}

/// Scripts the fake consumer: these polls (each after any scripted errors), then every partition
/// at its end.
fn scripted(kafka: &FakeCaps, polls: Vec<Vec<(u32, u64)>>, ends: &[(u32, u64)]) {
    kafka.c().scripted = Some(ScriptedPolls {
        polls: polls.into(),
        ends: ends.iter().copied().collect(),
    });
}

/// librdkafka's report of a refused coordinator lookup for the consumer's unused group.
fn group_refusal(code: i32) -> action_state_kafka::capabilities::KafkaError {
    action_state_kafka::capabilities::KafkaError {
        kind: action_state_kafka::capabilities::ErrorKind::Authorization,
        code,
        name: "GROUP_AUTHORIZATION_FAILED".into(),
        message: "FindCoordinator response error: Group authorization failed.".into(),
    }
}

#[test]
fn interleaved_partitions_and_redelivered_records_are_each_replayed_once_in_order() {
    let (kafka, mut policy) = setup();
    scripted(
        &kafka,
        vec![
            // Partitions alternate within a poll; (0, 1) and (1, 2) are delivered twice, and
            // (1, 4) lies past partition 1's end.
            vec![(0, 0), (1, 1), (0, 1), (0, 1), (1, 2), (0, 2), (1, 4)],
            vec![(1, 2), (1, 3), (0, 3)],
            vec![(0, 4), (0, 5), (0, 6), (0, 7), (0, 8), (0, 9)],
        ],
        &[(0, 10), (1, 4)],
    );
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(0, 1)], OPTIONS)
        .unwrap();
    let mut replayed = Vec::new();
    loop {
        let batch = session.next_batch(&mut policy, 100).unwrap();
        replayed.extend(
            batch
                .records
                .iter()
                .map(|r| (r.index, r.partition, r.offset)),
        );
        if batch.done {
            break;
        }
    }
    assert_eq!(
        replayed,
        [
            (0, 0, 0),
            (1, 1, 1),
            (2, 0, 1),
            (4, 1, 2),
            (5, 0, 2),
            (1, 1, 3),
            (2, 0, 3),
            (0, 0, 4),
            (1, 0, 5),
            (2, 0, 6),
            (3, 0, 7),
            (4, 0, 8),
            (5, 0, 9),
        ]
    );
}

/// Replays everything the scripted consumer hands out after `errors` (each poll's error, the
/// last one repeated forever with `repeat`), or returns the first error.
fn replay_all(
    polls: Vec<Vec<(u32, u64)>>,
    errors: &[action_state_kafka::capabilities::KafkaError],
    repeat: bool,
) -> Result<Vec<(u32, u64)>, CleanupError> {
    let (kafka, mut policy) = setup();
    scripted(&kafka, polls, &[(0, 10), (1, 4)]);
    script_poll_errors(&kafka, errors, repeat);
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(8, 3)], OPTIONS)
        .unwrap();
    let mut replayed = Vec::new();
    loop {
        let batch = session.next_batch(&mut policy, 100)?;
        replayed.extend(batch.records.iter().map(|r| (r.partition, r.offset)));
        if batch.done {
            return Ok(replayed);
        }
    }
}

/// The first polls fail with `errors`, one each; with `repeat`, every poll fails with the last.
fn script_poll_errors(
    kafka: &FakeCaps,
    errors: &[action_state_kafka::capabilities::KafkaError],
    repeat: bool,
) {
    let mut c = kafka.c();
    match errors.last().filter(|_| repeat) {
        Some(error) => c.always = Some(("poll", error.clone())),
        None => {
            for (call, error) in (1..).zip(errors) {
                c.script.push(("poll", call, error.clone()));
            }
        }
    }
}

#[test]
fn a_refused_lookup_of_the_unused_consumer_group_does_not_stop_a_replay() {
    let replayed = replay_all(
        vec![vec![(0, 8), (1, 3), (0, 9)]],
        &[group_refusal(30), group_refusal(30)],
        false,
    );
    assert_eq!(replayed.unwrap(), [(0, 8), (1, 3), (0, 9)]);
}

#[test]
fn a_refused_topic_read_or_an_endless_group_refusal_stops_a_replay() {
    // The topic's own refusal (29) is real.
    let error = replay_all(vec![vec![(0, 8)]], &[group_refusal(29)], false).unwrap_err();
    assert!(
        matches!(&error, CleanupError::Kafka(k) if k.cause.as_ref().is_some_and(|c| c.code == 29)),
        "{error:?}"
    );
    // A host that repeats the group refusal forever ends in a stall, not a loop.
    let error = replay_all(vec![vec![(0, 8)]], &[group_refusal(30)], true).unwrap_err();
    assert!(matches!(error, CleanupError::ReplayStalled(_)), "{error:?}");
}

#[test]
fn a_repeated_group_refusal_is_charged_as_time_and_ends_in_a_stall_within_the_window() {
    let (kafka, mut policy) = setup();
    scripted(&kafka, vec![vec![(0, 8)]], &[(0, 10), (1, 4)]);
    script_poll_errors(&kafka, &[group_refusal(30)], true);
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(8, 3)], OPTIONS)
        .unwrap();
    let error = session.next_batch(&mut policy, 100).unwrap_err();
    assert!(matches!(error, CleanupError::ReplayStalled(_)), "{error:?}");
    // stall 1,000 ms / poll 100 ms: ten refusals, each waited for, not ten thousand.
    assert_eq!(kafka.c().count("poll"), 10);
    assert_eq!(kafka.c().slept.iter().sum::<u32>(), 1_000);
    assert!(
        error.to_string().contains("no progress for 1000 ms"),
        "{error}"
    );
}

#[test]
fn a_failed_restore_of_other_markers_refuses_checkpoints_instead_of_keeping_the_newer_offsets() {
    // Restore C5 and replay part of it; the runtime fails over to the older C1, loads C1's
    // state, and restore(C1) fails: the state in hand never replayed past C1, so C5's offsets
    // may not be checkpointed.
    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    session
        .restore(&mut policy, &[marker(5, 2)], OPTIONS)
        .unwrap();
    assert!(!session.next_batch(&mut policy, 2).unwrap().done);
    let calls = kafka.c().count("describe");
    kafka.fail_on("describe", calls + 1, Fault::Fail);
    let error = session
        .restore(&mut policy, &[marker(1, 0)], OPTIONS)
        .unwrap_err();
    assert!(matches!(error, CleanupError::Kafka(_)), "{error}");
    let refused = session.snapshot_marker(&mut policy).unwrap_err();
    assert!(
        matches!(refused, CleanupError::RecoveryRefused(_)),
        "{refused:?}"
    );
    assert!(
        session.next_batch(&mut policy, 100).is_err(),
        "the interrupted replay cannot continue"
    );
}

#[test]
fn every_failure_of_a_restore_from_marker_texts_goes_through_the_sessions_failure_path() {
    let texts = |m: &Marker| vec![m.render()];
    // Markers that do not parse, on a fresh session and during an unfinished replay.
    for replaying in [false, true] {
        let (_, mut policy) = setup();
        let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
        if replaying {
            session
                .restore_texts(&mut policy, &texts(&marker(3, 1)), OPTIONS)
                .unwrap();
            assert!(!session.next_batch(&mut policy, 2).unwrap().done);
        }
        let error = session
            .restore_texts(&mut policy, &["{not json".into()], OPTIONS)
            .unwrap_err();
        assert!(matches!(error, CleanupError::InvalidMarker(_)), "{error:?}");
        let refused = session.snapshot_marker(&mut policy).unwrap_err();
        assert!(
            matches!(refused, CleanupError::RecoveryRefused(_)),
            "replaying {replaying}: {refused:?}"
        );
        assert!(session.next_batch(&mut policy, 100).is_err());
    }
    // A consumer that could not be opened (the session's first restore opens it; later ones
    // reuse it, as a host's session does).
    let (kafka, mut policy) = setup();
    let mut session = RecoverySession::start(&mut policy, DATA, standard()).unwrap();
    kafka.c().script.push((
        "open_consumer",
        1,
        action_state_kafka::fake::error(action_state_kafka::capabilities::ErrorKind::Authorization),
    ));
    let error = session
        .restore_texts(&mut policy, &texts(&marker(1, 0)), OPTIONS)
        .unwrap_err();
    assert!(
        matches!(&error, CleanupError::Kafka(k) if k.operation == "consumer-open"),
        "{error:?}"
    );
    assert!(matches!(
        session.snapshot_marker(&mut policy),
        Err(CleanupError::RecoveryRefused(_))
    ));
    assert!(session.next_batch(&mut policy, 100).is_err());
    // A restore that opens it and completes makes checkpoints possible again.
    session
        .restore_texts(&mut policy, &texts(&marker(1, 0)), OPTIONS)
        .unwrap();
    drain(&mut session, &mut policy);
    assert!(session.snapshot_marker(&mut policy).is_ok());
}
