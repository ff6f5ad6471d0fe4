//! Where kernels run: the GPU, or the CPU emulator. Verification and the
//! suite are written once, against this trait.

use cudarc::driver::DeviceRepr;

use crate::error::Result;
use crate::kernels::blur::{Blur, ImageShape};
use crate::kernels::gemv::{Element, Gemv, GemvShape};
use crate::kernels::matmul::{Matmul, MatmulShape};
use crate::timing::Runs;

/// The element types kernels read and write: f32, f64 and u8.
pub trait Value: DeviceRepr + Copy + Default + Send + Sync + 'static {
    /// Every byte 0xFF: NaN for the floats, 255 for bytes.
    const POISON: Self;
}

impl Value for f32 {
    const POISON: Self = f32::from_bits(u32::MAX);
}

impl Value for f64 {
    const POISON: Self = f64::from_bits(u64::MAX);
}

impl Value for u8 {
    const POISON: Self = u8::MAX;
}

/// A place to run the kernels, with buffers of its own.
pub trait Backend {
    type Buffer<T: Value>;

    /// What runs the kernels, for the report.
    fn description(&self) -> String;

    /// A new buffer holding `data`; `what` names it in errors.
    fn upload<T: Value>(&self, what: &'static str, data: &[T]) -> Result<Self::Buffer<T>>;

    /// A new buffer of `len` poisoned elements.
    fn alloc<T: Value>(&self, what: &'static str, len: usize) -> Result<Self::Buffer<T>>;

    /// Sets every element to [`Value::POISON`].
    fn poison<T: Value>(&self, buffer: &mut Self::Buffer<T>) -> Result<()>;

    /// Replaces the contents of `buffer`, which has `data.len()` elements.
    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut Self::Buffer<T>) -> Result<()>;

    /// The contents of `buffer`, once every kernel before has finished.
    fn download<T: Value>(&self, buffer: &Self::Buffer<T>) -> Result<Vec<T>>;

    /// C = A·B with a matmul kernel.
    fn matmul(
        &self,
        kernel: Matmul,
        shape: MatmulShape,
        a: &Self::Buffer<f32>,
        b: &Self::Buffer<f32>,
        c: &mut Self::Buffer<f32>,
    ) -> Result<()>;

    /// y = αAx + βy with a gemv kernel, A stored as `kernel.layout()`.
    #[allow(clippy::too_many_arguments)] // the BLAS signature, kept whole
    fn gemv<T: Element>(
        &self,
        kernel: Gemv,
        shape: GemvShape,
        alpha: T,
        a: &Self::Buffer<T>,
        x: &Self::Buffer<T>,
        beta: T,
        y: &mut Self::Buffer<T>,
    ) -> Result<()>;

    /// The blur of `input` into `output` with a blur kernel.
    fn blur(
        &self,
        kernel: Blur,
        image: ImageShape,
        radius: u32,
        input: &Self::Buffer<u8>,
        output: &mut Self::Buffer<u8>,
    ) -> Result<()>;

    /// The median time of `launch`, in milliseconds.
    fn median_ms(&self, runs: Runs, launch: impl FnMut() -> Result<()>) -> Result<f64>;
}
