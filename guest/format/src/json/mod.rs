//! A strict JSON reader and the two writers the formats need.
//!
//! General-purpose JSON libraries are lenient in exactly the places this format must not be:
//! they keep the last of duplicate keys, accept lone surrogates or trailing content, and turn
//! `10.0` into a number. Plans decide what Kafka deletes, so the reader here keeps every number
//! as its source text, remembers key order, refuses duplicates and refuses anything after the
//! document. It has no recursion limit issue: nesting depth is bounded by `MAX_DEPTH`.

use std::fmt;

mod reader;

use reader::Reader;

/// Deepest nesting accepted; our formats need three levels, so anything deeper is hostile input.
const MAX_DEPTH: usize = 32;
/// Largest document accepted. Plans of the largest supported topic are a few MiB.
pub const MAX_DOCUMENT_BYTES: usize = 64 << 20;
/// Most members (or array items) in one object: more than any Kafka topic has partitions, and
/// small enough that parsing stays far inside the guest's memory limit.
pub const MAX_MEMBERS: usize = 1 << 18;
/// Most values in one document. Bounds memory whatever the shape: a document of tiny values
/// would otherwise become tens of millions of nodes, far beyond the guest's memory limit.
pub const MAX_VALUES: usize = 1 << 20;

/// A parsed JSON value. Objects keep their members in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number exactly as written, so callers decide what an integer is.
    Number(String),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// A short name of the JSON type, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// The value as a signed 64-bit integer, when it is written as one (no fraction, no exponent).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(text) if is_integer_literal(text) => text.parse().ok(),
            _ => None,
        }
    }
}

/// Text of a number for messages: the literal itself, or the JSON kind.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(text) => f.write_str(text),
            Value::String(s) => {
                let mut out = String::new();
                write_string(&mut out, s);
                f.write_str(&out)
            }
            other => f.write_str(other.kind()),
        }
    }
}

fn is_integer_literal(text: &str) -> bool {
    !text.contains(['.', 'e', 'E'])
}

/// Why a text is not one strict JSON document, with the byte offset where reading stopped.
/// An error inside a string (a lone surrogate, a bad escape, a raw control character) names the
/// field it is in, e.g. `lone surrogate in \u escape in field 'topic'` or `… in a field name of
/// 'offsets'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub offset: usize,
    pub reason: String,
    /// For an error inside a string: where the string is, filled in while the error leaves the
    /// objects and arrays around it.
    place: Option<StringPlace>,
}

/// Where a string with an error sits: in a member name or a value, under a path of member
/// names and array indexes (innermost first while the error propagates).
#[derive(Debug, Clone, PartialEq, Eq)]
struct StringPlace {
    in_name: bool,
    path: Vec<String>,
}

impl SyntaxError {
    fn new(offset: usize, reason: impl Into<String>) -> SyntaxError {
        SyntaxError {
            offset,
            reason: reason.into(),
            place: None,
        }
    }

    /// Marks an error as one inside a string (a member name when `in_name`).
    fn in_string(mut self, in_name: bool) -> SyntaxError {
        self.place = Some(StringPlace {
            in_name,
            path: Vec::new(),
        });
        self
    }

    /// Adds the member name or array index under which the failing value sits.
    fn under(mut self, segment: impl FnOnce() -> String) -> SyntaxError {
        if let Some(place) = &mut self.place {
            place.path.push(segment());
        }
        self
    }

    /// Writes the place of a string error into the reason, once, at the top.
    fn finish(mut self) -> SyntaxError {
        if let Some(place) = self.place.take() {
            // Segments are `.name` or `[index]`, innermost first.
            let path: String = place.path.iter().rev().map(String::as_str).collect();
            let path = path.strip_prefix('.').unwrap_or(&path);
            let shown = if path.chars().all(|c| !c.is_control()) && path.chars().count() <= 60 {
                format!("'{path}'")
            } else {
                excerpt(path)
            };
            match (place.in_name, path.is_empty()) {
                (true, true) => self.reason.push_str(" in a field name"),
                (true, false) => self
                    .reason
                    .push_str(&format!(" in a field name of {shown}")),
                (false, true) => {}
                (false, false) => self.reason.push_str(&format!(" in field {shown}")),
            }
        }
        self
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.offset)
    }
}

/// Parses exactly one JSON document; whitespace may surround it, nothing else may follow it.
pub fn parse(text: &str) -> Result<Value, SyntaxError> {
    parse_document(text).map_err(SyntaxError::finish)
}

fn parse_document(text: &str) -> Result<Value, SyntaxError> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(SyntaxError::new(
            0,
            format!(
                "the document is {} bytes, more than the {MAX_DOCUMENT_BYTES} bytes accepted",
                text.len()
            ),
        ));
    }
    let mut reader = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        values: 0,
    };
    reader.skip_whitespace();
    let value = reader.value(0)?;
    reader.skip_whitespace();
    if reader.pos != reader.bytes.len() {
        return Err(reader.error("unexpected content after the JSON document"));
    }
    Ok(value)
}

/// Input text as a message may show it: control characters escaped (no terminal escapes or
/// line breaks reach the operator) and at most 60 characters, with the full length noted.
pub fn excerpt(text: &str) -> String {
    const SHOWN: usize = 60;
    let mut out = String::from("\"");
    for c in text.chars().take(SHOWN) {
        out.extend(c.escape_debug());
    }
    out.push('"');
    let count = text.chars().count();
    if count > SHOWN {
        out.push_str(&format!("… ({} bytes)", text.len()));
    }
    out
}

/// Appends `s` as a JSON string literal, escaped the way Jackson does: short escapes for
/// `\b \t \n \f \r`, `\u00XX` (uppercase hex) for other control characters, everything else raw.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                let code = c as usize;
                out.push_str("\\u00");
                out.push(HEX[code >> 4] as char);
                out.push(HEX[code & 0xF] as char);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> String {
        match parse(text) {
            Ok(value) => format!("parsed as {value:?}"),
            Err(error) => error.reason,
        }
    }

    #[test]
    fn keeps_member_order_and_number_text() {
        let value = parse(r#" {"b": 10.50, "a": [true, null, "x"]} "#);
        assert_eq!(
            value,
            Ok(Value::Object(vec![
                ("b".into(), Value::Number("10.50".into())),
                (
                    "a".into(),
                    Value::Array(vec![
                        Value::Bool(true),
                        Value::Null,
                        Value::String("x".into())
                    ])
                ),
            ]))
        );
    }

    #[test]
    fn rejects_duplicate_member_names() {
        assert_eq!(reason(r#"{"a":1,"a":1}"#), "Duplicate field 'a'");
    }

    #[test]
    fn rejects_trailing_content() {
        for suffix in ["{}", "null", "garbage", "]"] {
            assert_eq!(
                reason(&format!("{{}}{suffix}")),
                "unexpected content after the JSON document"
            );
        }
    }

    #[test]
    fn rejects_lone_surrogates_and_accepts_pairs() {
        assert_eq!(reason(r#""\ud800""#), "lone surrogate in \\u escape");
        assert_eq!(reason(r#""\udc00x""#), "lone surrogate in \\u escape");
        assert_eq!(parse(r#""\ud83d\ude00""#), Ok(Value::String("😀".into())));
    }

    #[test]
    fn string_errors_name_their_field() {
        let at = |text: &str| parse(text).map(|_| ()).unwrap_err().to_string();
        assert_eq!(
            at(r#"{"topic":"a\udc00"}"#),
            "lone surrogate in \\u escape in field 'topic' at byte 17"
        );
        assert_eq!(
            at(r#"{"plan":{"topic":"\ud800x"}}"#),
            "lone surrogate in \\u escape in field 'plan.topic' at byte 24"
        );
        assert_eq!(
            at(r#"{"plan":{"offsets":{"\ud800":1}}}"#),
            "lone surrogate in \\u escape in a field name of 'plan.offsets' at byte 27"
        );
        assert_eq!(
            at(r#"{"\udc00":1}"#),
            "lone surrogate in \\u escape in a field name at byte 8"
        );
        assert_eq!(
            at(r#"{"a":[1,"\q"]}"#),
            "invalid escape sequence in field 'a[1]' at byte 11"
        );
        // Names are input: shown escaped and short.
        let long = format!(r#"{{"{}\n":"\ud800"}}"#, "x".repeat(70));
        assert!(at(&long).contains(r#"in field "xxxx"#), "{}", at(&long));
        // Errors outside strings name no field.
        assert_eq!(at(r#"{"a":01}"#), "expected ',' or '}' at byte 6");
    }

    #[test]
    fn rejects_raw_control_characters_in_strings() {
        assert_eq!(reason("\"a\nb\""), "unescaped control character in string");
    }

    #[test]
    fn rejects_malformed_numbers() {
        for text in ["01", "-", "1.", ".5", "1e", "+1", "NaN"] {
            assert!(parse(text).is_err(), "{text} must be rejected");
        }
    }

    #[test]
    fn integers_exclude_fractions_exponents_and_overflow() {
        assert_eq!(
            parse("9223372036854775807").map(|v| v.as_i64()),
            Ok(Some(i64::MAX))
        );
        for text in ["10.0", "1e2", "9223372036854775808"] {
            assert_eq!(parse(text).map(|v| v.as_i64()), Ok(None), "{text}");
        }
    }

    #[test]
    fn refuses_objects_with_more_members_than_any_topic_has_partitions() {
        let mut text = String::from("{");
        for i in 0..=MAX_MEMBERS {
            text.push_str(&format!("\"{i}\":0,"));
        }
        text.pop();
        text.push('}');
        assert!(reason(&text).contains("more than 262144 members"));
    }

    #[test]
    fn refuses_documents_with_more_values_than_the_budget() {
        let row = format!("[{}0]", "0,".repeat(9_999));
        let text = format!("[{}]", vec![row; 105].join(","));
        assert!(reason(&text).contains("more than 1048576 values"));
    }

    #[test]
    fn refuses_hostile_nesting_depth() {
        let deep = "[".repeat(10_000);
        assert!(reason(&deep).contains("nested deeper"));
    }

    #[test]
    fn excerpts_escape_control_characters_and_stay_short() {
        assert_eq!(excerpt("a\u{1b}[2J\nb"), "\"a\\u{1b}[2J\\nb\"");
        let long = excerpt(&"x".repeat(10_000));
        assert!(
            long.len() < 100 && long.ends_with("(10000 bytes)"),
            "{long}"
        );
    }

    #[test]
    fn writes_strings_like_jackson() {
        let mut out = String::new();
        write_string(&mut out, "a\"b\\c\n\u{1}/é");
        assert_eq!(out, r#""a\"b\\c\n\u0001/é""#);
    }
}
