//! The staged rungs: a slice of A and B copied into shared memory by the
//! whole block, then handed to each warp's fragments by `ldmatrix`.

use gpu_std::global::{Global, GlobalMut, Line, row_major};
use gpu_std::mma::{Accumulator, FragmentA, FragmentB, ldmatrix, mma_sync};
use gpu_std::shared::SharedArray;
use gpu_std::{bf16, thread::*};

use super::{BLOCK_COLS, BLOCK_ROWS, CHUNK, MMA_K, SLICE, THREADS, TileLayout};

/// A warp's tile of C: 64 rows (four `mma` rows of 16) by 32 columns
/// (four `mma` columns of 8).
const WARP_ROWS: u32 = 64;
const WARP_COLS: u32 = 32;
const M_TILES: usize = (WARP_ROWS / 16) as usize;
const N_TILES: usize = (WARP_COLS / 8) as usize;

/// Copies the `rows`×`cols` slice of `matrix` (`width` elements a row,
/// `height` rows) from (`row0`, `col0`) into `tile` at `at(row, col)`,
/// 16 bytes a thread a step, zeros past the matrix.
///
/// # Safety
/// `matrix` is `height`×`width`, `width` a multiple of [`CHUNK`]; `at`
/// keeps every chunk whole and inside the launch-sized memory; no other
/// thread touches the tile until the next barrier.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn stage(
    matrix: Global<bf16>,
    (height, width): (u32, u32),
    (row0, col0): (u32, u32),
    (rows, cols): (u32, u32),
    tile: SharedArray<bf16>,
    at: impl Fn(u32, u32) -> u32,
) {
    // SAFETY: the matrix starts on a 256-byte boundary.
    let bytes = unsafe { matrix.cast::<u8>() };
    let chunks = cols / CHUNK;
    for step in 0..rows * chunks / THREADS {
        let chunk = step * THREADS + thread_idx_x();
        let (row, col) = (chunk / chunks, chunk % chunks * CHUNK);
        let (r, j) = (row0 + row, col0 + col);
        let line: Line = if r < height && j < width {
            // SAFETY: the chunk is inside the matrix, 16-byte aligned as
            // width is a multiple of 8.
            unsafe { bytes.read_line(2 * row_major(r, j, width)) }
        } else {
            [0; 4]
        };
        // SAFETY: by this function's contract.
        unsafe { tile.write_line(at(row, col), line) };
    }
}

/// The block's 128×128 tile of C, k a slice of 32 at a time: the block
/// stages A's and B's slices with `L`'s layout, then each warp loads its
/// fragments with `ldmatrix` (A's directly, B's transposed) and makes 16
/// `mma.sync` per 16 of k.
///
/// # Safety
/// As [`super::mma_global`], with [`super::block_tiles`]`::<L>`'s
/// launch.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
pub unsafe fn staged<L: TileLayout>(
    a: Global<bf16>,
    b: Global<bf16>,
    c: GlobalMut<f32>,
    m: u32,
    n: u32,
    k: u32,
) {
    // SAFETY: inside a kernel; the launch gives both slices.
    let tile = unsafe { SharedArray::<bf16>::launch_sized() };
    let (warp, lane) = (thread_idx_x() / 32, thread_idx_x() % 32);
    let (row0, col0) = (block_idx_y() * BLOCK_ROWS, block_idx_x() * BLOCK_COLS);
    let (warp_row, warp_col) = (warp / 4 * WARP_ROWS, warp % 4 * WARP_COLS);
    let mut sums = [[Accumulator::ZERO; N_TILES]; M_TILES];
    for k0 in (0..k).step_by(SLICE as usize) {
        // SAFETY: the layouts keep chunks whole inside the allocation.
        unsafe {
            stage(a, (m, k), (row0, k0), (BLOCK_ROWS, SLICE), tile, L::a);
            stage(b, (k, n), (k0, col0), (SLICE, BLOCK_COLS), tile, L::b);
        }
        sync_threads();
        for step in 0..SLICE / MMA_K {
            let i = step * MMA_K;
            // Lane l names row l % 16 of a 16×16 block of A, its left or
            // right half: the four 8×8 matrices of a fragment.
            let fa: [FragmentA<bf16>; M_TILES] = core::array::from_fn(|t| {
                let row = warp_row + 16 * t as u32 + lane % 16;
                // SAFETY: the slice was staged before the barrier.
                FragmentA(unsafe { ldmatrix(tile, L::a(row, i + lane / 16 * 8), false) })
            });
            // Lane l names row l % 16 of a 16×16 block of B (k), its left
            // or right 8 columns: two fragments, transposed on the way.
            let fb: [[FragmentB<bf16>; 2]; N_TILES / 2] = core::array::from_fn(|pair| {
                let col = warp_col + 16 * pair as u32 + lane / 16 * 8;
                // SAFETY: as for A.
                let [b0, b1, b2, b3] = unsafe { ldmatrix(tile, L::b(i + lane % 16, col), true) };
                [FragmentB([b0, b1]), FragmentB([b2, b3])]
            });
            // Index loops over constant counts, which LLVM unrolls into
            // registers; an array's by-value iterator would live in local
            // memory.
            for t in 0..M_TILES {
                for u in 0..N_TILES {
                    sums[t][u] = mma_sync(fa[t], fb[u / 2][u % 2], sums[t][u]);
                }
            }
        }
        sync_threads();
    }
    let (g, q) = (lane / 4, lane % 4);
    for t in 0..M_TILES {
        for u in 0..N_TILES {
            for d in 0..4 {
                let r = row0 + warp_row + 16 * t as u32 + g + 8 * (d as u32 / 2);
                let j = col0 + warp_col + 8 * u as u32 + 2 * q + d as u32 % 2;
                if r < m && j < n {
                    // SAFETY: inside C; each element is one lane's.
                    unsafe { c.write(row_major(r, j, n), sums[t][u].0[d]) };
                }
            }
        }
    }
}
