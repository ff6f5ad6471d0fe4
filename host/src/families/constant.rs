//! The constant-memory lesson's kernels: their shapes, inputs and
//! reference. The host fills the constant array with the coefficients
//! before every check, on whichever backend (or twin) runs the kernel.

use kernels::constant::{Args, COEFFICIENTS, KERNELS, Problem, TABLE};

use crate::families::prelude::*;

shape! {
    /// n elements; a warp's lanes read coefficients `spread` apart.
    pub struct ConstantShape {
        pub n: usize,
        #[option("spread", "ELEMENTS", "0",
            "How far apart a warp's lanes read the constant-memory lesson's coefficients: \
             0 for one for the whole warp")]
        pub spread: u32,
    }
    shown("{n} spread {spread}"), side(n)
}

/// The buffers' names in errors.
const NAMES: [&str; 3] = ["x", "coefficients", "y"];

/// The terms of element i's sum, in f64.
fn terms(
    shape: ConstantShape,
    [x, coefficients]: &[Vec<f32>; 2],
    i: usize,
) -> impl Iterator<Item = f64> {
    let lane = i as u32 % 32;
    let x = f64::from(x[i]);
    (0..COEFFICIENTS).map(move |k| {
        let index = k.wrapping_add(shape.spread.wrapping_mul(lane)) & (COEFFICIENTS - 1);
        f64::from(coefficients[index as usize]) * x
    })
}

/// The coefficients: k·37 mod 256 over 256, less a half: every value in
/// [−0.5, 0.5) once, so that a coefficient read from a wrong index shows.
fn coefficients() -> Vec<f32> {
    (0..COEFFICIENTS)
        .map(|k| (k * 37 % COEFFICIENTS) as f32 / COEFFICIENTS as f32 - 0.5)
        .collect()
}

family! {
    pub struct Constant("constant", Compute, "n (elements)") {
        size: SizeSyntax::n("Elements of the constant-memory lesson's kernels", &[1 << 22], &[700], "4194304"),
        shape: ConstantShape, inputs: [Vec<f32>; 2], layout: Arrays<3>, buffers: TwoInputs<B>,
        cpu: "the same sums in f64, every core",
    }
}

impl Family for Constant {
    fn problem(shape: ConstantShape) -> Result<Problem> {
        Ok(Problem {
            n: nonzero("n (elements)", shape.n)?,
        })
    }

    fn test_shapes() -> Vec<ConstantShape> {
        let shapes = [(1, 0), (1, 1), (255, 0), (257, 1), (1000, 3), (700, 256)];
        shapes.map(ConstantShape::from).to_vec()
    }

    /// A multiply and an add per coefficient and element; the bytes are
    /// the elements read and written and the coefficients once.
    fn work(shape: ConstantShape) -> Work {
        let (elements, coefficients) = (4.0 * shape.n as f64, f64::from(COEFFICIENTS));
        let ops = 2.0 * coefficients * shape.n as f64;
        Work::new(Op::Flop, ops, elements + 4.0 * coefficients, elements)
    }

    fn host_bytes(shape: ConstantShape) -> f64 {
        28.0 * shape.n as f64
    }

    /// Random elements; the coefficients are the same for every case, all
    /// different, since the constant array is one per loaded module: cases
    /// checked at once on one GPU share it.
    fn inputs(shape: ConstantShape, rng: &mut SmallRng) -> Result<[Vec<f32>; 2]> {
        Self::problem(shape)?;
        Ok([uniform_floats(shape.n, rng), coefficients()])
    }

    fn layout(shape: ConstantShape) -> Result<Arrays<3>> {
        let lens = [shape.n, COEFFICIENTS as usize, shape.n];
        Ok(Arrays::new(NAMES, lens))
    }

    /// Tolerance: a running sum of 256 products, γ(257)·Σ|cₖx|.
    fn reference(shape: ConstantShape, inputs: &[Vec<f32>; 2]) -> Expected {
        Expected::f32_sums(shape.n, COEFFICIENTS as usize + 1, |i| {
            terms(shape, inputs, i)
        })
    }

    fn cpu(shape: ConstantShape, inputs: &[Vec<f32>; 2]) -> CpuOutput {
        CpuOutput::sums(shape.n, |i| terms(shape, inputs, i))
    }

    /// Fills the constant array, on the backend that is about to run the
    /// kernel, and poisons y.
    fn prepare<B: Backend>(
        backend: &B,
        _: &Kernel<Args, Problem>,
        [_, coefficients]: &[Vec<f32>; 2],
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        backend.set_constant(TABLE, coefficients)?;
        Ok(backend.poison(&mut buffers.output)?)
    }

    /// x and y hold n elements, y its own buffer, the coefficients all of
    /// them; the constant array is set by `prepare` before a kernel is
    /// checked.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let buffers = on.buffers;
        let (x, coefficients, y) = buffers.parts();
        (x, coefficients, y, on.problem.n, on.shape.spread)
    }
}
