//! The second Hopper rung: the Tensor Memory Accelerator copies each
//! slice of A and B, 128-byte swizzled, into a ring of stages, and the
//! warpgroups' `wgmma`s read them there. No thread copies a byte and no
//! block barrier passes in the main loop: each stage has a full barrier,
//! on which its copies complete, and an empty one, on which the threads
//! say they are done with it.

use gpu_std::bf16;
use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta};
use gpu_std::global::GlobalMut;
use gpu_std::shared::SharedArray;
use gpu_std::tensor::{Element, Swizzle, TensorMap2d, TiledMap, memcpy_async_tensor_2d};
use gpu_std::thread::*;
use gpu_std::wgmma::Accumulators;

use super::geometry::Tile;
use super::layout::Layout;
use super::warpgroup::{WARPGROUPS, multiply_slice, store};

/// The block's tile: [`WARPGROUPS`]'s, with four stages in the ring.
pub const RING: Tile = Tile {
    stages: 4,
    ..WARPGROUPS
};

/// Elements of a stage: A's slice, then B's two panels of 64 columns.
const STAGE: u32 = Layout::Swizzled.stage_elements(RING);
/// Elements of A's slice, the first of B's panels, and a panel.
const A_ELEMENTS: u32 = RING.rows * RING.slice;
const PANEL: u32 = RING.slice * 64;
/// Threads that say they are done with a stage: every thread.
const CONSUMERS: u32 = RING.threads();

/// A tensor map of a bf16 array `width` wide and `height` high, whose
/// boxes are 64 columns (128 bytes, swizzled) by `box_height` rows.
pub(super) const fn operand_map(width: u32, height: u32, box_height: u32) -> TiledMap {
    TiledMap {
        width,
        height,
        box_width: 64,
        box_height,
        swizzle: Swizzle::Bytes128,
        element: Element::Bf16,
    }
}

/// Bytes of the ring and of its barriers, the launch-sized shared memory.
pub const fn ring_bytes() -> u32 {
    Layout::Swizzled.shared_bytes(RING) + 2 * RING.stages * 8
}

/// The block's tile of C through the ring. Thread 0 initialises the
/// barriers and fills every stage; then, for each slice, every thread
/// waits for its stage's copies, its warpgroup queues the slice's four
/// `wgmma`s behind those in flight and waits for all but them: the slice
/// before is then read, the threads arrive on its stage's empty barrier,
/// and thread 0, once all have, refills that stage with the slice a ring
/// ahead. The copies of three slices run under each slice's products.
///
/// # Safety
/// `a_map` and `b_map` are [`super::a_map`] and [`super::b_map`] of the
/// problem over A and B; `c` is m×n, n even, overlapping neither; the launch is
/// [`super::ring_tiles`]'s.
#[inline(always)]
pub unsafe fn ring(
    (a_map, b_map, c): (TensorMap2d<bf16>, TensorMap2d<bf16>, GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    let tile = RING;
    // SAFETY: inside a kernel; the launch gives the ring and, after it,
    // the barriers' words, full then empty.
    let (shared, words) = unsafe {
        let words = SharedArray::<u64>::launch_sized().after(tile.stages * STAGE / 4);
        (SharedArray::<bf16>::launch_sized(), words)
    };
    // SAFETY: each barrier has a word of its own, which nothing else uses.
    let full = |stage: u32| unsafe { Mbarrier::at(words.after(stage)) };
    let empty = |stage: u32| unsafe { Mbarrier::at(words.after(tile.stages + stage)) };
    let (row0, col0) = (block_idx_y() * tile.rows, block_idx_x() * tile.cols);
    let producer = thread_idx_x() == 0;
    let slices = k.div_ceil(tile.slice);
    // Slice `slice` into its stage: A's box, B's two panels, their bytes
    // expected by the stage's full barrier.
    let load = |slice: u32| {
        let stage = slice % tile.stages;
        let (first, k0) = (stage * STAGE, (slice * tile.slice) as i32);
        let (row0, col0) = (row0 as i32, col0 as i32);
        // SAFETY: thread 0 acquired the maps and initialised the barrier;
        // each box lies inside the ring on a 1024-byte boundary; no
        // thread reads the stage before its phase completes, and none
        // reads it still (the empty barrier said so).
        unsafe {
            full(stage).arrive_expect_tx(2 * STAGE);
            memcpy_async_tensor_2d(shared, first, a_map, k0, row0, full(stage));
            memcpy_async_tensor_2d(shared, first + A_ELEMENTS, b_map, col0, k0, full(stage));
            let second = first + A_ELEMENTS + PANEL;
            memcpy_async_tensor_2d(shared, second, b_map, col0 + 64, k0, full(stage));
        }
    };
    if producer {
        a_map.acquire();
        b_map.acquire();
        for stage in 0..tile.stages {
            // SAFETY: one thread initialises each barrier, before any use.
            unsafe {
                full(stage).init(1);
                empty(stage).init(CONSUMERS);
            }
        }
        fence_proxy_async_shared_cta();
    }
    sync_threads();
    if producer {
        (0..slices.min(tile.stages)).for_each(load);
    }
    let group = thread_idx_x() / 128;
    let mut flight = Accumulators::<64>::ZERO.fence();
    for slice in 0..slices {
        let stage = slice % tile.stages;
        // SAFETY: the barriers are initialised and visible (the block
        // barrier above); the stage's copies have landed once its phase
        // completes, and the TMA wrote them through the async proxy the
        // wgmma reads through; the empty barrier keeps the stage from
        // being refilled until every thread has waited for the wgmmas
        // that read it.
        unsafe {
            full(stage).wait(slice / tile.stages % 2);
            flight = multiply_slice(flight.fence(), shared, stage * STAGE, group)
                .commit_group()
                .wait_group::<1>();
            if let Some(done) = slice.checked_sub(1) {
                let freed = done % tile.stages;
                empty(freed).arrive();
                if producer && done + tile.stages < slices {
                    empty(freed).wait(done / tile.stages % 2);
                    load(done + tile.stages);
                }
            }
        }
    }
    let sums = flight.wait();
    // SAFETY: each thread stores its own elements, inside C.
    unsafe { store(&sums, c, (row0 + 64 * group, col0), (m, n)) };
}
