//! Box blur of 8-bit images: each output pixel is the rounded mean of the
//! (2r+1)×(2r+1) window around it, counting only pixels inside the image.
//!
//! Images are row-major with `channels` interleaved 8-bit samples per pixel
//! (1 for grayscale, 3 for RGB); each channel is blurred on its own, one grid
//! layer (z) per channel.
//!
//! The lesson of this family: neighbouring outputs share almost all of their
//! windows, so the naive kernel reads each input pixel (2r+1)² times from
//! global memory. The tiled kernel loads a block's tile plus its halo of r
//! pixels into shared memory once and reads the windows from there. The box
//! is separable: a window's sum is the sum of its columns' sums, which a
//! thread walking down a column keeps up to date with one add and one
//! subtract per row (the separable kernel), and a run of column sums can be
//! summed in two lookups of their prefix sums (the running kernel), so that
//! the work per pixel no longer grows with the radius at all. Once each
//! byte crosses the memory bus about once, what is left is instructions:
//! the specialised kernel is compiled once per channel count, so that the
//! others' bookkeeping folds into constants.

// The separable kernels handle a word's four samples in loops over an
// index: LLVM unrolls them and keeps the arrays in registers, where
// iterator adaptors over arrays left stack frames in the gemv kernels
// (docs/rust-as-fast-as-cuda.md §6).
#![allow(clippy::needless_range_loop)]

mod geometry;
mod in_flight;
mod pairs;
mod separable;
mod shuffled;
mod specialised;
mod window;

pub use geometry::*;
pub use in_flight::*;
pub use separable::*;
pub use shuffled::*;
pub use specialised::*;
pub use window::*;

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::{FULL_SM_THREADS, Launch, shared::SharedArray, thread::*};

/// The parameters every blur kernel takes: input, output, width, height,
/// channels, radius.
pub type Args = (Global<u8>, GlobalMut<u8>, u32, u32, u32, u32);

/// Threads per block along x and y for both kernels; also the tiled kernel's
/// output tile width.
pub const BLOCK: u32 = 16;

/// The largest radius any blur kernel accepts: the window sum of
/// (2r+1)² samples of at most 255 must fit in `u32`. A kernel whose shared
/// memory grows with the radius accepts less (see its launch contract).
pub const MAX_RADIUS: u32 = 2047;

/// Bytes of launch-sized shared memory the tiled kernel needs for `radius`:
/// the output tile plus a halo of `radius` pixels on every side (saturating
/// at `u32::MAX`, far beyond any GPU's shared memory).
pub const fn tiled_shared_bytes(radius: u32) -> u32 {
    let span = BLOCK as u64 + 2 * radius as u64;
    let bytes = span * span;
    if bytes > u32::MAX as u64 {
        u32::MAX
    } else {
        bytes as u32
    }
}

/// The index of `channel` of pixel (`x`, `y`) of an image `width` pixels
/// wide with `channels` interleaved channels.
///
/// # Safety
/// The pixel's index `y × width + x` fits in `u32` (see [`row_major`]).
#[inline(always)]
unsafe fn sample_index(x: u32, y: u32, width: u32, channels: u32, channel: u32) -> usize {
    // SAFETY: by this function's contract.
    unsafe { row_major(y, x, width) * channels as usize + channel as usize }
}

/// One thread per output sample: BLOCK×BLOCK pixels per block, one grid
/// layer per channel.
fn one_thread_per_sample(problem: &Problem, shared_bytes: u32) -> Launch {
    Launch::covering(
        (problem.width, problem.height, problem.channels),
        (BLOCK, BLOCK, 1),
        shared_bytes,
    )
}

kernels! {
    /// The blur kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Naive: each output sums its (2r+1)² window straight from global memory.
    ///
    /// Compute-to-global-memory-access ratio: one add per 1-byte load,
    /// 1 OP/B. Bound by memory traffic: the caches catch much of the
    /// (2r+1)² re-reads, but every one is still an instruction and a trip
    /// through the memory pipeline.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` and `output` are distinct `width × height × channels` byte
    /// arrays and that product fits in `u32`; `radius ≤ MAX_RADIUS`; the
    /// grid covers `width` along x, `height` along y and `channels` along z.
    #[launch(|problem| one_thread_per_sample(problem, 0))]
    #[launch_bounds(BLOCK * BLOCK, FULL_SM_THREADS / (BLOCK * BLOCK))]
    pub unsafe fn blur_naive(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        let col = block_idx_x() * block_dim_x() + thread_idx_x();
        let row = block_idx_y() * block_dim_y() + thread_idx_y();
        let channel = block_idx_z();
        if col < width && row < height {
            let mean = window_mean(col, row, radius, width, height, |x, y| {
                // SAFETY: the window is clipped to the image.
                unsafe { input.read(sample_index(x, y, width, channels, channel)) }
            });
            // SAFETY: col < width, row < height, channel < channels.
            unsafe { output.write(sample_index(col, row, width, channels, channel), mean) };
        }
    }

    /// Tiled: the block's tile and its halo loaded into shared memory once, windows read from there.
    ///
    /// One thread per output sample; the block first loads its
    /// (BLOCK + 2r)² tile with halo into shared memory, all threads sharing
    /// the loads, then each sums its window from shared memory.
    ///
    /// Halo pixels outside the image are never loaded and never read: the
    /// window is clipped to the image exactly as in [`blur_naive`].
    ///
    /// Compute-to-global-memory-access ratio: (2r+1)² adds per output over
    /// ((BLOCK + 2r)/BLOCK)² loads, 7.6 OP/B for r = 3. Bound by the
    /// shared-memory reads of the window sums.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As for [`blur_naive`], with blocks of exactly BLOCK×BLOCK threads and
    /// [`tiled_shared_bytes`]`(radius)` bytes of launch-sized shared memory.
    #[launch(|problem| one_thread_per_sample(problem, tiled_shared_bytes(problem.radius)))]
    #[launch_bounds(BLOCK * BLOCK, FULL_SM_THREADS / (BLOCK * BLOCK))]
    pub unsafe fn blur_tiled(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        let (tx, ty) = (thread_idx_x(), thread_idx_y());
        let channel = block_idx_z();
        let span = BLOCK + 2 * radius;
        // Image coordinates of the tile's top-left corner; may be "negative",
        // which wraps and so fails every `< width` test below.
        let origin_x = (block_idx_x() * BLOCK).wrapping_sub(radius);
        let origin_y = (block_idx_y() * BLOCK).wrapping_sub(radius);
        // SAFETY: the launch provides tiled_shared_bytes(radius) = span² bytes.
        let tile = unsafe { SharedArray::<u8>::launch_sized() };

        let mut index = ty * BLOCK + tx;
        while index < span * span {
            let x = origin_x.wrapping_add(index % span);
            let y = origin_y.wrapping_add(index / span);
            if x < width && y < height {
                // SAFETY: (x, y) is inside the image and index inside the tile.
                unsafe { tile.write(index, input.read(sample_index(x, y, width, channels, channel))) };
            }
            index += BLOCK * BLOCK;
        }
        sync_threads();

        let col = block_idx_x() * BLOCK + tx;
        let row = block_idx_y() * BLOCK + ty;
        if col < width && row < height {
            let mean = window_mean(col, row, radius, width, height, |x, y| {
                // SAFETY: (x, y) is inside the image and within radius of
                // this block's tile, so it was loaded before the barrier.
                unsafe { tile.read(y.wrapping_sub(origin_y) * span + x.wrapping_sub(origin_x)) }
            });
            // SAFETY: col < width, row < height, channel < channels.
            unsafe { output.write(sample_index(col, row, width, channels, channel), mean) };
        }
    }

    /// Separable: each thread keeps its columns' sums as it walks down, the window sums a row of them.
    ///
    /// A block of [`STRETCH_THREADS`] threads works on a stretch of a band of
    /// [`BAND_ROWS`] rows; each thread owns one word of the stretch, read
    /// with one 4-byte load. The window's sum is the sum of its 2r+1
    /// columns' sums, and each column's sum changes by one row entering and
    /// one leaving as the window moves down: so the thread keeps its four
    /// columns' sums in registers, and each row they go through shared
    /// memory, deinterleaved into a plane per channel, for the threads whose
    /// windows need them. Outputs are written a word at a time.
    ///
    /// Compute-to-global-memory-access ratio: 2r+3 adds per output over
    /// about 3 bytes moved (one read entering, one leaving, from the cache,
    /// one written): 3 OP/B for r = 3. Bound by instruction issue: about 75
    /// instructions per sample at r = 1 on an H100 (Nsight Compute), and
    /// more as the 2r+1 shared-memory reads grow with the radius.
    ///
    /// Launch bounds: 256 threads, and four blocks an SM (64 registers): at
    /// eight it ran faster on the H100 but the driver's ptxas spilled it.
    ///
    /// # Safety
    /// As for [`blur_naive`], with blocks of [`STRETCH_THREADS`] threads,
    /// one per stretch of a band of rows, and
    /// [`separable_shared_bytes`] bytes of launch-sized shared memory.
    #[launch(|problem| stretch_per_block(problem, separable_shared_bytes(problem)))]
    #[launch_bounds(STRETCH_THREADS, 4)]
    pub unsafe fn blur_separable(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        let window_sums = |columns, _, place: &Place| {
            // SAFETY: walk_band calls it once the column sums are published.
            unsafe { direct_window_sums(columns, place, radius) }
        };
        // SAFETY: by this kernel's contract.
        unsafe { walk_band(input, output, (width, height, channels, radius), window_sums) }
    }

    /// Running: a row's prefix sums make every window sum one subtraction, whatever the radius.
    ///
    /// As [`blur_separable`], but once a row's column sums are in shared
    /// memory the block turns them into their prefix sums — each thread its
    /// four, each warp its threads' with five `SHFL.UP`, the block its
    /// warps' through shared memory — and a window's sum is the difference
    /// of two of them. The work per output no longer depends on r.
    ///
    /// Compute-to-global-memory-access ratio: about 12 adds per output over
    /// about 3 bytes moved: 4 OP/B at every radius. Bound by instruction
    /// issue: about 70 instructions per sample on an H100 (Nsight Compute),
    /// far more than the memory needs to keep up.
    ///
    /// Launch bounds: 256 threads, and four blocks an SM (64 registers), its
    /// fastest of none, 2, 3, 4 and 8 (H100).
    ///
    /// # Safety
    /// As for [`blur_separable`], with [`running_shared_bytes`] bytes of
    /// launch-sized shared memory.
    #[launch(|problem| stretch_per_block(problem, running_shared_bytes(problem)))]
    #[launch_bounds(STRETCH_THREADS, 4)]
    pub unsafe fn blur_running(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        let window_sums = |columns, stretch: Stretch, place: &Place| {
            // SAFETY: walk_band calls it once the column sums are published;
            // the launch provides the other two arrays.
            unsafe { prefix_window_sums(columns, stretch.pixels * channels, place, radius) }
        };
        // SAFETY: by this kernel's contract.
        unsafe { walk_band(input, output, (width, height, channels, radius), window_sums) }
    }

    /// Specialised: compiled once per channel count, four whole pixels a thread, every index a constant.
    ///
    /// [`blur_running`] spends about 70 instructions on each sample, most of
    /// them on what a thread must work out because the channel count is not
    /// known when it is compiled: which plane a sample belongs to, which
    /// samples lie inside the image, where each window starts. This kernel
    /// is compiled once for each channel count from 1 to
    /// [`SPECIALISED_CHANNELS`] and the launch picks one; each thread owns
    /// [`THREAD_PIXELS`] whole pixels, so that its samples' channels are
    /// constants, and keeps its column sums in registers, as before. Each
    /// row, it sums each channel's columns along its own samples, the warp
    /// adds its threads' totals by shuffles and the block its warps', and a
    /// window's sum is the difference of two of these prefix sums, read
    /// back from shared memory. Threads are halo or output whole, and the
    /// windows inside the image divide by a multiply.
    ///
    /// Compute-to-global-memory-access ratio: about 8 adds per output over
    /// about 3 bytes moved: 3 OP/B at every radius. Bound by latency, not
    /// by memory: on an H100 it executes about 36 instructions per sample,
    /// half as many as [`blur_running`], but with 80 registers a third of
    /// the warps are resident, each row waits at two barriers, and two
    /// thirds of the shared-memory reads are bank conflicts (threads 4·C
    /// words apart), so that the issue slots are busy less than half the
    /// time (Nsight Compute).
    ///
    /// Launch bounds: 256 threads, and three blocks an SM (80 registers): at
    /// four the driver's ptxas spills it.
    ///
    /// # Safety
    /// As for [`blur_naive`], with blocks of [`SPECIALISED_THREADS`] threads,
    /// one per stretch of a band of rows, 1 to [`SPECIALISED_CHANNELS`]
    /// channels and [`specialised_shared_bytes`] bytes of launch-sized
    /// shared memory.
    #[launch(specialised_launch)]
    #[launch_bounds(SPECIALISED_THREADS, 3)]
    pub unsafe fn blur_specialised(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        let image = (width, height, radius);
        // SAFETY: by this kernel's contract, which names the channel counts.
        unsafe {
            match channels {
                1 => walk_band_specialised::<1>(input, output, image),
                2 => walk_band_specialised::<2>(input, output, image),
                3 => walk_band_specialised::<3>(input, output, image),
                _ => walk_band_specialised::<4>(input, output, image),
            }
        }
    }

    /// Shuffled: warps on their own, two column sums to a register, windows summed across lanes by shuffles.
    ///
    /// [`blur_specialised`] passes every row's column sums through shared
    /// memory, behind two barriers, and spends a register on each sum. Here
    /// a warp works alone on its stretch of a band of
    /// [`SHUFFLED_BAND_ROWS`] rows, each lane on one 16-byte line of each
    /// row, read and written with one 16-byte access. A column's sum of at
    /// most (2r+1)·255 fits in 16 bits, so each register holds two and one
    /// add moves both (so do the windows' sums, up to r = 7); the column
    /// sums a window reaches past the lane's own line come from the
    /// neighbouring lanes' registers by `SHFL.UP` and `SHFL.DOWN`, the
    /// lanes at the warp's ends only lending theirs. No shared memory, no
    /// barrier, and a window's mean is one multiply-high. The kernel is
    /// compiled once for each channel count from 1 to
    /// [`SHUFFLED_CHANNELS`] and each radius up to [`shuffled_max_radius`],
    /// so that every index is a constant: an instance for each, an entry
    /// point each with registers of its own.
    ///
    /// Compute-to-global-memory-access ratio: about 4 adds per output over
    /// about 3 bytes moved (one read entering, one leaving, from the cache,
    /// one written): 1.3 OP/B at every radius. Bound by memory.
    ///
    /// Launch bounds: 128 threads, and six blocks an SM (at most 80
    /// registers; ptxas gives the instances 68 to 76 on an H100, seven
    /// blocks an SM for most). Eight blocks (64 registers) make some
    /// instances spill on sm_80 and were no faster on an H100.
    ///
    /// # Safety
    /// As for [`blur_naive`], with blocks of [`SHUFFLED_THREADS`] threads,
    /// the grid of [`shuffled_launch`], 1 to [`SHUFFLED_CHANNELS`] channels
    /// and a radius of at most [`shuffled_max_radius`] of the channels.
    #[launch(shuffled_launch)]
    #[launch_bounds(SHUFFLED_THREADS, 6)]
    #[instances(channels, radius in
        (1, 0) (1, 1) (1, 2) (1, 3) (1, 4) (1, 5) (1, 6) (1, 7)
        (2, 0) (2, 1) (2, 2) (2, 3) (2, 4) (2, 5) (2, 6) (2, 7)
        (3, 0) (3, 1) (3, 2) (3, 3) (3, 4) (3, 5)
        (4, 0) (4, 1) (4, 2) (4, 3) (4, 4))]
    pub unsafe fn blur_shuffled<const CHANNELS: usize, const RADIUS: usize>(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        // SAFETY: by this kernel's contract.
        unsafe { walk_band_shuffled::<CHANNELS, RADIUS>(input, output, (width, height), None) }
    }

    /// Staged: the shuffled walk's rows copied into shared memory three rows ahead, by `cp.async`.
    ///
    /// [`blur_shuffled`] has each warp wait on the row it loaded a row
    /// ahead, and keeps that row in registers until it arrives: with a
    /// third of an SM's warps resident, too few loads are in flight to
    /// keep the memory busy (Nsight Compute, one channel, r = 1: the DRAM
    /// a quarter busy, no warp eligible half the time). Here each lane
    /// copies its line of each row into a ring of slots of its own in
    /// shared memory, [`STAGED_DEPTH`] rows before the walk takes the row
    /// in (`cp.async`, one commit group a row, `cp.async.wait_group` for
    /// the oldest): the copies in flight hold no register, and the row
    /// leaving a window is read again from its slot, not from L1. The
    /// walk is [`blur_shuffled`]'s otherwise; no barrier, since no lane
    /// reads another's slots.
    ///
    /// Compute-to-global-memory-access ratio: as [`blur_shuffled`], about
    /// 4 adds per output over 2 bytes moved (one read, one written):
    /// 2 OP/B. Bound by memory.
    ///
    /// Launch bounds: 128 threads, and six blocks an SM, as
    /// [`blur_shuffled`]; its ring takes 16 KiB a block at r = 1, 32 KiB
    /// at r = 2 and 3.
    ///
    /// # Safety
    /// As for [`blur_shuffled`], with a radius of at most
    /// [`STAGED_MAX_RADIUS`] and [`staged_shared_bytes`] bytes of
    /// launch-sized shared memory.
    #[launch(staged_launch)]
    #[launch_bounds(SHUFFLED_THREADS, 6)]
    #[instances(channels, radius in
        (1, 0) (1, 1) (1, 2) (1, 3)
        (2, 0) (2, 1) (2, 2) (2, 3)
        (3, 0) (3, 1) (3, 2) (3, 3)
        (4, 0) (4, 1) (4, 2) (4, 3))]
    pub unsafe fn blur_staged<const CHANNELS: usize, const RADIUS: usize>(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        // SAFETY: the launch provides staged_shared_bytes(radius).
        let ring = unsafe { SharedArray::<u8>::launch_sized() };
        // SAFETY: by this kernel's contract.
        unsafe { walk_band_shuffled::<CHANNELS, RADIUS>(input, output, (width, height), Some(ring)) }
    }

    /// In flight: a warp's whole band of rows loaded before it sums the first, a word a lane.
    ///
    /// [`blur_shuffled`] loads a row ahead of the one it sums and
    /// [`blur_staged`] three, so that each warp has two to four 512-byte
    /// rows in flight, and with a third of the SM's warps resident the
    /// memory waits on the warps (one channel, r = 1: 0.15 ms at 8192²,
    /// where NPP's box filter takes 0.075). Here each lane owns one word of
    /// each row, and loads all 8 + 2r words its band's windows take in
    /// before it sums any: 10 loads a lane in flight at r = 1, held in 10
    /// registers, where 16-byte lines would need 40. The walk is
    /// [`blur_shuffled`]'s otherwise: two column sums to a register, the
    /// windows' columns past the lane's word from its neighbours by
    /// `SHFL.UP` and `SHFL.DOWN` (a window reaches at most one word either
    /// side, r·C ≤ 4), each row's entering and leaving rows taken from the
    /// registers, not the caches, and a window's mean one multiply-high.
    /// Compiled once for each channel count from 1 to
    /// [`IN_FLIGHT_CHANNELS`] and each radius up to
    /// [`in_flight_max_radius`].
    ///
    /// Compute-to-global-memory-access ratio: about 4 adds per output over
    /// 2 bytes moved (one read, one written, each once): 2 OP/B. Bound by
    /// memory.
    ///
    /// Launch bounds: 128 threads, and eight blocks an SM (at most 64
    /// registers, 10 to 12 of them the band's rows).
    ///
    /// # Safety
    /// As for [`blur_naive`], with blocks of [`IN_FLIGHT_THREADS`] threads,
    /// the grid of [`in_flight_launch`], 1 to [`IN_FLIGHT_CHANNELS`]
    /// channels and a radius of at most [`in_flight_max_radius`] of the
    /// channels.
    #[launch(in_flight_launch)]
    #[launch_bounds(IN_FLIGHT_THREADS, 8)]
    #[instances(channels, radius in
        (1, 0) (1, 1) (1, 2)
        (2, 0) (2, 1) (2, 2)
        (3, 0) (3, 1)
        (4, 0) (4, 1))]
    pub unsafe fn blur_in_flight<const CHANNELS: usize, const RADIUS: usize>(input: Global<u8>, output: GlobalMut<u8>, width: u32, height: u32, channels: u32, radius: u32) {
        // SAFETY: by this kernel's contract.
        unsafe { walk_band_in_flight::<CHANNELS, RADIUS>(input, output, (width, height)) }
    }
}
