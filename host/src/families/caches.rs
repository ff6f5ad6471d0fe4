//! The cache lesson's kernel: its shapes, inputs and reference. The
//! reference sums, in f64, the very elements each thread reads, found by
//! the kernel's own index arithmetic.

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

impl CachesShape {
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

    /// An addition per element read; the bytes are every read, the lesson
    /// being which level of the hierarchy serves them, and the sums.
    fn work(shape: CachesShape) -> Work {
        let reads = shape.bytes_read();
        let sums = 4.0 * shape.threads() as f64;
        Work::new(Op::Flop, reads / 4.0, reads, sums)
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
