//! Where the blur kernels' blocks work: the problem every launch contract
//! is a function of, the bands of rows and the stretches of them that a
//! block of the separable kernels walks down, and those a warp of the
//! shuffled and in-flight kernels walks down alone.

use gpu_std::{Launch, warp};

/// What every blur kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub width: u32,
    pub height: u32,
    pub channels: u32,
    pub radius: u32,
}

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
    /// `pixels` pixels with a halo of at least `halo` rounded up to whole
    /// `steps`; `None` where the halos leave no output.
    pub(super) const fn with_halo(pixels: u32, step: u32, halo: u32) -> Option<Self> {
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

/// One block of `threads` per `stretch` of a band of [`BAND_ROWS`] rows;
/// without a stretch, the `shared_bytes` the host refuses decide.
pub(super) fn band_blocks(
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
        cluster: (1, 1, 1),
    }
}

/// One warp per stretch of `output` samples of a band of `band_rows` rows,
/// the `threads / 32` warps of a block on stretches of one band, so that a
/// band's rows are the same for the whole block (ptxas keeps them in the
/// uniform datapath's registers, not in each thread's); no shared memory.
/// The grid of the walks whose warps work alone.
pub(super) fn warp_stretches(
    problem: &Problem,
    output: u32,
    band_rows: u32,
    threads: u32,
) -> Launch {
    let samples = problem.width.saturating_mul(problem.channels);
    Launch {
        grid: (
            samples.div_ceil(output).div_ceil(threads / warp::SIZE),
            problem.height.div_ceil(band_rows),
            1,
        ),
        block: (threads, 1, 1),
        shared_bytes: 0,
        cluster: (1, 1, 1),
    }
}

/// The largest radius at `channels` of a walk whose lanes own `samples`
/// samples of a row and which is compiled up to radius `most`: while a
/// window reaches no further than the neighbouring lanes' samples (r·C ≤
/// `samples` either side).
pub(super) const fn one_lane_radius(samples: u32, channels: u32, most: u32) -> u32 {
    let reach = samples / channels;
    if reach < most { reach } else { most }
}
