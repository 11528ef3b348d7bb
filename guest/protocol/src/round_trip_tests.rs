//! How many admin requests each protocol makes, counted at the capability boundary (the fake
//! cluster under the real policy): describes, offset listings and deletes. One `describe` with
//! offsets answers a topic's identity and ranges together, so a protocol that lists offsets
//! apart, or describes the same topic twice in a row, shows up here as a higher count.

use crate::apply::{ApplyOptions, ApplyOutcome, Silent, apply};
use crate::recovery::{RecoveryPolicy, check_recovery};
use crate::replay::{RecoverySession, ReplayOptions};
use action_state_format::marker::{Marker, VersionedMarker};
use action_state_format::plan::Plan;
use action_state_kafka::fake::{Cluster, FakeCaps, Shared};
use action_state_kafka::policy::Policy;

const DATA: &str = "data";
const CONTROL: &str = "data-cleanup";

/// A data topic of two partitions, 100 records each, whose first plan (10, 20) is applied: the
/// control topic exists and holds its COMMITTED and APPLIED records.
fn applied_once() -> (Shared, Policy<FakeCaps>) {
    let cluster = Cluster::new();
    {
        let mut c = cluster.borrow_mut();
        c.topic(DATA, &[0, 1]);
        let data = c.topics.get_mut(DATA).unwrap();
        data.ends = [(0, 100), (1, 100)].into_iter().collect();
    }
    let mut policy = Policy::new(FakeCaps(cluster.clone()));
    let options = ApplyOptions {
        start_new_history: false,
        ..options()
    };
    let first = apply(&mut policy, &mut Silent, &plan("C1", 10, 20), &options).unwrap();
    assert_eq!(first.outcome, ApplyOutcome::Applied);
    // Each operation below runs on a policy of its own, as each CLI call and session does.
    let policy = Policy::new(FakeCaps(cluster.clone()));
    cluster.borrow_mut().calls.clear();
    (cluster, policy)
}

fn plan(point: &str, p0: u64, p1: u64) -> Plan {
    Plan::new(
        point,
        DATA,
        "id-data",
        [(0, p0), (1, p1)].into_iter().collect(),
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

fn enforced() -> RecoveryPolicy {
    RecoveryPolicy {
        topic: Some(DATA.into()),
        control_topic: Some(CONTROL.into()),
        tombstones_enabled: false,
    }
}

fn marker(p0: u64, p1: u64) -> Marker {
    Marker::Versioned(VersionedMarker {
        topic: DATA.into(),
        topic_id: "id-data".into(),
        offsets: [(0, p0), (1, p1)].into_iter().collect(),
    })
}

/// (describe, list_offsets, delete_records) calls so far.
fn admin(cluster: &Shared) -> (u32, u32, u32) {
    let c = cluster.borrow();
    (
        c.count("describe"),
        c.count("list_offsets"),
        c.count("delete_records"),
    )
}

#[test]
fn a_fresh_apply_describes_once_per_check_and_lists_offsets_only_to_wait_for_its_records() {
    let (cluster, mut policy) = applied_once();
    let report = apply(&mut policy, &mut Silent, &plan("C2", 30, 40), &options()).unwrap();
    assert_eq!(report.outcome, ApplyOutcome::Applied);
    assert_eq!(report.beginnings_after.to_string(), "{0=30, 1=40}");
    // Describes: both topics before commit; the control topic's range after the fence; the
    // data topic with its ranges, which the permission probe follows; before commit; the one
    // the delete follows; after the delete. Offsets are listed only to see each appended
    // record stable (no second listing: the fake makes records stable at once).
    assert_eq!(admin(&cluster), (6, 2, 2));
}

#[test]
fn status_reads_each_topic_with_one_describe() {
    let (cluster, mut policy) = applied_once();
    let report = crate::status::status(&mut policy, CONTROL).unwrap();
    assert_eq!(report.live.len(), 2);
    assert_eq!(report.live[0].beginning, 10);
    assert_eq!(report.live[1].end, 100);
    // The control topic (identity, cleanup.policy, range), then the data topic (identity and
    // ranges).
    assert_eq!(admin(&cluster), (2, 0, 0));
}

#[test]
fn check_recovery_reads_both_topics_with_one_describe() {
    let (cluster, mut policy) = applied_once();
    let check = check_recovery(&mut policy, &[marker(10, 20)], &enforced()).unwrap();
    assert_eq!(check.ranges, [(0, 10, 10, 100), (1, 20, 20, 100)]);
    assert_eq!(admin(&cluster), (1, 0, 0));
}

#[test]
fn a_restore_reads_both_topics_with_one_describe_and_confirms_the_identity_after_it() {
    let (cluster, mut policy) = applied_once();
    let mut session = RecoverySession::start(&mut policy, DATA, enforced()).unwrap();
    assert_eq!(admin(&cluster), (1, 0, 0), "start fixes the identity");
    let options = ReplayOptions {
        poll_timeout_ms: 100,
        stall_timeout_ms: 1_000,
    };
    let check = session
        .restore(&mut policy, &[marker(10, 20)], options)
        .unwrap();
    assert_eq!(check.ranges, [(0, 10, 10, 100), (1, 20, 20, 100)]);
    // Both topics with their ranges, then the data topic's identity once more.
    assert_eq!(admin(&cluster), (3, 0, 0));
    // The replay consumer, opened and assigned once.
    assert_eq!(
        cluster.borrow().count("open_consumer"),
        2,
        "control and data"
    );
    assert_eq!(cluster.borrow().count("assign"), 2, "control and data");
}

#[test]
fn a_live_checkpoint_marker_reads_identity_and_ends_with_one_describe() {
    let (cluster, mut policy) = applied_once();
    let mut session = RecoverySession::start(&mut policy, DATA, enforced()).unwrap();
    cluster.borrow_mut().calls.clear();
    let marker = session.snapshot_marker(&mut policy).unwrap();
    assert_eq!(marker.offsets.to_string(), "{0=100, 1=100}");
    assert_eq!(admin(&cluster), (1, 0, 0), "one describe with offsets");
}

#[test]
fn a_live_checkpoint_marker_is_refused_when_the_topic_was_recreated() {
    let (cluster, mut policy) = applied_once();
    let mut session = RecoverySession::start(&mut policy, DATA, enforced()).unwrap();
    cluster.borrow_mut().topics.get_mut(DATA).unwrap().topic_id = "id-new".into();
    let refused = session.snapshot_marker(&mut policy).unwrap_err();
    assert!(refused.to_string().contains("id-new"), "{refused}");
}
