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
//! pixels into shared memory once and reads the windows from there.

use crate::runtime::global::{Global, GlobalMut, row_major};
use crate::runtime::{Launch, shared::SharedArray, thread::*};

/// What every blur kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub width: u32,
    pub height: u32,
    pub channels: u32,
    pub radius: u32,
}

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

/// The rounded mean (half up) of `sample(x, y)` over the window of `radius`
/// around (`col`, `row`), clipped to the `width × height` image.
#[inline(always)]
fn window_mean(
    col: u32,
    row: u32,
    radius: u32,
    width: u32,
    height: u32,
    sample: impl Fn(u32, u32) -> u8,
) -> u8 {
    let rows = clipped_window(row, radius, height);
    let cols = clipped_window(col, radius, width);
    let mut sum = 0u32;
    for y in rows.clone() {
        for x in cols.clone() {
            sum += sample(x, y) as u32;
        }
    }
    let count = rows.len() as u32 * cols.len() as u32;
    ((sum + count / 2) / count) as u8
}

/// The window of `radius` around `center`, clipped to `0..len`.
///
/// An exclusive range, not `first..=last`: an inclusive range carries a
/// flag for its last step that keeps LLVM from unrolling the loop, which
/// made these kernels half as fast as their CUDA C++ twins.
#[inline(always)]
fn clipped_window(center: u32, radius: u32, len: u32) -> core::ops::Range<u32> {
    let first = center.saturating_sub(radius);
    let end = if len - center <= radius {
        len
    } else {
        center + radius + 1
    };
    first..end
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
    /// # Safety
    /// `input` and `output` are distinct `width × height × channels` byte
    /// arrays and that product fits in `u32`; `radius ≤ MAX_RADIUS`; the
    /// grid covers `width` along x, `height` along y and `channels` along z.
    #[launch(|problem| one_thread_per_sample(problem, 0))]
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
    /// # Safety
    /// As for [`blur_naive`], with blocks of exactly BLOCK×BLOCK threads and
    /// [`tiled_shared_bytes`]`(radius)` bytes of launch-sized shared memory.
    #[launch(|problem| one_thread_per_sample(problem, tiled_shared_bytes(problem.radius)))]
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
}
