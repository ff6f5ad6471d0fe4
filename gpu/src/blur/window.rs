//! A blur's window and its mean: the window around an output, clipped to
//! the image, and the rounded mean of the samples in it, by a division or
//! by the multiply and shift of a reciprocal.

/// The rounded mean (half up) of `sample(x, y)` over the window of `radius`
/// around (`col`, `row`), clipped to the `width × height` image.
#[inline(always)]
pub(super) fn window_mean(
    col: u32,
    row: u32,
    radius: u32,
    width: u32,
    height: u32,
    sample: impl Fn(u32, u32) -> u8,
) -> u8 {
    let rows = clipped_window(row, radius, height);
    let cols = clipped_window(col, radius, width);
    let mut sum = 0u32;
    for y in rows.clone() {
        for x in cols.clone() {
            sum += sample(x, y) as u32;
        }
    }
    let count = rows.len() as u32 * cols.len() as u32;
    ((sum + count / 2) / count) as u8
}

/// The window of `radius` around `center`, clipped to `0..len`.
///
/// An exclusive range, not `first..=last`: an inclusive range carries a
/// flag for its last step that keeps LLVM from unrolling the loop, which
/// made these kernels half as fast as their CUDA C++ twins.
#[inline(always)]
pub(super) fn clipped_window(center: u32, radius: u32, len: u32) -> core::ops::Range<u32> {
    let first = center.saturating_sub(radius);
    let end = if len - center <= radius {
        len
    } else {
        center + radius + 1
    };
    first..end
}

/// The rounded mean of a sum over `divisor` samples by a multiply and a
/// shift instead of a division, which the GPU has no instruction for (a
/// `u32` division is about twenty instructions). With `k` = ⌊log₂ d⌋ and
/// `m` = ⌈2³¹⁺ᵏ / d⌉ < 2³², `(n · m) >> (31 + k)` is ⌊n / d⌋ for every
/// `n` < 256·d — the largest a rounded sum of bytes reaches — as long as
/// `d` < 2²², which every window of at most 2047 × 2047 samples is: the
/// error `m·d − 2³¹⁺ᵏ` < d times n stays below 2³¹⁺ᵏ (Granlund and
/// Montgomery, "Division by invariant integers using multiplication", 1994).
#[derive(Clone, Copy, Debug)]
pub struct Reciprocal {
    divisor: u32,
    multiplier: u32,
    shift: u32,
}

impl Reciprocal {
    /// The reciprocal of `divisor`, from 1 to 2²² − 1.
    #[inline(always)]
    pub fn new(divisor: u32) -> Self {
        let shift = 31 + (31 - divisor.leading_zeros());
        let multiplier = (1u64 << shift).div_ceil(u64::from(divisor)) as u32;
        Self {
            divisor,
            multiplier,
            shift,
        }
    }

    /// The mean of `sum` over `count` samples, rounded half up, `sum` at
    /// most 255 per sample: by the multiply where `count` is this divisor
    /// (everywhere but near the image's borders, where windows are
    /// clipped), by a division elsewhere.
    #[inline(always)]
    pub fn rounded_mean(self, sum: u32, count: u32) -> u8 {
        if count == self.divisor {
            self.rounded_full_mean(sum)
        } else {
            ((sum + count / 2) / count) as u8
        }
    }

    /// The mean of `sum` over this divisor's count of samples, rounded half
    /// up, `sum` at most 255 per sample: one add, one multiply, one shift.
    #[inline(always)]
    pub fn rounded_full_mean(self, sum: u32) -> u8 {
        let rounded = sum + self.divisor / 2;
        ((u64::from(rounded) * u64::from(self.multiplier)) >> self.shift) as u8
    }
}
