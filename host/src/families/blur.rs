//! Box blur of 8-bit images with interleaved channels: the family's shapes,
//! inputs and reference, and a device copy of the image, which moves the
//! same bytes and does no arithmetic, as its baseline.

use std::fmt;
use std::ops::RangeInclusive;

use clap::{Arg, ArgMatches, value_parser};
use gpu_host::backend::{Backend, Buffer, checked_launch};
use gpu_std::Kernel;
use kernels::blur::{Args, KERNELS, MAX_RADIUS, Problem};
use rand::distr::Uniform;
use rand::{Rng, rngs::SmallRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::family::{
    Baseline, Bound, CpuOutput, DEVICE_COPY, Family, Kernels, Library, Op, Parameter, Shape,
    SizeSyntax, Tools, Work, dims, expect_len, indexable, nonzero,
};
use crate::npp::Npp;
use crate::reference::{self, Expected};
use crate::verify::{Comparison, compare, random_vec};

/// An image of `width × height` pixels of `channels` samples each, blurred
/// over a (2·radius+1)² window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlurShape {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
    pub radius: u32,
}

impl BlurShape {
    pub fn new(width: usize, height: usize, channels: usize, radius: u32) -> Self {
        Self {
            width,
            height,
            channels,
            radius,
        }
    }

    /// The number of samples, once every dimension is non-zero and every
    /// index fits in `u32`.
    pub fn checked_len(self) -> Result<usize> {
        let width = nonzero("image width", self.width)?;
        let height = nonzero("image height", self.height)?;
        let channels = nonzero("image channels", self.channels)?;
        indexable("image (width×height×channels)", &[width, height, channels])
    }
}

impl fmt::Display for BlurShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self {
            width,
            height,
            channels,
            radius,
        } = self;
        write!(f, "{width}×{height}×{channels} r={radius}")
    }
}

impl Shape for BlurShape {
    fn side(&self) -> f64 {
        (self.width as f64 * self.height as f64).sqrt()
    }

    fn short(&self) -> String {
        if self.width == self.height {
            self.width.to_string()
        } else {
            format!("{}×{}", self.width, self.height)
        }
    }

    fn parameter(&self) -> Option<Parameter> {
        let plural = if self.channels == 1 { "" } else { "s" };
        Some(Parameter {
            name: "radius r (the window is (2r+1)×(2r+1))",
            value: f64::from(self.radius),
            series: format!("{} channel{plural}", self.channels),
        })
    }
}

/// The largest radius `kernel` accepts for images of `channels` channels:
/// the window sum's limit, or less where its shared memory grows with the
/// radius past what a block gets, or where its halos would leave a block
/// nothing to write.
pub fn max_radius(kernel: &Kernel<Args, Problem>, channels: u32) -> u32 {
    last_fit(0..=MAX_RADIUS, |radius| fits(kernel, channels, radius))
}

/// The most channels `kernel` blurs: where a grid layer per channel runs
/// out, or past the channel counts a kernel is compiled for.
pub fn max_channels(kernel: &Kernel<Args, Problem>) -> u32 {
    last_fit(1..=u32::MAX - 1, |channels| fits(kernel, channels, 0))
}

/// Whether `kernel` can be launched on a 1×1 image of `channels` channels
/// at `radius`: the limits that do not depend on the image's size, and
/// the instances a kernel generic over them is compiled for.
fn fits(kernel: &Kernel<Args, Problem>, channels: u32, radius: u32) -> bool {
    let problem = Problem {
        width: 1,
        height: 1,
        channels,
        radius,
    };
    let instance = kernel.entry(|name| match name {
        "channels" => Some(channels),
        "radius" => Some(radius),
        _ => None,
    });
    checked_launch(kernel, &problem).is_ok() && instance.is_some()
}

/// The last value of `range` for which `fits` holds, where it holds up to
/// some value and fails after it (what a kernel needs only grows with the
/// radius and the channels); where it fails at once, the one before the
/// range, or 0.
fn last_fit(range: RangeInclusive<u32>, fits: impl Fn(u32) -> bool) -> u32 {
    let (mut fits_up_to, mut fails_from) = (*range.start(), *range.end() + 1);
    if !fits(fits_up_to) {
        return fits_up_to.saturating_sub(1);
    }
    while fails_from - fits_up_to > 1 {
        let middle = fits_up_to + (fails_from - fits_up_to) / 2;
        if fits(middle) {
            fits_up_to = middle;
        } else {
            fails_from = middle;
        }
    }
    fits_up_to
}

pub struct Buffers<B: Backend> {
    pub input: Buffer<B, u8>,
    pub output: Buffer<B, u8>,
}

/// NPP's box filter (`nppiFilterBoxBorder_8u_C{1,3,4}R`), the blurs'
/// baseline: what a CUDA C++ user calls. It replicates the image's edge
/// where ours clip the window, so it is timed, not compared.
pub const NPP_BOX_FILTER: &str = "npp_box_filter";

/// The integer adds a box blur needs per output sample, whatever the
/// radius: a window's sum follows from its neighbour's with one add and
/// one subtract down the columns and one of each along the row, as the
/// running-sum blur does. The roofline counts these, not the (2r+1)² adds
/// of the definition, which the fast kernels never execute: counted so,
/// they placed kernels at up to 2300% of a roofline. At 2 adds per byte
/// moved, far below any GPU's ridge point, the blur's roof is the memory's:
/// its fraction of the roofline is its share of the copy bandwidth.
pub const ADDS_PER_SAMPLE: f64 = 4.0;

pub struct Blur;

impl Family for Blur {
    const NAME: &'static str = "blur";
    const SIZE: SizeSyntax = SizeSyntax {
        value_name: "WxH",
        names: &["width", "height"],
        help: "Blur image WIDTH×HEIGHT, or one number for a square",
        on_gpu: &[8192],
        emulated: &[100, 75],
        sweep: "1024,2048,4096,8192",
    };
    const BOUND: Bound = Bound::Memory;
    const SQUARE_AXIS: &'static str = "n (the image is n×n pixels)";

    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    type Shape = BlurShape;
    /// The image's samples.
    type Inputs = Vec<u8>;
    type Buffers<B: Backend> = Buffers<B>;

    /// Lists, so that one run or bench covers several; the bench's defaults
    /// sweep the radius at 1 and 3 channels.
    fn options(sweep: bool) -> Vec<Arg> {
        let (channels, radii) = if sweep {
            ("3,1", "3,1,8,32")
        } else {
            ("3", "3")
        };
        vec![
            Arg::new("channels")
                .long("channels")
                .help("Blur channels: 1 for grayscale, 3 for RGB; comma-separated for several")
                .value_parser(value_parser!(usize))
                .value_delimiter(',')
                .default_value(channels),
            Arg::new("radius")
                .long("radius")
                .help(
                    "Blur radius: the window is (2r+1)×(2r+1); comma-separated for several \
                     (a bench plots its throughput against size at the first radius and \
                     channel count, and its time against every radius at its largest size)",
                )
                .value_parser(value_parser!(u32))
                .value_delimiter(',')
                .default_value(radii),
        ]
    }

    fn shape(sizes: &[usize], options: &ArgMatches) -> BlurShape {
        Self::shapes(sizes, options)[0]
    }

    /// Every channel count at every radius, channels outermost.
    fn shapes(sizes: &[usize], options: &ArgMatches) -> Vec<BlurShape> {
        let [width, height] = dims(sizes);
        let radii: Vec<u32> = options
            .get_many("radius")
            .expect("the option has a default")
            .copied()
            .collect();
        options
            .get_many::<usize>("channels")
            .expect("the option has a default")
            .flat_map(|&channels| {
                radii
                    .iter()
                    .map(move |&radius| BlurShape::new(width, height, channels, radius))
            })
            .collect()
    }

    fn problem(shape: BlurShape) -> Result<Problem> {
        shape.checked_len()?;
        Ok(Problem {
            width: shape.width as u32,
            height: shape.height as u32,
            channels: shape.channels as u32,
            radius: shape.radius,
        })
    }

    /// The radii and channel counts `kernel` is compiled or sized for.
    fn made_for(kernel: &Kernel<Args, Problem>, shape: BlurShape) -> Result<()> {
        check_channels(kernel, shape)?;
        check_radius(kernel, shape)
    }

    /// The image at radius 0 first, then the radius, for a message that
    /// names what is wrong.
    fn check(kernel: &Kernel<Args, Problem>, shape: BlurShape) -> Result<()> {
        check_channels(kernel, shape)?;
        checked_launch(kernel, &Self::problem(BlurShape { radius: 0, ..shape })?)?;
        check_radius(kernel, shape)?;
        checked_launch(kernel, &Self::problem(shape)?)?;
        Ok(())
    }

    fn test_shapes() -> Vec<BlurShape> {
        let largest_everywhere = KERNELS
            .iter()
            .map(|kernel| max_radius(kernel, 1))
            .min()
            .unwrap_or(0);
        [
            (1, 1, 1, 0),
            (1, 1, 1, 1),
            (17, 31, 1, 1),
            (16, 16, 3, 2),
            (33, 16, 3, 3),
            (100, 37, 3, 7),
            (15, 250, 1, 20),
            (40, 41, 1, largest_everywhere),
            (300, 200, 3, 1),
            (1001, 3, 4, 5),
            // Several stretches and bands of the separable kernels, rows on
            // words and not.
            (600, 130, 4, 5),
            (1001, 70, 3, 2),
            // Several stretches of the specialised kernel.
            (2100, 66, 2, 3),
        ]
        .map(|(width, height, channels, radius)| BlurShape::new(width, height, channels, radius))
        .to_vec()
    }

    /// [`ADDS_PER_SAMPLE`] integer adds per output sample, whatever the
    /// radius; the fewest bytes are every sample read once and written
    /// once.
    fn work(shape: BlurShape) -> Work {
        let samples = (shape.width * shape.height * shape.channels) as f64;
        Work {
            op: Op::IntAdd,
            ops: ADDS_PER_SAMPLE * samples,
            bytes: 2.0 * samples,
            output_bytes: samples,
        }
    }

    /// The CPU reference's and the naive kernel's: (2r+1)² adds per
    /// output sample, windows clipped at the border counted whole.
    fn cost(shape: BlurShape) -> f64 {
        let samples = (shape.width * shape.height * shape.channels) as f64;
        f64::from(2 * shape.radius + 1).powi(2) * samples
    }

    /// The image twice (the input and the emulator's), the output's
    /// reference as bytes and as f64 values with their tolerances, and the
    /// output and the emulator's output.
    fn host_bytes(shape: BlurShape) -> f64 {
        20.0 * (shape.width * shape.height * shape.channels) as f64
    }

    /// Samples from 0..=254, so that the poison 255 can never be a correct
    /// output.
    fn inputs(shape: BlurShape, rng: &mut SmallRng) -> Result<Vec<u8>> {
        let len = shape.checked_len()?;
        if shape.radius > MAX_RADIUS {
            return Err(Error::RadiusTooLarge {
                kernel: "any blur kernel",
                channels: shape.channels,
                radius: shape.radius,
                max: MAX_RADIUS,
            });
        }
        let samples = Uniform::new_inclusive(0u8, 254).expect("a valid range");
        Ok(random_vec(len, samples, rng.random()))
    }

    fn reference(shape: BlurShape, input: &Vec<u8>) -> Expected {
        let image = [shape.width, shape.height, shape.channels];
        let values: Vec<f64> = reference::blur(input, image, shape.radius as usize)
            .into_iter()
            .map(f64::from)
            .collect();
        Expected {
            tolerance: vec![0.0; values.len()],
            values,
        }
    }

    fn upload<B: Backend>(backend: &B, _: BlurShape, input: &Vec<u8>) -> Result<Buffers<B>> {
        Ok(Buffers {
            input: backend.upload("input image", input)?,
            output: backend.alloc("output image", input.len())?,
        })
    }

    fn prepare<B: Backend>(
        backend: &B,
        _: &Kernel<Args, Problem>,
        _: &Vec<u8>,
        buffers: &mut Buffers<B>,
    ) -> Result<()> {
        Ok(backend.poison(&mut buffers.output)?)
    }

    fn launch<B: Backend>(
        backend: &B,
        kernel: &Kernel<Args, Problem>,
        shape: BlurShape,
        buffers: &mut Buffers<B>,
    ) -> Result<()> {
        check_channels(kernel, shape)?;
        check_radius(kernel, shape)?;
        let len = shape.checked_len()?;
        expect_len("input image", len, backend.len(&buffers.input))?;
        expect_len("output image", len, backend.len(&buffers.output))?;
        let problem = Self::problem(shape)?;
        let Problem {
            width,
            height,
            channels,
            radius,
        } = problem;
        let Buffers { input, output } = buffers;
        // SAFETY: both images hold width×height×channels samples, in
        // buffers of their own; every index fits in u32 and the radius is
        // within the kernel's limit (checked above).
        unsafe {
            let args = (&*input, output, width, height, channels, radius);
            Ok(backend.launch(kernel, &problem, args)?)
        }
    }

    fn compare<B: Backend>(
        backend: &B,
        buffers: &Buffers<B>,
        expected: &Expected,
    ) -> Result<Comparison> {
        Ok(compare(&backend.download(&buffers.output)?, expected))
    }

    const CPU: &'static str = "separable running sums, every core (rayon)";

    /// No crate does a clipped box blur, so the baseline is ours, written
    /// for speed where the reference is written for clarity: each row's
    /// window sums by a running sum, then each output row as the sum of
    /// its window's row sums, rows in parallel.
    fn cpu(shape: BlurShape, input: &Vec<u8>) -> CpuOutput {
        let BlurShape {
            width,
            height,
            channels,
            ..
        } = shape;
        let radius = shape.radius as usize;
        let stride = width * channels;
        let clip = |centre: usize, len: usize| {
            centre.saturating_sub(radius)..(centre + radius + 1).min(len)
        };
        let mut row_sums = vec![0u32; input.len()];
        row_sums
            .par_chunks_mut(stride)
            .zip(input.par_chunks(stride))
            .for_each(|(sums, row)| {
                for channel in 0..channels {
                    let sample = |x: usize| u32::from(row[x * channels + channel]);
                    let mut sum: u32 = clip(0, width).map(sample).sum();
                    for x in 0..width {
                        sums[x * channels + channel] = sum;
                        if x + radius + 1 < width {
                            sum += sample(x + radius + 1);
                        }
                        if x >= radius {
                            sum -= sample(x - radius);
                        }
                    }
                }
            });
        let mut output = vec![0u8; input.len()];
        output
            .par_chunks_mut(stride)
            .enumerate()
            .for_each(|(y, out)| {
                let rows = clip(y, height);
                let mut sums = vec![0u32; stride];
                for source in row_sums[rows.start * stride..rows.end * stride].chunks(stride) {
                    for (sum, add) in sums.iter_mut().zip(source) {
                        *sum += add;
                    }
                }
                for (i, (out, &sum)) in out.iter_mut().zip(&sums).enumerate() {
                    let count = (clip(i / channels, width).len() * rows.len()) as u64;
                    // Round half up: ⌊sum / count + ½⌋, in u64 since 2·sum
                    // may not fit u32 at the largest radius.
                    *out = ((2 * u64::from(sum) + count) / (2 * count)) as u8;
                }
            });
        CpuOutput::U8(output)
    }

    fn baselines(_: &[&Kernel<Args, Problem>]) -> Vec<Baseline<Self>> {
        vec![
            Baseline {
                name: NPP_BOX_FILTER,
                needs: Some(Library::Npp),
                arithmetic: true,
                supports: |shape| Npp::supports(shape.channels),
                run: |tools: &Tools<'_>, shape, buffers| {
                    let npp = tools.npp.ok_or(Error::NoNpp)?;
                    let image = (shape.width, shape.height, shape.channels);
                    npp.box_filter(&buffers.input, &mut buffers.output, image, shape.radius)
                },
            },
            Baseline {
                name: DEVICE_COPY,
                needs: None,
                arithmetic: false,
                supports: |_| true,
                run: |tools: &Tools<'_>, _, buffers| {
                    Ok(tools.gpu.copy(&buffers.input, &mut buffers.output)?)
                },
            },
        ]
    }

    fn baseline_of(_: &Kernel<Args, Problem>) -> Option<&'static str> {
        Some(NPP_BOX_FILTER)
    }
}

/// Rejects a radius `kernel` cannot take for `shape`'s channels.
pub fn check_radius(kernel: &Kernel<Args, Problem>, shape: BlurShape) -> Result<()> {
    let radius = shape.radius;
    let max = max_radius(kernel, u32::try_from(shape.channels).unwrap_or(u32::MAX));
    if radius > max {
        return Err(Error::RadiusTooLarge {
            kernel: kernel.name,
            channels: shape.channels,
            radius,
            max,
        });
    }
    Ok(())
}

/// Rejects more channels than `kernel` blurs.
pub fn check_channels(kernel: &Kernel<Args, Problem>, shape: BlurShape) -> Result<()> {
    let max = max_channels(kernel);
    if shape.channels > max as usize {
        return Err(Error::TooManyChannels {
            kernel: kernel.name,
            channels: shape.channels,
            max,
        });
    }
    Ok(())
}
