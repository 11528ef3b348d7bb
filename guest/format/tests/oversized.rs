//! Hostile sizes: every oversized or over-deep input is refused with a typed error that names the
//! limit, never a panic, and each refusal's time is printed (`cargo test -p action-state-format
//! --test oversized -- --nocapture` shows them; they are measurements, not assertions).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use action_state_format::json::{MAX_DOCUMENT_BYTES, MAX_MEMBERS};
use action_state_format::{
    CleanupError, ControlEntry, ControlHistory, ControlRecord, Marker, Plan, parse_markers,
};

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let result = f();
    let elapsed = start.elapsed();
    println!("{what}: {elapsed:?}");
    (result, elapsed)
}

const SPEC_PLAN: &str = "{\n  \"schemaVersion\" : 1,\n  \"planId\" : \"99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d\",\n  \"sourceRecoveryPoint\" : \"checkpoint-42\",\n  \"topic\" : \"action-state\",\n  \"topicId\" : \"topic-id\",\n  \"offsets\" : {\n    \"0\" : 10,\n    \"1\" : 20\n  }\n}\n";

/// `{"0":0,"1":0,…}` with `count` partitions.
fn offsets_object(count: usize) -> String {
    let mut out = String::with_capacity(count * 12);
    out.push('{');
    for partition in 0..count {
        if partition > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{partition}\":0");
    }
    out.push('}');
    out
}

#[test]
fn plan_text_one_byte_over_64_mib_is_refused_naming_the_limit() {
    // The test vector padded with trailing whitespace, which the reader would otherwise skip.
    let mut text = String::from(SPEC_PLAN);
    text.push_str(&" ".repeat(MAX_DOCUMENT_BYTES + 1 - text.len()));
    assert_eq!(text.len(), 64 * 1024 * 1024 + 1);
    let (result, elapsed) = timed("refusing a 64 MiB + 1 plan", || Plan::parse(&text));
    let error = result.unwrap_err();
    assert!(matches!(error, CleanupError::InvalidPlan(_)), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("67108865 bytes") && message.contains("67108864 bytes accepted"),
        "{message}"
    );
    assert!(
        elapsed < Duration::from_secs(1),
        "the size check is not up front"
    );

    // Exactly at the limit the same plan is read (the limit is inclusive).
    text.pop();
    let (plan, _) = timed("reading the same plan padded to exactly 64 MiB", || {
        Plan::parse(&text)
    });
    assert_eq!(
        plan.unwrap().plan_id,
        "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d"
    );
}

#[test]
fn marker_with_a_million_partitions_is_refused_naming_the_limit() {
    let text = format!(
        "{{\"schemaVersion\":1,\"topic\":\"action-state\",\"topicId\":\"topic-id\",\"offsets\":{}}}",
        offsets_object(1_000_000)
    );
    println!("marker of 1,000,000 partitions: {} bytes", text.len());
    let (result, _) = timed("refusing a marker of 1,000,000 partitions", || {
        Marker::parse(&text)
    });
    let error = result.unwrap_err();
    assert!(matches!(error, CleanupError::InvalidMarker(_)), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains(&format!("more than {MAX_MEMBERS} members")),
        "{message}"
    );
    assert!(message.len() < 300, "message of {} bytes", message.len());

    // Through the batch parser the message also names the marker.
    let (result, _) = timed("refusing it as marker 2 of parse_markers", || {
        parse_markers(&[SPEC_MARKER, text.as_str()])
    });
    let message = result.unwrap_err().to_string();
    assert!(message.starts_with("marker 2: "), "{message}");

    // The legacy form (a bare offsets object) hits the same limit.
    let legacy = offsets_object(1_000_000);
    let (result, _) = timed("refusing a legacy marker of 1,000,000 partitions", || {
        Marker::parse(&legacy)
    });
    assert!(result.unwrap_err().to_string().contains("262144 members"));
}

const SPEC_MARKER: &str =
    r#"{"schemaVersion":1,"topic":"action-state","topicId":"topic-id","offsets":{"0":10,"1":20}}"#;

#[test]
fn plan_with_a_million_partitions_is_refused_and_the_largest_allowed_is_read() {
    let plan_text = |count: usize| {
        format!(
            "{{\"schemaVersion\":1,\"planId\":\"x\",\"sourceRecoveryPoint\":\"rp\",\"topic\":\"t\",\"topicId\":\"id\",\"offsets\":{}}}",
            offsets_object(count)
        )
    };
    let text = plan_text(1_000_000);
    let (result, _) = timed("refusing a plan of 1,000,000 partitions", || {
        Plan::parse(&text)
    });
    let message = result.unwrap_err().to_string();
    assert!(message.contains("more than 262144 members"), "{message}");

    // MAX_MEMBERS partitions is the largest plan the reader accepts: it fails only on its ID.
    let text = plan_text(MAX_MEMBERS);
    let (result, _) = timed(
        "reading a plan of 262,144 partitions (up to its ID check)",
        || Plan::parse(&text),
    );
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("plan ID does not match its contents"),
        "{message}"
    );
}

#[test]
fn a_million_open_brackets_are_refused_by_every_parser() {
    let deep = "[".repeat(1_000_000);
    let (plan, elapsed) = timed("refusing 1,000,000 '[' as a plan", || Plan::parse(&deep));
    let message = plan.unwrap_err().to_string();
    assert!(
        message.contains("nested deeper than 32 levels"),
        "{message}"
    );
    assert!(elapsed < Duration::from_secs(1));
    let (marker, _) = timed("refusing 1,000,000 '[' as a marker", || {
        Marker::parse(&deep)
    });
    assert!(marker.unwrap_err().to_string().contains("nested deeper"));
    let (record, _) = timed("refusing 1,000,000 '[' as a control record", || {
        ControlRecord::parse_value(&deep)
    });
    assert!(record.unwrap_err().contains("nested deeper"));

    // Objects nest the same way, inside a valid prefix, and closed properly.
    let nested = format!("{}0{}", "{\"a\":".repeat(1_000_000), "}".repeat(1_000_000));
    let (plan, _) = timed("refusing 1,000,000 nested objects as a plan", || {
        Plan::parse(&nested)
    });
    assert!(plan.unwrap_err().to_string().contains("nested deeper"));
    let in_offsets = SPEC_PLAN.replace("\"0\" : 10", &format!("\"0\" : {}", "[".repeat(1_000_000)));
    let (plan, _) = timed("refusing 1,000,000 '[' inside a plan's offsets", || {
        Plan::parse(&in_offsets)
    });
    assert!(plan.unwrap_err().to_string().contains("nested deeper"));
}

#[test]
fn oversized_control_record_stops_replay_with_a_corruption_error() {
    let value = format!(
        "{{\"schemaVersion\":1,\"status\":\"COMMITTED\",\"plan\":{}}}",
        "[".repeat(1_000_000)
    );
    let entries = [ControlEntry {
        offset: 3,
        key: Some("k".into()),
        value: Some(value),
        timestamp: None,
    }];
    let (result, _) = timed("replaying a control record nested 1,000,000 deep", || {
        ControlHistory::replay(&entries)
    });
    let error = result.unwrap_err();
    assert!(
        matches!(error, CleanupError::ControlTopicCorrupt(_)),
        "{error:?}"
    );
    assert!(error.to_string().contains("at offset 3"));
}

/// Measurements, not limits the core promises today: how long the refusal messages get when a
/// hostile input is echoed back. Printed so a reviewer can see them.
#[test]
fn size_of_refusal_messages_for_echoed_input() {
    let many_fields = offsets_object(MAX_MEMBERS).replace("\"0\":0", "\"schemaVersion\":1");
    let (result, _) = timed("refusing a plan with 262,144 unknown fields", || {
        Plan::parse(&many_fields)
    });
    println!(
        "  message length: {} bytes",
        result.unwrap_err().to_string().len()
    );
    let long_status = format!(
        "{{\"schemaVersion\":1,\"status\":\"{}\",\"plan\":{{}}}}",
        "X".repeat(16 << 20)
    );
    let (result, _) = timed("refusing a control record with a 16 MiB status", || {
        ControlRecord::parse_value(&long_status)
    });
    println!("  message length: {} bytes", result.unwrap_err().len());
}

/// Peak resident memory of this process (Linux), in MiB.
fn peak_rss_mib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// A document inside the size and member limits (64 MiB, 262,144 items per array, depth 2) made
/// only of one-digit numbers would be ~33.5 million values (2.1 GB natively, far past the
/// guest's 512 MiB): the reader's value budget refuses it after 1,048,576 values, quickly and
/// with a clear error, before memory grows.
#[test]
fn a_64_mib_document_of_small_numbers_is_refused_by_the_value_budget() {
    let row = format!("[{}0]", "0,".repeat(MAX_MEMBERS - 1));
    let rows = MAX_DOCUMENT_BYTES / (row.len() + 1);
    let mut text = String::with_capacity(MAX_DOCUMENT_BYTES);
    text.push('[');
    for i in 0..rows {
        if i > 0 {
            text.push(',');
        }
        text.push_str(&row);
    }
    text.push(']');
    assert!(text.len() <= MAX_DOCUMENT_BYTES);
    let before = peak_rss_mib();
    let (result, _) = timed("refusing a 64 MiB plan made of one-digit numbers", || {
        Plan::parse(&text)
    });
    let message = result.unwrap_err().to_string();
    assert!(message.contains("more than 1048576 values"), "{message}");
    // Printed, not asserted: the peak is process-wide and other tests run alongside.
    println!(
        "  {} bytes; peak RSS {:?} MiB before, {:?} MiB after",
        text.len(),
        before,
        peak_rss_mib()
    );
}
