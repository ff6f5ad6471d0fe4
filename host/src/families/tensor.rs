//! The tensor-copy lesson's kernels: a transpose whose tiles are staged by
//! the threads, by their asynchronous copies or by the Tensor Memory
//! Accelerator. Its shapes, inputs and reference are the transpose's, its
//! baseline the device copy; the input's rows are whole 16-byte chunks, as
//! a tensor map asks.

use gpu_host::TensorMap;
use gpu_host::backend::Buffer;
use kernels::tensor::{Args, KERNELS, Problem, tensor_map};

use crate::families::prelude::*;
use crate::families::transpose::{Transpose, TransposeShape};
use crate::family::{Baseline, DEVICE_COPY};

/// The transpose's shape: its cols must make whole 16-byte rows.
pub type TensorShape = TransposeShape;

/// The input as a tensor map, which owns it, and the output.
pub struct MappedInput<B: Backend> {
    pub map: TensorMap<B::Memory>,
    pub output: Buffer<B, f32>,
}

impl<B: Backend> Buffers<B> for MappedInput<B> {
    type Output = f32;
    type Inputs = Vec<f32>;
    /// The problem: the matrix's sides, which make the tensor map.
    type Layout = Problem;

    fn upload(backend: &B, input: &Vec<f32>, problem: &Problem) -> Result<Self> {
        let source = backend.upload("input matrix", input)?;
        Ok(MappedInput {
            map: backend.tensor_map(source, tensor_map(problem))?,
            output: backend.alloc(OUTPUT, len(problem))?,
        })
    }

    fn expect(&self, backend: &B, problem: &Problem) -> Result<()> {
        expect_map(
            "the input's tensor map",
            tensor_map(problem),
            self.map.shape(),
        )?;
        expect_len(OUTPUT, len(problem), backend.len(&self.output))
    }

    fn output(&mut self) -> &mut Buffer<B, f32> {
        &mut self.output
    }
}

/// The output's name in errors.
const OUTPUT: &str = "transposed matrix";

/// The element count of the input, and of the output.
fn len(problem: &Problem) -> usize {
    problem.rows as usize * problem.cols as usize
}

/// The element count of a shape's input, once the transpose takes it and
/// its rows are whole 16-byte chunks.
fn checked_len(shape: TensorShape) -> Result<usize> {
    let len = shape.checked_len()?;
    let why = ": a tensor map's rows are whole 16-byte chunks";
    multiple_of("cols (columns of the input)", shape.cols, 4, why)?;
    Ok(len)
}

family! {
    pub struct Tensor("tensor", Memory, Transpose::SQUARE_AXIS) {
        size: SizeSyntax {
            value_name: "ROWSxCOLS", names: &["rows", "cols"],
            help: "Transpose input ROWS×COLS staged by tensor copies (COLS a multiple of 4), or one \
                   number for a square",
            on_gpu: &[8192], emulated: &[100, 76], sweep: "1024,2048,4096,8192,16384",
        },
        shape: TensorShape, inputs: Vec<f32>, layout: Problem, buffers: MappedInput<B>,
        cpu: Transpose::CPU,
    }
}

impl Family for Tensor {
    fn problem(shape: TensorShape) -> Result<Problem> {
        checked_len(shape)?;
        let kernels::transpose::Shape { rows, cols } = Transpose::problem(shape)?;
        Ok(Problem { rows, cols })
    }

    /// One row of one chunk; single rows and columns of chunks; sides
    /// either side of the tile's 32 columns and 128 rows; rectangles both
    /// ways round, several tiles long, ragged at both edges.
    fn test_shapes() -> Vec<TensorShape> {
        [
            (1, 4),
            (1, 36),
            (37, 4),
            (7, 8),
            (128, 32),
            (127, 36),
            (129, 28),
            (37, 72),
            (64, 96),
            (257, 132),
            (300, 1000),
            (4097, 36),
            (33, 4100),
        ]
        .map(TensorShape::from)
        .to_vec()
    }

    fn work(shape: TensorShape) -> Work {
        Transpose::work(shape)
    }

    fn cost(shape: TensorShape) -> f64 {
        Transpose::cost(shape)
    }

    fn host_bytes(shape: TensorShape) -> f64 {
        Transpose::host_bytes(shape)
    }

    fn inputs(shape: TensorShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        checked_len(shape)?;
        Transpose::inputs(shape, rng)
    }

    fn layout(shape: TensorShape) -> Result<Problem> {
        Self::problem(shape)
    }

    /// Exact, as the transpose's.
    fn reference(shape: TensorShape, input: &Vec<f32>) -> Expected {
        Transpose::reference(shape, input)
    }

    fn cpu(shape: TensorShape, input: &Vec<f32>) -> CpuOutput {
        Transpose::cpu(shape, input)
    }

    /// The map is the kernels' over the input, which it owns and which
    /// holds rows×cols elements, as the output does in a buffer of its own;
    /// cols is a multiple of 4 and every index fits in u32.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let Problem { rows, cols } = *on.problem;
        let MappedInput { map, output } = on.buffers;
        (map.source(), &*map, output, rows, cols)
    }

    /// The device copy of the same bytes, as for the transpose.
    fn baselines(_: &[&Kernel<Args, Problem>]) -> Vec<Baseline<Self>> {
        vec![Baseline::<Self>::device_copy(|tools, _, buffers| {
            Ok(tools.gpu.copy(buffers.map.source(), &mut buffers.output)?)
        })]
    }

    fn baseline_of(_: &Kernel<Args, Problem>) -> Option<&'static str> {
        Some(DEVICE_COPY)
    }
}
