//! A working set read over and over: where the caches' capacities show.
//!
//! Every block reads the whole working set, 4 KiB at a time, from a start
//! of its own, the blocks' starts spread evenly over the set, so that a
//! byte is read again only after the whole set has been read since. A set
//! that fits an SM's L1 is then served from L1, one that fits the L2 from
//! the L2, and a larger one from device memory: `locality lessons caches`
//! sweeps the set's size and shows the three plateaus.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Real, thread::*};

/// What the kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub blocks: u32,
}

/// The kernel's parameters: the working set, one sum per thread, the set's
/// elements (a power of two, at least [`f32::VECTOR_LEN`]), and the chunks
/// each block reads.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Elements a block reads at a time: 16 bytes a thread, 4 KiB.
pub const CHUNK: u32 = BLOCK * <f32 as Real>::VECTOR_LEN;

kernels! {
    /// The cache lesson's kernel.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Reads a working set again and again: bandwidth from L1, L2 or device memory.
    ///
    /// Block b reads `chunks` chunks of [`CHUNK`] elements, one after the
    /// other through the set, wrapping at its end, starting at chunk
    /// b·(set / CHUNK) / blocks; each thread reads 16 bytes of every chunk
    /// (`LDG.E.128`) and writes the sum of what it read.
    ///
    /// Compute-to-global-memory-access ratio: 1 addition per 4 bytes,
    /// 0.25 FLOP/B. Bound by the bandwidth of whichever level holds the set.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `set` is a power of two, at least 4, and no more than `input`'s
    /// elements; `output` has one element per thread of the grid and
    /// overlaps nothing; blocks are 1-D of [`BLOCK`] threads.
    #[launch(|problem| gpu_std::Launch::covering((problem.blocks * BLOCK, 1, 1), (BLOCK, 1, 1), 0))]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn read_working_set(input: Global<f32>, output: GlobalMut<f32>, set: u32, chunks: u32) {
        let thread = block_idx_x() * BLOCK + thread_idx_x();
        let chunks_in_set = u64::from(set / CHUNK);
        let start = (u64::from(block_idx_x()) * chunks_in_set / u64::from(grid_dim_x())) as u32;
        let mut sums = [0.0f32; 4];
        for chunk in 0..chunks {
            // The set is a power of two: the mask wraps the index into it,
            // and stays a multiple of the vector.
            let index = start.wrapping_add(chunk).wrapping_mul(CHUNK).wrapping_add(4 * thread_idx_x()) & (set - 1);
            // SAFETY: index < set ≤ the input's length, and a multiple of 4.
            let values = unsafe { input.read_vector(index as usize) };
            for (sum, value) in sums.iter_mut().zip(&values) {
                *sum += value;
            }
        }
        // SAFETY: one element per thread of the grid.
        unsafe { output.write(thread as usize, (sums[0] + sums[1]) + (sums[2] + sums[3])) };
    }
}
