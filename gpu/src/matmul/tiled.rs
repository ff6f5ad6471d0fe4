//! The seeds' tiled matmul: one thread per element of C, tiles of A and B
//! staged in shared memory, each element reused TILE times.

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::{Real, shared::SharedArray, thread::*};

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
/// TILE×TILE threads with [`tiled_shared_elements`](super::tiled_shared_elements)`(TILE)` f32 of
/// launch-sized shared memory; the grid covers n columns and m rows.
#[inline(always)]
pub(super) unsafe fn matmul_tiled<const TILE: u32>(
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
