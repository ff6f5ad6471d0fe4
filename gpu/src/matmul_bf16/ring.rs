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
use gpu_std::wgmma::{Accumulators, InFlight};

use super::geometry::Tile;
use super::layout::Layout;
use super::warpgroup::{WARPGROUPS, multiply_slice, store};

/// The block's tile: [`WARPGROUPS`]'s, with four stages in the ring.
pub const RING: Tile = Tile {
    stages: 4,
    ..WARPGROUPS
};

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

/// Bytes of a ring of `tile`'s stages and of its barriers, two words a
/// stage: the launch-sized shared memory of a TMA rung.
pub const fn ring_bytes(tile: Tile) -> u32 {
    Layout::Swizzled.shared_bytes(tile) + 2 * tile.stages * 8
}

/// A ring of `tile.stages` stages in the launch-sized shared memory, laid
/// out as [`Layout::Swizzled`], and after it each stage's full barrier,
/// on which its copies complete, and empty barrier, at which its readers
/// arrive: what both TMA rungs share.
#[derive(Clone, Copy)]
pub(super) struct Ring {
    tile: Tile,
    stages: SharedArray<bf16>,
    words: SharedArray<u64>,
}

impl Ring {
    /// The ring of `tile`; thread 0 acquires the maps and initialises the
    /// barriers, a full one for one arrival, an empty one for `readers`,
    /// and the block passes a barrier.
    ///
    /// # Safety
    /// Every thread of the block calls it; the launch gives
    /// [`Layout::shared_bytes`] of `tile` and two words a stage after.
    #[inline(always)]
    pub(super) unsafe fn new(tile: Tile, maps: [TensorMap2d<bf16>; 2], readers: u32) -> Self {
        let stage = Layout::Swizzled.stage_elements(tile);
        // SAFETY: inside a kernel; the launch gives the stages and the
        // words after them.
        let ring = unsafe {
            Self {
                tile,
                stages: SharedArray::launch_sized(),
                words: SharedArray::launch_sized().after(tile.stages * stage / 4),
            }
        };
        if thread_idx_x() == 0 {
            maps.into_iter().for_each(TensorMap2d::acquire);
            for stage in 0..tile.stages {
                // SAFETY: one thread initialises each barrier, before any use.
                unsafe {
                    ring.full(stage).init(1);
                    ring.empty(stage).init(readers);
                }
            }
            fence_proxy_async_shared_cta();
        }
        sync_threads();
        ring
    }

    /// The first row and column of the block's tile of C.
    #[inline(always)]
    pub(super) fn origin(self) -> (u32, u32) {
        (
            block_idx_y() * self.tile.rows,
            block_idx_x() * self.tile.cols,
        )
    }

    /// The slices of k, the last one partial where k is not a multiple.
    #[inline(always)]
    pub(super) fn slices(self, k: u32) -> u32 {
        k.div_ceil(self.tile.slice)
    }

    /// The stage of the slice that passes through the ring `position`th
    /// (the block's slices counted over all its tiles), and its first
    /// element.
    #[inline(always)]
    pub(super) fn stage(self, position: u32) -> (u32, u32) {
        let stage = position % self.tile.stages;
        (stage, stage * Layout::Swizzled.stage_elements(self.tile))
    }

    /// The phase of a stage's barriers that the slice at `position` uses:
    /// the parity of its pass round the ring.
    #[inline(always)]
    pub(super) fn parity(self, position: u32) -> u32 {
        position / self.tile.stages % 2
    }

    #[inline(always)]
    pub(super) fn full(self, stage: u32) -> Mbarrier {
        // SAFETY: each barrier has a word of its own, which nothing else uses.
        unsafe { Mbarrier::at(self.words.after(stage)) }
    }

    #[inline(always)]
    pub(super) fn empty(self, stage: u32) -> Mbarrier {
        // SAFETY: as for `full`.
        unsafe { Mbarrier::at(self.words.after(self.tile.stages + stage)) }
    }

    /// Waits for the copies of the slice at `position`, queues warpgroup
    /// `group`'s four `wgmma`s on it behind those in flight, and waits for
    /// all but them: the slice before is then read, and may be
    /// [released](Self::release).
    ///
    /// # Safety
    /// The whole warpgroup calls it, for each position in order.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub(super) unsafe fn consume<const F: usize>(
        self,
        flight: InFlight<F>,
        position: u32,
        group: u32,
    ) -> InFlight<F> {
        let (stage, first) = self.stage(position);
        // SAFETY: the barriers are initialised and visible (the block
        // barrier in `Ring::new`); the stage's copies have landed once its
        // phase completes, and the TMA wrote them through the async proxy
        // the wgmma reads through; the empty barrier keeps the stage from
        // being refilled until every reader has waited for the wgmmas
        // that read it.
        unsafe {
            self.full(stage).wait(self.parity(position));
            multiply_slice(flight.fence(), self.stages, first, group)
                .commit_group()
                .wait_group::<1>()
        }
    }

    /// Arrives at the empty barrier of the slice at `position`, which no
    /// `wgmma` of this thread reads any more.
    ///
    /// # Safety
    /// The `wgmma`s of this thread that read the slice are retired; the
    /// ring's empty barriers expect this thread once a position.
    #[inline(always)]
    pub(super) unsafe fn release(self, position: u32) {
        // SAFETY: by this function's contract.
        unsafe { self.empty(self.stage(position).0).arrive() }
    }

    /// Copies slice `slice` of the block's tile at (`row0`, `col0`) into
    /// the stage of ring position `position`: A's box, then B's panels of
    /// 64 columns, their bytes expected by the stage's full barrier.
    ///
    /// # Safety
    /// This thread made the ring; no thread reads the stage still (its
    /// empty barrier said so, or it has never been filled).
    #[inline(always)]
    pub(super) unsafe fn load(
        self,
        [a_map, b_map]: [TensorMap2d<bf16>; 2],
        (position, slice): (u32, u32),
        (row0, col0): (u32, u32),
    ) {
        let tile = self.tile;
        let (stage, first) = self.stage(position);
        let k0 = (slice * tile.slice) as i32;
        let a_elements = tile.rows * tile.slice;
        // SAFETY: each box lies inside the ring on a 1024-byte boundary;
        // by this function's contract for the rest.
        unsafe {
            let full = self.full(stage);
            full.arrive_expect_tx(2 * Layout::Swizzled.stage_elements(tile));
            memcpy_async_tensor_2d(self.stages, first, a_map, k0, row0 as i32, full);
            for panel in 0..tile.cols / 64 {
                let (at, x) = (
                    first + a_elements + panel * tile.slice * 64,
                    col0 + 64 * panel,
                );
                memcpy_async_tensor_2d(self.stages, at, b_map, x as i32, k0, full);
            }
        }
    }
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
/// [`super::ring_tiles`]`(RING)`'s.
#[inline(always)]
pub unsafe fn ring(
    (a_map, b_map, c): (TensorMap2d<bf16>, TensorMap2d<bf16>, GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    let tile = RING;
    let maps = [a_map, b_map];
    // SAFETY: every thread; the launch gives the ring.
    let ring = unsafe { Ring::new(tile, maps, CONSUMERS) };
    let (origin, slices) = (ring.origin(), ring.slices(k));
    let producer = thread_idx_x() == 0;
    if producer {
        // SAFETY: no stage has been filled.
        (0..slices.min(tile.stages))
            .for_each(|slice| unsafe { ring.load(maps, (slice, slice), origin) });
    }
    let group = thread_idx_x() / 128;
    let mut flight = Accumulators::<64>::ZERO.fence();
    for slice in 0..slices {
        // SAFETY: every thread, each slice in order.
        flight = unsafe { ring.consume(flight, slice, group) };
        if let Some(done) = slice.checked_sub(1) {
            // SAFETY: the wgmmas that read the slice before are retired.
            unsafe { ring.release(done) };
            if producer && done + tile.stages < slices {
                let next = done + tile.stages;
                // SAFETY: once every thread has arrived at the stage's
                // empty barrier, none reads it.
                unsafe {
                    ring.empty(ring.stage(done).0).wait(ring.parity(done));
                    ring.load(maps, (next, next), origin);
                }
            }
        }
    }
    let sums = flight.wait();
    let (row0, col0) = origin;
    // SAFETY: each thread stores its own elements, inside C.
    unsafe { store(&sums, c, (row0 + 64 * group, col0), (m, n)) };
}
