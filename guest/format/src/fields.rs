//! Reading the members of a strict JSON object: exact field sets, typed getters and the
//! partition→offset objects that markers, plans and control records share. Every message names
//! the object (`subject`, e.g. "Cleanup plan") and the field.

use crate::decimal::push_decimal_str;
use crate::json::{Value, excerpt};
use crate::offsets::{MAX_OFFSET, MAX_PARTITION, PartitionOffsets};

/// The members of an object whose field names must be exactly `expected` (in any order).
#[derive(Debug)]
pub struct Fields<'a> {
    subject: &'a str,
    members: &'a [(String, Value)],
}

impl<'a> Fields<'a> {
    pub fn exactly(
        subject: &'a str,
        value: &'a Value,
        expected: &[&str],
    ) -> Result<Fields<'a>, String> {
        let Value::Object(members) = value else {
            return Err(format!(
                "{subject} must be a JSON object, but was {}",
                value.kind()
            ));
        };
        let names: Vec<&str> = members.iter().map(|(name, _)| name.as_str()).collect();
        let same = names.len() == expected.len() && expected.iter().all(|e| names.contains(e));
        if !same {
            // Field names are input: show a few, escaped, never the whole of a hostile object.
            const LISTED: usize = 12;
            let mut found: Vec<String> = names
                .iter()
                .take(LISTED)
                .map(|n| {
                    if expected.contains(n) {
                        (*n).to_owned()
                    } else {
                        excerpt(n)
                    }
                })
                .collect();
            if names.len() > LISTED {
                found.push(format!("… and {} more", names.len() - LISTED));
            }
            return Err(format!(
                "{subject} fields must be exactly [{}], but were [{}]",
                expected.join(", "),
                found.join(", ")
            ));
        }
        Ok(Fields { subject, members })
    }

    pub fn get(&self, name: &str) -> &'a Value {
        self.members
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .unwrap_or(&Value::Null)
    }

    /// A required JSON integer that fits in `u32` (schema versions).
    pub fn schema_version(&self, name: &str) -> Result<u32, String> {
        let subject = self.subject;
        match self.get(name) {
            Value::Null => Err(format!("{subject} is missing {name}")),
            value => value
                .as_i64()
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| format!("{subject} {name} must be an integer, but was {value}")),
        }
    }

    /// A required JSON string with no control characters and not blank.
    pub fn text(&self, name: &str) -> Result<String, String> {
        let subject = self.subject;
        match self.get(name) {
            Value::Null => Err(format!("{subject} is missing {name}")),
            Value::String(s) => {
                check_text(subject, name, s)?;
                Ok(s.clone())
            }
            other => Err(format!(
                "{subject} {name} must be a string, but was {}",
                other.kind()
            )),
        }
    }
}

/// Text fields are joined with newlines to compute plan IDs, so control characters would make
/// two different plans hash alike; blanks name nothing. Both are refused.
pub fn check_text(subject: &str, name: &str, value: &str) -> Result<(), String> {
    if value.trim().is_empty() {
        return Err(format!("{subject} {name} must not be blank"));
    }
    if let Some((index, c)) = value.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(format!(
            "{subject} {name} must not contain control characters, but has U+{:04X} at character {}",
            c as u32,
            index + 1
        ));
    }
    Ok(())
}

/// Parses a canonical partition key: decimal digits, no sign, no leading zero, within `int`.
pub fn parse_partition(subject: &str, key: &str) -> Result<u32, String> {
    let digits_only = !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit());
    let signed = key.strip_prefix(['-', '+']).unwrap_or(key);
    let numeric = !signed.is_empty() && signed.bytes().all(|b| b.is_ascii_digit());
    if !numeric {
        return Err(format!(
            "{subject} contains a non-integer Kafka partition: {}",
            excerpt(key)
        ));
    }
    if key.starts_with('-') && signed.bytes().any(|b| b != b'0') {
        return Err(format!(
            "{subject} Kafka partition must be non-negative, but was {key}"
        ));
    }
    if !digits_only || (key.len() > 1 && key.starts_with('0')) {
        return Err(format!(
            "{subject} partition {key} must use canonical decimal form"
        ));
    }
    match key.parse::<u32>() {
        Ok(partition) if partition <= MAX_PARTITION => Ok(partition),
        _ => Err(format!(
            "{subject} partition {key} is larger than the largest Kafka partition {MAX_PARTITION}"
        )),
    }
}

/// A partition key as messages show it: as written when it looks like a number (so messages
/// match the Java tool's), escaped and shortened otherwise.
fn partition_label(key: &str) -> String {
    let numeric = !key.is_empty()
        && key.len() <= 12
        && key
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+');
    if numeric {
        key.to_owned()
    } else {
        excerpt(key)
    }
}

/// Parses an offset value: a JSON integer within Kafka's `long`, not negative.
pub fn parse_offset(subject: &str, key: &str, value: &Value) -> Result<u64, String> {
    let Some(offset) = value.as_i64() else {
        let shown = match value {
            Value::Number(text) => text.clone(),
            other => other.kind().to_owned(),
        };
        return Err(format!(
            "{subject} offset for partition {} must be an integer between 0 and {MAX_OFFSET}, but was {shown}",
            partition_label(key)
        ));
    };
    u64::try_from(offset).map_err(|_| {
        format!(
            "{subject} offset for partition {} must be non-negative, but was {offset}",
            partition_label(key)
        )
    })
}

/// Parses `{"0": 10, "1": 20}` strictly (keys canonical, values integers, not empty).
pub fn parse_offsets(subject: &str, value: &Value) -> Result<PartitionOffsets, String> {
    let members = match value {
        Value::Null => return Err(format!("{subject} is missing offsets")),
        Value::Object(members) => members,
        other => {
            return Err(format!(
                "{subject} offsets must be an object, but was {}",
                other.kind()
            ));
        }
    };
    if members.is_empty() {
        return Err(format!("{subject} offsets must not be empty"));
    }
    let mut offsets = PartitionOffsets::new();
    for (key, value) in members {
        let offset = parse_offset(subject, key, value)?;
        let partition = parse_partition(subject, key)?;
        // Canonical keys are unique strings, so a repeat here is impossible after the JSON
        // reader refused duplicate names; the check stays as a guard against future changes.
        if offsets.get(partition).is_some() {
            return Err(format!(
                "{subject} contains duplicate Kafka partition {key}"
            ));
        }
        offsets.insert(partition, offset);
    }
    Ok(offsets)
}

/// Writes `{"0":10,"1":20}` (compact) or the pretty form at the given indent.
pub fn write_offsets(out: &mut String, offsets: &PartitionOffsets, pretty_indent: Option<&str>) {
    out.push('{');
    for (i, (partition, offset)) in offsets.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(indent) = pretty_indent {
            out.push('\n');
            out.push_str(indent);
            out.push_str("  ");
        }
        let separator = if pretty_indent.is_some() {
            "\" : "
        } else {
            "\":"
        };
        out.push('"');
        push_decimal_str(out, u64::from(partition));
        out.push_str(separator);
        push_decimal_str(out, offset);
    }
    if let Some(indent) = pretty_indent {
        out.push('\n');
        out.push_str(indent);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_partitions_only() {
        assert_eq!(parse_partition("Plan", "0"), Ok(0));
        assert_eq!(parse_partition("Plan", "2147483647"), Ok(2147483647));
        for key in ["+0", "00", "-0", "01", "+7"] {
            let error = parse_partition("Plan", key).unwrap_err();
            assert!(error.contains("canonical decimal form"), "{key}: {error}");
        }
        assert!(
            parse_partition("Plan", "-1")
                .unwrap_err()
                .contains("non-negative")
        );
        assert!(
            parse_partition("Plan", "x")
                .unwrap_err()
                .contains("non-integer")
        );
        assert!(
            parse_partition("Plan", "")
                .unwrap_err()
                .contains("non-integer")
        );
        assert!(
            parse_partition("Plan", "2147483648")
                .unwrap_err()
                .contains("largest")
        );
    }

    #[test]
    fn control_characters_and_blanks_are_refused() {
        assert!(
            check_text("Plan", "topic", " \t")
                .unwrap_err()
                .contains("blank")
        );
        let error = check_text("Plan", "topic", "a\nb").unwrap_err();
        assert!(error.contains("U+000A at character 2"), "{error}");
        assert!(check_text("Plan", "topic", "a\u{85}b").is_err());
        assert_eq!(check_text("Plan", "topic", "チェック"), Ok(()));
    }
}
