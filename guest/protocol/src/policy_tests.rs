//! Tests of the Kafka policies over the fake plain capabilities.

use action_state_format::error::{CleanupError, RangeViolation};
use action_state_format::offsets::PartitionOffsets;
use action_state_kafka::capabilities::ErrorKind;
use action_state_kafka::fake::{Cluster, FakeCaps, RECREATED_ID, Shared, TOPIC_ID, error};
use action_state_kafka::kafka_types::{AppendError, OffsetSpec};
use action_state_kafka::policy::{Policy, transactional_id};

const CONTROL: &str = "control";

fn setup() -> (Shared, Policy<FakeCaps>) {
    let cluster = Cluster::new();
    cluster.borrow_mut().topic(CONTROL, &[0]);
    cluster.borrow_mut().topic("data", &[0, 1]);
    let policy = Policy::new(FakeCaps(cluster.clone()));
    (cluster, policy)
}

#[test]
fn the_transactional_id_is_the_one_every_host_and_version_uses() {
    assert_eq!(transactional_id("ctl"), "action-state-cleanup:ctl");
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    assert_eq!(
        cluster.borrow().opened,
        [Some("action-state-cleanup:control".to_owned())]
    );
}

#[test]
fn not_leader_and_transport_errors_are_retried_until_an_answer() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().script = vec![
        ("list_offsets", 1, error(ErrorKind::NotLeader)),
        ("list_offsets", 2, error(ErrorKind::Transport)),
        ("list_offsets", 3, error(ErrorKind::Timeout)),
    ];
    let offsets = policy
        .list_offsets("data", &[0, 1], OffsetSpec::Earliest)
        .unwrap();
    assert_eq!(offsets.get(1), Some(0));
    let c = cluster.borrow();
    assert_eq!(c.count("list_offsets"), 4);
    assert!(
        c.slept.windows(2).all(|w| w[1] >= w[0]),
        "back-off grows: {:?}",
        c.slept
    );
}

#[test]
fn a_transient_error_past_the_deadline_fails_retriable_with_its_cause() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().always = Some(("list_offsets", error(ErrorKind::NotLeader)));
    let failure = policy
        .list_offsets("data", &[0], OffsetSpec::Latest)
        .unwrap_err();
    assert!(failure.retriable);
    assert_eq!(failure.cause.map(|c| c.kind), Some(ErrorKind::NotLeader));
    let c = cluster.borrow();
    assert!(
        c.now >= 1_000 && c.now < 1_600,
        "gave up at the deadline: {}",
        c.now
    );
}

#[test]
fn a_step_retried_for_more_than_a_second_is_reported_about_once_a_second() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().timeout_ms = 5_000;
    cluster.borrow_mut().always = Some(("list_offsets", error(ErrorKind::Transport)));
    policy
        .list_offsets("data", &[0], OffsetSpec::Latest)
        .unwrap_err();
    let c = cluster.borrow();
    assert!(
        (3..=5).contains(&c.retried.len()),
        "one report a second of a 5 s deadline: {:?}",
        c.retried
    );
    let (message, remaining, at) = &c.retried[0];
    assert!(*at >= 1_000, "quiet for the first second: {at}");
    assert_eq!(*remaining, 5_000 - at);
    assert!(
        message.contains("list-offsets") && message.contains("simulated transport"),
        "{message}"
    );
    assert!(c.retried.windows(2).all(|w| w[1].2 - w[0].2 >= 1_000));
}

#[test]
fn a_step_that_recovers_within_a_second_reports_nothing() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().script = vec![("list_offsets", 1, error(ErrorKind::NotLeader))];
    policy
        .list_offsets("data", &[0], OffsetSpec::Latest)
        .unwrap();
    assert!(cluster.borrow().retried.is_empty());
}

#[test]
fn authentication_and_authorization_failures_end_at_once() {
    for kind in [ErrorKind::Authentication, ErrorKind::Authorization] {
        let (cluster, mut policy) = setup();
        cluster.borrow_mut().always = Some(("*", error(kind)));
        let failure = policy.describe_topics(&["data"]).unwrap_err();
        assert!(!failure.retriable, "{kind:?}");
        assert_eq!(failure.cause.map(|c| c.kind), Some(kind));
        assert_eq!(
            cluster.borrow().count("describe"),
            1,
            "{kind:?}: asked once"
        );
        assert_eq!(cluster.borrow().now, 0, "{kind:?}: no waiting");
    }
}

/// A host error that carries a Kafka protocol code under the case `kind`.
fn with_code(
    kind: ErrorKind,
    code: i32,
    name: &str,
) -> action_state_kafka::capabilities::KafkaError {
    action_state_kafka::capabilities::KafkaError {
        kind,
        code,
        name: name.into(),
        message: format!("simulated {name}"),
    }
}

#[test]
fn a_protocol_code_the_host_reports_as_other_is_retried_as_the_cores_table_says() {
    // BROKER_NOT_AVAILABLE (8) is transport in the core's table, whatever the host mapped.
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().script = vec![(
        "list_offsets",
        1,
        with_code(ErrorKind::Other, 8, "BROKER_NOT_AVAILABLE"),
    )];
    policy
        .list_offsets("data", &[0], OffsetSpec::Latest)
        .unwrap();
    assert_eq!(cluster.borrow().count("list_offsets"), 2, "asked again");
}

#[test]
fn a_protocol_code_wins_over_the_case_a_host_gave_it() {
    // A host calling TOPIC_AUTHORIZATION_FAILED (29) a timeout must not be retried for it.
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().always = Some((
        "*",
        with_code(ErrorKind::Timeout, 29, "TOPIC_AUTHORIZATION_FAILED"),
    ));
    let failure = policy.describe_topics(&["data"]).unwrap_err();
    assert!(!failure.retriable);
    assert_eq!(
        failure.cause.map(|c| (c.kind, c.code)),
        Some((ErrorKind::Authorization, 29))
    );
    assert_eq!(cluster.borrow().count("describe"), 1, "asked once");
}

#[test]
fn writer_and_consumer_errors_are_classified_too() {
    // PRODUCER_FENCED (90) reported as other by an append is the fenced case the policy reads.
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    cluster.borrow_mut().always =
        Some(("append", with_code(ErrorKind::Other, 90, "PRODUCER_FENCED")));
    let appended = policy.append_control(CONTROL, "k", "v", true);
    assert!(
        matches!(appended, Err(AppendError::Fenced(_))),
        "{appended:?}"
    );
    // NOT_LEADER_OR_FOLLOWER (6) reported as other by a poll is ridden out like a leader change.
    let (cluster, mut policy) = setup();
    cluster
        .borrow_mut()
        .push(CONTROL, 0, Some(b"a"), Some(b"1"));
    cluster.borrow_mut().script = vec![(
        "poll",
        1,
        with_code(ErrorKind::Other, 6, "NOT_LEADER_OR_FOLLOWER"),
    )];
    let entries = policy.read_control_log(CONTROL).unwrap();
    assert_eq!(entries.len(), 1);
}

#[test]
fn replay_consumer_errors_take_the_policys_meaning_of_every_error() {
    // The replay consumer is the policy's: its errors pass the core's table of protocol codes and
    // the one retriable rule, like every other capability's.
    let (cluster, mut policy) = setup();
    policy.open_replay("data").unwrap();
    // TOPIC_AUTHORIZATION_FAILED (29) reported as other is the authorization case: an answer.
    cluster.borrow_mut().script = vec![(
        "poll",
        1,
        with_code(ErrorKind::Other, 29, "TOPIC_AUTHORIZATION_FAILED"),
    )];
    let refused = policy.replay_poll(10, 100).unwrap_err();
    assert_eq!(refused.operation, "consumer-poll");
    assert_eq!(
        refused.cause.as_ref().map(|c| c.kind),
        Some(ErrorKind::Authorization)
    );
    assert!(!refused.retriable, "{refused:?}");
    assert!(
        refused.message.ends_with("(authorization)"),
        "{}",
        refused.message
    );
    // An unclassified failure may pass: retriable, as the policy's other steps say.
    cluster.borrow_mut().script = vec![("assign", 1, error(ErrorKind::Other))];
    let failed = policy
        .replay_assign(&[(0, 0)].into_iter().collect())
        .unwrap_err();
    assert_eq!(failed.operation, "consumer-assign");
    assert!(failed.retriable, "{failed:?}");
    // The refused lookup of the unused group is no error: the policy waited a poll's time.
    cluster.borrow_mut().script = vec![(
        "poll",
        2,
        with_code(ErrorKind::Authorization, 30, "GROUP_AUTHORIZATION_FAILED"),
    )];
    let before = cluster.borrow().now;
    assert_eq!(
        policy.replay_poll(10, 100).unwrap(),
        action_state_kafka::policy::ReplayPoll::GroupRefused
    );
    assert_eq!(cluster.borrow().now - before, 100);
    assert_eq!(cluster.borrow().count("open_consumer"), 1, "opened once");
}

#[test]
fn the_control_log_is_read_to_its_end_riding_out_transport_errors_and_markers() {
    let (cluster, mut policy) = setup();
    {
        let mut c = cluster.borrow_mut();
        c.push(CONTROL, 0, Some(b"a"), Some(b"1"));
        // Offsets 1 and 2 are transaction markers.
        c.push(CONTROL, 3, Some(b"b"), Some(b"2"));
        c.push(CONTROL, 4, Some(b"c"), None);
        c.script = vec![
            ("poll", 1, error(ErrorKind::Transport)),
            ("poll", 2, error(ErrorKind::Transport)),
        ];
    }
    let entries = policy.read_control_log(CONTROL).unwrap();
    let offsets: Vec<u64> = entries.iter().map(|e| e.offset).collect();
    assert_eq!(offsets, [0, 3, 4]);
    assert_eq!(entries[2].value, None, "a tombstone stays a tombstone");
    assert_eq!(entries[1].key.as_deref(), Some("b"));
}

#[test]
fn the_control_log_read_gives_up_on_a_permanent_error() {
    let (cluster, mut policy) = setup();
    cluster
        .borrow_mut()
        .push(CONTROL, 0, Some(b"a"), Some(b"1"));
    cluster.borrow_mut().script = vec![("poll", 1, error(ErrorKind::Authorization))];
    let error = policy.read_control_log(CONTROL).unwrap_err();
    assert!(
        matches!(error, CleanupError::Kafka(ref k) if !k.retriable),
        "{error:?}"
    );
}

/// What librdkafka reports when the brokers refuse the coordinator lookup of the group id it
/// requires of every consumer, even an assign-only one.
fn group_refusal() -> action_state_kafka::capabilities::KafkaError {
    action_state_kafka::capabilities::KafkaError {
        kind: ErrorKind::Authorization,
        code: action_state_kafka::capabilities::GROUP_AUTHORIZATION_FAILED,
        name: "GROUP_AUTHORIZATION_FAILED".into(),
        message: "Message consumption error: GroupAuthorizationFailed (FindCoordinator response error: Group authorization failed.)".into(),
    }
}

#[test]
fn a_refused_lookup_of_the_unused_consumer_group_does_not_stop_the_control_log_read() {
    let (cluster, mut policy) = setup();
    {
        let mut c = cluster.borrow_mut();
        c.push(CONTROL, 0, Some(b"a"), Some(b"1"));
        c.push(CONTROL, 1, Some(b"b"), Some(b"2"));
        c.script = vec![("poll", 1, group_refusal())];
    }
    let entries = policy.read_control_log(CONTROL).unwrap();
    let offsets: Vec<u64> = entries.iter().map(|e| e.offset).collect();
    assert_eq!(offsets, [0, 1]);
    let c = cluster.borrow();
    assert_eq!(c.count("poll"), 2, "polled again after the refusal");
    assert_eq!(c.slept, [20], "after one back-off");
}

#[test]
fn a_refused_topic_read_still_stops_the_control_log_read() {
    // Only the group code is the client's background noise; the same case with the topic's
    // code is a real refusal.
    let (cluster, mut policy) = setup();
    cluster
        .borrow_mut()
        .push(CONTROL, 0, Some(b"a"), Some(b"1"));
    let mut topic_refusal = group_refusal();
    topic_refusal.code = 29;
    cluster.borrow_mut().script = vec![("poll", 1, topic_refusal)];
    let error = policy.read_control_log(CONTROL).unwrap_err();
    assert!(
        matches!(error, CleanupError::Kafka(ref k) if !k.retriable && k.cause.as_ref().is_some_and(|c| c.code == 29)),
        "{error:?}"
    );
}

#[test]
fn a_control_record_that_is_not_utf8_is_corruption() {
    let (cluster, mut policy) = setup();
    cluster
        .borrow_mut()
        .push(CONTROL, 0, Some(b"a"), Some(b"\xff\xfe"));
    let error = policy.read_control_log(CONTROL).unwrap_err();
    assert!(
        matches!(&error, CleanupError::ControlTopicCorrupt(m) if m.contains("offset 0") && m.contains("UTF-8")),
        "{error:?}"
    );
}

#[test]
fn a_missing_offsets_answer_for_the_control_partition_is_refused_not_read_as_empty() {
    let (cluster, mut policy) = setup();
    cluster
        .borrow_mut()
        .push(CONTROL, 0, Some(b"a"), Some(b"1"));
    cluster.borrow_mut().drop_partition_zero = true;
    let error = policy.read_control_log(CONTROL).unwrap_err();
    assert!(
        matches!(&error, CleanupError::Kafka(k) if k.message.contains("partition 0")),
        "{error:?}"
    );
}

#[test]
fn a_topic_created_concurrently_is_waited_for_like_one_this_run_created() {
    for exists in [false, true] {
        let (cluster, mut policy) = setup();
        if exists {
            cluster.borrow_mut().topic("new", &[0]);
        }
        // Metadata does not show the topic for the next three describes.
        cluster.borrow_mut().hidden.insert("new".into(), 3);
        let created = policy.request_topic("new", 1, 1, &[]).unwrap();
        assert_eq!(created, !exists);
        let described = policy.describe_topics(&["new"]).unwrap();
        assert!(described[0].is_some(), "exists={exists}");
        assert_eq!(cluster.borrow().count("describe"), 4);
        // A later describe answered by a lagging broker is asked again, not reported missing.
        cluster.borrow_mut().hidden.insert("new".into(), 2);
        let described = policy.describe_topics(&["new"]).unwrap();
        assert!(described[0].is_some(), "exists={exists}");
    }
}

#[test]
fn a_topic_known_to_exist_whose_partitions_a_broker_does_not_know_yet_is_waited_for() {
    // Issue 34 item 4: two first applies on three brokers. The other apply created the control
    // topic (creation answers "already exists") or this one did; the broker that answers the
    // next describe knows the name but not the partition yet, and librdkafka's ListOffsets says
    // UNKNOWN_TOPIC_OR_PARTITION. That is propagation, not absence: asked again.
    for exists in [false, true] {
        let (cluster, mut policy) = setup();
        if exists {
            cluster.borrow_mut().topic("new", &[0]);
        }
        assert_eq!(policy.request_topic("new", 1, 1, &[]).unwrap(), !exists);
        cluster
            .borrow_mut()
            .unknown_partitions
            .insert("new".into(), 3);
        assert!(policy.read_control_log("new").unwrap().is_empty());
        assert_eq!(cluster.borrow().count("describe"), 4, "exists={exists}");
    }
    // A topic this run neither created nor found by creating it: the same answer is final.
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().topic("other", &[0]);
    cluster
        .borrow_mut()
        .unknown_partitions
        .insert("other".into(), 3);
    let error = policy.read_control_log("other").unwrap_err();
    assert!(error.to_string().contains("(unknown-topic)"), "{error}");
    assert_eq!(cluster.borrow().count("describe"), 1);
}

#[test]
fn a_requested_topic_that_never_appears_is_answered_missing_at_the_deadline() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().hidden.insert("new".into(), u32::MAX);
    assert!(policy.request_topic("new", 1, 1, &[]).unwrap());
    let described = policy.describe_topics(&["new"]).unwrap();
    assert_eq!(described, [None]);
    let now = cluster.borrow().now;
    assert!(
        (1_000..1_600).contains(&now),
        "asked again until the deadline: {now}"
    );
}

#[test]
fn a_committed_append_returns_only_once_it_is_stable() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().stable_lag = 3;
    policy.fence_control(CONTROL).unwrap();
    let offset = policy.append_control(CONTROL, "k", "v", true).unwrap();
    assert_eq!(offset, 0);
    let c = cluster.borrow();
    assert_eq!(c.stable_lag, 0, "waited through every lagging answer");
    assert_eq!(c.count("list_offsets"), 4);
    // Markers land within a millisecond or two: the waits start at 1 ms and double.
    assert_eq!(c.slept, [1, 2, 4]);
}

#[test]
fn a_fenced_writer_refuses_commits_but_still_writes_records_that_need_no_fence() {
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    // Another host fences this run's writer.
    let mut other = Policy::new(FakeCaps(cluster.clone()));
    other.fence_control(CONTROL).unwrap();
    let refused = policy.append_control(CONTROL, "k", "COMMITTED", true);
    assert!(
        matches!(refused, Err(AppendError::Fenced(_))),
        "{refused:?}"
    );
    let offset = policy
        .append_control(CONTROL, "k", "APPLIED", false)
        .unwrap();
    assert_eq!(offset, 0);
    let opened = cluster.borrow().opened.clone();
    assert_eq!(
        opened.last(),
        Some(&None),
        "an idempotent writer wrote it: {opened:?}"
    );
}

#[test]
fn a_record_that_needs_no_fence_survives_any_failure_of_the_transaction() {
    // The broker answered the commit of the APPLIED record's transaction with an unknown error
    // (seen when a concurrent apply's fencing raced the commit): the idempotent writer writes
    // it, and later records do not use the failed transactional writer again.
    for kind in [
        ErrorKind::Other,
        ErrorKind::Timeout,
        ErrorKind::Authorization,
    ] {
        let (cluster, mut policy) = setup();
        policy.fence_control(CONTROL).unwrap();
        cluster.borrow_mut().script = vec![("append", 1, error(kind))];
        let offset = policy
            .append_control(CONTROL, "k", "APPLIED", false)
            .unwrap();
        assert_eq!(offset, 0, "{kind:?}");
        let opened = cluster.borrow().opened.clone();
        assert_eq!(opened.last(), Some(&None), "{kind:?}: {opened:?}");
        let again = policy.append_control(CONTROL, "k2", "COMMITTED", true);
        assert!(
            matches!(again, Err(AppendError::Fenced(_))),
            "{kind:?}: a commit needs a new fenced writer: {again:?}"
        );
    }
    // A record that needs the fence is not written any other way: the failure is returned.
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    cluster.borrow_mut().script = vec![("append", 1, error(ErrorKind::Other))];
    let failed = policy.append_control(CONTROL, "k", "COMMITTED", true);
    assert!(
        matches!(&failed, Err(AppendError::Failed(k)) if k.retriable),
        "{failed:?}"
    );
    assert_eq!(cluster.borrow().count("append"), 1);
}

#[test]
fn every_record_of_one_apply_goes_through_the_fenced_writer() {
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    policy
        .append_control(CONTROL, "k", "COMMITTED", true)
        .unwrap();
    policy
        .append_control(CONTROL, "k", "APPLIED", false)
        .unwrap();
    assert_eq!(cluster.borrow().count("open_writer"), 1);
    assert_eq!(cluster.borrow().count("append"), 2);
}

#[test]
fn appending_a_commit_without_fencing_is_refused() {
    let (_cluster, mut policy) = setup();
    let refused = policy.append_control(CONTROL, "k", "v", true);
    assert!(
        matches!(refused, Err(AppendError::Fenced(_))),
        "{refused:?}"
    );
}

#[test]
fn an_applied_record_is_appended_again_by_a_new_writer_after_a_transient_failure() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().script = vec![
        ("append", 1, error(ErrorKind::Timeout)),
        ("append", 2, error(ErrorKind::NotLeader)),
    ];
    let offset = policy
        .append_control(CONTROL, "k", "APPLIED", false)
        .unwrap();
    let c = cluster.borrow();
    assert_eq!(c.count("append"), 3);
    assert_eq!(
        c.opened,
        [None, None, None],
        "each retry opens a new idempotent writer: the old one may still hold the dead leader"
    );
    assert_eq!(offset, 0, "only the successful append reached the log");
}

#[test]
fn an_idempotent_append_gives_up_on_a_permanent_error_at_once() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().script = vec![("append", 1, error(ErrorKind::Authorization))];
    let failed = policy.append_control(CONTROL, "k", "APPLIED", false);
    assert!(matches!(failed, Err(AppendError::Failed(_))), "{failed:?}");
    assert_eq!(cluster.borrow().count("append"), 1);
}

#[test]
fn a_partition_without_a_leader_of_a_topic_seen_to_exist_is_waited_for() {
    let (cluster, mut policy) = setup();
    // Never described: an unknown-topic answer is final.
    cluster.borrow_mut().script = vec![("list_offsets", 1, error(ErrorKind::UnknownTopic))];
    let failed = policy.list_offsets("data", &[0], OffsetSpec::Latest);
    assert!(failed.is_err());
    // Once a describe answered it, the same answer means "no leader yet": asked again.
    policy.describe_topics(&["data"]).unwrap();
    cluster.borrow_mut().script = vec![("list_offsets", 2, error(ErrorKind::UnknownTopic))];
    let offsets = policy
        .list_offsets("data", &[0], OffsetSpec::Latest)
        .unwrap();
    assert_eq!(offsets.get(0), Some(0));
    assert_eq!(cluster.borrow().count("list_offsets"), 3);
}

#[test]
fn a_created_topic_answered_without_its_configuration_is_asked_again() {
    let (cluster, mut policy) = setup();
    policy
        .request_topic(
            "new",
            1,
            1,
            &[action_state_kafka::kafka_types::ConfigEntry {
                name: "cleanup.policy".into(),
                value: Some("compact".into()),
            }],
        )
        .unwrap();
    cluster
        .borrow_mut()
        .topics
        .get_mut("new")
        .unwrap()
        .configs
        .insert("cleanup.policy".into(), "compact".into());
    // The broker that answers knows the topic but not yet its configuration, twice.
    cluster.borrow_mut().configless.insert("new".into(), 2);
    let before = cluster.borrow().count("describe");
    let states = policy
        .inspect_topics(&["new"], &["cleanup.policy"])
        .unwrap();
    let state = states[0].as_ref().unwrap();
    assert_eq!(state.configs[0].value.as_deref(), Some("compact"));
    assert_eq!(cluster.borrow().count("describe") - before, 3);
}

#[test]
fn an_applied_record_whose_transaction_timed_out_is_written_by_the_idempotent_writer() {
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    cluster.borrow_mut().script = vec![("append", 1, error(ErrorKind::Timeout))];
    policy
        .append_control(CONTROL, "k", "APPLIED", false)
        .unwrap();
    let c = cluster.borrow();
    assert_eq!(c.count("append"), 2);
    assert_eq!(
        c.opened.last(),
        Some(&None),
        "the second append went through an idempotent writer: {:?}",
        c.opened
    );
}

#[test]
fn a_commit_whose_transaction_timed_out_is_not_written_again_by_the_policy() {
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    cluster.borrow_mut().script = vec![("append", 1, error(ErrorKind::Timeout))];
    let failed = policy.append_control(CONTROL, "k", "COMMITTED", true);
    assert!(matches!(failed, Err(AppendError::Failed(_))), "{failed:?}");
    // Settling it (fence again, read, decide) is the apply protocol's job.
    assert_eq!(cluster.borrow().count("append"), 1);
}

/// The data topic of an apply over the capabilities: partitions 0 and 1, cleaned up to 5 by an
/// earlier plan (so a delete at the beginnings is not empty), 100 records each.
fn cleaned_data_topic() -> (Shared, Policy<FakeCaps>) {
    let cluster = Cluster::new();
    {
        let mut c = cluster.borrow_mut();
        c.topic("data", &[0, 1]);
        let data = c.topics.get_mut("data").unwrap();
        data.beginnings = [(0, 5), (1, 5)].into_iter().collect();
        data.ends = [(0, 100), (1, 100)].into_iter().collect();
    }
    let policy = Policy::new(FakeCaps(cluster.clone()));
    (cluster, policy)
}

fn apply_plan(policy: &mut Policy<FakeCaps>) -> Result<crate::apply::ApplyReport, CleanupError> {
    let plan = action_state_format::plan::Plan::new(
        "C1",
        "data",
        "id-data",
        [(0, 10), (1, 20)].into_iter().collect(),
    )
    .unwrap();
    let options = crate::apply::ApplyOptions {
        control_topic: CONTROL.into(),
        replication_factor: Some(1),
        dry_run: false,
        start_new_history: true,
    };
    crate::apply::apply(policy, &mut crate::apply::Silent, &plan, &options)
}

#[test]
fn a_delete_retried_after_the_topic_was_recreated_never_reaches_the_new_topic() {
    // DeleteRecords names its topic only by name. The topic is deleted and recreated while a
    // delete is in flight, which answers unknown-topic: the retry must confirm the plan's topic
    // ID first and stop with topic-changed, leaving the new topic whole. Call 1 is the
    // permission probe before COMMITTED, call 2 the real delete after it.
    for (call, committed) in [(1, false), (2, true)] {
        let (cluster, mut policy) = cleaned_data_topic();
        cluster.borrow_mut().recreate = Some(("delete_records", call, "data".into()));
        let error = apply_plan(&mut policy).unwrap_err();
        assert!(
            matches!(error, CleanupError::TopicChanged(_)),
            "call {call}: {error}"
        );
        let c = cluster.borrow();
        let data = &c.topics["data"];
        assert_eq!(data.topic_id, "id-data-recreated", "call {call}");
        assert_eq!(
            data.beginnings.to_string(),
            "{0=0, 1=0}",
            "call {call}: the new topic lost records"
        );
        assert_eq!(c.count("delete_records"), call, "call {call}: sent again");
        let log = c
            .logs
            .get(&(CONTROL.to_owned(), 0))
            .cloned()
            .unwrap_or_default();
        let commits = log
            .iter()
            .filter(|r| r.value.as_deref().is_some_and(|v| v.contains("COMMITTED")))
            .count();
        assert_eq!(commits, usize::from(committed), "call {call}");
    }
}

#[test]
fn every_delete_attempt_is_preceded_by_a_confirmation_of_the_topic_id() {
    // Whatever error made the attempt fail (here a timeout and a not-leader answer), the next
    // one is sent only after a describe confirmed the plan's identity again.
    let (cluster, mut policy) = cleaned_data_topic();
    cluster.borrow_mut().script = vec![
        ("delete_records", 2, error(ErrorKind::Timeout)),
        ("delete_records", 3, error(ErrorKind::NotLeader)),
    ];
    apply_plan(&mut policy).unwrap();
    let c = cluster.borrow();
    assert_eq!(c.count("delete_records"), 4);
    assert_eq!(c.topics["data"].beginnings.to_string(), "{0=10, 1=20}");
}

#[test]
fn an_applied_record_written_after_a_failed_transaction_drops_that_writer_and_is_waited_for() {
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    {
        let mut c = cluster.borrow_mut();
        c.script = vec![("append", 1, error(ErrorKind::Other))];
        c.lag_idempotent = true;
        c.stable_lag = 2;
    }
    let offset = policy
        .append_control(CONTROL, "k", "APPLIED", false)
        .unwrap();
    let c = cluster.borrow();
    assert_eq!(
        c.dropped.first(),
        Some(&Some(transactional_id(CONTROL))),
        "the failed transactional writer is dropped before the idempotent one writes: {:?}",
        c.dropped
    );
    assert_eq!(c.opened.last(), Some(&None));
    assert_eq!(c.stable_lag, 0, "the idempotent record was waited for");
    assert!(
        c.topics[CONTROL]
            .ends
            .get(0)
            .is_some_and(|end| end > offset),
        "visible once apply goes on"
    );
}

#[test]
fn a_repeated_group_refusal_makes_the_control_read_wait_and_end_at_its_deadline() {
    let (cluster, mut policy) = setup();
    {
        let mut c = cluster.borrow_mut();
        c.push(CONTROL, 0, Some(b"a"), Some(b"1"));
        c.always = Some(("poll", group_refusal()));
        // A busy loop would poll thousands of times within the fake clock's first millisecond.
        c.call_limit = Some(("poll", 200));
    }
    let error = policy.read_control_log(CONTROL).unwrap_err();
    assert!(
        matches!(&error, CleanupError::Kafka(k) if k.message.contains("timed out")),
        "{error:?}"
    );
    let c = cluster.borrow();
    assert!(c.now >= 1_000, "the deadline passed by waiting: {}", c.now);
    assert!(c.count("poll") < 50, "{} polls", c.count("poll"));
}

#[test]
fn a_restore_whose_offsets_were_read_from_a_recreated_topic_hands_over_no_record() {
    // The topic is recreated between the restore's describe answering its metadata and its
    // offsets: the replay range would belong to the new topic under the old ID, so the
    // identity is confirmed after the offsets are read, before any record is handed over.
    let (cluster, mut policy) = cleaned_data_topic();
    let policy_none = crate::recovery::RecoveryPolicy {
        topic: None,
        control_topic: None,
        tombstones_enabled: false,
    };
    let mut session =
        crate::replay::RecoverySession::start(&mut policy, "data", policy_none).unwrap();
    // Describe 1 started the session; 2 is the restore's, with the ranges.
    cluster.borrow_mut().recreate_before_offsets = Some((2, "data".into()));
    cluster
        .borrow_mut()
        .push_to("data", 0, 50, Some(b"k"), Some(b"v"));
    let marker = action_state_format::marker::Marker::Versioned(
        action_state_format::marker::VersionedMarker {
            topic: "data".into(),
            topic_id: "id-data".into(),
            offsets: [(0, 50), (1, 50)].into_iter().collect(),
        },
    );
    let options = crate::replay::ReplayOptions {
        poll_timeout_ms: 100,
        stall_timeout_ms: 1_000,
    };
    let error = session
        .restore(&mut policy, &[marker], options)
        .unwrap_err();
    assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
    assert!(
        cluster.borrow().assignments.is_empty(),
        "nothing was assigned"
    );
    assert!(session.next_batch(&mut policy, 10).is_err());
}

fn cluster_answer(
    brokers: &[u32],
    default: Option<&str>,
) -> action_state_kafka::kafka_types::ClusterDescription {
    action_state_kafka::kafka_types::ClusterDescription {
        brokers: brokers.to_vec(),
        configs: vec![action_state_kafka::kafka_types::ConfigEntry {
            name: "default.replication.factor".into(),
            value: default.map(Into::into),
        }],
    }
}

#[test]
fn the_clusters_description_is_retried_while_transient_and_checked_for_its_shape() {
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().cluster = cluster_answer(&[3, 1, 2, 1], Some("3"));
    cluster.borrow_mut().script = vec![("describe_cluster", 1, error(ErrorKind::Timeout))];
    let described = policy
        .describe_cluster(&["default.replication.factor"])
        .unwrap();
    assert_eq!(
        described.brokers,
        [1, 2, 3],
        "ascending, without duplicates"
    );
    assert_eq!(described.configs[0].value.as_deref(), Some("3"));
    assert_eq!(cluster.borrow().count("describe_cluster"), 2);

    // Refused at once, with its cause.
    cluster.borrow_mut().script = vec![("describe_cluster", 3, error(ErrorKind::Authorization))];
    let refused = policy.describe_cluster(&["x"]).unwrap_err();
    assert!(!refused.retriable);
    assert_eq!(
        refused.cause.map(|c| c.kind),
        Some(ErrorKind::Authorization)
    );
    assert!(
        refused.message.starts_with("describing the cluster: "),
        "{}",
        refused.message
    );

    // An answer that breaks the contract: no broker, or an entry missing.
    cluster.borrow_mut().cluster = cluster_answer(&[], Some("3"));
    let empty = policy
        .describe_cluster(&["default.replication.factor"])
        .unwrap_err();
    assert!(
        empty.message.contains("lists no broker"),
        "{}",
        empty.message
    );
    cluster.borrow_mut().cluster = cluster_answer(&[1], Some("3"));
    let short = policy
        .describe_cluster(&["default.replication.factor", "num.partitions"])
        .unwrap_err();
    assert!(
        short
            .message
            .contains("1 broker configuration entries for 2 names"),
        "{}",
        short.message
    );
}

#[test]
fn the_replica_count_of_a_topic_reaches_its_inspection() {
    let (cluster, mut policy) = setup();
    if let Some(topic) = cluster.borrow_mut().topics.get_mut("data") {
        topic.replication_factor = 3;
    }
    let states = policy
        .inspect_topics(&["data", CONTROL, "missing"], &["cleanup.policy"])
        .unwrap();
    let factors: Vec<Option<u16>> = states
        .iter()
        .map(|s| s.as_ref().map(|s| s.replication_factor))
        .collect();
    assert_eq!(factors, [Some(3), Some(1), None]);
}

/// A topic of `n` partitions, and the identity a delete of it confirms.
fn wide_topic(cluster: &Shared, n: u32) -> action_state_kafka::kafka_types::TopicDescription {
    let partitions: Vec<u32> = (0..n).collect();
    cluster.borrow_mut().topic("wide", &partitions);
    action_state_kafka::kafka_types::TopicDescription {
        topic: "wide".into(),
        topic_id: "id-wide".into(),
        partitions,
    }
}

#[test]
fn a_delete_on_many_partitions_is_allowed_more_than_the_operation_timeout() {
    // Kafka answers a DeleteRecords once every replica moved its log start: at thousands of
    // partitions a request can outlast a third of the timeout. 2,000 partitions add 10 s to the
    // 1 s operation timeout; eight timed-out attempts reach past 2 s and the ninth succeeds.
    let (cluster, mut policy) = setup();
    let wide = wide_topic(&cluster, 2_000);
    cluster.borrow_mut().script = (1..=8)
        .map(|call| ("delete_records", call, error(ErrorKind::Timeout)))
        .collect();
    let before: PartitionOffsets = wide.partitions.iter().map(|p| (*p, 7)).collect();
    let after = policy
        .delete_described(&wide, &[], false, &mut |_| Ok(before.clone()))
        .unwrap();
    assert_eq!(after, before);
    let c = cluster.borrow();
    assert_eq!(c.count("delete_records"), 9);
    assert!(c.now > 2_000, "past the plain timeout: {}", c.now);
    assert!(
        c.retried
            .iter()
            .any(|(m, _, _)| m.contains("on 2000 partitions")),
        "the retries are reported as the delete they are: {:?}",
        c.retried
    );
}

#[test]
fn a_delete_out_of_time_names_the_partitions_still_pending_and_the_timeout() {
    let (cluster, mut policy) = setup();
    let wide = wide_topic(&cluster, 30);
    cluster.borrow_mut().always = Some(("delete_records", error(ErrorKind::Timeout)));
    let before: PartitionOffsets = wide.partitions.iter().map(|p| (*p, 10)).collect();
    let failure = policy
        .delete_described(&wide, &[], false, &mut |_| Ok(before.clone()))
        .unwrap_err();
    let CleanupError::Kafka(failure) = failure else {
        panic!("not a Kafka failure: {failure}");
    };
    assert_eq!(failure.operation, "delete-records");
    assert!(failure.retriable);
    let message = failure.message;
    for part in [
        "deleting records of wide on 30 partitions: TIMEOUT: simulated timeout (timeout)",
        "the step was allowed 1.1 s (the operation timeout plus 5 ms for each of its 30 partitions)",
        "30 of 30 partitions still begin below their target (wide-0 at 0, target 10; wide-1 at 0, target 10; wide-2 at 0, target 10; wide-3 at 0, target 10; wide-4 at 0, target 10 and 25 more)",
        "a delete this wide may need a longer operation timeout (CLI: --timeout)",
    ] {
        assert!(message.contains(part), "{part:?} missing from {message}");
    }
    let now = cluster.borrow().now;
    assert!(
        (1_150..1_800).contains(&now),
        "gave up at its deadline: {now}"
    );
}

#[test]
fn a_wide_append_is_allowed_more_time_to_become_visible() {
    // The control record of a 10,000-partition plan is about 120 KiB: its append and the wait
    // until readers see it get 50 ms per KiB beyond the operation timeout.
    let (cluster, mut policy) = setup();
    policy.fence_control(CONTROL).unwrap();
    {
        let mut c = cluster.borrow_mut();
        // Ten lagging answers: the waits between them (1 + 2 + … + 512 ms) pass 1 s.
        c.stable_lag = 10;
        c.lagging_end = Some(0);
    }
    let value = "x".repeat(40 * 1024);
    policy.append_control(CONTROL, "k", &value, true).unwrap();
    let now = cluster.borrow().now;
    assert!(now > 1_000, "waited past the plain timeout: {now}");
}

#[test]
fn a_requested_topic_is_not_waited_for_until_it_is_asked_about() {
    // Apply fences its new control topic's writer while the topic propagates: the request
    // returns at once, and the next describe waits for it instead of taking it for missing.
    let (cluster, mut policy) = setup();
    cluster.borrow_mut().hidden.insert("new".into(), 3);
    assert!(policy.request_topic("new", 1, 1, &[]).unwrap());
    assert_eq!(cluster.borrow().count("describe"), 0);
    policy.fence_control("new").unwrap();
    let described = policy.describe_topics(&["new"]).unwrap();
    assert!(described[0].is_some());
    assert_eq!(cluster.borrow().count("describe"), 4);
}

/// `delete_described`'s caller decides on the description the request follows; a topic deleted
/// or recreated since it was planned must come back as `topic-changed`, whatever that decision
/// would have said about the other topic's offsets (the permission probe would name an
/// unavailable offset, which sends an operator to the wrong cause).
#[test]
fn a_delete_confirms_the_topic_identity_before_the_caller_decides() {
    let expected = action_state_kafka::kafka_types::TopicDescription {
        topic: "data".into(),
        topic_id: TOPIC_ID.into(),
        partitions: vec![0, 1],
    };
    let recreated = |cluster: &Shared| {
        let mut c = cluster.borrow_mut();
        c.topics.remove("data");
        c.topic("data", &[0, 1]);
        c.topics.get_mut("data").unwrap().topic_id = RECREATED_ID.into();
    };
    let deleted = |cluster: &Shared| {
        cluster.borrow_mut().topics.remove("data");
    };
    for (change, found) in [
        (
            &recreated as &dyn Fn(&Shared),
            format!("but found {RECREATED_ID}"),
        ),
        (&deleted, "does not exist".to_owned()),
    ] {
        let (cluster, mut policy) = setup();
        cluster
            .borrow_mut()
            .topics
            .get_mut("data")
            .unwrap()
            .topic_id = TOPIC_ID.into();
        change(&cluster);
        let mut decisions = 0;
        let error = policy
            .delete_described(&expected, &[], true, &mut |_| {
                decisions += 1;
                // What the permission probe answers for the other topic's offsets.
                Err(CleanupError::OffsetsUnavailable(RangeViolation {
                    topic: "data".into(),
                    partition: 0,
                    requested: 100,
                    beginning: Some(0),
                    end: Some(0),
                }))
            })
            .unwrap_err();
        assert!(matches!(error, CleanupError::TopicChanged(_)), "{error}");
        assert!(error.to_string().contains(&found), "{error}");
        assert_eq!(
            decisions, 0,
            "decided on a topic that is not the one expected"
        );
        assert_eq!(cluster.borrow().count("delete_records"), 0);
    }
}
