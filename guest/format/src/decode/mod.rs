//! Fast decoders for the hot paths: markers, plans and control records read straight from the
//! text into their structs, borrowing the input, with no intermediate JSON tree.
//!
//! They decode only the documents they can accept outright: the canonical shapes of SPEC §2 in
//! any member order, with any JSON whitespace, but without escapes in strings. Anything else —
//! a syntax error, an unknown, missing or repeated field, a wrong type, a non-canonical
//! partition, an escape, a value out of range — makes them give up (`None`), and the callers
//! then read the text with the reference reader (`json::parse` and the `from_value` functions),
//! which accepts or refuses it and, when it refuses, writes the message. So the fast decoders
//! never decide a refusal or its wording; they must only never accept what the reference
//! refuses, and produce the same value when both accept. `fuzz/checks.rs` checks exactly that
//! on every input (also replayed by `tests/fuzz_corpus.rs`), and `tests/decode.rs` on the
//! rules of SPEC §2 one by one.

use crate::control::{CONTROL_SCHEMA_VERSION, ControlRecord, Status};
use crate::decimal::WORD;
use crate::json::MAX_DOCUMENT_BYTES;
use crate::marker::{MARKER_SCHEMA_VERSION, Marker, VersionedMarker};
use crate::offsets::PartitionOffsets;
use crate::plan::{ListedPlan, Plan};

mod cursor;

use cursor::Cursor;

/// The fast decoder gave up; the reference reader decides.
struct GiveUp;

type Fast<T> = Result<T, GiveUp>;

/// Partition→offset pairs, ascending by partition, each partition once.
type Pairs = Vec<(u32, u64)>;

/// The plan ID's partition lines (`{p}={o}\n` in ascending partition order, SPEC §2) of the
/// offsets being read, copied from the text as it is read: an accepted plan spells every
/// partition and offset canonically (no sign but in `-0`, which is not copied; no leading
/// zero), which is exactly how the ID hashes them, so no digits are written again from the
/// values. When the partitions are not in ascending order the lines are not used.
struct Lines {
    /// Zero-filled; a word longer than the text the lines are copied from, so a digit word can
    /// always be stored whole (its bytes after the digits are overwritten by what follows).
    bytes: Vec<u8>,
    len: usize,
    /// False once a write did not fit (never for an accepted offsets object; checked anyway).
    complete: bool,
}

impl Lines {
    /// Room for the lines of an offsets object whose text is at most `text_len` bytes: a
    /// member's text is always longer than its line (the line drops two quotes, the colon and
    /// a comma or brace, and adds only `=` and the line feed).
    fn for_text(text_len: usize) -> Lines {
        Lines {
            bytes: vec![0; text_len + WORD],
            len: 0,
            complete: true,
        }
    }

    /// Appends the first `count` bytes of `word` (stored whole).
    #[inline(always)]
    fn word(&mut self, word: u64, count: usize) {
        match self.bytes.get_mut(self.len..self.len + WORD) {
            Some(room) => {
                room.copy_from_slice(&word.to_le_bytes());
                self.len += count;
            }
            None => self.complete = false,
        }
    }

    #[inline(always)]
    fn byte(&mut self, byte: u8) {
        match self.bytes.get_mut(self.len) {
            Some(room) => {
                *room = byte;
                self.len += 1;
            }
            None => self.complete = false,
        }
    }

    /// The lines, when they are complete.
    fn finish(mut self) -> Option<Vec<u8>> {
        self.bytes.truncate(self.len);
        self.complete.then_some(self.bytes)
    }
}

/// A versioned marker, when the text is one the fast decoder can accept.
pub fn marker(text: &str) -> Option<Marker> {
    let parts = marker_parts(text)?;
    let offsets = PartitionOffsets(parts.offsets.into_iter().collect());
    VersionedMarker::new(parts.topic, parts.topic_id, offsets)
        .map(Marker::Versioned)
        .ok()
}

/// The parts of a versioned marker: topic and topic ID (borrowed, not yet checked as text) and
/// its offsets in ascending partition order, for planning without building a map per marker.
pub(crate) struct MarkerParts<'a> {
    pub topic: &'a str,
    pub topic_id: &'a str,
    pub offsets: Vec<(u32, u64)>,
}

pub(crate) fn marker_parts(text: &str) -> Option<MarkerParts<'_>> {
    document(text, |cursor| {
        let mut seen = 0u8;
        let (mut topic, mut topic_id, mut offsets) = ("", "", None);
        cursor.object(|name, cursor| {
            let bit = match name {
                "schemaVersion" => 1,
                "topic" => 2,
                "topicId" => 4,
                "offsets" => 8,
                // Legacy markers and everything else: the reference reader decides.
                _ => return Err(GiveUp),
            };
            if seen & bit != 0 {
                return Err(GiveUp);
            }
            seen |= bit;
            match bit {
                1 => cursor.schema_version(MARKER_SCHEMA_VERSION),
                2 => cursor.string().map(|s| topic = s),
                4 => cursor.string().map(|s| topic_id = s),
                _ => cursor.pairs(false).map(|(o, _)| offsets = Some(o)),
            }
        })?;
        match offsets {
            Some(offsets) if seen == 0b1111 => Ok(MarkerParts {
                topic,
                topic_id,
                offsets,
            }),
            _ => Err(GiveUp),
        }
    })
}

/// A plan whose ID matches its contents, when the text is one the fast decoder can accept.
pub fn plan(text: &str) -> Option<Plan> {
    document(text, Cursor::plan)
}

/// [`plan`] with the offsets as a list (see [`ListedPlan`]): no map built.
pub fn listed_plan(text: &str) -> Option<ListedPlan> {
    document(text, |cursor| {
        let parts = cursor.plan_parts()?;
        ListedPlan::from_decoded(
            parts.plan_id,
            parts.source,
            parts.topic,
            parts.topic_id,
            parts.offsets,
            parts.lines.as_deref(),
        )
        .map_err(|_| GiveUp)
    })
}

/// A plan object's members as decoded, not yet checked together.
struct PlanParts<'a> {
    plan_id: &'a str,
    source: &'a str,
    topic: &'a str,
    topic_id: &'a str,
    /// Ascending by partition, each once.
    offsets: Vec<(u32, u64)>,
    /// The plan ID's partition lines, when copied from the text.
    lines: Option<Vec<u8>>,
}

/// A control-record value with a valid embedded plan, when the fast decoder can accept it.
pub fn control_record(text: &str) -> Option<ControlRecord> {
    document(text, |cursor| {
        let mut seen = 0u8;
        let (mut status, mut plan) = (None, None);
        cursor.object(|name, cursor| {
            let bit = match name {
                "schemaVersion" => 1,
                "status" => 2,
                "plan" => 4,
                _ => return Err(GiveUp),
            };
            if seen & bit != 0 {
                return Err(GiveUp);
            }
            seen |= bit;
            match bit {
                1 => cursor.schema_version(CONTROL_SCHEMA_VERSION),
                2 => {
                    status = Some(match cursor.string()? {
                        "COMMITTED" => Status::Committed,
                        "APPLIED" => Status::Applied,
                        _ => return Err(GiveUp),
                    });
                    Ok(())
                }
                _ => cursor.plan().map(|p| plan = Some(p)),
            }
        })?;
        match (status, plan) {
            (Some(status), Some(plan)) if seen == 0b111 => Ok(ControlRecord { status, plan }),
            _ => Err(GiveUp),
        }
    })
}

/// Exactly one document: JSON whitespace around it, nothing else after it, within the size limit.
fn document<'a, T>(text: &'a str, read: impl FnOnce(&mut Cursor<'a>) -> Fast<T>) -> Option<T> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return None;
    }
    let mut cursor = Cursor {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    cursor.whitespace();
    let value = read(&mut cursor).ok()?;
    cursor.whitespace();
    (cursor.pos == cursor.bytes.len()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fields::write_offsets;
    use crate::offsets::{MAX_OFFSET, MAX_PARTITION};

    /// The offsets object of `text` read as `Plan::parse` reads a plan's: its lines, if any.
    fn lines_of(text: &str) -> Option<String> {
        let mut cursor = Cursor {
            text,
            bytes: text.as_bytes(),
            pos: 0,
        };
        let (_, lines) = cursor.pairs(true).ok()?;
        assert_eq!(cursor.pos, text.len(), "{text}");
        lines.map(|bytes| String::from_utf8(bytes).unwrap_or_default())
    }

    #[test]
    fn lines_copied_from_the_text_are_the_lines_the_plan_id_hashes() {
        // Partitions and offsets of every length, each form, eight bytes left or fewer.
        let mut offsets = PartitionOffsets::new();
        let mut offset = 0u64;
        for partition in [
            0,
            1,
            9,
            10,
            99,
            4096,
            65535,
            1_000_000,
            123_456_789,
            MAX_PARTITION,
        ] {
            offsets.insert(partition, offset);
            offset = offset * 10 + 7;
        }
        for digits in 1..=19u32 {
            offsets.insert(
                2_000_000_000 + digits,
                10u64.pow(digits - 1) + u64::from(digits),
            );
        }
        offsets.insert(2_100_000_000, MAX_OFFSET);
        let expected: String = offsets.iter().map(|(p, o)| format!("{p}={o}\n")).collect();
        for indent in [Some("  "), None] {
            let mut text = String::new();
            write_offsets(&mut text, &offsets, indent);
            assert_eq!(
                lines_of(&text).as_deref(),
                Some(expected.as_str()),
                "{text}"
            );
        }
        // `-0` is the offset 0, whose line says `0`; other layouts take the bytes below.
        assert_eq!(
            lines_of("{\"0\":-0,\"7\" :\t12 , \"8\"\n:\n-0}").as_deref(),
            Some("0=0\n7=12\n8=0\n")
        );
        assert_eq!(
            lines_of("{\"3\" : 5,\n    \"1\" : 20}"),
            None,
            "not ascending"
        );
    }
}
