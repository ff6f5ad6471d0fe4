//! The last `mma.sync` rung: the slices of A and B copied by `cp.async`,
//! several stages ahead of the warps that multiply them, into a wider
//! tile whose blocks take C in bands.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::pipeline::{commit, memcpy_async_line, wait_prior};
use gpu_std::shared::SharedArray;
use gpu_std::{bf16, thread::*};

use super::geometry::{Tile, tile_in_bands};
use super::layout::Layout;
use super::staged::{Operand, each_chunk};
use super::warp_tile::{Sums, multiply_slice, store};

/// Starts copying slice `slice` of A and B into its stage, `slices` in
/// all, and closes the group; past the last slice, an empty group, so
/// that every thread always has as many groups in flight.
///
/// # Safety
/// As [`pipelined`]; no thread reads the stage until a barrier after its
/// group has landed.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn start_slice(
    tile: Tile,
    shared: SharedArray<bf16>,
    (a, b): (Global<bf16>, Global<bf16>),
    (m, n, k): (u32, u32, u32),
    (row0, col0): (u32, u32),
    slice: u32,
    slices: u32,
) {
    const LAYOUT: Layout = Layout::Swizzled;
    if slice < slices {
        // SAFETY: inside the stages the launch gives.
        let stage = unsafe { shared.after(slice % tile.stages * LAYOUT.stage_elements(tile)) };
        each_chunk(
            tile,
            (m, n, k),
            (row0, col0),
            slice * tile.slice,
            |operand, row, col, from| {
                let (at, matrix) = match operand {
                    Operand::A => (LAYOUT.a(tile, row, col), a),
                    Operand::B => (LAYOUT.b(tile, row, col), b),
                };
                // SAFETY: a whole chunk, inside the matrix or zero-filled.
                unsafe { memcpy_async_line(stage, at, matrix, from) };
            },
        );
    }
    commit();
}

/// The block's tile of C with `tile.stages` slices in flight: while the
/// warps multiply one stage, the copies of the next `stages − 1` land.
///
/// Each iteration waits for its slice's group (all but the newest
/// `stages − 2` of this thread's groups), meets the block at a barrier
/// (every thread's copies landed, every warp done with the stage the
/// next copy overwrites), starts the copy `stages − 1` slices ahead, and
/// multiplies.
///
/// # Safety
/// As [`super::mma_global`], with [`super::block_tiles`]'s launch for
/// `tile` and [`Layout::Swizzled`]; `WAIT` is `tile.stages − 2`.
#[inline(always)]
pub unsafe fn pipelined<const M: usize, const N: usize, const WAIT: u32>(
    tile: Tile,
    (a, b, c): (Global<bf16>, Global<bf16>, GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    // SAFETY: inside a kernel; the launch gives the stages.
    let shared = unsafe { SharedArray::<bf16>::launch_sized() };
    let (row0, col0) = tile_in_bands(tile);
    let slices = k.div_ceil(tile.slice);
    let mut sums: Sums<M, N> = [[gpu_std::mma::Accumulator::ZERO; N]; M];
    for slice in 0..tile.stages - 1 {
        // SAFETY: by this function's contract.
        unsafe { start_slice(tile, shared, (a, b), (m, n, k), (row0, col0), slice, slices) };
    }
    for slice in 0..slices {
        wait_prior::<WAIT>();
        sync_threads();
        // SAFETY: the stage it overwrites was multiplied before the barrier.
        unsafe {
            start_slice(
                tile,
                shared,
                (a, b),
                (m, n, k),
                (row0, col0),
                slice + tile.stages - 1,
                slices,
            );
        }
        // SAFETY: the stage's slice landed and the barrier made it visible.
        unsafe {
            let stage = shared.after(slice % tile.stages * Layout::Swizzled.stage_elements(tile));
            multiply_slice(tile, Layout::Swizzled, stage, &mut sums);
        }
    }
    // SAFETY: each lane stores its own elements.
    unsafe { store(tile, &sums, c, (row0, col0), (m, n)) };
}
