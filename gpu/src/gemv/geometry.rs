//! How the gemv kernels divide A among blocks, warps and threads: the
//! problem every launch contract is a function of, the block sizes of each
//! step of the ladder, and the launches that cover A's rows with them.

use gpu_std::{Launch, Real, warp};

/// What every gemv kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
}

/// Threads per block (one-dimensional) for every gemv kernel; also the width
/// of the window of x that `gemv_col_major_shared_x` stages.
pub const BLOCK: u32 = 128;

/// Elements of launch-sized shared memory `gemv_col_major_shared_x` needs.
pub const SHARED_X_ELEMENTS: u32 = BLOCK;

/// Rows per block of `gemv_row_major_warp` and `gemv_row_major_vector`:
/// a warp per row, [`BLOCK`] threads.
pub const WARP_ROWS_PER_BLOCK: u32 = BLOCK / warp::SIZE;

/// Threads per block of `gemv_col_major_split` and
/// `gemv_col_major_vector`: 32 warps, which share the columns. Fewer
/// leave too few loads in flight at n ≤ 8192 (measured on the H100 with
/// 8 and 16 warps: 0.4–0.8× cuBLAS there, against 1.0–1.7× with 32).
pub const SPLIT_BLOCK: u32 = 1024;

/// Warps per block of `gemv_col_major_split` and `gemv_col_major_vector`.
pub const SPLIT_WARPS: u32 = SPLIT_BLOCK / warp::SIZE;

/// Lanes of `gemv_col_major_vector` that read one 128-byte line of a
/// column, 16 bytes each.
pub const LINE_LANES: u32 = 8;

/// Rows of a block of `gemv_col_major_vector`: one 128-byte line of each
/// column, 32 in f32 and 16 in f64.
pub const fn vector_rows<T: Real>() -> u32 {
    LINE_LANES * T::VECTOR_LEN
}

/// One thread per row, in blocks of [`BLOCK`], no shared memory. Generic
/// over the element type, as every gemv contract is.
#[allow(clippy::extra_unused_type_parameters)] // the shape every gemv contract has
pub(super) fn one_thread_per_row<T>(problem: &Problem) -> Launch {
    Launch::covering((problem.m, 1, 1), (BLOCK, 1, 1), 0)
}

/// `gemv_col_major_shared_x`'s contract: one thread per row, and the
/// window of x in shared memory.
pub(super) fn shared_x_launch<T>(problem: &Problem) -> Launch {
    let shared_bytes = SHARED_X_ELEMENTS * size_of::<T>() as u32;
    Launch::covering((problem.m, 1, 1), (BLOCK, 1, 1), shared_bytes)
}

/// Blocks of `threads` threads that take `rows` rows each, enough of them
/// for m rows.
const fn row_blocks(problem: &Problem, rows: u32, threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        grid: (problem.m.div_ceil(rows), 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
        cluster: (1, 1, 1),
    }
}

/// A warp per row, in blocks of [`BLOCK`] threads.
#[allow(clippy::extra_unused_type_parameters)] // the shape every gemv contract has
pub(super) fn warp_per_row<T>(problem: &Problem) -> Launch {
    row_blocks(problem, WARP_ROWS_PER_BLOCK, BLOCK, 0)
}

/// `gemv_col_major_split`'s contract: 32 rows per block, one per lane,
/// and a partial sum per row and warp in shared memory.
pub(super) fn split_launch<T>(problem: &Problem) -> Launch {
    let shared_bytes = SPLIT_WARPS * warp::SIZE * size_of::<T>() as u32;
    row_blocks(problem, warp::SIZE, SPLIT_BLOCK, shared_bytes)
}

/// `gemv_col_major_vector`'s contract: [`vector_rows`] rows per block,
/// and a partial sum per row and warp in shared memory.
pub(super) fn vector_split_launch<T: Real>(problem: &Problem) -> Launch {
    let rows = vector_rows::<T>();
    let shared_bytes = SPLIT_WARPS * rows * size_of::<T>() as u32;
    row_blocks(problem, rows, SPLIT_BLOCK, shared_bytes)
}
