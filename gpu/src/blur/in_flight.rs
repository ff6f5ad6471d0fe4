//! The in-flight blur's walk: a warp's whole band of rows loaded before it
//! sums the first, each lane one word of each row, the column sums two to
//! a register and the windows summed from the neighbouring lanes' column
//! sums by shuffles.

use core::num::NonZeroU32;

use super::geometry::{Problem, one_lane_radius, warp_stretches};
use super::pairs::{halves, mean_by, multiplier, pack, pair_of, splat, straddle};
use super::window::clipped_window;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::warp::{self, ALL_LANES, shfl_down_sync, shfl_up_sync};
use gpu_std::{Launch, thread::*};

/// Samples each lane of [`super::blur_in_flight`] owns in a row: one word.
pub const WORD: u32 = 4;

/// Threads per block of [`super::blur_in_flight`]: four warps, each on a
/// stretch of its own.
pub const IN_FLIGHT_THREADS: u32 = 128;

/// Rows each warp of [`super::blur_in_flight`] writes; it loads them and
/// the 2r rows its windows reach beyond them before it sums any. With 16,
/// LLVM leaves the walk down them a loop (its body past the unrolling
/// limit), and the rows it indexes go to local memory.
pub const IN_FLIGHT_BAND_ROWS: u32 = 8;

/// The channel counts [`super::blur_in_flight`] is compiled for: 1 to this.
pub const IN_FLIGHT_CHANNELS: u32 = 4;

/// The largest radius [`super::blur_in_flight`] is compiled for: at one
/// channel and r = 3, LLVM leaves the walk down a band a loop (its body,
/// seven columns a window, past the unrolling limit), and the rows it
/// indexes go to local memory.
pub const IN_FLIGHT_MAX_RADIUS: u32 = 2;

/// The largest radius [`super::blur_in_flight`] is compiled for at
/// `channels`: up to [`IN_FLIGHT_MAX_RADIUS`] while a window reaches at
/// most the neighbouring lanes' words (r·C ≤ 4 samples either side).
pub const fn in_flight_max_radius(channels: u32) -> u32 {
    one_lane_radius(WORD, channels, IN_FLIGHT_MAX_RADIUS)
}

/// Samples of a row each warp of [`super::blur_in_flight`] writes: every
/// lane's word but those of the lanes at its ends, which only lend their
/// column sums.
pub const IN_FLIGHT_WARP_OUTPUT: u32 = (warp::SIZE - 2) * WORD;

/// The most rows a lane loads: a band and the rows the largest radius
/// reaches above and below it.
const MOST_ROWS: usize = (IN_FLIGHT_BAND_ROWS + 2 * IN_FLIGHT_MAX_RADIUS) as usize;

/// One warp per stretch of [`IN_FLIGHT_WARP_OUTPUT`] samples of a band of
/// [`IN_FLIGHT_BAND_ROWS`] rows, four stretches of one band to a block.
pub fn in_flight_launch(problem: &Problem) -> Launch {
    warp_stretches(
        problem,
        IN_FLIGHT_WARP_OUTPUT,
        IN_FLIGHT_BAND_ROWS,
        IN_FLIGHT_THREADS,
    )
}

/// The body of [`super::blur_in_flight`] for `C` channels and radius `R`,
/// both constants, so that every index into a lane's rows, its
/// neighbours' column sums and its windows is one and all of them live in
/// registers.
///
/// # Safety
/// As for [`super::blur_in_flight`], with `C` the image's channel count and
/// `R` the radius.
#[inline(always)]
pub(super) unsafe fn walk_band_in_flight<const C: usize, const R: usize>(
    input: Global<u8>,
    output: GlobalMut<u8>,
    (width, height): (u32, u32),
) {
    // A window reaches the neighbouring lanes' words and no further, and
    // its sum fits in 16 bits: (2r+1)²·255 + its rounding ≤ 6 387.
    const { assert!(R * C <= WORD as usize && R <= IN_FLIGHT_MAX_RADIUS as usize) };
    let (channels, radius) = (C as u32, R as u32);
    let reach = (R * C) as isize;
    let stride = width * channels;
    let lane = thread_idx_x() % warp::SIZE;
    let stretch = block_idx_x() * (IN_FLIGHT_THREADS / warp::SIZE) + thread_idx_x() / warp::SIZE;
    // This lane's first sample, from the row's start: "negative" for the
    // first lane of the first stretch, left of the image.
    let start = i64::from(stretch) * i64::from(IN_FLIGHT_WARP_OUTPUT)
        + (i64::from(lane) - 1) * i64::from(WORD);
    let whole =
        stride.is_multiple_of(WORD) && start >= 0 && start + i64::from(WORD) <= i64::from(stride);
    let writes = (1..warp::SIZE - 1).contains(&lane) && start < i64::from(stride);
    let first_pixel = start / i64::from(channels);
    let last_pixel = (start + i64::from(WORD) - 1) / i64::from(channels);
    let interior =
        first_pixel >= i64::from(radius) && last_pixel + i64::from(radius) < i64::from(width);
    // Where this lane's samples of `row` start, and whether its sample `i`
    // lies inside the row.
    let row_bounds = |row: u32| {
        let row_start = row as usize * stride as usize;
        let first = row_start.wrapping_add(start as usize);
        let row_end = row_start + stride as usize;
        (first, move |i: usize| {
            (row_start..row_end).contains(&first.wrapping_add(i))
        })
    };
    // This lane's four samples of `row` as a word, zero outside the image:
    // where they are a whole word, loaded from the nearest row inside the
    // image and dropped where `row` lies outside, so that no branch
    // separates a band's loads and they all go out together; elsewhere a
    // sample at a time.
    let read_whole = |row: u32| -> u32 {
        let (first, _) = row_bounds(row.min(height - 1));
        // SAFETY: the word lies inside that row, on a 4-byte boundary.
        let word = u32::from_le_bytes(unsafe { input.read_word(first) });
        if row < height { word } else { 0 }
    };
    let read_part = |row: u32| -> u32 {
        let (first, inside) = row_bounds(row);
        let mut word = 0;
        for i in 0..WORD as usize {
            if row < height && inside(i) {
                // SAFETY: the sample lies inside the row.
                word |= u32::from(unsafe { input.read(first + i) }) << (8 * i);
            }
        }
        word
    };
    let read_row = |row: u32| {
        if whole {
            read_whole(row)
        } else {
            read_part(row)
        }
    };
    // This lane's samples of `row`, inside the image.
    let write_row = |row: u32, word: u32| {
        let (first, inside) = row_bounds(row);
        if whole {
            // SAFETY: the word lies inside the row, on a 4-byte boundary.
            unsafe { output.write_word(first, word.to_le_bytes()) };
        } else {
            for i in 0..WORD as usize {
                if inside(i) {
                    // SAFETY: the sample lies inside the row.
                    unsafe { output.write(first + i, (word >> (8 * i)) as u8) };
                }
            }
        }
    };

    let first_row = block_idx_y() * IN_FLIGHT_BAND_ROWS;
    let band = IN_FLIGHT_BAND_ROWS as usize;
    if R == 0 {
        // A window of one sample is the sample: the band is copied.
        for i in 0..IN_FLIGHT_BAND_ROWS {
            let row = first_row + i;
            if writes && row < height {
                write_row(row, read_row(row));
            }
        }
        return;
    }

    // Every row the band's windows take in, from r above the band to r
    // below it, loaded before any is summed: 8 + 2r loads of each lane in
    // flight at once, where a walk that loads one or three rows ahead has
    // two or four. (The grid's bands all start inside the image; rows
    // above or below it are zeros.)
    let band_rows = |read: &dyn Fn(u32) -> u32| -> [u32; MOST_ROWS] {
        core::array::from_fn(|i| {
            if i < band + 2 * R {
                read(first_row.wrapping_sub(radius).wrapping_add(i as u32))
            } else {
                0
            }
        })
    };
    let rows = if whole {
        band_rows(&read_whole)
    } else {
        band_rows(&read_part)
    };

    // Every window inside the image's rows divides by one multiply.
    let full_count = (2 * radius + 1) * (2 * radius + 1);
    let full_multiplier = NonZeroU32::new(full_count).map_or(0, multiplier);
    // The pairs of column sums the windows reach, by their place k from
    // this lane's first pair: the left lane's two (k = −2, −1), its own,
    // and the right lane's two (k = 2, 3). (At the warp's ends a shuffle
    // returns the lane's own: those lanes write nothing.)
    let reached = (-reach).div_euclid(2)..(3 + reach).div_euclid(2) + 1;
    // The walk down the band: each row's two window sums, handed to
    // `finish` with the row.
    let walk = |finish: &dyn Fn(u32, [u32; 2])| {
        // The column sums of this lane's samples 0 and 1, and 2 and 3,
        // over the window's rows: at most (2r+1)·255 each.
        let mut sums = [0u32; 2];
        for row in &rows[..2 * R] {
            for (h, sum) in sums.iter_mut().enumerate() {
                *sum += pair_of(*row, h);
            }
        }
        for i in 0..band {
            // Row + r enters the window.
            for (h, sum) in sums.iter_mut().enumerate() {
                *sum += pair_of(rows[i + 2 * R], h);
            }
            let mut pairs = [0u32; 6];
            for k in reached.clone() {
                let own = sums[k.rem_euclid(2) as usize];
                pairs[(k + 2) as usize] = match k {
                    ..0 => shfl_up_sync(ALL_LANES, own, 1),
                    0..2 => own,
                    _ => shfl_down_sync(ALL_LANES, own, 1),
                };
            }
            // The column sums of samples j and j + 1, j from −r·C on: a
            // pair, or the halves of two neighbouring pairs.
            let column_pair = |j: isize| {
                let k = (j.div_euclid(2) + 2) as usize;
                if j % 2 == 0 {
                    pairs[k]
                } else {
                    straddle(pairs[k], pairs[k + 1])
                }
            };
            // The window sums of samples 2p and 2p + 1: the column sums C
            // apart from −r·C to r·C.
            let windows = core::array::from_fn(|p| {
                let at = 2 * p as isize - reach;
                (0..2 * R as isize + 1)
                    .map(|t| column_pair(at + t * C as isize))
                    .sum()
            });
            finish(first_row + i as u32, windows);
            // Row − r leaves the window. Each half stays at least zero: no
            // borrow.
            for (h, sum) in sums.iter_mut().enumerate() {
                *sum -= pair_of(rows[i], h);
            }
        }
    };
    // The common case, decided once for the band: a whole word whose
    // windows' columns and rows all lie inside the image. Every window
    // then divides by the full count, one multiply-high, and a row's means
    // are one store; the walk is compiled again for it, without the
    // others' bookkeeping.
    let inside_rows = first_row >= radius && height - first_row >= IN_FLIGHT_BAND_ROWS + radius;
    if whole && interior && inside_rows {
        walk(&|row, windows| {
            if writes {
                let rounded = windows.map(|sums| sums + splat(full_count / 2));
                let means = core::array::from_fn(|b| {
                    mean_by(halves(rounded[b / 2])[b % 2], full_multiplier)
                });
                write_row(row, pack(means));
            }
        });
    } else {
        walk(&|row, windows| {
            if writes && row < height {
                // Windows the image's rows clip divide by their own count;
                // near the image's left and right edges each window has
                // its own count of columns too, and a division each.
                let rows_in = clipped_window(row, radius, height).len() as u32;
                let means = core::array::from_fn(|b| {
                    let sample = (start + b as i64).clamp(0, i64::from(stride) - 1);
                    let columns = clipped_window(sample as u32 / channels, radius, width);
                    let count = rows_in * columns.len() as u32;
                    let sum = halves(windows[b / 2])[b % 2] + count / 2;
                    NonZeroU32::new(count).map_or(0, |count| sum / count)
                });
                write_row(row, pack(means));
            }
        });
    }
}
