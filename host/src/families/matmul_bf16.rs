//! Matrix multiplication on the tensor cores, C = A·B, A and B bf16 and C
//! f32, row-major: the family's inputs and reference, and cuBLAS's bf16
//! gemm as its baseline. Its shapes are the FP32 matmul's.

use gpu_std::bf16;
use kernels::matmul_bf16::{Args, CHUNK, KERNELS, Problem};

use crate::families::matmul::{Matmul, MatmulShape, cpu_gemm};
use crate::families::prelude::*;
use crate::family::Baseline;

/// The matrices' names in errors.
const MATRICES: [&str; 3] = ["A", "B", "C"];

pub const GEMM_BF16: &str = "cublas_gemm_bf16";

/// Rejects a k or n whose rows of bf16 would not start on 16-byte
/// boundaries, which the staged kernels copy them in.
fn whole_chunks(what: &'static str, size: usize) -> Result<()> {
    if !size.is_multiple_of(CHUNK as usize) {
        return Err(Error::NotMultiple {
            what,
            size,
            of: CHUNK as usize,
            why: ": rows of bf16 are copied 16 bytes at a time",
        });
    }
    Ok(())
}

pub struct MatmulBf16;

impl Family for MatmulBf16 {
    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    const NAME: &'static str = "matmul_bf16";
    const SIZE: SizeSyntax = SizeSyntax {
        help: "Tensor-core matmul size M×N×K (A is M×K, B is K×N), or one number for a cube; \
               N and K multiples of 8",
        emulated: &[136, 72, 40],
        sweep: "1024,2048,4096,8192",
        ..Matmul::SIZE
    };
    const BOUND: Bound = Bound::Tensor;
    const SQUARE_AXIS: &'static str = "n (A, B and C are n×n)";
    const BENCHED: bool = true;

    type Shape = MatmulShape;

    fn shape(sizes: &[usize], options: &ArgMatches) -> MatmulShape {
        Matmul::shape(sizes, options)
    }

    fn problem(shape: MatmulShape) -> Result<Problem> {
        shape.checked_lens()?;
        whole_chunks("n (columns of B and C)", shape.n)?;
        whole_chunks("k (columns of A, rows of B)", shape.k)?;
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
        .map(|(m, n, k)| MatmulShape { m, n, k })
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

    /// A and B.
    type Inputs = [Vec<bf16>; 2];
    type Layout = Arrays<3>;
    type Buffers<B: Backend> = TwoInputs<B, bf16>;

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

    fn layout(shape: MatmulShape) -> Result<Arrays<3>> {
        Ok(Arrays::new(MATRICES, shape.checked_lens()?))
    }

    /// Each product of two bf16 values is exact in f64, and so is their
    /// sum here (k ≤ 2³²: far below f64's 53 bits for 16-bit products).
    /// The tensor cores add in f32, k + 1 roundings deep, and may
    /// truncate where IEEE rounds: tolerance 2·γ(k + 1)·Σ|aᵢₗbₗⱼ|.
    fn reference(shape: MatmulShape, [a, b]: &[Vec<bf16>; 2]) -> Expected {
        let MatmulShape { m, n, k } = shape;
        let b: Vec<f64> = b.par_iter().map(|&v| v.into()).collect();
        let gamma = 2.0 * gamma(k + 1, f64::from(f32::EPSILON) / 2.0);
        let rows: Vec<(Vec<f64>, Vec<f64>)> = a
            .par_chunks(k)
            .map(|a_row| {
                let (mut sums, mut magnitudes) = (vec![0.0; n], vec![0.0; n]);
                for (l, &a_il) in a_row.iter().enumerate() {
                    let a_il = f64::from(a_il);
                    for (j, &b_lj) in b[l * n..(l + 1) * n].iter().enumerate() {
                        sums[j] += a_il * b_lj;
                        magnitudes[j] += (a_il * b_lj).abs();
                    }
                }
                (sums, magnitudes.into_iter().map(|x| gamma * x).collect())
            })
            .collect();
        let (values, tolerance) = rows.into_iter().take(m).unzip::<_, _, Vec<_>, Vec<_>>();
        Expected {
            values: values.concat(),
            tolerance: tolerance.concat(),
        }
    }

    const CPU: &'static str = "gemm (crate) on the bf16 values in f32, every core";

    fn cpu(shape: MatmulShape, [a, b]: &[Vec<bf16>; 2]) -> CpuOutput {
        let [a, b] = [a, b].map(|m| m.iter().map(|&v| v.to_f32()).collect::<Vec<f32>>());
        CpuOutput::F32(cpu_gemm(&a, &b, shape))
    }

    /// A, B and C hold m×k, k×n and m×n elements, C is a buffer of its
    /// own, every index fits in u32 and k and n are multiples of 8.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (a, b, c) = on.buffers.parts();
        (a, b, c, on.problem.m, on.problem.n, on.problem.k)
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
