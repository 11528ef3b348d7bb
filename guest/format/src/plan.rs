//! Cleanup plans: validation, the content-derived plan ID, the strict parser and the two
//! canonical writers (the Java tool's pretty file form and the compact control-record form).

use std::fmt::Write as _;
use std::ops::Deref;

#[cfg(target_arch = "wasm32")]
use crate::sha256::Sha256;
#[cfg(not(target_arch = "wasm32"))]
use sha2::{Digest as _, Sha256};

use crate::decimal::write_decimal;
use crate::error::{CleanupError, Result};
use crate::fields::{Fields, check_text, parse_offsets, write_offsets};
use crate::json::{self, write_string};
use crate::offsets::{PartitionOffsets, check_ranges};
pub use crate::topic_id::ZERO_TOPIC_ID;
use crate::topic_id::refuse_foreign_spelling;

/// The only plan schema this tool reads and writes.
pub const PLAN_SCHEMA_VERSION: u32 = 1;

const SUBJECT: &str = "Cleanup plan";
const FIELDS: [&str; 6] = [
    "schemaVersion",
    "planId",
    "sourceRecoveryPoint",
    "topic",
    "topicId",
    "offsets",
];

/// The fields of a cleanup plan as someone supplied them, not checked: what the pure writers
/// render. Nothing that acts on Kafka takes these; [`PlanFields::check`] turns them into a
/// [`Plan`] or refuses them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PlanFields {
    pub plan_id: String,
    pub source_recovery_point: String,
    pub topic: String,
    pub topic_id: String,
    pub offsets: PartitionOffsets,
}

/// A validated cleanup plan: every field checked and `plan_id` equal to its contents' hash.
///
/// Only the checked constructors ([`Plan::new`], [`Plan::from_fields`], [`Plan::parse`],
/// [`PlanFields::check`]) make one, so `apply` can never be handed a plan the parser would
/// refuse. Its fields are read through `Deref`; they cannot be set:
///
/// ```compile_fail,E0560
/// use action_state_format::{Plan, PartitionOffsets};
/// let forged = Plan {
///     plan_id: "0".repeat(64),
///     source_recovery_point: "c1".into(),
///     topic: "action-state".into(),
///     topic_id: "AAAAAAAAAAAAAAAAAAAAAA".into(),
///     offsets: PartitionOffsets::new(),
/// };
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Plan(PlanFields);

impl Deref for Plan {
    type Target = PlanFields;

    fn deref(&self) -> &PlanFields {
        &self.0
    }
}

impl PlanFields {
    /// Checks every field and that the plan ID matches the contents: the only way from
    /// supplied fields to a [`Plan`].
    pub fn check(self) -> Result<Plan> {
        Plan::from_fields(
            PLAN_SCHEMA_VERSION,
            &self.plan_id,
            &self.source_recovery_point,
            &self.topic,
            &self.topic_id,
            self.offsets,
        )
    }

    /// The plan file form: Jackson's default pretty printer, plus one trailing LF.
    pub fn render_pretty(&self) -> String {
        let mut out = String::with_capacity(160 + self.offsets.len() * 24);
        out.push_str("{\n  \"schemaVersion\" : ");
        let _ = write!(out, "{PLAN_SCHEMA_VERSION}");
        for (name, value) in self.text_fields() {
            let _ = write!(out, ",\n  \"{name}\" : ");
            write_string(&mut out, value);
        }
        out.push_str(",\n  \"offsets\" : ");
        write_offsets(&mut out, &self.offsets, Some("  "));
        out.push_str("\n}\n");
        out
    }

    /// The compact form embedded in control records.
    pub fn render_compact(&self) -> String {
        let mut out = String::with_capacity(160 + self.offsets.len() * 16);
        self.write_compact(&mut out);
        out
    }

    pub fn write_compact(&self, out: &mut String) {
        let _ = write!(out, "{{\"schemaVersion\":{PLAN_SCHEMA_VERSION}");
        for (name, value) in self.text_fields() {
            let _ = write!(out, ",\"{name}\":");
            write_string(out, value);
        }
        out.push_str(",\"offsets\":");
        write_offsets(out, &self.offsets, None);
        out.push('}');
    }

    fn text_fields(&self) -> [(&'static str, &str); 4] {
        [
            ("planId", &self.plan_id),
            ("sourceRecoveryPoint", &self.source_recovery_point),
            ("topic", &self.topic),
            ("topicId", &self.topic_id),
        ]
    }
}

impl Plan {
    /// The plan's fields, given up (for converting to another representation).
    pub fn into_fields(self) -> PlanFields {
        self.0
    }

    /// Re-checks a plan value: every field and its ID. A `Plan` can only be built checked, so
    /// this fails only if that guarantee was broken; `apply` runs it before anything durable.
    pub fn verify(&self) -> Result<()> {
        self.0.clone().check().map(|_| ())
    }

    /// A plan value that skips every check, for the tests that prove `apply` re-checks (the
    /// `testing` feature: the protocol crate's tests).
    #[cfg(any(test, feature = "testing"))]
    pub fn forged(fields: PlanFields) -> Plan {
        Plan(fields)
    }

    /// Builds a plan from its contents, validating every field and computing its ID.
    pub fn new(
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: PartitionOffsets,
    ) -> Result<Plan> {
        Plan::new_with_lines(source_recovery_point, topic, topic_id, offsets, None)
    }

    /// [`Plan::new`], with the plan ID's partition lines already written when `lines` is given
    /// (they must be exactly what [`compute_plan_id`] writes for `offsets`).
    fn new_with_lines(
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: PartitionOffsets,
        lines: Option<&[u8]>,
    ) -> Result<Plan> {
        let plan_id = checked_id(
            source_recovery_point,
            topic,
            topic_id,
            offsets.iter(),
            Ranges::Unchecked,
            lines,
        )?;
        Ok(Plan(PlanFields {
            plan_id,
            source_recovery_point: source_recovery_point.to_owned(),
            topic: topic.to_owned(),
            topic_id: topic_id.to_owned(),
            offsets,
        }))
    }

    /// Builds a plan from all six fields as an embedder supplied them, refusing any mismatch.
    pub fn from_fields(
        schema_version: u32,
        plan_id: &str,
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: PartitionOffsets,
    ) -> Result<Plan> {
        if schema_version != PLAN_SCHEMA_VERSION {
            return Err(CleanupError::InvalidPlan(format!(
                "Unsupported Kafka action-state cleanup plan schema {schema_version}, expected {PLAN_SCHEMA_VERSION}"
            )));
        }
        Plan::with_id(
            plan_id,
            source_recovery_point,
            topic,
            topic_id,
            offsets,
            None,
        )
    }

    /// A plan the fast decoder read (schema version 1), with the plan ID's partition lines it
    /// copied from the text when it could (see `decode`).
    pub(crate) fn from_decoded(
        plan_id: &str,
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: PartitionOffsets,
        lines: Option<&[u8]>,
    ) -> Result<Plan> {
        Plan::with_id(
            plan_id,
            source_recovery_point,
            topic,
            topic_id,
            offsets,
            lines,
        )
    }

    fn with_id(
        plan_id: &str,
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: PartitionOffsets,
        lines: Option<&[u8]>,
    ) -> Result<Plan> {
        let plan = Plan::new_with_lines(source_recovery_point, topic, topic_id, offsets, lines)?;
        if plan.plan_id != plan_id {
            return Err(id_mismatch(plan_id, &plan.plan_id));
        }
        Ok(plan)
    }

    /// The reference path of `parse`: the whole document read into a JSON tree, then its fields
    /// checked. It decides every refusal and its message; `parse` only takes a faster way to the
    /// same answer when it can (see `decode`).
    pub fn parse_tree(text: &str) -> Result<Plan> {
        let value = json::parse(text).map_err(|e| {
            CleanupError::InvalidPlan(format!("{SUBJECT} is not one valid JSON document: {e}"))
        })?;
        Plan::from_value(&value).map_err(CleanupError::InvalidPlan)?
    }

    /// Reads a plan object already parsed as JSON. The outer error is a field-level problem;
    /// the inner one comes from validating the fields together.
    pub fn from_value(value: &json::Value) -> Result<Result<Plan>, String> {
        let fields = Fields::exactly(SUBJECT, value, &FIELDS)?;
        // Check order follows the Java tool: offsets, schema, then the text fields.
        let offsets = parse_offsets(SUBJECT, fields.get("offsets"))?;
        let schema_version = fields.schema_version("schemaVersion")?;
        let plan_id = string_field(&fields, "planId")?;
        let source = string_field(&fields, "sourceRecoveryPoint")?;
        let topic = string_field(&fields, "topic")?;
        let topic_id = string_field(&fields, "topicId")?;
        Ok(Plan::from_fields(
            schema_version,
            &plan_id,
            &source,
            &topic,
            &topic_id,
            offsets,
        ))
    }
}

/// Every check of a plan's contents, in the parser's order (offsets, then the text fields),
/// and its ID: what each checked constructor runs, whichever form its offsets have. Its
/// per-partition loops are functions of their own, never inlined: a JVM host compiles each
/// guest function into one method and HotSpot leaves methods over 8,000 bytes of bytecode to
/// its interpreter, which the component's export functions this is inlined into are.
fn checked_id(
    source_recovery_point: &str,
    topic: &str,
    topic_id: &str,
    offsets: impl Iterator<Item = (u32, u64)> + Clone,
    ranges: Ranges,
    lines: Option<&[u8]>,
) -> Result<String> {
    let invalid = CleanupError::InvalidPlan;
    match ranges {
        Ranges::Unchecked => check_ranges(offsets.clone(), SUBJECT).map_err(invalid)?,
        Ranges::Decoded => debug_assert!(check_ranges(offsets.clone(), SUBJECT).is_ok()),
    }
    check_text(SUBJECT, "sourceRecoveryPoint", source_recovery_point).map_err(invalid)?;
    check_text(SUBJECT, "topic", topic).map_err(invalid)?;
    check_text(SUBJECT, "topicId", topic_id).map_err(invalid)?;
    if let Some(refusal) = refuse_foreign_spelling(
        SUBJECT,
        topic_id,
        "make the plan again from markers that carry that form (the ID is part of the plan's hashed contents, so it is never rewritten)",
    ) {
        return Err(invalid(refusal));
    }
    if topic_id == ZERO_TOPIC_ID {
        return Err(invalid(format!(
            "Checkpoint-aligned cleanup requires a broker-provided Kafka topic ID, but topic {topic} has the unknown ID {ZERO_TOPIC_ID}"
        )));
    }
    if offsets.clone().next().is_none() {
        return Err(invalid(format!("{SUBJECT} offsets must not be empty")));
    }
    Ok(match lines {
        Some(lines) => hash_plan_lines(source_recovery_point, topic, topic_id, |hasher| {
            hasher.update(lines)
        }),
        None => plan_id_of(source_recovery_point, topic, topic_id, offsets),
    })
}

/// Whether the offsets [`checked_id`] is given still need their range check.
#[derive(Debug, Clone, Copy)]
enum Ranges {
    Unchecked,
    /// Read by the fast decoder, which gives up on a partition or offset out of range: the
    /// check could not fail (a pass over 10,000 partitions saved).
    Decoded,
}

fn id_mismatch(claimed: &str, computed: &str) -> CleanupError {
    CleanupError::InvalidPlan(format!(
        "Kafka action-state cleanup plan ID does not match its contents: the plan says {claimed} but its contents hash to {computed}"
    ))
}

/// A verified plan whose offsets are a list in ascending partition order instead of a map:
/// what the component adapters hand on (a WIT plan's offsets are a list). For a wide plan,
/// building, walking and dropping the map costs more than reading the text on some hosts
/// (JVM: about a tenth of `verify`). Made only by [`Plan::parse_listed`], which accepts and
/// refuses exactly what [`Plan::parse`] does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedPlan {
    pub plan_id: String,
    pub source_recovery_point: String,
    pub topic: String,
    pub topic_id: String,
    /// Ascending by partition, each partition once.
    pub offsets: Vec<(u32, u64)>,
}

impl ListedPlan {
    /// A plan the fast decoder read (schema version 1; offsets ascending and unique), with
    /// the plan ID's partition lines it copied from the text when it could (see `decode`).
    pub(crate) fn from_decoded(
        plan_id: &str,
        source_recovery_point: &str,
        topic: &str,
        topic_id: &str,
        offsets: Vec<(u32, u64)>,
        lines: Option<&[u8]>,
    ) -> Result<ListedPlan> {
        let entries = offsets.iter().copied();
        let computed = checked_id(
            source_recovery_point,
            topic,
            topic_id,
            entries,
            Ranges::Decoded,
            lines,
        )?;
        if computed != plan_id {
            return Err(id_mismatch(plan_id, &computed));
        }
        Ok(ListedPlan {
            plan_id: computed,
            source_recovery_point: source_recovery_point.to_owned(),
            topic: topic.to_owned(),
            topic_id: topic_id.to_owned(),
            offsets,
        })
    }
}

impl From<Plan> for ListedPlan {
    fn from(plan: Plan) -> ListedPlan {
        let fields = plan.into_fields();
        ListedPlan {
            offsets: fields.offsets.iter().collect(),
            plan_id: fields.plan_id,
            source_recovery_point: fields.source_recovery_point,
            topic: fields.topic,
            topic_id: fields.topic_id,
        }
    }
}

/// A text field read without the blank/control checks, which `Plan::new` makes with the
/// Java tool's messages once every field is known to have the right JSON type.
fn string_field(fields: &Fields<'_>, name: &str) -> Result<String, String> {
    match fields.get(name) {
        json::Value::Null => Err(format!("{SUBJECT} is missing {name}")),
        json::Value::String(s) => Ok(s.clone()),
        other => Err(format!(
            "{SUBJECT} {name} must be a string, but was {}",
            other.kind()
        )),
    }
}

/// SHA-256 over `1\n{source}\n{topic}\n{topicId}\n` and `{p}={o}\n` per partition, in hex.
pub fn compute_plan_id(
    source_recovery_point: &str,
    topic: &str,
    topic_id: &str,
    offsets: &PartitionOffsets,
) -> String {
    plan_id_of(source_recovery_point, topic, topic_id, offsets.iter())
}

/// [`compute_plan_id`] over offsets in ascending partition order, in whatever form they are.
#[inline(never)]
fn plan_id_of(
    source_recovery_point: &str,
    topic: &str,
    topic_id: &str,
    offsets: impl Iterator<Item = (u32, u64)>,
) -> String {
    hash_plan_lines(source_recovery_point, topic, topic_id, |hasher| {
        // The partition lines are written into one block the hasher takes a few KiB at a
        // time: one `update` per line would spend more on the hasher's buffering than on
        // hashing.
        const CHUNK: usize = 4096;
        // The longest partition line: 10 digits, `=`, 19 digits, LF.
        const LONGEST_LINE: usize = 31;
        let mut block = [0u8; CHUNK + LONGEST_LINE];
        let mut len = 0;
        for (partition, offset) in offsets {
            len = write_decimal(&mut block, len, u64::from(partition));
            block[len] = b'=';
            len = write_decimal(&mut block, len + 1, offset);
            block[len] = b'\n';
            len += 1;
            if len >= CHUNK {
                hasher.update(&block[..len]);
                len = 0;
            }
        }
        hasher.update(&block[..len]);
    })
}

/// The plan ID: SHA-256 over the schema and text field lines, then the partition lines that
/// `partition_lines` feeds the hasher, in hex.
fn hash_plan_lines(
    source_recovery_point: &str,
    topic: &str,
    topic_id: &str,
    partition_lines: impl FnOnce(&mut Sha256),
) -> String {
    let mut hasher = Sha256::new();
    let mut schema = [0u8; crate::decimal::MAX_DIGITS];
    let schema_len = write_decimal(&mut schema, 0, u64::from(PLAN_SCHEMA_VERSION));
    hasher.update(&schema[..schema_len]);
    for field in [source_recovery_point, topic, topic_id] {
        hasher.update(b"\n");
        hasher.update(field.as_bytes());
    }
    hasher.update(b"\n");
    partition_lines(&mut hasher);
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTOR_ID: &str = "99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d";

    fn offsets(pairs: &[(u32, u64)]) -> PartitionOffsets {
        pairs.iter().copied().collect()
    }

    fn example() -> Plan {
        Plan::new(
            "checkpoint-42",
            "action-state",
            "topic-id",
            offsets(&[(0, 10), (1, 20)]),
        )
        .unwrap()
    }

    fn message(result: Result<Plan>) -> String {
        match result {
            Ok(plan) => format!("accepted {}", plan.plan_id),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn spec_test_vector_hashes_and_renders_exactly() {
        let plan = example();
        assert_eq!(plan.plan_id, VECTOR_ID);
        let expected = "{\n  \"schemaVersion\" : 1,\n  \"planId\" : \"99cdeb76488b04bd18cea47a474733f1d33aaf1e6f5007af15f2e4cd128d856d\",\n  \"sourceRecoveryPoint\" : \"checkpoint-42\",\n  \"topic\" : \"action-state\",\n  \"topicId\" : \"topic-id\",\n  \"offsets\" : {\n    \"0\" : 10,\n    \"1\" : 20\n  }\n}\n";
        assert_eq!(plan.render_pretty(), expected);
        assert_eq!(Plan::parse(expected).unwrap(), plan);
    }

    #[test]
    fn java_reference_ids_match() {
        type Case<'a> = (&'a str, &'a str, &'a str, &'a [(u32, u64)], &'a str);
        let cases: [Case<'_>; 3] = [
            (
                "checkpoint-42",
                "action-state",
                "topic-id",
                &[(0, 10), (1, 30)],
                "d9e4a7af5055ce900c537ef2f32b7ccbee307dbf27419c33656014741f79fd1c",
            ),
            (
                "s3://checkpoints/savepoint-1",
                "action-state",
                "topic-id",
                &[(0, 10), (1, 20)],
                "5b507907f0ab34e51462145dd807e8b7639b0b94d31fcd705e6d27c25a485601",
            ),
            (
                "checkpoint-42",
                "action-state",
                "topic-id",
                &[(2, 1), (9, 4), (10, 3)],
                "843b84eca69aba32575c91ccb7213b6c28020ef2b33d6780c595bcc31c042b20",
            ),
        ];
        for (source, topic, id, pairs, expected) in cases {
            assert_eq!(
                compute_plan_id(source, topic, id, &offsets(pairs)),
                expected
            );
        }
    }

    #[test]
    fn compact_form_matches_control_record_embedding() {
        assert_eq!(
            example().render_compact(),
            format!(
                "{{\"schemaVersion\":1,\"planId\":\"{VECTOR_ID}\",\"sourceRecoveryPoint\":\"checkpoint-42\",\"topic\":\"action-state\",\"topicId\":\"topic-id\",\"offsets\":{{\"0\":10,\"1\":20}}}}"
            )
        );
    }

    #[test]
    fn rejects_tampered_offsets() {
        let text = example()
            .render_pretty()
            .replace("\"0\" : 10", "\"0\" : 11");
        assert!(message(Plan::parse(&text)).contains("plan ID does not match"));
    }

    #[test]
    fn rejects_non_string_plan_id() {
        let text = example()
            .render_pretty()
            .replace(&format!("\"{VECTOR_ID}\""), "123");
        assert_eq!(
            message(Plan::parse(&text)),
            "Cleanup plan planId must be a string, but was a number"
        );
    }

    #[test]
    fn rejects_unknown_duplicate_and_trailing_content() {
        let pretty = example().render_pretty();
        let unknown = pretty.replacen('{', "{ \"unexpected\" : true,", 1);
        assert!(message(Plan::parse(&unknown)).contains("fields must be exactly"));
        let duplicate = pretty.replacen('{', "{ \"schemaVersion\" : 1,", 1);
        assert!(message(Plan::parse(&duplicate)).contains("Duplicate field 'schemaVersion'"));
        for suffix in ["{}", "null", "garbage"] {
            let trailing = format!("{pretty}{suffix}");
            assert!(message(Plan::parse(&trailing)).contains("after the JSON document"));
        }
    }

    #[test]
    fn rejects_non_canonical_partition_alias() {
        let text = example()
            .render_pretty()
            .replace("\"0\" : 10", "\"+0\" : 999,\n    \"0\" : 10");
        assert!(
            message(Plan::parse(&text)).contains("partition +0 must use canonical decimal form")
        );
    }

    #[test]
    fn rejects_fractional_and_out_of_range_offsets() {
        for bad in ["10.5", "1e1", "-1", "9223372036854775808", "\"10\""] {
            let text = example()
                .render_pretty()
                .replace("\"0\" : 10", &format!("\"0\" : {bad}"));
            let error = message(Plan::parse(&text));
            assert!(
                error.contains("offset for partition 0 must be"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn accepts_largest_offset_and_numeric_partition_order() {
        let plan = Plan::new("rp", "t", "id", offsets(&[(10, i64::MAX as u64), (9, 0)])).unwrap();
        let text = plan.render_pretty();
        assert!(
            text.find("\"9\" : 0").unwrap() < text.find("\"10\" : 9223372036854775807").unwrap()
        );
        assert_eq!(Plan::parse(&text).unwrap(), plan);
    }

    #[test]
    fn rejects_control_characters_blank_fields_and_zero_topic_id() {
        let o = || offsets(&[(0, 1)]);
        assert!(message(Plan::new("a\nb", "t", "id", o())).contains("control characters"));
        assert!(message(Plan::new(" ", "t", "id", o())).contains("must not be blank"));
        assert!(message(Plan::new("rp", "t", ZERO_TOPIC_ID, o())).contains("broker-provided"));
        assert!(
            message(Plan::new("rp", "t", "id", PartitionOffsets::new()))
                .contains("must not be empty")
        );
    }

    #[test]
    fn new_refuses_exactly_what_the_parser_refuses() {
        use crate::offsets::{MAX_OFFSET, MAX_PARTITION};
        // The same values written into a plan document (the plan ID is checked last).
        let parsed = |partition: u32, offset: u64| {
            let text = example()
                .render_pretty()
                .replace("\"0\" : 10", &format!("\"{partition}\" : {offset}"));
            message(Plan::parse(&text))
        };
        let built = |partition: u32, offset: u64| {
            message(Plan::new(
                "checkpoint-42",
                "action-state",
                "topic-id",
                offsets(&[(partition, offset), (MAX_PARTITION - 1, 20)]),
            ))
        };
        for (partition, offset) in [
            (0, MAX_OFFSET + 1),
            (0, u64::MAX),
            (MAX_PARTITION + 1, 10),
            (u32::MAX, 10),
            (u32::MAX, u64::MAX),
        ] {
            let error = built(partition, offset);
            assert!(
                !error.starts_with("accepted"),
                "{partition}={offset}: {error}"
            );
            assert_eq!(error, parsed(partition, offset), "{partition}={offset}");
        }
        // The largest values the parser reads are accepted by both.
        assert!(built(MAX_PARTITION, MAX_OFFSET).starts_with("accepted"));
    }

    #[test]
    fn rejects_other_schema_versions() {
        let text = example()
            .render_pretty()
            .replace("\"schemaVersion\" : 1", "\"schemaVersion\" : 2");
        assert!(
            message(Plan::parse(&text))
                .contains("Unsupported Kafka action-state cleanup plan schema 2")
        );
    }
}
