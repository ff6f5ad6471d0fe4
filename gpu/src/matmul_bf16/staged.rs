//! The staged rungs: a slice of A and B copied into shared memory by the
//! whole block, with plain loads and stores, then handed to each warp's
//! fragments by `ldmatrix`.

use gpu_std::global::{Global, GlobalMut, Line, row_major};
use gpu_std::shared::SharedArray;
use gpu_std::{bf16, thread::*};

use super::warp_tile::{Sums, multiply_slice, store};
use super::{CHUNK, Layout, Tile};

/// Calls `copy(row, col, from)` for each 16-byte chunk of the
/// `rows`×`cols` slice from (`row0`, `col0`) of a `height`×`width` matrix
/// that this thread copies, the block's threads taking consecutive
/// chunks: `from` is the chunk's first element in the matrix, `None` past
/// its edges (a chunk is wholly inside or outside, `width` a multiple of
/// [`CHUNK`]). `rows × cols / CHUNK` is a multiple of `threads`.
#[inline(always)]
pub fn each_chunk(
    (height, width): (u32, u32),
    (row0, col0): (u32, u32),
    (rows, cols, threads): (u32, u32, u32),
    mut copy: impl FnMut(u32, u32, Option<usize>),
) {
    let chunks = cols / CHUNK;
    for step in 0..rows * chunks / threads {
        let chunk = step * threads + thread_idx_x();
        let (row, col) = (chunk / chunks, chunk % chunks * CHUNK);
        let (r, j) = (row0 + row, col0 + col);
        // SAFETY: (r, j) is inside the matrix, whose indices fit in u32.
        let from = (r < height && j < width).then(|| unsafe { row_major(r, j, width) });
        copy(row, col, from);
    }
}

/// The block's tile of C, k a slice at a time: the block stages A's and
/// B's slices with `layout`, loading 16 bytes into registers and storing
/// them, waits, and each warp multiplies its part.
///
/// # Safety
/// As [`super::mma_global`], with [`super::block_tiles`]'s launch for
/// `tile` (one stage) and `layout`.
#[inline(always)]
pub unsafe fn staged<const M: usize, const N: usize>(
    tile: Tile,
    layout: Layout,
    (a, b, c): (Global<bf16>, Global<bf16>, GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    // SAFETY: inside a kernel; the launch gives the slices.
    let shared = unsafe { SharedArray::<bf16>::launch_sized() };
    let (row0, col0) = (block_idx_y() * tile.rows, block_idx_x() * tile.cols);
    let mut sums: Sums<M, N> = [[gpu_std::mma::Accumulator::ZERO; N]; M];
    // SAFETY: the matrices start on 256-byte boundaries.
    let (a_bytes, b_bytes) = unsafe { (a.cast::<u8>(), b.cast::<u8>()) };
    let line = |bytes: Global<u8>, from: Option<usize>| -> Line {
        // SAFETY: a chunk inside its matrix, 16-byte aligned as the rows
        // are multiples of 8 elements.
        from.map_or([0; 4], |element| unsafe { bytes.read_line(2 * element) })
    };
    for k0 in (0..k).step_by(tile.slice as usize) {
        let threads = tile.threads();
        each_chunk(
            (m, k),
            (row0, k0),
            (tile.rows, tile.slice, threads),
            |row, col, from| {
                // SAFETY: the layout keeps chunks whole inside the allocation.
                unsafe { shared.write_line(layout.a(tile, row, col), line(a_bytes, from)) };
            },
        );
        each_chunk(
            (k, n),
            (k0, col0),
            (tile.slice, tile.cols, threads),
            |row, col, from| {
                // SAFETY: as for A.
                unsafe { shared.write_line(layout.b(tile, row, col), line(b_bytes, from)) };
            },
        );
        sync_threads();
        // SAFETY: the slice is staged and visible.
        unsafe { multiply_slice(tile, layout, shared, &mut sums) };
        sync_threads();
    }
    // SAFETY: each lane stores its own elements.
    unsafe { store(tile, &sums, c, (row0, col0), (m, n)) };
}
