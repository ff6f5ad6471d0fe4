//! The first rung: fragments loaded by each lane from global memory.

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::mma::{Accumulator, FragmentA, FragmentB, Pair, mma_sync};
use gpu_std::{bf16, thread::*};

use super::geometry::{MMA_COLS, MMA_K, MMA_ROWS};

/// Each warp of a 2×2 block multiplies its 16×8 tile of C along the whole
/// of k, a lane loading exactly the elements the fragment layouts give it
/// (see [`gpu_std::mma`]), zero past the matrices' edges.
///
/// # Safety
/// As [`super::mma_global`].
#[inline(always)]
#[allow(clippy::needless_range_loop)]
pub unsafe fn from_global(
    a: Global<bf16>,
    b: Global<bf16>,
    c: GlobalMut<f32>,
    m: u32,
    n: u32,
    k: u32,
) {
    let (warp, lane) = (thread_idx_x() / 32, thread_idx_x() % 32);
    let (g, q) = (lane / 4, lane % 4);
    let row = (2 * block_idx_y() + warp / 2) * MMA_ROWS + g;
    let col = (2 * block_idx_x() + warp % 2) * MMA_COLS + g;
    // SAFETY: each read is guarded by the matrix's bounds, and no thread
    // writes A or B (C overlaps neither): the read-only path may hold them.
    let a_at = move |r: u32, i: u32| {
        if r < m && i < k {
            unsafe { a.ldg(row_major(r, i, k)) }
        } else {
            bf16::ZERO
        }
    };
    let b_at = move |i: u32, j: u32| {
        if i < k && j < n {
            unsafe { b.ldg(row_major(i, j, n)) }
        } else {
            bf16::ZERO
        }
    };
    let a_pair = |r: u32, i: u32| Pair::new(a_at(r, i), a_at(r, i + 1));
    let b_pair = |i: u32, j: u32| Pair::new(b_at(i, j), b_at(i + 1, j));
    let mut sum = Accumulator::ZERO;
    // Every lane takes every step, inside the matrices or not: the warp
    // must stay whole for `mma_sync`.
    for k0 in (0..k).step_by(MMA_K as usize) {
        let i = k0 + 2 * q;
        let fa = FragmentA([
            a_pair(row, i),
            a_pair(row + 8, i),
            a_pair(row, i + 8),
            a_pair(row + 8, i + 8),
        ]);
        let fb = FragmentB([b_pair(i, col), b_pair(i + 8, col)]);
        sum = mma_sync(fa, fb, sum);
    }
    let first_col = col - g + 2 * q;
    // An index loop, which LLVM unrolls into registers; the array's
    // by-value iterator would live in local memory.
    for d in 0..4 {
        let (r, j) = (row + 8 * (d as u32 / 2), first_col + d as u32 % 2);
        if r < m && j < n {
            // SAFETY: inside C; each element is one lane's.
            unsafe { c.write(row_major(r, j, n), sum.0[d]) };
        }
    }
}
