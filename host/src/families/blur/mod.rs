//! Box blur of 8-bit images with interleaved channels: the family's inputs
//! and reference, and a device copy of the image, which moves the same
//! bytes and does no arithmetic, as its baseline. Its shape, what each
//! kernel can take and its CPU baseline are modules of their own.

mod cpu_baseline;
mod limits;
mod shape;

use gpu_host::backend::checked_launch;
use kernels::blur::{Args, KERNELS, MAX_RADIUS, Problem};
use rand::Rng;
use rand::distr::Uniform;

use crate::families::prelude::*;
use crate::family::{Baseline, Library, Tools};
use crate::npp::Npp;
use crate::reference;
use crate::verify::random_vec;

pub use limits::{check_channels, check_radius, max_channels, max_radius};
pub use shape::BlurShape;

/// The images' names in errors.
const IMAGES: [&str; 2] = ["input image", "output image"];

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

family! {
    pub struct Blur("blur", Memory, "n (the image is n×n pixels)") {
        size: SizeSyntax {
            value_name: "WxH", names: &["width", "height"],
            help: "Blur image WIDTH×HEIGHT, or one number for a square", on_gpu: &[8192],
            emulated: &[100, 75], sweep: "1024,2048,4096,8192",
        },
        shape: BlurShape, inputs: Vec<u8>, layout: Arrays<2>, buffers: InputOutput<B, u8>,
        cpu: "separable running sums, every core (rayon)", benched: true,
    }
}

impl Family for Blur {
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
            // Rows on 16-byte lines over several bands: what the staged
            // kernel copies through its ring.
            (1024, 50, 1, 1),
            (256, 40, 3, 3),
        ]
        .map(|(width, height, channels, radius)| BlurShape::new(width, height, channels, radius))
        .to_vec()
    }

    /// [`ADDS_PER_SAMPLE`] integer adds per output sample, whatever the
    /// radius; the fewest bytes are every sample read once and written
    /// once.
    fn work(shape: BlurShape) -> Work {
        let samples = (shape.width * shape.height * shape.channels) as f64;
        Work::new(Op::IntAdd, ADDS_PER_SAMPLE * samples, samples, samples)
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

    fn layout(shape: BlurShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(IMAGES, [shape.checked_len()?; 2]))
    }

    fn reference(shape: BlurShape, input: &Vec<u8>) -> Expected {
        let image = [shape.width, shape.height, shape.channels];
        let values: Vec<f64> = reference::blur(input, image, shape.radius as usize)
            .into_iter()
            .map(f64::from)
            .collect();
        Expected::exact(values)
    }

    /// No crate does a clipped box blur, so the baseline is ours
    /// (`cpu_baseline`).
    fn cpu(shape: BlurShape, input: &Vec<u8>) -> CpuOutput {
        CpuOutput::U8(cpu_baseline::blur(shape, input))
    }

    /// Both images hold width×height×channels samples, in buffers of their
    /// own; every index fits in u32 and the radius is within the kernel's
    /// limit (`made_for`).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let Problem {
            width,
            height,
            channels,
            radius,
        } = *on.problem;
        let InputOutput { input, output } = on.buffers;
        (&*input, output, width, height, channels, radius)
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
            Baseline::<Self>::device_copy(|tools, _, buffers| {
                Ok(tools.gpu.copy(&buffers.input, &mut buffers.output)?)
            }),
        ]
    }

    fn baseline_of(_: &Kernel<Args, Problem>) -> Option<&'static str> {
        Some(NPP_BOX_FILTER)
    }
}
