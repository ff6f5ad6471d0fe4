//! The last `mma.sync` rung: the slices of A and B copied by `cp.async`,
//! several stages ahead of the warps that multiply them, into a wider
//! tile whose blocks take C in bands.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::pipeline::{commit, memcpy_async_line, wait_prior};
use gpu_std::shared::SharedArray;
use gpu_std::{bf16, thread::*};

use super::geometry::{MMA_K, Tile, tile_in_bands};
use super::layout::Layout;
use super::staged::{Operand, each_chunk};
use super::warp_tile::{Sums, fragments, multiply, store};

/// The layout a pipeline's stages use: the swizzle that keeps `ldmatrix` conflict-free without padding.
const LAYOUT: Layout = Layout::Swizzled;

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
/// warps multiply one stage, the copies of the others land.
///
/// The warps load each step's fragments while the `mma`s of the step
/// before run, across slices too: at a slice's last step, with its
/// fragments already in registers, each thread waits for the next
/// slice's group (all but the newest `stages − 2` of its groups), meets
/// the block at a barrier (every copy of the next slice landed, every
/// warp done reading the stage it leaves), starts the copy into that
/// stage, and loads the next slice's first fragments before multiplying
/// the last ones of this slice; so no `mma` waits on an `ldmatrix`, and
/// the barrier's wait is the only pause a slice.
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
    // SAFETY (both closures): by this function's contract.
    let start = |slice| unsafe {
        start_slice(tile, shared, (a, b), (m, n, k), (row0, col0), slice, slices)
    };
    let stage =
        |slice: u32| unsafe { shared.after(slice % tile.stages * LAYOUT.stage_elements(tile)) };
    let mut sums: Sums<M, N> = [[gpu_std::mma::Accumulator::ZERO; N]; M];
    for slice in 0..tile.stages - 1 {
        start(slice);
    }
    wait_prior::<WAIT>();
    sync_threads();
    // Every stage but the first slice's is free until then.
    start(tile.stages - 1);
    let steps = tile.slice / MMA_K;
    // SAFETY (every `fragments`): the slice landed and a barrier made it
    // visible.
    let mut current = unsafe { fragments::<M, N>(tile, LAYOUT, stage(0), 0) };
    for slice in 0..slices {
        for step in 0..steps - 1 {
            let next = unsafe { fragments::<M, N>(tile, LAYOUT, stage(slice), (step + 1) * MMA_K) };
            multiply(&current, &mut sums);
            current = next;
        }
        wait_prior::<WAIT>();
        sync_threads();
        start(slice + tile.stages);
        let next = if slice + 1 < slices {
            unsafe { fragments::<M, N>(tile, LAYOUT, stage(slice + 1), 0) }
        } else {
            current
        };
        multiply(&current, &mut sums);
        current = next;
    }
    // SAFETY: each lane stores its own elements.
    unsafe { store(tile, &sums, c, (row0, col0), (m, n)) };
}
