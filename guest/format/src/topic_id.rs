//! Kafka topic IDs as text. Kafka writes a topic's 16-byte UUID in URL-safe base64 without
//! padding, 22 characters (`Uuid.toString()`, `kafka-topics.sh --describe`); some clients print
//! the same bytes in standard base64 (`+`, `/`, `==`). The ID is part of a plan's hashed
//! contents and is compared character for character with the live topic's, so an ID in the
//! other spelling is refused where it is read, naming its Kafka form, and never rewritten.
//!
//! Other IDs (SPEC's test vector uses `topic-id`) are not refused when read: plans stay
//! interchangeable with the Java tool. Where one meets a live topic, it is named for what it is
//! (`is_kafka_form`), not reported as a recreated topic.

/// Kafka's all-zero topic UUID in its 22-character form: "unknown", never an identity.
pub const ZERO_TOPIC_ID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// Why a live topic answers with the all-zero ID: Kafka assigns topic
/// IDs from 2.8 on, and only once every broker's inter.broker.protocol.version is 2.8 or later.
/// Every message about such an answer says this, so the operator upgrades the cluster instead
/// of looking for a recreated topic.
pub const NO_TOPIC_IDS: &str = "the broker reports no topic IDs (Kafka 2.8 or later with inter.broker.protocol.version 2.8 or later is needed)";

const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Characters of a 16-byte value in unpadded base64: 21 full digits and one of 2 bits.
const DIGITS: usize = 22;

/// Whether `id` is a topic ID as Kafka writes it: 22 characters of URL-safe base64 that decode
/// to 16 bytes (the last character's unused bits zero, as Kafka's encoder leaves them).
pub fn is_kafka_form(id: &str) -> bool {
    id.len() == DIGITS
        && !id.contains(['+', '/'])
        && decode(id).is_some_and(|bytes| kafka_form(&bytes) == id)
}

/// The Kafka form of `id` when `id` spells a 16-byte topic ID the way Kafka does not: in
/// standard base64 (`+` or `/`) or padded (`==`). `None` for any other text.
pub fn kafka_form_of(id: &str) -> Option<String> {
    let foreign = id.contains(['+', '/']) || id.ends_with("==");
    if !foreign {
        return None;
    }
    decode(id.strip_suffix("==").unwrap_or(id)).map(|bytes| kafka_form(&bytes))
}

/// The refusal of an ID in the other spelling: `subject`'s topicId field, its Kafka form, and
/// `fix` (what to do about it in this input). `None` when the ID is not such a spelling.
pub fn refuse_foreign_spelling(subject: &str, id: &str, fix: &str) -> Option<String> {
    let kafka = kafka_form_of(id)?;
    Some(format!(
        "{subject} topicId {id} is a Kafka topic ID written in standard or padded base64, as some clients print it; Kafka writes the same 16 bytes as {kafka} (URL-safe base64 without padding, as kafka-topics.sh --describe prints it), the form it is compared with: {fix}"
    ))
}

/// The 16 bytes of 22 base64 digits of either alphabet: 21 full digits, then the top two bits
/// of the 22nd, whose low four bits must be zero (as every encoder leaves them).
fn decode(digits: &str) -> Option<[u8; 16]> {
    if digits.len() != DIGITS {
        return None;
    }
    let values: Vec<u8> = digits.bytes().map(value).collect::<Option<_>>()?;
    let (last, full) = values.split_last()?;
    if last & 0b1111 != 0 {
        return None;
    }
    let mut number: u128 = 0;
    for digit in full {
        number = (number << 6) | u128::from(*digit);
    }
    number = (number << 2) | u128::from(last >> 4);
    Some(number.to_be_bytes())
}

/// A base64 digit's value in either alphabet (`+`/`-` are 62, `/`/`_` are 63).
fn value(byte: u8) -> Option<u8> {
    match byte {
        b'A'..=b'Z' => Some(byte - b'A'),
        b'a'..=b'z' => Some(byte - b'a' + 26),
        b'0'..=b'9' => Some(byte - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    }
}

/// Kafka's text form of a topic UUID: URL-safe base64 without padding.
fn kafka_form(bytes: &[u8; 16]) -> String {
    let number = u128::from_be_bytes(*bytes);
    (0..DIGITS)
        .map(|i| {
            // Digit i holds bits 127-6i .. 122-6i; the last one holds bits 1..0, shifted up.
            let shift = 128i32 - 6 * (i as i32 + 1);
            let digit = if shift >= 0 {
                (number >> shift) & 63
            } else {
                (number << -shift) & 63
            };
            char::from(URL_SAFE[digit as usize])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's `Uuid.toString()` of 0xfdd0b1… and the same bytes in standard base64.
    const KAFKA: &str = "_dCxXk8LR-qHr1Z2nQkB9w";
    const STANDARD: &str = "/dCxXk8LR+qHr1Z2nQkB9w==";

    #[test]
    fn kafkas_own_form_is_recognised_and_round_trips() {
        assert!(is_kafka_form(KAFKA));
        assert!(is_kafka_form("AAAAAAAAAAAAAAAAAAAAAA"));
        assert!(is_kafka_form("_____________________w"));
        assert_eq!(kafka_form(&[0xff; 16]), "_____________________w");
        assert_eq!(kafka_form(&decode(KAFKA).unwrap()), KAFKA);
        for other in [
            "topic-id",
            "",
            STANDARD,
            "_____________________x",
            "ygFlQI50RqmgPT_6YH-HZw==",
        ] {
            assert!(!is_kafka_form(other), "{other}");
        }
    }

    #[test]
    fn the_standard_or_padded_spelling_of_an_id_names_its_kafka_form() {
        assert_eq!(kafka_form_of(STANDARD).as_deref(), Some(KAFKA));
        assert_eq!(
            kafka_form_of("/dCxXk8LR+qHr1Z2nQkB9w").as_deref(),
            Some(KAFKA)
        );
        assert_eq!(
            kafka_form_of("ygFlQI50RqmgPT_6YH-HZw==").as_deref(),
            Some("ygFlQI50RqmgPT_6YH-HZw")
        );
        // Kafka's own form, other texts, and slashes that are no 16-byte value are not it.
        for other in [
            KAFKA,
            "topic-id",
            "a/b",
            "abc==",
            "/dCxXk8LR+qHr1Z2nQkB9x==",
        ] {
            assert_eq!(kafka_form_of(other), None, "{other}");
        }
        let sentence = refuse_foreign_spelling("Cleanup plan", STANDARD, "plan again").unwrap();
        assert!(
            sentence.starts_with("Cleanup plan topicId /dCx"),
            "{sentence}"
        );
        assert!(
            sentence.contains(&format!("as {KAFKA} (URL-safe")),
            "{sentence}"
        );
        assert!(sentence.ends_with(": plan again"), "{sentence}");
    }
}
