//! The checks every fuzz input goes through, shared word for word by the cargo-fuzz targets
//! (`fuzz/fuzz_targets/*.rs`, nightly + libFuzzer) and by the stable regression test that
//! replays the committed corpus (`guest/format/tests/fuzz_corpus.rs`). Both include this file with
//! `#[path]`, so a check is written once. A check panics (assertion) when the core breaks one of
//! its promises; any input the core *refuses* with a typed error is a pass.
//!
//! Only `action_state_format` and `arbitrary` are used, so the including crate needs exactly these.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test oracle: a failed check is a crash the fuzzer reports"
)]

use std::collections::{BTreeMap, BTreeSet};

use action_state_format::decode;
use action_state_format::fields::write_offsets;
use action_state_format::json::{self, Value, write_string};
use action_state_format::plan::ZERO_TOPIC_ID;
use action_state_format::{
    CleanupError, ControlEntry, ControlHistory, ControlRecord, ListedPlan, Marker,
    PartitionOffsets, Plan, Status, VersionedMarker, compute_plan_id, parse_markers,
    plan_from_marker_files, plan_from_marker_texts, plan_from_markers, split_marker_file,
};
use arbitrary::Unstructured;

/// One check: panics when the core breaks a promise on this input.
pub type Check = fn(&[u8]);

/// The fuzz targets, by the name of their corpus folder (`fuzz/corpus/<name>/`, `fuzz/regressions/<name>/`).
pub const TARGETS: [(&str, Check); 6] = [
    ("plan", check_plan),
    ("marker", check_marker),
    ("control_record", check_control_record),
    ("control_log", check_control_log),
    ("marker_file", check_marker_file),
    ("snapshot", check_snapshot),
];

/// Hosts refuse non-UTF-8 files before the core sees them; the fuzzer's bytes are read lossily
/// so that mutations which break UTF-8 still exercise the parser.
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// The plan ID recomputed from a plan's contents.
fn recomputed_id(plan: &Plan) -> String {
    compute_plan_id(
        &plan.source_recovery_point,
        &plan.topic,
        &plan.topic_id,
        &plan.offsets,
    )
}

// ---------------------------------------------------------------------------------------------
// plan: `Plan::parse`, and for an accepted plan the canonical writers round-trip.

pub fn check_plan(data: &[u8]) {
    let text = text(data);
    let parsed = Plan::parse(&text);
    // The fast decoder never decides alone: `parse` answers exactly what the reference reader
    // (JSON tree, then fields) answers, refusals and their messages included ...
    let reference = Plan::parse_tree(&text);
    assert_eq!(
        parsed, reference,
        "Plan::parse and Plan::parse_tree disagree"
    );
    // The list form answers the same, values and refusals.
    assert_eq!(
        Plan::parse_listed(&text),
        parsed.clone().map(ListedPlan::from),
        "Plan::parse_listed and Plan::parse disagree"
    );
    // ... and it takes the fast path for every accepted plan without escapes.
    let fast = decode::plan(&text);
    if fast.is_some() || (reference.is_ok() && !text.contains('\\')) {
        assert_eq!(fast.as_ref(), reference.as_ref().ok(), "decode::plan");
    }
    let plan = match parsed {
        Ok(plan) => plan,
        Err(error) => {
            assert!(
                matches!(error, CleanupError::InvalidPlan(_)),
                "Plan::parse failed with a non-plan error: {error:?}"
            );
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    assert_eq!(
        plan.plan_id,
        recomputed_id(&plan),
        "accepted a plan whose ID is not its hash"
    );
    assert!(!plan.offsets.is_empty(), "accepted a plan without offsets");
    assert_ne!(plan.topic_id, ZERO_TOPIC_ID, "accepted the zero topic ID");

    let pretty = plan.render_pretty();
    let again = Plan::parse(&pretty).unwrap_or_else(|e| {
        panic!("the pretty form of an accepted plan is refused: {e}\n{pretty}")
    });
    assert_eq!(again, plan, "pretty form re-parses to another plan");
    assert_eq!(again.plan_id, plan.plan_id);
    assert_eq!(
        again.render_pretty(),
        pretty,
        "pretty form is not canonical"
    );

    let compact = plan.render_compact();
    assert_eq!(
        Plan::parse(&compact).as_ref(),
        Ok(&plan),
        "compact form: {compact}"
    );

    let rebuilt = Plan::new(
        &plan.source_recovery_point,
        &plan.topic,
        &plan.topic_id,
        plan.offsets.clone(),
    );
    assert_eq!(
        rebuilt.as_ref(),
        Ok(&plan),
        "Plan::new disagrees with Plan::parse"
    );
}

// ---------------------------------------------------------------------------------------------
// marker: `Marker::parse`, render → parse identity, and agreement with planning.

pub fn check_marker(data: &[u8]) {
    let text = text(data);
    let parsed = Marker::parse(&text);
    // As for plans: the same answer as the reference reader, and the fast path for every
    // accepted versioned marker without escapes.
    let reference = Marker::parse_tree(&text);
    assert_eq!(
        parsed, reference,
        "Marker::parse and Marker::parse_tree disagree"
    );
    let fast = decode::marker(&text);
    if fast.is_some() || (matches!(reference, Ok(Marker::Versioned(_))) && !text.contains('\\')) {
        assert_eq!(fast.as_ref(), reference.as_ref().ok(), "decode::marker");
    }
    // Planning straight from texts answers what parsing and then planning answers, alone, twice,
    // and next to the SPEC marker (same topic, other offsets: the minimum of two).
    const SPEC_MARKER: &str = r#"{"schemaVersion":1,"topic":"action-state","topicId":"topic-id","offsets":{"0":10,"1":20}}"#;
    for texts in [
        vec![text.as_str()],
        vec![text.as_str(), text.as_str()],
        vec![SPEC_MARKER, text.as_str()],
        vec![text.as_str(), SPEC_MARKER],
    ] {
        let reference = parse_markers(&texts).and_then(|m| plan_from_markers("rp", &m));
        assert_eq!(
            plan_from_marker_texts("rp", &texts),
            reference,
            "plan_from_marker_texts disagrees with parse_markers + plan_from_markers"
        );
    }
    let marker = match parsed {
        Ok(marker) => marker,
        Err(error) => {
            assert!(
                matches!(error, CleanupError::InvalidMarker(_)),
                "Marker::parse failed with a non-marker error: {error:?}"
            );
            assert!(!error.to_string().is_empty());
            return;
        }
    };
    assert!(
        !marker.offsets().is_empty(),
        "accepted a marker without offsets"
    );

    let rendered = marker.render();
    let again = Marker::parse(&rendered).unwrap_or_else(|e| {
        panic!("the rendering of an accepted marker is refused: {e}\n{rendered}")
    });
    assert_eq!(
        again, marker,
        "render → parse changed the marker: {rendered}"
    );
    assert_eq!(
        again.render(),
        rendered,
        "marker rendering is not canonical"
    );

    let planned = plan_from_markers("fuzz-recovery-point", &[marker.clone(), marker.clone()]);
    match &marker {
        Marker::Versioned(versioned) => {
            let rebuilt = VersionedMarker::new(
                &versioned.topic,
                &versioned.topic_id,
                versioned.offsets.clone(),
            );
            assert_eq!(
                rebuilt.as_ref(),
                Ok(versioned),
                "VersionedMarker::new disagrees with parse"
            );
            if versioned.topic_id == ZERO_TOPIC_ID {
                assert!(planned.is_err(), "planned from the zero topic ID");
            } else {
                let plan =
                    planned.unwrap_or_else(|e| panic!("a valid marker cannot be planned: {e}"));
                assert_eq!(plan.offsets, versioned.offsets);
                assert_eq!(plan.topic, versioned.topic);
                assert_eq!(plan.topic_id, versioned.topic_id);
            }
        }
        Marker::Legacy(_) => assert!(planned.is_err(), "planned from a legacy marker"),
    }
}

// ---------------------------------------------------------------------------------------------
// control_record: `ControlRecord::parse_value`, render → parse identity, and replay of one record.

pub fn check_control_record(data: &[u8]) {
    let text = text(data);
    let parsed = ControlRecord::parse_value(&text);
    // As for plans: the same answer as the reference reader, and the fast path for every
    // accepted record without escapes.
    let reference = ControlRecord::parse_value_tree(&text);
    assert_eq!(
        parsed, reference,
        "ControlRecord::parse_value and parse_value_tree disagree"
    );
    let fast = decode::control_record(&text);
    if fast.is_some() || (reference.is_ok() && !text.contains('\\')) {
        assert_eq!(
            fast.as_ref(),
            reference.as_ref().ok(),
            "decode::control_record"
        );
    }
    let record = match parsed {
        Ok(record) => record,
        Err(why) => {
            assert!(!why.is_empty());
            return;
        }
    };
    let id = record.plan.plan_id.clone();
    assert_eq!(
        id,
        recomputed_id(&record.plan),
        "accepted an embedded plan with a wrong ID"
    );

    let rendered = record.render();
    let again = ControlRecord::parse_value(&rendered).unwrap_or_else(|e| {
        panic!("the rendering of an accepted record is refused: {e}\n{rendered}")
    });
    assert_eq!(again, record);
    assert_eq!(
        again.render(),
        rendered,
        "control record rendering is not canonical"
    );
    assert!(rendered.contains(&record.plan.render_compact()));

    let entry = |key: &str| ControlEntry {
        offset: 7,
        key: Some(key.to_owned()),
        value: Some(text.clone()),
        timestamp: None,
    };
    let history = ControlHistory::replay(&[entry(&id), entry(&id)])
        .unwrap_or_else(|e| panic!("a valid record under its own key is refused: {e}"));
    assert_eq!(history.operations(), std::slice::from_ref(&record));
    assert_eq!(history.boundary(), record.plan.offsets);
    let wrong_key = ControlHistory::replay(&[entry(&id.to_uppercase())]);
    assert!(
        matches!(wrong_key, Err(CleanupError::ControlTopicCorrupt(_))),
        "a record under a key other than its plan ID was accepted"
    );
}

// ---------------------------------------------------------------------------------------------
// control_log: `ControlHistory::replay` over a structured log decoded from the bytes.

/// Most entries decoded from one input: enough for every status transition between a few plans.
pub const MAX_LOG_ENTRIES: usize = 64;

const SOURCES: [&str; 4] = [
    "checkpoint-42",
    "rp",
    "s3://checkpoints/savepoint-1",
    "チェックポイント 😀",
];
const TOPICS: [&str; 3] = ["action-state", "other-topic", "a\"b\\c"];
const TOPIC_IDS: [&str; 3] = [
    "topic-id",
    "AAAAAAAAAAAAAAAAAAAAAA",
    "Z2V0LXRvcGljLWlkLTAwMA",
];
const PARTITIONS: [u32; 8] = [0, 1, 2, 3, 9, 10, 100, 2_147_483_647];
const OFFSETS: [u64; 7] = [0, 10, 15, 20, 25, 150, 9_223_372_036_854_775_807];

/// Decodes fuzz bytes into control-topic entries (offsets 0, 1, 2, … in log order). The format
/// is simple enough that `fuzz/seeds.rs` writes it for the fixture logs. Each entry starts
/// with a tag byte; `tag % 4` selects:
///
/// * `0` **raw**: `field(key) field(value)` where `field` is a presence byte (`0` = none, so a
///   null key or a tombstone), then a little-endian `u16` length and that many bytes (UTF-8,
///   read lossily). Truncated input yields what is left.
/// * `1`, `2` **generated**: a status byte (even = COMMITTED), bytes choosing the source, topic
///   and topic ID from small pools, a count byte (1–4 partitions) and per partition a partition
///   byte and an offset byte (`OFFSETS[b % 8]`, or for 7 a `u64` of 8 bytes below 2^63), then a
///   mutation byte (`m % 16`: 0–7 none; 8 null key; 9 uppercase key; 10 the previous generated
///   entry's key; 11 tombstone; 12 lowercase/unknown status; 13 schema 2; 14 tampered offsets;
///   15 the record reordered with a pretty-printed plan). Small pools make the same plan recur,
///   so status transitions, regressions and several plans all occur.
/// * `3` **repeat**: an index byte picks an earlier entry; a flip byte (odd) swaps its status.
pub fn decode_control_log(data: &[u8]) -> Vec<ControlEntry> {
    let mut u = Unstructured::new(data);
    let mut entries: Vec<ControlEntry> = Vec::new();
    let mut last_generated_key: Option<String> = None;
    while !u.is_empty() && entries.len() < MAX_LOG_ENTRIES {
        let offset = entries.len() as u64;
        let (key, value) = match byte(&mut u) % 4 {
            0 => (field(&mut u), field(&mut u)),
            3 if !entries.is_empty() => {
                let index = usize::from(byte(&mut u)) % entries.len();
                let earlier = &entries[index];
                let flip = !byte(&mut u).is_multiple_of(2);
                let value = match (&earlier.value, flip) {
                    (Some(value), true) => Some(flip_status(value)),
                    (value, _) => value.clone(),
                };
                (earlier.key.clone(), value)
            }
            3 => continue,
            _ => {
                let (key, value) = generated(&mut u);
                let previous = last_generated_key.replace(key.clone());
                mutate(&mut u, key, value, previous.as_deref())
            }
        };
        entries.push(ControlEntry {
            offset,
            key,
            value,
            timestamp: None,
        });
    }
    entries
}

fn byte(u: &mut Unstructured<'_>) -> u8 {
    u.arbitrary::<u8>().unwrap_or(0)
}

fn field(u: &mut Unstructured<'_>) -> Option<String> {
    if byte(u) == 0 {
        return None;
    }
    let len = usize::from(u16::from_le_bytes([byte(u), byte(u)]));
    let bytes = u.bytes(len.min(u.len())).unwrap_or(&[]);
    Some(String::from_utf8_lossy(bytes).into_owned())
}

fn pick<T: Copy>(u: &mut Unstructured<'_>, pool: &[T]) -> T {
    pool[usize::from(byte(u)) % pool.len()]
}

/// A well-formed record (key = plan ID) from small pools; the zero topic ID makes a plan that
/// `Plan::new` refuses, which is then written by hand with its hash so replay must refuse it.
fn generated(u: &mut Unstructured<'_>) -> (String, String) {
    let status = if byte(u).is_multiple_of(2) {
        Status::Committed
    } else {
        Status::Applied
    };
    let source = pick(u, &SOURCES);
    let topic = pick(u, &TOPICS);
    let topic_id = pick(u, &TOPIC_IDS);
    let count = 1 + usize::from(byte(u) % 4);
    let mut offsets = PartitionOffsets::new();
    for _ in 0..count {
        let partition = pick(u, &PARTITIONS);
        let choice = usize::from(byte(u) % 8);
        let offset = match OFFSETS.get(choice) {
            Some(&offset) => offset,
            None => u64::from_le_bytes(std::array::from_fn(|_| byte(u))) >> 1,
        };
        offsets.insert(partition, offset);
    }
    match Plan::new(source, topic, topic_id, offsets.clone()) {
        Ok(plan) => {
            let key = plan.plan_id.clone();
            (key, ControlRecord { status, plan }.render())
        }
        Err(_) => {
            let id = compute_plan_id(source, topic, topic_id, &offsets);
            let mut value = format!(
                "{{\"schemaVersion\":1,\"status\":\"{}\",\"plan\":{{\"schemaVersion\":1,\"planId\":\"{id}\",\"sourceRecoveryPoint\":",
                status.as_str()
            );
            write_string(&mut value, source);
            value.push_str(",\"topic\":");
            write_string(&mut value, topic);
            value.push_str(",\"topicId\":");
            write_string(&mut value, topic_id);
            value.push_str(",\"offsets\":{");
            let pairs: Vec<String> = offsets
                .iter()
                .map(|(p, o)| format!("\"{p}\":{o}"))
                .collect();
            value.push_str(&pairs.join(","));
            value.push_str("}}}");
            (id, value)
        }
    }
}

fn mutate(
    u: &mut Unstructured<'_>,
    key: String,
    value: String,
    previous_key: Option<&str>,
) -> (Option<String>, Option<String>) {
    match byte(u) % 16 {
        8 => (None, Some(value)),
        9 => (Some(key.to_uppercase()), Some(value)),
        10 => (
            Some(previous_key.unwrap_or("not-a-plan-id").to_owned()),
            Some(value),
        ),
        11 => (Some(key), None),
        12 => {
            let status = if byte(u).is_multiple_of(2) {
                "\"committed\""
            } else {
                "\"DELETED\""
            };
            let value =
                value
                    .replacen("\"COMMITTED\"", status, 1)
                    .replacen("\"APPLIED\"", status, 1);
            (Some(key), Some(value))
        }
        13 => (
            Some(key),
            Some(value.replacen("{\"schemaVersion\":1", "{\"schemaVersion\":2", 1)),
        ),
        14 => (
            Some(key),
            Some(value.replacen("\"offsets\":{\"", "\"offsets\":{\"1", 1)),
        ),
        15 => {
            let value = match ControlRecord::parse_value(&value) {
                Ok(record) => format!(
                    "{{ \"plan\" : {}, \"status\" : \"{}\", \"schemaVersion\" : 1 }}",
                    record.plan.render_pretty(),
                    record.status.as_str()
                ),
                Err(_) => value,
            };
            (Some(key), Some(value))
        }
        _ => (Some(key), Some(value)),
    }
}

/// The same record with the other status (any other text is returned unchanged).
fn flip_status(value: &str) -> String {
    match ControlRecord::parse_value(value) {
        Ok(mut record) => {
            record.status = match record.status {
                Status::Committed => Status::Applied,
                Status::Applied => Status::Committed,
            };
            record.render()
        }
        Err(_) => value.to_owned(),
    }
}

pub fn check_control_log(data: &[u8]) {
    check_replay(&decode_control_log(data));
}

/// The replay invariants, for any log.
pub fn check_replay(entries: &[ControlEntry]) {
    let replayed = ControlHistory::replay(entries);
    assert_eq!(
        ControlHistory::replay(entries),
        replayed,
        "replaying the same log twice gave different results"
    );

    // Record by record: a refused record leaves the history exactly as it was (SPEC §7), and
    // replay stops at the first refused record with that record's error.
    let mut history = ControlHistory::default();
    let mut first_error: Option<(CleanupError, ControlHistory)> = None;
    for entry in entries {
        let before = history.clone();
        if let Err(error) = history.observe(entry) {
            assert_eq!(
                history, before,
                "a refused record changed the history: {error}"
            );
            assert!(
                matches!(error, CleanupError::ControlTopicCorrupt(_)),
                "replay failed with a non-corruption error: {error:?}"
            );
            let message = error.to_string();
            assert!(
                message.contains(&format!("at offset {} ", entry.offset)),
                "the error does not name the record's offset: {message}"
            );
            if first_error.is_none() {
                first_error = Some((error, before));
            }
        }
    }

    match (replayed, first_error) {
        (Ok(replayed), None) => {
            assert_eq!(replayed, history);
            check_history(&replayed, entries);
        }
        (Err(error), Some((first, prefix))) => {
            assert_eq!(
                error, first,
                "replay stopped with another error than observe"
            );
            // The history up to the refused record is itself a valid history of that prefix.
            let stopped_at = prefix_length(entries, &prefix);
            check_history(&prefix, &entries[..stopped_at]);
        }
        (Ok(_), Some((first, _))) => panic!("replay accepted a log that observe refused: {first}"),
        (Err(error), None) => panic!("replay refused a log that observe accepted: {error}"),
    }
}

/// How many leading entries replay to `prefix` (the entries before the first refused one).
fn prefix_length(entries: &[ControlEntry], prefix: &ControlHistory) -> usize {
    let mut history = ControlHistory::default();
    for (index, entry) in entries.iter().enumerate() {
        if history.observe(entry).is_err() {
            assert_eq!(&history, prefix);
            return index;
        }
    }
    entries.len()
}

/// Invariants of a history that replayed `entries` without error.
fn check_history(history: &ControlHistory, entries: &[ControlEntry]) {
    // Keys in first-seen order, with the status of their latest record.
    let mut first_seen: Vec<&str> = Vec::new();
    let mut latest: BTreeMap<&str, Status> = BTreeMap::new();
    for entry in entries {
        let key = entry.key.as_deref().expect("an accepted record has a key");
        let value = entry
            .value
            .as_deref()
            .expect("an accepted record is not a tombstone");
        let record = ControlRecord::parse_value(value).expect("an accepted record parses");
        assert_eq!(
            record.plan.plan_id, key,
            "accepted a record under another plan's key"
        );
        if latest.insert(key, record.status).is_none() {
            first_seen.push(key);
        }
    }

    let operations = history.operations();
    let ids: Vec<&str> = operations
        .iter()
        .map(|op| op.plan.plan_id.as_str())
        .collect();
    assert_eq!(
        ids, first_seen,
        "known plans are not the log's keys in first-seen order"
    );
    assert_eq!(history.is_empty(), entries.is_empty());
    let mut boundary: BTreeMap<u32, u64> = BTreeMap::new();
    for op in operations {
        let id = op.plan.plan_id.as_str();
        assert_eq!(
            id,
            recomputed_id(&op.plan),
            "known plan whose ID is not its hash"
        );
        assert_eq!(
            Some(&op.status),
            latest.get(id),
            "plan {id} has a stale status"
        );
        assert_eq!(history.find(id), Some(op));
        for (partition, offset) in op.plan.offsets.iter() {
            let slot = boundary.entry(partition).or_insert(offset);
            *slot = (*slot).max(offset);
        }
    }
    assert_eq!(
        history.boundary(),
        PartitionOffsets(boundary),
        "the boundary is not the per-partition maximum of the known plans"
    );
    let partitions: BTreeSet<u32> = operations
        .iter()
        .flat_map(|op| op.plan.offsets.partitions())
        .collect();
    assert_eq!(
        history.boundary().partitions(),
        partitions.into_iter().collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------------------------------------
// marker_file: `split_marker_file` on the bytes as a file, and on a file built from valid
// markers decoded from the same bytes.

pub fn check_marker_file(data: &[u8]) {
    let raw = text(data);
    check_split(&raw);

    let file = generate_marker_file(data);
    check_split(&file.text);
    // Files handed over one at a time answer what splitting every file and then parsing and
    // planning every marker answers: the raw text cut in two, then the generated file, and the
    // other way round (a refusal of a later file outranks an earlier file's bad marker).
    let cut = (0..=raw.len() / 2)
        .rev()
        .find(|at| raw.is_char_boundary(*at))
        .unwrap_or(0);
    let (head, tail) = raw.split_at(cut);
    for files in [
        [("a.json", head), ("b.json", tail), ("c.json", &file.text)],
        [("c.json", &file.text), ("a.json", head), ("b.json", tail)],
    ] {
        let planned = plan_from_marker_files("rp", &files);
        let split_first = plan_of_files_split_first("rp", &files);
        match (&planned, &split_first) {
            (Ok(_), Ok(_)) => assert_eq!(planned, split_first),
            // A file that is not a marker file is refused in the same words; a marker's refusal
            // names the marker by its file (and line) where splitting first can only count.
            (Err(a), Err(b)) if b.to_string().starts_with("Recovery marker file ") => {
                assert_eq!(a, b)
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.kind(), b.kind(), "{a} / {b}");
                assert!(a.to_string().contains(" of file "), "{a}");
            }
            _ => panic!(
                "plan_from_marker_files disagrees with splitting every file first: {planned:?} / {split_first:?}"
            ),
        }
    }
    let split = split_marker_file(&file.text)
        .unwrap_or_else(|e| panic!("a file of valid markers is refused: {e}\n{}", file.text));
    assert_eq!(
        split, file.pieces,
        "a file of valid markers split into other texts:\n{}",
        file.text
    );
    for (piece, marker) in split.iter().zip(&file.markers) {
        assert_eq!(
            Marker::parse(piece).as_ref(),
            Ok(marker),
            "a split marker text parses to another marker: {piece}"
        );
    }
    assert_eq!(
        plan_from_marker_texts("fuzz-recovery-point", &split),
        plan_from_markers("fuzz-recovery-point", &file.markers),
        "the split texts plan otherwise than the markers they were written from"
    );
}

/// The reference for `plan_from_marker_files`: every file split (a refusal names the file),
/// then every marker parsed, then planned.
fn plan_of_files_split_first(
    recovery_point: &str,
    files: &[(&str, &str)],
) -> Result<(Plan, usize), CleanupError> {
    const FILE: &str = "Recovery marker file ";
    let mut texts = Vec::new();
    for (name, text) in files {
        texts.extend(split_marker_file(text).map_err(|error| match error {
            CleanupError::InvalidMarker(why) => {
                CleanupError::InvalidMarker(why.replacen(FILE, &format!("{FILE}{name} "), 1))
            }
            other => other,
        })?);
    }
    let plan =
        parse_markers(&texts).and_then(|markers| plan_from_markers(recovery_point, &markers))?;
    Ok((plan, texts.len()))
}

/// Whitespace as JSON (and the splitter) skips it.
const BLANKS: [u8; 4] = [b' ', b'\t', b'\r', b'\n'];

fn skip_blanks(bytes: &[u8], from: usize) -> usize {
    from + bytes
        .get(from..)
        .unwrap_or(&[])
        .iter()
        .take_while(|b| BLANKS.contains(b))
        .count()
}

/// What `split_marker_file` promises for any text:
///
/// * a refusal is an `InvalidMarker` whose message starts with "Recovery marker file " and is
///   one line; only an empty (all-whitespace) text, an array or a text starting with `{` is
///   refused, and of the valid JSON documents only the empty array;
/// * it never returns no text;
/// * a text that does not start (after whitespace) with `[` or `{` is returned whole;
/// * a text starting with `{` comes back whole, or as two or more texts that start with `{`,
///   end with `}` or `]`, and are the input exactly, cut only at whitespace (nothing dropped
///   but whitespace between them, nothing re-encoded);
/// * a text starting with `[` comes back as its elements in order: an element written as a JSON
///   string gives the text the string holds, any other element is given exactly as written, and
///   between them there is only whitespace and one comma, up to the closing `]`;
/// * a valid JSON array (as `json::parse` reads it) gives exactly its elements: the decoded
///   string, or a text that parses to the same element; any other valid JSON document is
///   returned whole.
pub fn check_split(text: &str) {
    let bytes = text.as_bytes();
    let start = skip_blanks(bytes, 0);
    let document = json::parse(text);
    let pieces = match split_marker_file(text) {
        Ok(pieces) => pieces,
        Err(error) => {
            let CleanupError::InvalidMarker(message) = &error else {
                panic!("split_marker_file failed with a non-marker error: {error:?}");
            };
            assert!(
                message.starts_with("Recovery marker file "),
                "refusal without its subject: {message}"
            );
            assert!(
                !message.chars().any(char::is_control),
                "refusal message is not one line: {message:?}"
            );
            assert!(
                matches!(bytes.get(start), None | Some(b'[' | b'{')),
                "refused a text that is not empty, an array or an object: {message}"
            );
            match document {
                Ok(Value::Array(items)) if items.is_empty() => {}
                Ok(value) => panic!("refused the valid JSON document {value:?}: {message}"),
                Err(_) => {}
            }
            return;
        }
    };
    assert!(!pieces.is_empty(), "split returned no marker text");
    match bytes.get(start) {
        None => panic!("an empty text was split into {pieces:?}"),
        Some(b'[') => check_array_pieces(text, &pieces),
        Some(b'{') => check_object_pieces(text, &pieces),
        Some(_) => assert_eq!(pieces, [text], "a text that is neither array nor object"),
    }
    match document {
        Ok(Value::Array(items)) => {
            assert_eq!(
                pieces.len(),
                items.len(),
                "a valid JSON array split into another number of texts: {pieces:?}"
            );
            for (piece, item) in pieces.iter().zip(&items) {
                match item {
                    Value::String(inner) => assert_eq!(piece, inner, "string element"),
                    _ => assert_eq!(
                        json::parse(piece).ok().as_ref(),
                        Some(item),
                        "the text of an element does not parse to that element: {piece}"
                    ),
                }
            }
        }
        Ok(_) => assert_eq!(pieces, [text], "a valid JSON document other than an array"),
        Err(_) => {}
    }
}

/// The end (exclusive) of the JSON string literal opening at `open`: the first quote after it
/// that follows an even number of backslashes.
fn string_literal_end(bytes: &[u8], open: usize) -> Option<usize> {
    let mut backslashes = 0usize;
    for (index, &b) in bytes.iter().enumerate().skip(open + 1) {
        match b {
            b'"' if backslashes.is_multiple_of(2) => return Some(index + 1),
            b'\\' => backslashes += 1,
            _ => backslashes = 0,
        }
    }
    None
}

fn check_array_pieces(text: &str, pieces: &[String]) {
    let bytes = text.as_bytes();
    let mut at = skip_blanks(bytes, 0);
    assert_eq!(bytes[at], b'[');
    at = skip_blanks(bytes, at + 1);
    for (index, piece) in pieces.iter().enumerate() {
        if index > 0 {
            assert_eq!(
                bytes.get(at),
                Some(&b','),
                "element {index} is not followed by a comma (byte {at})"
            );
            at = skip_blanks(bytes, at + 1);
        }
        if bytes.get(at) == Some(&b'"') {
            let end = string_literal_end(bytes, at)
                .unwrap_or_else(|| panic!("accepted an unclosed string element at byte {at}"));
            assert_eq!(
                json::parse(&text[at..end]).ok(),
                Some(Value::String(piece.clone())),
                "a string element did not give the text it holds: {}",
                &text[at..end]
            );
            at = end;
        } else {
            assert!(
                !piece.is_empty() && text[at..].starts_with(piece.as_str()),
                "element {} is not given exactly as written (byte {at}): {piece:?}",
                index + 1
            );
            at += piece.len();
        }
        at = skip_blanks(bytes, at);
    }
    assert_eq!(
        bytes.get(at),
        Some(&b']'),
        "the elements do not end at the closing bracket (byte {at})"
    );
    assert_eq!(
        skip_blanks(bytes, at + 1),
        bytes.len(),
        "accepted text after the array"
    );
}

fn check_object_pieces(text: &str, pieces: &[String]) {
    if let [single] = pieces {
        assert_eq!(single, text, "a single marker does not keep its exact text");
        return;
    }
    let bytes = text.as_bytes();
    let mut at = skip_blanks(bytes, 0);
    for piece in pieces {
        assert!(
            piece.starts_with('{') && (piece.ends_with('}') || piece.ends_with(']')),
            "a piece of a marker sequence is not one object: {piece:?}"
        );
        assert!(
            text[at..].starts_with(piece.as_str()),
            "a piece of a marker sequence is not the input as written (byte {at}): {piece:?}"
        );
        at = skip_blanks(bytes, at + piece.len());
    }
    assert_eq!(
        at,
        bytes.len(),
        "a marker sequence dropped something other than whitespace (byte {at})"
    );
}

/// A marker file built from valid markers, and what splitting it must give.
pub struct MarkerFile {
    pub text: String,
    /// The texts `split_marker_file` must return, in order.
    pub pieces: Vec<String>,
    /// The marker each of `pieces` must parse to.
    pub markers: Vec<Marker>,
}

const MARKER_TOPICS: [&str; 5] = [
    "action-state",
    "a\"b\\c",
    "x]}\\\",{[\"",
    "チェックポイント 😀",
    " t ",
];
const MARKER_TOPIC_IDS: [&str; 4] = [
    "Zm9vYmFyYmF6cXV4cXV1eA",
    "topic-id",
    ZERO_TOPIC_ID,
    "\\\"]}",
];
/// Offsets around 2^53 (where a double stops holding every integer) and the largest valid one;
/// choice 7 reads a `u64` below 2^63 from the bytes instead.
const MARKER_OFFSETS: [u64; 7] = [
    0,
    10,
    9_007_199_254_740_992,
    9_007_199_254_740_993,
    12_345_678_901_234_567,
    1_234_567_890_123_456_789,
    9_223_372_036_854_775_807,
];

/// Decodes fuzz bytes into a marker file of 1–6 valid markers, each rendered by the core's
/// writers. Every byte read past the end is 0. A layout byte (`% 4`: 0 a JSON array of marker
/// objects, 1 an array of strings holding the marker texts, 2 an array mixing both by a byte per
/// element, 3 marker objects one per line), a count byte, then per marker: a kind byte (`% 4 ==
/// 3` legacy, else versioned), 1–4 partitions (a byte `% 4 == 3` reads a `u32` below 2^31, else
/// one from `PARTITIONS`) with offsets (`MARKER_OFFSETS`), the topic and topic ID (a byte below
/// 192 picks from a pool, above reads an arbitrary string, replaced by the pool's first when the
/// core refuses it) and a form byte (`% 3`: 0 `Marker::render`, 1 that with whitespace inside
/// its braces, 2 fields reordered with pretty offsets as `write_offsets` writes them). Whitespace
/// (0–3 of space, tab, CR, LF) is read before and after every element and separator.
pub fn generate_marker_file(data: &[u8]) -> MarkerFile {
    let mut u = Unstructured::new(data);
    let layout = byte(&mut u) % 4;
    let count = 1 + usize::from(byte(&mut u) % 6);
    let mut markers = Vec::with_capacity(count);
    let mut texts = Vec::with_capacity(count);
    for _ in 0..count {
        let marker = generated_marker(&mut u);
        texts.push(marker_text(&mut u, &marker));
        markers.push(marker);
    }
    let mut text = blanks(&mut u);
    let pieces = if layout == 3 {
        for (index, marker_text) in texts.iter().enumerate() {
            if index > 0 {
                text.push_str(&blanks(&mut u));
                text.push('\n');
                text.push_str(&blanks(&mut u));
            }
            text.push_str(marker_text);
        }
        text.push_str(&blanks(&mut u));
        // A single marker keeps its exact text, surrounding whitespace included.
        if count == 1 {
            vec![text.clone()]
        } else {
            texts
        }
    } else {
        text.push('[');
        for (index, marker_text) in texts.iter().enumerate() {
            if index > 0 {
                text.push_str(&blanks(&mut u));
                text.push(',');
            }
            text.push_str(&blanks(&mut u));
            let as_string = layout == 1 || (layout == 2 && byte(&mut u) % 2 == 1);
            if as_string {
                write_string(&mut text, marker_text);
            } else {
                text.push_str(marker_text);
            }
        }
        text.push_str(&blanks(&mut u));
        text.push(']');
        text.push_str(&blanks(&mut u));
        texts
    };
    MarkerFile {
        text,
        pieces,
        markers,
    }
}

fn blanks(u: &mut Unstructured<'_>) -> String {
    let count = byte(u) % 4;
    (0..count).map(|_| char::from(pick(u, &BLANKS))).collect()
}

fn generated_marker(u: &mut Unstructured<'_>) -> Marker {
    let legacy = byte(u) % 4 == 3;
    let mut offsets = PartitionOffsets::new();
    for _ in 0..1 + byte(u) % 4 {
        let partition = if byte(u) % 4 == 3 {
            u32::from_le_bytes(std::array::from_fn(|_| byte(u))) >> 1
        } else {
            pick(u, &PARTITIONS)
        };
        let offset = match MARKER_OFFSETS.get(usize::from(byte(u) % 8)) {
            Some(&offset) => offset,
            None => u64::from_le_bytes(std::array::from_fn(|_| byte(u))) >> 1,
        };
        offsets.insert(partition, offset);
    }
    if legacy {
        return Marker::Legacy(offsets);
    }
    let topic = marker_field(u, &MARKER_TOPICS);
    let topic_id = marker_field(u, &MARKER_TOPIC_IDS);
    let marker = VersionedMarker::new(&topic, &topic_id, offsets.clone())
        .or_else(|_| VersionedMarker::new(MARKER_TOPICS[0], MARKER_TOPIC_IDS[0], offsets))
        .expect("a marker from the pools is valid");
    Marker::Versioned(marker)
}

fn marker_field(u: &mut Unstructured<'_>, pool: &[&str]) -> String {
    let choice = byte(u);
    if choice < 192 {
        return pool[usize::from(choice) % pool.len()].to_owned();
    }
    u.arbitrary::<&str>().unwrap_or(pool[0]).to_owned()
}

fn marker_text(u: &mut Unstructured<'_>, marker: &Marker) -> String {
    let canonical = marker.render();
    match byte(u) % 3 {
        1 => {
            let inner = &canonical[1..canonical.len() - 1];
            let (before, after) = (blanks(u), blanks(u));
            format!("{{{before}{inner}{after}}}")
        }
        2 => {
            let mut out = String::new();
            match marker {
                Marker::Versioned(versioned) => {
                    out.push_str("{\n  \"offsets\" : ");
                    write_offsets(&mut out, &versioned.offsets, Some("  "));
                    out.push_str(",\n  \"topicId\" : ");
                    write_string(&mut out, &versioned.topic_id);
                    out.push_str(",\n  \"topic\" : ");
                    write_string(&mut out, &versioned.topic);
                    out.push_str(",\n  \"schemaVersion\" : 1\n}");
                }
                Marker::Legacy(offsets) => write_offsets(&mut out, offsets, Some("")),
            }
            out
        }
        _ => canonical,
    }
}

/// The `snapshot` input: a little-endian u32 length, that many bytes of `_metadata`, and the
/// rest as the bytes of every state file the snapshot asks for (seeds: each fixture snapshot's
/// `_metadata` and its marker state file, see `seeds.rs`).
pub fn split_snapshot_input(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((length, rest)) = data.split_first_chunk::<4>() else {
        return (data, &[]);
    };
    let length = (u32::from_le_bytes(*length) as usize).min(rest.len());
    rest.split_at(length)
}

/// `snapshot`: reading a Flink snapshot either refuses with a typed error (an `invalid-snapshot`
/// sentence names `_metadata` or the state file and a byte offset inside it), or answers: every
/// operator listed, and for each that keeps markers either a refusal or a plan whose offsets are
/// exactly the per-partition minimum of the versioned markers read, with a verified plan ID.
pub fn check_snapshot(data: &[u8]) {
    use action_state_format::snapshot::kryo::Element;
    use action_state_format::snapshot::{OperatorRef, Snapshot, StateFile};

    let (metadata, state) = split_snapshot_input(data);
    let location = "/flink/savepoints/fuzz";
    let snapshot = match Snapshot::read(location, metadata) {
        Ok(snapshot) => snapshot,
        Err(error) => return check_snapshot_error(&error, metadata.len().max(state.len())),
    };
    let needed = match snapshot.all_marker_files() {
        Ok(needed) => needed,
        Err(error) => return check_snapshot_error(&error, metadata.len().max(state.len())),
    };
    let files: Vec<StateFile<'_>> = needed
        .iter()
        .map(|file| StateFile {
            path: &file.path,
            bytes: state,
        })
        .collect();
    let operators = match snapshot.summary(&files) {
        Ok(operators) => operators,
        Err(error) => return check_snapshot_error(&error, metadata.len().max(state.len())),
    };
    assert_eq!(operators.len(), snapshot.metadata.operators.len());
    for operator in operators {
        let Some(stored) = operator.markers else {
            continue;
        };
        let which = OperatorRef::UidHash(operator.id.clone());
        match snapshot.plan(location, &which, &files) {
            Ok((plan, count)) => {
                assert_eq!(count, stored.len());
                assert_eq!(plan.plan_id, recomputed_id(&plan));
                assert_eq!(plan.source_recovery_point, location);
                let mut minimum: BTreeMap<u32, u64> = BTreeMap::new();
                for marker in &stored {
                    let Element::Versioned {
                        offsets: Some(offsets),
                        ..
                    } = &marker.element_value
                    else {
                        panic!("a plan from a marker that is not versioned: {marker:?}");
                    };
                    for &(p, o) in offsets {
                        let (p, o) = (u32::try_from(p).unwrap(), u64::try_from(o).unwrap());
                        let slot = minimum.entry(p).or_insert(o);
                        *slot = (*slot).min(o);
                    }
                }
                let planned: BTreeMap<u32, u64> = plan.offsets.iter().collect();
                assert_eq!(planned, minimum);
            }
            Err(error) => {
                check_snapshot_error(&error, metadata.len().max(state.len()));
            }
        }
    }
}

fn check_snapshot_error(error: &CleanupError, longest_file: usize) {
    let message = error.to_string();
    assert!(
        !message.is_empty() && !message.contains('\n'),
        "{message:?}"
    );
    if let CleanupError::InvalidSnapshot(_) = error
        && let Some(rest) = message.split(" is not readable at byte ").nth(1)
    {
        let offset: usize = rest
            .split(':')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no byte offset in {message}"));
        assert!(offset <= longest_file, "{message}: offset beyond the file");
    }
}
