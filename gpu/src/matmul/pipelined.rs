//! The pipelined matmuls' one body: two stages in shared memory, the next
//! slice of A and B copied asynchronously into one while the warps compute
//! on the other.

use core::ops::Range;

use super::geometry::{A_TILE_PADDING, Blocking, PIPELINE_STAGES, blocked_shared_elements};
use super::staging::{
    TileOrder, add_outer_product, copy_b_spans, fragment, slice_tiles, stage_a, stage_b,
    store_block, tile_origin,
};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::{pipeline, thread::*, warp};

/// Shared memory of a pipelined kernel blocked as `blocking`, in f32: each
/// of its [`PIPELINE_STAGES`] stages an A tile, padded, and a B tile.
pub const fn pipelined_shared_elements(blocking: Blocking) -> u32 {
    PIPELINE_STAGES * blocked_shared_elements(blocking, A_TILE_PADDING)
}

/// C = A·B with a block's tile of C blocked as `blocking` and taken in
/// `order`, two stages of shared memory, and each thread an 8 ×
/// `THREAD_COLS` block.
///
/// The warps each compute 64 rows × 4·`THREAD_COLS` columns of the block's
/// tile; in a warp, lanes are 8 down × 4 across, and each lane computes 4×4
/// blocks 32 rows and 16 columns apart, so that a quarter-warp's 16-byte
/// fragment loads take one pass through the banks each, A's tile stored
/// transposed and padded by [`A_TILE_PADDING`] as in `matmul_warptiled`.
///
/// While it computes on a slice of k, each thread copies its elements of
/// the next slice into the other stage (the one computed on last)
/// (`memcpy_async`: `cp.async`, `LDGSTS`, from compute capability 8.0 on).
/// Each step's FMAs run on fragments loaded the step before, so that the
/// shared-memory latency of the next loads hides behind them; the steps go
/// in pairs, with fragments of their own, so that no registers are copied
/// from one step to the next. The slice's last step also covers the wait
/// for the next slice and the one barrier a slice, which both publishes the
/// slice that has landed and frees the stage written next. Where B's rows
/// start on 16-byte boundaries (n a multiple of 4), B's part moves in
/// 16-byte copies.
///
/// # Safety
/// `a`, `b` and `c` are m×k, k×n and m×n f32 arrays, `c` not overlapping
/// the others, every index `row * cols + col` fitting in `u32`; blocks of
/// `blocking.threads()` threads, one per tile of C (n along x, m along y),
/// with [`pipelined_shared_elements`]`(blocking)` f32 of
/// launch-sized shared memory; `blocking.thread_rows` is 8 and
/// `blocking.thread_cols` is `THREAD_COLS` (a const generic, for the
/// arrays' length; the entry points pass the blocking's own), a multiple
/// of 4; `blocking.slice` is even, for the pairs of steps.
#[inline(always)]
pub(super) unsafe fn pipelined<const THREAD_COLS: usize>(
    blocking: Blocking,
    order: TileOrder,
    a: Global<f32>,
    b: Global<f32>,
    c: GlobalMut<f32>,
    (m, n, k): (u32, u32, u32),
) {
    let slices = 0..k.div_ceil(blocking.slice);
    // SAFETY: forwarded contract; every slice of k.
    let partial = unsafe { accumulate::<THREAD_COLS>(blocking, order, a, b, (m, n, k), slices) };
    // SAFETY: each thread stores its own elements of C.
    unsafe { partial.store(c, m, n) };
}

/// A thread's block of C, summed over some slices of k: its sums, 8 ×
/// `THREAD_COLS`, and where they lie in C, 4×4 blocks 32 rows and 16
/// columns apart from (`row`, `col`).
pub(super) struct Partial<const THREAD_COLS: usize> {
    pub(super) sums: [[f32; THREAD_COLS]; 8],
    /// The block's tile's first row and column in C.
    pub(super) tile: (u32, u32),
    /// The thread's first row and column in the tile.
    pub(super) at: (u32, u32),
}

impl<const THREAD_COLS: usize> Partial<THREAD_COLS> {
    /// No slice summed yet: the block's tile taken in `order` and the
    /// thread's place in it, warps of 64 rows × 4·`THREAD_COLS` columns,
    /// lanes 8 down × 4 across.
    #[inline(always)]
    pub(super) fn zero(blocking: Blocking, order: TileOrder) -> Self {
        let t = thread_idx_x();
        let warp_cols = 4 * THREAD_COLS as u32;
        let warps_across = blocking.cols / warp_cols;
        let (warp, lane) = (t / warp::SIZE, t % warp::SIZE);
        Self {
            sums: [[0.0f32; THREAD_COLS]; 8],
            tile: tile_origin(blocking, order),
            at: (
                warp / warps_across * 64 + lane / 4 * 4,
                warp % warps_across * warp_cols + lane % 4 * 4,
            ),
        }
    }

    /// Row and column in the tile of each sum.
    pub(super) fn place(&self, r: u32, j: u32) -> (u32, u32) {
        (
            self.at.0 + r / 4 * 32 + r % 4,
            self.at.1 + j / 4 * 16 + j % 4,
        )
    }

    /// Stores the sums into C, m×n.
    ///
    /// # Safety
    /// `c` is m×n; no other thread stores these elements.
    #[inline(always)]
    pub(super) unsafe fn store(&self, c: GlobalMut<f32>, m: u32, n: u32) {
        let (first_row, first_col) = self.tile;
        // SAFETY: by this function's contract.
        unsafe {
            store_block(
                c,
                &self.sums,
                |r| first_row + self.place(r, 0).0,
                |j| first_col + self.place(0, j).1,
                m,
                n,
            )
        };
    }
}

/// [`pipelined`]'s main loop over the slices `slices` of k, and the
/// thread's block of C it sums.
///
/// # Safety
/// As [`pipelined`], C aside; the range is not empty, and the same for
/// every thread of the block (its barriers).
#[inline(always)]
pub(super) unsafe fn accumulate<const THREAD_COLS: usize>(
    blocking: Blocking,
    order: TileOrder,
    a: Global<f32>,
    b: Global<f32>,
    (m, n, k): (u32, u32, u32),
    slices: Range<u32>,
) -> Partial<THREAD_COLS> {
    let a_rows = blocking.rows + A_TILE_PADDING;
    let stage_elements = blocked_shared_elements(blocking, A_TILE_PADDING);
    // SAFETY: the launch provides every stage, each an A and a B tile.
    let stage = |slice: u32| unsafe {
        slice_tiles(blocking, a_rows, slice % PIPELINE_STAGES * stage_elements)
    };
    let mut partial = Partial::<THREAD_COLS>::zero(blocking, order);
    let ((first_row, first_col), (row, col)) = (partial.tile, partial.at);
    let Range { start, end } = slices;
    let b_in_spans = n.is_multiple_of(4);
    // Starts copying `slice`, where there is one, and commits a group
    // either way, so that every wait counts the same groups.
    let copy = |slice: u32| {
        if slice < end {
            let (a_tile, b_tile) = stage(slice);
            let k0 = slice * blocking.slice;
            // SAFETY: guarded copies into this thread's own elements of a
            // stage that no thread reads until the barrier after their
            // wait, nor has read since the barrier before.
            unsafe {
                let a_copy = (first_row, k0);
                stage_a(
                    blocking,
                    pipeline::memcpy_async,
                    a,
                    a_tile,
                    a_rows,
                    a_copy,
                    (m, k),
                );
                if b_in_spans {
                    copy_b_spans(blocking, b, b_tile, (first_col, k0), (n, k));
                } else {
                    stage_b(
                        blocking,
                        pipeline::memcpy_async,
                        b,
                        b_tile,
                        (first_col, k0),
                        (n, k),
                    );
                }
            }
        }
        pipeline::commit();
    };
    // A thread's fragments of step `i` of `slice`: 8 rows of A's column i
    // and `THREAD_COLS` columns of B's row i.
    let fragments = |slice: u32, i: u32| {
        let (a_tile, b_tile) = stage(slice);
        // SAFETY: read only after the barrier that publishes the slice;
        // every start is a multiple of 4 from a 16-byte boundary (a_rows
        // and the columns are multiples of 4).
        unsafe {
            (
                fragment::<8>(a_tile, i * a_rows + row, 32),
                fragment::<THREAD_COLS>(b_tile, i * blocking.cols + col, 16),
            )
        }
    };
    copy(start);
    pipeline::wait_prior::<0>();
    sync_threads();
    let sums = &mut partial.sums;
    // Each step's FMAs run on fragments loaded one step earlier, so that
    // the next loads' shared-memory latency hides behind them; steps go in
    // pairs, even and odd fragments in registers of their own, so that no
    // step copies the next one's fragments over its own.
    let mut even = fragments(start, 0);
    for slice in start..end {
        // Into the stage every thread finished reading before the last
        // barrier.
        copy(slice + 1);
        for i in (0..blocking.slice - 2).step_by(2) {
            let odd = fragments(slice, i + 1);
            add_outer_product(sums, &even.0, &even.1);
            even = fragments(slice, i + 2);
            add_outer_product(sums, &odd.0, &odd.1);
        }
        let odd = fragments(slice, blocking.slice - 1);
        add_outer_product(sums, &even.0, &even.1);
        // The last step's FMAs also cover the wait for the next slice and
        // the barrier that publishes it; then its first fragments (after
        // the last slice, a harmless reload of its own).
        pipeline::wait_prior::<0>();
        sync_threads();
        even = fragments((slice + 1).min(end - 1), 0);
        add_outer_product(sums, &odd.0, &odd.1);
    }
    partial
}
