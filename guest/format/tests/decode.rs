//! The fast decoders (`action_state_format::decode`) against the reference reader (`json::parse`
//! and the `from_value` functions), rule by rule of SPEC §2: `parse` must answer exactly what
//! `parse_tree` answers (values, refusals and their messages), and the fast path must be taken
//! for the documents the hosts exchange every day (so the speed claim is tested too).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use action_state_format::decode;
use action_state_format::offsets::MAX_OFFSET;
use action_state_format::{
    ControlRecord, ListedPlan, Marker, PartitionOffsets, Plan, Status, parse_markers,
    plan_from_marker_texts, plan_from_markers,
};
use proptest::prelude::*;

const PLAN: &str = "{\n  \"schemaVersion\" : 1,\n  \"planId\" : \"99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d\",\n  \"sourceRecoveryPoint\" : \"checkpoint-42\",\n  \"topic\" : \"action-state\",\n  \"topicId\" : \"topic-id\",\n  \"offsets\" : {\n    \"0\" : 10,\n    \"1\" : 20\n  }\n}\n";
const MARKER: &str =
    r#"{"schemaVersion":1,"topic":"action-state","topicId":"topic-id","offsets":{"0":10,"1":20}}"#;

/// How a text must fare: accepted on the fast path, accepted only by the reference reader
/// (escapes, legacy markers), or refused with a message containing the given text.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Fast,
    Reference,
    Refused(&'static str),
}

fn record(status: &str, plan: &str) -> String {
    format!("{{\"schemaVersion\":1,\"status\":\"{status}\",\"plan\":{plan}}}")
}

fn compact_plan() -> String {
    Plan::parse(PLAN).unwrap().render_compact()
}

fn check_plan(case: &str, text: &str, expect: Expect) {
    let parsed = Plan::parse(text);
    assert_eq!(parsed, Plan::parse_tree(text), "{case}: parse ≠ parse_tree");
    assert_eq!(
        Plan::parse_listed(text),
        parsed.clone().map(ListedPlan::from),
        "{case}: parse_listed ≠ parse"
    );
    let fast = decode::plan(text);
    let fast_listed = decode::listed_plan(text);
    assert_eq!(fast_listed.is_some(), fast.is_some(), "{case}: listed path");
    match expect {
        Expect::Fast => {
            assert!(fast.is_some(), "{case}: not on the fast path");
            assert_eq!(fast.as_ref(), parsed.as_ref().ok(), "{case}");
        }
        Expect::Reference => {
            assert!(fast.is_none(), "{case}: unexpectedly on the fast path");
            assert!(parsed.is_ok(), "{case}: {parsed:?}");
        }
        Expect::Refused(why) => {
            assert!(fast.is_none(), "{case}: the fast decoder accepted it");
            let message = parsed.unwrap_err().to_string();
            assert!(message.contains(why), "{case}: {message}");
        }
    }
}

fn check_marker(case: &str, text: &str, expect: Expect) {
    let parsed = Marker::parse(text);
    assert_eq!(
        parsed,
        Marker::parse_tree(text),
        "{case}: parse ≠ parse_tree"
    );
    let fast = decode::marker(text);
    match expect {
        Expect::Fast => {
            assert!(fast.is_some(), "{case}: not on the fast path");
            assert_eq!(fast.as_ref(), parsed.as_ref().ok(), "{case}");
        }
        Expect::Reference => {
            assert!(fast.is_none(), "{case}: unexpectedly on the fast path");
            assert!(parsed.is_ok(), "{case}: {parsed:?}");
        }
        Expect::Refused(why) => {
            assert!(fast.is_none(), "{case}: the fast decoder accepted it");
            let message = parsed.unwrap_err().to_string();
            assert!(message.contains(why), "{case}: {message}");
        }
    }
}

fn check_record(case: &str, text: &str, expect: Expect) {
    let parsed = ControlRecord::parse_value(text);
    assert_eq!(
        parsed,
        ControlRecord::parse_value_tree(text),
        "{case}: parse_value ≠ parse_value_tree"
    );
    let fast = decode::control_record(text);
    match expect {
        Expect::Fast => {
            assert!(fast.is_some(), "{case}: not on the fast path");
            assert_eq!(fast.as_ref(), parsed.as_ref().ok(), "{case}");
        }
        Expect::Reference => {
            assert!(fast.is_none(), "{case}: unexpectedly on the fast path");
            assert!(parsed.is_ok(), "{case}: {parsed:?}");
        }
        Expect::Refused(why) => {
            assert!(fast.is_none(), "{case}: the fast decoder accepted it");
            let message = parsed.unwrap_err();
            assert!(message.contains(why), "{case}: {message}");
        }
    }
}

/// Plan cases: (name, text, expectation). Each refused case breaks one rule of SPEC §2.
fn plan_cases() -> Vec<(&'static str, String, Expect)> {
    use Expect::*;
    let swap = |from: &str, to: &str| {
        assert!(PLAN.contains(from), "{from}");
        PLAN.replacen(from, to, 1)
    };
    vec![
        ("spec vector", PLAN.into(), Fast),
        ("compact form", compact_plan(), Fast),
        ("no trailing newline", PLAN.trim_end().into(), Fast),
        (
            "tabs and CRLF",
            PLAN.replace("  ", "\t").replace('\n', "\r\n"),
            Fast,
        ),
        (
            "members reordered",
            swap("\"schemaVersion\" : 1,\n", "").replacen('}', "},\n\"schemaVersion\":1", 1),
            Fast,
        ),
        (
            "offsets reordered",
            swap("\"0\" : 10,\n    \"1\" : 20", "\"1\" : 20, \"0\" : 10"),
            Fast,
        ),
        (
            "escaped text",
            swap("checkpoint-42", "checkpoint\\u002d42"),
            Reference,
        ),
        (
            "escaped member name",
            swap("\"topic\" :", "\"top\\u0069c\" :"),
            Reference,
        ),
        (
            "offset -0 reads as 0",
            swap("\"0\" : 10", "\"0\" : -0"),
            Refused("plan ID does not match"),
        ),
        (
            "duplicate field",
            swap("\"topic\" :", "\"topic\" : \"x\", \"topic\" :"),
            Refused("Duplicate field 'topic'"),
        ),
        (
            "duplicate partition",
            swap("\"1\" : 20", "\"1\" : 20, \"1\" : 20"),
            Refused("Duplicate field '1'"),
        ),
        (
            "duplicate partition out of order",
            swap(
                "\"0\" : 10,\n    \"1\" : 20",
                "\"1\" : 20, \"0\" : 10, \"1\" : 20",
            ),
            Refused("Duplicate field '1'"),
        ),
        (
            "unknown field",
            swap("\"topic\" :", "\"extra\" : 1, \"topic\" :"),
            Refused("fields must be exactly"),
        ),
        (
            "missing field",
            swap("\"topicId\" : \"topic-id\",\n", ""),
            Refused("fields must be exactly"),
        ),
        (
            "trailing content",
            format!("{PLAN}{{}}"),
            Refused("unexpected content after the JSON document"),
        ),
        (
            "trailing comma",
            swap("\"1\" : 20", "\"1\" : 20,"),
            Refused("expected a member name"),
        ),
        (
            "fraction",
            swap("\"0\" : 10", "\"0\" : 10.0"),
            Refused("must be an integer"),
        ),
        (
            "exponent",
            swap("\"0\" : 10", "\"0\" : 1e1"),
            Refused("must be an integer"),
        ),
        (
            "string offset",
            swap("\"0\" : 10", "\"0\" : \"10\""),
            Refused("must be an integer"),
        ),
        (
            "negative offset",
            swap("\"0\" : 10", "\"0\" : -1"),
            Refused("must be non-negative"),
        ),
        (
            "offset past long",
            swap("\"0\" : 10", "\"0\" : 9223372036854775808"),
            Refused("must be an integer"),
        ),
        (
            "offset of 20 digits",
            swap("\"0\" : 10", "\"0\" : 10000000000000000000"),
            Refused("must be an integer"),
        ),
        (
            "leading zero offset",
            swap("\"0\" : 10", "\"0\" : 010"),
            Refused("expected ',' or '}'"),
        ),
        (
            "partition +0",
            swap("\"0\" :", "\"+0\" :"),
            Refused("canonical decimal form"),
        ),
        (
            "partition 00",
            swap("\"0\" :", "\"00\" :"),
            Refused("canonical decimal form"),
        ),
        (
            "partition -0",
            swap("\"0\" :", "\"-0\" :"),
            Refused("canonical decimal form"),
        ),
        (
            "partition with a space",
            swap("\"0\" :", "\" 0\" :"),
            Refused("non-integer"),
        ),
        (
            "partition past int",
            swap("\"1\" :", "\"2147483648\" :"),
            Refused("larger than the largest"),
        ),
        (
            "partition of 11 digits",
            swap("\"1\" :", "\"10000000000\" :"),
            Refused("larger than the largest"),
        ),
        (
            "empty offsets",
            swap("\"0\" : 10,\n    \"1\" : 20", ""),
            Refused("must not be empty"),
        ),
        (
            "lone surrogate",
            swap("checkpoint-42", "checkpoint-\\ud800"),
            Refused("lone surrogate in \\u escape in field 'sourceRecoveryPoint'"),
        ),
        (
            "raw control character",
            swap("checkpoint-42", "checkpoint\u{1}42"),
            Refused("unescaped control character in string in field 'sourceRecoveryPoint'"),
        ),
        (
            "escaped control character",
            swap("checkpoint-42", "checkpoint\\n42"),
            Refused("must not contain control characters"),
        ),
        (
            "blank topic",
            swap("\"action-state\"", "\" \""),
            Refused("must not be blank"),
        ),
        (
            "schema 2",
            swap("\"schemaVersion\" : 1", "\"schemaVersion\" : 2"),
            Refused("schema 2"),
        ),
        (
            "schema 1.0",
            swap("\"schemaVersion\" : 1", "\"schemaVersion\" : 1.0"),
            Refused("schemaVersion must be an integer"),
        ),
        (
            "schema -0",
            swap("\"schemaVersion\" : 1", "\"schemaVersion\" : -0"),
            Refused("schema 0"),
        ),
        (
            "schema 10",
            swap("\"schemaVersion\" : 1", "\"schemaVersion\" : 10"),
            Refused("schema 10"),
        ),
        (
            "plan ID mismatch",
            swap("\"0\" : 10", "\"0\" : 11"),
            Refused("plan ID does not match"),
        ),
        (
            "plan ID a number",
            swap(
                "\"99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d\"",
                "7",
            ),
            Refused("planId must be a string"),
        ),
        (
            "depth bomb",
            swap("\"0\" : 10", &format!("\"0\" : {}", "[".repeat(100))),
            Refused("nested deeper than 32 levels"),
        ),
        (
            "not an object",
            "[]".into(),
            Refused("must be a JSON object"),
        ),
        (
            "empty text",
            String::new(),
            Refused("unexpected end of input"),
        ),
    ]
}

#[test]
fn plans_follow_every_rule_on_both_paths() {
    for (case, text, expect) in plan_cases() {
        check_plan(case, &text, expect);
        // The same plan embedded in a control record: the same verdict for the record.
        let compact = Plan::parse_tree(&text).map(|p| p.render_compact());
        if !matches!(expect, Expect::Refused(_)) {
            let embedded = record("COMMITTED", &text);
            check_record(case, &embedded, expect);
            assert_eq!(
                ControlRecord::parse_value(&embedded)
                    .unwrap()
                    .plan
                    .render_compact(),
                compact.unwrap()
            );
        } else {
            let embedded = record("APPLIED", &text);
            let parsed = ControlRecord::parse_value(&embedded);
            assert_eq!(parsed, ControlRecord::parse_value_tree(&embedded), "{case}");
            assert!(
                parsed.is_err() && decode::control_record(&embedded).is_none(),
                "{case}"
            );
        }
    }
}

#[test]
fn markers_follow_every_rule_on_both_paths() {
    use Expect::*;
    let swap = |from: &str, to: &str| {
        assert!(MARKER.contains(from), "{from}");
        MARKER.replacen(from, to, 1)
    };
    let cases: Vec<(&str, String, Expect)> = vec![
        ("canonical", MARKER.into(), Fast),
        ("pretty and reordered", "{ \"offsets\" : { \"1\" : 20, \"0\" : 10 },\n \"topicId\" : \"topic-id\", \"topic\" : \"action-state\", \"schemaVersion\" : 1 }\n".into(), Fast),
        ("zero topic ID (refused only when planning)", swap("topic-id", "AAAAAAAAAAAAAAAAAAAAAA"), Fast),
        ("legacy", r#"{"0":10,"1":20}"#.into(), Reference),
        ("escaped topic", swap("action-state", "action\\u002dstate"), Reference),
        ("duplicate field", swap("\"topic\":", "\"topic\":\"x\",\"topic\":"), Refused("Duplicate field 'topic'")),
        ("duplicate partition", swap("\"1\":20", "\"1\":20,\"1\":21"), Refused("Duplicate field '1'")),
        ("duplicate partition out of order", swap("\"0\":10,\"1\":20", "\"1\":20,\"0\":10,\"1\":21"), Refused("Duplicate field '1'")),
        ("unknown field", swap("\"topic\":", "\"x\":1,\"topic\":"), Refused("fields must be exactly")),
        ("missing field", swap("\"topicId\":\"topic-id\",", ""), Refused("fields must be exactly")),
        ("trailing content", format!("{MARKER}{{}}"), Refused("unexpected content after the JSON document")),
        ("fraction", swap(":10", ":10.5"), Refused("must be an integer")),
        ("negative offset", swap(":10", ":-10"), Refused("must be non-negative")),
        ("largest offset", swap(":10", &format!(":{MAX_OFFSET}")), Fast),
        ("offset past long", swap(":10", ":9223372036854775808"), Refused("must be an integer")),
        ("partition +1", swap("\"1\":", "\"+1\":"), Refused("canonical decimal form")),
        ("partition past int", swap("\"1\":", "\"4294967296\":"), Refused("larger than the largest")),
        ("empty offsets", swap("\"0\":10,\"1\":20", ""), Refused("must not be empty")),
        ("lone surrogate in topic", swap("action-state", "\\udc00"), Refused("lone surrogate in \\u escape in field 'topic'")),
        ("lone surrogate in a partition", swap("\"1\":", "\"\\ud800\":"), Refused("lone surrogate in \\u escape in a field name of 'offsets'")),
        ("control character", swap("action-state", "action\\u0007state"), Refused("must not contain control characters")),
        ("blank topic ID", swap("\"topic-id\"", "\"\""), Refused("must not be blank")),
        ("schema 2", swap("\"schemaVersion\":1", "\"schemaVersion\":2"), Refused("schema 2")),
        ("schema 1.0", swap("\"schemaVersion\":1", "\"schemaVersion\":1.0"), Refused("must be an integer")),
        ("not an object", "\"x\"".into(), Refused("must be a JSON object")),
    ];
    for (case, text, expect) in cases {
        check_marker(case, &text, expect);
    }
    // Through the batch parser the marker's position is still named.
    let bad = MARKER.replacen("action-state", "\\udc00", 1);
    let message = parse_markers(&[MARKER, bad.as_str()])
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("marker 2: Recovery marker is not one valid JSON document: lone surrogate in \\u escape in field 'topic' at byte "),
        "{message}"
    );
}

/// Planning from texts (the component's path) against parsing and then planning (the reference).
#[test]
fn planning_from_texts_answers_what_parsing_then_planning_answers() {
    let m = |offsets: &str| MARKER.replacen(r#"{"0":10,"1":20}"#, offsets, 1);
    let cases: Vec<(&str, Vec<String>, Option<&str>)> = vec![
        ("one marker", vec![MARKER.into()], None),
        (
            "minimum of three",
            vec![
                m(r#"{"0":15,"1":30}"#),
                m(r#"{"0":10,"1":35}"#),
                m(r#"{"1":31,"0":12}"#),
            ],
            None,
        ),
        (
            "escaped topic in one marker",
            vec![
                MARKER.into(),
                MARKER.replacen("action-state", "action\\u002dstate", 1),
            ],
            None,
        ),
        ("no markers", vec![], Some("must not be empty")),
        (
            "other partition set",
            vec![MARKER.into(), m(r#"{"0":10}"#)],
            Some("different Kafka partition sets"),
        ),
        (
            "other partitions, same count",
            vec![MARKER.into(), m(r#"{"0":10,"2":20}"#)],
            Some("different Kafka partition sets"),
        ),
        (
            "other topic",
            vec![MARKER.into(), MARKER.replacen("action-state", "other", 1)],
            Some("one physical Kafka topic"),
        ),
        (
            "other topic ID",
            vec![MARKER.into(), MARKER.replacen("topic-id", "other-id", 1)],
            Some("one physical Kafka topic"),
        ),
        (
            "zero topic ID",
            vec![MARKER.replacen("topic-id", "AAAAAAAAAAAAAAAAAAAAAA", 1)],
            Some("broker-provided"),
        ),
        (
            "legacy first",
            vec![r#"{"0":1,"1":2}"#.into(), MARKER.into()],
            Some("legacy marker"),
        ),
        (
            "legacy second",
            vec![MARKER.into(), r#"{"0":1,"1":2}"#.into()],
            Some("legacy marker"),
        ),
        (
            "bad marker after a foreign one",
            vec![
                MARKER.into(),
                MARKER.replacen("action-state", "other", 1),
                format!("{MARKER}x"),
            ],
            Some("marker 3: "),
        ),
        (
            "blank topic everywhere",
            vec![
                MARKER.replacen("action-state", " ", 1),
                MARKER.replacen("action-state", " ", 1),
            ],
            Some("must not be blank"),
        ),
    ];
    for (case, texts, refused) in cases {
        let reference = parse_markers(&texts).and_then(|m| plan_from_markers("rp", &m));
        let fast = plan_from_marker_texts("rp", &texts);
        assert_eq!(fast, reference, "{case}");
        match refused {
            None => assert!(fast.is_ok(), "{case}: {fast:?}"),
            Some(why) => {
                let message = fast.unwrap_err().to_string();
                assert!(message.contains(why), "{case}: {message}");
            }
        }
    }
    let plan = plan_from_marker_texts("rp", &[m(r#"{"0":15,"1":30}"#), m(r#"{"1":35,"0":10}"#)]);
    assert_eq!(plan.unwrap().offsets.to_string(), "{0=10, 1=30}");
}

#[test]
fn control_records_follow_every_rule_on_both_paths() {
    use Expect::*;
    let plan = compact_plan();
    let cases: Vec<(&str, String, Expect)> = vec![
        ("committed", record("COMMITTED", &plan), Fast),
        ("applied", record("APPLIED", &plan), Fast),
        (
            "reordered",
            format!("{{ \"plan\" : {plan}, \"status\" : \"APPLIED\", \"schemaVersion\" : 1 }}"),
            Fast,
        ),
        ("escaped status", record("\\u0041PPLIED", &plan), Reference),
        (
            "lowercase status",
            record("applied", &plan),
            Refused("must be COMMITTED or APPLIED"),
        ),
        (
            "schema 1.5",
            record("APPLIED", &plan).replacen(":1,", ":1.5,", 1),
            Refused("schema 1.5"),
        ),
        (
            "duplicate status",
            record("APPLIED", &plan).replacen("\"plan\"", "\"status\":\"APPLIED\",\"plan\"", 1),
            Refused("Duplicate field 'status'"),
        ),
        (
            "unknown field",
            record("APPLIED", &plan).replacen("\"plan\"", "\"x\":0,\"plan\"", 1),
            Refused("fields must be exactly"),
        ),
        (
            "trailing content",
            format!("{} null", record("APPLIED", &plan)),
            Refused("unexpected content"),
        ),
        (
            "plan not an object",
            record("APPLIED", "[]"),
            Refused("must be a JSON object"),
        ),
        (
            "lone surrogate in the plan",
            record("APPLIED", &plan.replacen("action-state", "\\ud800", 1)),
            Refused("lone surrogate in \\u escape in field 'plan.topic'"),
        ),
    ];
    for (case, text, expect) in cases {
        check_record(case, &text, expect);
    }
    let parsed = ControlRecord::parse_value(&record("APPLIED", &plan)).unwrap();
    assert_eq!(parsed.status, Status::Applied);
}

/// A JSON whitespace run (possibly empty) from a selector.
fn space(selector: u8) -> &'static str {
    ["", " ", "\n", "\t", "\r\n  ", "", ""][usize::from(selector) % 7]
}

/// A plan rendered with arbitrary whitespace, member order and partition order.
fn scrambled(plan: &Plan, order: &[usize], reverse: bool, spaces: &[u8]) -> String {
    let mut s = spaces.iter().cycle().copied();
    let mut ws = || space(s.next().unwrap_or(0));
    let mut offsets: Vec<(u32, u64)> = plan.offsets.iter().collect();
    if reverse {
        offsets.reverse();
    }
    let offsets: Vec<String> = offsets
        .iter()
        .map(|(p, o)| format!("{}\"{p}\"{}:{}{o}{}", ws(), ws(), ws(), ws()))
        .collect();
    let quoted = |s: &str| format!("\"{s}\"");
    let members = [
        ("schemaVersion", "1".to_owned()),
        ("planId", quoted(&plan.plan_id)),
        ("sourceRecoveryPoint", quoted(&plan.source_recovery_point)),
        ("topic", quoted(&plan.topic)),
        ("topicId", quoted(&plan.topic_id)),
        ("offsets", format!("{{{}}}", offsets.join(","))),
    ];
    let body: Vec<String> = order
        .iter()
        .map(|&i| {
            let (name, value) = &members[i % 6];
            format!("{}\"{name}\"{}:{}{value}{}", ws(), ws(), ws(), ws())
        })
        .collect();
    format!("{}{{{}}}{}", ws(), body.join(","), ws())
}

fn plain_text() -> impl Strategy<Value = String> {
    let chars: Vec<char> = "aZ09 ./:_-é😀チ".chars().collect();
    proptest::collection::vec(proptest::sample::select(chars), 1..12)
        .prop_map(String::from_iter)
        .prop_filter("not blank", |s| !s.trim().is_empty())
}

proptest! {
    /// Valid plans in any layout take the fast path to the reference's answer; one random edit
    /// of a byte (deleted, replaced or inserted) never makes the two paths disagree.
    #[test]
    fn fast_path_agrees_with_the_reference_on_layouts_and_edits(
        source in plain_text(),
        topic in plain_text(),
        offsets in proptest::collection::btree_map(0u32..5000, 0u64..=MAX_OFFSET, 1..40),
        order in Just([0usize, 1, 2, 3, 4, 5]).prop_shuffle(),
        reverse in any::<bool>(),
        spaces in proptest::collection::vec(any::<u8>(), 1..16),
        edit in (any::<prop::sample::Index>(), 0u8..3, any::<u8>()),
    ) {
        let plan = Plan::new(&source, &topic, "dG9waWMtaWQtMDAwMDAwMA", PartitionOffsets(offsets)).unwrap();
        let text = scrambled(&plan, &order, reverse, &spaces);
        prop_assert_eq!(decode::plan(&text), Some(plan.clone()), "{}", text);
        prop_assert_eq!(decode::listed_plan(&text), Some(ListedPlan::from(plan.clone())));
        prop_assert_eq!(Plan::parse_tree(&text), Ok(plan));

        let mut bytes = text.into_bytes();
        let (at, kind, byte) = edit;
        let at = at.index(bytes.len());
        let byte = b"{}[]\",:0123456789-+.eE \\uxa"[usize::from(byte) % 27];
        match kind {
            0 => { bytes.remove(at); }
            1 => bytes[at] = byte,
            _ => bytes.insert(at, byte),
        }
        let edited = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Plan::parse(&edited);
        prop_assert_eq!(&parsed, &Plan::parse_tree(&edited), "{}", edited);
        prop_assert_eq!(Plan::parse_listed(&edited), parsed.clone().map(ListedPlan::from));
        if let Some(fast) = decode::plan(&edited) {
            prop_assert_eq!(Ok(fast), parsed);
        }
        let embedded = record("COMMITTED", &edited);
        prop_assert_eq!(
            ControlRecord::parse_value(&embedded),
            ControlRecord::parse_value_tree(&embedded)
        );
        let marker = format!(
            "{{\"offsets\":{},\"schemaVersion\":1,\"topic\":\"t\",\"topicId\":\"i\"}}",
            edited
                .find("\"offsets\"")
                .and_then(|i| edited.get(i + 10..))
                .unwrap_or("{}")
        );
        prop_assert_eq!(Marker::parse(&marker), Marker::parse_tree(&marker));
    }
}
