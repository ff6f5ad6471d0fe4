//! Launches the matmul kernels: C = A·B, f32, row-major.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use gpu::matmul::{NAIVE_BLOCK, tiled_shared_elements};

use super::{MAX_GRID_X, MAX_GRID_YZ, expect_len, grid, indexable, nonzero};
use crate::device::Gpu;
use crate::error::{During, Result};

/// The matmul kernels, in teaching order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matmul {
    Naive,
    Tiled16,
    Tiled32,
}

impl Matmul {
    pub const ALL: [Self; 3] = [Self::Naive, Self::Tiled16, Self::Tiled32];

    pub fn entry_point(self) -> &'static str {
        match self {
            Self::Naive => "matmul_naive",
            Self::Tiled16 => "matmul_tiled_16",
            Self::Tiled32 => "matmul_tiled_32",
        }
    }

    /// Threads per block along x and y (also the tile width).
    fn block(self) -> u32 {
        match self {
            Self::Naive => NAIVE_BLOCK,
            Self::Tiled16 => 16,
            Self::Tiled32 => 32,
        }
    }

    /// The grid, block and shared memory for `shape`, once the shape is valid.
    pub fn launch_config(self, shape: MatmulShape) -> Result<LaunchConfig> {
        shape.checked_lens()?;
        let block = self.block();
        Ok(LaunchConfig {
            grid_dim: (
                grid("grid columns", shape.n as u32, block, MAX_GRID_X)?,
                grid("grid rows", shape.m as u32, block, MAX_GRID_YZ)?,
                1,
            ),
            block_dim: (block, block, 1),
            shared_mem_bytes: self.shared_bytes(),
        })
    }

    /// The launch configuration, once the shape is valid and matches the
    /// lengths of A, B and C.
    pub fn checked_launch(self, shape: MatmulShape, lens: [usize; 3]) -> Result<LaunchConfig> {
        let config = self.launch_config(shape)?;
        shape.check_buffers(lens)?;
        Ok(config)
    }

    fn shared_bytes(self) -> u32 {
        match self {
            Self::Naive => 0,
            Self::Tiled16 | Self::Tiled32 => {
                tiled_shared_elements(self.block()) * size_of::<f32>() as u32
            }
        }
    }
}

/// A is m×k, B is k×n, C is m×n.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulShape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl MatmulShape {
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        Self { m, n, k }
    }

    /// Floating-point operations: one multiply and one add per term.
    pub fn flops(self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }

    /// The fewest bytes a kernel can move: A and B read once, C written once.
    pub fn min_bytes(self) -> f64 {
        4.0 * (self.m * self.k + self.k * self.n + self.m * self.n) as f64
    }

    /// The element counts of A, B and C, once every dimension is non-zero and
    /// every index fits in `u32`.
    pub fn checked_lens(self) -> Result<[usize; 3]> {
        let m = nonzero("m (rows of A and C)", self.m)?;
        let n = nonzero("n (columns of B and C)", self.n)?;
        let k = nonzero("k (columns of A, rows of B)", self.k)?;
        Ok([
            indexable("A (m×k)", &[m, k])?,
            indexable("B (k×n)", &[k, n])?,
            indexable("C (m×n)", &[m, n])?,
        ])
    }

    /// Checks the lengths of A, B and C against the shape.
    pub fn check_buffers(self, [a, b, c]: [usize; 3]) -> Result<()> {
        let [a_len, b_len, c_len] = self.checked_lens()?;
        expect_len("A", a_len, a)?;
        expect_len("B", b_len, b)?;
        expect_len("C", c_len, c)
    }
}

impl std::fmt::Display for MatmulShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}×{}", self.m, self.n, self.k)
    }
}

/// Enqueues C = A·B on the GPU's stream.
pub fn matmul(
    gpu: &Gpu,
    kernel: Matmul,
    shape: MatmulShape,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) -> Result<()> {
    let config = kernel.checked_launch(shape, [a.len(), b.len(), c.len()])?;
    let (m, n, k) = (shape.m as u32, shape.n as u32, shape.k as u32);
    let mut launch = gpu
        .stream()
        .launch_builder(gpu.function(kernel.entry_point()));
    launch.arg(a).arg(b).arg(c).arg(&m).arg(&n).arg(&k);
    // SAFETY: the arguments match the kernel's signature; the shape was
    // checked against every buffer and the 32-bit index limit; the grid,
    // block and shared memory are what the kernel's contract asks for.
    unsafe { launch.launch(config) }.during("launching a matmul kernel")?;
    Ok(())
}
