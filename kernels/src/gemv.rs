//! Matrix-vector multiplication, y = αAx + βy, A m×n, in f32 and f64.
//!
//! The lesson of this family is coalescing. Each element of A is used once,
//! so nothing can be reused and the kernels can at best stream A at the
//! memory bandwidth; whether they do depends on whether the 32 threads of a
//! warp read 32 neighbouring addresses (one transaction) or 32 addresses a
//! row apart (32 transactions). With one thread per row, that is decided by
//! the storage order of A alone.
//!
//! The seeds' three kernels stop there. The ladder past them reads A at the
//! memory bandwidth in either layout: a warp per row makes row-major A
//! coalesced (its lanes sum with shuffles), 16-byte loads move four times
//! the bytes per instruction, and column-major A gets more loads in flight
//! by splitting the columns among a block's warps.
//!
//! As in BLAS, y is not read when β = 0, so it may hold anything.

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::warp::{self, ALL_LANES, shfl_xor_sync};
use gpu_std::{FULL_SM_THREADS, Launch, Real, shared::SharedArray, thread::*};

/// What every gemv kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
}

/// The parameters every gemv kernel takes: α, A, x, β, y, m, n.
pub type Args<T> = (T, Global<T>, Global<T>, T, GlobalMut<T>, u32, u32);

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
fn one_thread_per_row<T>(problem: &Problem) -> Launch {
    Launch::covering((problem.m, 1, 1), (BLOCK, 1, 1), 0)
}

/// `gemv_col_major_shared_x`'s contract: one thread per row, and the
/// window of x in shared memory.
fn shared_x_launch<T>(problem: &Problem) -> Launch {
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
    }
}

/// A warp per row, in blocks of [`BLOCK`] threads.
#[allow(clippy::extra_unused_type_parameters)] // the shape every gemv contract has
fn warp_per_row<T>(problem: &Problem) -> Launch {
    row_blocks(problem, WARP_ROWS_PER_BLOCK, BLOCK, 0)
}

/// `gemv_col_major_split`'s contract: 32 rows per block, one per lane,
/// and a partial sum per row and warp in shared memory.
fn split_launch<T>(problem: &Problem) -> Launch {
    let shared_bytes = SPLIT_WARPS * warp::SIZE * size_of::<T>() as u32;
    row_blocks(problem, warp::SIZE, SPLIT_BLOCK, shared_bytes)
}

/// `gemv_col_major_vector`'s contract: [`vector_rows`] rows per block,
/// and a partial sum per row and warp in shared memory.
fn vector_split_launch<T: Real>(problem: &Problem) -> Launch {
    let rows = vector_rows::<T>();
    let shared_bytes = SPLIT_WARPS * rows * size_of::<T>() as u32;
    row_blocks(problem, rows, SPLIT_BLOCK, shared_bytes)
}

/// The dot product of x with the n elements of A that `index` picks.
///
/// # Safety
/// `x` has n elements and `index(j)` lies inside A for every j < n.
#[inline(always)]
unsafe fn dot<T: Real>(a: Global<T>, x: Global<T>, n: u32, index: impl Fn(u32) -> usize) -> T {
    let mut dot = T::ZERO;
    for j in 0..n {
        // SAFETY: by this function's contract.
        let (a_value, x_value) = unsafe { (a.read(index(j)), x.read(j as usize)) };
        dot = a_value.mul_add(x_value, dot);
    }
    dot
}

/// y[row] = α·dot + β·y[row], without reading y[row] when β = 0.
///
/// # Safety
/// `row` is inside y.
#[inline(always)]
unsafe fn update<T: Real>(y: GlobalMut<T>, row: u32, alpha: T, dot: T, beta: T) {
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
/// Launch bounds (declared with the entry points below): 128 threads, and
/// three blocks an SM: with up to 168 registers ptxas keeps more of the
/// loads in flight than at full occupancy (H100: 0.585 against 0.741 ms at
/// 8192², f64).
///
/// # Safety
/// `a` is m×n row-major, `x` has n and `y` m elements, `y` overlapping
/// neither; `m * n` fits in `u32`; blocks are 1-D and the grid covers m rows.
#[inline(always)]
unsafe fn gemv_row_major<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
    let row = block_idx_x() * block_dim_x() + thread_idx_x();
    if row < m {
        // SAFETY: row < m, so row·n + j lies inside A for every j < n, and
        // row inside y.
        unsafe {
            let dot = dot(a, x, n, |j| row_major(row, j, n));
            update(y, row, alpha, dot, beta);
        }
    }
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
/// Launch bounds (declared with the entry points below): 128 threads, and
/// four blocks an SM: with up to 128 registers ptxas runs further ahead of
/// the FMAs; twice as fast as without bounds (H100, 8192²).
///
/// # Safety
/// As for `gemv_row_major`, with `a` column-major.
#[inline(always)]
unsafe fn gemv_col_major<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
    let row = block_idx_x() * block_dim_x() + thread_idx_x();
    if row < m {
        // SAFETY: row < m, so j·m + row lies inside A for every j < n, and
        // row inside y.
        unsafe {
            let dot = dot(a, x, n, |j| row_major(j, row, m));
            update(y, row, alpha, dot, beta);
        }
    }
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
/// Launch bounds (declared with the entry points below): 128 threads, and
/// four blocks an SM, as for `gemv_col_major`.
///
/// # Safety
/// As for `gemv_col_major`, with blocks of exactly [`BLOCK`] threads and
/// [`SHARED_X_ELEMENTS`] elements of launch-sized shared memory.
#[inline(always)]
unsafe fn gemv_col_major_shared_x<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
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
            let vectors = width / T::VECTOR_LEN * T::VECTOR_LEN;
            for first in (0..vectors).step_by(T::VECTOR_LEN as usize) {
                // SAFETY: first + VECTOR_LEN ≤ width elements were written,
                // and first is a multiple of VECTOR_LEN.
                let x_values = unsafe { x_window.read_vector(first) };
                for (k, &x_value) in x_values.as_ref().iter().enumerate() {
                    // SAFETY: row < m, start + first + k < n.
                    let a_value = unsafe { a.read(window + row_major(first + k as u32, row, m)) };
                    dot = a_value.mul_add(x_value, dot);
                }
            }
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
        unsafe { update(y, row, alpha, dot, beta) };
    }
}

/// The sum of `value` over the lanes whose index differs from this one's
/// only in bits `lowest` (a power of two) and up, in each of them: one
/// butterfly step per bit, from bit 16 down, each adding the value of the
/// lane across that bit. `lowest` = 1 sums the whole warp.
#[inline(always)]
fn butterfly_sum<T: Real>(mut value: T, lowest: u32) -> T {
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
unsafe fn read_each<T: Real>(buffer: Global<T>, index: usize, count: u32) -> T::Vector {
    let mut values = T::Vector::default();
    for k in 0..T::VECTOR_LEN {
        if k < count {
            // SAFETY: by this function's contract.
            values.as_mut()[k as usize] = unsafe { buffer.read(index + k as usize) };
        }
    }
    values
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
/// Bound by memory bandwidth; a warp has one 128-byte (f32) load in flight
/// per step of its row.
///
/// Launch bounds (declared with the entry points below): 128 threads, and
/// every warp an SM holds (16 blocks).
///
/// # Safety
/// As for `gemv_row_major`, with blocks of exactly [`BLOCK`] threads.
#[inline(always)]
unsafe fn gemv_row_major_warp<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
    let (lane, row) = (thread_idx_x() % warp::SIZE, thread_idx_x() / warp::SIZE);
    let row = block_idx_x() * WARP_ROWS_PER_BLOCK + row;
    // The same for the whole warp: the shuffles below have every lane.
    if row < m {
        let mut partial = T::ZERO;
        for j in (lane..n).step_by(warp::SIZE as usize) {
            // SAFETY: row < m and j < n.
            let (a_value, x_value) = unsafe { (a.read(row_major(row, j, n)), x.read(j as usize)) };
            partial = a_value.mul_add(x_value, partial);
        }
        let dot = butterfly_sum(partial, 1);
        if lane == 0 {
            // SAFETY: row < m.
            unsafe { update(y, row, alpha, dot, beta) };
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
/// Launch bounds (declared with the entry points below): 128 threads, and
/// four blocks an SM: at full occupancy (32 registers) it spills.
///
/// # Safety
/// As for `gemv_row_major_warp`; `a` and `x` start 16-byte aligned.
#[inline(always)]
unsafe fn gemv_row_major_vector<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
    let (lane, row) = (thread_idx_x() % warp::SIZE, thread_idx_x() / warp::SIZE);
    let row = block_idx_x() * WARP_ROWS_PER_BLOCK + row;
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
            unsafe { update(y, row, alpha, dot, beta) };
        }
    }
}

/// Adds the [`SPLIT_WARPS`] partial sums of each of `rows` rows that the
/// warps left in `partials` (warp-major) and updates y, one thread per row.
///
/// # Safety
/// Every thread of the block calls it; `partials` holds SPLIT_WARPS × rows
/// elements, each written by this block; y has m elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // y's update and where the partials are
unsafe fn sum_partials<T: Real>(
    partials: SharedArray<T>,
    rows: u32,
    first_row: u32,
    y: GlobalMut<T>,
    m: u32,
    alpha: T,
    beta: T,
) {
    sync_threads();
    let tid = thread_idx_x();
    let row = first_row + tid;
    if tid < rows && row < m {
        let mut dot = T::ZERO;
        for warp in 0..SPLIT_WARPS {
            // SAFETY: warp × rows + tid < SPLIT_WARPS × rows, written
            // before the barrier.
            dot = dot + unsafe { partials.read(warp * rows + tid) };
        }
        // SAFETY: row < m.
        unsafe { update(y, row, alpha, dot, beta) };
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
/// Launch bounds (declared with the entry points below): 1024 threads, and
/// two blocks an SM (every warp).
///
/// # Safety
/// As for `gemv_col_major`, with blocks of exactly [`SPLIT_BLOCK`]
/// threads and [`split_launch`]'s shared memory.
#[inline(always)]
unsafe fn gemv_col_major_split<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
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
        sum_partials(partials, warp::SIZE, first_row, y, m, alpha, beta);
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
/// Launch bounds (declared with the entry points below): 1024 threads, and
/// two blocks an SM (every warp).
///
/// # Safety
/// As for `gemv_col_major_split`, with [`vector_split_launch`]'s shared
/// memory; `a` starts 16-byte aligned.
#[inline(always)]
unsafe fn gemv_col_major_vector<T: Real>(
    alpha: T,
    a: Global<T>,
    x: Global<T>,
    beta: T,
    y: GlobalMut<T>,
    m: u32,
    n: u32,
) {
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
        sum_partials(partials, rows, first_row, y, m, alpha, beta);
    }
}

/// Declares the f32 and f64 entry points of each generic kernel, and the
/// two lists, in teaching order.
macro_rules! gemv_entry_points {
    ($(
        #[doc = $lesson:literal]
        #[launch($launch:ident)]
        #[launch_bounds($($bounds:expr),+)]
        $generic:ident: $f32_name:ident, $f64_name:ident;
    )*) => {
        kernels! {
            /// The f32 gemv kernels, in teaching order.
            pub const KERNELS_F32: [Kernel<Args<f32>, Problem>];
            $(
                #[doc = $lesson]
                ///
                /// The f32 instance of the generic kernel named in its body.
                ///
                /// # Safety
                /// As for that kernel.
                #[launch($launch::<f32>)]
                #[launch_bounds($($bounds),+)]
                pub unsafe fn $f32_name(alpha: f32, a: Global<f32>, x: Global<f32>, beta: f32, y: GlobalMut<f32>, m: u32, n: u32) {
                    // SAFETY: forwarded contract.
                    unsafe { $generic(alpha, a, x, beta, y, m, n) }
                }
            )*
        }

        kernels! {
            /// The f64 gemv kernels, in teaching order.
            pub const KERNELS_F64: [Kernel<Args<f64>, Problem>];
            $(
                #[doc = $lesson]
                ///
                /// The f64 instance of the generic kernel named in its body.
                ///
                /// # Safety
                /// As for that kernel.
                #[launch($launch::<f64>)]
                #[launch_bounds($($bounds),+)]
                pub unsafe fn $f64_name(alpha: f64, a: Global<f64>, x: Global<f64>, beta: f64, y: GlobalMut<f64>, m: u32, n: u32) {
                    // SAFETY: forwarded contract.
                    unsafe { $generic(alpha, a, x, beta, y, m, n) }
                }
            )*
        }
    };
}

gemv_entry_points! {
    /// Row-major A, one thread per row: a warp's loads lie a row apart, uncoalesced.
    #[launch(one_thread_per_row)]
    #[launch_bounds(BLOCK, 3)]
    gemv_row_major: gemv_row_major_f32, gemv_row_major_f64;

    /// Column-major A, one thread per row: a warp reads 32 neighbours, coalesced.
    #[launch(one_thread_per_row)]
    #[launch_bounds(BLOCK, 4)]
    gemv_col_major: gemv_col_major_f32, gemv_col_major_f64;

    /// Column-major A with x staged in shared memory: a broadcast the cache already serves.
    #[launch(shared_x_launch)]
    #[launch_bounds(BLOCK, 4)]
    gemv_col_major_shared_x: gemv_col_major_shared_x_f32, gemv_col_major_shared_x_f64;

    /// Row-major A, a warp per row: coalesced along the row, summed with shuffles.
    #[launch(warp_per_row)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    gemv_row_major_warp: gemv_row_major_warp_f32, gemv_row_major_warp_f64;

    /// Row-major A, a warp per row, 16-byte loads: four times the bytes per instruction.
    #[launch(warp_per_row)]
    #[launch_bounds(BLOCK, 4)]
    gemv_row_major_vector: gemv_row_major_vector_f32, gemv_row_major_vector_f64;

    /// Column-major A, the columns split among 32 warps: 32 times the loads in flight.
    #[launch(split_launch)]
    #[launch_bounds(SPLIT_BLOCK, FULL_SM_THREADS / SPLIT_BLOCK)]
    gemv_col_major_split: gemv_col_major_split_f32, gemv_col_major_split_f64;

    /// Column-major A, split columns and 16-byte loads: whole lines, 512 bytes per instruction.
    #[launch(vector_split_launch)]
    #[launch_bounds(SPLIT_BLOCK, FULL_SM_THREADS / SPLIT_BLOCK)]
    gemv_col_major_vector: gemv_col_major_vector_f32, gemv_col_major_vector_f64;
}
