//! Matrix multiplication, C = A·B, f32, row-major, A m×k and B k×n.
//!
//! The lesson of this family: every output element needs a whole row of A
//! and a whole column of B, so the naive kernel re-reads each input element
//! from global memory once per output that uses it. Tiling stages a TILE×TILE
//! block of A and of B in shared memory, where TILE×TILE threads reuse each
//! staged element TILE times, cutting global traffic by the tile width.

use crate::runtime::global::{Global, GlobalMut, row_major};
use crate::runtime::{Launch, Real, shared::SharedArray, thread::*};

/// What every matmul kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// The parameters every matmul kernel takes: A, B, C, m, n, k.
pub type Args = (Global<f32>, Global<f32>, GlobalMut<f32>, u32, u32, u32);

/// Threads per block along x and y for [`matmul_naive`].
pub const NAIVE_BLOCK: u32 = 16;

/// Elements of launch-sized shared memory the tiled kernel of width `tile`
/// needs: one tile of A followed by one tile of B.
pub const fn tiled_shared_elements(tile: u32) -> u32 {
    2 * tile * tile
}

/// One thread per element of C: n columns along x, m rows along y.
fn one_thread_per_element(problem: &Problem, block: u32, shared_bytes: u32) -> Launch {
    Launch::covering((problem.n, problem.m, 1), (block, block, 1), shared_bytes)
}

/// [`matmul_tiled`]'s contract: TILE×TILE threads and two tiles of shared
/// memory per block.
fn tiled_launch<const TILE: u32>(problem: &Problem) -> Launch {
    let shared_bytes = tiled_shared_elements(TILE) * size_of::<f32>() as u32;
    one_thread_per_element(problem, TILE, shared_bytes)
}

kernels! {
    /// The matmul kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Naive: one thread per element of C, every input re-read from global memory.
    ///
    /// Each thread reads its row of A and column of B straight from global
    /// memory. Threads with consecutive x compute consecutive columns, so a
    /// warp's loads of B and stores of C are coalesced, and its loads of A
    /// are one broadcast address.
    ///
    /// Compute-to-global-memory-access ratio: one FMA (2 FLOP) per two
    /// 4-byte loads, 0.25 FLOP/B. Bound by memory traffic (relieved only by
    /// what the caches catch), far below the arithmetic peak.
    ///
    /// # Safety
    /// `a`, `b` and `c` are m×k, k×n and m×n f32 arrays, `c` not overlapping
    /// the others; every index `row * cols + col` fits in `u32`; the grid
    /// covers n columns along x and m rows along y.
    #[launch(|problem| one_thread_per_element(problem, NAIVE_BLOCK, 0))]
    pub unsafe fn matmul_naive(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        let row = block_idx_y() * block_dim_y() + thread_idx_y();
        let col = block_idx_x() * block_dim_x() + thread_idx_x();
        if row < m && col < n {
            let mut sum = 0.0f32;
            for i in 0..k {
                // SAFETY: row < m, i < k, col < n: both indices are in bounds.
                let (a_ik, b_ij) = unsafe { (a.read(row_major(row, i, k)), b.read(row_major(i, col, n))) };
                sum = Real::mul_add(a_ik, b_ij, sum);
            }
            // SAFETY: row < m and col < n.
            unsafe { c.write(row_major(row, col, n), sum) };
        }
    }

    /// Tiled, 16×16: tiles of A and B staged in shared memory, each element reused 16 times.
    ///
    /// [`matmul_tiled`] with TILE = 16.
    ///
    /// # Safety
    /// As for [`matmul_tiled`] with TILE = 16.
    #[launch(tiled_launch::<16>)]
    pub unsafe fn matmul_tiled_16(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { matmul_tiled::<16>(a, b, c, m, n, k) }
    }

    /// Tiled, 32×32: twice the tile width, half the global loads of the 16-wide tile.
    ///
    /// [`matmul_tiled`] with TILE = 32.
    ///
    /// # Safety
    /// As for [`matmul_tiled`] with TILE = 32.
    #[launch(tiled_launch::<32>)]
    pub unsafe fn matmul_tiled_32(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { matmul_tiled::<32>(a, b, c, m, n, k) }
    }
}

/// One thread per element of C; the block walks along k in phases, each
/// phase staging a TILE×TILE tile of A and of B in shared memory.
///
/// Two barriers per phase: the first so that no thread reads a tile before
/// every thread has written its element of it, the second so that no thread
/// overwrites a tile for the next phase while another still reads it.
/// Elements outside A or B are staged as zeros, which adds nothing, so every
/// size works, not only multiples of TILE.
///
/// Compute-to-global-memory-access ratio: each staged element feeds TILE
/// FMAs, so TILE/4 FLOP/B (4 for TILE = 16, 8 for TILE = 32). Bound by
/// shared-memory bandwidth and instruction issue: two shared loads per FMA.
///
/// # Safety
/// `a`, `b` and `c` are m×k, k×n and m×n f32 arrays, `c` not overlapping
/// the others; every index `row * cols + col` fits in `u32`; blocks are
/// TILE×TILE threads with [`tiled_shared_elements`]`(TILE)` f32 of
/// launch-sized shared memory; the grid covers n columns and m rows.
#[inline(always)]
unsafe fn matmul_tiled<const TILE: u32>(
    a: Global<f32>,
    b: Global<f32>,
    c: GlobalMut<f32>,
    m: u32,
    n: u32,
    k: u32,
) {
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let row = block_idx_y() * TILE + ty;
    let col = block_idx_x() * TILE + tx;
    // SAFETY: the launch provides `tiled_shared_elements(TILE)` f32.
    let a_tile = unsafe { SharedArray::<f32>::launch_sized() };
    let b_tile = unsafe { a_tile.after(TILE * TILE) };

    let mut sum = 0.0f32;
    for phase in 0..k.div_ceil(TILE) {
        let a_col = phase * TILE + tx;
        let b_row = phase * TILE + ty;
        // SAFETY: each load is guarded by its bounds; each thread writes
        // only its own element of each tile, which is inside the allocation.
        unsafe {
            let a_value = if row < m && a_col < k {
                a.read(row_major(row, a_col, k))
            } else {
                0.0
            };
            let b_value = if b_row < k && col < n {
                b.read(row_major(b_row, col, n))
            } else {
                0.0
            };
            a_tile.write(ty * TILE + tx, a_value);
            b_tile.write(ty * TILE + tx, b_value);
        }
        sync_threads();
        for i in 0..TILE {
            // SAFETY: both tiles were completely written before the barrier.
            let (a_value, b_value) =
                unsafe { (a_tile.read(ty * TILE + i), b_tile.read(i * TILE + tx)) };
            sum = Real::mul_add(a_value, b_value, sum);
        }
        sync_threads();
    }
    if row < m && col < n {
        // SAFETY: row < m and col < n.
        unsafe { c.write(row_major(row, col, n), sum) };
    }
}
