//! Two kernels a CUDA programmer writes with atomics, written from scratch
//! with gpu-std: a 256-bin histogram of bytes, privatised in shared memory,
//! and a stream compaction that keeps the values above a threshold, each
//! warp voting on which of its lanes keep theirs and taking its place in
//! the output with one atomic.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_gpu_kernel, asm_experimental_arch))]

use gpu_std::atomic::atomic_add;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{block_dim_x, block_idx_x, grid_dim_x, sync_threads, thread_idx_x};
use gpu_std::warp::{self, ALL_LANES, ballot_sync, shfl_sync};
use gpu_std::{Launch, kernels, shared_array};

/// Bins, one per byte value.
pub const BINS: u32 = 256;

/// Threads a block: one per bin, and 8 warps.
pub const BLOCK: u32 = BINS;

/// The histogram's parameters: the bytes, the bins (zero beforehand) and
/// the bytes' count.
pub type HistogramArgs = (Global<u8>, GlobalMut<u32>, u32);

/// The compaction's parameters: the values, where the kept ones go, the
/// count of those kept (zero beforehand), the values' count and the
/// threshold.
pub type CompactArgs = (Global<u32>, GlobalMut<u32>, GlobalMut<u32>, u32, u32);

/// The bytes or values a launch takes.
#[derive(Clone, Copy, Debug)]
pub struct Size {
    pub n: u32,
}

/// Up to 1024 blocks of [`BLOCK`] threads, each looping over its share.
pub fn grid(size: &Size) -> Launch {
    Launch::covering((size.n.min(1024 * BLOCK), 1, 1), (BLOCK, 1, 1), 0)
}

/// One thread a value, in blocks of [`BLOCK`].
pub fn one_a_value(size: &Size) -> Launch {
    Launch::covering((size.n, 1, 1), (BLOCK, 1, 1), 0)
}

kernels! {
    /// The histogram.
    pub const HISTOGRAM: [Kernel<HistogramArgs, Size>];

    /// Counts bytes into a copy of the bins in shared memory, then adds the copy to the global bins.
    ///
    /// 1 shared atomic a byte read, 256 global atomics a block; bound by
    /// the reads, or by the shared atomics' queue at a popular bin. Launch
    /// bounds: 256 threads.
    ///
    /// # Safety
    /// `bytes` holds `n` bytes and `bins` 256 counts, overlapping nothing.
    #[launch(grid)]
    #[launch_bounds(BLOCK)]
    pub unsafe fn histogram(bytes: Global<u8>, bins: GlobalMut<u32>, n: u32) {
        // SAFETY: inside a kernel.
        let local = unsafe { shared_array!(LOCAL_BINS: [u32; BINS]) };
        let t = thread_idx_x();
        // SAFETY: one bin a thread.
        unsafe { local.write(t, 0) };
        sync_threads();
        let mut i = block_idx_x() * BLOCK + t;
        while i < n {
            // SAFETY: i < n; a byte is below 256.
            unsafe { atomic_add(local.element(bytes.read(i as usize).into()), 1) };
            i += grid_dim_x() * BLOCK;
        }
        sync_threads();
        // SAFETY: one bin a thread, counted before the barrier.
        unsafe { atomic_add(bins.element(t as usize), local.read(t)) };
    }
}

kernels! {
    /// The stream compaction.
    pub const COMPACT: [Kernel<CompactArgs, Size>];

    /// Keeps the values above `threshold`: a warp's ballot counts its keepers, one atomic places them.
    ///
    /// 1 load a value, 1 global atomic a warp, a store a kept value; bound
    /// by memory. Launch bounds: 256 threads.
    ///
    /// # Safety
    /// `values` holds `n` values, `kept` room for all of them and `count`
    /// one count, overlapping nothing.
    #[launch(one_a_value)]
    #[launch_bounds(BLOCK)]
    pub unsafe fn compact(values: Global<u32>, kept: GlobalMut<u32>, count: GlobalMut<u32>, n: u32, threshold: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        let lane = thread_idx_x() % warp::SIZE;
        // Every lane votes, those past the end with nothing to keep, so
        // that the whole warp reaches the ballot.
        // SAFETY: i < n.
        let value = if i < n { unsafe { values.read(i as usize) } } else { 0 };
        let keep = i < n && value > threshold;
        let votes = ballot_sync(ALL_LANES, keep);
        let mut first = 0;
        if lane == 0 && votes != 0 {
            // SAFETY: one count.
            first = unsafe { atomic_add(count.element(0), votes.count_ones()) };
        }
        let first = shfl_sync(ALL_LANES, first, 0);
        if keep {
            let place = first + (votes & ((1 << lane) - 1)).count_ones();
            // SAFETY: at most n values are kept, each at its own place.
            unsafe { kept.write(place as usize, value) };
        }
    }
}

/// What the histogram of `bytes` is.
#[cfg(not(target_arch = "nvptx64"))]
pub fn histogram_of(bytes: &[u8]) -> Vec<u32> {
    let mut bins = vec![0; BINS as usize];
    bytes.iter().for_each(|&byte| bins[byte as usize] += 1);
    bins
}
