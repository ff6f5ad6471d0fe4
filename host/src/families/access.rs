//! The copy of the memory-access lessons (coalescing, alignment): its
//! shapes, inputs and reference. Its output is a gather, exact, so the
//! reference is the input itself, element for element.

use kernels::access::{Args, KERNELS, Problem};

use crate::families::prelude::*;

shape! {
    /// n elements copied from input[offset + i·stride].
    pub struct AccessShape {
        pub n: usize,
        #[option("stride", "STRIDE", "1", "The access lessons' copy reads every STRIDE-th element")]
        pub stride: usize,
        #[option("offset", "OFFSET", "0", "The access lessons' copy reads from element OFFSET on")]
        pub offset: usize,
    }
    shown("{n} s={stride} o={offset}"), side(n)
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

family! {
    pub struct Access("access", Memory, "n (elements copied)") {
        size: SizeSyntax::n("Elements the access lessons' copy writes", &[1 << 24], &[3001], "1048576,16777216"),
        shape: AccessShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same gather, every core",
    }
}

impl Family for Access {
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
        .map(AccessShape::from)
        .to_vec()
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
