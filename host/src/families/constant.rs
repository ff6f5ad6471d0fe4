//! The constant-memory lesson's kernels: their shapes, inputs and
//! reference. The host fills the constant array with the coefficients
//! before every check, on whichever backend (or twin) runs the kernel.

use kernels::constant::{Args, COEFFICIENTS, KERNELS, Problem, TABLE};

use crate::families::prelude::*;

/// n elements; a warp's lanes read coefficients `spread` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConstantShape {
    pub n: usize,
    pub spread: u32,
}

impl fmt::Display for ConstantShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} spread {}", self.n, self.spread)
    }
}

impl Shape for ConstantShape {
    fn side(&self) -> f64 {
        self.n as f64
    }
}

/// The elements and the coefficients.
pub struct Inputs {
    x: Vec<f32>,
    coefficients: Vec<f32>,
}

/// The buffers' names in errors.
const NAMES: [&str; 3] = ["x", "coefficients", "y"];

/// Element i's result in f64, and the sum of its terms' magnitudes.
fn result(shape: ConstantShape, inputs: &Inputs, i: usize) -> (f64, f64) {
    let lane = i as u32 % 32;
    let x = f64::from(inputs.x[i]);
    (0..COEFFICIENTS).fold((0.0, 0.0), |(sum, magnitude), k| {
        let index = k.wrapping_add(shape.spread.wrapping_mul(lane)) & (COEFFICIENTS - 1);
        let term = f64::from(inputs.coefficients[index as usize]) * x;
        (sum + term, magnitude + term.abs())
    })
}

/// The coefficients: k·37 mod 256 over 256, less a half: every value in
/// [−0.5, 0.5) once, so that a coefficient read from a wrong index shows.
fn coefficients() -> Vec<f32> {
    (0..COEFFICIENTS)
        .map(|k| (k * 37 % COEFFICIENTS) as f32 / COEFFICIENTS as f32 - 0.5)
        .collect()
}

pub struct Constant;

impl Family for Constant {
    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    const NAME: &'static str = "constant";
    const SIZE: SizeSyntax = SizeSyntax::n(
        "Elements of the constant-memory lesson's kernels",
        &[1 << 22],
        &[700],
        "4194304",
    );
    const BOUND: Bound = Bound::Compute;
    const SQUARE_AXIS: &'static str = "n (elements)";

    type Shape = ConstantShape;

    fn options(_: bool) -> Vec<Arg> {
        let help = "How far apart a warp's lanes read the constant-memory lesson's coefficients: \
                    0 for one for the whole warp";
        vec![option("spread", "ELEMENTS", value_parser!(u32), "0", help)]
    }

    fn shape(sizes: &[usize], options: &ArgMatches) -> ConstantShape {
        let [n] = dims(sizes);
        let spread = value(options, "spread");
        ConstantShape { n, spread }
    }

    fn problem(shape: ConstantShape) -> Result<Problem> {
        Ok(Problem {
            n: nonzero("n (elements)", shape.n)?,
        })
    }

    fn test_shapes() -> Vec<ConstantShape> {
        [(1, 0), (1, 1), (255, 0), (257, 1), (1000, 3), (700, 256)]
            .into_iter()
            .map(|(n, spread)| ConstantShape { n, spread })
            .collect()
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

    type Inputs = Inputs;
    type Buffers<B: Backend> = TwoInputs<B>;

    /// Random elements; the coefficients are the same for every case, all
    /// different, since the constant array is one per loaded module: cases
    /// checked at once on one GPU share it.
    fn inputs(shape: ConstantShape, rng: &mut SmallRng) -> Result<Inputs> {
        Self::problem(shape)?;
        Ok(Inputs {
            x: uniform_floats(shape.n, rng),
            coefficients: coefficients(),
        })
    }

    fn upload<B: Backend>(
        backend: &B,
        shape: ConstantShape,
        inputs: &Inputs,
    ) -> Result<Self::Buffers<B>> {
        let inputs = [&inputs.x[..], &inputs.coefficients];
        TwoInputs::upload(backend, NAMES, inputs, shape.n)
    }

    /// Tolerance: a running sum of 256 products, γ(257)·Σ|cₖx|.
    fn reference(shape: ConstantShape, inputs: &Inputs) -> Expected {
        Expected::f32_sums(shape.n, COEFFICIENTS as usize + 1, |i| {
            result(shape, inputs, i)
        })
    }

    const CPU: &'static str = "the same sums in f64, every core";

    fn cpu(shape: ConstantShape, inputs: &Inputs) -> CpuOutput {
        CpuOutput::par_f32(shape.n, |i| result(shape, inputs, i).0 as f32)
    }

    /// Fills the constant array, on the backend that is about to run the
    /// kernel, and poisons y.
    fn prepare<B: Backend>(
        backend: &B,
        _: &Kernel<Args, Problem>,
        inputs: &Inputs,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        backend.set_constant(TABLE, &inputs.coefficients)?;
        Ok(backend.poison(&mut buffers.output)?)
    }

    fn launch<B: Backend>(
        backend: &B,
        kernel: &Kernel<Args, Problem>,
        shape: ConstantShape,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        let problem = Self::problem(shape)?;
        let lens = [shape.n, COEFFICIENTS as usize, shape.n];
        buffers.expect_lens(backend, NAMES, lens)?;
        let TwoInputs {
            first: x,
            second: coefficients,
            output: y,
        } = buffers;
        let args = (&*x, &*coefficients, y, problem.n, shape.spread);
        // SAFETY: x and y hold n elements, y its own buffer, the
        // coefficients all of them; the constant array is set by `prepare`
        // before a kernel is checked.
        Ok(unsafe { backend.launch(kernel, &problem, args) }?)
    }
}
