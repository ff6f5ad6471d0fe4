//! Launches the blur kernels on 8-bit images with interleaved channels.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu::blur::{BLOCK, MAX_RADIUS, TILED_MAX_RADIUS, tiled_shared_bytes};

use super::{MAX_GRID_X, MAX_GRID_YZ, expect_len, grid, indexable, nonzero};
use crate::device::Gpu;
use crate::error::{During, Error, Result};

/// The blur kernels, in teaching order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blur {
    Naive,
    Tiled,
}

impl Blur {
    pub const ALL: [Self; 2] = [Self::Naive, Self::Tiled];

    pub fn entry_point(self) -> &'static str {
        match self {
            Self::Naive => "blur_naive",
            Self::Tiled => "blur_tiled",
        }
    }

    /// The largest radius this kernel accepts.
    pub fn max_radius(self) -> u32 {
        match self {
            Self::Naive => MAX_RADIUS,
            Self::Tiled => TILED_MAX_RADIUS,
        }
    }

    /// Rejects a radius this kernel cannot take.
    pub fn check_radius(self, radius: u32) -> Result<()> {
        if radius > self.max_radius() {
            return Err(Error::RadiusTooLarge {
                kernel: self.entry_point(),
                radius,
                max: self.max_radius(),
            });
        }
        Ok(())
    }

    /// The grid, block and shared memory for `image` and `radius`, once both
    /// are valid.
    pub fn launch_config(self, image: ImageShape, radius: u32) -> Result<LaunchConfig> {
        image.checked_len()?;
        self.check_radius(radius)?;
        Ok(LaunchConfig {
            grid_dim: (
                grid("grid columns", image.width as u32, BLOCK, MAX_GRID_X)?,
                grid("grid rows", image.height as u32, BLOCK, MAX_GRID_YZ)?,
                grid("channels", image.channels as u32, 1, MAX_GRID_YZ)?,
            ),
            block_dim: (BLOCK, BLOCK, 1),
            shared_mem_bytes: self.shared_bytes(radius),
        })
    }

    /// The launch configuration, once image and radius are valid and the
    /// image matches the lengths of the input and the output.
    pub fn checked_launch(
        self,
        image: ImageShape,
        radius: u32,
        [input, output]: [usize; 2],
    ) -> Result<LaunchConfig> {
        let config = self.launch_config(image, radius)?;
        let len = image.checked_len()?;
        expect_len("input image", len, input)?;
        expect_len("output image", len, output)?;
        Ok(config)
    }

    fn shared_bytes(self, radius: u32) -> u32 {
        match self {
            Self::Naive => 0,
            // At most shared::LIMIT_BYTES once the radius is checked.
            Self::Tiled => tiled_shared_bytes(radius) as u32,
        }
    }
}

/// An image's size: `width × height` pixels of `channels` samples each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageShape {
    pub width: usize,
    pub height: usize,
    pub channels: usize,
}

impl ImageShape {
    pub fn new(width: usize, height: usize, channels: usize) -> Self {
        Self {
            width,
            height,
            channels,
        }
    }

    /// The fewest bytes: every sample read once and written once.
    pub fn min_bytes(self) -> f64 {
        2.0 * (self.width * self.height * self.channels) as f64
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

impl std::fmt::Display for ImageShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}×{}", self.width, self.height, self.channels)
    }
}

/// Enqueues the blur of `input` into `output` on the GPU's stream.
pub fn blur(
    gpu: &Gpu,
    kernel: Blur,
    image: ImageShape,
    radius: u32,
    input: &CudaSlice<u8>,
    output: &mut CudaSlice<u8>,
) -> Result<()> {
    let config = kernel.checked_launch(image, radius, [input.len(), output.len()])?;
    let (width, height, channels) = (
        image.width as u32,
        image.height as u32,
        image.channels as u32,
    );
    let mut launch = gpu
        .stream()
        .launch_builder(gpu.function(kernel.entry_point()));
    launch
        .arg(input)
        .arg(output)
        .arg(&width)
        .arg(&height)
        .arg(&channels)
        .arg(&radius);
    // SAFETY: the arguments match the kernel's signature; the image was
    // checked against both buffers and the 32-bit index limit, the radius
    // against the kernel's limit; the grid, block and shared memory are what
    // the kernel's contract asks for.
    unsafe { launch.launch(config) }.during("launching a blur kernel")?;
    Ok(())
}
