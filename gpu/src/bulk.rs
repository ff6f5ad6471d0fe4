//! Who moves a tile into shared memory: the threads, each thread's
//! asynchronous copies, or the Tensor Memory Accelerator.
//!
//! Each block stages one tile of [`TILE`] elements of the input in shared
//! memory and writes it out reversed, so that every thread writes elements
//! other threads staged (the staging is needed, as in a transpose or a
//! convolution's window). The three kernels differ only in how the tile
//! gets there: loads and stores through registers, sixteen elements a
//! thread; per-thread 16-byte `cp.async` copies, four a thread; or one bulk
//! copy of the whole tile (`cp.async.bulk`), issued by one thread and
//! completed on a shared-memory barrier that every thread waits on.

use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta, memcpy_async_bulk};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, pipeline, shared::SharedArray, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements of the input and of the output.
    pub n: u32,
}

/// The kernels' parameters: the input, the output and n.
pub type Args = (Global<f32>, GlobalMut<f32>, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Elements of a block's tile: 16 KiB, 16 elements a thread.
pub const TILE: u32 = 4096;

/// The barrier's bytes before the tile: 16, so that the tile starts on the
/// 16-byte boundary bulk and 16-byte copies need.
const BARRIER_ELEMENTS: u32 = 4;

/// Bytes of shared memory a block takes: the barrier's and the tile's,
/// the same for the three kernels.
pub const SHARED_BYTES: u32 = 4 * (BARRIER_ELEMENTS + TILE);

/// One block a tile.
fn block_per_tile(problem: &Problem) -> Launch {
    let threads = problem.n.div_ceil(TILE) * BLOCK;
    Launch::covering((threads, 1, 1), (BLOCK, 1, 1), SHARED_BYTES)
}

/// The block's tile: its first element, and its length, [`TILE`] or fewer
/// for the last.
#[inline(always)]
fn tile_span(n: u32) -> (u32, u32) {
    let first = block_idx_x() * TILE;
    (first, (n - first).min(TILE))
}

/// The tile in shared memory, after the barrier's bytes.
///
/// # Safety
/// The launch provides [`SHARED_BYTES`].
#[inline(always)]
unsafe fn tile() -> SharedArray<f32> {
    // SAFETY: by this function's contract.
    unsafe { SharedArray::<f32>::launch_sized().after(BARRIER_ELEMENTS) }
}

/// Writes the staged tile of `len` elements out reversed,
/// `output[first + j] = tile[len - 1 - j]`, each thread the elements
/// `j = thread + BLOCK·k`: coalesced stores, conflict-free shared reads.
///
/// # Safety
/// The tile is staged and visible to every thread; `first + len ≤ n`,
/// the output's length.
#[inline(always)]
unsafe fn write_reversed(tile: SharedArray<f32>, output: GlobalMut<f32>, first: u32, len: u32) {
    for k in 0..TILE / BLOCK {
        let j = thread_idx_x() + BLOCK * k;
        if j < len {
            // SAFETY: j < len ≤ TILE, inside the tile and, from `first`,
            // the output; one thread an element.
            unsafe { output.write((first + j) as usize, tile.read(len - 1 - j)) };
        }
    }
}

kernels! {
    /// The bulk-copy lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Stages each tile through registers: a load and a shared store per
    /// element, every thread.
    ///
    /// Each thread loads 16 elements, coalesced, and stores them in the
    /// tile; after a barrier it writes 16 elements of the tile out
    /// reversed.
    ///
    /// Compute-to-global-memory-access ratio: none (8 bytes an element,
    /// read once and written once). Bound by device memory, at best a copy's
    /// bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks of
    /// 16 KiB of shared memory).
    ///
    /// # Safety
    /// `input` and `output` have `n` elements and do not overlap; the
    /// launch is the contract's (one block of [`BLOCK`] threads a tile,
    /// [`SHARED_BYTES`] of shared memory).
    #[launch(block_per_tile)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn reverse_loads(input: Global<f32>, output: GlobalMut<f32>, n: u32) {
        let (first, len) = tile_span(n);
        // SAFETY: the launch provides the shared memory; j < len keeps
        // every access inside the tile and the buffers, one thread an
        // element; the barrier orders the tile's stores before its reads.
        unsafe {
            let tile = tile();
            for k in 0..TILE / BLOCK {
                let j = thread_idx_x() + BLOCK * k;
                if j < len {
                    tile.write(j, input.read((first + j) as usize));
                }
            }
            sync_threads();
            write_reversed(tile, output, first, len);
        }
    }

    /// Stages each tile with asynchronous copies: four 16-byte `cp.async`
    /// a thread, no register between global and shared memory.
    ///
    /// Each thread copies 16 elements as four 16-byte copies (`LDGSTS`);
    /// the last tile's 1 to 3 elements past its 16-byte chunks, if any, are
    /// 4-byte copies. Each thread waits for its own, and after a barrier
    /// writes 16 elements of the tile out reversed.
    ///
    /// Compute-to-global-memory-access ratio: none. Bound by device
    /// memory.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM.
    ///
    /// # Safety
    /// As `reverse_loads`.
    #[launch(block_per_tile)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn reverse_async(input: Global<f32>, output: GlobalMut<f32>, n: u32) {
        let (first, len) = tile_span(n);
        let chunks = len / 4 * 4;
        // SAFETY: as in `reverse_loads`; each 16-byte copy starts on a
        // multiple of 4 elements of the tile and of the input (TILE is
        // one) and ends inside both, and the 4-byte copies take the tail.
        unsafe {
            let tile = tile();
            for k in 0..TILE / BLOCK / 4 {
                let j = 4 * (thread_idx_x() + BLOCK * k);
                if j < chunks {
                    pipeline::memcpy_async_vector(tile, j, input, (first + j) as usize, 4);
                }
            }
            let j = chunks + thread_idx_x();
            if j < len {
                pipeline::memcpy_async(tile, j, input, Some((first + j) as usize));
            }
            pipeline::commit();
            pipeline::wait_prior::<0>();
            sync_threads();
            write_reversed(tile, output, first, len);
        }
    }

    /// Stages each tile with one bulk copy by the Tensor Memory
    /// Accelerator, completed on a shared-memory barrier.
    ///
    /// Thread 0 initialises the barrier for one arrival; after a block
    /// barrier it arrives, expecting the tile's bytes, and issues one
    /// `cp.async.bulk` of the tile's whole 16-byte chunks; the last tile's
    /// 1 to 3 elements past them, if any, are loaded by threads. Every
    /// thread waits on the barrier's first phase, then writes 16 elements
    /// of the tile out reversed.
    ///
    /// Compute-to-global-memory-access ratio: none. Bound by device
    /// memory.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM. Compute capability 9.0
    /// or newer.
    ///
    /// # Safety
    /// As `reverse_loads`.
    #[launch(block_per_tile)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    #[compute_capability(9, 0)]
    pub unsafe fn reverse_bulk(input: Global<f32>, output: GlobalMut<f32>, n: u32) {
        let (first, len) = tile_span(n);
        let chunks = len / 4 * 4;
        // SAFETY: the barrier's 16 bytes come before the tile; thread 0
        // initialises it before the block barrier, arrives once (its one
        // expected arrival) and copies what it expects, from a multiple of
        // 4 elements; the threads load the tail past the copy's elements,
        // before the block barrier, and read the tile only after the wait.
        unsafe {
            let barrier = Mbarrier::at(SharedArray::launch_sized());
            let tile = tile();
            if thread_idx_x() == 0 {
                barrier.init(1);
                fence_proxy_async_shared_cta();
            }
            let j = chunks + thread_idx_x();
            if j < len {
                tile.write(j, input.read((first + j) as usize));
            }
            sync_threads();
            if thread_idx_x() == 0 {
                barrier.arrive_expect_tx(4 * chunks);
                if chunks > 0 {
                    memcpy_async_bulk(tile, 0, input, first as usize, chunks, barrier);
                }
            }
            barrier.wait(0);
            write_reversed(tile, output, first, len);
        }
    }
}
