//! Matrix multiplication, C = A·B, f32, row-major: the family's shapes,
//! inputs and reference, and cuBLAS SGEMM as its baseline.

use kernels::matmul::{Args, KERNELS, Problem, Tiles, tiles};

use crate::families::prelude::*;
use crate::family::{Baseline, PickFor};
use crate::reference;

shape! {
    /// A is m×k, B is k×n, C is m×n.
    pub struct MatmulShape {
        pub m: usize,
        pub n: usize,
        pub k: usize,
    }
    shown("{m}×{n}×{k}"), side((m as f64 * n as f64 * k as f64).cbrt()),
    short(square_or_whole(&[m, n, k], &MatmulShape { m, n, k }))
}

impl MatmulShape {
    pub fn new(m: usize, n: usize, k: usize) -> Self {
        Self { m, n, k }
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
}

/// The matrices' names in errors.
const MATRICES: [&str; 3] = ["A", "B", "C"];

pub const SGEMM: &str = "cublas_sgemm";

family! {
    pub struct Matmul("matmul", Compute, "n (A, B and C are n×n)") {
        size: SizeSyntax {
            value_name: "MxNxK", names: &["m", "n", "k"],
            help: "Matmul size M×N×K (A is M×K, B is K×N), or one number for a cube",
            on_gpu: &[4096], emulated: &[100, 75, 50],
            sweep: "512,1024,1000x3000x2000,2048,4095,4096,8192x8192x2048,8192",
        },
        shape: MatmulShape, inputs: [Vec<f32>; 2], layout: Arrays<3>, buffers: TwoInputs<B>,
        cpu: "gemm (crate), every core", benched: true,
    }
}

impl Family for Matmul {
    fn problem(shape: MatmulShape) -> Result<Problem> {
        shape.checked_lens()?;
        let [m, n, k] = [shape.m, shape.n, shape.k].map(|d| d as u32);
        Ok(Problem { m, n, k })
    }

    fn test_shapes() -> Vec<MatmulShape> {
        [
            (1, 1, 1),
            (1, 1, 7),
            (3, 2, 1),
            (13, 7, 29),
            (16, 16, 16),
            (32, 32, 32),
            (17, 33, 31),
            (31, 47, 65),
            (64, 1, 100),
            (1, 100, 64),
            (97, 131, 61),
            (250, 70, 300),
            (509, 521, 523),
        ]
        .map(MatmulShape::from)
        .to_vec()
    }

    /// 2mnk FLOP; the fewest bytes are A and B read once, C written once.
    fn work(shape: MatmulShape) -> Work {
        let MatmulShape { m, n, k } = shape;
        Work::new(
            Op::Flop,
            2.0 * m as f64 * n as f64 * k as f64,
            4.0 * (m * k + k * n) as f64,
            4.0 * (m * n) as f64,
        )
    }

    /// A and B in f32, B again in f64 for the reference, C's reference
    /// and tolerances in f64, and A, B and C once more (the emulator's, or
    /// C read back).
    fn host_bytes(shape: MatmulShape) -> f64 {
        let MatmulShape { m, n, k } = shape;
        let (m, n, k) = (m as f64, n as f64, k as f64);
        4.0 * (m * k + k * n) + 8.0 * k * n + 16.0 * m * n + 4.0 * (m * k + k * n + m * n)
    }

    fn inputs(shape: MatmulShape, rng: &mut SmallRng) -> Result<[Vec<f32>; 2]> {
        let [a_len, b_len, _] = shape.checked_lens()?;
        Ok([uniform_floats(a_len, rng), uniform_floats(b_len, rng)])
    }

    fn layout(shape: MatmulShape) -> Result<Arrays<3>> {
        Ok(Arrays::new(MATRICES, shape.checked_lens()?))
    }

    /// Tolerance: f32 sums k + 1 roundings deep, γ(k + 1)·‖aᵢ‖·‖bⱼ‖.
    fn reference(shape: MatmulShape, [a, b]: &[Vec<f32>; 2]) -> Expected {
        let roundings = gamma(shape.k + 1, f64::from(f32::EPSILON) / 2.0);
        reference::matmul(a, b, [shape.m, shape.n, shape.k], roundings)
    }

    fn cpu(shape: MatmulShape, [a, b]: &[Vec<f32>; 2]) -> CpuOutput {
        CpuOutput::F32(cpu_gemm(a, b, shape))
    }

    /// A, B and C hold m×k, k×n and m×n elements, C is a buffer of its
    /// own, and every index fits in u32.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (a, b, c) = on.buffers.parts();
        (a, b, c, on.problem.m, on.problem.n, on.problem.k)
    }

    fn baselines(_: &[&Kernel<Args, Problem>]) -> Vec<Baseline<Self>> {
        vec![Baseline::<Self>::cublas(SGEMM, |tools, shape, buffers| {
            let blas = tools.blas.ok_or(crate::Error::NoCublas)?;
            buffers.expect(tools.gpu, &Matmul::layout(shape)?)?;
            let (a, b, c) = buffers.parts();
            // SAFETY: the buffers hold exactly A, B and C (checked).
            unsafe { blas.sgemm([shape.m, shape.n, shape.k], a, b, c) }
        })]
    }

    fn baseline_of(_: &Kernel<Args, Problem>) -> Option<&'static str> {
        Some(SGEMM)
    }

    const PICKS: Option<&'static str> = Some(
        "the tiles whose grid takes least time on the GPU's SMs: matmul_rasterised where its \
         waves are full, matmul_mid_tiles where their one wave fills more SMs, \
         matmul_small_tiles where neither fills its waves, matmul_split_k where even the small \
         tiles are fewer than the SMs and the GPU runs clusters (kernels::matmul::tiles)",
    );

    /// The wide tiles in bands, the three-quarter tiles, the small tiles
    /// or split k, as [`tiles`]
    /// picks; split k where the GPU has the capability its kernel declares
    /// (clusters).
    fn pick(problem: &Problem, gpu: PickFor) -> Option<&'static Kernel<Args, Problem>> {
        let named = |name: &str| KERNELS.iter().find(|kernel| kernel.name == name);
        let split = named("matmul_split_k")?;
        let clusters = gpu.compute_capability >= split.capability;
        match tiles(problem, gpu.multiprocessors, clusters) {
            Tiles::Wide => named("matmul_rasterised"),
            Tiles::Mid => named("matmul_mid_tiles"),
            Tiles::Small => named("matmul_small_tiles"),
            Tiles::SplitK => Some(split),
        }
    }
}

/// C = A·B on the CPU with the `gemm` crate, every core, in f32.
pub fn cpu_gemm(a: &[f32], b: &[f32], shape: MatmulShape) -> Vec<f32> {
    let MatmulShape { m, n, k } = shape;
    let mut c = vec![0.0f32; m * n];
    // SAFETY: A is m×k, B k×n and C m×n, all row-major (column stride
    // 1, row stride the width), and C is written, not read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::Rayon(0),
        );
    }
    c
}
