//! What the separable blurs share: a block per stretch of a band of rows,
//! each thread walking down its word's column sums, and the two ways of
//! summing a row's windows from them, directly or by prefix sums.

// A word's four samples in loops over an index: LLVM unrolls them and
// keeps the arrays in registers (docs/rust-as-fast-as-cuda.md §6).
#![allow(clippy::needless_range_loop)]

use super::geometry::{BAND_ROWS, Problem, Stretch, band_blocks};
use super::window::{Reciprocal, clipped_window};
use gpu_std::global::{Global, GlobalMut, Word, row_major};
use gpu_std::warp::{self, ALL_LANES, shfl_up_sync};
use gpu_std::{Launch, shared::SharedArray, thread::*};

/// Threads per block of the separable kernels, each owning one word (four
/// samples) of the block's stretch of the row.
pub const STRETCH_THREADS: u32 = 256;

// The separable kernels' own stretch, beside the threads it is made of;
// the type is the one the specialised blur shares.
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
pub(super) fn stretch_per_block(problem: &Problem, shared_bytes: u32) -> Launch {
    let stretch = Stretch::new(problem.channels, problem.radius);
    band_blocks(problem, stretch, STRETCH_THREADS, shared_bytes)
}

/// Shared memory of [`blur_separable`](super::blur_separable): the stretch's column sums.
pub const fn separable_shared_bytes(problem: &Problem) -> u32 {
    stretch_shared_bytes(problem, 1, 0)
}

/// Shared memory of [`blur_running`](super::blur_running): the stretch's column sums, their
/// prefix sums (one more) and one partial sum per warp.
pub const fn running_shared_bytes(problem: &Problem) -> u32 {
    stretch_shared_bytes(problem, 2, 1 + STRETCH_THREADS / warp::SIZE)
}

/// What a thread of a separable kernel knows about its place in the block's
/// stretch, worked out once before it walks down the band.
#[derive(Clone, Copy)]
pub(super) struct Place {
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
/// As for [`blur_separable`](super::blur_separable); `window_sums` ends with a barrier after its
/// last read of `columns`, so that the next row's column sums may
/// overwrite them.
#[inline(always)]
pub(super) unsafe fn walk_band(
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
pub(super) unsafe fn direct_window_sums(
    columns: SharedArray<u32>,
    place: &Place,
    radius: u32,
) -> [u32; 4] {
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
pub(super) unsafe fn prefix_window_sums(
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
    // Over every warp, a constant count: a loop up to `warp_index`, LLVM
    // unrolled eight times, which no block enters, and left one load and
    // one branch a warp (docs/rust-as-fast-as-cuda.md §17). ptxas puts
    // each load under its add's condition, alike for the whole warp.
    for earlier_warp in 0..STRETCH_THREADS / warp::SIZE {
        // SAFETY: every warp wrote its partial before the barrier.
        let partial = unsafe { partials.read(earlier_warp) };
        if earlier_warp < warp_index {
            before += partial;
        }
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
