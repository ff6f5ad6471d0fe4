//! The read-only data cache: one stencil, its neighbours read three ways.
//!
//! Each output element is the sum of the input's 2r + 1 elements around
//! it, so every input element is read 2r + 1 times, by neighbouring
//! threads of one block. Those repeated reads are what a cache on the SM
//! serves. The three kernels read them through the L1 with plain global
//! loads (`ld.global`, `LDG.E`), through the read-only data cache
//! (`ld.global.nc`, CUDA's `__ldg`, `LDG.E.CONSTANT`), and from a tile the
//! block stages in shared memory first. `locality lessons readonly`
//! sweeps r and sets the three side by side.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements of the input and the output.
    pub n: u32,
}

/// The kernels' parameters: input, output, n, and the radius r.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32);

/// Threads per block, one output element each.
pub const BLOCK: u32 = 256;

/// The largest radius: the shared tile holds a block's outputs and this
/// many elements on either side.
pub const MAX_RADIUS: u32 = 32;

/// Elements of the shared tile.
const TILE: u32 = BLOCK + 2 * MAX_RADIUS;

/// One thread per output element, in blocks of [`BLOCK`].
fn element_per_thread(problem: &Problem) -> Launch {
    Launch::covering((problem.n, 1, 1), (BLOCK, 1, 1), 0)
}

/// The window of element `i`: the input's indices from i − r to i + r that
/// lie in 0..n, as a range.
#[inline(always)]
fn window(i: u32, n: u32, radius: u32) -> core::ops::Range<u32> {
    i.saturating_sub(radius)..i.saturating_add(radius).min(n - 1) + 1
}

/// Thread i's window summed in order, each element loaded by `load`, into
/// output[i], for every thread of the grid with i < n.
///
/// # Safety
/// `output` has n elements, which no other thread writes; `load` reads
/// any index of a window, below n.
#[inline(always)]
unsafe fn sum_windows(output: GlobalMut<f32>, n: u32, radius: u32, load: impl Fn(u32) -> f32) {
    let i = block_idx_x() * BLOCK + thread_idx_x();
    if i < n {
        let mut sum = 0.0f32;
        for j in window(i, n, radius) {
            sum += load(j);
        }
        // SAFETY: i < n, one element per thread.
        unsafe { output.write(i as usize, sum) };
    }
}

kernels! {
    /// The read-only cache lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Sums each element's window with plain global loads, cached in L1.
    ///
    /// Thread i adds input[i − r ..= i + r] (clipped to the input) in
    /// order and writes the sum to output[i].
    ///
    /// Compute-to-global-memory-access ratio: 2r + 1 additions per 8 bytes
    /// of input and output, for the neighbours' reads are served by the
    /// caches; 2r + 1 additions per 4 bytes of loads. Bound by device
    /// memory at small r, by the L1's load bandwidth at large r.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` and `output` have `n` ≥ 1 elements and do not overlap;
    /// blocks are 1-D of [`BLOCK`] threads.
    #[launch(element_per_thread)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn stencil_global(input: Global<f32>, output: GlobalMut<f32>, n: u32, radius: u32) {
        // SAFETY: the output has n elements, one a thread; j < n, inside
        // the input.
        unsafe { sum_windows(output, n, radius, |j| input.read(j as usize)) };
    }

    /// Sums each element's window with loads through the read-only data cache.
    ///
    /// The same sums as `stencil_global`, each load `ld.global.nc` (CUDA's
    /// `__ldg`): the input is promised unchanged while the kernel runs, so
    /// the loads may take the texture path, non-coherent with the
    /// kernel's own writes.
    ///
    /// Compute-to-global-memory-access ratio: as `stencil_global`'s. Bound
    /// by device memory at small r, by the read-only path's load bandwidth
    /// at large r.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `stencil_global`; besides, nothing writes the input while the
    /// kernel runs.
    #[launch(element_per_thread)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn stencil_read_only(input: Global<f32>, output: GlobalMut<f32>, n: u32, radius: u32) {
        // SAFETY: as in `stencil_global`, and nothing writes the input.
        unsafe { sum_windows(output, n, radius, |j| input.ldg(j as usize)) };
    }

    /// Sums each element's window from a tile the block staged in shared memory.
    ///
    /// The block copies its [`BLOCK`] elements and the r on either side
    /// that exist into a static shared tile, each element read from global
    /// memory once (through the read-only path: nothing else reads it
    /// again); after a barrier, thread i adds its window from the
    /// tile in the order `stencil_global` does.
    ///
    /// Compute-to-global-memory-access ratio: 2r + 1 additions per
    /// (256 + 2r)/256 · 4 + 4 bytes. Bound by device memory at small r, by
    /// the shared-memory load bandwidth at large r.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `stencil_read_only`; besides, `radius` ≤ [`MAX_RADIUS`] and
    /// n + [`BLOCK`] + 2·[`MAX_RADIUS`] fits in `u32`.
    #[launch(element_per_thread)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn stencil_shared(input: Global<f32>, output: GlobalMut<f32>, n: u32, radius: u32) {
        // SAFETY: inside a kernel.
        let tile = unsafe { shared_array!(STENCIL_TILE: [f32; TILE]) };
        let t = thread_idx_x();
        let first = block_idx_x() * BLOCK;
        // Tile element k holds input[first + k − r], where that exists.
        for k in (t..BLOCK + 2 * radius).step_by(BLOCK as usize) {
            // Before the input's start, j wraps to above n.
            let j = (first + k).wrapping_sub(radius);
            if j < n {
                // SAFETY: j < n, inside the input, which nothing writes;
                // k < BLOCK + 2r ≤ TILE.
                unsafe { tile.write(k, input.ldg(j as usize)) };
            }
        }
        sync_threads();
        // SAFETY: the output has n elements, one a thread; j − first + r
        // lies in t..=t + 2r < TILE, which the block wrote before the
        // barrier.
        unsafe { sum_windows(output, n, radius, |j| tile.read(j + radius - first)) };
    }
}
