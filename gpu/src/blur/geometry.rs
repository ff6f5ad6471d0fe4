//! Where the blur kernels' blocks work: the problem every launch contract
//! is a function of, and the bands of rows and the stretches of them that
//! a block of the separable kernels walks down.

use gpu_std::Launch;

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
