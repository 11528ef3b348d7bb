//! Where JSON values begin and end in a text, found without parsing them: strings, escapes and
//! nesting only (numbers are never read), eight bytes at a time where nothing can change the
//! state. The marker-file splitter cuts marker texts with it.

pub(crate) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        at += 1;
    }
    at
}

/// The end (exclusive) of the JSON value starting at `at`: past its closing bracket or quote,
/// or past a scalar's last character. `None` when the text ends inside it.
///
/// Marker files run to megabytes of offsets, so bytes that change nothing (digits, commas,
/// colons, string contents) are skipped in tight searches rather than one state step each.
pub(crate) fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    loop {
        match *bytes.get(i)? {
            b'"' => i = string_end(bytes, i + 1)?,
            b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                i += 1;
            }
            _ if depth > 0 => i = find(bytes, i + 1, structural_bytes, is_structural)?,
            _ => {
                while bytes.get(i).is_some_and(|b| {
                    !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b',' | b']' | b'}')
                }) {
                    i += 1;
                }
                return Some(i);
            }
        }
        if depth == 0 {
            return Some(i);
        }
    }
}

/// Just past the closing quote of the string whose contents start at `i`.
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i = find(bytes, i, string_bytes, |b| matches!(b, b'"' | b'\\'))?;
        if *bytes.get(i)? == b'"' {
            return Some(i + 1);
        }
        // An escape: the next byte is taken as it is, even a quote.
        i += 2;
    }
}

/// The first index at or after `from` whose byte `is_hit`; eight bytes at a time while `hits`
/// (the same test on a whole word, see `bytes_equal`) finds none.
fn find(
    bytes: &[u8],
    mut from: usize,
    hits: fn(u64) -> u64,
    is_hit: fn(u8) -> bool,
) -> Option<usize> {
    while let Some(word) = bytes
        .get(from..from + 8)
        .and_then(|chunk| <[u8; 8]>::try_from(chunk).ok())
    {
        let found = hits(u64::from_le_bytes(word));
        if found != 0 {
            return Some(from + (found.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    let tail = bytes.get(from..)?;
    tail.iter().position(|b| is_hit(*b)).map(|at| from + at)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Sets the high bit of the bytes of `word` equal to `byte`. Exact up to the first such byte
/// (a borrow can only mark bytes after a true match), which is all `find` reads.
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

fn structural_bytes(word: u64) -> u64 {
    // `[` and `{` differ only in bit 5, as do `]` and `}`.
    let folded = word | (ONES * 0x20);
    bytes_equal(word, b'"') | bytes_equal(folded, b'{') | bytes_equal(folded, b'}')
}

fn is_structural(byte: u8) -> bool {
    matches!(byte, b'"' | b'[' | b']' | b'{' | b'}')
}

fn string_bytes(word: u64) -> u64 {
    bytes_equal(word, b'"') | bytes_equal(word, b'\\')
}
