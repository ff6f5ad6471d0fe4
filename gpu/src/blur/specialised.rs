//! The specialised blur's body: compiled once per channel count, four
//! whole pixels a thread.

// A thread's samples in loops over an index: LLVM unrolls them and keeps
// the arrays in registers (docs/rust-as-fast-as-cuda.md §6).
#![allow(clippy::needless_range_loop)]

use super::geometry::{BAND_ROWS, Problem, Stretch, band_blocks};
use super::window::{Reciprocal, clipped_window};
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::warp::{self, ALL_LANES, shfl_up_sync};
use gpu_std::{Launch, shared::SharedArray, thread::*};

/// Threads per block of [`blur_specialised`](super::blur_specialised).
pub const SPECIALISED_THREADS: u32 = 256;

/// Whole pixels each thread of [`blur_specialised`](super::blur_specialised) owns: four, so that its
/// samples fill whole words at every channel count. Eight, with half the
/// threads, measured up to 1.5× slower on an H100: 112 registers a thread where
/// four need 80, and so fewer warps to hide each other's latency.
pub const THREAD_PIXELS: u32 = 4;

/// The channel counts [`blur_specialised`](super::blur_specialised) is compiled for: 1 to this.
pub const SPECIALISED_CHANNELS: u32 = 4;

/// The most samples and words one thread of [`blur_specialised`](super::blur_specialised) owns.
const MOST_SAMPLES: usize = (THREAD_PIXELS * SPECIALISED_CHANNELS) as usize;
const MOST_WORDS: usize = MOST_SAMPLES / 4;

/// The warps of a block of [`blur_specialised`](super::blur_specialised).
const WARPS: usize = (SPECIALISED_THREADS / warp::SIZE) as usize;

/// The stretch of [`blur_specialised`](super::blur_specialised): [`THREAD_PIXELS`] pixels a thread,
/// with a halo of at least `radius + 1` rounded up to whole threads, so
/// that every thread's pixels are all halo or all output.
pub const fn specialised_stretch(radius: u32) -> Option<Stretch> {
    Stretch::with_halo(
        SPECIALISED_THREADS * THREAD_PIXELS,
        THREAD_PIXELS,
        radius.saturating_add(1),
    )
}

/// Shared memory of [`blur_specialised`](super::blur_specialised): the prefix sums of the stretch's
/// column sums and, for each warp, its channels' totals. More than any GPU
/// has for a channel count it is not compiled for, or a radius whose halos
/// leave no output, which the host refuses.
pub const fn specialised_shared_bytes(problem: &Problem) -> u32 {
    match (specialised_stretch(problem.radius), problem.channels) {
        (Some(stretch), 1..=SPECIALISED_CHANNELS) => {
            (stretch.pixels + SPECIALISED_THREADS / warp::SIZE) * problem.channels * 4
        }
        _ => u32::MAX,
    }
}

/// One block of [`SPECIALISED_THREADS`] per stretch of a band of rows.
pub(super) fn specialised_launch(problem: &Problem) -> Launch {
    let stretch = specialised_stretch(problem.radius);
    band_blocks(
        problem,
        stretch,
        SPECIALISED_THREADS,
        specialised_shared_bytes(problem),
    )
}

/// The body of [`blur_specialised`](super::blur_specialised) for images of `C` channels: with `C` a
/// constant, every loop over a thread's samples unrolls, every index is a
/// constant and every array lives in registers.
///
/// # Safety
/// As for [`blur_specialised`](super::blur_specialised), with `C` the image's channel count.
#[inline(always)]
pub(super) unsafe fn walk_band_specialised<const C: usize>(
    input: Global<u8>,
    output: GlobalMut<u8>,
    (width, height, radius): (u32, u32, u32),
) {
    let Some(stretch) = specialised_stretch(radius) else {
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
        // ptxas cannot tell that the warp has come back together after
        // the edge threads' byte loads above, and would guard every
        // shuffle below with a check and a fallback for a diverged warp:
        // 23 more instructions a row. The barrier tells it.
        warp::syncwarp(ALL_LANES);
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
        // The earlier warps' totals, four warps' at a time: C lines of
        // four words, read whole. A loop over each earlier warp instead
        // ran a load and a branch a word.
        for group in 0..WARPS / 4 {
            if 4 * group < warp_index as usize {
                for line in 0..C {
                    // SAFETY: every warp wrote its totals before the
                    // barrier; they start on a line, after the stretch's
                    // whole lines of prefix sums.
                    let words = unsafe { warp_totals.read_line((4 * (group * C + line)) as u32) };
                    for j in 0..4 {
                        let (earlier_warp, k) =
                            (4 * group + (4 * line + j) / C, (4 * line + j) % C);
                        if earlier_warp < warp_index as usize {
                            before[k] += words[j];
                        }
                    }
                }
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
