//! The strict serde_json baseline of goal 1: the work a careful hand-written Rust reader of the
//! marker format does with the most common JSON library, against which the component is held.
//! Every marker goes through a serde visitor straight into a struct (keys and text borrowed from
//! the input where they have no escapes), with the rules of SPEC §2 that planning relies on:
//! exactly the four fields, each once; schema 1; topic and topic ID strings, not blank, without
//! control characters; a non-empty offsets object of canonical partitions (no sign, no leading
//! zero, at most `i32::MAX`), each once; integer offsets in `[0, i64::MAX]`; nothing after the
//! document; and serde_json's own refusal of lone surrogates and malformed JSON. Then the minima:
//! every marker of one topic (name and ID, not the zero ID) and one partition set.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

pub struct Minima {
    pub topic: String,
    pub topic_id: String,
    /// Ascending partitions with the minimum offset over every marker.
    pub offsets: Vec<(u32, u64)>,
}

struct Marker<'de> {
    topic: Cow<'de, str>,
    topic_id: Cow<'de, str>,
    offsets: Vec<(u32, u64)>,
}

pub fn minima(texts: &[String]) -> Result<Minima, String> {
    let mut result: Option<Minima> = None;
    for (index, text) in texts.iter().enumerate() {
        let refuse = |why: String| format!("marker {}: {why}", index + 1);
        let mut de = serde_json::Deserializer::from_str(text);
        let marker = de
            .deserialize_map(MarkerVisitor)
            .and_then(|marker| de.end().map(|()| marker))
            .map_err(|e| refuse(e.to_string()))?;
        for (name, value) in [("topic", &marker.topic), ("topicId", &marker.topic_id)] {
            if value.trim().is_empty() || value.chars().any(char::is_control) {
                return Err(refuse(format!("{name} is blank or has control characters")));
            }
        }
        if marker.topic_id == "AAAAAAAAAAAAAAAAAAAAAA" {
            return Err(refuse("the zero topic ID".into()));
        }
        let Some(minima) = &mut result else {
            result = Some(Minima {
                topic: marker.topic.into_owned(),
                topic_id: marker.topic_id.into_owned(),
                offsets: marker.offsets,
            });
            continue;
        };
        if minima.topic != marker.topic || minima.topic_id != marker.topic_id {
            return Err(refuse("another topic".into()));
        }
        if minima.offsets.len() != marker.offsets.len() {
            return Err(refuse("another partition set".into()));
        }
        for (slot, (partition, offset)) in minima.offsets.iter_mut().zip(&marker.offsets) {
            if slot.0 != *partition {
                return Err(refuse("another partition set".into()));
            }
            slot.1 = slot.1.min(*offset);
        }
    }
    result.ok_or_else(|| "no markers".to_owned())
}

enum Field {
    SchemaVersion,
    Topic,
    TopicId,
    Offsets,
}

const FIELDS: &[&str] = &["schemaVersion", "topic", "topicId", "offsets"];

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a marker field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "schemaVersion" => Field::SchemaVersion,
                    "topic" => Field::Topic,
                    "topicId" => Field::TopicId,
                    "offsets" => Field::Offsets,
                    other => return Err(de::Error::unknown_field(other, FIELDS)),
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// A string borrowed from the input when it has no escapes.
struct Text<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// A canonical partition key.
struct Partition(u32);

impl<'de> Deserialize<'de> for Partition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PartitionVisitor;
        impl Visitor<'_> for PartitionVisitor {
            type Value = Partition;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a canonical partition number")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Partition, E> {
                let canonical = !key.is_empty()
                    && key.bytes().all(|b| b.is_ascii_digit())
                    && (key == "0" || !key.starts_with('0'));
                match key.parse::<u32>() {
                    Ok(p) if canonical && p <= i32::MAX as u32 => Ok(Partition(p)),
                    _ => Err(E::custom(format!("invalid partition {key:?}"))),
                }
            }
        }
        deserializer.deserialize_str(PartitionVisitor)
    }
}

struct Offsets;

impl<'de> DeserializeSeed<'de> for Offsets {
    type Value = Vec<(u32, u64)>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Offsets {
    type Value = Vec<(u32, u64)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an offsets object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut offsets: Vec<(u32, u64)> = Vec::with_capacity(map.size_hint().unwrap_or(0));
        let mut ascending = true;
        while let Some(Partition(partition)) = map.next_key()? {
            let offset: i64 = map.next_value()?;
            let offset = u64::try_from(offset)
                .map_err(|_| de::Error::custom(format!("negative offset {offset}")))?;
            if let Some(&(last, _)) = offsets.last() {
                ascending &= partition > last;
            }
            offsets.push((partition, offset));
        }
        if !ascending {
            offsets.sort_unstable_by_key(|(p, _)| *p);
            if offsets.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(de::Error::custom("duplicate partition"));
            }
        }
        if offsets.is_empty() {
            return Err(de::Error::custom("empty offsets"));
        }
        Ok(offsets)
    }
}

struct MarkerVisitor;

impl<'de> Visitor<'de> for MarkerVisitor {
    type Value = Marker<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a versioned recovery marker")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Marker<'de>, A::Error> {
        let (mut schema, mut topic, mut topic_id, mut offsets) = (None, None, None, None);
        fn once<T, E: de::Error>(slot: &Option<T>, name: &'static str) -> Result<(), E> {
            match slot {
                Some(_) => Err(E::duplicate_field(name)),
                None => Ok(()),
            }
        }
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::SchemaVersion => {
                    once(&schema, "schemaVersion")?;
                    schema = Some(map.next_value::<u32>()?);
                }
                Field::Topic => {
                    once(&topic, "topic")?;
                    topic = Some(map.next_value::<Text<'de>>()?.0);
                }
                Field::TopicId => {
                    once(&topic_id, "topicId")?;
                    topic_id = Some(map.next_value::<Text<'de>>()?.0);
                }
                Field::Offsets => {
                    once(&offsets, "offsets")?;
                    offsets = Some(map.next_value_seed(Offsets)?);
                }
            }
        }
        match schema {
            Some(1) => {}
            Some(other) => return Err(de::Error::custom(format!("schema {other}"))),
            None => return Err(de::Error::missing_field("schemaVersion")),
        }
        Ok(Marker {
            topic: topic.ok_or_else(|| de::Error::missing_field("topic"))?,
            topic_id: topic_id.ok_or_else(|| de::Error::missing_field("topicId"))?,
            offsets: offsets.ok_or_else(|| de::Error::missing_field("offsets"))?,
        })
    }
}

#[cfg(test)]
#[allow(clippy::panic, reason = "tests: a failure is a failed test")]
mod tests {
    use super::minima;

    const GOOD: &str =
        r#"{"schemaVersion":1,"topic":"t","topicId":"id","offsets":{"0":10,"1":20}}"#;

    #[test]
    fn computes_minima_and_refuses_what_the_format_refuses() {
        let other = r#"{"offsets":{"1":5,"0":30},"topicId":"id","topic":"t","schemaVersion":1}"#;
        let m = minima(&[GOOD.into(), other.into()]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.offsets, vec![(0, 10), (1, 5)]);
        for bad in [
            GOOD.replace("\"topic\":\"t\",", "\"topic\":\"t\",\"topic\":\"t\","),
            GOOD.replace("\"topic\":\"t\",", "\"x\":1,\"topic\":\"t\","),
            GOOD.replace("\"topicId\":\"id\",", ""),
            GOOD.replace("\"1\":20", "\"1\":20,\"1\":21"),
            GOOD.replace("\"1\":20", "\"01\":20"),
            GOOD.replace("\"1\":20", "\"+1\":20"),
            GOOD.replace("\"1\":20", "\"2147483648\":20"),
            GOOD.replace(":20", ":20.0"),
            GOOD.replace(":20", ":-20"),
            GOOD.replace(":20", ":9223372036854775808"),
            GOOD.replace("\"t\"", "\"\\ud800\""),
            GOOD.replace("\"t\"", "\" \""),
            GOOD.replace("\"schemaVersion\":1", "\"schemaVersion\":2"),
            GOOD.replace("{\"0\":10,\"1\":20}", "{}"),
            format!("{GOOD}{{}}"),
        ] {
            assert!(
                minima(std::slice::from_ref(&bad)).is_err(),
                "accepted {bad}"
            );
        }
        let partitions = r#"{"schemaVersion":1,"topic":"t","topicId":"id","offsets":{"0":1}}"#;
        assert!(minima(&[GOOD.into(), partitions.into()]).is_err());
    }
}
