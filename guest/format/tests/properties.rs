//! Property tests of the formats (SPEC §2–§3): plan render → parse identity, plan IDs that
//! change with every field, control-record round trips and plan computation as the
//! per-partition minimum. proptest's default of 256 cases per property keeps `cargo test` fast.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use std::collections::{BTreeMap, BTreeSet};

use action_state_format::offsets::{MAX_OFFSET, MAX_PARTITION};
use action_state_format::plan::ZERO_TOPIC_ID;
use action_state_format::{
    ControlRecord, Marker, PartitionOffsets, Plan, Status, VersionedMarker, compute_plan_id,
    parse_markers, plan_from_markers,
};
use proptest::collection::{btree_map, btree_set, vec};
use proptest::prelude::*;
use proptest::sample::Index;

/// Characters a text field may hold: anything but a control character, with the ones that
/// need care in JSON or in the ID encoding (quote, backslash, '=', non-BMP, separators,
/// non-breaking and zero-width spaces) made likely.
fn text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => any::<char>().prop_filter("no control characters", |c| !c.is_control()),
        1 => proptest::sample::select(vec![
            '"', '\\', '/', '=', ' ', 'é', 'チ', '😀', '\u{2028}', '\u{2029}', '\u{a0}',
            '\u{feff}', '\u{200b}', '\u{3000}', '\u{fffd}', '\u{10ffff}',
        ]),
        4 => proptest::char::range('!', '~'),
    ]
}

/// A valid text field: 1–40 characters without control characters, not blank.
fn text() -> impl Strategy<Value = String> {
    vec(text_char(), 1..40)
        .prop_map(String::from_iter)
        .prop_filter("not blank", |s| !s.trim().is_empty())
}

fn topic_id() -> impl Strategy<Value = String> {
    text().prop_filter("not the zero topic ID", |s| s != ZERO_TOPIC_ID)
}

fn partition() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..512, 0..=MAX_PARTITION, Just(MAX_PARTITION)]
}

fn offset() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..1000, 0..=MAX_OFFSET, Just(MAX_OFFSET)]
}

fn offsets(size: std::ops::Range<usize>) -> impl Strategy<Value = PartitionOffsets> {
    btree_map(partition(), offset(), size).prop_map(PartitionOffsets)
}

/// A valid plan with 1..300 partitions.
fn plan() -> impl Strategy<Value = Plan> {
    (text(), text(), topic_id(), offsets(1..300)).prop_map(|(source, topic, id, offsets)| {
        Plan::new(&source, &topic, &id, offsets).expect("generated plans are valid")
    })
}

fn status() -> impl Strategy<Value = Status> {
    prop_oneof![Just(Status::Committed), Just(Status::Applied)]
}

/// One change of one field of a plan.
#[derive(Debug, Clone)]
enum Change {
    Source(String),
    Topic(String),
    TopicId(String),
    Offset(Index, u64),
    AddPartition(u32, u64),
    RemovePartition(Index),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        text().prop_map(Change::Source),
        text().prop_map(Change::Topic),
        topic_id().prop_map(Change::TopicId),
        (any::<Index>(), offset()).prop_map(|(i, o)| Change::Offset(i, o)),
        (partition(), offset()).prop_map(|(p, o)| Change::AddPartition(p, o)),
        any::<Index>().prop_map(Change::RemovePartition),
    ]
}

/// The contents of `plan` with `change` applied: (source, topic, topic ID, offsets).
fn changed(plan: &Plan, change: &Change) -> (String, String, String, PartitionOffsets) {
    let (mut source, mut topic, mut topic_id, mut offsets) = (
        plan.source_recovery_point.clone(),
        plan.topic.clone(),
        plan.topic_id.clone(),
        plan.offsets.clone(),
    );
    let partitions = plan.offsets.partitions();
    match change {
        Change::Source(s) => source = s.clone(),
        Change::Topic(t) => topic = t.clone(),
        Change::TopicId(i) => topic_id = i.clone(),
        Change::Offset(index, offset) => {
            offsets.insert(*index.get(&partitions), *offset);
        }
        Change::AddPartition(partition, offset) => {
            offsets.insert(*partition, *offset);
        }
        Change::RemovePartition(index) => {
            offsets.0.remove(index.get(&partitions));
        }
    }
    (source, topic, topic_id, offsets)
}

proptest! {
    #[test]
    fn plan_render_parse_is_the_identity(plan in plan()) {
        prop_assert_eq!(
            &plan.plan_id,
            &compute_plan_id(&plan.source_recovery_point, &plan.topic, &plan.topic_id, &plan.offsets)
        );
        let pretty = plan.render_pretty();
        prop_assert!(pretty.ends_with("\n}\n"), "no closing brace and LF");
        let parsed = Plan::parse(&pretty).unwrap();
        prop_assert_eq!(&parsed.plan_id, &plan.plan_id);
        prop_assert_eq!(&parsed, &plan);
        prop_assert_eq!(parsed.render_pretty(), pretty);
        prop_assert_eq!(Plan::parse(&plan.render_compact()).unwrap(), plan);
    }

    #[test]
    fn every_single_field_change_changes_the_plan_id(plan in plan(), change in change()) {
        let (source, topic, topic_id, offsets) = changed(&plan, &change);
        let same = source == plan.source_recovery_point
            && topic == plan.topic
            && topic_id == plan.topic_id
            && offsets == plan.offsets;
        prop_assume!(!same, "the change happened to keep every field");
        let id = compute_plan_id(&source, &topic, &topic_id, &offsets);
        prop_assert_ne!(&id, &plan.plan_id, "{:?} kept the plan ID", change);
        // A plan file edited in that one field but keeping the old ID is refused.
        if let Ok(edited) = Plan::new(&source, &topic, &topic_id, offsets) {
            let forged = edited.render_pretty().replace(&edited.plan_id, &plan.plan_id);
            let error = Plan::parse(&forged).unwrap_err().to_string();
            prop_assert!(error.contains("plan ID does not match its contents"), "{}", error);
        }
    }

    #[test]
    fn control_record_compact_render_parse_is_the_identity(plan in plan(), status in status()) {
        let record = ControlRecord { status, plan };
        let text = record.render();
        let expected_start = format!("{{\"schemaVersion\":1,\"status\":\"{}\",\"plan\":{{", status.as_str());
        prop_assert!(text.starts_with(&expected_start));
        prop_assert!(!text.contains('\n'), "the compact form has a line break");
        prop_assert!(text.contains(&record.plan.render_compact()));
        let parsed = ControlRecord::parse_value(&text).unwrap();
        prop_assert_eq!(parsed.render(), text);
        prop_assert_eq!(parsed, record);
    }

    #[test]
    fn plan_from_markers_is_the_per_partition_minimum(
        (topic, topic_id, partitions, rows) in (
            text(),
            topic_id(),
            btree_set(partition(), 1..40),
            1usize..8,
        )
            .prop_flat_map(|(topic, id, partitions, markers)| {
                let rows = vec(vec(offset(), partitions.len()), markers);
                (Just(topic), Just(id), Just(partitions), rows)
            }),
        recovery_point in text(),
    ) {
        let partitions: Vec<u32> = partitions.into_iter().collect();
        let markers: Vec<Marker> = rows
            .iter()
            .map(|row| {
                let offsets = partitions.iter().copied().zip(row.iter().copied()).collect();
                Marker::Versioned(VersionedMarker::new(&topic, &topic_id, offsets).unwrap())
            })
            .collect();
        let mut minimum = BTreeMap::new();
        for (column, partition) in partitions.iter().enumerate() {
            let least = rows.iter().map(|row| row[column]).min().unwrap();
            minimum.insert(*partition, least);
        }
        let expected = Plan::new(&recovery_point, &topic, &topic_id, PartitionOffsets(minimum)).unwrap();
        prop_assert_eq!(&plan_from_markers(&recovery_point, &markers).unwrap(), &expected);

        // The same markers as texts, in reverse order and with a duplicate, plan the same.
        let mut texts: Vec<String> = markers.iter().rev().map(Marker::render).collect();
        texts.push(texts[0].clone());
        let parsed = parse_markers(&texts).unwrap();
        prop_assert_eq!(plan_from_markers(&recovery_point, &parsed).unwrap(), expected);
    }

    #[test]
    fn markers_with_different_partition_sets_are_refused(
        sets in vec(btree_set(0u32..5, 1..5), 1..6),
        offset in offset(),
    ) {
        let markers: Vec<Marker> = sets
            .iter()
            .map(|set| {
                let offsets = set.iter().map(|p| (*p, offset)).collect();
                Marker::Versioned(VersionedMarker::new("action-state", "topic-id", offsets).unwrap())
            })
            .collect();
        let result = plan_from_markers("rp", &markers);
        let first: &BTreeSet<u32> = &sets[0];
        if sets.iter().all(|set| set == first) {
            prop_assert_eq!(result.unwrap().offsets.partitions(), first.iter().copied().collect::<Vec<_>>());
        } else {
            let error = result.unwrap_err().to_string();
            prop_assert!(error.contains("different Kafka partition sets"), "{}", error);
        }
    }
}
