//! The cache lesson's kernel: its shapes, inputs and reference. The
//! reference sums, in f64, the very elements each thread reads, found by
//! the kernel's own index arithmetic.

use kernels::caches::{Args, BLOCK, CHUNK, KERNELS, Problem};

use crate::families::prelude::*;

/// A working set of `set` elements, read by `blocks` blocks, `chunks`
/// chunks each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachesShape {
    pub set: usize,
    pub blocks: usize,
    pub chunks: usize,
}

impl CachesShape {
    /// The set's size in bytes.
    pub fn set_bytes(self) -> usize {
        4 * self.set
    }

    /// Bytes read by one launch.
    pub fn bytes_read(self) -> f64 {
        (self.blocks * CHUNK as usize * 4) as f64 * self.chunks as f64
    }

    /// The set, the blocks and the chunks as the kernel takes them, once
    /// the set is a power of two of at least one vector and every index fits.
    fn arguments(self) -> Result<(u32, u32, u32)> {
        let set = nonzero("the working set's elements", self.set)?;
        if !set.is_power_of_two() || set < 4 {
            return Err(Error::NotPowerOfTwo {
                what: "the working set's elements",
                size: self.set,
                least: 4,
            });
        }
        let blocks = nonzero("blocks", self.blocks)?;
        let chunks = nonzero("chunks per block", self.chunks)?;
        indexable("the sums (one per thread)", &[blocks, BLOCK])?;
        Ok((set, blocks, chunks))
    }

    fn threads(self) -> usize {
        self.blocks * BLOCK as usize
    }
}

impl fmt::Display for CachesShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} KiB × {} blocks × {} chunks",
            self.set_bytes() >> 10,
            self.blocks,
            self.chunks
        )
    }
}

impl Shape for CachesShape {
    fn side(&self) -> f64 {
        self.set_bytes() as f64
    }

    fn short(&self) -> String {
        format!("{} KiB", self.set_bytes() >> 10)
    }
}

/// The buffers' names in errors: the working set and a sum a thread.
const NAMES: [&str; 2] = ["set", "sums"];

/// The sum, in f64, of what thread `thread` of the grid reads, and the sum
/// of the values' magnitudes.
fn thread_sum(shape: CachesShape, set: &[f32], thread: usize) -> (f64, f64) {
    let (block, lane) = (thread / BLOCK as usize, thread as u32 % BLOCK);
    let chunks_in_set = (shape.set / CHUNK as usize) as u64;
    let start = (block as u64 * chunks_in_set / shape.blocks as u64) as u32;
    let (mut sum, mut magnitude) = (0.0, 0.0);
    for chunk in 0..shape.chunks as u32 {
        let index = start
            .wrapping_add(chunk)
            .wrapping_mul(CHUNK)
            .wrapping_add(4 * lane)
            & (shape.set as u32 - 1);
        for &value in &set[index as usize..index as usize + 4] {
            sum += f64::from(value);
            magnitude += f64::from(value).abs();
        }
    }
    (sum, magnitude)
}

pub struct Caches;

impl Family for Caches {
    type Args = Args;
    type Problem = Problem;
    const KERNELS: &'static Kernels<Self> = KERNELS;

    const NAME: &'static str = "caches";
    const SIZE: SizeSyntax = SizeSyntax {
        value_name: "SETxBLOCKSxCHUNKS",
        names: &["the working set's elements", "blocks", "chunks per block"],
        help: "The cache lesson's working set (elements, a power of two), blocks and 4 KiB chunks per block",
        on_gpu: &[1 << 24, 1056, 256],
        emulated: &[4096, 6, 5],
        sweep: "16777216x1056x256",
    };
    const BOUND: Bound = Bound::Memory;
    const SQUARE_AXIS: &'static str = "working set (bytes)";

    type Shape = CachesShape;

    fn shape(sizes: &[usize], _: &ArgMatches) -> CachesShape {
        let [set, blocks, chunks] = dims(sizes);
        CachesShape {
            set,
            blocks,
            chunks,
        }
    }

    fn problem(shape: CachesShape) -> Result<Problem> {
        let (_, blocks, _) = shape.arguments()?;
        Ok(Problem { blocks })
    }

    /// Sets smaller than a chunk, than the blocks' reads, and larger; a
    /// block count that does not divide the chunks; reads that wrap.
    fn test_shapes() -> Vec<CachesShape> {
        let shape = |(set, blocks, chunks)| CachesShape {
            set,
            blocks,
            chunks,
        };
        let shapes = [
            (4, 1, 1),
            (64, 2, 3),
            (1024, 3, 2),
            (4096, 5, 7),
            (16384, 3, 9),
            (65536, 7, 4),
        ];
        shapes.map(shape).to_vec()
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

    type Inputs = Vec<f32>;
    type Layout = Arrays<2>;
    type Buffers<B: Backend> = InputOutput<B>;

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
            thread_sum(shape, set, thread)
        })
    }

    const CPU: &'static str = "the same sums in f64, every core";

    fn cpu(shape: CachesShape, set: &Vec<f32>) -> CpuOutput {
        CpuOutput::sums(shape.threads(), |thread| thread_sum(shape, set, thread))
    }

    /// The set is a power of two of at least 4 elements, all in the input,
    /// and the chunks within u32 (checked); the sums hold one per thread, a
    /// buffer of their own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (set, chunks) = (on.shape.set as u32, on.shape.chunks as u32);
        (&on.buffers.input, &mut on.buffers.output, set, chunks)
    }
}
