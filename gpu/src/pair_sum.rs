//! The sum of two vectors, where the second may be another GPU's: the
//! one-shot all-reduce of two GPUs.
//!
//! Each GPU adds its own vector and its peer's, read in place over the
//! link (peer access), into a vector of its own: after both have run, both
//! hold the sum, in one launch each and no step between. Every byte of the
//! peer's vector crosses the link once, as in a ring all-reduce of two
//! GPUs, but as one kernel's loads on every SM, with nothing to arrange
//! beyond ordering the two GPUs' streams. `locality lessons all-reduce`
//! sets it against NCCL's all-reduce.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, thread::*};

/// What the sum's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements of each vector.
    pub n: u32,
}

/// The sum's parameters: its vector, the peer's, the sum, n.
pub type Args = (Global<f32>, Global<f32>, GlobalMut<f32>, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Elements a thread adds: one 16-byte load of each vector.
pub const VECTOR: u32 = 4;

/// One thread per [`VECTOR`] elements, in blocks of [`BLOCK`].
fn thread_per_vector(problem: &Problem) -> Launch {
    Launch::covering((problem.n.div_ceil(VECTOR), 1, 1), (BLOCK, 1, 1), 0)
}

kernels! {
    /// The one-shot all-reduce's sum.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Writes `sum[i] = mine[i] + theirs[i]`, four elements a thread with
    /// one 16-byte load of each vector and one 16-byte store; the last
    /// thread adds the one to three elements past the last whole four
    /// one by one.
    ///
    /// Compute-to-global-memory-access ratio: 1 FLOP per 12 bytes. Bound
    /// by the slower of the reads: the link's bandwidth where `theirs` is
    /// the peer's, device memory's where both are local.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `mine`, `theirs` and `sum` have n elements each, `sum` overlapping
    /// neither and nothing writing them during the launch; n ≤ 2³² − 4;
    /// the launch covers n / 4 threads, rounded up, in 1-D blocks.
    #[launch(thread_per_vector)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn sum_pair(mine: Global<f32>, theirs: Global<f32>, sum: GlobalMut<f32>, n: u32) {
        let first = (block_idx_x() * BLOCK + thread_idx_x()) * VECTOR;
        if first >= n {
            return;
        }
        let first = first as usize;
        // SAFETY: first is a multiple of 4 and first + 4 ≤ n, inside the
        // three vectors, one thread their four elements; nothing writes
        // the inputs.
        if n as usize - first >= VECTOR as usize {
            unsafe {
                let (a, b) = (mine.read_vector(first), theirs.read_vector(first));
                sum.write_vector(first, core::array::from_fn(|k| a[k] + b[k]));
            }
        } else {
            for i in first..n as usize {
                // SAFETY: i < n, this thread's own elements.
                unsafe { sum.write(i, mine.read(i) + theirs.read(i)) };
            }
        }
    }
}
