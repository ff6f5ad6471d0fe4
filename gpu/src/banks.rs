//! Shared memory's 32 banks: a warp's reads at a stride, and the conflicts
//! that serialise them.
//!
//! Shared memory is 32 banks of 4-byte words, word w in bank w mod 32; each
//! bank serves one word per cycle. A warp whose 32 lanes read 32 words in
//! 32 different banks is served at once; when d of its words share a bank
//! (a d-way conflict), the read takes d passes. Lanes reading with a
//! stride of s words meet gcd(s, 32)-way: odd strides are conflict-free, a
//! stride of 32 puts every lane in one bank. `locality lessons banks`
//! sweeps the stride.
//!
//! The tile is a statically sized shared array, `shared_array!`.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::warp;
use gpu_std::{FULL_SM_THREADS, thread::*};

/// What the kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub blocks: u32,
}

/// The kernel's parameters: the tile's contents, one sum per thread, the
/// stride in words, and the reads per thread.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Words in the tile: 4 KiB, a power of two, so that a mask wraps an index.
pub const TILE: u32 = 1024;

kernels! {
    /// The bank-conflict lesson's kernel.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// A warp reads shared memory with a stride: gcd(stride, 32)-way bank conflicts.
    ///
    /// Each block stages the [`TILE`] words of `input` in a static shared
    /// array, then lane l of every warp reads word (l·stride + r) mod
    /// [`TILE`] for r = 0, 1, …, `rounds` − 1 and writes the sum of what it
    /// read.
    ///
    /// Compute-to-shared-memory-access ratio: 1 addition per 4 bytes,
    /// 0.25 FLOP/B. Bound by the shared-memory bandwidth divided by the
    /// conflict degree, and below that by issuing the loop's instructions.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` has at least [`TILE`] elements and `sums` one per thread of
    /// the grid, overlapping nothing; blocks are 1-D of [`BLOCK`] threads.
    #[launch(|problem| gpu_std::Launch::covering((problem.blocks * BLOCK, 1, 1), (BLOCK, 1, 1), 0))]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn bank_conflicts(input: Global<f32>, sums: GlobalMut<f32>, stride: u32, rounds: u32) {
        // SAFETY: inside a kernel.
        let tile = unsafe { shared_array!(BANK_TILE: [f32; TILE]) };
        let t = thread_idx_x();
        for i in (t..TILE).step_by(BLOCK as usize) {
            // SAFETY: i < TILE, inside the input and the tile.
            unsafe { tile.write(i, input.read(i as usize)) };
        }
        sync_threads();
        let first = (t % warp::SIZE).wrapping_mul(stride);
        let mut sum = 0.0f32;
        for round in 0..rounds {
            // SAFETY: the mask keeps the index inside the tile, which every
            // thread filled before the barrier.
            sum += unsafe { tile.read(first.wrapping_add(round) & (TILE - 1)) };
        }
        // SAFETY: one element per thread of the grid.
        unsafe { sums.write((block_idx_x() * BLOCK + t) as usize, sum) };
    }
}
