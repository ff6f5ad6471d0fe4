//! The staged rungs: a slice of A and B copied into shared memory by the
//! whole block, with plain loads and stores, then handed to each warp's
//! fragments by `ldmatrix`.

use gpu_std::global::{Global, GlobalMut, Line, row_major};
use gpu_std::shared::SharedArray;
use gpu_std::{bf16, thread::*};

use super::geometry::{CHUNK, Tile};
use super::layout::Layout;
use super::warp_tile::{Sums, multiply_slice, store};

/// One of the two matrices a slice is copied from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    A,
    B,
}

/// Calls `copy(operand, row, col, from)` for each 16-byte chunk of the
/// slice from `k0` of A and of B that this thread copies, the block's
/// threads taking consecutive chunks: (`row`, `col`) in the operand's
/// slice, `from` the chunk's first element in its matrix, `None` past its
/// edges (a chunk is wholly inside or outside, its rows being multiples of
/// [`CHUNK`] long).
///
/// A step of the block's threads covers whole rows
/// ([`Tile::copies_whole_rows`]), so that each thread keeps its column and
/// moves down a fixed number of rows a step: one address increment a step,
/// where a row and column worked out for each chunk cost the pipelined
/// kernel a register a chunk, more than it has.
#[inline(always)]
pub fn each_chunk(
    tile: Tile,
    (m, n, k): (u32, u32, u32),
    (row0, col0): (u32, u32),
    k0: u32,
    mut copy: impl FnMut(Operand, u32, u32, Option<usize>),
) {
    // A closure called twice, not a loop over an array of the two: the
    // array's by-value iterator would live in local memory.
    let mut each = |operand, (height, width): (u32, u32), (first_row, first_col), (rows, cols)| {
        let chunks = cols / CHUNK;
        let rows_per_step = tile.threads() / chunks;
        let (first, col) = (thread_idx_x() / chunks, thread_idx_x() % chunks * CHUNK);
        for step in 0..rows / rows_per_step {
            let row = first + step * rows_per_step;
            let (r, j) = (first_row + row, first_col + col);
            // SAFETY: (r, j) is inside the matrix, whose indices fit in u32.
            let from = (r < height && j < width).then(|| unsafe { row_major(r, j, width) });
            copy(operand, row, col, from);
        }
    };
    each(Operand::A, (m, k), (row0, k0), (tile.rows, tile.slice));
    each(Operand::B, (k, n), (k0, col0), (tile.slice, tile.cols));
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
        each_chunk(
            tile,
            (m, n, k),
            (row0, col0),
            k0,
            |operand, row, col, from| {
                let (at, bytes) = match operand {
                    Operand::A => (layout.a(tile, row, col), a_bytes),
                    Operand::B => (layout.b(tile, row, col), b_bytes),
                };
                // SAFETY: the layout keeps chunks whole inside the allocation.
                unsafe { shared.write_line(at, line(bytes, from)) };
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
