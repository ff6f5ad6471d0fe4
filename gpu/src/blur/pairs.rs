//! Two 16-bit sums to a 32-bit register, so that one add moves both (SIMD
//! within a register): the samples of a word spread into pairs, the pairs'
//! means by one multiply-high each, and the means packed back into a word.
//! The shuffled and in-flight blurs sum their columns and windows this way.

use core::num::{NonZeroU32, NonZeroU64};

use gpu_std::bits::{byte_perm, umulhi};

/// `value` in both 16-bit halves of a register. No half ever goes below
/// zero or past 16 bits, so that no borrow or carry crosses from one into
/// the other.
#[inline(always)]
pub(super) fn splat(value: u32) -> u32 {
    value * 0x1_0001
}

/// The two sums of a register, the first sample's first.
#[inline(always)]
pub(super) fn halves(pair: u32) -> [u32; 2] {
    [pair & 0xffff, pair >> 16]
}

/// Samples 2`half` and 2`half` + 1 of a word's four, each in a 16-bit
/// half (one `PRMT`).
#[inline(always)]
pub(super) fn pair_of(word: u32, half: usize) -> u32 {
    byte_perm(word, 0, if half == 0 { 0x4140 } else { 0x4342 })
}

/// The second sum of `first` and the first of `second`: the pair that
/// starts one sample later (one `PRMT`).
#[inline(always)]
pub(super) fn straddle(first: u32, second: u32) -> u32 {
    byte_perm(first, second, 0x5432)
}

/// ⌈2³² / `divisor`⌉, for a divisor from 2 to 4096: see [`mean_by`].
#[inline(always)]
pub(super) fn multiplier(divisor: NonZeroU32) -> u32 {
    (1u64 << 32).div_ceil(NonZeroU64::from(divisor).get()) as u32
}

/// ⌊`n` / d⌋ for `n` < 256·d by one multiply-high (`IMAD.HI`), with
/// `multiplier` = [`multiplier`]`(d)`: with m = (2³² + e)/d, e < d, the
/// product's error n·e/(d·2³²) stays below 1/d, and so below what the
/// fraction n/d lacks of the next integer, while n·e < 256·d² ≤ 2³², that
/// is for every d up to 4096 — every window of the radii these kernels
/// are compiled for. Without the shift of [`super::Reciprocal`], one
/// instruction a sample.
#[inline(always)]
pub(super) fn mean_by(n: u32, multiplier: u32) -> u32 {
    umulhi(n, multiplier)
}

/// Four means, each below 256, as the bytes of a word, the first lowest.
#[inline(always)]
pub(super) fn pack(means: [u32; 4]) -> u32 {
    let low = byte_perm(means[0], means[1], 0x0040);
    let high = byte_perm(means[2], means[3], 0x0040);
    byte_perm(low, high, 0x5410)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiply-high is the exact quotient for every sum a window of
    /// these radii reaches, clipped or not.
    #[test]
    fn a_multiply_high_divides_every_window_sum() {
        let largest = (2 * super::super::SHUFFLED_MAX_RADIUS + 1).pow(2);
        for divisor in 2..=largest {
            let m = multiplier(NonZeroU32::new(divisor).unwrap());
            for n in 0..256 * divisor {
                assert_eq!(mean_by(n, m), n / divisor, "{n} / {divisor}");
            }
        }
    }

    /// Bytes spread into 16-bit halves, shifted by a sample, a value in
    /// both halves, and means packed back into bytes.
    #[test]
    fn pairs_hold_a_words_samples() {
        let word = 0x0403_0201;
        let pairs = [pair_of(word, 0), pair_of(word, 1)];
        assert_eq!(pairs.map(halves), [[1, 2], [3, 4]]);
        assert_eq!(halves(straddle(pairs[0], pairs[1])), [2, 3]);
        assert_eq!(halves(splat(7)), [7, 7]);
        assert_eq!(pack([1, 2, 3, 4]), word);
    }
}
