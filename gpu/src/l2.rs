//! The L2 cache as a place to keep data: a reused set beside a stream.
//!
//! Each thread adds one element of a long stream, read once, to one
//! element of a smaller set that every pass over the stream reads again
//! (element i of the stream meets element i mod m of the set), and writes
//! the sum out. The stream and the output are many times the L2; the
//! reused set may fit in it. Whether it stays there depends on what the
//! stream's lines push out. `reuse_plain` treats every line alike;
//! `reuse_streaming` marks the stream's loads and the output's stores
//! evict-first (CUDA's `__ldcs` and `__stcs`), so that the caches give up
//! those lines first and keep the set's. The host can also set a
//! persisting access-policy window over the set (`locality lessons
//! persistence`), which keeps it resident with plain accesses.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements of the stream and of the output.
    pub n: u32,
}

/// The kernels' parameters: the stream, the reused set, the output, n,
/// and the set's elements m.
pub type Args = (Global<f32>, Global<f32>, GlobalMut<f32>, u32, u32);

/// Threads per block, one output element each.
pub const BLOCK: u32 = 256;

/// One thread per output element, in blocks of [`BLOCK`].
fn element_per_thread(problem: &Problem) -> Launch {
    Launch::covering((problem.n, 1, 1), (BLOCK, 1, 1), 0)
}

/// Thread i of the grid, where i < n, writes `stream(i)` plus element
/// i mod m of the reused set with `store`: the whole of both kernels but
/// for how they read the stream and write the output.
///
/// # Safety
/// `reused` has m ≥ 1 elements, and nothing writes it; `stream` and
/// `store` may be called with any i < n.
#[inline(always)]
unsafe fn add_reused(
    n: u32,
    m: u32,
    reused: Global<f32>,
    stream: impl FnOnce(usize) -> f32,
    store: impl FnOnce(usize, f32),
) {
    let i = block_idx_x() * BLOCK + thread_idx_x();
    if i < n {
        // m ≥ 1 by the contract; `max(1)` tells the compiler so, in one
        // instruction, where `i % m` alone would branch to a panic on a
        // zero divisor.
        let set_index = (i % m.max(1)) as usize;
        // SAFETY: set_index < m, the set's length; nothing writes it.
        let sum = stream(i as usize) + unsafe { reused.ldg(set_index) };
        store(i as usize, sum);
    }
}

kernels! {
    /// The L2 lessons' kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Adds each stream element to its element of the reused set, every
    /// access plain.
    ///
    /// output[i] = stream[i] + reused[i mod m], the loads through the
    /// read-only path (`__ldg`: neither input is written).
    ///
    /// Compute-to-global-memory-access ratio: one addition per 12 bytes,
    /// 8 of them the stream's and the output's, which device memory serves
    /// once each. Bound by device memory: at best 8 bytes an element, where
    /// the reused set stays in the L2, at worst 12, where the stream's lines
    /// push it out before each pass comes back to it.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `stream` and `output` have `n` elements, `reused` has m ≥ 1; the
    /// output overlaps neither input; blocks are 1-D of [`BLOCK`] threads.
    #[launch(element_per_thread)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn reuse_plain(stream: Global<f32>, reused: Global<f32>, output: GlobalMut<f32>, n: u32, m: u32) {
        // SAFETY: the set as the contract says; i < n, the stream's and
        // the output's length, one element a thread; nothing writes the
        // stream.
        unsafe {
            add_reused(n, m, reused, |i| stream.ldg(i), |i, sum| output.write(i, sum));
        }
    }

    /// The same sums, the stream read and the output written evict-first.
    ///
    /// As `reuse_plain`, but the stream's loads are `__ldcs`
    /// (`ld.global.cs`) and the output's stores `__stcs` (`st.global.cs`):
    /// the lines used once are the first the caches give up, and the
    /// reused set's lines stay longer.
    ///
    /// Compute-to-global-memory-access ratio: as `reuse_plain`'s. Bound by
    /// device memory, at 8 bytes an element for sets larger than
    /// `reuse_plain` keeps in the L2.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `reuse_plain`.
    #[launch(element_per_thread)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn reuse_streaming(stream: Global<f32>, reused: Global<f32>, output: GlobalMut<f32>, n: u32, m: u32) {
        // SAFETY: as in `reuse_plain`.
        unsafe {
            add_reused(n, m, reused, |i| stream.ldcs(i), |i, sum| output.stcs(i, sum));
        }
    }
}
