//! Tests of the recovery session over the in-memory fake.

use crate::error::CleanupError;
use crate::fake::{CONTROL, DATA, FakeKafka, FakeSource, Fault, RECREATED_ID, TOPIC_ID};
use crate::marker::{Marker, VersionedMarker};
use crate::recovery::RecoveryPolicy;
use crate::replay::{RecoverySession, ReplayOptions, ReplayedRecord};

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

/// Partition 0 holds offsets 0..10 (key k<n>), partition 1 offsets 0..4; ends 10 and 4.
fn setup() -> (FakeKafka, FakeSource) {
    let mut kafka = FakeKafka::new();
    kafka.data().ends = [(0, 10), (1, 4)].into_iter().collect();
    let mut source = FakeSource::default();
    for offset in 0..10 {
        source.record(
            0,
            offset,
            &format!("k{offset}"),
            Some(&format!("v{offset}")),
        );
    }
    for offset in 0..4 {
        source.record(1, offset, &format!("p1-{offset}"), Some("x"));
    }
    (kafka, source)
}

fn drain(
    session: &mut RecoverySession,
    kafka: &mut FakeKafka,
    source: &mut FakeSource,
) -> Vec<ReplayedRecord> {
    let mut all = Vec::new();
    loop {
        let batch = session.next_batch(kafka, source, 3).unwrap();
        all.extend(batch.records);
        if batch.done {
            return all;
        }
    }
}

#[test]
fn replays_exactly_the_requested_range_up_to_the_captured_end() {
    let (mut kafka, mut source) = setup();
    // Records written after the end was captured must not be replayed.
    source.record(0, 10, "late", Some("late"));
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(6, 1)], OPTIONS)
        .unwrap();
    let records = drain(&mut session, &mut kafka, &mut source);
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
    let (mut kafka, mut source) = setup();
    source.empty_polls = 5;
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(0, 0)], OPTIONS)
        .unwrap();
    assert_eq!(drain(&mut session, &mut kafka, &mut source).len(), 14);
}

#[test]
fn stalled_replay_fails_within_the_window_naming_positions_and_targets() {
    let (mut kafka, mut source) = setup();
    source.stalled = true;
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(2, 4)], OPTIONS)
        .unwrap();
    let polls_before = kafka.total_calls();
    let error = session.next_batch(&mut kafka, &mut source, 10).unwrap_err();
    assert!(matches!(error, CleanupError::ReplayStalled(_)));
    let message = error.to_string();
    assert!(message.contains("no progress for 1000 ms"), "{message}");
    assert!(
        message.contains("current positions are {0=2} and target end offsets are {0=10}"),
        "{message}"
    );
    assert_eq!(
        kafka.total_calls(),
        polls_before,
        "no Kafka admin calls while polling"
    );
}

#[test]
fn undecodable_or_keyless_record_fails_with_partition_and_offset() {
    for broken in ["decode", "keyless"] {
        let (mut kafka, mut source) = setup();
        let record = &mut source.log.get_mut(&0).unwrap()[7];
        match broken {
            "decode" => record.utf8 = false,
            _ => record.has_key = false,
        }
        let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
        session
            .restore(&mut kafka, &mut source, &[marker(5, 4)], OPTIONS)
            .unwrap();
        let error = loop {
            match session.next_batch(&mut kafka, &mut source, 100) {
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
    let (mut kafka, mut source) = setup();
    // Offsets 7..9 were compacted away because their keys were written again at offset 10,
    // after the end was captured: the consumer jumps from 7 to 10 and beyond.
    source.log.get_mut(&0).unwrap().retain(|r| r.offset < 7);
    source.record(0, 10, "k7", Some("newer"));
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(5, 4)], OPTIONS)
        .unwrap();
    let records = drain(&mut session, &mut kafka, &mut source);
    assert_eq!(records.iter().map(|r| r.offset).collect::<Vec<_>>(), [5, 6]);
}

#[test]
fn checkpoint_during_recovery_keeps_the_restored_offsets_until_replay_completes() {
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(3, 1)], OPTIONS)
        .unwrap();
    let first = session.next_batch(&mut kafka, &mut source, 2).unwrap();
    assert!(!first.done && !first.records.is_empty());
    let mid = session.snapshot_marker(&mut kafka).unwrap();
    assert_eq!(
        mid.offsets.to_string(),
        "{0=3, 1=1}",
        "mid-recovery marker carries the restored offsets"
    );
    drain(&mut session, &mut kafka, &mut source);
    let after = session.snapshot_marker(&mut kafka).unwrap();
    assert_eq!(
        after.offsets.to_string(),
        "{0=10, 1=4}",
        "after replay: live end offsets"
    );
}

#[test]
fn topic_change_while_running_is_refused_with_both_identities() {
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    kafka.data().partitions = vec![0, 1, 2];
    let error = session.snapshot_marker(&mut kafka).unwrap_err().to_string();
    assert!(
        error.contains(
            "changed partitions (while the job was running): expected [0, 1] but found [0, 1, 2]"
        ),
        "{error}"
    );
    kafka.data().partitions = vec![0, 1];
    kafka.data().topic_id = RECREATED_ID.into();
    let error = session
        .restore(&mut kafka, &mut source, &[marker(0, 0)], OPTIONS)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(&format!("expected ID {TOPIC_ID} but found {RECREATED_ID}")),
        "{error}"
    );
}

#[test]
fn identity_is_rechecked_with_the_offsets_after_they_are_read_and_after_replay() {
    // describe_topics: 1 start, 2 restore (with the ranges), 3 after the ranges were read.
    for call in [2, 3] {
        let (mut kafka, mut source) = setup();
        let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
        kafka.fail_on(
            "describe_topics",
            call,
            Fault::RecreateTopic("late-recreate".into()),
        );
        let error = session
            .restore(&mut kafka, &mut source, &[marker(0, 0)], OPTIONS)
            .unwrap_err();
        assert!(
            matches!(error, CleanupError::TopicChanged(_)),
            "call {call}: {error}"
        );
        assert!(
            source.assignments.is_empty(),
            "call {call}: nothing assigned after a failed check"
        );
    }

    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(8, 3)], OPTIONS)
        .unwrap();
    kafka.data().topic_id = "recreated-during-replay".into();
    let error = loop {
        match session.next_batch(&mut kafka, &mut source, 100) {
            Ok(batch) => assert!(!batch.done),
            Err(error) => break error,
        }
    };
    assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
}

#[test]
fn restore_enforces_the_committed_boundary() {
    let (mut kafka, mut source) = setup();
    let plan = crate::plan::Plan::new("c1", DATA, TOPIC_ID, [(0, 5), (1, 2)].into_iter().collect())
        .unwrap();
    crate::apply::apply(
        &mut kafka,
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
    let policy = RecoveryPolicy {
        topic: None,
        control_topic: Some(CONTROL.into()),
        tombstones_enabled: false,
    };
    let mut session = RecoverySession::start(&mut kafka, DATA, policy).unwrap();
    let error = session
        .restore(&mut kafka, &mut source, &[marker(4, 2)], OPTIONS)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("action-state-0 from offset 4 because the committed cleanup boundary is 5"),
        "{error}"
    );
    assert!(source.assignments.is_empty());
    session
        .restore(&mut kafka, &mut source, &[marker(5, 2)], OPTIONS)
        .unwrap();
    assert_eq!(drain(&mut session, &mut kafka, &mut source).len(), 5 + 2);
}

#[test]
fn a_failed_batch_ends_the_replay_instead_of_skipping_records() {
    let (mut kafka, mut source) = setup();
    source.log.get_mut(&0).unwrap()[3].has_key = false;
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(0, 4)], OPTIONS)
        .unwrap();
    let error = session
        .next_batch(&mut kafka, &mut source, 100)
        .unwrap_err();
    assert!(
        matches!(error, CleanupError::ReplayRecordInvalid(_)),
        "{error}"
    );
    // Records 0..2 were taken in the failed batch: continuing would skip them.
    let again = session
        .next_batch(&mut kafka, &mut source, 100)
        .unwrap_err();
    assert!(
        again
            .to_string()
            .contains("failed earlier and cannot continue"),
        "{again}"
    );
    // A checkpoint now still carries the restored offsets.
    assert_eq!(
        session
            .snapshot_marker(&mut kafka)
            .unwrap()
            .offsets
            .to_string(),
        "{0=0, 1=4}"
    );
}

#[test]
fn a_failed_restore_keeps_the_unfinished_replays_restored_offsets() {
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(3, 1)], OPTIONS)
        .unwrap();
    let first = session.next_batch(&mut kafka, &mut source, 2).unwrap();
    assert!(!first.done && !first.records.is_empty(), "replay under way");
    // The retried restore fails on a Kafka error while it reads the offsets to replay.
    let calls = kafka.calls.get("list_offsets").copied().unwrap_or(0);
    kafka.fail_on("list_offsets", calls + 1, Fault::Fail);
    let error = session
        .restore(&mut kafka, &mut source, &[marker(3, 1)], OPTIONS)
        .unwrap_err();
    assert!(matches!(error, CleanupError::Kafka(_)), "{error}");
    // The state still holds only part of [restored, end): a checkpoint must carry the restored
    // offsets, never the live ends.
    let marker_now = session.snapshot_marker(&mut kafka).unwrap();
    assert_eq!(marker_now.offsets.to_string(), "{0=3, 1=1}");
    // The old replay cannot go on (the failed restore may have moved the consumer).
    let refused = session
        .next_batch(&mut kafka, &mut source, 100)
        .unwrap_err();
    assert!(refused.to_string().contains("restore again"), "{refused}");
    // A later restore that succeeds and completes makes the session live again.
    session
        .restore(&mut kafka, &mut source, &[marker(3, 1)], OPTIONS)
        .unwrap();
    assert_eq!(
        session
            .snapshot_marker(&mut kafka)
            .unwrap()
            .offsets
            .to_string(),
        "{0=3, 1=1}",
        "a new replay under way still carries its restored offsets"
    );
    drain(&mut session, &mut kafka, &mut source);
    assert_eq!(
        session
            .snapshot_marker(&mut kafka)
            .unwrap()
            .offsets
            .to_string(),
        "{0=10, 1=4}"
    );
}

#[test]
fn a_failed_restore_with_no_unfinished_replay_refuses_checkpoints_until_one_completes() {
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    // Offset 11 is past the end of partition 0: the restore is refused.
    let error = session
        .restore(&mut kafka, &mut source, &[marker(11, 1)], OPTIONS)
        .unwrap_err();
    assert!(
        matches!(error, CleanupError::OffsetsUnavailable(_)),
        "{error}"
    );
    let refused = session.snapshot_marker(&mut kafka).unwrap_err();
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
        .restore(&mut kafka, &mut source, &[marker(3, 1)], OPTIONS)
        .unwrap();
    drain(&mut session, &mut kafka, &mut source);
    assert_eq!(
        session
            .snapshot_marker(&mut kafka)
            .unwrap()
            .offsets
            .to_string(),
        "{0=10, 1=4}"
    );
}

#[test]
fn a_restore_with_nothing_to_replay_is_live_at_once() {
    // A fresh start: no markers, nothing to restore or replay.
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[], OPTIONS)
        .unwrap();
    // Before any next-batch: this failed with "Recovery marker offsets must not be empty".
    let fresh = session.snapshot_marker(&mut kafka).unwrap();
    assert!(!session.is_replaying(), "nothing to replay: live at once");
    assert_eq!(fresh.offsets.to_string(), "{0=10, 1=4}");
    // Markers at the end offsets: nothing to replay either.
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(10, 4)], OPTIONS)
        .unwrap();
    assert!(!session.is_replaying());
    // The live job writes on: a checkpoint now carries the new end offsets.
    kafka.data().ends = [(0, 12), (1, 4)].into_iter().collect();
    assert_eq!(
        session
            .snapshot_marker(&mut kafka)
            .unwrap()
            .offsets
            .to_string(),
        "{0=12, 1=4}"
    );
    // A runtime that still asks for a batch is told the replay is done.
    let batch = session.next_batch(&mut kafka, &mut source, 10).unwrap();
    assert!(batch.done && batch.records.is_empty());
}

/// Hands out scripted polls (each after any scripted errors), then reports every partition at
/// its end.
struct ScriptedSource {
    polls: std::collections::VecDeque<Vec<(u32, u64)>>,
    ends: crate::offsets::PartitionOffsets,
    done: bool,
    /// Errors returned, one per poll, before the scripted polls; `None` repeats the last forever.
    errors: std::collections::VecDeque<crate::capabilities::HostError>,
    repeat_errors: bool,
    polls_made: u32,
}

impl ScriptedSource {
    fn new(polls: Vec<Vec<(u32, u64)>>, ends: &[(u32, u64)]) -> Self {
        ScriptedSource {
            polls: polls.into(),
            ends: ends.iter().copied().collect(),
            done: false,
            errors: Default::default(),
            repeat_errors: false,
            polls_made: 0,
        }
    }
}

/// librdkafka's report of a refused coordinator lookup for the consumer's unused group.
fn group_refusal(code: i32) -> crate::capabilities::HostError {
    crate::capabilities::HostError {
        kind: crate::capabilities::ErrorKind::Authorization,
        code,
        name: "GROUP_AUTHORIZATION_FAILED".into(),
        message: "FindCoordinator response error: Group authorization failed.".into(),
    }
}

impl crate::replay::RecordSource for ScriptedSource {
    fn assign(&mut self, _start: &crate::offsets::PartitionOffsets) -> crate::ops::KafkaResult<()> {
        Ok(())
    }

    fn position(&mut self) -> crate::ops::KafkaResult<crate::offsets::PartitionOffsets> {
        Ok(if self.done {
            self.ends.clone()
        } else {
            crate::offsets::PartitionOffsets::new()
        })
    }

    fn poll(
        &mut self,
        _max: u32,
        _timeout_ms: u32,
    ) -> crate::ops::KafkaResult<crate::replay::PolledBatch> {
        self.polls_made += 1;
        let error = if self.repeat_errors {
            self.errors.front().cloned()
        } else {
            self.errors.pop_front()
        };
        if let Some(cause) = error {
            return Err(crate::error::KafkaError {
                operation: "consumer-poll".into(),
                message: cause.to_string(),
                retriable: false,
                cause: Some(cause),
            });
        }
        let records = self.polls.pop_front().unwrap_or_default();
        self.done = self.polls.is_empty();
        Ok(crate::replay::PolledBatch::from_records(
            records
                .into_iter()
                .map(|(partition, offset)| crate::capabilities::PolledRecord {
                    partition,
                    offset,
                    has_key: true,
                    has_value: true,
                    utf8: true,
                    key: None,
                    value: None,
                }),
        ))
    }
}

#[test]
fn interleaved_partitions_and_redelivered_records_are_each_replayed_once_in_order() {
    let (mut kafka, _) = setup();
    let mut source = ScriptedSource::new(
        vec![
            // Partitions alternate within a poll; (0, 1) and (1, 2) are delivered twice, and
            // (1, 4) lies past partition 1's end.
            vec![(0, 0), (1, 1), (0, 1), (0, 1), (1, 2), (0, 2), (1, 4)],
            vec![(1, 2), (1, 3), (0, 3)],
            vec![(0, 4), (0, 5), (0, 6), (0, 7), (0, 8), (0, 9)],
        ],
        &[(0, 10), (1, 4)],
    );
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(0, 1)], OPTIONS)
        .unwrap();
    let mut replayed = Vec::new();
    loop {
        let batch = session.next_batch(&mut kafka, &mut source, 100).unwrap();
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

/// Replays everything `source` hands out, or returns the first error.
fn replay_all(source: &mut ScriptedSource) -> Result<Vec<(u32, u64)>, CleanupError> {
    let (mut kafka, _) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, source, &[marker(8, 3)], OPTIONS)
        .unwrap();
    let mut replayed = Vec::new();
    loop {
        let batch = session.next_batch(&mut kafka, source, 100)?;
        replayed.extend(batch.records.iter().map(|r| (r.partition, r.offset)));
        if batch.done {
            return Ok(replayed);
        }
    }
}

#[test]
fn a_refused_lookup_of_the_unused_consumer_group_does_not_stop_a_replay() {
    let mut source = ScriptedSource::new(vec![vec![(0, 8), (1, 3), (0, 9)]], &[(0, 10), (1, 4)]);
    source.errors = [group_refusal(30), group_refusal(30)].into();
    assert_eq!(replay_all(&mut source).unwrap(), [(0, 8), (1, 3), (0, 9)]);
}

#[test]
fn a_refused_topic_read_or_an_endless_group_refusal_stops_a_replay() {
    // The topic's own refusal (29) is real.
    let mut source = ScriptedSource::new(vec![vec![(0, 8)]], &[(0, 10), (1, 4)]);
    source.errors = [group_refusal(29)].into();
    let error = replay_all(&mut source).unwrap_err();
    assert!(
        matches!(&error, CleanupError::Kafka(k) if k.cause.as_ref().is_some_and(|c| c.code == 29)),
        "{error:?}"
    );
    // A host that repeats the group refusal forever ends in a stall, not a loop.
    let mut source = ScriptedSource::new(vec![vec![(0, 8)]], &[(0, 10), (1, 4)]);
    source.errors = [group_refusal(30)].into();
    source.repeat_errors = true;
    let error = replay_all(&mut source).unwrap_err();
    assert!(matches!(error, CleanupError::ReplayStalled(_)), "{error:?}");
}

#[test]
fn a_repeated_group_refusal_is_charged_as_time_and_ends_in_a_stall_within_the_window() {
    let (mut kafka, _) = setup();
    let mut source = ScriptedSource::new(vec![vec![(0, 8)]], &[(0, 10), (1, 4)]);
    source.errors = [group_refusal(30)].into();
    source.repeat_errors = true;
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(8, 3)], OPTIONS)
        .unwrap();
    let error = session
        .next_batch(&mut kafka, &mut source, 100)
        .unwrap_err();
    assert!(matches!(error, CleanupError::ReplayStalled(_)), "{error:?}");
    // stall 1,000 ms / poll 100 ms: ten refusals, each waited for, not ten thousand.
    assert_eq!(source.polls_made, 10);
    assert_eq!(kafka.pauses.iter().sum::<u32>(), 1_000);
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
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore(&mut kafka, &mut source, &[marker(5, 2)], OPTIONS)
        .unwrap();
    assert!(!session.next_batch(&mut kafka, &mut source, 2).unwrap().done);
    let calls = kafka.calls.get("list_offsets").copied().unwrap_or(0);
    kafka.fail_on("list_offsets", calls + 1, Fault::Fail);
    let error = session
        .restore(&mut kafka, &mut source, &[marker(1, 0)], OPTIONS)
        .unwrap_err();
    assert!(matches!(error, CleanupError::Kafka(_)), "{error}");
    let refused = session.snapshot_marker(&mut kafka).unwrap_err();
    assert!(
        matches!(refused, CleanupError::RecoveryRefused(_)),
        "{refused:?}"
    );
    assert!(
        session.next_batch(&mut kafka, &mut source, 100).is_err(),
        "the interrupted replay cannot continue"
    );
}

#[test]
fn every_failure_of_a_restore_from_marker_texts_goes_through_the_sessions_failure_path() {
    let texts = |m: &Marker| vec![m.render()];
    // Markers that do not parse, on a fresh session and during an unfinished replay.
    for replaying in [false, true] {
        let (mut kafka, mut source) = setup();
        let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
        if replaying {
            session
                .restore_texts(&mut kafka, Ok(&mut source), &texts(&marker(3, 1)), OPTIONS)
                .unwrap();
            assert!(!session.next_batch(&mut kafka, &mut source, 2).unwrap().done);
        }
        let error = session
            .restore_texts(&mut kafka, Ok(&mut source), &["{not json".into()], OPTIONS)
            .unwrap_err();
        assert!(matches!(error, CleanupError::InvalidMarker(_)), "{error:?}");
        let refused = session.snapshot_marker(&mut kafka).unwrap_err();
        assert!(
            matches!(refused, CleanupError::RecoveryRefused(_)),
            "replaying {replaying}: {refused:?}"
        );
        assert!(session.next_batch(&mut kafka, &mut source, 100).is_err());
    }
    // A consumer that could not be opened.
    let (mut kafka, mut source) = setup();
    let mut session = RecoverySession::start(&mut kafka, DATA, standard()).unwrap();
    session
        .restore_texts(&mut kafka, Ok(&mut source), &texts(&marker(3, 1)), OPTIONS)
        .unwrap();
    assert!(!session.next_batch(&mut kafka, &mut source, 2).unwrap().done);
    let error = session
        .restore_texts(
            &mut kafka,
            Err(CleanupError::kafka("consumer-open", "no consumer")),
            &texts(&marker(1, 0)),
            OPTIONS,
        )
        .unwrap_err();
    assert!(matches!(error, CleanupError::Kafka(_)), "{error:?}");
    assert!(matches!(
        session.snapshot_marker(&mut kafka),
        Err(CleanupError::RecoveryRefused(_))
    ));
}
