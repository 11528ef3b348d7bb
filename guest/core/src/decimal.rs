//! Decimal digits of integers without `core::fmt`: the plan ID hashes a line per partition and
//! the writers render one per partition, so this runs once per partition of every plan. The
//! formatting machinery (a `Write` trait object, a `Formatter`, padding) costs more than the
//! digits themselves, most of all on WebAssembly engines without a JIT-friendly indirect call.

/// Most digits of a `u64`.
const MAX_DIGITS: usize = 20;

/// Appends `value` in decimal (the same text as `value.to_string()`).
pub fn push_decimal(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; MAX_DIGITS];
    let start = write_digits(&mut digits, value);
    // Byte by byte: a slice copy of a few bytes becomes a `memory.copy` call on wasm32, which
    // costs more than the copy on engines that implement it out of line (Chicory).
    for &digit in &digits[start..] {
        out.push(digit);
    }
}

/// Appends `value` in decimal to a string (the same text as `value.to_string()`).
pub fn push_decimal_str(out: &mut String, value: u64) {
    let mut digits = [0u8; MAX_DIGITS];
    let start = write_digits(&mut digits, value);
    for &digit in &digits[start..] {
        out.push(char::from(digit));
    }
}

/// Writes the digits of `value` right-aligned into `digits`; returns where they start.
fn write_digits(digits: &mut [u8; MAX_DIGITS], mut value: u64) -> usize {
    const EIGHT_DIGITS: u64 = 100_000_000;
    let mut at = MAX_DIGITS;
    // Eight digits at a time in 32-bit arithmetic: a 64-bit division by a constant is a real
    // division instruction on 32-bit targets (wasm32), a 32-bit one becomes a multiplication.
    while value >= EIGHT_DIGITS {
        let mut low = (value % EIGHT_DIGITS) as u32;
        value /= EIGHT_DIGITS;
        for _ in 0..8 {
            at -= 1;
            digits[at] = b'0' + (low % 10) as u8;
            low /= 10;
        }
    }
    // Below 10^8 now, so it fits in 32 bits.
    let mut low = value as u32;
    loop {
        at -= 1;
        digits[at] = b'0' + (low % 10) as u8;
        low /= 10;
        if low == 0 {
            return at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_as_to_string() {
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
            let mut bytes = Vec::new();
            push_decimal(&mut bytes, value);
            assert_eq!(bytes, value.to_string().as_bytes(), "{value}");
            let mut text = String::from("x");
            push_decimal_str(&mut text, value);
            assert_eq!(text, format!("x{value}"), "{value}");
        }
    }
}
