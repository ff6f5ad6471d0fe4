//! Who stages a transpose's tiles: the threads' loads, each thread's
//! asynchronous copies, or the Tensor Memory Accelerator's tensor copy.
//!
//! Each block transposes one tile of [`TILE_ROWS`] × [`TILE_COLS`]
//! elements of a row-major array of `rows × cols`: it stages the tile in
//! shared memory,
//! row by row as the input lies, and writes it out column by column, so
//! that both its global reads and its global writes are whole sectors. The
//! three kernels differ only in how the tile gets there: four 16-byte loads
//! and 16-byte shared stores a thread; four 16-byte `cp.async` a thread;
//! or one tensor copy of the whole tile (`cp.async.bulk.tensor.2d`),
//! issued by one thread through a tensor map the host encoded, completed
//! on a shared-memory barrier.
//!
//! The tile is tall for the tensor copy's sake. Rust cannot pass the map
//! as a kernel parameter, as CUDA C++ does, so it lives in global memory,
//! and each block must acquire it before its first copy: a fence that
//! costs about a microsecond. With 32-row tiles the fence left the tensor
//! copy well behind the per-thread copies (on an H100); 128 rows share it
//! among four times the bytes, and where many waves of blocks pass through
//! the SMs, the three kernels move tiles alike.
//!
//! A tensor copy cannot pad a tile's rows, the usual cure for the bank
//! conflicts of reading a column. It swizzles them instead
//! ([`Swizzle::Bytes128`]): the 16-byte chunks of each 128-byte row are
//! permuted by the row's place among eight, so a warp reading four columns
//! of eight rows meets 32 different banks. All three kernels lay the tile
//! out so, and read it the same way.

use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta};
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::tensor::{
    Element, Swizzle, TensorMap2d, TiledMap, memcpy_async_tensor_2d, swizzle_128b,
};
use gpu_std::{FULL_SM_THREADS, Launch, pipeline, shared::SharedArray, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Rows of the input, columns of the output.
    pub rows: u32,
    /// Columns of the input, a multiple of 4; rows of the output.
    pub cols: u32,
}

/// The kernels' parameters: the input as a view and as a tensor map (each
/// kernel reads it one way), the output, rows and columns.
pub type Args = (Global<f32>, TensorMap2d, GlobalMut<f32>, u32, u32);

/// Columns of a block's tile: one 128-byte row of the swizzle a tile row.
pub const TILE_COLS: u32 = 32;

/// Rows of a block's tile.
pub const TILE_ROWS: u32 = 128;

/// Threads per block: four 16-byte chunks of the tile a thread.
pub const BLOCK: u32 = 256;

/// Rows of the tile a pass of the block's threads stages, 8 threads a row.
const ROWS_A_PASS: u32 = BLOCK / 8;

/// The tensor map the host encodes over the input for `transpose_tensor`:
/// one tile a copy, swizzled in 128-byte rows.
pub const fn tensor_map(problem: &Problem) -> TiledMap {
    TiledMap {
        width: problem.cols,
        height: problem.rows,
        box_width: TILE_COLS,
        box_height: TILE_ROWS,
        swizzle: Swizzle::Bytes128,
        element: Element::F32,
    }
}

/// Elements of the tile, then the barrier's 16 bytes: the tile at the
/// start of the launch-sized memory, 1024-byte aligned as the swizzle
/// asks.
const TILE_ELEMENTS: u32 = TILE_ROWS * TILE_COLS;

/// Bytes of shared memory a block takes, the same for the three kernels.
pub const SHARED_BYTES: u32 = 4 * TILE_ELEMENTS + 16;

/// One block a tile: x along the input's columns, y along its rows.
fn block_per_tile(problem: &Problem) -> Launch {
    let tiles = (
        problem.cols.div_ceil(TILE_COLS),
        problem.rows.div_ceil(TILE_ROWS),
        1,
    );
    Launch::covering((tiles.0 * BLOCK, tiles.1, 1), (BLOCK, 1, 1), SHARED_BYTES)
}

/// Calls `stage(at, from)` for each of this thread's four 16-byte chunks
/// of the tile that lie inside the input: `at` where the chunk lies in the
/// swizzled tile, `from` where it starts in the input. Eight threads a
/// row of the tile, 32 rows a pass, so a warp reads four whole rows.
#[inline(always)]
fn for_each_chunk(rows: u32, cols: u32, mut stage: impl FnMut(u32, usize)) {
    let column = 4 * (thread_idx_x() % 8);
    let (tile_row, tile_column) = (block_idx_y() * TILE_ROWS, block_idx_x() * TILE_COLS);
    for pass in 0..TILE_ROWS / ROWS_A_PASS {
        let row = thread_idx_x() / 8 + ROWS_A_PASS * pass;
        if tile_row + row < rows && tile_column + column < cols {
            // SAFETY: the index of an element inside the input, whose
            // length `rows · cols` fits a usize.
            let from = unsafe { row_major(tile_row + row, tile_column + column, cols) };
            stage(swizzle_128b(row * TILE_COLS + column), from);
        }
    }
}

/// Writes the staged tile out transposed, `output[c][r] = tile[r][c]`:
/// warp `w` takes tile columns `4w` to `4w + 3`, a lane one column and
/// rows `lane % 8 + 8k`, 16 of them. A warp's store is four runs of eight
/// elements (four whole sectors), and its shared read meets 32 banks.
///
/// The swizzle repeats every eight rows, so a lane's elements lie at one
/// swizzled column, whole 1024-byte repeats apart: each read is a
/// constant offset from the first, and each write one from the output
/// row's start.
///
/// # Safety
/// The tile is staged, swizzled, and visible to every thread; the output
/// has `rows · cols` elements; the launch is the contract's.
#[inline(always)]
unsafe fn write_transposed(tile: SharedArray<f32>, output: GlobalMut<f32>, rows: u32, cols: u32) {
    const REPEAT: u32 = 8;
    let lane = thread_idx_x() % 32;
    let column = 4 * (thread_idx_x() / 32) + lane / 8;
    let output_row = block_idx_x() * TILE_COLS + column;
    if output_row >= cols {
        return;
    }
    let tile_row = block_idx_y() * TILE_ROWS;
    // SAFETY: an element of the output: the launch covers the rows, so
    // `tile_row < rows`.
    let row_start = unsafe { row_major(output_row, tile_row, rows) };
    let first = swizzle_128b(lane % REPEAT * TILE_COLS + column);
    for k in 0..TILE_ROWS / REPEAT {
        let row = lane % REPEAT + REPEAT * k;
        if tile_row + row < rows {
            // SAFETY: inside the tile and, by the guard, the output; one
            // thread an element.
            unsafe {
                let value = tile.read(first + REPEAT * TILE_COLS * k);
                output.write(row_start + row as usize, value);
            }
        }
    }
}

kernels! {
    /// The tensor-copy lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Stages each tile through registers: four 16-byte loads and shared
    /// stores a thread.
    ///
    /// Compute-to-global-memory-access ratio: none (8 bytes an element,
    /// read once and written once). Bound by device memory, at best a
    /// copy's bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` and `output` have `rows · cols` elements and do not
    /// overlap; `cols` is a multiple of 4; the launch is the contract's.
    #[launch(block_per_tile)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn transpose_loads(input: Global<f32>, _map: TensorMap2d, output: GlobalMut<f32>, rows: u32, cols: u32) {
        // SAFETY: the launch provides the tile; a chunk inside the input
        // is whole (cols is a multiple of 4) and 16-byte aligned; the
        // barrier orders the tile's stores before its reads.
        unsafe {
            let tile = SharedArray::<f32>::launch_sized();
            for_each_chunk(rows, cols, |at, from| {
                tile.write_vector(at, input.read_vector(from));
            });
            sync_threads();
            write_transposed(tile, output, rows, cols);
        }
    }

    /// Stages each tile with asynchronous copies: four 16-byte `cp.async`
    /// a thread, no register between global and shared memory.
    ///
    /// Compute-to-global-memory-access ratio: none. Bound by device
    /// memory.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM.
    ///
    /// # Safety
    /// As `transpose_loads`.
    #[launch(block_per_tile)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn transpose_async(input: Global<f32>, _map: TensorMap2d, output: GlobalMut<f32>, rows: u32, cols: u32) {
        // SAFETY: as in `transpose_loads`; each thread waits for its own
        // copies before the barrier.
        unsafe {
            let tile = SharedArray::<f32>::launch_sized();
            for_each_chunk(rows, cols, |at, from| {
                pipeline::memcpy_async_vector(tile, at, input, from, 4);
            });
            pipeline::commit();
            pipeline::wait_prior::<0>();
            sync_threads();
            write_transposed(tile, output, rows, cols);
        }
    }

    /// Stages each tile with one tensor copy by the Tensor Memory
    /// Accelerator, through a tensor map, completed on a shared-memory
    /// barrier.
    ///
    /// Thread 0 acquires the map and initialises the barrier for one
    /// arrival; after a block barrier it arrives, expecting the tile's
    /// bytes, and issues one copy of the tile, which the hardware
    /// swizzles as the map says and fills with zeros past the input's
    /// edges. Every thread waits on the barrier's first phase, then
    /// writes its elements out.
    ///
    /// Compute-to-global-memory-access ratio: none. Bound by device
    /// memory.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM. Compute capability 9.0
    /// or newer.
    ///
    /// # Safety
    /// As `transpose_loads`, and `map` is [`tensor_map`] of the problem
    /// over `input`.
    #[launch(block_per_tile)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    #[compute_capability(9, 0)]
    pub unsafe fn transpose_tensor(_input: Global<f32>, map: TensorMap2d, output: GlobalMut<f32>, rows: u32, cols: u32) {
        // SAFETY: the barrier's 16 bytes follow the tile; thread 0
        // initialises it before the block barrier, arrives once (its one
        // expected arrival) and copies what it expects, to the start of
        // the launch-sized memory, 1024-byte aligned; every thread reads
        // the tile only after the wait.
        unsafe {
            let tile = SharedArray::<f32>::launch_sized();
            let barrier = Mbarrier::at(SharedArray::launch_sized().after(TILE_ELEMENTS / 2));
            if thread_idx_x() == 0 {
                map.acquire();
                barrier.init(1);
                fence_proxy_async_shared_cta();
            }
            sync_threads();
            if thread_idx_x() == 0 {
                barrier.arrive_expect_tx(4 * TILE_ELEMENTS);
                let (x, y) = (block_idx_x() * TILE_COLS, block_idx_y() * TILE_ROWS);
                memcpy_async_tensor_2d(tile, 0, map, x as i32, y as i32, barrier);
            }
            barrier.wait(0);
            write_transposed(tile, output, rows, cols);
        }
    }
}
