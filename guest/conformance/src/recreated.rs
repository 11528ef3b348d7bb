//! Target `recreated-during-delete`: a DeleteRecords is sent once, whatever comes back.
//!
//! DeleteRecords names a topic only by name. A host, or a client library under it, that looks a
//! partition's leader up again after UNKNOWN_TOPIC_OR_PARTITION and resends the request deletes
//! from whatever topic bears the name by then: here, one the harness recreated with records. The
//! suite sends one deletion to a topic the harness just deleted and then watches the recreated
//! topic for as long as that call's requests could still be outstanding.

use crate::bindings::action_state::cleanup::types::PartitionOffset;
use crate::bindings::action_state::cleanup::{clock, kafka_admin};
use crate::{Checks, timed, within};

/// The harness recreates the topic with exactly this many records (wit/suite.wit).
const RECREATED_RECORDS: u64 = 10;
/// The deletion asks for everything below this offset of partition 0: a resent request that
/// reached the recreated topic leaves it beginning here.
const DELETE_BELOW: u64 = 5;
/// The harness waits 1.5 s between the deletion it saw and the recreation: an answer within a
/// second came before the topic was back.
const AT_ONCE_MS: u64 = 1_000;
/// How long the suite waits for the harness's deletion and recreation to show.
const HARNESS_STEP_MS: u64 = 30_000;

pub fn run(checks: &mut Checks, topic: Option<&str>) {
    let Some(topic) = topic else {
        checks.check(
            "the recreated-during-delete target names the harness's topic",
            false,
            || "inputs.existing-topic is none".into(),
        );
        return;
    };
    // The harness deletes the topic about 500 ms after `run` began: the suite may see it still
    // there first, or see it gone at once.
    let mut last = None;
    let gone = within(HARNESS_STEP_MS, || {
        match kafka_admin::describe(&[topic.to_owned()], &[], false) {
            Ok(answer) if answer.iter().all(Option::is_none) => Some(()),
            other => {
                last = Some(other);
                None
            }
        }
    });
    checks.check(
        "describe stops finding the topic the harness deleted",
        gone.is_some(),
        || format!("{topic} was still described after {HARNESS_STEP_MS} ms: last {last:?}"),
    );
    if gone.is_none() {
        return;
    }

    let started = clock::now_ms();
    let (ms, deleted) = timed(|| {
        kafka_admin::delete_records(
            topic,
            &[PartitionOffset {
                partition: 0,
                offset: DELETE_BELOW,
            }],
        )
    });
    checks.expect_error(
        "delete-records of a topic deleted a moment ago fails with unknown-topic",
        &deleted,
        &["unknown-topic"],
    );
    checks.check(
        "delete-records of a deleted topic answers at once, before the topic is recreated",
        ms < AT_ONCE_MS,
        || format!("took {ms} ms (the harness recreates the topic 1.5 s after deleting it)"),
    );

    let recreated = within(HARNESS_STEP_MS, || {
        partition_zero(topic).filter(|range| range.end >= RECREATED_RECORDS)
    });
    checks.check(
        "the harness recreated the topic with its records",
        recreated.is_some(),
        || format!("{topic} did not show {RECREATED_RECORDS} records within {HARNESS_STEP_MS} ms"),
    );
    if recreated.is_none() {
        return;
    }
    // A request still outstanding (a retry in the host or its client) ends by then.
    let quiet_until = started + u64::from(clock::operation_timeout_ms());
    let now = clock::now_ms();
    if now < quiet_until {
        clock::sleep_ms(u32::try_from(quiet_until - now).unwrap_or(u32::MAX));
    }
    let after = partition_zero(topic);
    checks.check(
        "the recreated topic keeps every record: nothing resent the deletion to it",
        matches!(&after, Some(range) if range.beginning == 0 && range.end == RECREATED_RECORDS),
        || match &after {
            Some(range) => format!(
                "partition 0 of the recreated {topic} spans {}..{} (expected 0..{RECREATED_RECORDS})",
                range.beginning, range.end
            ),
            None => format!("{topic} could not be described"),
        },
    );
}

/// Partition 0's readable range, when the topic exists and could be described.
fn partition_zero(topic: &str) -> Option<kafka_admin::PartitionRange> {
    kafka_admin::describe(&[topic.to_owned()], &[], true)
        .ok()?
        .into_iter()
        .next()
        .flatten()?
        .offsets
        .into_iter()
        .find(|range| range.partition == 0)
}
