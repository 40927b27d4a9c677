//! Deterministic damage to real files: truncations and seeded bit flips.

/// SplitMix64: a tiny seeded generator, so every run damages the same bytes.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Cut points: empty, one byte, inside and just past a binary header (GLB: 12 bytes, then
/// an 8-byte chunk header), the end of the first line, a quarter, half, and all but one byte.
pub fn cut_points(bytes: &[u8]) -> Vec<usize> {
    let len = bytes.len();
    let first_line = bytes.iter().position(|&b| b == b'\n').map_or(len, |p| p + 1);
    let mut cuts = vec![0, 1, 8, 12, 20, 64, first_line, len / 4, len / 2, len.saturating_sub(1)];
    cuts.retain(|&c| c < len);
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// `count` copies of `bytes`, each with 1 to 8 bits flipped. Every other copy flips bits only
/// in the first 4 KiB, where headers and (for GLB) the JSON chunk live, so the damage reaches
/// structure and not only payload.
pub fn bit_flips(bytes: &[u8], seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|i| {
            let mut copy = bytes.to_vec();
            if copy.is_empty() {
                return copy;
            }
            let span = if i % 2 == 0 { copy.len().min(4096) } else { copy.len() };
            for _ in 0..=rng.below(8) {
                let at = rng.below(span);
                copy[at] ^= 1 << rng.below(8);
            }
            copy
        })
        .collect()
}

#[test]
fn mutations_are_deterministic_and_damage_the_input() {
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let a = bit_flips(&bytes, 7, 20);
    assert_eq!(a, bit_flips(&bytes, 7, 20));
    assert!(a.iter().all(|m| m.len() == bytes.len() && *m != bytes));
    assert_eq!(cut_points(&bytes)[0], 0);
    assert!(cut_points(&bytes).iter().all(|&c| c < bytes.len()));
}
