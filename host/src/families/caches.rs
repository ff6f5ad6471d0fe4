//! The cache lesson's kernel: its shapes, inputs and reference. The
//! reference sums, in f64, the very elements each thread reads, found by
//! the kernel's own index arithmetic.

use gpu_std::FULL_SM_THREADS;
use kernels::caches::{Args, BLOCK, CHUNK, KERNELS, Problem};

use crate::families::prelude::*;

shape! {
    /// A working set of `set` elements, read by `blocks` blocks, `chunks`
    /// chunks each.
    pub struct CachesShape {
        pub set: usize,
        pub blocks: usize,
        pub chunks: usize,
    }
    shown("{} KiB × {blocks} blocks × {chunks} chunks", set >> 8), side(4 * set),
    short(format!("{} KiB", set >> 8))
}

/// Where the lesson's plateaus lie: sets up to this are read from L1…
pub const L1_SETS_UP_TO: usize = 64 << 10;
/// …sets from this to a quarter of the L2 from the L2, and sets of twice
/// the L2 and more from the DRAM.
pub const L2_SETS_FROM: usize = 4 << 20;
/// The L2 taken where the driver does not tell it.
pub const UNKNOWN_L2_BYTES: usize = 64 << 20;

/// Bytes the shapes that fill a GPU read a launch: enough to time even
/// from L1.
pub const FILLING_BYTES_READ: usize = 1 << 30;

impl CachesShape {
    /// A set of `set_bytes` read by the blocks that fill every SM of a GPU
    /// of `sms` SMs once, [`FILLING_BYTES_READ`] in all (at least a chunk
    /// each).
    pub fn filling(sms: u32, set_bytes: usize) -> Self {
        let blocks = sms as usize * (FULL_SM_THREADS / BLOCK) as usize;
        let chunks = (FILLING_BYTES_READ / (blocks * 4 * CHUNK as usize)).max(1);
        Self {
            set: set_bytes / 4,
            blocks,
            chunks,
        }
    }

    /// Bytes read by one launch.
    pub fn bytes_read(self) -> f64 {
        (self.blocks * CHUNK as usize * 4) as f64 * self.chunks as f64
    }

    /// The set, the blocks and the chunks as the kernel takes them, once
    /// the set is a power of two of at least one vector and every index fits.
    fn arguments(self) -> Result<(u32, u32, u32)> {
        let set = power_of_two("the working set's elements", self.set, 4)?;
        let blocks = nonzero("blocks", self.blocks)?;
        let chunks = nonzero("chunks per block", self.chunks)?;
        indexable("the sums (one per thread)", &[blocks, BLOCK])?;
        Ok((set, blocks, chunks))
    }

    fn threads(self) -> usize {
        self.blocks * BLOCK as usize
    }
}

/// The buffers' names in errors: the working set and a sum a thread.
const NAMES: [&str; 2] = ["set", "sums"];

/// What thread `thread` of the grid reads, in f64: the terms of its sum.
fn reads(shape: CachesShape, set: &[f32], thread: usize) -> impl Iterator<Item = f64> {
    let (block, lane) = (thread / BLOCK as usize, thread as u32 % BLOCK);
    let chunks_in_set = (shape.set / CHUNK as usize) as u64;
    let start = (block as u64 * chunks_in_set / shape.blocks as u64) as u32;
    (0..shape.chunks as u32).flat_map(move |chunk| {
        let index = start
            .wrapping_add(chunk)
            .wrapping_mul(CHUNK)
            .wrapping_add(4 * lane)
            & (shape.set as u32 - 1);
        set[index as usize..index as usize + 4]
            .iter()
            .map(|&value| f64::from(value))
    })
}

family! {
    pub struct Caches("caches", Memory, "working set (bytes)") {
        size: SizeSyntax {
            value_name: "SETxBLOCKSxCHUNKS",
            names: &["the working set's elements", "blocks", "chunks per block"],
            help: "The cache lesson's working set (elements, a power of two), blocks and 4 KiB chunks per block",
            on_gpu: &[1 << 24, 1056, 256], emulated: &[4096, 6, 5], sweep: "16777216x1056x256",
        },
        shape: CachesShape, inputs: Vec<f32>, layout: Arrays<2>, buffers: InputOutput<B>,
        cpu: "the same sums in f64, every core",
    }
}

impl Family for Caches {
    fn problem(shape: CachesShape) -> Result<Problem> {
        let (_, blocks, _) = shape.arguments()?;
        Ok(Problem { blocks })
    }

    /// Sets smaller than a chunk, than the blocks' reads, and larger; a
    /// block count that does not divide the chunks; reads that wrap.
    fn test_shapes() -> Vec<CachesShape> {
        let shapes = [
            (4, 1, 1),
            (64, 2, 3),
            (1024, 3, 2),
            (4096, 5, 7),
            (16384, 3, 9),
            (65536, 7, 4),
        ];
        shapes.map(CachesShape::from).to_vec()
    }

    /// An addition per element read. From the DRAM at least the set, once
    /// (no more than the reads), and the sums; every read again from the
    /// level that holds the set, the lesson being which level that is.
    fn work(shape: CachesShape) -> Work {
        let reads = shape.bytes_read();
        let set = 4.0 * shape.set as f64;
        let sums = 4.0 * shape.threads() as f64;
        Work::new(Op::Flop, reads / 4.0, set.min(reads), sums)
            .rereading(reads, Source::WorkingSet(set))
    }

    fn host_bytes(shape: CachesShape) -> f64 {
        8.0 * shape.set as f64 + 20.0 * shape.threads() as f64
    }

    fn inputs(shape: CachesShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        shape.arguments()?;
        Ok(uniform_floats(shape.set, rng))
    }

    fn layout(shape: CachesShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.set, shape.threads()]))
    }

    /// Tolerance: the kernel's sums are four running sums of `chunks`
    /// terms each, added pairwise: within γ(chunks + 2)·Σ|x|.
    fn reference(shape: CachesShape, set: &Vec<f32>) -> Expected {
        Expected::f32_sums(shape.threads(), shape.chunks + 2, |thread| {
            reads(shape, set, thread)
        })
    }

    fn cpu(shape: CachesShape, set: &Vec<f32>) -> CpuOutput {
        CpuOutput::sums(shape.threads(), |thread| reads(shape, set, thread))
    }

    /// The set is a power of two of at least 4 elements, all in the input,
    /// and the chunks within u32 (checked); the sums hold one per thread, a
    /// buffer of their own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (set, chunks) = (on.shape.set as u32, on.shape.chunks as u32);
        (&on.buffers.input, &mut on.buffers.output, set, chunks)
    }
}
