//! A histogram of bytes: atomics, and the privatisation that keeps their
//! contention on the chip.
//!
//! Every byte adds one to one of 256 bins, and threads that meet at a bin
//! must take turns: an atomic add. With the bins in global memory every
//! byte is an atomic the L2 performs, and lanes and warps that count the
//! same byte queue at one address there. A warp's lanes can first agree
//! on the bytes they share (`__match_any_sync`), one atomic for each
//! distinct byte, which shortens the queue but leaves every distinct
//! byte's trip to the L2. Giving each block its own copy of
//! the bins in shared memory ("privatisation") moves those updates into
//! the SM, where an atomic is a few cycles, and leaves 256 global atomics a
//! block, to merge the copies once. With one copy per warp, warps no
//! longer wait for each other at a popular bin. `locality lessons
//! histogram` times the four on uniform and skewed bytes.

use gpu_std::atomic::atomic_add;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::{FULL_SM_THREADS, Launch, thread::*, warp};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub bytes: u32,
}

/// The kernels' parameters: the bytes, the 256 bins (zero before the
/// launch), and the bytes' count.
pub type Args = (Global<u8>, GlobalMut<u32>, u32);

/// Bins: one per byte value.
pub const BINS: u32 = 256;

/// Threads per block: one per bin, so that a block clears and merges its
/// copy of the bins in one step.
pub const BLOCK: u32 = BINS;

/// Words of 4 bytes each thread reads: a block counts 16 KiB.
pub const WORDS_PER_THREAD: u32 = 16;

/// Bytes a block counts.
pub const BYTES_PER_BLOCK: u32 = 4 * WORDS_PER_THREAD * BLOCK;

/// Warps a block, each with its copy of the bins in `histogram_warps`.
pub const WARPS: u32 = BLOCK / warp::SIZE;

/// Blocks of [`BLOCK`] threads covering the bytes, at least one; launch-sized
/// shared memory for `copies` copies of the bins.
const fn blocks(problem: &Problem, copies: u32) -> Launch {
    let blocks = problem.bytes.div_ceil(BYTES_PER_BLOCK);
    Launch {
        grid: (if blocks == 0 { 1 } else { blocks }, 1, 1),
        block: (BLOCK, 1, 1),
        shared_bytes: copies * BINS * 4,
        cluster: (1, 1, 1),
    }
}

/// Calls `word` with each of this thread's [`WORDS_PER_THREAD`] words of
/// 4 bytes, a warp's words adjacent, `None` for those past the whole
/// words: every thread calls it as often, so that a warp stays converged.
///
/// # Safety
/// `input` holds `bytes` elements.
#[inline(always)]
unsafe fn each_word(input: Global<u8>, bytes: u32, mut word: impl FnMut(Option<u32>)) {
    // SAFETY: the buffer starts on a 256-byte boundary; only its whole
    // words are read through the view.
    let words = unsafe { input.cast::<u32>() };
    let first = block_idx_x() * (WORDS_PER_THREAD * BLOCK) + thread_idx_x();
    for k in 0..WORDS_PER_THREAD {
        let index = first + k * BLOCK;
        // SAFETY: index < bytes / 4, and nothing writes the bytes.
        word((index < bytes / 4).then(|| unsafe { words.ldg(index as usize) }));
    }
}

/// Calls `count` with the byte of `four` at each place, lowest first.
#[inline(always)]
fn each_byte_of(four: u32, mut count: impl FnMut(u32)) {
    // A range, not an array of shifts: LLVM unrolls it whole, where an
    // array would be stored to local memory and indexed.
    for byte in 0..4 {
        count((four >> (8 * byte)) & 0xff);
    }
}

/// Calls `count` with the last `bytes % 4` bytes, one a thread of the
/// first block.
///
/// # Safety
/// `input` holds `bytes` elements.
#[inline(always)]
unsafe fn each_tail_byte(input: Global<u8>, bytes: u32, count: impl FnOnce(u32)) {
    let t = thread_idx_x();
    if block_idx_x() == 0 && t < bytes % 4 {
        // SAFETY: 4·(bytes / 4) + t < bytes.
        count(u32::from(unsafe {
            input.read((bytes / 4 * 4 + t) as usize)
        }));
    }
}

/// Calls `count` with every byte this thread counts: those of its words,
/// and its byte of the tail.
///
/// # Safety
/// `input` holds `bytes` elements.
#[inline(always)]
unsafe fn each_byte(input: Global<u8>, bytes: u32, mut count: impl FnMut(u32)) {
    // SAFETY: by this function's contract.
    unsafe {
        each_word(input, bytes, |four| {
            if let Some(four) = four {
                each_byte_of(four, &mut count);
            }
        });
        each_tail_byte(input, bytes, count);
    }
}

/// Clears the block's `copies` copies of the bins in launch-sized memory
/// and waits for every thread to have done so.
///
/// # Safety
/// The launch gives [`blocks`]'s shared memory for `copies`.
#[inline(always)]
unsafe fn cleared(copies: u32) -> SharedArray<u32> {
    // SAFETY: inside a kernel.
    let local = unsafe { SharedArray::<u32>::launch_sized() };
    for copy in 0..copies {
        // SAFETY: inside the copies' memory.
        unsafe { local.write(copy * BINS + thread_idx_x(), 0) };
    }
    sync_threads();
    local
}

/// Adds the block's copies of bin `thread_idx_x()` to the global one,
/// once every thread has counted, where the block counted any.
///
/// # Safety
/// As [`cleared`]; `bins` holds [`BINS`] elements.
#[inline(always)]
unsafe fn merge(local: SharedArray<u32>, copies: u32, bins: GlobalMut<u32>) {
    sync_threads();
    let bin = thread_idx_x();
    let mut count = 0;
    for copy in 0..copies {
        // SAFETY: inside the copies, written before the barrier.
        count += unsafe { local.read(copy * BINS + bin) };
    }
    if count != 0 {
        // SAFETY: bin < BINS.
        unsafe { atomic_add(bins.element(bin as usize), count) };
    }
}

kernels! {
    /// The histogram lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Every byte one global atomic: contention at the L2.
    ///
    /// Thread t of block b reads [`WORDS_PER_THREAD`] words of 4 bytes
    /// through the read-only path, a warp's 32 adjacent (coalesced), and
    /// adds one to `bins[byte]` in
    /// global memory for each of their bytes.
    ///
    /// Compute-to-global-memory-access ratio: 1 global atomic per byte
    /// read. Bound by the L2's atomic units, and on skewed bytes by the
    /// queue at the popular bins' addresses.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` holds `bytes` bytes and `bins` [`BINS`] counts, overlapping
    /// nothing; blocks are 1-D of [`BLOCK`] threads.
    #[launch(|problem| blocks(problem, 0))]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn histogram_global(input: Global<u8>, bins: GlobalMut<u32>, bytes: u32) {
        // SAFETY: byte < 256 = BINS; the input holds `bytes` bytes.
        unsafe { each_byte(input, bytes, |byte| {
            atomic_add(bins.element(byte as usize), 1);
        }) };
    }

    /// Lanes that count one byte agree first: one global atomic per distinct byte a warp.
    ///
    /// As `histogram_global`, but before each byte's atomic the warp's
    /// lanes find those holding the same byte (`__match_any_sync`), and
    /// the lowest of them adds their count for all. Every lane takes part
    /// in every match, one past the whole words with a key no byte has.
    ///
    /// Compute-to-global-memory-access ratio: 1 global atomic per distinct
    /// byte of a warp's 32, per byte read. Bound as `histogram_global` on
    /// uniform bytes; on skewed ones the queue at a popular bin shrinks up
    /// to 32 times.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `histogram_global`'s.
    #[launch(|problem| blocks(problem, 0))]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn histogram_aggregated(input: Global<u8>, bins: GlobalMut<u32>, bytes: u32) {
        let lane = thread_idx_x() % warp::SIZE;
        let add = |byte: u32, count: u32| {
            // SAFETY: byte < BINS.
            unsafe { atomic_add(bins.element(byte as usize), count) };
        };
        // SAFETY: the input holds `bytes` bytes.
        unsafe {
            each_word(input, bytes, |four| {
                each_byte_of(four.unwrap_or(0), |byte| {
                    let key = if four.is_some() { byte } else { BINS };
                    let peers = warp::match_any_sync(warp::ALL_LANES, key);
                    if four.is_some() && peers.trailing_zeros() == lane {
                        add(byte, peers.count_ones());
                    }
                });
            });
            each_tail_byte(input, bytes, |byte| add(byte, 1));
        }
    }

    /// The bins privatised in shared memory: block-local atomics, 256 global ones a block.
    ///
    /// The block clears its copy of the bins in shared memory, counts its
    /// bytes there with shared atomics (`ATOMS`), and adds each bin it
    /// counted to the global one.
    ///
    /// Compute-to-global-memory-access ratio: 1 shared atomic per byte
    /// read, and 256 global atomics per 16 KiB. Bound by the bytes' reads
    /// on uniform bytes, and by the shared atomics' queue at popular bins
    /// on skewed ones.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `histogram_global`'s, and the launch gives 1 KiB of shared memory.
    #[launch(|problem| blocks(problem, 1))]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn histogram_shared(input: Global<u8>, bins: GlobalMut<u32>, bytes: u32) {
        // SAFETY: the launch gives one copy; byte < BINS.
        unsafe {
            let local = cleared(1);
            each_byte(input, bytes, |byte| {
                atomic_add(local.element(byte), 1);
            });
            merge(local, 1, bins);
        }
    }

    /// A copy of the bins per warp: warps never queue at one another's bins.
    ///
    /// As `histogram_shared`, with [`WARPS`] copies of the bins in shared
    /// memory, warp w counting into copy w; the merge sums the copies.
    ///
    /// Compute-to-global-memory-access ratio: as `histogram_shared`'s.
    /// Bound as it is, with the queue at a popular bin only within a warp.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `histogram_global`'s, and the launch gives 8 KiB of shared memory.
    #[launch(|problem| blocks(problem, WARPS))]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn histogram_warps(input: Global<u8>, bins: GlobalMut<u32>, bytes: u32) {
        let copy = thread_idx_x() / warp::SIZE * BINS;
        // SAFETY: the launch gives WARPS copies; copy + byte lies in them.
        unsafe {
            let local = cleared(WARPS);
            each_byte(input, bytes, |byte| {
                atomic_add(local.element(copy + byte), 1);
            });
            merge(local, WARPS, bins);
        }
    }
}
