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

/// n elements, `fmas` FMAs on each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntensityShape {
    pub n: usize,
    pub fmas: u32,
}

impl IntensityShape {
    /// FLOP per byte of global memory: 2 per FMA, 8 bytes per element.
    pub fn intensity(self) -> f64 {
        f64::from(self.fmas) / 4.0
    }
}

impl fmt::Display for IntensityShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} × {} FMA", self.n, self.fmas)
    }
}

impl Shape for IntensityShape {
    fn side(&self) -> f64 {
        self.n as f64
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
        if n > u32::MAX - 3 {
            return Err(Error::TooLarge {
                what: "n (elements)",
                size: shape.n as u128,
                limit: u64::from(u32::MAX - 3),
            });
        }
        Ok(Problem { n })
    }

    /// No FMA, fewer than one unrolled step, a step and a remainder; n
    /// short of a whole vector and past one.
    fn test_shapes() -> Vec<IntensityShape> {
        [
            (1, 0),
            (1, 1),
            (3, 9),
            (255, 7),
            (257, 8),
            (1000, 13),
            (3001, 100),
        ]
        .into_iter()
        .map(|(n, fmas)| IntensityShape { n, fmas })
        .collect()
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
    type Buffers<B: Backend> = InputOutput<B>;

    fn inputs(shape: IntensityShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Self::problem(shape)?;
        Ok(uniform_floats(shape.n, rng))
    }

    fn upload<B: Backend>(
        backend: &B,
        shape: IntensityShape,
        input: &Vec<f32>,
    ) -> Result<Self::Buffers<B>> {
        InputOutput::upload(backend, NAMES, input, shape.n)
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

    fn launch<B: Backend>(
        backend: &B,
        kernel: &Kernel<Args, Problem>,
        shape: IntensityShape,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        let problem = Self::problem(shape)?;
        buffers.expect_lens(backend, NAMES, [shape.n; 2])?;
        let InputOutput { input, output } = buffers;
        let args = (&*input, output, problem.n, shape.fmas, MULTIPLIER, ADDEND);
        // SAFETY: the input and the output hold n elements each, the output
        // a buffer of its own.
        Ok(unsafe { backend.launch(kernel, &problem, args) }?)
    }
}
