//! What more than one gemv kernel is built from: the call's parameters
//! and y's update, a warp's
//! butterfly sum, and the elements a vector load cannot read, one by one.

use gpu_std::Real;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::warp::{self, ALL_LANES, shfl_xor_sync};

/// One gemv call, y = αAx + βy with A m×n: the parameters every kernel
/// of the family takes, in one value its generic body receives.
#[derive(Clone, Copy)]
pub(super) struct Gemv<T> {
    pub alpha: T,
    pub a: Global<T>,
    pub x: Global<T>,
    pub beta: T,
    pub y: GlobalMut<T>,
    pub m: u32,
    pub n: u32,
}

impl<T: Real> Gemv<T> {
    /// y[row] = α·dot + β·y[row], without reading y[row] when β = 0.
    ///
    /// # Safety
    /// `row` is inside y.
    #[inline(always)]
    pub(super) unsafe fn update(self, row: u32, dot: T) {
        let Self { alpha, beta, y, .. } = self;
        let row = row as usize;
        // SAFETY: by this function's contract.
        unsafe {
            if beta == T::ZERO {
                y.write(row, alpha * dot);
            } else {
                y.write(row, alpha.mul_add(dot, beta * y.read(row)));
            }
        }
    }
}

/// The sum of `value` over the lanes whose index differs from this one's
/// only in bits `lowest` (a power of two) and up, in each of them: one
/// butterfly step per bit, from bit 16 down, each adding the value of the
/// lane across that bit. `lowest` = 1 sums the whole warp.
#[inline(always)]
pub(super) fn butterfly_sum<T: Real>(mut value: T, lowest: u32) -> T {
    let mut lane_mask = warp::SIZE / 2;
    while lane_mask >= lowest {
        value = value + shfl_xor_sync(ALL_LANES, value, lane_mask);
        lane_mask /= 2;
    }
    value
}

/// Elements `index..index + count` of `buffer`, one load each, and zeros
/// for the rest of a vector: for where a vector load is not aligned, or
/// would run past the end.
///
/// # Safety
/// The `count.min(VECTOR_LEN)` elements lie inside the buffer.
#[inline(always)]
pub(super) unsafe fn read_each<T: Real>(buffer: Global<T>, index: usize, count: u32) -> T::Vector {
    let mut values = T::Vector::default();
    for k in 0..T::VECTOR_LEN {
        if k < count {
            // SAFETY: by this function's contract.
            values.as_mut()[k as usize] = unsafe { buffer.read(index + k as usize) };
        }
    }
    values
}
