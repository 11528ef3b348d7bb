//! SHA-256 (FIPS 180-4) as the WebAssembly components compute plan IDs.
//!
//! The `sha2` crate offers two software forms, and each is slow on the JVM host, where Chicory
//! compiles every guest function into one JVM method: the unrolled compression function becomes
//! a method over HotSpot's 8,000-byte limit for JIT compilation and runs in the bytecode
//! interpreter, and the compact one keeps the message schedule in linear memory and loads it
//! through a bounds-checked accessor several times per round. This compression function unrolls
//! 8 rounds inside a loop over the eight groups of 8: the 16 message words of a sliding window
//! and the 8 working variables are locals. Eight rounds, not sixteen: HotSpot also stops
//! inlining calls into a method once it and its inlined callees reach 8,000 bytes of bytecode
//! (`DesiredMethodLimit`), and each rotation and memory access of the compiled guest code is
//! such a call; with sixteen rounds a third of the rotations stayed real calls. Native builds
//! keep `sha2` (with the CPU's SHA instructions); the tests compare the two on every length.

/// The first 32 bits of the fractional parts of the cube roots of the first 64 primes, in the
/// eight groups of 8 rounds (FIPS 180-4 §4.2.2).
const K: [[u32; 8]; 8] = [
    [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5,
    ],
    [
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
        0xc19bf174,
    ],
    [
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc,
        0x76f988da,
    ],
    [
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351,
        0x14292967,
    ],
    [
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
        0x92722c85,
    ],
    [
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585,
        0x106aa070,
    ],
    [
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
        0x682e6ff3,
    ],
    [
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ],
];

/// The initial hash value (FIPS 180-4 §5.3.3).
const INITIAL: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const BLOCK: usize = 64;

/// An incremental SHA-256 computation.
#[derive(Clone)]
pub struct Sha256 {
    state: [u32; 8],
    /// Input not yet compressed: fewer than [`BLOCK`] bytes.
    pending: [u8; BLOCK],
    pending_len: usize,
    /// Message length so far, in bytes.
    length: u64,
}

impl Default for Sha256 {
    fn default() -> Self {
        Self::new()
    }
}

impl Sha256 {
    pub fn new() -> Self {
        Sha256 {
            state: INITIAL,
            pending: [0; BLOCK],
            pending_len: 0,
            length: 0,
        }
    }

    /// Appends `data` to the message.
    pub fn update(&mut self, mut data: &[u8]) {
        self.length = self.length.wrapping_add(data.len() as u64);
        if self.pending_len > 0 {
            let take = (BLOCK - self.pending_len).min(data.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&data[..take]);
            self.pending_len += take;
            data = &data[take..];
            if self.pending_len < BLOCK {
                return;
            }
            compress(&mut self.state, &self.pending);
            self.pending_len = 0;
        }
        let mut blocks = data.chunks_exact(BLOCK);
        for block in &mut blocks {
            if let Ok(block) = block.try_into() {
                compress(&mut self.state, block);
            }
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// The digest of the message: the padding of FIPS 180-4 §5.1.1 (a one bit, zeros, the
    /// length in bits as 64 big-endian bits), then the state in big-endian order.
    pub fn finalize(mut self) -> [u8; 32] {
        let bits = self.length.wrapping_mul(8);
        let mut tail = [0u8; 2 * BLOCK];
        let used = self.pending_len;
        tail[..used].copy_from_slice(&self.pending[..used]);
        tail[used] = 0x80;
        // The length goes into the last 8 bytes of one block, or of two when it does not fit
        // after the one bit.
        let end = if used + 1 + 8 <= BLOCK {
            BLOCK
        } else {
            2 * BLOCK
        };
        tail[end - 8..end].copy_from_slice(&bits.to_be_bytes());
        for block in tail[..end].chunks_exact(BLOCK) {
            if let Ok(block) = block.try_into() {
                compress(&mut self.state, block);
            }
        }
        let mut digest = [0u8; 32];
        for (bytes, word) in digest.chunks_exact_mut(4).zip(self.state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
        digest
    }
}

/// One round (FIPS 180-4 §6.2.2 step 3) on the working variables named in their order for this
/// round; the next round names them rotated by one, so nothing is moved between rounds.
macro_rules! round {
    ($a:ident, $b:ident, $c:ident, $d:ident, $e:ident, $f:ident, $g:ident, $h:ident, $k:expr, $w:expr) => {
        let big_sigma1 = $e.rotate_right(6) ^ $e.rotate_right(11) ^ $e.rotate_right(25);
        // (e & f) ^ (!e & g) and (a & b) ^ (a & c) ^ (b & c) in fewer operations.
        let choose = $g ^ ($e & ($f ^ $g));
        let t1 = $h
            .wrapping_add(big_sigma1)
            .wrapping_add(choose)
            .wrapping_add($k)
            .wrapping_add($w);
        let big_sigma0 = $a.rotate_right(2) ^ $a.rotate_right(13) ^ $a.rotate_right(22);
        let majority = ($a & $b) | ($c & ($a | $b));
        $d = $d.wrapping_add(t1);
        $h = t1.wrapping_add(big_sigma0.wrapping_add(majority));
    };
}

/// Message word `t + $i` (16 to 23) of the window `$x` (words `t..t + 24`), from the words
/// 16, 15, 7 and 2 before it (FIPS 180-4 §6.2.2 step 1).
macro_rules! next_word {
    ($x:ident, $i:expr) => {
        let w15 = $x[$i - 15];
        let w2 = $x[$i - 2];
        let sigma0 = w15.rotate_right(7) ^ w15.rotate_right(18) ^ (w15 >> 3);
        let sigma1 = w2.rotate_right(17) ^ w2.rotate_right(19) ^ (w2 >> 10);
        $x[$i] = $x[$i - 16]
            .wrapping_add(sigma0)
            .wrapping_add($x[$i - 7])
            .wrapping_add(sigma1);
    };
}

/// The compression function over one 64-byte block (FIPS 180-4 §6.2.2).
fn compress(state: &mut [u32; 8], block: &[u8; BLOCK]) {
    // Words t..t + 16 of the message schedule at the start of group t / 8, then the next eight
    // appended: every index is a literal, so all 24 stay locals.
    let mut x = [0u32; 24];
    for (word, bytes) in x.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *state;
    for (group, k) in K.iter().enumerate() {
        round!(a, b, c, d, e, f, g, h, k[0], x[0]);
        round!(h, a, b, c, d, e, f, g, k[1], x[1]);
        round!(g, h, a, b, c, d, e, f, k[2], x[2]);
        round!(f, g, h, a, b, c, d, e, k[3], x[3]);
        round!(e, f, g, h, a, b, c, d, k[4], x[4]);
        round!(d, e, f, g, h, a, b, c, k[5], x[5]);
        round!(c, d, e, f, g, h, a, b, k[6], x[6]);
        round!(b, c, d, e, f, g, h, a, k[7], x[7]);
        // The last two groups use words the window already holds.
        if group < 6 {
            next_word!(x, 16);
            next_word!(x, 17);
            next_word!(x, 18);
            next_word!(x, 19);
            next_word!(x, 20);
            next_word!(x, 21);
            next_word!(x, 22);
            next_word!(x, 23);
        }
        // Slide by eight (literal indices again, not a memmove, so the words stay locals).
        x = [
            x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17], x[18], x[19],
            x[20], x[21], x[22], x[23], 0, 0, 0, 0, 0, 0, 0, 0,
        ];
    }
    for (word, add) in state.iter_mut().zip([a, b, c, d, e, f, g, h]) {
        *word = word.wrapping_add(add);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest as _;

    fn hex(digest: &[u8]) -> String {
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn ours(message: &[u8]) -> String {
        let mut hasher = Sha256::new();
        hasher.update(message);
        hex(&hasher.finalize())
    }

    #[test]
    fn fips_examples() {
        // FIPS 180-2 appendix B: one block, two blocks, and a million 'a's.
        assert_eq!(
            ours(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            ours(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            ours(&vec![b'a'; 1_000_000]),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
        assert_eq!(
            ours(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn same_digest_as_sha2_for_every_length_and_split() {
        // Every padding case (lengths around one and two blocks), fed whole and in pieces that
        // cross block boundaries at every offset.
        let message: Vec<u8> = (0..300u32).map(|i| (i * 31 + 7) as u8).collect();
        for len in 0..message.len() {
            let expected = hex(&sha2::Sha256::digest(&message[..len]));
            assert_eq!(ours(&message[..len]), expected, "length {len}");
            for split in [1, 3, 63, 64, 65] {
                let mut hasher = Sha256::new();
                for piece in message[..len].chunks(split) {
                    hasher.update(piece);
                }
                assert_eq!(
                    hex(&hasher.finalize()),
                    expected,
                    "length {len} in {split}s"
                );
            }
        }
    }
}
