//! The distributed-shared-memory lesson's kernels: their shapes, inputs
//! and reference. Every kernel gives each thread the sum of the same
//! words of its block's tile, so one reference, exact, checks them all.

use gpu_std::MAX_CLUSTER_BLOCKS;
use kernels::distributed::{Args, BLOCK, KERNELS, Problem, TILE, next_index};
use rand::Rng;

use crate::families::prelude::*;

shape! {
    /// Blocks, each with a tile of [`TILE`] words, in clusters of `cluster`
    /// for the kernels that read a neighbour's tile, summed `rounds` passes
    /// over.
    pub struct DistributedShape {
        pub blocks: usize,
        pub cluster: usize,
        pub rounds: usize,
    }
    shown("{blocks}×{cluster}×{rounds}"), side(blocks)
}

impl DistributedShape {
    /// Words of the input: a tile a block.
    fn input_len(&self) -> usize {
        self.blocks * TILE as usize
    }

    /// Words of the output: one a thread.
    fn output_len(&self) -> usize {
        self.blocks * BLOCK as usize
    }
}

/// Words of [`next_index`]'s walk before it repeats: the 128 words of its
/// bank, 16 a block-wide row's column, 8 columns a warp's width apart.
const PERIOD: usize = (TILE / 32) as usize;

/// Each thread's sum of `rounds` passes of 16 words of its block's tile,
/// from word `thread` on along [`next_index`], wrapping: what every kernel
/// computes.
///
/// Thread `t`'s walk is the one from word `t mod 32`, from its
/// `16·(t / 32)`-th word on, and repeats every `PERIOD` words: so the
/// sum is whole periods and a stretch of one, from each of 32 walks'
/// prefix sums, not billions of additions.
pub fn sums(shape: DistributedShape, input: &[u32]) -> Vec<u32> {
    let reads = shape.rounds * (TILE / BLOCK) as usize;
    let (periods, rest) = ((reads / PERIOD) as u32, reads % PERIOD);
    input
        .chunks(TILE as usize)
        .flat_map(|tile| {
            let prefixes: Vec<Vec<u32>> = (0..32).map(|start| prefix_sums(tile, start)).collect();
            (0..BLOCK as usize).map(move |thread| {
                let prefix = &prefixes[thread % 32];
                let first = TILE as usize / BLOCK as usize * (thread / 32);
                let whole = prefix[PERIOD];
                let stretch = match first + rest {
                    end if end <= PERIOD => prefix[end].wrapping_sub(prefix[first]),
                    end => whole
                        .wrapping_sub(prefix[first])
                        .wrapping_add(prefix[end - PERIOD]),
                };
                whole.wrapping_mul(periods).wrapping_add(stretch)
            })
        })
        .collect()
}

/// The wrapping prefix sums of one period of the walk from word `start`
/// of `tile`: `PERIOD + 1` of them, from 0.
fn prefix_sums(tile: &[u32], start: u32) -> Vec<u32> {
    let mut index = start;
    let mut sums = Vec::with_capacity(PERIOD + 1);
    sums.push(0u32);
    for _ in 0..PERIOD {
        let last = sums[sums.len() - 1];
        sums.push(last.wrapping_add(tile[index as usize]));
        index = next_index(index);
    }
    sums
}

family! {
    pub struct Distributed("distributed", Memory, "blocks") {
        size: SizeSyntax {
            value_name: "BLOCKSxCLUSTERxROUNDS", names: &["blocks", "cluster", "rounds"],
            help: "Blocks, blocks a cluster and passes over each block's tile of 4096 words for the \
                   distributed-shared-memory lesson's kernels",
            on_gpu: &[1056, 8, 64], emulated: &[6, 3, 1], sweep: "1056x8x64",
        },
        shape: DistributedShape, inputs: Vec<u32>, layout: Arrays<2>, buffers: InputOutput<B, u32>,
        cpu: "the same sums, one core",
    }
}

impl Family for Distributed {
    fn problem(shape: DistributedShape) -> Result<Problem> {
        let blocks = nonzero("blocks", shape.blocks)?;
        nonzero("rounds", shape.rounds)?;
        nonzero("words of the input", shape.input_len())?;
        let tiles = shape.blocks.is_multiple_of(shape.cluster.max(1));
        if !(1..=MAX_CLUSTER_BLOCKS as usize).contains(&shape.cluster) || !tiles {
            return Err(Error::ClusterSize {
                cluster: shape.cluster,
                blocks: shape.blocks,
            });
        }
        let rounds = shape.rounds.checked_mul((TILE / BLOCK) as usize);
        nonzero("reads a thread", rounds.unwrap_or(usize::MAX))?;
        Ok(Problem {
            blocks,
            cluster: shape.cluster as u32,
        })
    }

    /// One block alone; a cluster of one; clusters of 2, 3 (no power of
    /// two) and the most, 8; several clusters; several passes, and more
    /// than a walk's period of 8.
    fn test_shapes() -> Vec<DistributedShape> {
        let shapes = [
            (1, 1, 1),
            (3, 1, 2),
            (2, 2, 1),
            (6, 3, 2),
            (8, 8, 1),
            (8, 2, 3),
            (4, 2, 19),
        ];
        shapes.map(DistributedShape::from).to_vec()
    }

    /// One addition a word read; the fewest bytes are the input read once
    /// and the output written once.
    fn work(shape: DistributedShape) -> Work {
        let reads = shape.output_len() as f64 * (shape.rounds * (TILE / BLOCK) as usize) as f64;
        let (read, written) = (
            4.0 * shape.input_len() as f64,
            4.0 * shape.output_len() as f64,
        );
        Work::new(Op::IntAdd, reads, read, written)
    }

    fn host_bytes(shape: DistributedShape) -> f64 {
        8.0 * shape.input_len() as f64 + 28.0 * shape.output_len() as f64
    }

    /// Each tile's word `i` holds the chase's next index, `next_index(i)`,
    /// in its low 12 bits, and random bits above.
    fn inputs(shape: DistributedShape, rng: &mut SmallRng) -> Result<Vec<u32>> {
        Self::problem(shape)?;
        Ok((0..shape.input_len())
            .map(|word| next_index(word as u32 % TILE) | rng.random::<u32>() & !(TILE - 1))
            .collect())
    }

    fn layout(shape: DistributedShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.input_len(), shape.output_len()]))
    }

    /// Exact: integer sums.
    fn reference(shape: DistributedShape, input: &Vec<u32>) -> Expected {
        let values: Vec<f64> = sums(shape, input).into_iter().map(f64::from).collect();
        Expected::exact(values)
    }

    fn cpu(shape: DistributedShape, input: &Vec<u32>) -> CpuOutput {
        CpuOutput::U32(sums(shape, input))
    }

    /// The input holds a tile a block and the output a word a thread; the
    /// clusters tile the blocks, and the rounds are within u32 (`problem`
    /// checked both).
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let InputOutput { input, output } = on.buffers;
        (&*input, output, on.shape.rounds as u32)
    }
}
