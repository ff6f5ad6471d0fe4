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
        pub fmas: u32,
    }
    shown "{n} × {fmas} FMA", side n
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

pub struct Intensity;

impl Family for Intensity {
    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    const NAME: &'static str = "intensity";
    const SIZE: SizeSyntax = SizeSyntax::n(
        "Elements of the arithmetic-intensity lesson's kernel",
        &[1 << 24],
        &[3001],
        "16777216",
    );
    const BOUND: Bound = Bound::Compute;
    const SQUARE_AXIS: &'static str = "n (elements)";

    type Shape = IntensityShape;

    fn options(_: bool) -> Vec<Arg> {
        let help = "FMAs per element of the arithmetic-intensity lesson's kernel";
        vec![option("fmas", "FMAS", value_parser!(u32), "64", help)]
    }

    fn shape(sizes: &[usize], options: &ArgMatches) -> IntensityShape {
        let [n] = dims(sizes);
        let fmas = value(options, "fmas");
        IntensityShape { n, fmas }
    }

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
        shapes.map(|(n, fmas)| IntensityShape { n, fmas }).to_vec()
    }

    fn work(shape: IntensityShape) -> Work {
        let bytes = 4.0 * shape.n as f64;
        let ops = 2.0 * f64::from(shape.fmas) * shape.n as f64;
        Work::new(Op::Flop, ops, bytes, bytes)
    }

    fn host_bytes(shape: IntensityShape) -> f64 {
        28.0 * shape.n as f64
    }

    type Inputs = Vec<f32>;
    type Layout = Arrays<2>;
    type Buffers<B: Backend> = InputOutput<B>;

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

    const CPU: &'static str = "the same FMAs, every core";

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
