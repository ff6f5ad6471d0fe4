//! Matrix-vector multiplication, y = αAx + βy, A m×n, in f32 and f64.
//!
//! The lesson of this family is coalescing. Each element of A is used once,
//! so nothing can be reused and the kernels can at best stream A at the
//! memory bandwidth; whether they do depends on whether the 32 threads of a
//! warp read 32 neighbouring addresses (one transaction) or 32 addresses a
//! row apart (32 transactions). With one thread per row, that is decided by
//! the storage order of A alone.
//!
//! As in BLAS, y is not read when β = 0, so it may hold anything.

use crate::runtime::global::{Global, GlobalMut, row_major};
use crate::runtime::{Launch, Real, shared::SharedArray, thread::*};

/// What every gemv kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
}

/// The parameters every gemv kernel takes: α, A, x, β, y, m, n.
pub type Args<T> = (T, Global<T>, Global<T>, T, GlobalMut<T>, u32, u32);

/// Threads per block (one-dimensional) for every gemv kernel; also the width
/// of the window of x that [`gemv_col_major_shared_x`] stages.
pub const BLOCK: u32 = 128;

/// Elements of launch-sized shared memory [`gemv_col_major_shared_x`] needs.
pub const SHARED_X_ELEMENTS: u32 = BLOCK;

/// One thread per row, in blocks of [`BLOCK`], no shared memory. Generic
/// over the element type, as every gemv contract is.
#[allow(clippy::extra_unused_type_parameters)] // the shape every gemv contract has
fn one_thread_per_row<T>(problem: &Problem) -> Launch {
    Launch::covering((problem.m, 1, 1), (BLOCK, 1, 1), 0)
}

/// [`gemv_col_major_shared_x`]'s contract: one thread per row, and the
/// window of x in shared memory.
fn shared_x_launch<T>(problem: &Problem) -> Launch {
    let shared_bytes = SHARED_X_ELEMENTS * size_of::<T>() as u32;
    Launch::covering((problem.m, 1, 1), (BLOCK, 1, 1), shared_bytes)
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
/// [`gemv_row_major`]; only the storage order differs.
///
/// Compute-to-global-memory-access ratio: 0.5 FLOP/B in f32, 0.25 in f64.
/// Bound by memory bandwidth, which it can approach.
///
/// # Safety
/// As for [`gemv_row_major`], with `a` column-major.
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

/// [`gemv_col_major`] with x staged through shared memory: the block slides
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
/// [`gemv_col_major`]. Bound by memory bandwidth plus the barrier stalls.
///
/// # Safety
/// As for [`gemv_col_major`], with blocks of exactly [`BLOCK`] threads and
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
            for j in 0..width {
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

/// Declares the f32 and f64 entry points of each generic kernel, and the
/// two lists, in teaching order.
macro_rules! gemv_entry_points {
    ($(
        #[doc = $lesson:literal]
        #[launch($launch:ident)]
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
    gemv_row_major: gemv_row_major_f32, gemv_row_major_f64;

    /// Column-major A, one thread per row: a warp reads 32 neighbours, coalesced.
    #[launch(one_thread_per_row)]
    gemv_col_major: gemv_col_major_f32, gemv_col_major_f64;

    /// Column-major A with x staged in shared memory: a broadcast the cache already serves.
    #[launch(shared_x_launch)]
    gemv_col_major_shared_x: gemv_col_major_shared_x_f32, gemv_col_major_shared_x_f64;
}
