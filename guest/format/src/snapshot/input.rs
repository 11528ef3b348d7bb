//! A bounded big-endian reader over one snapshot file. Every read checks the bytes left first,
//! so a truncated or corrupt file ends in a `SnapshotError` naming the file, the byte offset and
//! what was expected, never in a panic or an allocation sized by a number read from the file.

use std::fmt;

/// Where a snapshot file stopped making sense.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotError {
    /// The file as the operator named it (`.../_metadata`, or a state file's path).
    pub file: String,
    /// Byte offset in that file where the unexpected content starts.
    pub offset: usize,
    /// What a reader of Flink's format expected there, and what it found.
    pub problem: String,
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Flink snapshot file {} is not readable at byte {}: {}",
            self.file, self.offset, self.problem
        )
    }
}

pub type Read<T> = std::result::Result<T, SnapshotError>;

/// A cursor over the bytes of one file (or a window of it).
#[derive(Debug, Clone)]
pub struct Input<'a> {
    file: &'a str,
    bytes: &'a [u8],
    /// Offset of `bytes[0]` within the file, so errors report file offsets.
    base: usize,
    pos: usize,
}

impl<'a> Input<'a> {
    pub fn new(file: &'a str, bytes: &'a [u8]) -> Self {
        Input {
            file,
            bytes,
            base: 0,
            pos: 0,
        }
    }

    /// A reader of a window of a file: `bytes` start at file offset `base` (inline state in
    /// `_metadata`), so errors still name offsets of the file.
    pub fn window(file: &'a str, bytes: &'a [u8], base: usize) -> Self {
        Input {
            file,
            bytes,
            base,
            pos: 0,
        }
    }

    /// A reader of the same file starting at `offset` (a position written in the snapshot).
    pub fn at(&self, offset: u64, what: &str) -> Read<Input<'a>> {
        match usize::try_from(offset) {
            Ok(start) if start <= self.bytes.len() => Ok(Input {
                file: self.file,
                bytes: self.bytes,
                base: self.base,
                pos: start,
            }),
            _ => Err(self.error_at(
                self.pos,
                format!(
                    "{what} starts at offset {offset}, beyond the {} bytes of its stream",
                    self.bytes.len()
                ),
            )),
        }
    }

    pub fn file(&self) -> &'a str {
        self.file
    }

    /// The file offset of the next byte.
    pub fn offset(&self) -> usize {
        self.base + self.pos
    }

    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn error(&self, problem: impl Into<String>) -> SnapshotError {
        self.error_at(self.pos, problem)
    }

    fn error_at(&self, pos: usize, problem: impl Into<String>) -> SnapshotError {
        SnapshotError {
            file: self.file.to_owned(),
            offset: self.base + pos,
            problem: problem.into(),
        }
    }

    /// The next `n` bytes, or a truncation error naming `what` was being read.
    pub fn take(&mut self, n: usize, what: &str) -> Read<&'a [u8]> {
        if self.remaining() < n {
            return Err(self.error(format!(
                "expected {what} ({n} bytes) but the file ends after {} more",
                self.remaining()
            )));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    /// Skips `count` items of `width` bytes each (offset tables), without allocating.
    pub fn skip_items(&mut self, count: u64, width: usize, what: &str) -> Read<()> {
        let total = usize::try_from(count)
            .ok()
            .and_then(|count| count.checked_mul(width));
        match total {
            Some(total) if total <= self.remaining() => {
                self.pos += total;
                Ok(())
            }
            _ => Err(self.error(format!(
                "expected {count} {what} of {width} bytes each but only {} bytes remain",
                self.remaining()
            ))),
        }
    }

    pub fn u8(&mut self, what: &str) -> Read<u8> {
        Ok(self.take(1, what)?[0])
    }

    /// The next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self, what: &str) -> Read<[u8; N]> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub fn i32(&mut self, what: &str) -> Read<i32> {
        self.array(what).map(i32::from_be_bytes)
    }

    pub fn i64(&mut self, what: &str) -> Read<i64> {
        self.array(what).map(i64::from_be_bytes)
    }

    /// A Java `int` count that must be `0..` and describe at least `min_width` bytes per item
    /// still in the file: a corrupt count is refused before anything is sized by it.
    pub fn count(&mut self, what: &str, min_width: usize) -> Read<u32> {
        let start = self.pos;
        let value = self.i32(what)?;
        let fits = u32::try_from(value).ok().filter(|&n| {
            (n as usize)
                .checked_mul(min_width)
                .is_some_and(|bytes| bytes <= self.remaining())
        });
        fits.ok_or_else(|| {
            self.error_at(
                start,
                format!(
                    "expected {what} but found {value}, which the {} bytes left cannot hold",
                    self.remaining()
                ),
            )
        })
    }

    /// A string written by Java's `DataOutput.writeUTF`: a u16 length, then modified UTF-8.
    pub fn utf(&mut self, what: &str) -> Read<String> {
        let start = self.pos;
        let length = u16::from_be_bytes(self.array(what)?);
        let bytes = self.take(usize::from(length), what)?;
        decode_modified_utf8(bytes).ok_or_else(|| {
            self.error_at(
                start,
                format!("expected {what} as modified UTF-8 but its bytes do not decode"),
            )
        })
    }
}

/// Java's modified UTF-8 (`writeUTF`): NUL as two bytes, supplementary characters as two
/// three-byte surrogates. A lone surrogate has no Rust `char` and is refused.
fn decode_modified_utf8(bytes: &[u8]) -> Option<String> {
    if bytes.is_ascii() {
        return Some(bytes.iter().map(|&b| char::from(b)).collect());
    }
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (unit, width) = match b >> 4 {
            0..=7 => (u16::from(b), 1),
            12 | 13 => {
                let c = *bytes.get(i + 1)?;
                if c & 0xC0 != 0x80 {
                    return None;
                }
                ((u16::from(b & 0x1F) << 6) | u16::from(c & 0x3F), 2)
            }
            14 => {
                let (c, d) = (*bytes.get(i + 1)?, *bytes.get(i + 2)?);
                if c & 0xC0 != 0x80 || d & 0xC0 != 0x80 {
                    return None;
                }
                (
                    (u16::from(b & 0x0F) << 12) | (u16::from(c & 0x3F) << 6) | u16::from(d & 0x3F),
                    3,
                )
            }
            _ => return None,
        };
        units.push(unit);
        i += width;
    }
    String::from_utf16(&units).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_numbers_and_java_strings() {
        let bytes = [0, 0, 0, 7, 0, 3, b'a', 0xC0, 0x80, 0xFF];
        let mut input = Input::new("_metadata", &bytes);
        assert_eq!(input.i32("version").unwrap(), 7);
        assert_eq!(input.utf("name").unwrap(), "a\0");
        assert_eq!(input.offset(), 9);
        let error = input.i32("count").unwrap_err();
        assert_eq!(
            error.to_string(),
            "Flink snapshot file _metadata is not readable at byte 9: expected count (4 bytes) but the file ends after 1 more"
        );
    }

    #[test]
    fn a_count_larger_than_the_file_is_refused_before_use() {
        let bytes = [0x7F, 0xFF, 0xFF, 0xFF, 0, 0];
        let error = Input::new("f", &bytes).count("operators", 16).unwrap_err();
        assert_eq!(error.offset, 0);
        assert!(error.problem.contains("2147483647"), "{error}");
        let negative = [0xFF, 0xFF, 0xFF, 0xFF];
        assert!(Input::new("f", &negative).count("operators", 1).is_err());
    }

    #[test]
    fn modified_utf8_supplementary_characters_join_and_lone_surrogates_are_refused() {
        // U+1F600 as the surrogates D83D DE00, each in three bytes.
        let emoji = [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80];
        assert_eq!(decode_modified_utf8(&emoji).unwrap(), "\u{1F600}");
        assert!(decode_modified_utf8(&emoji[..3]).is_none());
        assert!(decode_modified_utf8(&[0xC3]).is_none());
    }
}
