//! Recovery markers: the versioned form (schema 1, with physical topic identity) and the legacy
//! bare partition→offset map, their strict parser and the canonical compact writer.

use crate::error::{CleanupError, Result};
use crate::fields::{Fields, check_text, parse_offsets, write_offsets};
use crate::json::{self, Value, write_string};
use crate::offsets::PartitionOffsets;
use crate::topic_id::refuse_foreign_spelling;

pub const MARKER_SCHEMA_VERSION: u32 = 1;
const SUBJECT: &str = "Recovery marker";
const FIELDS: [&str; 4] = ["schemaVersion", "topic", "topicId", "offsets"];

/// A marker of schema 1: the topic, its physical ID and the next offset to read per partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionedMarker {
    pub topic: String,
    pub topic_id: String,
    pub offsets: PartitionOffsets,
}

/// One subtask's recovery marker as stored in a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Marker {
    Versioned(VersionedMarker),
    /// A bare `{"0":100}` map: restorable without cleanup, never an authority for deletion.
    Legacy(PartitionOffsets),
}

impl Marker {
    pub fn offsets(&self) -> &PartitionOffsets {
        match self {
            Marker::Versioned(marker) => &marker.offsets,
            Marker::Legacy(offsets) => offsets,
        }
    }

    /// The reference path of `parse`: the whole document read into a JSON tree, then its fields
    /// checked. It decides every refusal and its message; `parse` only takes a faster way to the
    /// same answer when it can (see `decode`).
    pub fn parse_tree(text: &str) -> Result<Marker> {
        let value = json::parse(text).map_err(|e| {
            CleanupError::InvalidMarker(format!("{SUBJECT} is not one valid JSON document: {e}"))
        })?;
        Marker::from_value(&value).map_err(CleanupError::InvalidMarker)
    }

    pub fn from_value(value: &Value) -> Result<Marker, String> {
        let Value::Object(members) = value else {
            return Err(format!(
                "{SUBJECT} must be a JSON object, but was {}",
                value.kind()
            ));
        };
        // A legacy marker's keys are all numbers; any other key means a versioned marker was
        // meant (a misspelt field name gets the field-set message, not a partition error).
        let looks_versioned = members.iter().any(|(name, _)| {
            let digits = name.strip_prefix(['-', '+']).unwrap_or(name);
            digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit())
        });
        if !looks_versioned {
            return parse_offsets("Legacy recovery marker", value).map(Marker::Legacy);
        }
        let fields = Fields::exactly(SUBJECT, value, &FIELDS)?;
        let schema = fields.schema_version("schemaVersion")?;
        if schema != MARKER_SCHEMA_VERSION {
            return Err(format!(
                "Unsupported Kafka recovery marker schema {schema}, expected {MARKER_SCHEMA_VERSION}"
            ));
        }
        let topic = fields.text("topic")?;
        let topic_id = fields.text("topicId")?;
        check_topic_id(&topic_id)?;
        let offsets = parse_offsets(SUBJECT, fields.get("offsets"))?;
        Ok(Marker::Versioned(VersionedMarker {
            topic,
            topic_id,
            offsets,
        }))
    }

    /// The canonical compact JSON of this marker.
    pub fn render(&self) -> String {
        let mut out = String::new();
        match self {
            Marker::Versioned(marker) => {
                out.push_str("{\"schemaVersion\":1,\"topic\":");
                write_string(&mut out, &marker.topic);
                out.push_str(",\"topicId\":");
                write_string(&mut out, &marker.topic_id);
                out.push_str(",\"offsets\":");
                write_offsets(&mut out, &marker.offsets, None);
                out.push('}');
            }
            Marker::Legacy(offsets) => write_offsets(&mut out, offsets, None),
        }
        out
    }
}

/// A marker's topic ID in standard or padded base64 is refused, naming Kafka's form of it.
pub fn check_topic_id(topic_id: &str) -> Result<(), String> {
    match refuse_foreign_spelling(SUBJECT, topic_id, "write the marker's topicId in that form") {
        Some(refusal) => Err(refusal),
        None => Ok(()),
    }
}

impl VersionedMarker {
    /// Validates a marker built from parts (e.g. by an embedder over WIT).
    pub fn new(topic: &str, topic_id: &str, offsets: PartitionOffsets) -> Result<VersionedMarker> {
        let invalid = CleanupError::InvalidMarker;
        check_text(SUBJECT, "topic", topic).map_err(invalid)?;
        check_text(SUBJECT, "topicId", topic_id).map_err(invalid)?;
        check_topic_id(topic_id).map_err(invalid)?;
        if offsets.is_empty() {
            return Err(invalid(format!("{SUBJECT} offsets must not be empty")));
        }
        offsets.check_ranges(SUBJECT).map_err(invalid)?;
        Ok(VersionedMarker {
            topic: topic.to_owned(),
            topic_id: topic_id.to_owned(),
            offsets,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versioned_and_legacy_markers() {
        let versioned = r#"{"schemaVersion":1,"topic":"action-state","topicId":"abc","offsets":{"0":100,"1":42}}"#;
        let marker = Marker::parse(versioned).unwrap();
        assert_eq!(marker.render(), versioned);
        let legacy = Marker::parse(r#"{"0":100,"1":42}"#).unwrap();
        assert!(matches!(legacy, Marker::Legacy(_)));
        assert_eq!(legacy.render(), r#"{"0":100,"1":42}"#);
    }

    #[test]
    fn refuses_unsupported_schema_and_partial_versioned_markers() {
        let schema99 = r#"{"schemaVersion":99,"topic":"t","topicId":"i","offsets":{"0":1}}"#;
        let error = Marker::parse(schema99).unwrap_err().to_string();
        assert!(
            error.contains("Unsupported Kafka recovery marker schema 99"),
            "{error}"
        );
        let partial = r#"{"topic":"t","offsets":{"0":1}}"#;
        assert!(
            Marker::parse(partial)
                .unwrap_err()
                .to_string()
                .contains("fields must be exactly")
        );
    }

    #[test]
    fn new_refuses_exactly_what_the_parser_refuses() {
        use crate::offsets::{MAX_OFFSET, MAX_PARTITION};
        let parsed = |partition: u32, offset: u64| {
            let text = format!(
                r#"{{"schemaVersion":1,"topic":"t","topicId":"i","offsets":{{"{partition}":{offset}}}}}"#
            );
            Marker::parse(&text).map(|_| ()).map_err(|e| e.to_string())
        };
        let built = |partition: u32, offset: u64| {
            VersionedMarker::new("t", "i", [(partition, offset)].into_iter().collect())
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        for (partition, offset) in [
            (0, MAX_OFFSET + 1),
            (0, u64::MAX),
            (MAX_PARTITION + 1, 0),
            (u32::MAX, 0),
        ] {
            let error = built(partition, offset);
            assert!(error.is_err(), "{partition}={offset} accepted");
            assert_eq!(error, parsed(partition, offset), "{partition}={offset}");
        }
        assert_eq!(built(MAX_PARTITION, MAX_OFFSET), Ok(()));
        assert_eq!(parsed(MAX_PARTITION, MAX_OFFSET), Ok(()));
    }

    #[test]
    fn refuses_bad_legacy_keys_and_values() {
        assert!(
            Marker::parse(r#"{"00":1}"#)
                .unwrap_err()
                .to_string()
                .contains("canonical")
        );
        assert!(
            Marker::parse(r#"{"0":-1}"#)
                .unwrap_err()
                .to_string()
                .contains("non-negative")
        );
        assert!(
            Marker::parse(r#"{}"#)
                .unwrap_err()
                .to_string()
                .contains("must not be empty")
        );
        assert!(
            Marker::parse(r#"[1]"#)
                .unwrap_err()
                .to_string()
                .contains("JSON object")
        );
    }
}
