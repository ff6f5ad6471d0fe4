//! The one-shot all-reduce's sum: its shapes, inputs and reference. A sum
//! of two f32 is rounded once, so the reference is the same sum, exact.

use kernels::pair_sum::{Args, KERNELS, Problem};

use crate::families::prelude::*;

shape! {
    /// Two vectors of n elements and their sum.
    pub struct PairSumShape {
        pub n: usize,
    }
    shown("{n}"), side(n)
}

const NAMES: [&str; 3] = ["mine", "theirs", "sum"];

family! {
    pub struct PairSum("pair-sum", Memory, "n (elements)") {
        size: SizeSyntax::n("Elements of each vector the all-reduce lesson's sum adds", &[1 << 26], &[1027], "67108864"),
        shape: PairSumShape, inputs: [Vec<f32>; 2], layout: Arrays<3>, buffers: TwoInputs<B>,
        cpu: "the same sums, every core",
    }
}

impl Family for PairSum {
    /// n from 1 to 2³² − 4, so that a thread's first element is a u32.
    fn problem(shape: PairSumShape) -> Result<Problem> {
        let n = nonzero("n (elements)", shape.n)?;
        at_most("n (elements)", shape.n as u128, u32::MAX - 3)?;
        Ok(Problem { n })
    }

    /// Fewer elements than a thread's four; a thread's exactly; one to
    /// three past whole fours; a block's and past it.
    fn test_shapes() -> Vec<PairSumShape> {
        [1, 3, 4, 5, 7, 1024, 1027, 4099]
            .map(|n| PairSumShape { n })
            .to_vec()
    }

    /// An addition an element; both vectors read, the sum written.
    fn work(shape: PairSumShape) -> Work {
        let bytes = 4.0 * shape.n as f64;
        Work::new(Op::Flop, shape.n as f64, 2.0 * bytes, bytes)
    }

    fn host_bytes(shape: PairSumShape) -> f64 {
        40.0 * shape.n as f64
    }

    fn inputs(shape: PairSumShape, rng: &mut SmallRng) -> Result<[Vec<f32>; 2]> {
        Self::problem(shape)?;
        Ok([uniform_floats(shape.n, rng), uniform_floats(shape.n, rng)])
    }

    fn layout(shape: PairSumShape) -> Result<Arrays<3>> {
        Ok(Arrays::new(NAMES, [shape.n; 3]))
    }

    /// Exact: one rounding, the kernel's own.
    fn reference(_: PairSumShape, [mine, theirs]: &[Vec<f32>; 2]) -> Expected {
        let values = mine
            .par_iter()
            .zip(theirs)
            .map(|(a, b)| f64::from(a + b))
            .collect();
        Expected::exact(values)
    }

    fn cpu(shape: PairSumShape, [mine, theirs]: &[Vec<f32>; 2]) -> CpuOutput {
        CpuOutput::par_f32(shape.n, |i| mine[i] + theirs[i])
    }

    /// The three vectors hold n elements each, the sum a buffer of its own,
    /// and n ≤ 2³² − 4 (`problem`).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (mine, theirs, sum) = on.buffers.parts();
        (mine, theirs, sum, on.problem.n)
    }
}
