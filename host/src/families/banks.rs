//! The bank-conflict lesson's kernel: its shapes, inputs and reference.
//! The reference sums, in f64, the very words each thread reads.

use gpu_std::FULL_SM_THREADS;
use kernels::banks::{Args, BLOCK, KERNELS, Problem, TILE};

use crate::families::prelude::*;

shape! {
    /// `blocks` blocks whose warps read the tile at `stride`, `rounds` words
    /// a thread.
    pub struct BanksShape {
        pub blocks: usize,
        pub rounds: usize,
        #[option("bank-stride", "WORDS", "1",
            "The stride, in 4-byte words, of the bank-conflict lesson's reads")]
        pub stride: u32,
    }
    shown("stride {stride} × {blocks} blocks × {rounds} reads"), side(stride),
    short(format!("stride {stride}"))
}

impl BanksShape {
    /// Reads at `stride` by the blocks that fill every SM of a GPU of `sms`
    /// SMs once, the on-GPU size's reads each.
    pub fn filling(sms: u32, stride: u32) -> Self {
        Self {
            stride,
            blocks: sms as usize * (FULL_SM_THREADS / BLOCK) as usize,
            rounds: Banks::SIZE.on_gpu[1],
        }
    }

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

/// What thread `thread` reads, in f64: the terms of its sum.
fn reads(shape: BanksShape, tile: &[f32], thread: usize) -> impl Iterator<Item = f64> {
    let first = (thread as u32 % 32).wrapping_mul(shape.stride);
    (0..shape.rounds as u32)
        .map(move |round| f64::from(tile[(first.wrapping_add(round) & (TILE - 1)) as usize]))
}

family! {
    pub struct Banks("banks", Memory, "stride (words)") {
        size: SizeSyntax {
            value_name: "BLOCKSxREADS", names: &["blocks", "reads per thread"],
            help: "The bank-conflict lesson's blocks and shared-memory reads per thread",
            on_gpu: &[1056, 4096], emulated: &[3, 70], sweep: "1056x4096",
        },
        shape: BanksShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same sums in f64, every core",
    }
}

impl Family for Banks {
    fn problem(shape: BanksShape) -> Result<Problem> {
        let (blocks, _) = shape.arguments()?;
        Ok(Problem { blocks })
    }

    /// Strides without conflicts, with each degree, and past the tile.
    fn test_shapes() -> Vec<BanksShape> {
        [
            (1, 1, 1),
            (2, 33, 2),
            (1, 100, 3),
            (3, 17, 8),
            (2, 40, 32),
            (1, 9, 33),
            (2, 64, 1000),
        ]
        .map(BanksShape::from)
        .to_vec()
    }

    /// An addition per word read; the bytes are the tile read from global
    /// memory and the sums written; the reads the lesson is about are
    /// shared memory's, held to its bandwidth.
    fn work(shape: BanksShape) -> Work {
        let tiles = 4.0 * f64::from(TILE) * shape.blocks as f64;
        let sums = 4.0 * shape.threads() as f64;
        Work::new(Op::Flop, shape.bytes_read() / 4.0, tiles, sums)
            .rereading(shape.bytes_read(), Source::Shared)
    }

    fn host_bytes(shape: BanksShape) -> f64 {
        8.0 * f64::from(TILE) + 20.0 * shape.threads() as f64
    }

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
            reads(shape, tile, thread)
        })
    }

    fn cpu(shape: BanksShape, tile: &Vec<f32>) -> CpuOutput {
        CpuOutput::sums(shape.threads(), |thread| reads(shape, tile, thread))
    }

    /// The tile holds TILE elements, the sums one per thread, a buffer of
    /// their own; the reads a thread are within u32 (checked).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.shape.stride, on.shape.rounds as u32)
    }
}
