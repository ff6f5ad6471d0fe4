//! The register and local-memory lesson's kernels: their shapes, inputs
//! and reference.

use kernels::registers::{Args, KERNELS, LENGTH, Problem};

use crate::families::prelude::*;

shape! {
    /// n threads, each with an array of [`LENGTH`] elements, rotated by
    /// `rotation`.
    pub struct RegistersShape {
        pub n: usize,
        #[option("rotation", "ELEMENTS", "5", "How far the register lesson's kernels rotate each array")]
        pub rotation: u32,
    }
    shown("{n} × {LENGTH} rotated {rotation}"), side(n), short(n.to_string())
}

impl RegistersShape {
    /// The input's elements, once they fit the kernels' `u32` indices.
    fn checked_len(self) -> Result<usize> {
        let n = nonzero("n (threads)", self.n)?;
        indexable("the arrays (LENGTH × n)", &[LENGTH, n])
    }

    /// Bytes one launch reads from global memory.
    pub fn bytes_read(self) -> f64 {
        4.0 * f64::from(LENGTH) * self.n as f64
    }
}

/// The buffers' names in errors: every thread's array, and a result a
/// thread.
const NAMES: [&str; 2] = ["arrays", "results"];

/// Thread i's result, in f64, and its tolerance: Σₖ a[k]·(w + s), w the
/// rotated weight of k and s the array's sum.
fn result(shape: RegistersShape, arrays: &[f32], i: usize) -> (f64, f64) {
    let length = LENGTH as usize;
    let element = |k: usize| f64::from(arrays[k * shape.n + i]);
    let sum: f64 = (0..length).map(element).sum();
    let magnitude: f64 = (0..length).map(|k| element(k).abs()).sum();
    let rotation = shape.rotation as usize % length;
    let (mut value, mut bound) = (0.0, 0.0);
    for k in 0..length {
        let weight = ((k + length - rotation) % length + 1) as f64;
        value += element(k) * (weight + sum);
        bound += element(k).abs() * (weight + sum.abs());
    }
    let unit = f64::from(f32::EPSILON) / 2.0;
    // Each term's rounding, and the error of the f32 sum inside every term.
    let tolerance = gamma(length + 2, unit) * bound + gamma(length, unit) * magnitude * magnitude;
    (value, tolerance)
}

family! {
    pub struct Registers("registers", Memory, "n (threads)") {
        size: SizeSyntax::n("Threads of the register lesson's kernels, each with an array of 64 floats", &[1 << 21], &[300], "2097152"),
        shape: RegistersShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same sums in f64, every core",
    }
}

impl Family for Registers {
    fn problem(shape: RegistersShape) -> Result<Problem> {
        shape.checked_len()?;
        Ok(Problem { n: shape.n as u32 })
    }

    /// No rotation, one past the array, and blocks left part-full.
    fn test_shapes() -> Vec<RegistersShape> {
        let shapes = [
            (1, 0),
            (31, 1),
            (257, 5),
            (300, 63),
            (1000, 64),
            (513, 1_000_003),
        ];
        shapes.map(RegistersShape::from).to_vec()
    }

    /// Per element of an array: an addition into the sum, then an
    /// addition, a multiplication and an accumulation.
    fn work(shape: RegistersShape) -> Work {
        let ops = 4.0 * f64::from(LENGTH) * shape.n as f64;
        Work::new(Op::Flop, ops, shape.bytes_read(), 4.0 * shape.n as f64)
    }

    fn host_bytes(shape: RegistersShape) -> f64 {
        8.0 * f64::from(LENGTH) * shape.n as f64 + 20.0 * shape.n as f64
    }

    fn inputs(shape: RegistersShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Ok(uniform_floats(shape.checked_len()?, rng))
    }

    fn layout(shape: RegistersShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.checked_len()?, shape.n]))
    }

    fn reference(shape: RegistersShape, arrays: &Vec<f32>) -> Expected {
        Expected::par_from_fn(shape.n, |i| result(shape, arrays, i))
    }

    fn cpu(shape: RegistersShape, arrays: &Vec<f32>) -> CpuOutput {
        CpuOutput::par_f32(shape.n, |i| result(shape, arrays, i).0 as f32)
    }

    /// The arrays hold LENGTH·n elements, within u32, and the results n, a
    /// buffer of their own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.problem.n, on.shape.rotation)
    }
}
