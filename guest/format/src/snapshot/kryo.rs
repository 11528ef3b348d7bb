//! One element of the `recoveryMarker` union state, as Flink's generic Kryo serializer writes it
//! (`kryo.writeClassAndObject`, reference tracking on, classes not registered by the job written
//! by name). Only the shapes Flink Agents stores are read: its versioned marker class and a bare
//! `java.util.HashMap<Integer, Long>` (legacy markers). Anything else is reported by its class
//! name, which is what the Java tool's refusal names.
//!
//! Kryo 2.24 (Flink 1.x) and Kryo 5 (Flink 2.x) write these shapes alike except for a map's
//! size (Kryo 5 writes size + 1, keeping 0 for null).

use super::input::{Input, Read};

pub const MARKER_CLASS: &str =
    "org.apache.flink.agents.runtime.actionstate.KafkaActionStateRecoveryMarker";
pub const HASH_MAP_CLASS: &str = "java.util.HashMap";

/// Which Kryo wrote the state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Kryo2,
    Kryo5,
}

/// What one element holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Element {
    /// The versioned marker class, its fields as written (`None` for a null field).
    Versioned {
        schema_version: i32,
        topic: Option<String>,
        topic_id: Option<String>,
        offsets: Option<Vec<(i32, i64)>>,
    },
    /// A bare `java.util.HashMap` of partition to offset.
    Legacy(Vec<(i32, i64)>),
    /// A null element.
    Null,
    /// Any other class, by name.
    Other(String),
}

// Kryo's reference markers and the IDs of its default registrations (`id + 2` when written).
const NULL: u32 = 0;
const NOT_NULL: u32 = 1;
const CLASS_BY_NAME: u32 = 1;
const INTEGER_CLASS: u32 = 2;
const LONG_CLASS: u32 = 9;

const DEFAULT_REGISTRATIONS: [&str; 10] = [
    "java.lang.Integer",
    "java.lang.String",
    "java.lang.Float",
    "java.lang.Boolean",
    "java.lang.Byte",
    "java.lang.Character",
    "java.lang.Short",
    "java.lang.Long",
    "java.lang.Double",
    "void",
];

/// Reads the element that starts where `input` stands.
pub fn read_element(input: &mut Input<'_>, dialect: Dialect) -> Read<Element> {
    let mut reader = Reader {
        dialect,
        names: Vec::new(),
        objects: Vec::new(),
    };
    reader.element(input)
}

/// An object Kryo's reference tracking may point back to.
#[derive(Debug, Clone)]
enum Seen {
    Marker,
    Map(Vec<(i32, i64)>),
    Text(String),
}

struct Reader {
    dialect: Dialect,
    /// Class names by the name IDs Kryo gave them in this element.
    names: Vec<String>,
    /// Objects by reference ID, in the order Kryo met them.
    objects: Vec<Seen>,
}

impl Reader {
    fn element(&mut self, input: &mut Input<'_>) -> Read<Element> {
        let Some(class) = self.class(input)? else {
            return Ok(Element::Null);
        };
        match class.as_str() {
            MARKER_CLASS => {
                self.new_object(input, "the marker")?;
                self.objects.push(Seen::Marker);
                self.marker_fields(input)
            }
            HASH_MAP_CLASS => {
                self.new_object(input, "the legacy marker map")?;
                let slot = self.objects.len();
                self.objects.push(Seen::Map(Vec::new()));
                let entries = self.map_entries(input)?;
                self.objects[slot] = Seen::Map(entries.clone());
                Ok(Element::Legacy(entries))
            }
            _ => Ok(Element::Other(class)),
        }
    }

    /// A class written by `writeClass`: `None` for null, else the class name.
    fn class(&mut self, input: &mut Input<'_>) -> Read<Option<String>> {
        let at = input.clone();
        match varint(input, "a Kryo class ID")? {
            NULL => Ok(None),
            CLASS_BY_NAME => {
                let name_id = varint(input, "a Kryo class name ID")? as usize;
                if let Some(name) = self.names.get(name_id) {
                    return Ok(Some(name.clone()));
                }
                if name_id != self.names.len() {
                    return Err(at.error(format!(
                        "expected Kryo class name ID {} (the next new one) but found {name_id}",
                        self.names.len()
                    )));
                }
                let name = string(input, "a Kryo class name")?
                    .ok_or_else(|| at.error("expected a Kryo class name but found null"))?;
                self.names.push(name.clone());
                Ok(Some(name))
            }
            id => Ok(Some(
                DEFAULT_REGISTRATIONS
                    .get((id - 2) as usize)
                    .map(|name| (*name).to_owned())
                    .unwrap_or_else(|| format!("a class registered with Kryo ID {}", id - 2)),
            )),
        }
    }

    /// The reference marker before a new, non-null object written by `writeObject`.
    fn new_object(&mut self, input: &mut Input<'_>, what: &str) -> Read<()> {
        let at = input.clone();
        match varint(input, "a Kryo reference marker")? {
            NOT_NULL => Ok(()),
            other => Err(at.error(format!(
                "expected Kryo's marker of a new object (1) before {what} but found {other}"
            ))),
        }
    }

    /// The marker's fields in the order Kryo's FieldSerializer writes them: by name.
    fn marker_fields(&mut self, input: &mut Input<'_>) -> Read<Element> {
        let offsets = self.offsets_field(input)?;
        let schema_version = zigzag32(varint(input, "the marker's schemaVersion")?);
        let topic = self.string_field(input, "the marker's topic")?;
        let topic_id = self.string_field(input, "the marker's topicId")?;
        Ok(Element::Versioned {
            schema_version,
            topic,
            topic_id,
            offsets,
        })
    }

    /// The `offsets` field, declared as `Map`: its class, then the map.
    fn offsets_field(&mut self, input: &mut Input<'_>) -> Read<Option<Vec<(i32, i64)>>> {
        let at = input.clone();
        let Some(class) = self.class(input)? else {
            return Ok(None);
        };
        if class != HASH_MAP_CLASS {
            return Err(at.error(format!(
                "expected the marker's offsets as a {HASH_MAP_CLASS} but found {class:?}"
            )));
        }
        let reference_at = input.clone();
        match varint(input, "a Kryo reference marker")? {
            NOT_NULL => {
                let slot = self.objects.len();
                self.objects.push(Seen::Map(Vec::new()));
                let entries = self.map_entries(input)?;
                self.objects[slot] = Seen::Map(entries.clone());
                Ok(Some(entries))
            }
            reference => match self.back_reference(reference) {
                Some(Seen::Map(entries)) => Ok(Some(entries)),
                _ => Err(reference_at.error(format!(
                    "expected the marker's offsets map but found Kryo reference {reference}, which names no earlier map"
                ))),
            },
        }
    }

    fn back_reference(&self, marker: u32) -> Option<Seen> {
        marker
            .checked_sub(2)
            .and_then(|id| self.objects.get(id as usize).cloned())
    }

    /// A `String` field (final type: no class, a reference marker, then the text).
    fn string_field(&mut self, input: &mut Input<'_>, what: &str) -> Read<Option<String>> {
        let at = input.clone();
        match varint(input, "a Kryo reference marker")? {
            NULL => Ok(None),
            NOT_NULL => {
                let text = string(input, what)?;
                let text = text.ok_or_else(|| at.error(format!("expected {what} but found null")))?;
                self.objects.push(Seen::Text(text.clone()));
                Ok(Some(text))
            }
            reference => match self.back_reference(reference) {
                Some(Seen::Text(text)) => Ok(Some(text)),
                _ => Err(at.error(format!(
                    "expected {what} but found Kryo reference {reference}, which names no earlier string"
                ))),
            },
        }
    }

    /// A map of `Integer` to `Long` after its reference marker: the size, then each entry's key
    /// and value, either with their classes (`writeClassAndObject`) or, where the field's generic
    /// types told Kryo, with a not-null marker only.
    fn map_entries(&mut self, input: &mut Input<'_>) -> Read<Vec<(i32, i64)>> {
        let at = input.clone();
        let written = varint(input, "the size of a Kryo map")?;
        let size = match self.dialect {
            Dialect::Kryo2 => written,
            Dialect::Kryo5 => written.checked_sub(1).ok_or_else(|| {
                at.error("expected the size of a Kryo map but found the marker of a null map")
            })?,
        };
        // An entry takes at least four bytes: a marker and a value each for key and value.
        if (size as usize).saturating_mul(4) > input.remaining() {
            return Err(at.error(format!(
                "expected a map of {size} entries but only {} bytes remain",
                input.remaining()
            )));
        }
        let mut entries = Vec::with_capacity(size as usize);
        for _ in 0..size {
            boxed(input, INTEGER_CLASS, "java.lang.Integer partition")?;
            let key = zigzag32(varint(input, "a partition")?);
            boxed(input, LONG_CLASS, "java.lang.Long offset")?;
            let value = zigzag64(varlong(input)?);
            entries.push((key, value));
        }
        Ok(entries)
    }
}

/// The prefix of a boxed map key or value: its registered class ID (`class_id`) or a not-null
/// marker.
fn boxed(input: &mut Input<'_>, class_id: u32, what: &str) -> Read<()> {
    let at = input.clone();
    match varint(input, &format!("the class or not-null marker of a {what}"))? {
        id if id == class_id || id == NOT_NULL => Ok(()),
        NULL => Err(at.error(format!("expected a {what} but found null"))),
        other => Err(at.error(format!(
            "expected a {what} (Kryo class ID {class_id} or not-null marker 1) but found {other}"
        ))),
    }
}

/// Kryo's variable-length int: seven bits a byte, low first, at most five bytes.
fn varint(input: &mut Input<'_>, what: &str) -> Read<u32> {
    let mut result: u32 = 0;
    for i in 0..5 {
        let b = input.u8(what)?;
        result |= u32::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(result);
        }
    }
    Err(input.error(format!("expected the end of {what} within five bytes")))
}

/// Kryo's variable-length long: seven bits a byte for eight bytes, then a whole ninth byte.
fn varlong(input: &mut Input<'_>) -> Read<u64> {
    let mut result: u64 = 0;
    for i in 0..8 {
        let b = input.u8("a Kryo variable-length long")?;
        result |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(result);
        }
    }
    let b = input.u8("a Kryo variable-length long")?;
    Ok(result | (u64::from(b) << 56))
}

fn zigzag32(n: u32) -> i32 {
    ((n >> 1) as i32) ^ -((n & 1) as i32)
}

fn zigzag64(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// Kryo's `writeString`: ASCII with the last byte's high bit set, or a flagged UTF-8 length
/// (0 for null, 1 for empty) followed by that many characters of one to three bytes each.
fn string(input: &mut Input<'_>, what: &str) -> Read<Option<String>> {
    let at = input.clone();
    let first = input.u8(what)?;
    if first & 0x80 == 0 {
        let mut text = String::new();
        let mut b = first;
        loop {
            text.push(char::from(b & 0x7F));
            if b & 0x80 != 0 {
                return Ok(Some(text));
            }
            b = input.u8(what)?;
        }
    }
    // The length: six bits in the first byte (0x40 says more follow), then seven a byte.
    let mut length = u32::from(first & 0x3F);
    if first & 0x40 != 0 {
        let mut shift = 6;
        loop {
            let b = input.u8(what)?;
            length |= u32::from(b & 0x7F) << shift;
            if b & 0x80 == 0 {
                break;
            }
            shift += 7;
            if shift > 27 {
                return Err(at.error(format!("expected the length of {what} within five bytes")));
            }
        }
    }
    let chars = match length {
        0 => return Ok(None),
        1 => return Ok(Some(String::new())),
        n => (n - 1) as usize,
    };
    if chars > input.remaining() {
        return Err(at.error(format!(
            "expected {what} of {chars} characters but only {} bytes remain",
            input.remaining()
        )));
    }
    let mut units = Vec::with_capacity(chars);
    for _ in 0..chars {
        let b = input.u8(what)?;
        let unit = match b >> 4 {
            0..=7 => u16::from(b),
            12 | 13 => (u16::from(b & 0x1F) << 6) | u16::from(input.u8(what)? & 0x3F),
            14 => {
                let c = input.u8(what)?;
                let d = input.u8(what)?;
                (u16::from(b & 0x0F) << 12) | (u16::from(c & 0x3F) << 6) | u16::from(d & 0x3F)
            }
            _ => {
                return Err(input.error(format!(
                    "expected a character of {what} but found byte 0x{b:02x}"
                )));
            }
        };
        units.push(unit);
    }
    String::from_utf16(&units).map(Some).map_err(|_| {
        at.error(format!(
            "expected {what} but its characters hold a lone surrogate"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ascii(text: &str) -> Vec<u8> {
        let mut bytes = text.as_bytes().to_vec();
        *bytes.last_mut().unwrap() |= 0x80;
        bytes
    }

    /// The bytes Kryo writes for a marker, built from the format as documented above.
    fn marker_bytes(dialect: Dialect, topic_id: &str) -> Vec<u8> {
        let mut out = vec![CLASS_BY_NAME as u8, 0];
        out.extend(ascii(MARKER_CLASS));
        out.push(NOT_NULL as u8);
        out.extend([CLASS_BY_NAME as u8, 1]);
        out.extend(ascii(HASH_MAP_CLASS));
        out.push(NOT_NULL as u8);
        out.push(if dialect == Dialect::Kryo5 { 3 } else { 2 });
        // 0 -> 100 with classes, 1 -> 42 with not-null markers.
        out.extend([INTEGER_CLASS as u8, 0, LONG_CLASS as u8, 200, 1]);
        out.extend([NOT_NULL as u8, 2, NOT_NULL as u8, 84]);
        out.push(2); // schemaVersion 1, zigzag
        out.push(NOT_NULL as u8);
        out.extend(ascii("action-state"));
        out.push(NOT_NULL as u8);
        out.extend(ascii(topic_id));
        out
    }

    #[test]
    fn reads_a_versioned_marker_in_both_dialects() {
        for dialect in [Dialect::Kryo2, Dialect::Kryo5] {
            let bytes = marker_bytes(dialect, "ZJxPrd2KS5KQ6e0bxWzD9g");
            let mut input = Input::new("state", &bytes);
            let element = read_element(&mut input, dialect).unwrap();
            assert_eq!(
                element,
                Element::Versioned {
                    schema_version: 1,
                    topic: Some("action-state".into()),
                    topic_id: Some("ZJxPrd2KS5KQ6e0bxWzD9g".into()),
                    offsets: Some(vec![(0, 100), (1, 42)]),
                }
            );
            assert!(input.is_empty());
        }
    }

    #[test]
    fn a_truncated_element_names_the_offset_and_what_was_expected() {
        let bytes = marker_bytes(Dialect::Kryo5, "ZJxPrd2KS5KQ6e0bxWzD9g");
        for cut in 0..bytes.len() {
            let mut input = Input::new("state", &bytes[..cut]);
            let error = read_element(&mut input, Dialect::Kryo5).unwrap_err();
            assert!(error.offset <= cut, "{error}");
            assert!(error.problem.starts_with("expected"), "{error}");
        }
    }

    #[test]
    fn strings_in_kryo_utf8_form_decode() {
        // "é" is not ASCII: flagged length 2 (one char), then the two-byte form.
        let bytes = [0x82, 0xC3, 0xA9];
        let mut input = Input::new("s", &bytes);
        assert_eq!(string(&mut input, "t").unwrap().unwrap(), "é");
        let null = [0x80];
        assert_eq!(string(&mut Input::new("s", &null), "t").unwrap(), None);
    }

    #[test]
    fn other_classes_are_named() {
        let mut bytes = vec![CLASS_BY_NAME as u8, 0];
        bytes.extend(ascii("java.util.TreeMap"));
        let element = read_element(&mut Input::new("s", &bytes), Dialect::Kryo2).unwrap();
        assert_eq!(element, Element::Other("java.util.TreeMap".into()));
        let registered = [12u8];
        let element = read_element(&mut Input::new("s", &registered), Dialect::Kryo2).unwrap();
        assert_eq!(
            element,
            Element::Other("a class registered with Kryo ID 10".into())
        );
    }
}
