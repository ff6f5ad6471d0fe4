//! The shuffled blur's walk: warps on their own, each lane one 16-byte
//! line of a row, its column sums two to a register, the windows summed
//! from the neighbouring lanes' column sums by shuffles — no shared memory
//! and no barrier.

use core::num::NonZeroU32;

use super::geometry::{Problem, one_lane_radius, warp_stretches};
use super::pairs::{halves, mean_by, multiplier, pack, pair_of, splat, straddle};
use super::window::clipped_window;
use gpu_std::global::{Global, GlobalMut, Line};
use gpu_std::hint::per_iteration;
use gpu_std::pipeline::{commit, memcpy_async_line, wait_prior};
use gpu_std::shared::SharedArray;
use gpu_std::warp::{self, ALL_LANES, shfl_down_sync, shfl_up_sync};
use gpu_std::{Launch, thread::*};

/// Samples each thread of [`super::blur_shuffled`] owns in a row: one
/// 16-byte line.
pub const LINE: u32 = 16;

/// A line's 32-bit words, and its pairs of samples.
const WORDS: usize = LINE as usize / 4;
const PAIRS: usize = LINE as usize / 2;

/// Threads per block of [`super::blur_shuffled`]: four warps, each on a
/// stretch of its own.
pub const SHUFFLED_THREADS: u32 = 128;

/// Rows each warp of [`super::blur_shuffled`] walks down.
pub const SHUFFLED_BAND_ROWS: u32 = 16;

/// The largest radius [`super::blur_shuffled`] is compiled for: windows
/// whose sums fit in 16 bits, (2r+1)²·255 < 2¹⁶.
pub const SHUFFLED_MAX_RADIUS: u32 = 7;

/// The largest radius [`super::blur_shuffled`] is compiled for at
/// `channels`: up to [`SHUFFLED_MAX_RADIUS`] while a window reaches at most
/// one lane's line (r·C ≤ 16 samples) either side.
pub const fn shuffled_max_radius(channels: u32) -> u32 {
    one_lane_radius(LINE, channels, SHUFFLED_MAX_RADIUS)
}

/// The channel counts [`super::blur_shuffled`] is compiled for: 1 to this.
pub const SHUFFLED_CHANNELS: u32 = 4;

/// Rows [`super::blur_staged`] copies into shared memory ahead of the row
/// whose windows take them in.
pub const STAGED_DEPTH: u32 = 3;

/// The largest radius [`super::blur_staged`] is compiled for.
pub const STAGED_MAX_RADIUS: u32 = 3;

/// Slots of each lane's ring in [`super::blur_staged`]: the 2r + 1 rows
/// of the window, the row entering it and the one after (read a row
/// ahead), and [`STAGED_DEPTH`] rows in flight, to a power of two.
pub const fn ring_slots(radius: u32) -> u32 {
    (2 * radius + 3 + STAGED_DEPTH).next_power_of_two()
}

/// Bytes of launch-sized shared memory [`super::blur_staged`] needs: a
/// ring of 16-byte slots for each thread; none at radius 0, which copies.
pub const fn staged_shared_bytes(radius: u32) -> u32 {
    if radius == 0 || radius > STAGED_MAX_RADIUS {
        0
    } else {
        ring_slots(radius) * SHUFFLED_THREADS * LINE
    }
}

/// The grid of [`shuffled_launch`], with [`staged_shared_bytes`].
pub fn staged_launch(problem: &Problem) -> Launch {
    Launch {
        shared_bytes: staged_shared_bytes(problem.radius),
        ..shuffled_launch(problem)
    }
}

/// Lanes at each end of a warp that only lend their column sums to the
/// others' windows: enough whole lines for the r·C samples a window
/// reaches on either side.
pub const fn halo_lanes(channels: u32, radius: u32) -> u32 {
    (radius * channels).div_ceil(LINE)
}

/// Samples of a row each warp writes.
pub const fn warp_output(channels: u32, radius: u32) -> u32 {
    warp::SIZE.saturating_sub(2 * halo_lanes(channels, radius)) * LINE
}

/// One warp per stretch of [`warp_output`] samples of a band of
/// [`SHUFFLED_BAND_ROWS`] rows, four stretches of one band to a block.
pub fn shuffled_launch(problem: &Problem) -> Launch {
    let output = warp_output(problem.channels, problem.radius).max(LINE);
    warp_stretches(problem, output, SHUFFLED_BAND_ROWS, SHUFFLED_THREADS)
}

/// Samples 2p and 2p + 1 of a line's words, each in a 16-bit half.
#[inline(always)]
fn spread(words: &[u32; WORDS], p: usize) -> u32 {
    pair_of(words[p / 2], p % 2)
}

/// The body of [`super::blur_shuffled`] for `C` channels and radius `R`,
/// both constants, so that every index into a thread's samples, its
/// neighbours' and its windows' is one and all of them live in registers;
/// and of [`super::blur_staged`], given a `ring` to stage rows in.
///
/// # Safety
/// As for [`super::blur_shuffled`], with `C` the image's channel count and
/// `R` the radius; with a `ring`, as for [`super::blur_staged`].
#[inline(always)]
pub(super) unsafe fn walk_band_shuffled<const C: usize, const R: usize>(
    input: Global<u8>,
    output: GlobalMut<u8>,
    (width, height): (u32, u32),
    ring: Option<SharedArray<u8>>,
) {
    // The windows' sums fit in 16 bits up to r = 7: (2r+1)²·255 + its
    // rounding ≤ 57 487.
    const { assert!(R <= SHUFFLED_MAX_RADIUS as usize) };
    let (channels, radius) = (C as u32, R as u32);
    let reach = (R * C) as isize;
    let line = LINE as usize;
    let stride = width * channels;
    let lane = thread_idx_x() % warp::SIZE;
    let stretch = block_idx_x() * (SHUFFLED_THREADS / warp::SIZE) + thread_idx_x() / warp::SIZE;
    let halo_lanes = halo_lanes(channels, radius);
    // This thread's first sample, from the row's start: "negative" in the
    // halo left of the image.
    let start = i64::from(stretch) * i64::from(warp_output(channels, radius))
        + (i64::from(lane) - i64::from(halo_lanes)) * i64::from(LINE);
    let inside_from = (-start).clamp(0, i64::from(LINE)) as usize;
    let inside_to = (i64::from(stride) - start).clamp(0, i64::from(LINE)) as usize;
    let whole = stride.is_multiple_of(LINE) && inside_from == 0 && inside_to == line;
    let writes = (halo_lanes..warp::SIZE - halo_lanes).contains(&lane) && inside_to > 0;
    let first_pixel = start / i64::from(channels);
    let last_pixel = (start + i64::from(LINE) - 1) / i64::from(channels);
    let interior =
        first_pixel >= i64::from(radius) && last_pixel + i64::from(radius) < i64::from(width);
    // Where a line is not whole, whether sample `i` of it lies inside
    // `row`: asked of each row's own bounds, in wrapping arithmetic that
    // LLVM cannot cancel, so that it does not hoist sixteen answers out of
    // the loop over rows and keep them in registers all along it.
    let row_bounds = |row: u32| {
        let row_start = row as usize * stride as usize;
        let first = row_start.wrapping_add(start as usize);
        let row_end = row_start + stride as usize;
        (first, move |i: usize| {
            (row_start..row_end).contains(&first.wrapping_add(i))
        })
    };
    // This thread's samples of `row` four to a word, zero outside the row.
    let read_row = |row: u32| -> [u32; WORDS] {
        let (first, inside) = row_bounds(row);
        let mut words = [0u32; WORDS];
        if whole {
            // SAFETY: the line lies inside the row, on a 16-byte boundary.
            words = unsafe { input.read_line(first) };
        } else {
            // Every index a constant, so that `words` stays in registers.
            for i in 0..line {
                if inside(i) {
                    // SAFETY: the sample lies inside the row.
                    let sample = unsafe { input.read(first + i) };
                    words[i / 4] |= u32::from(sample) << (8 * (i % 4));
                }
            }
        }
        words
    };
    // This thread's samples of `row`, where it writes.
    let write_row = |row: u32, words: Line| {
        let (first, inside) = row_bounds(row);
        if whole {
            // SAFETY: the line lies inside the row, on a 16-byte boundary.
            unsafe { output.write_line(first, words) };
        } else {
            // Where rows do not start on lines, or at the row's end: a
            // sample at a time.
            for i in 0..line {
                if inside(i) {
                    // SAFETY: the sample lies inside the row.
                    unsafe { output.write(first + i, (words[i / 4] >> (8 * (i % 4))) as u8) };
                }
            }
        }
    };

    let first_row = block_idx_y() * SHUFFLED_BAND_ROWS;
    let end_row = first_row.saturating_add(SHUFFLED_BAND_ROWS).min(height);
    if R == 0 {
        // A window of one sample is the sample: the band is copied.
        for row in first_row..end_row {
            if writes {
                write_row(row, read_row(row));
            }
        }
        return;
    }

    // With a ring, a whole line's rows come through shared memory, each
    // lane's own slots, every row of the band's windows copied once,
    // STAGED_DEPTH rows before the walk takes it in: the copies in flight
    // hold no register. A row enters in order, one after the other (the
    // first sums' rows, then each next row below); a row that leaves is
    // read again from its slot, not from the caches.
    let staged = ring.filter(|_| whole);
    let (lowest, beyond) = (
        first_row.saturating_sub(radius),
        end_row.saturating_add(radius + 1).min(height),
    );
    let slots = ring_slots(radius);
    let slot = |row: u32| ((row % slots) * SHUFFLED_THREADS + thread_idx_x()) * LINE;
    // One commit group a row, empty past the band's rows, so that the
    // group of the row entering is always STAGED_DEPTH from the newest.
    let stage = |ring: SharedArray<u8>, row: u32| {
        if row < beyond {
            let (first, _) = row_bounds(row);
            // SAFETY: the line lies inside the row, on a 16-byte
            // boundary; its slot is this lane's, last read before the
            // row STAGED_DEPTH rows back entered.
            unsafe { memcpy_async_line(ring, slot(row), input, Some(first)) };
        }
        commit();
    };
    if let Some(ring) = staged {
        for row in lowest..lowest + STAGED_DEPTH {
            stage(ring, row);
        }
    }
    let enter = |row: u32| match staged {
        Some(ring) => {
            stage(ring, row + STAGED_DEPTH);
            wait_prior::<STAGED_DEPTH>();
            // SAFETY: this lane's slot, its copy landed.
            unsafe { ring.read_line(slot(row)) }
        }
        None => read_row(row),
    };
    let leave = |row: u32| match staged {
        // SAFETY: this lane's slot, which the row filled when it entered
        // and no row since has.
        Some(ring) => unsafe { ring.read_line(slot(row)) },
        None => read_row(row),
    };

    // Every window inside the image's rows divides by one multiply.
    let full_count = (2 * radius + 1) * (2 * radius + 1);
    let full_multiplier = NonZeroU32::new(full_count).map_or(0, multiplier);
    // The column sums of this thread's samples, two to a word: at most
    // (2r+1)·255 = 4335, so that one add moves two columns.
    let mut sums = [0u32; PAIRS];
    for row in first_row.saturating_sub(radius)..first_row.saturating_add(radius + 1).min(height) {
        let entering = enter(row);
        for p in 0..PAIRS {
            sums[p] += spread(&entering, p);
        }
    }
    // The row entering the window below `row`, where there is one.
    let entering_below = |row: u32| {
        if height - row > radius + 1 {
            enter(row + radius + 1)
        } else {
            [0; WORDS]
        }
    };
    // Loaded a row ahead, so that each warp has two rows from memory in
    // flight: the one this row's windows need next, and the next's. (The
    // grid's bands all start inside the image.)
    let mut entering = entering_below(first_row);
    for row in first_row..end_row {
        // The row that leaves the window, read again from the cache, and
        // the row entering it after the next, loaded first so that they
        // arrive while this row's windows are summed.
        let leaving = if row >= radius {
            leave(row - radius)
        } else {
            [0; WORDS]
        };
        let entering_next = if row + 1 < end_row {
            entering_below(row + 1)
        } else {
            [0; WORDS]
        };

        // The column sums the windows reach, a word (two samples) each, by
        // their word's place from this line's first: the lines before it
        // from the lanes before, those after from the lanes after. (At the
        // warp's ends a shuffle returns the lane's own: those lanes write
        // nothing.) Room for r·C up to 32 samples either side.
        const BEFORE: isize = 16;
        let mut words = [0u32; BEFORE as usize + PAIRS + 16];
        let fetch = |k: isize| -> u32 {
            let (lanes, at) = (k.div_euclid(PAIRS as isize), k.rem_euclid(PAIRS as isize));
            let own = sums[at as usize];
            match lanes {
                0 => own,
                ..0 => shfl_up_sync(ALL_LANES, own, (-lanes) as u32),
                _ => shfl_down_sync(ALL_LANES, own, lanes as u32),
            }
        };
        // Shuffles in the words pair p's windows reach that the pairs
        // before it did not, up to sample 2p + r·C and the next, each just
        // before its first use, so that few are in registers at once: for
        // pair 0 every word from the first its windows reach, for each
        // later pair one more.
        let words_for = |p: usize| (2 * p as isize + reach + 1).div_euclid(2) + 1;
        let fetch_for = |p: usize, words: &mut [u32; BEFORE as usize + PAIRS + 16]| {
            if p == 0 {
                for k in (-reach).div_euclid(2)..words_for(0) {
                    words[(k + BEFORE) as usize] = fetch(k);
                }
            } else {
                let k = words_for(p) - 1;
                words[(k + BEFORE) as usize] = fetch(k);
            }
        };
        // The column sums of samples j and j + 1, j from −r·C on: a word,
        // or the halves of two neighbouring words (one `PRMT`).
        let column_pair = |words: &[u32], j: isize| -> u32 {
            let k = j.div_euclid(2) + BEFORE;
            if j % 2 == 0 {
                words[k as usize]
            } else {
                straddle(words[k as usize], words[k as usize + 1])
            }
        };
        // The window sums of samples 2p and 2p + 1: the column sums C
        // apart from −r·C to r·C; past the first few, each from the pair
        // C pairs before it, by two columns leaving and two entering. Two
        // loops, not one with a branch, so that LLVM unrolls each (at r = 8
        // one would pass its size limit, and the arrays would go to local
        // memory).
        let mut windows = [0; PAIRS];
        let c = C as isize;
        let direct = if R <= 2 { PAIRS } else { C };
        for p in 0..direct {
            fetch_for(p, &mut words);
            let at = 2 * p as isize;
            let mut sum = column_pair(&words, at - reach);
            for t in 1..2 * R as isize + 1 {
                sum += column_pair(&words, at - reach + t * c);
            }
            windows[p] = sum;
        }
        for p in direct..PAIRS {
            fetch_for(p, &mut words);
            let at = 2 * p as isize;
            let pair = |j| column_pair(&words, j);
            let kept = windows[p - C] - pair(at - reach - 2 * c) - pair(at - reach - c);
            windows[p] = kept + pair(at + reach - c) + pair(at + reach);
        }

        // The next row's column sums, now that this row's windows have
        // theirs. Each half stays at least zero after each step: no borrow.
        for p in 0..PAIRS {
            sums[p] = sums[p] - spread(&leaving, p) + spread(&entering, p);
        }

        if writes {
            // Windows the image's rows do not clip divide by the full
            // count, the others by their own; in an interior line every
            // window's columns are whole, and the division is one
            // multiply-high.
            let rows = clipped_window(row, radius, height).len() as u32;
            let count = rows * (2 * radius + 1);
            let multiplier = if rows == 2 * radius + 1 {
                full_multiplier
            } else {
                NonZeroU32::new(count).map_or(0, multiplier)
            };
            let mut means: Line = [0; WORDS];
            for w in 0..WORDS {
                let q = if interior {
                    [0, 1, 2, 3].map(|b| {
                        let rounded = windows[2 * w + b / 2] + splat(count / 2);
                        mean_by(halves(rounded)[b % 2], multiplier)
                    })
                } else {
                    // Near the image's left and right edges each window
                    // has its own count of columns: a division each. The
                    // counts are worked out again each row: hoisted out of
                    // the loop, the sixteen of them would hold sixteen
                    // registers along it.
                    let start = per_iteration(start as u64) as i64;
                    [0, 1, 2, 3].map(|b| {
                        let i = 4 * w + b;
                        let sample = (start + i as i64).max(0).min(i64::from(stride) - 1);
                        let columns = clipped_window(sample as u32 / channels, radius, width);
                        let count = rows * columns.len() as u32;
                        let sum = halves(windows[i / 2])[i % 2] + count / 2;
                        NonZeroU32::new(count).map_or(0, |count| sum / count)
                    })
                };
                means[w] = pack(q);
            }
            write_row(row, means);
        }
        entering = entering_next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes spread into 16-bit halves, a line's in order.
    #[test]
    fn pairs_hold_a_lines_samples() {
        let words = [0x0403_0201, 0x0807_0605, 0x0c0b_0a09, 0x100f_0e0d];
        let pairs: Vec<[u32; 2]> = (0..PAIRS).map(|p| halves(spread(&words, p))).collect();
        let samples: Vec<u32> = pairs.into_iter().flatten().collect();
        assert_eq!(samples, (1..=16).collect::<Vec<_>>());
    }
}
