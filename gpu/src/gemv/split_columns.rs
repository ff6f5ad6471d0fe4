//! Column-major A with its columns split among the 32 warps of a block,
//! for 32 times the loads in flight: one element or one 16-byte vector at
//! a time, the warps' partial sums meeting in shared memory.

use super::geometry::{LINE_LANES, SPLIT_WARPS, vector_rows};
use super::parts::{Gemv, butterfly_sum, read_each};
use gpu_std::global::row_major;
use gpu_std::{Real, shared::SharedArray, thread::*, warp};

/// Adds the [`SPLIT_WARPS`] partial sums of each of `rows` rows that the
/// warps left in `partials` (warp-major) and updates y, one thread per row.
///
/// # Safety
/// Every thread of the block calls it; `partials` holds SPLIT_WARPS × rows
/// elements, each written by this block; y has m elements.
#[inline(always)]
unsafe fn sum_partials<T: Real>(
    gemv: Gemv<T>,
    partials: SharedArray<T>,
    rows: u32,
    first_row: u32,
) {
    sync_threads();
    let tid = thread_idx_x();
    let row = first_row + tid;
    if tid < rows && row < gemv.m {
        let mut dot = T::ZERO;
        for warp in 0..SPLIT_WARPS {
            // SAFETY: warp × rows + tid < SPLIT_WARPS × rows, written
            // before the barrier.
            dot = dot + unsafe { partials.read(warp * rows + tid) };
        }
        // SAFETY: row < m.
        unsafe { gemv.update(row, dot) };
    }
}

/// Column-major A with the columns split among the [`SPLIT_WARPS`] warps
/// of a block: lane `l` of every warp works on row `32·block + l`, warp
/// `w` on columns w, w + 32, …; the warps' partial sums meet in shared
/// memory.
///
/// `gemv_col_major` has one warp per 32 rows, so at 16384 rows a GPU of
/// 132 SMs holds 4 warps per SM, each waiting on one 128-byte load at a
/// time: too few bytes in flight to cover the memory's latency. Here 32
/// warps share each 32 rows: 32 times the loads in flight.
///
/// Compute-to-global-memory-access ratio: as `gemv_col_major`. Bound by
/// memory bandwidth.
///
/// Launch bounds (declared with the entry points in mod.rs): 1024 threads, and
/// two blocks an SM (every warp).
///
/// # Safety
/// As for `gemv_col_major`, with blocks of exactly [`SPLIT_BLOCK`](super::SPLIT_BLOCK)
/// threads and [`split_launch`](super::geometry::split_launch)'s shared memory.
#[inline(always)]
pub(super) unsafe fn gemv_col_major_split<T: Real>(gemv: Gemv<T>) {
    let Gemv { a, x, m, n, .. } = gemv;
    let (lane, warp) = (thread_idx_x() % warp::SIZE, thread_idx_x() / warp::SIZE);
    let first_row = block_idx_x() * warp::SIZE;
    let row = first_row + lane;
    let mut partial = T::ZERO;
    if row < m {
        for j in (warp..n).step_by(SPLIT_WARPS as usize) {
            // SAFETY: row < m and j < n.
            let (a_value, x_value) = unsafe { (a.read(row_major(j, row, m)), x.read(j as usize)) };
            partial = a_value.mul_add(x_value, partial);
        }
    }
    // SAFETY: the launch provides SPLIT_WARPS × 32 elements; every thread
    // writes its own and then sums.
    unsafe {
        let partials = SharedArray::<T>::launch_sized();
        partials.write(warp * warp::SIZE + lane, partial);
        sum_partials(gemv, partials, warp::SIZE, first_row);
    }
}

/// `gemv_col_major_split` with 16-byte loads: 8 lanes read one 128-byte
/// line of a column, 16 bytes each (`LDG.E.128`), and a warp reads 4
/// columns at once, 512 bytes per load instruction; the 32 warps of a
/// block take 128 columns per step. Each lane keeps a sum per row of its vector;
/// the 4 lanes of a warp that share rows add theirs with two shuffles, and
/// the warps' sums meet in shared memory.
///
/// Column j starts 16-byte aligned for every j only when m is a multiple
/// of the vector; otherwise, and for the rows past m, the lanes read
/// element by element.
///
/// Compute-to-global-memory-access ratio: as `gemv_col_major`. Bound by
/// memory bandwidth.
///
/// Launch bounds (declared with the entry points in mod.rs): 1024 threads, and
/// two blocks an SM (every warp).
///
/// # Safety
/// As for `gemv_col_major_split`, with [`vector_split_launch`](super::geometry::vector_split_launch)'s shared
/// memory; `a` starts 16-byte aligned.
#[inline(always)]
pub(super) unsafe fn gemv_col_major_vector<T: Real>(gemv: Gemv<T>) {
    let Gemv { a, x, m, n, .. } = gemv;
    let (lane, warp) = (thread_idx_x() % warp::SIZE, thread_idx_x() / warp::SIZE);
    let width = T::VECTOR_LEN;
    let rows = vector_rows::<T>();
    let first_row = block_idx_x() * rows;
    let row = first_row + lane % LINE_LANES * width;
    let columns_per_warp = warp::SIZE / LINE_LANES;
    let columns_per_step = SPLIT_WARPS * columns_per_warp;
    let mut sums = T::Vector::default();
    if row < m {
        let whole = m.is_multiple_of(width);
        let first_column = warp * columns_per_warp + lane / LINE_LANES;
        for j in (first_column..n).step_by(columns_per_step as usize) {
            // SAFETY: row < m and j < n; with m a multiple of the vector,
            // so is j·m + row, and row + width <= m.
            let (a_values, x_value) = unsafe {
                let index = row_major(j, row, m);
                let a_values = if whole {
                    a.read_vector(index)
                } else {
                    read_each(a, index, m - row)
                };
                (a_values, x.read(j as usize))
            };
            for k in 0..width as usize {
                sums.as_mut()[k] = a_values.as_ref()[k].mul_add(x_value, sums.as_ref()[k]);
            }
        }
    }
    for k in 0..width as usize {
        sums.as_mut()[k] = butterfly_sum(sums.as_ref()[k], LINE_LANES);
    }
    // SAFETY: the launch provides SPLIT_WARPS × rows elements; the first
    // LINE_LANES lanes of each warp write its sums, then all threads sum.
    unsafe {
        let partials = SharedArray::<T>::launch_sized();
        if lane < LINE_LANES {
            for k in 0..width {
                partials.write(warp * rows + lane * width + k, sums.as_ref()[k as usize]);
            }
        }
        sum_partials(gemv, partials, rows, first_row);
    }
}
