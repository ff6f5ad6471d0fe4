//! The bank-conflict lesson's kernel: its shapes, inputs and reference.
//! The reference sums, in f64, the very words each thread reads.

use kernels::banks::{Args, BLOCK, KERNELS, Problem, TILE};

use crate::families::prelude::*;

shape! {
    /// `blocks` blocks whose warps read the tile at `stride`, `rounds` words
    /// a thread.
    pub struct BanksShape {
        pub stride: u32,
        pub blocks: usize,
        pub rounds: usize,
    }
    shown "stride {stride} × {blocks} blocks × {rounds} reads", side stride,
    short "stride {stride}"
}

impl BanksShape {
    /// Bytes read from shared memory by one launch.
    pub fn bytes_read(self) -> f64 {
        4.0 * self.threads() as f64 * self.rounds as f64
    }

    /// Lanes of a warp that read one bank at once: gcd(stride, 32).
    pub fn conflict_degree(self) -> u32 {
        let (mut a, mut b) = (self.stride, 32);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }

    fn threads(self) -> usize {
        self.blocks * BLOCK as usize
    }

    fn arguments(self) -> Result<(u32, u32)> {
        let blocks = nonzero("blocks", self.blocks)?;
        indexable("the sums (one per thread)", &[blocks, BLOCK])?;
        Ok((blocks, nonzero("reads per thread", self.rounds)?))
    }
}

/// The buffers' names in errors: the input tile and a sum a thread.
const NAMES: [&str; 2] = ["tile", "sums"];

/// The sum, in f64, of what thread `thread` reads, and of the magnitudes.
fn thread_sum(shape: BanksShape, tile: &[f32], thread: usize) -> (f64, f64) {
    let first = (thread as u32 % 32).wrapping_mul(shape.stride);
    (0..shape.rounds as u32).fold((0.0, 0.0), |(sum, magnitude), round| {
        let value = f64::from(tile[(first.wrapping_add(round) & (TILE - 1)) as usize]);
        (sum + value, magnitude + value.abs())
    })
}

pub struct Banks;

impl Family for Banks {
    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    const NAME: &'static str = "banks";
    const SIZE: SizeSyntax = SizeSyntax {
        value_name: "BLOCKSxREADS",
        names: &["blocks", "reads per thread"],
        help: "The bank-conflict lesson's blocks and shared-memory reads per thread",
        on_gpu: &[1056, 4096],
        emulated: &[3, 70],
        sweep: "1056x4096",
    };
    const BOUND: Bound = Bound::Memory;
    const SQUARE_AXIS: &'static str = "stride (words)";

    type Shape = BanksShape;

    fn options(_: bool) -> Vec<Arg> {
        let help = "The stride, in 4-byte words, of the bank-conflict lesson's reads";
        let parser = value_parser!(u32);
        vec![option("bank-stride", "WORDS", parser, "1", help)]
    }

    fn shape(sizes: &[usize], options: &ArgMatches) -> BanksShape {
        let [blocks, rounds] = dims(sizes);
        let stride = value(options, "bank-stride");
        BanksShape {
            stride,
            blocks,
            rounds,
        }
    }

    fn problem(shape: BanksShape) -> Result<Problem> {
        let (blocks, _) = shape.arguments()?;
        Ok(Problem { blocks })
    }

    /// Strides without conflicts, with each degree, and past the tile.
    fn test_shapes() -> Vec<BanksShape> {
        let shape = |(stride, blocks, rounds)| BanksShape {
            stride,
            blocks,
            rounds,
        };
        [
            (1, 1, 1),
            (2, 2, 33),
            (3, 1, 100),
            (8, 3, 17),
            (32, 2, 40),
            (33, 1, 9),
            (1000, 2, 64),
        ]
        .map(shape)
        .to_vec()
    }

    /// An addition per word read; the bytes are the tile read from global
    /// memory and the sums written: the reads the lesson is about are
    /// shared memory's.
    fn work(shape: BanksShape) -> Work {
        let tiles = 4.0 * f64::from(TILE) * shape.blocks as f64;
        let sums = 4.0 * shape.threads() as f64;
        Work::new(Op::Flop, shape.bytes_read() / 4.0, tiles, sums)
    }

    fn host_bytes(shape: BanksShape) -> f64 {
        8.0 * f64::from(TILE) + 20.0 * shape.threads() as f64
    }

    type Inputs = Vec<f32>;
    type Layout = Arrays<2>;
    type Buffers<B: Backend> = InputOutput<B>;

    fn inputs(shape: BanksShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        shape.arguments()?;
        Ok(uniform_floats(TILE as usize, rng))
    }

    fn layout(shape: BanksShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [TILE as usize, shape.threads()]))
    }

    /// Tolerance: a running sum of `rounds` terms, within γ(rounds)·Σ|x|.
    fn reference(shape: BanksShape, tile: &Vec<f32>) -> Expected {
        Expected::f32_sums(shape.threads(), shape.rounds, |thread| {
            thread_sum(shape, tile, thread)
        })
    }

    const CPU: &'static str = "the same sums in f64, every core";

    fn cpu(shape: BanksShape, tile: &Vec<f32>) -> CpuOutput {
        CpuOutput::sums(shape.threads(), |thread| thread_sum(shape, tile, thread))
    }

    /// The tile holds TILE elements, the sums one per thread, a buffer of
    /// their own; the reads a thread are within u32 (checked).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.shape.stride, on.shape.rounds as u32)
    }
}
