//! Matrix transpose, f32, row-major, the kernels of `examples/transpose/`:
//! the family's shapes, inputs and reference, and a device copy of the
//! matrix as its baseline, which moves the same bytes with every access
//! whole: the most a transpose can hope to match.

use kernels::transpose::{Args, KERNELS, Shape as Problem, TILE};

use crate::families::prelude::*;
use crate::family::{Baseline, DEVICE_COPY};
use crate::reference;

shape! {
    /// A row-major `rows` × `cols` input, transposed into a `cols` × `rows`
    /// output.
    pub struct TransposeShape {
        pub rows: usize,
        pub cols: usize,
    }
    shown("{rows}×{cols}"), side((rows as f64 * cols as f64).sqrt()),
    short(square_or_whole(&[rows, cols], &TransposeShape { rows, cols }))
}

impl TransposeShape {
    /// A `rows` × `cols` input.
    pub fn new(rows: usize, cols: usize) -> Self {
        Self { rows, cols }
    }

    /// The element count of the input and of the output, once neither
    /// dimension is zero and every index the kernels compute fits in `u32`.
    pub fn checked_len(self) -> Result<usize> {
        let rows = nonzero("rows (of the input)", self.rows)?;
        let cols = nonzero("cols (columns of the input)", self.cols)?;
        let len = indexable("the matrix (rows×cols)", &[rows, cols])?;
        // A block's threads index whole tiles, past the last row where it is
        // not a multiple of the tile: the grid's rows must fit in u32 too.
        // (Its columns are held far lower by the grid's limit along y.)
        let tiled = u128::from(rows.div_ceil(TILE)) * u128::from(TILE);
        at_most(
            "rows (of the input), rounded up to whole 32-row tiles",
            tiled,
            u32::MAX,
        )?;
        Ok(len)
    }
}

/// The input and its transpose, each `rows` × `cols` elements.
/// Input columns, so output rows, that one task of the CPU baseline
/// transposes: each input row gives it one 128-byte line, and its 32 output
/// rows are written a line at a time as it walks down the input.
const CPU_BLOCK: usize = 32;

/// The transpose family: naive, tiled and padded.
/// The matrices' names in errors.
const MATRICES: [&str; 2] = ["input matrix", "transposed matrix"];

family! {
    pub struct Transpose("transpose", Memory, "n (the matrix is n×n)") {
        size: SizeSyntax {
            value_name: "ROWSxCOLS", names: &["rows", "cols"],
            help: "Transpose input ROWS×COLS (the output is COLS×ROWS), or one number for a square",
            // 256 MiB each way: five times the L2 of an H100, so that the
            // kernels are timed against memory, not the cache.
            on_gpu: &[8192], emulated: &[100, 75],
            // From 4 MiB, which an L2 holds, to 1 GiB a matrix.
            sweep: "1024,2048,4096,8192,16384",
        },
        shape: TransposeShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "blocked transpose, every core (rayon)", benched: true,
    }
}

impl Family for Transpose {
    fn problem(shape: TransposeShape) -> Result<Problem> {
        shape.checked_len()?;
        let [rows, cols] = [shape.rows, shape.cols].map(|d| d as u32);
        Ok(Problem { rows, cols })
    }

    /// A single element, single rows and columns, sides either side of the
    /// tile and of the block's 8 rows, and rectangles both ways round,
    /// several tiles long.
    fn test_shapes() -> Vec<TransposeShape> {
        [
            (1, 1),
            (1, 37),
            (37, 1),
            (7, 9),
            (8, 8),
            (32, 32),
            (31, 33),
            (33, 31),
            (37, 70),
            (64, 96),
            (127, 129),
            (257, 1000),
            (4097, 33),
            (33, 4097),
        ]
        .map(TransposeShape::from)
        .to_vec()
    }

    /// No arithmetic; the fewest bytes are every element read once and
    /// written once, 8 bytes an element.
    fn work(shape: TransposeShape) -> Work {
        let bytes = 4.0 * shape.rows as f64 * shape.cols as f64;
        Work::new(Op::None, 0.0, bytes, bytes)
    }

    /// One move an element, in the reference and in every kernel: what the
    /// work limits count, where the roofline counts no operation.
    fn cost(shape: TransposeShape) -> f64 {
        shape.rows as f64 * shape.cols as f64
    }

    /// 36 bytes an element: the input, the reference in f32 and then in
    /// f64 with its tolerances, the output read back, and the emulator's
    /// input and output.
    fn host_bytes(shape: TransposeShape) -> f64 {
        36.0 * shape.rows as f64 * shape.cols as f64
    }

    fn inputs(shape: TransposeShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Ok(uniform_floats(shape.checked_len()?, rng))
    }

    fn layout(shape: TransposeShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(MATRICES, [shape.checked_len()?; 2]))
    }

    /// Exact: the values are moved, never rounded, so every tolerance is 0.
    /// Random values in [−1, 1) hold no −0 and no NaN, so an output equal
    /// to the reference is equal to it bit for bit, and the poison (NaN)
    /// left where a kernel wrote nothing always fails.
    fn reference(shape: TransposeShape, input: &Vec<f32>) -> Expected {
        let values: Vec<f64> = reference::transpose(input, [shape.rows, shape.cols])
            .into_par_iter()
            .map(f64::from)
            .collect();
        Expected::exact(values)
    }

    /// Written for speed where the reference is written for clarity: each
    /// task takes `CPU_BLOCK` input columns, reading a line of each input
    /// row and filling its output rows a line at a time, tasks in parallel.
    fn cpu(shape: TransposeShape, input: &Vec<f32>) -> CpuOutput {
        let TransposeShape { rows, cols } = shape;
        let mut output = vec![0.0f32; rows * cols];
        output
            .par_chunks_mut(CPU_BLOCK * rows)
            .enumerate()
            .for_each(|(block, out)| {
                let (first, width) = (block * CPU_BLOCK, out.len() / rows);
                for (row, line) in input.chunks(cols).enumerate() {
                    for (col, &value) in line[first..first + width].iter().enumerate() {
                        out[col * rows + row] = value;
                    }
                }
            });
        CpuOutput::F32(output)
    }

    /// Both matrices hold rows×cols elements, in buffers of their own, and
    /// every index fits in u32.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.problem.rows, on.problem.cols)
    }

    /// The device copy: the same bytes, each read once and written once,
    /// in order, as fast as the memory goes.
    fn baselines(_: &[&Kernel<Args, Problem>]) -> Vec<Baseline<Self>> {
        vec![Baseline::<Self>::device_copy(|tools, _, buffers| {
            Ok(tools.gpu.copy(&buffers.input, &mut buffers.output)?)
        })]
    }

    /// Every kernel against the copy: its ratio is its share of the
    /// bandwidth a copy of the same bytes reaches.
    fn baseline_of(_: &Kernel<Args, Problem>) -> Option<&'static str> {
        Some(DEVICE_COPY)
    }
}
