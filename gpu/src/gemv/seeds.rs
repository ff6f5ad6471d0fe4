//! The seeds' three gemv kernels, one thread per row: row-major A, whose
//! warps read 32 addresses a row apart; column-major A, whose warps read
//! 32 neighbours; and column-major A with x staged in shared memory.

use super::geometry::BLOCK;
use super::parts::Gemv;
use gpu_std::global::row_major;
use gpu_std::{Real, shared::SharedArray, thread::*};

/// Thread `row` of the grid computes y[row] from the n elements of A
/// that `index(row, j)` picks: the whole of the two seeds that differ only
/// in A's storage order.
///
/// # Safety
/// The grid covers m rows and `index(row, j)` lies inside A for every
/// row < m and j < n.
#[inline(always)]
unsafe fn one_thread_per_row<T: Real>(gemv: Gemv<T>, index: impl Fn(u32, u32) -> usize) {
    let Gemv { a, x, m, n, .. } = gemv;
    let row = block_idx_x() * block_dim_x() + thread_idx_x();
    if row < m {
        let mut dot = T::ZERO;
        for j in 0..n {
            // SAFETY: by this function's contract.
            let (a_value, x_value) = unsafe { (a.read(index(row, j)), x.read(j as usize)) };
            dot = a_value.mul_add(x_value, dot);
        }
        // SAFETY: row < m.
        unsafe { gemv.update(row, dot) };
    }
}

/// One thread per row, A row-major: thread `row` reads A[row][0..n].
///
/// At each step the 32 threads of a warp read 32 elements n apart: a
/// separate memory transaction each, of which only one element is used, so
/// most of every transaction's bytes are fetched for nothing.
///
/// Compute-to-global-memory-access ratio: 2 FLOP per element of A, 0.5 FLOP/B
/// in f32 and 0.25 in f64. Bound by memory, and by the wasted sectors far
/// below the bandwidth.
///
/// Launch bounds (declared with the entry points in mod.rs): 128 threads, and
/// three blocks an SM: with up to 168 registers ptxas keeps more of the
/// loads in flight than at full occupancy (H100: 0.585 against 0.741 ms at
/// 8192², f64).
///
/// # Safety
/// `a` is m×n row-major, `x` has n and `y` m elements, `y` overlapping
/// neither; `m * n` fits in `u32`; blocks are 1-D and the grid covers m rows.
#[inline(always)]
pub(super) unsafe fn gemv_row_major<T: Real>(gemv: Gemv<T>) {
    // SAFETY: row·n + j lies inside m×n A for row < m and j < n.
    unsafe { one_thread_per_row(gemv, |row, j| row_major(row, j, gemv.n)) }
}

/// One thread per row, A column-major: thread `row` reads A[0..n][row]
/// from the columns.
///
/// At each step the warp reads 32 consecutive elements of one column: one
/// coalesced transaction, every byte used. Same arithmetic, same bytes as
/// `gemv_row_major`; only the storage order differs.
///
/// Compute-to-global-memory-access ratio: 0.5 FLOP/B in f32, 0.25 in f64.
/// Bound by memory bandwidth, which it can approach.
///
/// Launch bounds (declared with the entry points in mod.rs): 128 threads, and
/// four blocks an SM: with up to 128 registers ptxas runs further ahead of
/// the FMAs; twice as fast as without bounds (H100, 8192²).
///
/// # Safety
/// As for `gemv_row_major`, with `a` column-major.
#[inline(always)]
pub(super) unsafe fn gemv_col_major<T: Real>(gemv: Gemv<T>) {
    // SAFETY: j·m + row lies inside n×m storage for row < m and j < n.
    unsafe { one_thread_per_row(gemv, |row, j| row_major(j, row, gemv.m)) }
}

/// `gemv_col_major` with x staged through shared memory: the block slides
/// a window of [`BLOCK`] elements of x along n, each thread loading one
/// element per window, then every thread reading the whole window.
///
/// Every thread of the block takes part in loading and in both barriers,
/// including threads past the last row, and the last window may be partial:
/// so every m and n work, not only multiples of the block size.
///
/// The lesson is a negative one: all threads of a warp read the same x[j],
/// a broadcast the L1 cache already serves, so staging x saves no global
/// traffic and adds barriers. Compute-to-global-memory-access ratio: as
/// `gemv_col_major`. Bound by memory bandwidth plus the barrier stalls.
///
/// Launch bounds (declared with the entry points in mod.rs): 128 threads, and
/// four blocks an SM, as for `gemv_col_major`.
///
/// # Safety
/// As for `gemv_col_major`, with blocks of exactly [`BLOCK`] threads and
/// [`SHARED_X_ELEMENTS`](super::SHARED_X_ELEMENTS) elements of launch-sized shared memory.
#[inline(always)]
pub(super) unsafe fn gemv_col_major_shared_x<T: Real>(gemv: Gemv<T>) {
    let Gemv { a, x, m, n, .. } = gemv;
    let tid = thread_idx_x();
    let row = block_idx_x() * BLOCK + tid;
    // SAFETY: the launch provides SHARED_X_ELEMENTS elements of T.
    let x_window = unsafe { SharedArray::<T>::launch_sized() };
    let mut dot = T::ZERO;
    let mut start = 0;
    while start < n {
        let width = if n - start < BLOCK { n - start } else { BLOCK };
        if tid < width {
            // SAFETY: start + tid < n; tid < BLOCK is inside the window.
            unsafe { x_window.write(tid, x.read((start + tid) as usize)) };
        }
        sync_threads();
        if row < m {
            // SAFETY: start < n: column `start` of A, where this window
            // of x begins.
            let window = unsafe { row_major(start, 0, m) };
            // The window's whole vectors in one 16-byte shared load each
            // (`LDS.128`), as NVVM's vectoriser reads them in the twin: a
            // quarter (f32) or half (f64) of the shared loads.
            let whole_vectors = |vectors: u32, mut dot: T| {
                for first in (0..vectors).step_by(T::VECTOR_LEN as usize) {
                    // SAFETY: first + VECTOR_LEN ≤ width elements were
                    // written, and first is a multiple of VECTOR_LEN.
                    let x_values = unsafe { x_window.read_vector(first) };
                    for (k, &x_value) in x_values.as_ref().iter().enumerate() {
                        // SAFETY: row < m, start + first + k < n.
                        let a_value =
                            unsafe { a.read(window + row_major(first + k as u32, row, m)) };
                        dot = a_value.mul_add(x_value, dot);
                    }
                }
                dot
            };
            // A whole window, every one but perhaps the last, has a
            // constant count of vectors: that loop LLVM unrolls whole, as
            // nvcc unrolls the twin's, and all its loads are in flight.
            let vectors = width / T::VECTOR_LEN * T::VECTOR_LEN;
            dot = if width == BLOCK {
                whole_vectors(BLOCK, dot)
            } else {
                whole_vectors(vectors, dot)
            };
            for j in vectors..width {
                // SAFETY: row < m, start + j < n; window element j < width
                // was written.
                let (a_value, x_value) =
                    unsafe { (a.read(window + row_major(j, row, m)), x_window.read(j)) };
                dot = a_value.mul_add(x_value, dot);
            }
        }
        sync_threads();
        start += width;
    }
    if row < m {
        // SAFETY: row < m.
        unsafe { gemv.update(row, dot) };
    }
}
