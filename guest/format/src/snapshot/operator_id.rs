//! The OperatorID Flink derives from `uid(U)`: MurmurHash3 x64 128-bit, seed 0, over U's UTF-8
//! bytes (`StreamGraphHasherV2`), the two 64-bit halves each in little-endian byte order.

pub fn from_uid(uid: &str) -> [u8; 16] {
    let (h1, h2) = murmur3_x64_128(uid.as_bytes(), 0);
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&h1.to_le_bytes());
    id[8..].copy_from_slice(&h2.to_le_bytes());
    id
}

fn murmur3_x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let (mut h1, mut h2) = (seed, seed);
    let mut blocks = data.chunks_exact(16);
    for block in &mut blocks {
        let k1 = le_u64(&block[..8]);
        let k2 = le_u64(&block[8..]);
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let tail = blocks.remainder();
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, byte) in tail.iter().enumerate() {
        if i < 8 {
            k1 |= u64::from(*byte) << (8 * i);
        } else {
            k2 |= u64::from(*byte) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let length = data.len() as u64;
    h1 ^= length;
    h2 ^= length;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

/// Up to eight bytes as a little-endian integer.
fn le_u64(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0, |value, &byte| (value << 8) | u64::from(byte))
}

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::metadata::hex;

    #[test]
    fn matches_published_murmur3_x64_128_vectors() {
        // Reference values of MurmurHash3_x64_128 (seed 0) as printed by Guava's
        // `Hashing.murmur3_128().hashString(s, UTF_8)`.
        assert_eq!(hex(&from_uid("")), "00000000000000000000000000000000");
        assert_eq!(
            hex(&from_uid("The quick brown fox jumps over the lazy dog")),
            "6c1b07bc7bbc4be347939ac4a93c437a"
        );
    }
}
