//! A warp per row of row-major A, which makes its loads coalesced: its
//! lanes read neighbours along the row and sum by shuffles, one element or
//! one 16-byte vector at a time.

use super::geometry::WARP_ROWS_PER_BLOCK;
use super::parts::{Gemv, butterfly_sum, read_each};
use gpu_std::global::row_major;
use gpu_std::{Real, thread::*, warp};

/// Bytes of its row that each lane of `gemv_row_major_warp` reads in one
/// pass: 8 steps in f32, 4 in f64.
const PASS_BYTES: u32 = 32;

/// This thread's lane, and the row its warp owns: [`WARP_ROWS_PER_BLOCK`]
/// rows a block.
#[inline(always)]
fn lane_and_row() -> (u32, u32) {
    let (lane, warp) = (thread_idx_x() % warp::SIZE, thread_idx_x() / warp::SIZE);
    (lane, block_idx_x() * WARP_ROWS_PER_BLOCK + warp)
}

/// A warp per row, A row-major: lane `l` of row `row`'s warp reads
/// A[row][l], A[row][l + 32], …, so each load of the warp is 32 neighbours
/// of one row, coalesced; then the lanes sum their partial dots with five
/// shuffles (`SHFL.BFLY`), registers to registers.
///
/// The transpose of `gemv_row_major`'s problem: there a thread owned a
/// row and its warp's loads lay a row apart; here a warp owns a row.
///
/// Compute-to-global-memory-access ratio: 0.5 FLOP/B in f32, 0.25 in f64.
/// Bound by memory bandwidth; a warp has a pass of its row in flight, 1 KiB
/// (eight 128-byte loads in f32, four 256-byte in f64).
///
/// Launch bounds (declared with the entry points in mod.rs): 128 threads, and
/// every warp an SM holds (16 blocks).
///
/// # Safety
/// As for `gemv_row_major`, with blocks of exactly [`BLOCK`](super::BLOCK) threads.
#[inline(always)]
pub(super) unsafe fn gemv_row_major_warp<T: Real>(gemv: Gemv<T>) {
    let Gemv { a, x, m, n, .. } = gemv;
    let (lane, row) = lane_and_row();
    // The same for the whole warp: the shuffles below have every lane.
    if row < m {
        let step = |j: u32, partial: T| {
            // SAFETY: row < m, and every caller passes j < n.
            let (a_value, x_value) = unsafe { (a.read(row_major(row, j, n)), x.read(j as usize)) };
            a_value.mul_add(x_value, partial)
        };
        let mut partial = T::ZERO;
        let mut j = lane;
        // Whole passes while one remains, so that a warp has 1 KiB of its
        // row in flight: LLVM unrolls the plain loop by 4 steps whatever
        // the type, and ptxas unrolls the twin's by 16 where it leaves this
        // one as it is. Past the row's last pass j would wrap only beyond
        // u32::MAX: saturated, it ends both loops there.
        let pass = PASS_BYTES / size_of::<T>() as u32 * warp::SIZE;
        while n.saturating_sub(j) > pass - warp::SIZE {
            for k in (0..pass).step_by(warp::SIZE as usize) {
                partial = step(j + k, partial);
            }
            j = j.saturating_add(pass);
        }
        for k in 0..n.saturating_sub(j).div_ceil(warp::SIZE) {
            partial = step(j + k * warp::SIZE, partial);
        }
        let dot = butterfly_sum(partial, 1);
        if lane == 0 {
            // SAFETY: row < m.
            unsafe { gemv.update(row, dot) };
        }
    }
}

/// `gemv_row_major_warp` with 16-byte loads: each lane reads 4 f32 (2
/// f64) of A at once (`LDG.E.128`), so a warp moves 512 bytes per load
/// instruction instead of 128 (f32), with a quarter of the instructions.
///
/// A row of n elements starts 16-byte aligned only when n is a multiple of
/// the vector: the lanes first read the elements before the row's first
/// 16-byte boundary one by one, then whole vectors, then what is left. x
/// is read in vectors where those line up with A's, element by element
/// where they do not.
///
/// Compute-to-global-memory-access ratio: as `gemv_row_major_warp`.
/// Bound by memory bandwidth, with four times the bytes in flight per load.
///
/// Launch bounds (declared with the entry points in mod.rs): 128 threads, and
/// four blocks an SM: at full occupancy (32 registers) it spills.
///
/// # Safety
/// As for `gemv_row_major_warp`; `a` and `x` start 16-byte aligned.
#[inline(always)]
pub(super) unsafe fn gemv_row_major_vector<T: Real>(gemv: Gemv<T>) {
    let Gemv { a, x, m, n, .. } = gemv;
    let (lane, row) = lane_and_row();
    if row < m {
        // SAFETY: row < m: the row's first element, inside A.
        let start = unsafe { row_major(row, 0, n) };
        let width = T::VECTOR_LEN;
        let head = ((width - start as u32 % width) % width).min(n);
        let vectors = (n - head) / width;
        let tail = head + vectors * width;
        let x_aligned = head == 0;
        let mut partial = T::ZERO;
        if lane < head {
            // SAFETY: lane < head <= n.
            let (a_value, x_value) =
                unsafe { (a.read(start + lane as usize), x.read(lane as usize)) };
            partial = a_value.mul_add(x_value, partial);
        }
        for vector in (lane..vectors).step_by(warp::SIZE as usize) {
            let j = (head + vector * width) as usize;
            // SAFETY: j + width <= n; start + j is a multiple of the
            // vector (head brought it there), and so is j when x_aligned.
            let (a_values, x_values) = unsafe {
                let x_values = if x_aligned {
                    x.read_vector(j)
                } else {
                    read_each(x, j, width)
                };
                (a.read_vector(start + j), x_values)
            };
            for k in 0..width as usize {
                partial = a_values.as_ref()[k].mul_add(x_values.as_ref()[k], partial);
            }
        }
        let j = tail + lane;
        if j < n {
            // SAFETY: j < n.
            let (a_value, x_value) = unsafe { (a.read(start + j as usize), x.read(j as usize)) };
            partial = a_value.mul_add(x_value, partial);
        }
        let dot = butterfly_sum(partial, 1);
        if lane == 0 {
            // SAFETY: row < m.
            unsafe { gemv.update(row, dot) };
        }
    }
}
