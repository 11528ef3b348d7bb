//! The fast decoders' reader: a position in the text and the JSON steps the decoders take,
//! each giving up (`GiveUp`) on anything it cannot accept outright.

use super::{Fast, GiveUp, Lines, Pairs, PlanParts};
use crate::decimal::{WORD, digits_value, leading_digits};
use crate::json::MAX_MEMBERS;
use crate::offsets::{MAX_OFFSET, MAX_PARTITION, PartitionOffsets};
use crate::plan::{PLAN_SCHEMA_VERSION, Plan};

pub(super) struct Cursor<'a> {
    pub(super) text: &'a str,
    pub(super) bytes: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    pub(super) fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// The next eight bytes as one word (the first is its lowest byte). Past the end of the
    /// text the word holds zeros, which no rule here accepts (not a digit, not whitespace, not
    /// punctuation): reading a word never lets the decoder accept past the text.
    #[inline(always)]
    pub(super) fn word(&self) -> u64 {
        match self.bytes.get(self.pos..self.pos + WORD) {
            Some(bytes) => bytes.try_into().map_or(0, u64::from_le_bytes),
            None => tail_word(self.bytes, self.pos),
        }
    }

    #[inline(always)]
    pub(super) fn whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    #[inline(always)]
    pub(super) fn eat(&mut self, byte: u8) -> Fast<()> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// After a member: `,` (another member follows, `true`) or `}` (the object ends, `false`).
    #[inline(always)]
    pub(super) fn next_member(&mut self) -> Fast<bool> {
        // The file form's `,`, line feed and four spaces before the next partition, and the
        // compact form's `,`, recognised in one word: exactly what the bytes would read.
        let word = self.word();
        if word & 0x00ff_ffff_ffff_ffff == u64::from_le_bytes(*b",\n    \"\0") {
            self.pos += 6;
            return Ok(true);
        }
        if word & 0xffff == u64::from(u16::from_le_bytes(*b",\"")) {
            self.pos += 1;
            return Ok(true);
        }
        let (more, pos) = next_member_bytewise(self.bytes, self.pos)?;
        self.pos = pos;
        Ok(more)
    }

    /// A string without escapes or control characters, as a slice of the input.
    pub(super) fn string(&mut self) -> Fast<&'a str> {
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
    pub(super) fn object(
        &mut self,
        mut member: impl FnMut(&'a str, &mut Self) -> Fast<()>,
    ) -> Fast<()> {
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
    #[inline(always)]
    pub(super) fn offset(&mut self, lines: Option<&mut Lines>) -> Fast<u64> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let start = self.pos;
        // 19 digits hold every `long`; 20 would overflow the accumulator.
        let (value, digits) = self.digits(19, lines)?;
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
    pub(super) fn schema_version(&mut self, expected: u32) -> Fast<()> {
        let plain = matches!(self.peek(), Some(b'0'..=b'9'));
        if plain && self.offset(None)? == u64::from(expected) {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// A canonical partition key: `"0"` or digits without a leading zero, within Kafka's `int`.
    /// (The closing quote and the colon after it are read by [`Cursor::key_end`].)
    #[inline(always)]
    pub(super) fn partition(&mut self, lines: Option<&mut Lines>) -> Fast<u32> {
        self.eat(b'"')?;
        let start = self.pos;
        let (value, digits) = self.digits(10, lines)?;
        if digits == 0 || (digits > 1 && self.bytes[start] == b'0') {
            return Err(GiveUp);
        }
        u32::try_from(value)
            .ok()
            .filter(|p| *p <= MAX_PARTITION)
            .ok_or(GiveUp)
    }

    /// The run of ASCII digits at the cursor, at most `most` of them (more: give up, so at most
    /// 19 and the value cannot overflow): its value and length, its digits appended to `lines`
    /// when given. Eight bytes at a time.
    #[inline(always)]
    pub(super) fn digits(
        &mut self,
        most: usize,
        mut lines: Option<&mut Lines>,
    ) -> Fast<(u64, usize)> {
        let start = self.pos;
        let mut value: u64 = 0;
        loop {
            let word = self.word();
            let run = leading_digits(word);
            let digits = self.pos - start;
            if digits + run > most {
                return Err(GiveUp);
            }
            if run == 0 {
                return Ok((value, digits));
            }
            if digits > 0 {
                // A number of more than eight digits (at most 19: no overflow).
                for _ in 0..run {
                    value *= 10;
                }
            }
            value += digits_value(word, run);
            if let Some(lines) = lines.as_deref_mut() {
                lines.word(word, run);
            }
            self.pos += run;
            if run < WORD {
                return Ok((value, self.pos - start));
            }
        }
    }

    /// After a partition's digits: the closing quote, the colon and the whitespace around it;
    /// the file form's `" : ` and the compact form's `":` recognised in one word (when what
    /// follows is not more whitespace), which is exactly what the bytes below would read.
    #[inline(always)]
    pub(super) fn key_end(&mut self) -> Fast<()> {
        let word = self.word();
        let then = |bytes: u32| !is_whitespace((word >> (8 * bytes)) as u8);
        if word & 0xffff_ffff == u64::from(u32::from_le_bytes(*b"\" : ")) && then(4) {
            self.pos += 4;
            return Ok(());
        }
        if word & 0xffff == u64::from(u16::from_le_bytes(*b"\":")) && then(2) {
            self.pos += 2;
            return Ok(());
        }
        self.pos = key_end_bytewise(self.bytes, self.pos)?;
        Ok(())
    }

    /// The pairs of a non-empty partition→offset object, in ascending partition order, and,
    /// when `with_lines`, their plan ID lines copied from the text if the partitions came in
    /// ascending order.
    pub(super) fn pairs(&mut self, with_lines: bool) -> Fast<(Pairs, Option<Vec<u8>>)> {
        // The loop works on a copy of the cursor and on lines of its own, every helper inlined,
        // so that the position and the lines' length stay in locals: as fields behind a
        // pointer, WebAssembly would store and reload them around every byte written (a byte
        // store may alias anything), and on a JVM host every one of those is a bounds-checked
        // memory access.
        let mut cursor = Cursor {
            text: self.text,
            bytes: self.bytes,
            pos: self.pos,
        };
        cursor.eat(b'{')?;
        cursor.whitespace();
        let mut lines = with_lines.then(|| Lines::for_text(cursor.bytes.len() - cursor.pos));
        // A partition takes at least 6 bytes (`"0":0,`): room for all of them up front, within
        // the member limit, so the vector never grows while reading.
        let room = (cursor.bytes.len() - cursor.pos) / 6 + 1;
        let mut pairs: Vec<(u32, u64)> = Vec::with_capacity(room.min(MAX_MEMBERS));
        let mut ascending = true;
        // Below every partition: the first one is always in order.
        let mut last: i64 = -1;
        loop {
            let partition = cursor.partition(lines.as_mut())?;
            cursor.key_end()?;
            if let Some(lines) = lines.as_mut() {
                lines.byte(b'=');
            }
            let offset = cursor.offset(lines.as_mut())?;
            if let Some(lines) = lines.as_mut() {
                lines.byte(b'\n');
            }
            ascending &= i64::from(partition) > last;
            last = i64::from(partition);
            if pairs.len() == MAX_MEMBERS {
                return Err(GiveUp);
            }
            pairs.push((partition, offset));
            if !cursor.next_member()? {
                break;
            }
        }
        self.pos = cursor.pos;
        if !ascending {
            lines = None;
            pairs.sort_unstable_by_key(|(partition, _)| *partition);
            // A repeated canonical key is a duplicate member name: the reference refuses it.
            if pairs.windows(2).any(|w| w[0].0 == w[1].0) {
                return Err(GiveUp);
            }
        }
        Ok((pairs, lines.and_then(Lines::finish)))
    }

    /// A plan object (the file form or the compact form, any member order).
    pub(super) fn plan(&mut self) -> Fast<Plan> {
        let parts = self.plan_parts()?;
        // Sorted and unique: the map is built in one pass.
        let offsets = PartitionOffsets(parts.offsets.into_iter().collect());
        Plan::from_decoded(
            parts.plan_id,
            parts.source,
            parts.topic,
            parts.topic_id,
            offsets,
            parts.lines.as_deref(),
        )
        .map_err(|_| GiveUp)
    }

    /// The members of a plan object, each exactly once, the schema version 1.
    pub(super) fn plan_parts(&mut self) -> Fast<PlanParts<'a>> {
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
                _ => cursor.pairs(true).map(|o| offsets = Some(o)),
            }
        })?;
        let Some((offsets, lines)) = offsets.filter(|_| seen == 0b11_1111) else {
            return Err(GiveUp);
        };
        Ok(PlanParts {
            plan_id,
            source,
            topic,
            topic_id,
            offsets,
            lines,
        })
    }
}

// The layouts the word patterns above do not recognise, a byte at a time. Functions of their
// own, never inlined: they keep the offsets loop small (HotSpot inlines into a method only up to
// a bytecode budget, see `Cursor::pairs`), and they take the position by value, so the loop's
// cursor stays in locals.

pub(super) fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

pub(super) fn skip_whitespace(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).copied().is_some_and(is_whitespace) {
        pos += 1;
    }
    pos
}

/// [`Cursor::word`] within the last eight bytes of the text: what is left, then zeros.
#[inline(never)]
pub(super) fn tail_word(bytes: &[u8], pos: usize) -> u64 {
    let mut word = [0u8; WORD];
    for (slot, byte) in word.iter_mut().zip(bytes.get(pos..).unwrap_or_default()) {
        *slot = *byte;
    }
    u64::from_le_bytes(word)
}

/// [`Cursor::key_end`]: `"`, whitespace, `:`, whitespace; the position after them.
#[inline(never)]
pub(super) fn key_end_bytewise(bytes: &[u8], pos: usize) -> Fast<usize> {
    if bytes.get(pos) != Some(&b'"') {
        return Err(GiveUp);
    }
    let colon = skip_whitespace(bytes, pos + 1);
    if bytes.get(colon) != Some(&b':') {
        return Err(GiveUp);
    }
    Ok(skip_whitespace(bytes, colon + 1))
}

/// [`Cursor::next_member`]: whether another member follows, and the position after the `,`
/// and the whitespace after it, or after the `}`.
#[inline(never)]
pub(super) fn next_member_bytewise(bytes: &[u8], pos: usize) -> Fast<(bool, usize)> {
    let at = skip_whitespace(bytes, pos);
    match bytes.get(at) {
        Some(b',') => Ok((true, skip_whitespace(bytes, at + 1))),
        Some(b'}') => Ok((false, at + 1)),
        _ => Err(GiveUp),
    }
}
