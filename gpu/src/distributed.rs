//! Distributed shared memory: a block reads the shared memory of another
//! block of its cluster, against its own shared memory and against the L2.
//!
//! Every kernel gives each thread the same result: the sum of `rounds`
//! passes of 16 words of its block's tile of the input, from word
//! `thread` on, each next word [`next_index`]'s of the one before. The
//! `sum` kernels compute each next index themselves, so every read is
//! independent of the others: a measure of bandwidth. The `chase` kernels
//! find it in the word they read (the input's low 12 bits hold it), so no
//! read can start before the one before it ends: a measure of latency.
//! Each pair reads the tile in the block's own shared memory, in the
//! shared memory of the next block of its cluster (by rank, around the
//! cluster: each block stages the tile of the block before it, which that
//! block reads), or in global memory through the L2 (`__ldcg`, which keeps
//! L1 out of it).

use gpu_std::cluster::{self, DistributedShared};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, shared::SharedArray, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Blocks, each with a tile of the input.
    pub blocks: u32,
    /// Blocks a cluster, for the kernels that read a neighbour's tile: 1
    /// to 8, dividing `blocks`.
    pub cluster: u32,
}

/// The kernels' parameters: the input (a tile a block), the output (a word
/// a thread) and the rounds: passes over the tile.
pub type Args = (Global<u32>, GlobalMut<u32>, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Words of a block's tile: 16 KiB.
pub const TILE: u32 = 4096;

/// Bytes of shared memory a block takes: its tile's.
pub const SHARED_BYTES: u32 = 4 * TILE;

/// The word after word `index` in a thread's walk through its tile: the
/// one a block's width further on, and from the tile's last block-wide
/// row, the first row's word a warp's width on, around it. A warp's 32
/// lanes read 32 consecutive words (no bank conflict), and a walk goes
/// through all 128 words of its lane's bank before it repeats, so no
/// compiler can keep a pass's words in registers.
pub const fn next_index(index: u32) -> u32 {
    let ahead = index + BLOCK;
    if ahead < TILE {
        ahead
    } else {
        (index + 32) % BLOCK
    }
}

/// One block a tile, staged in its shared memory, no clusters.
fn blocks(problem: &Problem) -> Launch {
    Launch::covering((problem.blocks * BLOCK, 1, 1), (BLOCK, 1, 1), SHARED_BYTES)
}

/// One block a tile, in clusters of `problem.cluster` blocks.
fn clusters(problem: &Problem) -> Launch {
    blocks(problem).in_clusters((problem.cluster, 1, 1))
}

/// One block a tile, read where it is: no shared memory.
fn blocks_reading_global(problem: &Problem) -> Launch {
    Launch {
        shared_bytes: 0,
        ..blocks(problem)
    }
}

/// A tile in shared memory, or its view from another block, or in global
/// memory: what the kernels read.
trait Tile: Copy {
    /// Word `index` of the tile.
    ///
    /// # Safety
    /// `index < TILE`, and the tile is staged and visible to this thread.
    unsafe fn word(self, index: u32) -> u32;
}

impl Tile for SharedArray<u32> {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn word(self, index: u32) -> u32 {
        // SAFETY: by the trait's contract.
        unsafe { self.read(index) }
    }
}

impl Tile for DistributedShared {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn word(self, index: u32) -> u32 {
        // SAFETY: by the trait's contract.
        unsafe { self.read(index) }
    }
}

/// The block's tile in global memory, read through the L2.
#[derive(Clone, Copy)]
struct InL2 {
    input: Global<u32>,
    first: usize,
}

impl Tile for InL2 {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn word(self, index: u32) -> u32 {
        // SAFETY: by the trait's contract: the block's tile lies inside
        // the input.
        unsafe { self.input.ldcg(self.first + index as usize) }
    }
}

/// The tile of block `block` in shared memory, staged from the input,
/// every thread 16 words, coalesced: visible to the whole block after the
/// barrier that must follow.
///
/// # Safety
/// The launch provides [`SHARED_BYTES`]; the input holds a tile for
/// `block`.
#[inline(always)]
unsafe fn staged(input: Global<u32>, block: u32) -> SharedArray<u32> {
    // SAFETY: by this function's contract; each thread writes its own
    // words.
    unsafe {
        let tile = SharedArray::<u32>::launch_sized();
        let first = (block * TILE) as usize;
        for k in 0..TILE / BLOCK {
            let j = thread_idx_x() + BLOCK * k;
            tile.write(j, input.read(first + j as usize));
        }
        tile
    }
}

/// This thread's sum of `rounds` passes of [`next_index`]'s walk through
/// `tile` from word `thread`, 16 words a pass, unrolled: 16 independent
/// reads in flight.
///
/// # Safety
/// As [`Tile::word`].
#[inline(always)]
unsafe fn sum(tile: impl Tile, rounds: u32) -> u32 {
    let (mut total, mut index) = (0u32, thread_idx_x());
    for _ in 0..rounds {
        for _ in 0..TILE / BLOCK {
            // SAFETY: index < TILE.
            total = total.wrapping_add(unsafe { tile.word(index) });
            index = next_index(index);
        }
    }
    total
}

/// The same sum as [`sum`], each index found in the low bits of the word
/// read before it: a chain of dependent reads, still conflict-free.
///
/// # Safety
/// As [`Tile::word`].
#[inline(always)]
unsafe fn chase(tile: impl Tile, rounds: u32) -> u32 {
    let (mut total, mut index) = (0u32, thread_idx_x());
    for _ in 0..rounds {
        for _ in 0..TILE / BLOCK {
            // SAFETY: index < TILE.
            let word = unsafe { tile.word(index) };
            total = total.wrapping_add(word);
            index = word % TILE;
        }
    }
    total
}

/// Writes this thread's result.
///
/// # Safety
/// The output has a word for every thread of the launch.
#[inline(always)]
unsafe fn write_result(output: GlobalMut<u32>, value: u32) {
    let index = block_idx_x() * BLOCK + thread_idx_x();
    // SAFETY: by this function's contract; a word a thread.
    unsafe { output.write(index as usize, value) };
}

/// The block before this one in its cluster, around it: whose tile this
/// block stages, for that block to read.
#[inline(always)]
fn block_before() -> u32 {
    let (rank, blocks) = (cluster::block_rank(), cluster::num_blocks());
    block_idx_x() - rank + (rank + blocks - 1) % blocks
}

/// The shared memory of the next block of the cluster, around it: which
/// holds this block's tile.
///
/// # Safety
/// `tile` is the launch-sized shared memory.
#[inline(always)]
unsafe fn neighbours(tile: SharedArray<u32>) -> DistributedShared {
    let next = (cluster::block_rank() + 1) % cluster::num_blocks();
    // SAFETY: next is a rank of the cluster.
    unsafe { cluster::map_shared_rank(tile, next) }
}

kernels! {
    /// The distributed-shared-memory lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Reads its own shared memory: the bandwidth of the SM's banks.
    ///
    /// Each block stages its tile, then each thread sums 16 words a pass,
    /// `rounds` passes (`LDS`), and writes its sum.
    ///
    /// Compute-to-global-memory-access ratio: `rounds` shared reads a word
    /// staged. Bound by shared-memory bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks of
    /// 16 KiB).
    ///
    /// # Safety
    /// `input` has [`TILE`] words a block, `output` a word a thread; the
    /// launch is the contract's (a block of [`BLOCK`] threads a tile,
    /// [`SHARED_BYTES`] of shared memory).
    #[launch(blocks)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn sum_own(input: Global<u32>, output: GlobalMut<u32>, rounds: u32) {
        // SAFETY: by the kernel's contract; the barrier orders the tile's
        // stores before its reads.
        unsafe {
            let tile = staged(input, block_idx_x());
            sync_threads();
            write_result(output, sum(tile, rounds));
        }
    }

    /// Reads the shared memory of the next block of its cluster: the
    /// bandwidth of the SM-to-SM network.
    ///
    /// Each block stages the tile of the block before it in the cluster;
    /// after a cluster barrier each thread sums 16 words a pass of its own
    /// tile, in the next block's shared memory, `rounds` passes (generic
    /// loads at the address `mapa` maps); a second cluster barrier keeps
    /// every tile alive until its reader is done.
    ///
    /// Compute-to-global-memory-access ratio: `rounds` distributed reads a
    /// word staged. Bound by the bandwidth between SMs.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM. Compute capability 9.0
    /// or newer; launched in clusters of `cluster` blocks.
    ///
    /// # Safety
    /// As `sum_own`, in clusters.
    #[launch(clusters)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    #[compute_capability(9, 0)]
    pub unsafe fn sum_neighbour(input: Global<u32>, output: GlobalMut<u32>, rounds: u32) {
        // SAFETY: by the kernel's contract; the first cluster barrier
        // orders every block's stores before any read of its tile, the
        // second every read before any block's exit.
        unsafe {
            let tile = staged(input, block_before());
            cluster::sync();
            let total = sum(neighbours(tile), rounds);
            cluster::sync();
            write_result(output, total);
        }
    }

    /// Reads its tile in global memory through the L2: the bandwidth of
    /// the L2, which every SM shares.
    ///
    /// Each thread sums 16 words a pass of the block's tile, `rounds`
    /// passes, with loads that skip L1 (`ld.global.cg`).
    ///
    /// Compute-to-global-memory-access ratio: none; every read goes to
    /// the L2, which holds the whole input. Bound by L2 bandwidth.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM.
    ///
    /// # Safety
    /// As `sum_own`, with no shared memory.
    #[launch(blocks_reading_global)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn sum_l2(input: Global<u32>, output: GlobalMut<u32>, rounds: u32) {
        let tile = InL2 { input, first: (block_idx_x() * TILE) as usize };
        // SAFETY: by the kernel's contract.
        unsafe { write_result(output, sum(tile, rounds)) };
    }

    /// Follows a chain through its own shared memory: the latency of a
    /// shared load.
    ///
    /// Each block stages its tile, then each thread reads the words of
    /// `sum_own`, each index from the word before.
    ///
    /// Compute-to-global-memory-access ratio: `rounds` dependent shared
    /// reads a word staged. Bound by shared-memory latency, where a few
    /// warps an SM run it.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM.
    ///
    /// # Safety
    /// As `sum_own`.
    #[launch(blocks)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn chase_own(input: Global<u32>, output: GlobalMut<u32>, rounds: u32) {
        // SAFETY: by the kernel's contract.
        unsafe {
            let tile = staged(input, block_idx_x());
            sync_threads();
            write_result(output, chase(tile, rounds));
        }
    }

    /// Follows a chain through the shared memory of the next block of its
    /// cluster: the latency of the SM-to-SM network.
    ///
    /// As `chase_own`, along the next block's tile, between two cluster
    /// barriers.
    ///
    /// Compute-to-global-memory-access ratio: `rounds` dependent
    /// distributed reads a word staged. Bound by their latency.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM. Compute capability 9.0
    /// or newer; launched in clusters of `cluster` blocks.
    ///
    /// # Safety
    /// As `chase_own`, in clusters.
    #[launch(clusters)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    #[compute_capability(9, 0)]
    pub unsafe fn chase_neighbour(input: Global<u32>, output: GlobalMut<u32>, rounds: u32) {
        // SAFETY: as `sum_neighbour`.
        unsafe {
            let tile = staged(input, block_before());
            cluster::sync();
            let end = chase(neighbours(tile), rounds);
            cluster::sync();
            write_result(output, end);
        }
    }

    /// Follows a chain through its tile in global memory, through the L2:
    /// the latency of an L2 hit.
    ///
    /// As `chase_own`, with loads that skip L1 (`ld.global.cg`).
    ///
    /// Compute-to-global-memory-access ratio: none; every read goes to
    /// the L2. Bound by L2 latency.
    ///
    /// Launch bounds: 256 threads, 8 blocks an SM.
    ///
    /// # Safety
    /// As `chase_own`, with no shared memory.
    #[launch(blocks_reading_global)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn chase_l2(input: Global<u32>, output: GlobalMut<u32>, rounds: u32) {
        let tile = InL2 { input, first: (block_idx_x() * TILE) as usize };
        // SAFETY: by the kernel's contract.
        unsafe { write_result(output, chase(tile, rounds)) };
    }
}
