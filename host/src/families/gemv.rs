//! Matrix-vector multiplication, y = αAx + βy, A m×n, in f32 and f64: the
//! family's shapes, inputs and reference, and cuBLAS SGEMV or DGEMV, on A
//! in the kernel's own layout, as its baseline.

use cudarc::cublas::{CudaBlas, Gemv as BlasGemv};
use gpu_host::backend::{Buffer, Memory, Param};
use kernels::gemv::{Args, KERNELS_F32, KERNELS_F64, Problem};

use crate::blas::Layout;
use crate::families::prelude::*;
use crate::family::{Baseline, Tools};
use crate::reference::{self, Float};

/// The scalars of the default run and the bench: both non-zero, so y is
/// read and written.
pub const ALPHA: f64 = 1.25;
pub const BETA: f64 = 0.75;

/// A is m×n, x has n elements, y has m; and the scalars α and β, which a
/// report leaves out as always the defaults.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemvShape {
    pub m: usize,
    pub n: usize,
    #[serde(skip, default = "alpha")]
    pub alpha: f64,
    #[serde(skip, default = "beta")]
    pub beta: f64,
}

fn alpha() -> f64 {
    ALPHA
}

fn beta() -> f64 {
    BETA
}

impl GemvShape {
    /// An m×n problem with the default scalars.
    pub fn new(m: usize, n: usize) -> Self {
        Self {
            m,
            n,
            alpha: ALPHA,
            beta: BETA,
        }
    }

    /// The element counts of A, x and y, once every dimension is non-zero and
    /// every index fits in `u32`.
    pub fn checked_lens(self) -> Result<[usize; 3]> {
        let m = nonzero("m (rows of A)", self.m)?;
        let n = nonzero("n (columns of A)", self.n)?;
        Ok([indexable("A (m×n)", &[m, n])?, n as usize, m as usize])
    }
}

impl fmt::Display for GemvShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}×{}", self.m, self.n)
    }
}

impl Shape for GemvShape {
    fn side(&self) -> f64 {
        (self.m as f64 * self.n as f64).sqrt()
    }

    fn short(&self) -> String {
        square_or_whole(&[self.m, self.n], self)
    }

    fn parse(sizes: &[usize], _: &ArgMatches) -> Vec<GemvShape> {
        let [m, n] = dims(sizes);
        vec![GemvShape::new(m, n)]
    }
}

/// The element types the gemv kernels are built for.
pub trait Element: Float + Param {
    /// The family's label: "gemv" and the type.
    const LABEL: &'static str;
    const KERNELS: &'static [Kernel<Args<Self>, Problem>];
    /// The cuBLAS baselines, with A row-major and column-major.
    const BASELINES: [&'static str; 2];

    /// The value as the host passes it to a kernel: itself.
    fn argument<'a, M: Memory>(self) -> <Self as Param>::Host<'a, M>;

    /// A CPU output of this type.
    fn cpu_output(values: Vec<Self>) -> CpuOutput;
}

macro_rules! element {
    ($type:ty, $label:literal, $kernels:ident, $row_major:literal, $col_major:literal, $output:ident) => {
        impl Element for $type {
            const LABEL: &'static str = $label;
            const KERNELS: &'static [Kernel<Args<Self>, Problem>] = $kernels;
            const BASELINES: [&'static str; 2] = [$row_major, $col_major];

            fn argument<'a, M: Memory>(self) -> <Self as Param>::Host<'a, M> {
                self
            }

            fn cpu_output(values: Vec<Self>) -> CpuOutput {
                CpuOutput::$output(values)
            }
        }
    };
}

element!(
    f32,
    "gemv f32",
    KERNELS_F32,
    "cublas_sgemv_row_major",
    "cublas_sgemv_col_major",
    F32
);
element!(
    f64,
    "gemv f64",
    KERNELS_F64,
    "cublas_dgemv_row_major",
    "cublas_dgemv_col_major",
    F64
);

/// The storage order of A a kernel reads, which its name states
/// (`gemv_row_major…` or `gemv_col_major…`; a test holds every gemv kernel
/// to that).
pub fn layout<T>(kernel: &Kernel<Args<T>, Problem>) -> Layout {
    if kernel.name.starts_with("gemv_row_major") {
        Layout::RowMajor
    } else {
        Layout::ColMajor
    }
}

/// A row-major, x and the initial y.
pub struct Inputs<T> {
    a: Vec<T>,
    x: Vec<T>,
    y: Vec<T>,
}

/// A is stored in one layout at a time, rewritten when a kernel needs the
/// other, so the largest sizes need memory for one copy only.
pub struct GemvBuffers<B: Backend, T: Element> {
    pub a: Buffer<B, T>,
    a_layout: Layout,
    pub x: Buffer<B, T>,
    pub y: Buffer<B, T>,
    shape: GemvShape,
}

impl<B: Backend, T: Element> Buffers<B> for GemvBuffers<B, T> {
    type Output = T;
    type Inputs = Inputs<T>;
    /// The shape itself, which `prepare` reads too.
    type Layout = GemvShape;

    /// A row-major, as the inputs hold it.
    fn upload(backend: &B, inputs: &Inputs<T>, shape: &GemvShape) -> Result<Self> {
        Ok(GemvBuffers {
            a: backend.upload("A", &inputs.a)?,
            a_layout: Layout::RowMajor,
            x: backend.upload("x", &inputs.x)?,
            y: backend.upload("y", &inputs.y)?,
            shape: *shape,
        })
    }

    fn expect(&self, backend: &B, shape: &GemvShape) -> Result<()> {
        let [a, x, y] = shape.checked_lens()?;
        expect_len("A", a, backend.len(&self.a))?;
        expect_len("x", x, backend.len(&self.x))?;
        expect_len("y", y, backend.len(&self.y))
    }

    fn output(&mut self) -> &mut Buffer<B, T> {
        &mut self.y
    }
}

pub struct Gemv<T>(std::marker::PhantomData<T>);

impl<T: Element> Declaration for Gemv<T>
where
    CudaBlas: BlasGemv<T>,
{
    type Args = Args<T>;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = T::KERNELS;

    const NAME: &'static str = "gemv";
    const LABEL: &'static str = T::LABEL;
    const SIZE: SizeSyntax = SizeSyntax {
        value_name: "MxN",
        names: &["m", "n"],
        help: "Gemv size M×N (A is M×N), or one number for a square; f32 and f64",
        on_gpu: &[16384],
        emulated: &[300, 200],
        sweep: "1024,2048,4096,8192,16384,32768",
    };
    const BOUND: Bound = Bound::Memory;
    const SQUARE_AXIS: &'static str = "n (A is n×n)";
    const BENCHED: bool = true;

    type Shape = GemvShape;

    type Inputs = Inputs<T>;
    type Layout = GemvShape;
    type Buffers<B: Backend> = GemvBuffers<B, T>;

    const CPU: &'static str = "gemm (crate) on blocks of rows, every core";
}

impl<T: Element> Family for Gemv<T>
where
    CudaBlas: BlasGemv<T>,
{
    fn problem(shape: GemvShape) -> Result<Problem> {
        shape.checked_lens()?;
        let [m, n] = [shape.m, shape.n].map(|d| d as u32);
        Ok(Problem { m, n })
    }

    /// Every shape with β = 0 (y must not be read: it is poisoned) and
    /// β ≠ 0 (y is read).
    fn test_shapes() -> Vec<GemvShape> {
        let sizes = [
            (1, 1),
            (1, 300),
            (300, 1),
            (127, 129),
            (128, 128),
            (129, 127),
            (257, 1000),
            (1000, 257),
            (4099, 3),
            (3, 4099),
        ];
        let scalars = [(1.0, 0.0), (-1.5, 0.75)];
        sizes
            .into_iter()
            .flat_map(|(m, n)| scalars.map(|(alpha, beta)| GemvShape { m, n, alpha, beta }))
            .collect()
    }

    /// A multiply and an add per element of A, then αd + βy per row; the
    /// fewest bytes are A and x read once, y read and written once.
    fn work(shape: GemvShape) -> Work {
        let (m, n) = (shape.m as f64, shape.n as f64);
        let element = size_of::<T>() as f64;
        Work::new(
            Op::Flop,
            2.0 * m * n + 3.0 * m,
            element * (m * n + n + m),
            element * m,
        )
    }

    /// A, x and y twice (the inputs and the emulator's buffers), y's
    /// reference and tolerances in f64, and y read back.
    fn host_bytes(shape: GemvShape) -> f64 {
        let (m, n) = (shape.m as f64, shape.n as f64);
        let element = size_of::<T>() as f64;
        2.0 * element * (m * n + n + m) + 16.0 * m + element * m
    }

    fn inputs(shape: GemvShape, rng: &mut SmallRng) -> Result<Inputs<T>> {
        let [a_len, x_len, y_len] = shape.checked_lens()?;
        Ok(Inputs {
            a: uniform_floats(a_len, rng),
            x: uniform_floats(x_len, rng),
            y: uniform_floats(y_len, rng),
        })
    }

    fn layout(shape: GemvShape) -> Result<GemvShape> {
        Ok(shape)
    }

    fn reference(shape: GemvShape, inputs: &Inputs<T>) -> Expected {
        let (alpha, beta) = (T::from_f64(shape.alpha), T::from_f64(shape.beta));
        let Inputs { a, x, y } = inputs;
        reference::gemv(alpha, a, x, beta, y, [shape.m, shape.n])
    }

    /// The crate's gemv on blocks of rows, one block per task: the crate
    /// runs a single column on one thread, and gemv wants every core's
    /// share of the memory bandwidth.
    fn cpu(shape: GemvShape, inputs: &Inputs<T>) -> CpuOutput {
        let (m, n) = (shape.m, shape.n);
        let (alpha, beta) = (T::from_f64(shape.alpha), T::from_f64(shape.beta));
        let rows = m.div_ceil(4 * rayon::current_num_threads()).max(1);
        let mut y = inputs.y.clone();
        y.par_chunks_mut(rows)
            .zip(inputs.a.par_chunks(rows * n))
            .for_each(|(y, a)| {
                // SAFETY: this block of A is y.len()×n row-major, x n×1 and
                // y y.len()×1; y is read only when β ≠ 0, as the kernels
                // read it. The crate computes dst = α'·dst + β'·lhs·rhs: our
                // β is its α', our α its β'.
                unsafe {
                    gemm::gemm(
                        y.len(),
                        1,
                        n,
                        y.as_mut_ptr(),
                        1,
                        1,
                        shape.beta != 0.0,
                        a.as_ptr(),
                        1,
                        n as isize,
                        inputs.x.as_ptr(),
                        1,
                        1,
                        beta,
                        alpha,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
            });
        T::cpu_output(y)
    }

    /// Stores A in the kernel's layout, and resets y: poisoned when β = 0,
    /// since it must not be read.
    fn prepare<B: Backend>(
        backend: &B,
        kernel: &Kernel<Args<T>, Problem>,
        inputs: &Inputs<T>,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        let wanted = layout(kernel);
        if buffers.a_layout != wanted {
            let GemvShape { m, n, .. } = buffers.shape;
            let stored: Vec<T> = match wanted {
                Layout::RowMajor => inputs.a.clone(),
                Layout::ColMajor => (0..m * n)
                    .into_par_iter()
                    .map(|index| inputs.a[(index % m) * n + index / m])
                    .collect(),
            };
            backend.overwrite(&stored, &mut buffers.a)?;
            buffers.a_layout = wanted;
        }
        if buffers.shape.beta == 0.0 {
            Ok(backend.poison(&mut buffers.y)?)
        } else {
            Ok(backend.overwrite(&inputs.y, &mut buffers.y)?)
        }
    }

    /// A, x and y hold m×n, n and m elements, y is a buffer of its own,
    /// and every index fits in u32.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (alpha, beta) = (T::from_f64(on.shape.alpha), T::from_f64(on.shape.beta));
        let (alpha, beta) = (alpha.argument(), beta.argument());
        let GemvBuffers { a, x, y, .. } = on.buffers;
        (alpha, &*a, &*x, beta, y, on.problem.m, on.problem.n)
    }

    /// cuBLAS in each layout that a kernel reads.
    fn baselines(kernels: &[&Kernel<Args<T>, Problem>]) -> Vec<Baseline<Self>> {
        let blas_in = |layout| -> Baseline<Self> {
            Baseline::cublas(
                T::BASELINES[layout as usize],
                match layout {
                    Layout::RowMajor => {
                        |tools, shape, buffers| blas_gemv(tools, Layout::RowMajor, shape, buffers)
                    }
                    Layout::ColMajor => {
                        |tools, shape, buffers| blas_gemv(tools, Layout::ColMajor, shape, buffers)
                    }
                },
            )
        };
        [Layout::RowMajor, Layout::ColMajor]
            .into_iter()
            .filter(|&wanted| kernels.iter().any(|&kernel| layout(kernel) == wanted))
            .map(blas_in)
            .collect()
    }

    fn baseline_of(kernel: &Kernel<Args<T>, Problem>) -> Option<&'static str> {
        Some(T::BASELINES[layout(kernel) as usize])
    }
}

fn blas_gemv<T: Element>(
    tools: &Tools<'_>,
    layout: Layout,
    shape: GemvShape,
    buffers: &mut GemvBuffers<crate::Gpu, T>,
) -> Result<()>
where
    CudaBlas: BlasGemv<T>,
{
    let blas = tools.blas.ok_or(Error::NoCublas)?;
    buffers.expect(tools.gpu, &shape)?;
    let (alpha, beta) = (T::from_f64(shape.alpha), T::from_f64(shape.beta));
    let GemvBuffers { a, x, y, .. } = buffers;
    // SAFETY: A, x and y hold exactly what the shape needs (checked).
    unsafe { blas.gemv(layout, [shape.m, shape.n], alpha, a, x, beta, y) }
}
