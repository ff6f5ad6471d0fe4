//! A matrix transpose written from scratch with gpu-std, in three steps:
//! naive, through a tile of shared memory, and through a padded tile.
//! Each moves 8 bytes an element and computes nothing: all three are bound
//! by memory, and the steps show how much of its bandwidth they reach.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel, asm_experimental_arch))]

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::shared::StaticArray;
use gpu_std::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};
use gpu_std::{Launch, kernels, shared_array};

/// The side of the square tile each block moves.
pub const TILE: u32 = 32;
/// Rows of threads in a block: each thread moves `TILE / ROWS` elements,
/// in a loop of that constant count, which the compiler unrolls.
pub const ROWS: u32 = 8;

/// A row-major `rows` × `cols` matrix, into its `cols` × `rows` transpose.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub rows: u32,
    pub cols: u32,
}

/// The kernels' parameters: the input, the output, `rows` and `cols`.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32);

/// A block of `TILE` × `ROWS` threads for each tile of the input, the
/// grid's x walking down the input: blocks that run together then write
/// neighbouring pieces of one output row, which the DRAM takes faster.
pub fn tiles(shape: &Shape) -> Launch {
    let grid = (shape.rows.div_ceil(TILE), shape.cols.div_ceil(TILE), 1);
    Launch { grid, block: (TILE, ROWS, 1), shared_bytes: 0, cluster: (1, 1, 1) }
}

/// Copies the block's tile of `input` into `tile`, `pitch` words a row: a
/// warp reads 32 neighbours of one row, and writes them to one row.
///
/// # Safety
/// As for the kernels; `tile` holds `TILE` rows of `pitch` ≥ `TILE` words.
#[inline(always)]
pub unsafe fn load_tile(input: Global<f32>, tile: StaticArray<f32>, pitch: u32, shape: Shape) {
    let Shape { rows, cols } = shape;
    let (x, col) = (thread_idx_x(), block_idx_y() * TILE + thread_idx_x());
    for step in (0..TILE).step_by(ROWS as usize) {
        let (y, row) = (thread_idx_y() + step, block_idx_x() * TILE + thread_idx_y() + step);
        if row < rows && col < cols {
            // SAFETY: (row, col) is inside the input, (y, x) inside the tile.
            unsafe { tile.write(y * pitch + x, input.read(row_major(row, col, cols))) };
        }
    }
}

/// Writes the block's tile, transposed, into `output`: a warp reads one
/// column of the tile, and writes it to one row of the output.
///
/// # Safety
/// As for [`load_tile`], after a barrier that follows it.
#[inline(always)]
pub unsafe fn store_tile(tile: StaticArray<f32>, pitch: u32, output: GlobalMut<f32>, shape: Shape) {
    let Shape { rows, cols } = shape;
    let (x, col) = (thread_idx_x(), block_idx_x() * TILE + thread_idx_x());
    for step in (0..TILE).step_by(ROWS as usize) {
        let (y, row) = (thread_idx_y() + step, block_idx_y() * TILE + thread_idx_y() + step);
        if row < cols && col < rows {
            // SAFETY: (row, col) is inside the output, (x, y) inside the tile.
            unsafe { output.write(row_major(row, col, rows), tile.read(x * pitch + y)) };
        }
    }
}

kernels! {
    /// The transpose kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Shape>];

    /// Naive: a warp reads a row and writes a column, one 32-byte sector for every 4 bytes stored.
    ///
    /// 0 FLOP per 8 bytes; bound by the stores' wasted sectors. Launch
    /// bounds: 256 threads.
    ///
    /// # Safety
    /// `input` and `output` hold `rows` × `cols` elements each, which fit in
    /// `u32`, and do not overlap.
    #[launch(tiles)]
    #[launch_bounds(TILE * ROWS)]
    pub unsafe fn transpose_naive(input: Global<f32>, output: GlobalMut<f32>, rows: u32, cols: u32) {
        let col = block_idx_y() * TILE + thread_idx_x();
        for step in (0..TILE).step_by(ROWS as usize) {
            let row = block_idx_x() * TILE + thread_idx_y() + step;
            if row < rows && col < cols {
                // SAFETY: (row, col) is inside the input, (col, row) inside the output.
                unsafe { output.write(row_major(col, row, rows), input.read(row_major(row, col, cols))) };
            }
        }
    }

    /// Tiled: through a 32×32 tile of shared memory, every global access a row; a column of the tile is in one bank.
    ///
    /// 0 FLOP per 8 bytes; bound by the tile's 32-way bank conflicts.
    /// Launch bounds: 256 threads.
    ///
    /// # Safety
    /// As for [`transpose_naive`].
    #[launch(tiles)]
    #[launch_bounds(TILE * ROWS)]
    pub unsafe fn transpose_tiled(input: Global<f32>, output: GlobalMut<f32>, rows: u32, cols: u32) {
        // SAFETY: inside a kernel; the tile is TILE × TILE, the barrier between.
        let tile = unsafe { shared_array!(TILE_32: [f32; TILE * TILE]) };
        unsafe { load_tile(input, tile, TILE, Shape { rows, cols }) };
        sync_threads();
        unsafe { store_tile(tile, TILE, output, Shape { rows, cols }) };
    }

    /// Padded: one more word a tile row puts a column's 32 words in 32 banks.
    ///
    /// 0 FLOP per 8 bytes; bound by the memory's bandwidth, as a copy is.
    /// Launch bounds: 256 threads.
    ///
    /// # Safety
    /// As for [`transpose_naive`].
    #[launch(tiles)]
    #[launch_bounds(TILE * ROWS)]
    pub unsafe fn transpose_padded(input: Global<f32>, output: GlobalMut<f32>, rows: u32, cols: u32) {
        // SAFETY: inside a kernel; the tile is TILE × (TILE + 1), the barrier between.
        let tile = unsafe { shared_array!(TILE_33: [f32; TILE * (TILE + 1)]) };
        unsafe { load_tile(input, tile, TILE + 1, Shape { rows, cols }) };
        sync_threads();
        unsafe { store_tile(tile, TILE + 1, output, Shape { rows, cols }) };
    }
}

/// The transpose of `input` on the CPU, to check the kernels against.
#[cfg(not(target_arch = "nvptx64"))]
pub fn transposed(input: &[f32], Shape { rows, cols }: Shape) -> Vec<f32> {
    let at = |i: u32| input[((i % rows) * cols + i / rows) as usize];
    (0..rows * cols).map(at).collect()
}
