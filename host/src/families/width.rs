//! The access-width lesson's copies: their shapes, inputs and reference.
//! A copy is exact: the reference is the input, byte for byte.

use kernels::width::{Args, KERNELS, Problem};
use rand::Rng;
use rand::distr::Uniform;

use crate::families::prelude::*;
use crate::verify::random_vec;

shape! {
    /// Bytes copied.
    pub struct WidthShape {
        pub bytes: usize,
    }
    shown("{bytes} bytes"), side(bytes), short(bytes.to_string())
}

family! {
    pub struct Width("width", Memory, "bytes copied") {
        size: SizeSyntax {
            value_name: "BYTES", names: &["bytes"],
            help: "Bytes the access-width lesson's copies move", on_gpu: &[1 << 26],
            emulated: &[3001], sweep: "67108864",
        },
        shape: WidthShape, inputs: Vec<u8>, layout: Arrays<2>, buffers: InputOutput<B, u8>,
        cpu: "a copy of the bytes",
    }
}

impl Family for Width {
    fn problem(shape: WidthShape) -> Result<Problem> {
        Ok(Problem {
            bytes: nonzero("bytes copied", shape.bytes)?,
        })
    }

    /// Fewer bytes than any width, and every remainder of 16.
    fn test_shapes() -> Vec<WidthShape> {
        let sizes = [1, 3, 15, 16, 17, 100, 1000, 4096, 4099, 65_551];
        sizes.map(|bytes| WidthShape { bytes }).to_vec()
    }

    fn work(shape: WidthShape) -> Work {
        let bytes = shape.bytes as f64;
        Work::new(Op::None, 0.0, bytes, bytes)
    }

    fn host_bytes(shape: WidthShape) -> f64 {
        20.0 * shape.bytes as f64
    }

    /// Bytes other than the poison, 255, so that a byte the copy missed
    /// shows.
    fn inputs(shape: WidthShape, rng: &mut SmallRng) -> Result<Vec<u8>> {
        Self::problem(shape)?;
        let samples = Uniform::new_inclusive(0u8, 254).expect("a valid range");
        Ok(random_vec(shape.bytes, samples, rng.random()))
    }

    fn layout(shape: WidthShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.bytes; 2]))
    }

    fn reference(_: WidthShape, input: &Vec<u8>) -> Expected {
        Expected::exact(input.par_iter().map(|&byte| f64::from(byte)).collect())
    }

    fn cpu(_: WidthShape, input: &Vec<u8>) -> CpuOutput {
        CpuOutput::U8(input.clone())
    }

    /// Both buffers hold the bytes, the output its own, each starting
    /// where the backend allocated it (256-byte aligned on the GPU).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.problem.bytes)
    }
}
