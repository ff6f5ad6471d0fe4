//! The bulk-copy lesson's kernels: their shapes, inputs and reference.
//! Each tile of the input comes out reversed, exactly, so the reference is
//! the input itself, reordered.

use kernels::bulk::{Args, KERNELS, Problem, TILE};

use crate::families::prelude::*;

shape! {
    /// n elements, each tile of [`TILE`] reversed in place.
    pub struct BulkShape {
        pub n: usize,
    }
    shown("{n}"), side(n)
}

/// Each tile of `input` reversed, the last one as long as it is.
pub fn reversed_tiles(input: &[f32]) -> Vec<f32> {
    input
        .chunks(TILE as usize)
        .flat_map(|tile| tile.iter().rev().copied())
        .collect()
}

family! {
    pub struct Bulk("bulk", Memory, "n (elements)") {
        size: SizeSyntax::n("Elements the bulk-copy lesson's kernels stage, a tile of 4096 a block", &[1 << 26], &[10_001], "67108864"),
        shape: BulkShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same reversal, one core",
    }
}

impl Family for Bulk {
    fn problem(shape: BulkShape) -> Result<Problem> {
        let n = nonzero("n (elements)", shape.n)?;
        Ok(Problem { n })
    }

    /// One element; fewer than a 16-byte chunk; a tile with 1 to 3
    /// elements past its chunks; a tile exactly; a tile and one element;
    /// several tiles and a ragged last one.
    fn test_shapes() -> Vec<BulkShape> {
        [1, 3, 6, 4095, 4096, 4097, 12_291]
            .map(|n| BulkShape { n })
            .to_vec()
    }

    /// No arithmetic; the fewest bytes are the input read once and the
    /// output written once.
    fn work(shape: BulkShape) -> Work {
        let bytes = 4.0 * shape.n as f64;
        Work::new(Op::Flop, 0.0, bytes, bytes)
    }

    fn host_bytes(shape: BulkShape) -> f64 {
        28.0 * shape.n as f64
    }

    fn inputs(shape: BulkShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Self::problem(shape)?;
        Ok(uniform_floats(shape.n, rng))
    }

    fn layout(shape: BulkShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.n; 2]))
    }

    /// Exact: a copy.
    fn reference(_: BulkShape, input: &Vec<f32>) -> Expected {
        let values = reversed_tiles(input).into_iter().map(f64::from).collect();
        Expected::exact(values)
    }

    fn cpu(_: BulkShape, input: &Vec<f32>) -> CpuOutput {
        CpuOutput::F32(reversed_tiles(input))
    }

    /// Both buffers hold n elements (`problem` checked n within u32); the
    /// output is a buffer of its own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        (&on.buffers.input, &mut on.buffers.output, on.problem.n)
    }
}
