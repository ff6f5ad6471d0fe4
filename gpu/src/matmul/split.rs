//! Split k: the small tiles' k divided among the blocks of a cluster,
//! their partial tiles summed through distributed shared memory.

use gpu_std::cluster::{self, map_shared_rank};
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::shared::SharedArray;
use gpu_std::thread::*;

use super::geometry::{A_TILE_PADDING, Blocking, SPLIT_K};
use super::pipelined::{Partial, accumulate, pipelined_shared_elements};
use super::staging::TileOrder;

/// Shared memory of a split-k kernel blocked as `blocking`
/// ([`matmul_split_k`](super::matmul_split_k)), in f32: the pipelined
/// stages, or the partial tile with its padded rows where that is more.
pub const fn split_shared_elements(blocking: Blocking) -> u32 {
    let tile = blocking.rows * (blocking.cols + A_TILE_PADDING);
    let stages = pipelined_shared_elements(blocking);
    if tile > stages { tile } else { stages }
}

/// C = A·B with each tile of C blocked as `blocking` and its k split in
/// [`SPLIT_K`] ranges of slices, one a block of the tile's cluster: each
/// block sums its range as the pipelined kernels do, writes its partial
/// tile into its own shared memory (over the stages, which it has done
/// with), and after a cluster barrier sums its [`SPLIT_K`]th of the
/// tile's rows across the cluster's shared memory, in rank order, and
/// stores them; a second barrier keeps every block's tile there until the
/// others have read it.
///
/// # Safety
/// As [`super::pipelined::pipelined`], launched as [`Blocking::split_launch`] says
/// (clusters of [`SPLIT_K`] blocks along z) with
/// [`split_shared_elements`]`(blocking)` f32 of launch-sized shared
/// memory; `blocking.rows` is a multiple of [`SPLIT_K`] and
/// `blocking.thread_cols` of 4.
#[inline(always)]
pub(super) unsafe fn split_k<const THREAD_COLS: usize>(
    blocking: Blocking,
    a: Global<f32>,
    b: Global<f32>,
    c: GlobalMut<f32>,
    (m, n, k): (u32, u32, u32),
) {
    let (rank, parts) = (cluster::block_rank(), SPLIT_K);
    let slices = k.div_ceil(blocking.slice);
    let each = slices.div_ceil(parts);
    let range = (rank * each).min(slices)..((rank + 1) * each).min(slices);
    // A block whose range is empty (k of fewer slices than blocks) adds
    // zeros.
    let partial = match range.is_empty() {
        true => Partial::<THREAD_COLS>::zero(blocking, TileOrder::RowByRow),
        // SAFETY: forwarded contract; the range is the block's.
        false => unsafe {
            accumulate::<THREAD_COLS>(blocking, TileOrder::RowByRow, a, b, (m, n, k), range)
        },
    };
    // Every warp is done with the stages before they hold the tile.
    sync_threads();
    // Rows padded by [`A_TILE_PADDING`] words: a quarter-warp's 16-byte
    // stores, two rows of four threads, then fall in different banks.
    let stride = blocking.cols + A_TILE_PADDING;
    // SAFETY: the launch provides the tile's words (the contract).
    let (tile, words) = unsafe {
        (
            SharedArray::<f32>::launch_sized(),
            SharedArray::<u32>::launch_sized(),
        )
    };
    for (r, sums) in (0u32..).zip(&partial.sums) {
        for (j, four) in (0u32..).step_by(4).zip(sums.chunks_exact(4)) {
            let (row, col) = partial.place(r, j);
            // SAFETY: inside the tile, 16-byte aligned (`col` and the
            // stride are multiples of 4); each element is this thread's.
            unsafe { tile.write_vector(row * stride + col, [four[0], four[1], four[2], four[3]]) };
        }
    }
    cluster::sync();
    let rows = blocking.rows / parts;
    let (first_row, first_col) = partial.tile;
    for element in (thread_idx_x()..rows * blocking.cols).step_by(block_dim_x() as usize) {
        let (row, col) = (
            rank * rows + element / blocking.cols,
            element % blocking.cols,
        );
        let mut sum = 0.0f32;
        for peer in 0..parts {
            // SAFETY: every block wrote its tile before the barrier, and
            // none exits before the one below.
            let bits = unsafe { map_shared_rank(words, peer).read(row * stride + col) };
            sum += f32::from_bits(bits);
        }
        let (row, col) = (first_row + row, first_col + col);
        if row < m && col < n {
            // SAFETY: inside C; this block's rows of the tile are its own.
            unsafe { c.write(row_major(row, col, n), sum) };
        }
    }
    cluster::sync();
}
