//! The copy of the memory-access lessons (coalescing, alignment): its
//! shapes, inputs and reference. Its output is a gather, exact, so the
//! reference is the input itself, element for element.

use kernels::access::{Args, KERNELS, Problem};

use crate::families::prelude::*;

shape! {
    /// n elements copied from input[offset + i·stride].
    pub struct AccessShape {
        pub n: usize,
        pub stride: usize,
        pub offset: usize,
    }
    shown "{n} s={stride} o={offset}", side n
}

impl AccessShape {
    /// The input's and the output's element counts, once n is non-zero
    /// and every index fits in `u32`.
    pub fn checked_lens(self) -> Result<[usize; 2]> {
        let n = nonzero("n (elements copied)", self.n)?;
        let last = (self.n as u128 - 1) * self.stride as u128 + self.offset as u128;
        at_most(
            "the copy's last input index, offset + (n − 1)·stride",
            last,
            u32::MAX - 1,
        )?;
        Ok([last as usize + 1, n as usize])
    }
}

pub struct Access;

impl Family for Access {
    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    const NAME: &'static str = "access";
    const SIZE: SizeSyntax = SizeSyntax::n(
        "Elements the access lessons' copy writes",
        &[1 << 24],
        &[3001],
        "1048576,16777216",
    );
    const BOUND: Bound = Bound::Memory;
    const SQUARE_AXIS: &'static str = "n (elements copied)";

    type Shape = AccessShape;

    fn options(_: bool) -> Vec<Arg> {
        let stride = "The access lessons' copy reads every STRIDE-th element";
        let offset = "The access lessons' copy reads from element OFFSET on";
        vec![
            option("stride", "STRIDE", value_parser!(usize), "1", stride),
            option("offset", "OFFSET", value_parser!(usize), "0", offset),
        ]
    }

    fn shape(sizes: &[usize], options: &ArgMatches) -> AccessShape {
        let [n] = dims(sizes);
        let (stride, offset) = (value(options, "stride"), value(options, "offset"));
        AccessShape { n, stride, offset }
    }

    fn problem(shape: AccessShape) -> Result<Problem> {
        shape.checked_lens()?;
        Ok(Problem { n: shape.n as u32 })
    }

    /// Strides and offsets either side of a sector, a line and a warp;
    /// stride 0 (every thread reads one element) and n of 1.
    fn test_shapes() -> Vec<AccessShape> {
        [
            (1, 1, 0),
            (1, 7, 5),
            (255, 1, 0),
            (257, 1, 3),
            (1000, 2, 1),
            (1000, 3, 0),
            (777, 8, 7),
            (513, 32, 8),
            (300, 33, 31),
            (129, 0, 11),
        ]
        .into_iter()
        .map(|(n, stride, offset)| AccessShape { n, stride, offset })
        .collect()
    }

    /// No arithmetic; the bytes used are n read and n written.
    fn work(shape: AccessShape) -> Work {
        let bytes = 4.0 * shape.n as f64;
        Work::new(Op::None, 0.0, bytes, bytes)
    }

    /// The input twice (inputs and the emulator's buffer), the reference
    /// and its tolerances, the output read back.
    fn host_bytes(shape: AccessShape) -> f64 {
        let input = (shape.n.saturating_sub(1) as f64) * shape.stride as f64 + shape.offset as f64;
        8.0 * input + 20.0 * shape.n as f64
    }

    type Inputs = Vec<f32>;
    type Layout = Arrays<2>;
    type Buffers<B: Backend> = InputOutput<B>;

    fn inputs(shape: AccessShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        let [input, _] = shape.checked_lens()?;
        Ok(uniform_floats(input, rng))
    }

    fn layout(shape: AccessShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, shape.checked_lens()?))
    }

    fn reference(shape: AccessShape, input: &Vec<f32>) -> Expected {
        let values = (0..shape.n)
            .into_par_iter()
            .map(|i| f64::from(input[shape.offset + i * shape.stride]))
            .collect();
        Expected::exact(values)
    }

    const CPU: &'static str = "the same gather, every core";

    fn cpu(shape: AccessShape, input: &Vec<f32>) -> CpuOutput {
        CpuOutput::par_f32(shape.n, |i| input[shape.offset + i * shape.stride])
    }

    /// The input holds offset + (n − 1)·stride + 1 elements, the output n,
    /// a buffer of its own; every index fits in u32 (checked).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        let (stride, offset) = (on.shape.stride as u32, on.shape.offset as u32);
        (&*input, output, on.problem.n, stride, offset)
    }
}
