//! A copy that reads with a stride and from an offset: how a warp's
//! addresses decide how many bytes global memory moves.
//!
//! The memory system serves a warp's loads in 32-byte sectors of 128-byte
//! lines. When the 32 threads of a warp read 32 neighbouring `f32`, their
//! 128 bytes are four sectors of one line: every byte fetched is used
//! (coalesced). Read with a stride of s elements, the same 32 values lie in
//! up to 32 sectors, most of whose bytes nobody asked for; read from an
//! offset that is no multiple of eight elements, they straddle a sector
//! boundary and take a fifth sector. `locality lessons coalescing` and
//! `locality lessons alignment` sweep the stride and the offset.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, thread::*};

/// What the copy's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements copied: one thread each.
    pub n: u32,
}

/// The copy's parameters: input, output, n, stride, offset.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// One thread per element copied, in blocks of [`BLOCK`].
fn one_thread_per_element(problem: &Problem) -> Launch {
    Launch::covering((problem.n, 1, 1), (BLOCK, 1, 1), 0)
}

kernels! {
    /// The copy of the memory-access lessons, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// A copy reading with a stride from an offset: the sectors a warp's addresses cost.
    ///
    /// Thread i writes `output[i] = input[offset + i·stride]`: the writes
    /// are coalesced, the reads are what the lessons vary. At stride 1 and
    /// offset 0 a warp's read is four sectors of one line; at stride s it
    /// touches min(4s, 32) sectors for the same 128 useful bytes, so from
    /// s = 8 on only 4 of every 32 bytes read are used; at an offset that
    /// is no multiple of 8 it touches five sectors.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B, a copy. Bound by
    /// memory bandwidth, of which the wasted sectors take their share.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` has at least offset + (n − 1)·stride + 1 elements, which fits
    /// in `u32`, and `output` at least n, overlapping nothing; blocks are
    /// 1-D and the grid covers n threads.
    #[launch(one_thread_per_element)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_strided(input: Global<f32>, output: GlobalMut<f32>, n: u32, stride: u32, offset: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            // SAFETY: i < n, so offset + i·stride lies inside the input, and
            // i inside the output.
            unsafe { output.write(i as usize, input.read((offset + i * stride) as usize)) };
        }
    }
}
