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

use crate::runtime::global::{Global, GlobalMut, Word, row_major};
use crate::runtime::warp::{self, ALL_LANES, shfl_up_sync};
use crate::runtime::{FULL_SM_THREADS, Launch, shared::SharedArray, thread::*};

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

/// Threads per block of the separable kernels, each owning one word (four
/// samples) of the block's stretch of the row.
pub const STRETCH_THREADS: u32 = 256;

/// Rows each block of the separable kernels walks down.
pub const BAND_ROWS: u32 = 64;

/// The stretch of every row a block of the separable kernels works on, in
/// pixels: `output` pixels it writes and, on each side, a `halo` of pixels
/// whose column sums its windows need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    pub pixels: u32,
    pub halo: u32,
    pub output: u32,
}

impl Stretch {
    /// As many whole words of pixels as the block's threads cover, with a
    /// halo of at least `radius` rounded up to whole words, so that every
    /// stretch starts on a word; `None` where the halos leave no output.
    pub const fn new(channels: u32, radius: u32) -> Option<Self> {
        if channels == 0 {
            return None;
        }
        Self::with_halo(STRETCH_THREADS / channels * 4, 4, radius)
    }

    /// The stretch of [`blur_specialised`]: [`THREAD_PIXELS`] pixels a
    /// thread, with a halo of at least `radius + 1` rounded up to whole
    /// threads, so that every thread's pixels are all halo or all output.
    pub const fn specialised(radius: u32) -> Option<Self> {
        Self::with_halo(
            SPECIALISED_THREADS * THREAD_PIXELS,
            THREAD_PIXELS,
            radius.saturating_add(1),
        )
    }

    /// `pixels` pixels with a halo of at least `halo` rounded up to whole
    /// `steps`; `None` where the halos leave no output.
    const fn with_halo(pixels: u32, step: u32, halo: u32) -> Option<Self> {
        if halo >= pixels / 2 {
            return None;
        }
        let halo = halo.div_ceil(step) * step;
        if halo >= pixels / 2 {
            return None;
        }
        Some(Self {
            pixels,
            halo,
            output: pixels - 2 * halo,
        })
    }
}

/// Bytes of launch-sized shared memory a separable kernel needs for a
/// stretch: `arrays` arrays of one `u32` per sample of the stretch, plus
/// `extra` words. A radius whose halos leave no output asks for more than
/// any GPU has, which the host refuses.
const fn stretch_shared_bytes(problem: &Problem, arrays: u32, extra: u32) -> u32 {
    match Stretch::new(problem.channels, problem.radius) {
        Some(stretch) => (arrays * stretch.pixels * problem.channels + extra) * 4,
        None => u32::MAX,
    }
}

/// One block of [`STRETCH_THREADS`] per stretch of a band of rows.
fn stretch_per_block(problem: &Problem, shared_bytes: u32) -> Launch {
    let stretch = Stretch::new(problem.channels, problem.radius);
    band_blocks(problem, stretch, STRETCH_THREADS, shared_bytes)
}

/// One block of `threads` per `stretch` of a band of [`BAND_ROWS`] rows;
/// without a stretch, the `shared_bytes` the host refuses decide.
fn band_blocks(
    problem: &Problem,
    stretch: Option<Stretch>,
    threads: u32,
    shared_bytes: u32,
) -> Launch {
    let output = match stretch {
        Some(stretch) => stretch.output,
        None => 1,
    };
    Launch {
        grid: (
            problem.width.div_ceil(output),
            problem.height.div_ceil(BAND_ROWS),
            1,
        ),
        block: (threads, 1, 1),
        shared_bytes,
    }
}

/// Shared memory of [`blur_separable`]: the stretch's column sums.
pub const fn separable_shared_bytes(problem: &Problem) -> u32 {
    stretch_shared_bytes(problem, 1, 0)
}

/// Shared memory of [`blur_running`]: the stretch's column sums, their
/// prefix sums (one more) and one partial sum per warp.
pub const fn running_shared_bytes(problem: &Problem) -> u32 {
    stretch_shared_bytes(problem, 2, 1 + STRETCH_THREADS / warp::SIZE)
}

/// The rounded mean of a sum over `divisor` samples by a multiply and a
/// shift instead of a division, which the GPU has no instruction for (a
/// `u32` division is about twenty instructions). With `k` = ⌊log₂ d⌋ and
/// `m` = ⌈2³¹⁺ᵏ / d⌉ < 2³², `(n · m) >> (31 + k)` is ⌊n / d⌋ for every
/// `n` < 256·d — the largest a rounded sum of bytes reaches — as long as
/// `d` < 2²², which every window of at most 2047 × 2047 samples is: the
/// error `m·d − 2³¹⁺ᵏ` < d times n stays below 2³¹⁺ᵏ (Granlund and
/// Montgomery, "Division by invariant integers using multiplication", 1994).
#[derive(Clone, Copy, Debug)]
pub struct Reciprocal {
    divisor: u32,
    multiplier: u32,
    shift: u32,
}

impl Reciprocal {
    /// The reciprocal of `divisor`, from 1 to 2²² − 1.
    #[inline(always)]
    pub fn new(divisor: u32) -> Self {
        let shift = 31 + (31 - divisor.leading_zeros());
        let multiplier = (1u64 << shift).div_ceil(u64::from(divisor)) as u32;
        Self {
            divisor,
            multiplier,
            shift,
        }
    }

    /// The mean of `sum` over `count` samples, rounded half up, `sum` at
    /// most 255 per sample: by the multiply where `count` is this divisor
    /// (everywhere but near the image's borders, where windows are
    /// clipped), by a division elsewhere.
    #[inline(always)]
    pub fn rounded_mean(self, sum: u32, count: u32) -> u8 {
        if count == self.divisor {
            self.rounded_full_mean(sum)
        } else {
            ((sum + count / 2) / count) as u8
        }
    }

    /// The mean of `sum` over this divisor's count of samples, rounded half
    /// up, `sum` at most 255 per sample: one add, one multiply, one shift.
    #[inline(always)]
    pub fn rounded_full_mean(self, sum: u32) -> u8 {
        let rounded = sum + self.divisor / 2;
        ((u64::from(rounded) * u64::from(self.multiplier)) >> self.shift) as u8
    }
}

/// What a thread of a separable kernel knows about its place in the block's
/// stretch, worked out once before it walks down the band.
#[derive(Clone, Copy)]
struct Place {
    /// Row-relative sample index of the first sample of this thread's
    /// input word (wrapping "negative" left of the image).
    input_start: u32,
    /// Which of the word's four samples lie inside the row.
    input_inside: [bool; 4],
    /// Whether the word lies wholly inside the row and rows start on words,
    /// so that one 4-byte load reads it.
    input_whole: bool,
    /// Each input sample's index in the channel-planar arrays (a plane of
    /// `stretch.pixels` per channel); `None` past the stretch.
    plane_index: [Option<u32>; 4],
    /// Row-relative index of the first sample of the output word, which
    /// of its samples this thread writes, and whether one 4-byte store
    /// writes them all.
    output_start: u32,
    output_inside: [bool; 4],
    output_whole: bool,
    /// Each output sample's window: the planar index of its leftmost column
    /// sum, and how many columns the image clips it to.
    window_first: [u32; 4],
    window_columns: [u32; 4],
}

impl Place {
    #[inline(always)]
    fn new(stretch: Stretch, width: u32, channels: u32, radius: u32) -> Self {
        let stride = width * channels;
        let rows_on_words = stride.is_multiple_of(4);
        let column = 4 * thread_idx_x();
        let first_pixel = block_idx_x() * stretch.output;
        let stretch_start = i64::from(first_pixel) - i64::from(stretch.halo);
        let input_start = stretch_start * i64::from(channels) + i64::from(column);
        let samples = stretch.pixels * channels;
        let mut place = Self {
            input_start: input_start as u32,
            input_inside: [false; 4],
            input_whole: false,
            plane_index: [None; 4],
            output_start: first_pixel * channels + column,
            output_inside: [false; 4],
            output_whole: false,
            window_first: [0; 4],
            window_columns: [0; 4],
        };
        let output_samples = stretch.output * channels;
        for i in 0..4 {
            let sample = column + i;
            place.input_inside[i as usize] =
                (0..i64::from(stride)).contains(&(input_start + i64::from(i)));
            if sample < samples {
                let plane = sample % channels;
                place.plane_index[i as usize] = Some(plane * stretch.pixels + sample / channels);
            }
            if sample < output_samples && place.output_start + i < stride {
                let stretch_sample = stretch.halo * channels + sample;
                let plane = stretch_sample % channels;
                let pixel = stretch_sample / channels;
                place.output_inside[i as usize] = true;
                place.window_first[i as usize] = plane * stretch.pixels + pixel - radius;
                place.window_columns[i as usize] =
                    clipped_window(first_pixel + sample / channels, radius, width).len() as u32;
            }
        }
        place.input_whole = rows_on_words && place.input_inside == [true; 4];
        place.output_whole = rows_on_words && place.output_inside == [true; 4];
        place
    }
}

/// Walks this thread down its block's band of rows with the sums of its
/// input word's four columns over the window's rows, kept up to date by
/// adding the row that enters the window and subtracting the one that
/// leaves it, both loaded a row ahead. For each row it publishes the column
/// sums to `columns` (one plane per channel, so that a channel's columns
/// are neighbours), asks `window_sums` for its output word's window sums,
/// and writes their rounded means.
///
/// # Safety
/// As for [`blur_separable`]; `window_sums` ends with a barrier after its
/// last read of `columns`, so that the next row's column sums may
/// overwrite them.
#[inline(always)]
unsafe fn walk_band(
    input: Global<u8>,
    output: GlobalMut<u8>,
    (width, height, channels, radius): (u32, u32, u32, u32),
    mut window_sums: impl FnMut(SharedArray<u32>, Stretch, &Place) -> [u32; 4],
) {
    let Some(stretch) = Stretch::new(channels, radius) else {
        return;
    };
    let place = Place::new(stretch, width, channels, radius);
    let stride = width * channels;
    // SAFETY: the launch provides the stretch's arrays (see the kernels).
    let columns = unsafe { SharedArray::<u32>::launch_sized() };
    let read_row = |row: u32| -> [u32; 4] {
        // Wraps where the word starts left of the image; only the samples
        // inside the row are read.
        let start = row.wrapping_mul(stride).wrapping_add(place.input_start);
        let mut samples = [0; 4];
        if place.input_whole {
            // SAFETY: the word lies inside the row, on a word boundary.
            let word: Word = unsafe { input.read_word(start as usize) };
            for i in 0..4 {
                samples[i] = u32::from(word[i]);
            }
        } else {
            for i in 0..4 {
                if place.input_inside[i] {
                    // SAFETY: the sample lies inside the row.
                    samples[i] =
                        u32::from(unsafe { input.read(start.wrapping_add(i as u32) as usize) });
                }
            }
        }
        samples
    };

    let first_row = block_idx_y() * BAND_ROWS;
    let end_row = first_row.saturating_add(BAND_ROWS).min(height);
    let mut sums = [0u32; 4];
    // The window of the first row.
    for row in first_row.saturating_sub(radius)..first_row.saturating_add(radius + 1).min(height) {
        let entering = read_row(row);
        for i in 0..4 {
            sums[i] += entering[i];
        }
    }
    let full = Reciprocal::new((2 * radius + 1) * (2 * radius + 1));
    for row in first_row..end_row {
        // The rows that move the window down to the next row, loaded first
        // so that they arrive while this row's windows are summed.
        let leaving = if row >= radius {
            read_row(row - radius)
        } else {
            [0; 4]
        };
        let entering = if height - row > radius + 1 {
            read_row(row + radius + 1)
        } else {
            [0; 4]
        };
        for i in 0..4 {
            if let Some(index) = place.plane_index[i] {
                // SAFETY: each sample of the stretch has its own index.
                unsafe { columns.write(index, sums[i]) };
            }
        }
        sync_threads();
        let windows = window_sums(columns, stretch, &place);
        let rows = clipped_window(row, radius, height).len() as u32;
        let mut means: Word = [0; 4];
        for i in 0..4 {
            if place.output_inside[i] {
                means[i] = full.rounded_mean(windows[i], rows * place.window_columns[i]);
            }
        }
        if place.output_whole {
            // SAFETY: the word lies inside the row, on a word boundary.
            unsafe { output.write_word(row_major(row, place.output_start, stride), means) };
        } else {
            for i in 0..4 {
                if place.output_inside[i] {
                    // SAFETY: the sample lies inside the row.
                    unsafe {
                        output.write(
                            row_major(row, place.output_start + i as u32, stride),
                            means[i],
                        )
                    };
                }
            }
        }
        for i in 0..4 {
            sums[i] = sums[i] + entering[i] - leaving[i];
        }
    }
}

/// The window sums of this thread's output word, each the sum of its 2r+1
/// columns' sums.
///
/// # Safety
/// Called by every thread of the block once [`walk_band`] has published
/// the row's column sums to `columns`.
#[inline(always)]
unsafe fn direct_window_sums(columns: SharedArray<u32>, place: &Place, radius: u32) -> [u32; 4] {
    let mut windows = [0u32; 4];
    for i in 0..4 {
        if place.output_inside[i] {
            for column in 0..2 * radius + 1 {
                // SAFETY: the window's columns lie in its plane, published.
                windows[i] += unsafe { columns.read(place.window_first[i] + column) };
            }
        }
    }
    sync_threads();
    windows
}

/// The window sums of this thread's output word, each the difference of two
/// prefix sums of the row's column sums, which the block works out first:
/// each thread over its own four, each warp over its threads' totals by
/// shuffles, and each thread adds the totals of the warps before its own.
///
/// # Safety
/// As [`direct_window_sums`], with two more arrays after `columns`: the
/// prefix sums (one more than the stretch's samples) and one partial sum
/// per warp.
#[inline(always)]
unsafe fn prefix_window_sums(
    columns: SharedArray<u32>,
    samples: u32,
    place: &Place,
    radius: u32,
) -> [u32; 4] {
    // SAFETY: by this function's contract.
    let prefix = unsafe { columns.after(samples) };
    // SAFETY: by this function's contract.
    let partials = unsafe { prefix.after(samples + 1) };
    let first = 4 * thread_idx_x();
    let mut run = [0u32; 4];
    for i in 0..4 {
        if first + (i as u32) < samples {
            // SAFETY: published by its owner before the barrier.
            run[i] = unsafe { columns.read(first + i as u32) };
        }
    }
    for i in 1..4 {
        run[i] += run[i - 1];
    }
    let lane = thread_idx_x() % warp::SIZE;
    let mut inclusive = run[3];
    let mut delta = 1;
    while delta < warp::SIZE {
        let earlier = shfl_up_sync(ALL_LANES, inclusive, delta);
        if lane >= delta {
            inclusive += earlier;
        }
        delta *= 2;
    }
    let warp_index = thread_idx_x() / warp::SIZE;
    if lane == warp::SIZE - 1 {
        // SAFETY: one partial per warp, written by its last lane.
        unsafe { partials.write(warp_index, inclusive) };
    }
    sync_threads();
    let mut before = inclusive - run[3];
    for earlier_warp in 0..warp_index {
        // SAFETY: written before the barrier.
        before += unsafe { partials.read(earlier_warp) };
    }
    if first == 0 {
        // SAFETY: the empty prefix, written by thread 0 alone.
        unsafe { prefix.write(0, 0) };
    }
    for i in 0..4 {
        if first + (i as u32) < samples {
            // SAFETY: each thread writes its own four.
            unsafe { prefix.write(first + i as u32 + 1, before + run[i]) };
        }
    }
    sync_threads();
    let mut windows = [0u32; 4];
    for i in 0..4 {
        if place.output_inside[i] {
            let first_column = place.window_first[i];
            // SAFETY: the window's columns lie in its plane, summed above.
            windows[i] =
                unsafe { prefix.read(first_column + 2 * radius + 1) - prefix.read(first_column) };
        }
    }
    windows
}

/// Threads per block of [`blur_specialised`].
pub const SPECIALISED_THREADS: u32 = 256;

/// Whole pixels each thread of [`blur_specialised`] owns: four, so that its
/// samples fill whole words at every channel count. Eight, with half the
/// threads, measured up to 1.5× slower on an H100: 112 registers a thread where
/// four need 80, and so fewer warps to hide each other's latency.
pub const THREAD_PIXELS: u32 = 4;

/// The channel counts [`blur_specialised`] is compiled for: 1 to this.
pub const SPECIALISED_CHANNELS: u32 = 4;

/// The most samples and words one thread of [`blur_specialised`] owns.
const MOST_SAMPLES: usize = (THREAD_PIXELS * SPECIALISED_CHANNELS) as usize;
const MOST_WORDS: usize = MOST_SAMPLES / 4;

/// Shared memory of [`blur_specialised`]: the prefix sums of the stretch's
/// column sums and, for each warp, its channels' totals. More than any GPU
/// has for a channel count it is not compiled for, or a radius whose halos
/// leave no output, which the host refuses.
pub const fn specialised_shared_bytes(problem: &Problem) -> u32 {
    match (Stretch::specialised(problem.radius), problem.channels) {
        (Some(stretch), 1..=SPECIALISED_CHANNELS) => {
            (stretch.pixels + SPECIALISED_THREADS / warp::SIZE) * problem.channels * 4
        }
        _ => u32::MAX,
    }
}

/// One block of [`SPECIALISED_THREADS`] per stretch of a band of rows.
fn specialised_launch(problem: &Problem) -> Launch {
    let stretch = Stretch::specialised(problem.radius);
    band_blocks(
        problem,
        stretch,
        SPECIALISED_THREADS,
        specialised_shared_bytes(problem),
    )
}

/// The body of [`blur_specialised`] for images of `C` channels: with `C` a
/// constant, every loop over a thread's samples unrolls, every index is a
/// constant and every array lives in registers.
///
/// # Safety
/// As for [`blur_specialised`], with `C` the image's channel count.
#[inline(always)]
unsafe fn walk_band_specialised<const C: usize>(
    input: Global<u8>,
    output: GlobalMut<u8>,
    (width, height, radius): (u32, u32, u32),
) {
    let Some(stretch) = Stretch::specialised(radius) else {
        return;
    };
    let channels = C as u32;
    let samples = THREAD_PIXELS as usize * C;
    let words = samples / 4;
    let stride = width * channels;
    let thread = thread_idx_x();
    // This thread's first pixel and sample, from the row's start: "negative"
    // in the halo left of the image.
    let first_output_pixel = block_idx_x() * stretch.output;
    let pixel =
        i64::from(first_output_pixel) - i64::from(stretch.halo) + i64::from(thread * THREAD_PIXELS);
    let start = pixel * i64::from(channels);
    // Which of the thread's samples lie inside the row.
    let inside_from = (-start).clamp(0, samples as i64) as usize;
    let inside_to = (i64::from(stride) - start).clamp(0, samples as i64) as usize;
    let rows_on_words = stride.is_multiple_of(4);
    let whole = rows_on_words && inside_from == 0 && inside_to == samples;
    let start = start as u32;
    // Reads this thread's samples of `row`, four to a word, zero outside it.
    let read_row = |row: u32| -> [u32; MOST_WORDS] {
        let first = row.wrapping_mul(stride).wrapping_add(start);
        let mut row_words = [0u32; MOST_WORDS];
        if whole {
            for w in 0..words {
                // SAFETY: the word lies inside the row, on a word boundary.
                let word = unsafe { input.read_word(first as usize + 4 * w) };
                row_words[w] = u32::from_le_bytes(word);
            }
        } else {
            // Word by word over every sample, not just those inside: LLVM
            // unrolls these short loops, and an array indexed at run time
            // would be left in local memory.
            for w in 0..words {
                for b in 0..4 {
                    let i = 4 * w + b;
                    if (inside_from..inside_to).contains(&i) {
                        // SAFETY: the sample lies inside the row.
                        let sample = unsafe { input.read(first.wrapping_add(i as u32) as usize) };
                        row_words[w] |= u32::from(sample) << (8 * b);
                    }
                }
            }
        }
        row_words
    };
    let sample_of =
        |row_words: &[u32; MOST_WORDS], i: usize| row_words[i / 4] >> (8 * (i % 4)) & 0xff;

    // SAFETY: the launch provides specialised_shared_bytes.
    let prefixes = unsafe { SharedArray::<u32>::launch_sized() };
    // SAFETY: as above; the warps' totals follow the prefix sums.
    let warp_totals = unsafe { prefixes.after(stretch.pixels * channels) };
    let first_sample = thread * samples as u32;
    let lane = thread % warp::SIZE;
    let warp_index = thread / warp::SIZE;
    let writes_output = (stretch.halo..stretch.halo + stretch.output)
        .contains(&(thread * THREAD_PIXELS))
        && pixel < i64::from(width);
    // An output thread's samples start inside the row: those inside it are
    // the ones it writes.
    let whole_output = rows_on_words && inside_to == samples;
    let interior =
        pixel >= i64::from(radius) && pixel + i64::from(THREAD_PIXELS + radius) <= i64::from(width);
    let full = Reciprocal::new((2 * radius + 1) * (2 * radius + 1));

    let first_row = block_idx_y() * BAND_ROWS;
    let end_row = first_row.saturating_add(BAND_ROWS).min(height);
    let mut sums = [0u32; MOST_SAMPLES];
    // The window of the first row.
    for row in first_row.saturating_sub(radius)..first_row.saturating_add(radius + 1).min(height) {
        let entering = read_row(row);
        for i in 0..samples {
            sums[i] += sample_of(&entering, i);
        }
    }
    for row in first_row..end_row {
        // The rows that move the window down to the next row, loaded first
        // so that they arrive while this row's windows are summed.
        let leaving = if row >= radius {
            read_row(row - radius)
        } else {
            [0; MOST_WORDS]
        };
        let entering = if height - row > radius + 1 {
            read_row(row + radius + 1)
        } else {
            [0; MOST_WORDS]
        };
        // Each channel's prefix sums over this thread's samples, then the
        // warp's over its threads' totals, and the block's over its warps'.
        let mut prefix = sums;
        for i in C..samples {
            prefix[i] += prefix[i - C];
        }
        let mut totals = [0u32; C];
        totals.copy_from_slice(&prefix[samples - C..samples]);
        let mut inclusive = totals;
        let mut delta = 1;
        while delta < warp::SIZE {
            for k in 0..C {
                let earlier = shfl_up_sync(ALL_LANES, inclusive[k], delta);
                if lane >= delta {
                    inclusive[k] += earlier;
                }
            }
            delta *= 2;
        }
        if lane == warp::SIZE - 1 {
            for k in 0..C {
                // SAFETY: each warp's last lane writes the warp's totals.
                unsafe { warp_totals.write(warp_index * channels + k as u32, inclusive[k]) };
            }
        }
        sync_threads();
        let mut before = [0u32; C];
        for k in 0..C {
            before[k] = inclusive[k] - totals[k];
        }
        for earlier_warp in 0..warp_index {
            for k in 0..C {
                // SAFETY: written before the barrier.
                before[k] += unsafe { warp_totals.read(earlier_warp * channels + k as u32) };
            }
        }
        for i in 0..samples {
            // SAFETY: each thread writes its own samples' prefix sums.
            unsafe { prefixes.write(first_sample + i as u32, prefix[i] + before[i % C]) };
        }
        sync_threads();
        if writes_output {
            // A window's sum is the difference of the prefix sums at its
            // last column and just before its first.
            let window = |i: usize| {
                let at = first_sample + i as u32;
                // SAFETY: the halo holds both ends of every output's window.
                unsafe {
                    prefixes.read(at + radius * channels)
                        - prefixes.read(at - (radius + 1) * channels)
                }
            };
            let rows = clipped_window(row, radius, height).len() as u32;
            // SAFETY: the thread's samples lie inside the image.
            let first = unsafe { row_major(row, start, stride) };
            if interior && rows == 2 * radius + 1 && whole_output {
                for w in 0..words {
                    let mut means = 0u32;
                    for b in 0..4 {
                        let mean = full.rounded_full_mean(window(4 * w + b));
                        means |= u32::from(mean) << (8 * b);
                    }
                    // SAFETY: the word lies inside the row, on a word boundary.
                    unsafe { output.write_word(first + 4 * w, means.to_le_bytes()) };
                }
            } else {
                // Near the image's edges, where windows are clipped, or
                // where rows do not start on words: a sample at a time.
                for i in 0..samples {
                    if i < inside_to {
                        let x = pixel as u32 + (i / C) as u32;
                        let columns = clipped_window(x, radius, width).len() as u32;
                        let mean = full.rounded_mean(window(i), rows * columns);
                        // SAFETY: the sample lies inside the row.
                        unsafe { output.write(first + i, mean) };
                    }
                }
            }
        }
        for i in 0..samples {
            sums[i] = sums[i] + sample_of(&entering, i) - sample_of(&leaving, i);
        }
    }
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
}
