//! The pipelined matmuls' one body: two stages in shared memory, the next
//! slice of A and B copied asynchronously into one while the warps compute
//! on the other.

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
    let a_rows = blocking.rows + A_TILE_PADDING;
    let stage_elements = blocked_shared_elements(blocking, A_TILE_PADDING);
    let t = thread_idx_x();
    let (first_row, first_col) = tile_origin(blocking, order);
    // SAFETY: the launch provides every stage, each an A and a B tile.
    let stage = |slice: u32| unsafe {
        slice_tiles(blocking, a_rows, slice % PIPELINE_STAGES * stage_elements)
    };
    let warp_cols = 4 * THREAD_COLS as u32;
    let warps_across = blocking.cols / warp_cols;
    let (warp, lane) = (t / warp::SIZE, t % warp::SIZE);
    let row = warp / warps_across * 64 + lane / 4 * 4;
    let col = warp % warps_across * warp_cols + lane % 4 * 4;
    let slices = k.div_ceil(blocking.slice);
    let b_in_spans = n.is_multiple_of(4);
    // Starts copying `slice`, where there is one, and commits a group
    // either way, so that every wait counts the same groups.
    let copy = |slice: u32| {
        if slice < slices {
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
    copy(0);
    pipeline::wait_prior::<0>();
    sync_threads();
    let mut sums = [[0.0f32; THREAD_COLS]; 8];
    // Each step's FMAs run on fragments loaded one step earlier, so that
    // the next loads' shared-memory latency hides behind them; steps go in
    // pairs, even and odd fragments in registers of their own, so that no
    // step copies the next one's fragments over its own.
    let mut even = fragments(0, 0);
    for slice in 0..slices {
        // Into the stage every thread finished reading before the last
        // barrier.
        copy(slice + 1);
        for i in (0..blocking.slice - 2).step_by(2) {
            let odd = fragments(slice, i + 1);
            add_outer_product(&mut sums, &even.0, &even.1);
            even = fragments(slice, i + 2);
            add_outer_product(&mut sums, &odd.0, &odd.1);
        }
        let odd = fragments(slice, blocking.slice - 1);
        add_outer_product(&mut sums, &even.0, &even.1);
        // The last step's FMAs also cover the wait for the next slice and
        // the barrier that publishes it; then its first fragments (after
        // the last slice, a harmless reload of its own).
        pipeline::wait_prior::<0>();
        sync_threads();
        even = fragments((slice + 1).min(slices - 1), 0);
        add_outer_product(&mut sums, &odd.0, &odd.1);
    }
    let spread = |start: u32, apart: u32| move |index: u32| start + index / 4 * apart + index % 4;
    // SAFETY: each thread stores its own elements of C.
    unsafe {
        store_block(
            c,
            &sums,
            spread(first_row + row, 32),
            spread(first_col + col, 16),
            m,
            n,
        )
    };
}
