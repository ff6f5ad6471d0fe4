//! Matrix multiplication on the tensor cores, C = A·B, A and B bf16 and C
//! f32, row-major: the family's inputs and reference, and cuBLAS's bf16
//! gemm as its baseline. Its shapes are the FP32 matmul's.

use gpu_host::TensorMap;
use gpu_host::backend::Buffer;
use gpu_std::bf16;
use kernels::matmul_bf16::{Args, CHUNK, KERNELS, Problem, a_map, b_map};

use crate::families::matmul::{Matmul, MatmulShape, cpu_gemm};
use crate::families::prelude::*;
use crate::family::Baseline;
use crate::family::Parts;
use crate::reference;

/// A and B, each held by the tensor map the TMA rungs copy through (the
/// others read the buffer), and C.
pub struct MappedOperands<B: Backend> {
    pub a: TensorMap<B::Memory, bf16>,
    pub b: TensorMap<B::Memory, bf16>,
    pub c: Buffer<B, f32>,
}

impl<B: Backend> MappedOperands<B> {
    /// A and B, and C to write.
    pub fn parts(&mut self) -> Parts<'_, B, bf16> {
        (self.a.source(), self.b.source(), &mut self.c)
    }
}

impl<B: Backend> Buffers<B> for MappedOperands<B> {
    type Output = f32;
    type Inputs = [Vec<bf16>; 2];
    /// The problem, which makes the maps.
    type Layout = Problem;

    fn upload(backend: &B, [a, b]: &[Vec<bf16>; 2], problem: &Problem) -> Result<Self> {
        let (a, b) = (backend.upload("A", a)?, backend.upload("B", b)?);
        let c_len = problem.m as usize * problem.n as usize;
        Ok(Self {
            a: backend.tensor_map(a, a_map(problem))?,
            b: backend.tensor_map(b, b_map(problem))?,
            c: backend.alloc("C", c_len)?,
        })
    }

    fn expect(&self, backend: &B, problem: &Problem) -> Result<()> {
        expect_map("A's tensor map", a_map(problem), self.a.shape())?;
        expect_map("B's tensor map", b_map(problem), self.b.shape())?;
        let c_len = problem.m as usize * problem.n as usize;
        expect_len("C", c_len, backend.len(&self.c))
    }

    fn output(&mut self) -> &mut Buffer<B, f32> {
        &mut self.c
    }
}

pub const GEMM_BF16: &str = "cublas_gemm_bf16";

/// Why n and k are multiples of 8: the staged kernels copy rows 16 bytes
/// at a time.
const WHOLE_CHUNKS: &str = ": rows of bf16 are copied 16 bytes at a time";

family! {
    pub struct MatmulBf16("matmul_bf16", Tensor, "n (A, B and C are n×n)") {
        size: SizeSyntax {
            help: "Tensor-core matmul size M×N×K (A is M×K, B is K×N), or one number for a cube; \
                   N and K multiples of 8",
            emulated: &[136, 72, 40], sweep: "1024,2048,4096,8192", ..Matmul::SIZE
        },
        shape: MatmulShape, inputs: [Vec<bf16>; 2], layout: Problem, buffers: MappedOperands<B>,
        cpu: "gemm (crate) on the bf16 values in f32, every core", benched: true,
    }
}

impl Family for MatmulBf16 {
    fn problem(shape: MatmulShape) -> Result<Problem> {
        shape.checked_lens()?;
        let chunk = CHUNK as usize;
        multiple_of("n (columns of B and C)", shape.n, chunk, WHOLE_CHUNKS)?;
        multiple_of("k (columns of A, rows of B)", shape.k, chunk, WHOLE_CHUNKS)?;
        let [m, n, k] = [shape.m, shape.n, shape.k].map(|d| d as u32);
        Ok(Problem { m, n, k })
    }

    /// One `mma` tile and less; k short of a slice, a slice and a tail;
    /// two blocks of 128 along m and n.
    fn test_shapes() -> Vec<MatmulShape> {
        [
            (1, 8, 8),
            (3, 8, 16),
            (16, 8, 16),
            (17, 16, 24),
            (33, 40, 8),
            (100, 72, 48),
            (129, 136, 40),
            (200, 264, 72),
        ]
        .map(MatmulShape::from)
        .to_vec()
    }

    /// 2mnk FLOP; the fewest bytes are A and B read once (2 bytes an
    /// element), C written once (4).
    fn work(shape: MatmulShape) -> Work {
        let MatmulShape { m, n, k } = shape;
        let (m, n, k) = (m as f64, n as f64, k as f64);
        Work::new(
            Op::Flop,
            2.0 * m * n * k,
            2.0 * (m * k + k * n),
            4.0 * m * n,
        )
    }

    /// A and B in bf16 and in f32 (for the CPU baseline), C's reference
    /// and tolerance in f64, and C once more (the emulator's, or read
    /// back).
    fn host_bytes(shape: MatmulShape) -> f64 {
        let MatmulShape { m, n, k } = shape;
        let (m, n, k) = (m as f64, n as f64, k as f64);
        6.0 * (m * k + k * n) + 20.0 * m * n
    }

    /// Uniform in [−1, 1), rounded to bf16: the reference multiplies the
    /// very values the kernels do.
    fn inputs(shape: MatmulShape, rng: &mut SmallRng) -> Result<[Vec<bf16>; 2]> {
        let [a_len, b_len, _] = shape.checked_lens()?;
        let mut bf16s = |len| {
            let values: Vec<f32> = uniform_floats(len, rng);
            values.into_iter().map(bf16::from_f32).collect()
        };
        Ok([bf16s(a_len), bf16s(b_len)])
    }

    fn layout(shape: MatmulShape) -> Result<Problem> {
        Self::problem(shape)
    }

    /// The tensor cores add in f32, k + 1 roundings deep, and may
    /// truncate where IEEE rounds: tolerance 2·γ(k + 1)·‖aᵢ‖·‖bⱼ‖.
    fn reference(shape: MatmulShape, [a, b]: &[Vec<bf16>; 2]) -> Expected {
        let roundings = 2.0 * gamma(shape.k + 1, f64::from(f32::EPSILON) / 2.0);
        reference::matmul(a, b, [shape.m, shape.n, shape.k], roundings)
    }

    fn cpu(shape: MatmulShape, [a, b]: &[Vec<bf16>; 2]) -> CpuOutput {
        let [a, b] = [a, b].map(|m| m.iter().map(|&v| v.to_f32()).collect::<Vec<f32>>());
        CpuOutput::F32(cpu_gemm(&a, &b, shape))
    }

    /// A, B and C hold m×k, k×n and m×n elements, C is a buffer of its
    /// own, every index fits in u32 and k and n are multiples of 8; the
    /// maps are `a_map` and `b_map` of the problem over A and B.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let MappedOperands { a, b, c } = on.buffers;
        let Problem { m, n, k } = *on.problem;
        (a.source(), b.source(), c, m, n, k, &*a, &*b)
    }

    fn baselines(_: &[&Kernel<Args, Problem>]) -> Vec<Baseline<Self>> {
        vec![Baseline::<Self>::cublas(
            GEMM_BF16,
            |tools, shape, buffers| {
                let blas = tools.blas.ok_or(crate::Error::NoCublas)?;
                buffers.expect(tools.gpu, &MatmulBf16::layout(shape)?)?;
                let (a, b, c) = buffers.parts();
                // SAFETY: the buffers hold exactly A, B and C (checked).
                unsafe { blas.gemm_bf16([shape.m, shape.n, shape.k], a, b, c) }
            },
        )]
    }

    fn baseline_of(_: &Kernel<Args, Problem>) -> Option<&'static str> {
        Some(GEMM_BF16)
    }
}
