//! A pointer chase: the latency of one level of the memory hierarchy,
//! whichever buffer the chain lies in.
//!
//! One thread follows a chain, each element holding the index of the next:
//! no read can start before the one before it returns, so the time a hop
//! is the latency of wherever the chain's lines are. A chain that fits in
//! the L2 measures the L2; one many times larger, walked where no earlier
//! run walked, measures device memory; in mapped host memory or in another
//! GPU's memory (peer access), it measures the trip across PCIe or NVLink.
//! `locality lessons latency` walks each.

use gpu_std::Launch;
use gpu_std::global::{Global, GlobalMut};

/// What the chase's launch contract is a function of: nothing, one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem;

/// The chase's parameters: the chain, where it ends, the start, the hops.
pub type Args = (Global<u32>, GlobalMut<u32>, u32, u32);

/// Elements of a 128-byte line: the chain's hops land on the first of a
/// line each, so that no two hops share a line.
pub const LINE: u32 = 32;

/// One block of one thread: a single chain, nothing else in flight.
fn one_thread(_: &Problem) -> Launch {
    Launch::covering((1, 1, 1), (1, 1, 1), 0)
}

kernels! {
    /// The chase of the latency lesson.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Follows `hops` links of the chain from element `start` and writes
    /// where they end: a chain of dependent reads, one in flight.
    ///
    /// Each read goes to the L2 and past it (`ld.global.cg`, CUDA's
    /// `__ldcg`): the L1 keeps none of the chain, so a hop costs what the
    /// L2, device memory or the link costs, never the L1's hit.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B; one 4-byte read a
    /// hop. Bound by latency alone: one read in flight on the whole GPU.
    ///
    /// Launch bounds: one thread, one block an SM.
    ///
    /// # Safety
    /// `start` and every index the chain holds from it on lie inside
    /// `chain`, which nothing writes during the launch; `reached` has an
    /// element; the launch is one thread.
    #[launch(one_thread)]
    #[launch_bounds(1, 1)]
    pub unsafe fn chase(chain: Global<u32>, reached: GlobalMut<u32>, start: u32, hops: u32) {
        let mut at = start;
        for _ in 0..hops {
            // SAFETY: every index of the chain lies inside it.
            at = unsafe { chain.ldcg(at as usize) };
        }
        // SAFETY: `reached` has an element; one thread writes it.
        unsafe { reached.write(0, at) };
    }
}
