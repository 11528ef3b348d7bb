//! Every Rust table of Kafka error codes and error-kind names against `wit/types.wit`, the one
//! document they all follow: the core's protocol codes, this host's librdkafka codes, and the
//! `cleanup-error` case names of the core and of the CLI. The Python and Java hosts check their
//! tables against the same document in their own tests.

#![allow(
    clippy::expect_used,
    clippy::panic,
    reason = "tests: a failure is a failed test"
)]

use std::collections::BTreeMap;
use std::ffi::CStr;
use std::path::Path;

use action_state_cleanup::cleanup as bindings;
use action_state_cleanup::kafka::errors::kind_of;
use action_state_kafka::capabilities::ErrorKind;
use action_state_kafka::kafka_codes::PROTOCOL_CODES;
use rdkafka::bindings as rd;
use rdkafka::types::RDKafkaErrorCode;

fn types_wit() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit/types.wit"))
        .expect("wit/types.wit")
}

/// The body of `variant <name>` in a WIT file.
fn variant_body<'a>(wit: &'a str, name: &str) -> &'a str {
    let start = wit
        .find(&format!("variant {name} {{"))
        .unwrap_or_else(|| panic!("variant {name} in the WIT"));
    let body = &wit[start..];
    let end = body.find("\n  }").expect("the variant's closing brace");
    &body[body.find('{').expect("an opening brace") + 1..end]
}

/// The case names of `variant <name>`, in order.
fn variant_cases(wit: &str, name: &str) -> Vec<String> {
    variant_body(wit, name)
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("//"))
        .map(|line| {
            line.split(['(', ','])
                .next()
                .unwrap_or(line)
                .trim()
                .to_owned()
        })
        .collect()
}

/// Every `NAME (code)` of a doc text: a run of capitals, digits and `_`, a space, then a
/// parenthesis opening on a (possibly negative) number.
fn listed_codes(doc: &str) -> Vec<(String, i32)> {
    let mut found = Vec::new();
    for (at, _) in doc.match_indices(" (") {
        let name: String = doc[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let number: String = doc[at + 2..]
            .chars()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .map(|(_, c)| c)
            .collect();
        if let (false, Ok(code)) = (name.is_empty(), number.parse()) {
            found.push((name, code));
        }
    }
    found
}

/// Per listed code of `variant kafka-error`: its name and the case whose doc comment lists it.
fn wit_kafka_codes(wit: &str) -> BTreeMap<i32, (String, String)> {
    let mut codes = BTreeMap::new();
    let mut doc = String::new();
    for line in variant_body(wit, "kafka-error").lines().map(str::trim) {
        if let Some(text) = line.strip_prefix("///") {
            doc.push_str(text);
            doc.push('\n');
        } else if !line.is_empty() {
            let case = line.split('(').next().unwrap_or(line).trim().to_owned();
            for (name, code) in listed_codes(&std::mem::take(&mut doc).replace('\n', " ")) {
                let before = codes.insert(code, (name, case.clone()));
                assert!(before.is_none(), "code {code} is listed twice: {before:?}");
            }
        }
    }
    codes
}

#[test]
fn the_doc_parser_reads_names_and_codes_and_skips_prose() {
    assert_eq!(
        listed_codes(
            "offsets: OFFSET_OUT_OF_RANGE (1),\n _NOENT (-156: why), TOPIC_EXISTS is (see x)"
        ),
        [
            ("OFFSET_OUT_OF_RANGE".to_owned(), 1),
            ("_NOENT".to_owned(), -156)
        ]
    );
    let wit = types_wit();
    let codes = wit_kafka_codes(&wit);
    assert_eq!(
        codes.get(&3),
        Some(&("UNKNOWN_TOPIC_OR_PARTITION".into(), "unknown-topic".into()))
    );
    assert_eq!(
        codes.get(&-140),
        Some(&("_AUTO_OFFSET_RESET".into(), "offset-out-of-range".into()))
    );
}

#[test]
fn the_cores_protocol_codes_are_exactly_the_positive_codes_the_wit_lists() {
    let wit = types_wit();
    let listed: Vec<(i32, String, String)> = wit_kafka_codes(&wit)
        .into_iter()
        .filter(|(code, _)| *code > 0)
        .map(|(code, (name, case))| (code, name, case))
        .collect();
    let core: Vec<(i32, String, String)> = PROTOCOL_CODES
        .iter()
        .map(|(code, name, kind)| (*code, (*name).to_owned(), kind.name().to_owned()))
        .collect();
    assert_eq!(
        core, listed,
        "PROTOCOL_CODES (guest/kafka/src/kafka_codes.rs) against wit/types.wit"
    );
}

/// Every code librdkafka knows, with its name (`rd_kafka_get_err_descs`).
fn librdkafka_codes() -> Vec<(rd::rd_kafka_resp_err_t, String)> {
    let mut descriptions: *const rd::rd_kafka_err_desc = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: librdkafka points `descriptions` at its static table of `count` entries.
    unsafe { rd::rd_kafka_get_err_descs(&mut descriptions, &mut count) };
    // SAFETY: as above; the table lives as long as the library.
    let table = unsafe { std::slice::from_raw_parts(descriptions, count) };
    table
        .iter()
        .filter(|d| !d.name.is_null())
        // SAFETY: a non-null name is a static C string.
        .map(|d| {
            (
                d.code,
                unsafe { CStr::from_ptr(d.name) }
                    .to_string_lossy()
                    .into_owned(),
            )
        })
        .collect()
}

#[test]
fn the_hosts_case_of_every_librdkafka_code_is_the_one_the_wit_lists() {
    let wit = types_wit();
    let listed = wit_kafka_codes(&wit);
    let known = librdkafka_codes();
    assert!(
        known.len() > 150,
        "librdkafka describes its codes: {}",
        known.len()
    );
    let mut wrong = Vec::new();
    for (code, name) in &known {
        let number = *code as i32;
        let expected = listed
            .get(&number)
            .map_or("other", |(_, case)| case.as_str());
        let mapped = kind_of(RDKafkaErrorCode::from(*code)).name();
        if mapped != expected {
            wrong.push(format!("{name} ({number}): host {mapped}, WIT {expected}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "host/src/kafka/errors.rs against wit/types.wit: {wrong:#?}"
    );
    // The WIT names librdkafka's own codes as librdkafka does, and lists none it lacks.
    for (code, (name, _)) in listed.iter().filter(|(code, _)| **code < 0) {
        let known_as = known
            .iter()
            .find(|(c, _)| *c as i32 == *code)
            .map(|(_, n)| n);
        assert_eq!(known_as, Some(name), "librdkafka's name of {code}");
    }
}

#[test]
fn the_kafka_error_cases_are_the_cores() {
    let wit = types_wit();
    let ours: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.name()).collect();
    assert_eq!(variant_cases(&wit, "kafka-error"), ours);
}

/// One value of every `cleanup-error` case of the bindings, in the WIT's order.
fn every_bound_cleanup_error() -> Vec<bindings::CleanupError> {
    let text = || "x".to_owned();
    let range = || bindings::RangeViolation {
        topic: text(),
        partition: 0,
        requested: 0,
        beginning: None,
        end: None,
    };
    vec![
        bindings::CleanupError::InvalidPlan(text()),
        bindings::CleanupError::InvalidMarker(text()),
        bindings::CleanupError::InvalidArgument(text()),
        bindings::CleanupError::BoundaryViolation(bindings::BoundaryViolation {
            topic: text(),
            partition: 0,
            requested: 0,
            boundary: 0,
        }),
        bindings::CleanupError::BoundaryRegression(bindings::BoundaryRegression {
            plan_id: text(),
            partition: 0,
            planned: 0,
            boundary: 0,
        }),
        bindings::CleanupError::TopicChanged(bindings::TopicChange {
            topic: text(),
            context: text(),
            expected_topic_id: text(),
            found_topic_id: text(),
            expected_partitions: Vec::new(),
            found_partitions: Vec::new(),
        }),
        bindings::CleanupError::UnsafeTopicConfig(text()),
        bindings::CleanupError::InvalidControlTopic(text()),
        bindings::CleanupError::OffsetsUnavailable(range()),
        bindings::CleanupError::DeleteUnverified(range()),
        bindings::CleanupError::ControlTopicCorrupt(text()),
        bindings::CleanupError::RecoveryRefused(text()),
        bindings::CleanupError::ConflictingPolicies(text()),
        bindings::CleanupError::Fenced(text()),
        bindings::CleanupError::ReplayStalled(text()),
        bindings::CleanupError::ReplayRecordInvalid(text()),
        bindings::CleanupError::Kafka(bindings::KafkaFailure {
            operation: text(),
            message: text(),
            retriable: false,
            cause: None,
        }),
        bindings::CleanupError::InvalidSnapshot(text()),
    ]
}

#[test]
fn the_clis_error_kind_names_are_the_wits_cleanup_error_cases() {
    let wit = types_wit();
    let names: Vec<&str> = every_bound_cleanup_error()
        .iter()
        .map(bindings::CleanupError::kind)
        .collect();
    assert_eq!(
        names,
        variant_cases(&wit, "cleanup-error"),
        "host/src/error_kind.rs against wit/types.wit"
    );
}

#[test]
fn the_cores_error_kind_names_are_the_wits_cleanup_error_cases() {
    use action_state_format::CleanupError as C;
    use action_state_format::error as e;
    let wit = types_wit();
    let text = || "x".to_owned();
    let range = || e::RangeViolation {
        topic: text(),
        partition: 0,
        requested: 0,
        beginning: None,
        end: None,
    };
    let every = [
        C::InvalidPlan(text()),
        C::InvalidMarker(text()),
        C::InvalidArgument(text()),
        C::BoundaryViolation(e::BoundaryViolation {
            topic: text(),
            partition: 0,
            requested: 0,
            boundary: 0,
        }),
        C::BoundaryRegression(e::BoundaryRegression {
            plan_id: text(),
            partition: 0,
            planned: 0,
            boundary: 0,
        }),
        C::TopicChanged(Box::new(e::TopicChange {
            topic: text(),
            context: text(),
            expected_topic_id: text(),
            found_topic_id: text(),
            expected_partitions: Vec::new(),
            found_partitions: Vec::new(),
        })),
        C::UnsafeTopicConfig(text()),
        C::InvalidControlTopic(text()),
        C::OffsetsUnavailable(range()),
        C::DeleteUnverified(range()),
        C::ControlTopicCorrupt(text()),
        C::RecoveryRefused(text()),
        C::ConflictingPolicies(text()),
        C::Fenced(text()),
        C::ReplayStalled(text()),
        C::ReplayRecordInvalid(text()),
        C::kafka("op", "failed"),
        C::InvalidSnapshot(text()),
    ];
    let names: Vec<&str> = every.iter().map(C::kind).collect();
    assert_eq!(
        names,
        variant_cases(&wit, "cleanup-error"),
        "CleanupError::kind (guest/format/src/error.rs) against wit/types.wit"
    );
}
