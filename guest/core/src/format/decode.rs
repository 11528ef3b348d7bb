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
use crate::json::{MAX_DOCUMENT_BYTES, MAX_MEMBERS};
use crate::marker::{MARKER_SCHEMA_VERSION, Marker, VersionedMarker};
use crate::offsets::{MAX_OFFSET, MAX_PARTITION, PartitionOffsets};
use crate::plan::{PLAN_SCHEMA_VERSION, Plan};

/// The fast decoder gave up; the reference reader decides.
struct GiveUp;

type Fast<T> = Result<T, GiveUp>;

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
                _ => cursor.pairs().map(|o| offsets = Some(o)),
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

struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Fast<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// After a member: `,` (another member follows, `true`) or `}` (the object ends, `false`).
    #[inline]
    fn next_member(&mut self) -> Fast<bool> {
        self.whitespace();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                self.whitespace();
                Ok(true)
            }
            Some(b'}') => {
                self.pos += 1;
                Ok(false)
            }
            _ => Err(GiveUp),
        }
    }

    /// A string without escapes or control characters, as a slice of the input.
    fn string(&mut self) -> Fast<&'a str> {
        self.eat(b'"')?;
        let start = self.pos;
        loop {
            match self.peek() {
                Some(b'"') => break,
                Some(byte) if byte >= 0x20 && byte != b'\\' => self.pos += 1,
                _ => return Err(GiveUp),
            }
        }
        // Both ends are ASCII quotes, so the slice lies on character boundaries.
        let text = self.text.get(start..self.pos).ok_or(GiveUp)?;
        self.pos += 1;
        Ok(text)
    }

    /// A non-empty object: `member` reads each value after its name and the colon.
    fn object(&mut self, mut member: impl FnMut(&'a str, &mut Self) -> Fast<()>) -> Fast<()> {
        self.eat(b'{')?;
        self.whitespace();
        loop {
            let name = self.string()?;
            self.whitespace();
            self.eat(b':')?;
            self.whitespace();
            member(name, self)?;
            if !self.next_member()? {
                return Ok(());
            }
        }
    }

    /// An integer literal without fraction or exponent, within Kafka's `long` and not negative
    /// (`-0` reads as 0, as in the reference reader).
    #[inline]
    fn offset(&mut self) -> Fast<u64> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(byte @ b'0'..=b'9') = self.peek() {
            // 19 digits hold every `long`; 20 would overflow the accumulator.
            if self.pos - start == 19 {
                return Err(GiveUp);
            }
            value = value * 10 + u64::from(byte - b'0');
            self.pos += 1;
        }
        let digits = self.pos - start;
        let leading_zero = digits > 1 && self.bytes[start] == b'0';
        if digits == 0 || leading_zero || value > MAX_OFFSET || (negative && value != 0) {
            return Err(GiveUp);
        }
        if let Some(b'.' | b'e' | b'E') = self.peek() {
            return Err(GiveUp);
        }
        Ok(value)
    }

    /// The schema version, written as a plain non-negative integer (`1`, never `1.0` or `-0`).
    fn schema_version(&mut self, expected: u32) -> Fast<()> {
        let plain = matches!(self.peek(), Some(b'0'..=b'9'));
        if plain && self.offset()? == u64::from(expected) {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// A canonical partition key: `"0"` or digits without a leading zero, within Kafka's `int`.
    #[inline]
    fn partition(&mut self) -> Fast<u32> {
        self.eat(b'"')?;
        let start = self.pos;
        let mut value: u64 = 0;
        while let Some(byte @ b'0'..=b'9') = self.peek() {
            if self.pos - start == 10 {
                return Err(GiveUp);
            }
            value = value * 10 + u64::from(byte - b'0');
            self.pos += 1;
        }
        let digits = self.pos - start;
        if digits == 0 || (digits > 1 && self.bytes[start] == b'0') {
            return Err(GiveUp);
        }
        self.eat(b'"')?;
        u32::try_from(value)
            .ok()
            .filter(|p| *p <= MAX_PARTITION)
            .ok_or(GiveUp)
    }

    /// A non-empty partition→offset object; partitions in any order, each once.
    fn offsets(&mut self) -> Fast<PartitionOffsets> {
        // Sorted and unique: the map is built in one pass.
        Ok(PartitionOffsets(self.pairs()?.into_iter().collect()))
    }

    /// The pairs of a non-empty partition→offset object, in ascending partition order.
    fn pairs(&mut self) -> Fast<Vec<(u32, u64)>> {
        self.eat(b'{')?;
        self.whitespace();
        // A partition takes at least 6 bytes (`"0":0,`): room for all of them up front, within
        // the member limit, so the vector never grows while reading.
        let room = (self.bytes.len() - self.pos) / 6 + 1;
        let mut pairs: Vec<(u32, u64)> = Vec::with_capacity(room.min(MAX_MEMBERS));
        let mut ascending = true;
        loop {
            let partition = self.partition()?;
            self.whitespace();
            self.eat(b':')?;
            self.whitespace();
            let offset = self.offset()?;
            if let Some(&(last, _)) = pairs.last() {
                ascending &= partition > last;
            }
            if pairs.len() == MAX_MEMBERS {
                return Err(GiveUp);
            }
            pairs.push((partition, offset));
            if !self.next_member()? {
                break;
            }
        }
        if !ascending {
            pairs.sort_unstable_by_key(|(partition, _)| *partition);
            // A repeated canonical key is a duplicate member name: the reference refuses it.
            if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(GiveUp);
            }
        }
        Ok(pairs)
    }

    /// A plan object (the file form or the compact form, any member order).
    fn plan(&mut self) -> Fast<Plan> {
        let mut seen = 0u8;
        let (mut plan_id, mut source, mut topic, mut topic_id) = ("", "", "", "");
        let mut offsets = None;
        self.object(|name, cursor| {
            let bit = match name {
                "schemaVersion" => 1,
                "planId" => 2,
                "sourceRecoveryPoint" => 4,
                "topic" => 8,
                "topicId" => 16,
                "offsets" => 32,
                _ => return Err(GiveUp),
            };
            if seen & bit != 0 {
                return Err(GiveUp);
            }
            seen |= bit;
            match bit {
                1 => cursor.schema_version(PLAN_SCHEMA_VERSION),
                2 => cursor.string().map(|s| plan_id = s),
                4 => cursor.string().map(|s| source = s),
                8 => cursor.string().map(|s| topic = s),
                16 => cursor.string().map(|s| topic_id = s),
                _ => cursor.offsets().map(|o| offsets = Some(o)),
            }
        })?;
        let Some(offsets) = offsets.filter(|_| seen == 0b11_1111) else {
            return Err(GiveUp);
        };
        Plan::from_fields(
            PLAN_SCHEMA_VERSION,
            plan_id,
            source,
            topic,
            topic_id,
            offsets,
        )
        .map_err(|_| GiveUp)
    }
}
