//! The read-only cache lesson's kernels: their shapes, inputs and
//! reference. The reference sums each window in f64, in the kernels' order.

use kernels::readonly::{Args, BLOCK, KERNELS, MAX_RADIUS, Problem};

use crate::families::prelude::*;

shape! {
    /// n elements, each the sum of the 2·radius + 1 around it.
    pub struct ReadOnlyShape {
        pub n: usize,
        #[option("stencil-radius", "R", "8",
            "Neighbours on each side that the read-only cache lesson's stencil sums")]
        pub radius: u32,
    }
    shown("{n} r={radius}"), side(n)
}

impl ReadOnlyShape {
    /// Bytes of the windows' reads: every element of every window, 4
    /// bytes each, as the kernels without a tile load them.
    pub fn window_bytes(self) -> f64 {
        4.0 * self.window_elements() as f64
    }

    /// Elements of every window together, the clipped ones at the ends
    /// left out: each element's own, and for each distance d from 1 to r
    /// the n − d pairs d apart, each pair in the other's window.
    fn window_elements(self) -> u64 {
        let n = self.n as u64;
        n + 2
            * (1..=u64::from(self.radius))
                .map(|d| n.saturating_sub(d))
                .sum::<u64>()
    }
}

/// The input's indices of element i's window, clipped to 0..n.
fn window(i: u64, n: u64, radius: u64) -> std::ops::Range<u64> {
    i.saturating_sub(radius)..(i + radius).min(n - 1) + 1
}

family! {
    pub struct ReadOnly("readonly", Memory, "n (elements)") {
        size: SizeSyntax::n("Elements of the read-only cache lesson's stencil", &[1 << 25], &[3001], "33554432"),
        shape: ReadOnlyShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same sums in f32, every core",
    }
}

impl Family for ReadOnly {
    /// The radius at most [`MAX_RADIUS`], the tile's halo; n plus a block
    /// and both halos within `u32`, the shared kernel's tile indices.
    fn problem(shape: ReadOnlyShape) -> Result<Problem> {
        let n = nonzero("n (elements)", shape.n)?;
        at_most("the stencil's radius", shape.radius, MAX_RADIUS)?;
        at_most("n (elements)", n, u32::MAX - BLOCK - 2 * MAX_RADIUS)?;
        Ok(Problem { n })
    }

    /// A window wider than the input, one element, a block and one more,
    /// halos reaching into the neighbouring blocks, the largest radius.
    fn test_shapes() -> Vec<ReadOnlyShape> {
        let shapes = [
            (1, 0),
            (1, 3),
            (5, 8),
            (256, 1),
            (257, 32),
            (1000, 5),
            (3001, 17),
        ];
        shapes.map(ReadOnlyShape::from).to_vec()
    }

    /// An addition per element of every window; the fewest bytes are the
    /// input read once and the output written once.
    fn work(shape: ReadOnlyShape) -> Work {
        let bytes = 4.0 * shape.n as f64;
        Work::new(Op::Flop, shape.window_elements() as f64, bytes, bytes)
    }

    fn host_bytes(shape: ReadOnlyShape) -> f64 {
        28.0 * shape.n as f64
    }

    fn inputs(shape: ReadOnlyShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Self::problem(shape)?;
        Ok(uniform_floats(shape.n, rng))
    }

    fn layout(shape: ReadOnlyShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.n; 2]))
    }

    /// Tolerance: a sum of 2r + 1 terms in order, within γ(2r + 1)·Σ|x|.
    fn reference(shape: ReadOnlyShape, input: &Vec<f32>) -> Expected {
        Expected::f32_sums(shape.n, 2 * shape.radius as usize + 1, |i| {
            window(i as u64, shape.n as u64, u64::from(shape.radius))
                .map(|j| f64::from(input[j as usize]))
        })
    }

    fn cpu(shape: ReadOnlyShape, input: &Vec<f32>) -> CpuOutput {
        CpuOutput::par_f32(shape.n, |i| {
            window(i as u64, shape.n as u64, u64::from(shape.radius))
                .map(|j| input[j as usize])
                .sum()
        })
    }

    /// The input and the output hold n elements each, the output a buffer
    /// of its own that nothing else writes; the radius is at most
    /// MAX_RADIUS and n leaves room for a block and both halos.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.problem.n, on.shape.radius)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windows_elements_are_counted_window_by_window() {
        for (n, radius) in [(1, 0), (1, 3), (5, 8), (7, 2), (300, 32)] {
            let shape = ReadOnlyShape { n, radius };
            let counted: u64 = (0..n as u64)
                .map(|i| window(i, n as u64, u64::from(radius)).count() as u64)
                .sum();
            assert_eq!(shape.window_elements(), counted, "{shape}");
        }
    }
}
