//! Decimal digits of integers without `core::fmt`: the plan ID hashes a line per partition and
//! the writers render one per partition, so this runs once per partition of every plan. The
//! formatting machinery (a `Write` trait object, a `Formatter`, padding) costs more than the
//! digits themselves, most of all on WebAssembly engines without a JIT-friendly indirect call.

/// Most digits of a `u64`.
pub const MAX_DIGITS: usize = 20;

/// Writes `value` in decimal (the same text as `value.to_string()`) into `out` from `at`, where
/// `out` has room for [`MAX_DIGITS`] bytes, and returns the position after the last digit. Each
/// digit is stored once, in place: no digits buffer copied afterwards.
pub fn write_decimal(out: &mut [u8], at: usize, value: u64) -> usize {
    const EIGHT_DIGITS: u64 = 100_000_000;
    let end = at + digit_count(value);
    let mut pos = end;
    let mut rest = value;
    // Eight digits at a time in 32-bit arithmetic: a 64-bit division by a constant is a real
    // division instruction on 32-bit targets (wasm32), a 32-bit one becomes a multiplication.
    while rest >= EIGHT_DIGITS {
        let mut low = (rest % EIGHT_DIGITS) as u32;
        rest /= EIGHT_DIGITS;
        for _ in 0..8 {
            pos -= 1;
            out[pos] = b'0' + (low % 10) as u8;
            low /= 10;
        }
    }
    // Below 10^8 now, so it fits in 32 bits.
    let mut low = rest as u32;
    loop {
        pos -= 1;
        out[pos] = b'0' + (low % 10) as u8;
        low /= 10;
        if low == 0 {
            return end;
        }
    }
}

/// Appends `value` in decimal to a string (the same text as `value.to_string()`).
pub fn push_decimal_str(out: &mut String, value: u64) {
    let mut digits = [0u8; MAX_DIGITS];
    let end = write_decimal(&mut digits, 0, value);
    for &digit in &digits[..end] {
        out.push(char::from(digit));
    }
}

/// How many decimal digits `value` has (comparisons only: no division, and no overflow-checked
/// multiplication, which wasm32 computes with a 128-bit multiplication routine).
fn digit_count(value: u64) -> usize {
    let mut count = 1;
    let mut bound: u64 = 10;
    while value >= bound {
        count += 1;
        if count == MAX_DIGITS {
            break;
        }
        // bound = 10^count with count at most 19: 10^19 is the largest power of ten a u64 holds.
        bound *= 10;
    }
    count
}

/// Eight bytes of text as one little-endian word: its first byte is the word's lowest.
pub const WORD: usize = 8;

/// Each byte of a word repeated: `0x3030…30` for `b'0'`.
const fn repeated(byte: u8) -> u64 {
    u64::from_le_bytes([byte; WORD])
}

/// How many ASCII digits `word` starts with (0 to 8), eight bytes compared at once: the
/// decoders read numbers a word at a time, which on WebAssembly engines that check every memory
/// access (a JVM host compiles each load into a bounds-checked call) costs one access where a
/// byte at a time costs eight.
#[inline]
pub fn leading_digits(word: u64) -> usize {
    // Digits become 0..=9; a byte is not a digit when that value is 10 or more, which adding
    // 0x76 to its low seven bits carries into its top bit (no carry leaves the byte), or when
    // its top bit is set already.
    let values = word ^ repeated(b'0');
    let low_bits = values & repeated(0x7f);
    let not_digit = (low_bits.wrapping_add(repeated(0x76)) | values) & repeated(0x80);
    (not_digit.trailing_zeros() / 8) as usize
}

/// The value of the first `count` bytes of `word` (1 to 8), which are ASCII digits, the first
/// the most significant: three multiplications instead of one per digit.
#[inline]
pub fn digits_value(word: u64, count: usize) -> u64 {
    debug_assert!((1..=WORD).contains(&count));
    // The digits' values moved to the top bytes; the bytes below them become leading zeros.
    let digits = (word ^ repeated(b'0')) << (8 * (WORD - count));
    // Pairs, then fours, then all eight: each step combines neighbouring lanes (the lower lane
    // holds the more significant part) as high * base + low.
    let pairs = (digits.wrapping_mul(10 << 8 | 1) >> 8) & 0x00ff_00ff_00ff_00ff;
    let fours = (pairs.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_ffff_0000_ffff;
    fours.wrapping_mul(10_000 << 32 | 1) >> 32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_as_to_string_written_in_place() {
        let mut values = vec![0, 1, 9, 10, 99, 100, 99_999_999, 100_000_000, 100_000_001];
        values.extend([
            10_000_000_000_000_000,
            u64::from(u32::MAX),
            i64::MAX as u64,
            u64::MAX,
        ]);
        for power in 0..20 {
            let p = 10u64.pow(power);
            values.extend([p - 1, p, p + 1]);
        }
        for value in values {
            let mut out = [b'x'; 3 + MAX_DIGITS + 3];
            let end = write_decimal(&mut out, 3, value);
            assert_eq!(&out[3..end], value.to_string().as_bytes(), "{value}");
            let untouched = out[..3].iter().chain(&out[end..]).all(|b| *b == b'x');
            assert!(untouched, "{value}: a byte outside its digits was written");
            let mut text = String::from("x");
            push_decimal_str(&mut text, value);
            assert_eq!(text, format!("x{value}"), "{value}");
        }
    }

    #[test]
    fn eight_digits_at_a_time_read_what_a_byte_at_a_time_reads() {
        // Every byte value after every run length of digits, then values of every length.
        for count in 0..WORD {
            for byte in 0..=255u8 {
                let mut text = *b"12345678";
                text[count] = byte;
                let expected = if byte.is_ascii_digit() { WORD } else { count };
                assert_eq!(
                    leading_digits(u64::from_le_bytes(text)),
                    expected,
                    "{count} digits then {byte:#x}"
                );
            }
        }
        for text in [
            "0", "7", "10", "99", "100", "4096", "65535", "123456", "1000000", "9999999",
            "12345678", "99999999", "00000000", "00000001",
        ] {
            let mut bytes = [b'x'; WORD];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            let word = u64::from_le_bytes(bytes);
            assert_eq!(leading_digits(word), text.len(), "{text}");
            assert_eq!(
                digits_value(word, text.len()),
                text.parse::<u64>().unwrap(),
                "{text}"
            );
        }
        // Every value of up to four digits, and a spread of longer ones, at their own lengths.
        let mut values: Vec<u64> = (0..10_000).collect();
        values.extend((0..100_000u64).map(|i| i * 999 + i % 7));
        for value in values {
            let text = value.to_string();
            let mut bytes = [b','; WORD];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            let word = u64::from_le_bytes(bytes);
            assert_eq!(leading_digits(word), text.len(), "{text}");
            assert_eq!(digits_value(word, text.len()), value, "{text}");
        }
    }
}
