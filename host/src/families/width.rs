//! The access-width lesson's copies: their shapes, inputs and reference.
//! A copy is exact: the reference is the input, byte for byte.

use std::fmt;

use clap::ArgMatches;
use gpu_host::backend::{Backend, Buffer};
use gpu_std::Kernel;
use kernels::width::{Args, KERNELS, Problem};
use rand::distr::Uniform;
use rand::{Rng, rngs::SmallRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::family::{
    Bound, CpuOutput, Family, Kernels, Op, Shape, SizeSyntax, Work, dims, expect_len, nonzero,
};
use crate::reference::Expected;
use crate::verify::random_vec;

/// Bytes copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WidthShape {
    pub bytes: usize,
}

impl fmt::Display for WidthShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", self.bytes)
    }
}

impl Shape for WidthShape {
    fn side(&self) -> f64 {
        self.bytes as f64
    }

    fn short(&self) -> String {
        self.bytes.to_string()
    }
}

pub struct Buffers<B: Backend> {
    pub input: Buffer<B, u8>,
    pub output: Buffer<B, u8>,
}

pub struct Width;

impl Family for Width {
    const NAME: &'static str = "width";
    const SIZE: SizeSyntax = SizeSyntax {
        value_name: "BYTES",
        names: &["bytes"],
        help: "Bytes the access-width lesson's copies move",
        on_gpu: &[1 << 26],
        emulated: &[3001],
        sweep: "67108864",
    };
    const BOUND: Bound = Bound::Memory;
    const SQUARE_AXIS: &'static str = "bytes copied";
    const BENCHED: bool = false;

    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    type Shape = WidthShape;
    type Inputs = Vec<u8>;
    type Buffers<B: Backend> = Buffers<B>;
    type Output = u8;

    fn shape(sizes: &[usize], _: &ArgMatches) -> WidthShape {
        let [bytes] = dims(sizes);
        WidthShape { bytes }
    }

    fn problem(shape: WidthShape) -> Result<Problem> {
        Ok(Problem {
            bytes: nonzero("bytes copied", shape.bytes)?,
        })
    }

    /// Fewer bytes than any width, and every remainder of 16.
    fn test_shapes() -> Vec<WidthShape> {
        [1, 3, 15, 16, 17, 100, 1000, 4096, 4099, 65_551]
            .into_iter()
            .map(|bytes| WidthShape { bytes })
            .collect()
    }

    fn work(shape: WidthShape) -> Work {
        let bytes = shape.bytes as f64;
        Work {
            op: Op::None,
            ops: 0.0,
            bytes: 2.0 * bytes,
            output_bytes: bytes,
        }
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

    fn reference(_: WidthShape, input: &Vec<u8>) -> Expected {
        Expected::exact(input.par_iter().map(|&byte| f64::from(byte)).collect())
    }

    fn upload<B: Backend>(backend: &B, shape: WidthShape, input: &Vec<u8>) -> Result<Buffers<B>> {
        Ok(Buffers {
            input: backend.upload("input", input)?,
            output: backend.alloc("output", shape.bytes)?,
        })
    }

    fn output<B: Backend>(buffers: &mut Buffers<B>) -> &mut Buffer<B, u8> {
        &mut buffers.output
    }

    fn launch<B: Backend>(
        backend: &B,
        kernel: &Kernel<Args, Problem>,
        shape: WidthShape,
        buffers: &mut Buffers<B>,
    ) -> Result<()> {
        let problem = Self::problem(shape)?;
        expect_len("input", shape.bytes, backend.len(&buffers.input))?;
        expect_len("output", shape.bytes, backend.len(&buffers.output))?;
        let Buffers { input, output } = buffers;
        // SAFETY: both buffers hold the bytes, the output its own, each
        // starting where the backend allocated it (256-byte aligned on the
        // GPU).
        Ok(unsafe { backend.launch(kernel, &problem, (&*input, output, problem.bytes)) }?)
    }

    const CPU: &'static str = "a copy of the bytes";

    fn cpu(_: WidthShape, input: &Vec<u8>) -> CpuOutput {
        CpuOutput::U8(input.clone())
    }
}
