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
}
