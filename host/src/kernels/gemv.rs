//! Launches the gemv kernels: y = αAx + βy, A m×n, in f32 or f64.

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg, ValidAsZeroBits};
use gpu::gemv::{BLOCK, SHARED_X_ELEMENTS};

use super::{MAX_GRID_X, expect_len, grid, indexable, nonzero};
use crate::backend::Value;
use crate::device::Gpu;
use crate::error::{During, Result};

/// The gemv kernels, in teaching order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gemv {
    RowMajor,
    ColMajor,
    ColMajorSharedX,
}

/// How A is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// A[i][j] at i·n + j.
    RowMajor,
    /// A[i][j] at j·m + i.
    ColMajor,
}

/// The element types the gemv kernels are built for.
pub trait Element: Value + ValidAsZeroBits + Into<f64> {
    /// Unit roundoff: half the distance from 1 to the next number.
    const UNIT_ROUNDOFF: f64;
    const NAME: &'static str;
    /// Selects this type's entry point from `[f32 name, f64 name]`.
    const ENTRY_INDEX: usize;
    /// The kernels compiled for the host, in [`Gemv::ALL`] order, for the
    /// emulator.
    const HOST_KERNELS: [HostKernel<Self>; 3];
    fn from_f64(value: f64) -> Self;
}

/// A gemv kernel compiled for the host: the body of one emulated thread.
pub type HostKernel<T> = unsafe fn(T, *const T, *const T, T, *mut T, u32, u32);

impl Element for f32 {
    const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;
    const NAME: &'static str = "f32";
    const ENTRY_INDEX: usize = 0;
    const HOST_KERNELS: [HostKernel<Self>; 3] = [
        gpu::gemv::gemv_row_major_f32,
        gpu::gemv::gemv_col_major_f32,
        gpu::gemv::gemv_col_major_shared_x_f32,
    ];
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

impl Element for f64 {
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
    const NAME: &'static str = "f64";
    const ENTRY_INDEX: usize = 1;
    const HOST_KERNELS: [HostKernel<Self>; 3] = [
        gpu::gemv::gemv_row_major_f64,
        gpu::gemv::gemv_col_major_f64,
        gpu::gemv::gemv_col_major_shared_x_f64,
    ];
    fn from_f64(value: f64) -> Self {
        value
    }
}

impl Gemv {
    pub const ALL: [Self; 3] = [Self::RowMajor, Self::ColMajor, Self::ColMajorSharedX];

    pub fn entry_point<T: Element>(self) -> &'static str {
        let names = match self {
            Self::RowMajor => ["gemv_row_major_f32", "gemv_row_major_f64"],
            Self::ColMajor => ["gemv_col_major_f32", "gemv_col_major_f64"],
            Self::ColMajorSharedX => ["gemv_col_major_shared_x_f32", "gemv_col_major_shared_x_f64"],
        };
        names[T::ENTRY_INDEX]
    }

    /// The storage order of A this kernel reads.
    pub fn layout(self) -> Layout {
        match self {
            Self::RowMajor => Layout::RowMajor,
            Self::ColMajor | Self::ColMajorSharedX => Layout::ColMajor,
        }
    }

    /// The grid, block and shared memory for `shape`, once the shape is valid.
    pub fn launch_config<T: Element>(self, shape: GemvShape) -> Result<LaunchConfig> {
        shape.checked_lens()?;
        Ok(LaunchConfig {
            grid_dim: (
                grid("grid (blocks of rows)", shape.m as u32, BLOCK, MAX_GRID_X)?,
                1,
                1,
            ),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: self.shared_bytes::<T>(),
        })
    }

    /// The launch configuration, once the shape is valid and matches the
    /// lengths of A, x and y.
    pub fn checked_launch<T: Element>(
        self,
        shape: GemvShape,
        lens: [usize; 3],
    ) -> Result<LaunchConfig> {
        let config = self.launch_config::<T>(shape)?;
        shape.check_buffers(lens)?;
        Ok(config)
    }

    fn shared_bytes<T: Element>(self) -> u32 {
        match self {
            Self::RowMajor | Self::ColMajor => 0,
            Self::ColMajorSharedX => SHARED_X_ELEMENTS * size_of::<T>() as u32,
        }
    }
}

/// A is m×n, x has n elements, y has m.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemvShape {
    pub m: usize,
    pub n: usize,
}

impl GemvShape {
    pub fn new(m: usize, n: usize) -> Self {
        Self { m, n }
    }

    /// A multiply and an add per element of A, then αd + βy per row.
    pub fn flops(self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 + 3.0 * self.m as f64
    }

    /// The fewest bytes: A and x read once, y read and written once.
    pub fn min_bytes<T: Element>(self) -> f64 {
        (size_of::<T>() * (self.m * self.n + self.n + 2 * self.m)) as f64
    }

    /// The element counts of A, x and y, once every dimension is non-zero and
    /// every index fits in `u32`.
    pub fn checked_lens(self) -> Result<[usize; 3]> {
        let m = nonzero("m (rows of A)", self.m)?;
        let n = nonzero("n (columns of A)", self.n)?;
        Ok([indexable("A (m×n)", &[m, n])?, n as usize, m as usize])
    }

    /// Checks the lengths of A, x and y against the shape.
    pub fn check_buffers(self, [a, x, y]: [usize; 3]) -> Result<()> {
        let [a_len, x_len, y_len] = self.checked_lens()?;
        expect_len("A", a_len, a)?;
        expect_len("x", x_len, x)?;
        expect_len("y", y_len, y)
    }
}

impl std::fmt::Display for GemvShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{}", self.m, self.n)
    }
}

/// Enqueues y = αAx + βy on the GPU's stream, A stored as `kernel.layout()`.
#[allow(clippy::too_many_arguments)] // the BLAS signature, kept whole
pub fn gemv<T: Element>(
    gpu: &Gpu,
    kernel: Gemv,
    shape: GemvShape,
    alpha: T,
    a: &CudaSlice<T>,
    x: &CudaSlice<T>,
    beta: T,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let config = kernel.checked_launch::<T>(shape, [a.len(), x.len(), y.len()])?;
    let (m, n) = (shape.m as u32, shape.n as u32);
    let mut launch = gpu
        .stream()
        .launch_builder(gpu.function(kernel.entry_point::<T>()));
    launch
        .arg(&alpha)
        .arg(a)
        .arg(x)
        .arg(&beta)
        .arg(y)
        .arg(&m)
        .arg(&n);
    // SAFETY: the arguments match the kernel's signature; the shape was
    // checked against every buffer and the 32-bit index limit; the grid,
    // block and shared memory are what the kernel's contract asks for.
    unsafe { launch.launch(config) }.during("launching a gemv kernel")?;
    Ok(())
}
