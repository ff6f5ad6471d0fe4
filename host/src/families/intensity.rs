//! The arithmetic-intensity lesson's kernel: its shapes, inputs and
//! reference. The reference repeats the kernel's FMAs on the CPU, each an
//! IEEE fused multiply-add rounded once, as the GPU's is: the result is
//! exact, and so is the comparison.

use kernels::intensity::{Args, KERNELS, Problem};

use crate::families::prelude::*;

/// The FMA's multiplier and addend: x ← x·a + b stays within [−1, 1] for
/// x there, and every FMA changes it.
pub const MULTIPLIER: f32 = 0.999;
pub const ADDEND: f32 = 0.0005;

shape! {
    /// n elements, `fmas` FMAs on each.
    pub struct IntensityShape {
        pub n: usize,
        #[option("fmas", "FMAS", "64", "FMAs per element of the arithmetic-intensity lesson's kernel")]
        pub fmas: u32,
    }
    shown("{n} × {fmas} FMA"), side(n)
}

impl IntensityShape {
    /// FLOP per byte of global memory: 2 per FMA, 8 bytes per element.
    pub fn intensity(self) -> f64 {
        f64::from(self.fmas) / 4.0
    }
}

/// What the kernel computes from x: the FMAs one by one.
fn chain(x: f32, fmas: u32) -> f32 {
    (0..fmas).fold(x, |x, _| x.mul_add(MULTIPLIER, ADDEND))
}

family! {
    pub struct Intensity("intensity", Compute, "n (elements)") {
        size: SizeSyntax::n("Elements of the arithmetic-intensity lesson's kernel", &[1 << 24], &[3001], "16777216"),
        shape: IntensityShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same FMAs, every core",
    }
}

impl Family for Intensity {
    /// n + 3 must fit in `u32`: the last thread's first element is
    /// rounded down to a vector.
    fn problem(shape: IntensityShape) -> Result<Problem> {
        let n = nonzero("n (elements)", shape.n)?;
        at_most("n (elements)", n, u32::MAX - 3)?;
        Ok(Problem { n })
    }

    /// No FMA, fewer than one unrolled step, a step and a remainder; n
    /// short of a whole vector and past one.
    fn test_shapes() -> Vec<IntensityShape> {
        let shapes = [
            (1, 0),
            (1, 1),
            (3, 9),
            (255, 7),
            (257, 8),
            (1000, 13),
            (3001, 100),
        ];
        shapes.map(IntensityShape::from).to_vec()
    }

    fn work(shape: IntensityShape) -> Work {
        let bytes = 4.0 * shape.n as f64;
        let ops = 2.0 * f64::from(shape.fmas) * shape.n as f64;
        Work::new(Op::Flop, ops, bytes, bytes)
    }

    fn host_bytes(shape: IntensityShape) -> f64 {
        28.0 * shape.n as f64
    }

    fn inputs(shape: IntensityShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Self::problem(shape)?;
        Ok(uniform_floats(shape.n, rng))
    }

    fn layout(shape: IntensityShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.n; 2]))
    }

    fn reference(shape: IntensityShape, input: &Vec<f32>) -> Expected {
        Expected::exact(
            input
                .par_iter()
                .map(|&x| f64::from(chain(x, shape.fmas)))
                .collect(),
        )
    }

    fn cpu(shape: IntensityShape, input: &Vec<f32>) -> CpuOutput {
        CpuOutput::F32(input.par_iter().map(|&x| chain(x, shape.fmas)).collect())
    }

    /// The input and the output hold n elements each, the output a buffer
    /// of its own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        let (n, fmas) = (on.problem.n, on.shape.fmas);
        (&*input, output, n, fmas, MULTIPLIER, ADDEND)
    }
}
