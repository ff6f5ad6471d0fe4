//! The L2 lessons' kernels: their shapes, inputs and reference, and the
//! persisting window a shape may ask for. The reference adds in f64.

use gpu_host::PersistingWindow;
use gpu_host::backend::Buffer;
use kernels::l2::{Args, KERNELS, Problem};

use crate::families::prelude::*;

/// A stream of n elements, each added to element i mod m of a reused set
/// of m; with bytes of the L2 set aside for the set's lines where
/// `carve_out` is not 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Shape {
    pub n: usize,
    pub m: usize,
    /// Bytes of the L2 kept for the reused set's lines by a persisting
    /// window over it; 0 for none.
    pub carve_out: usize,
}

impl L2Shape {
    /// Bytes of the reused set.
    pub fn reused_bytes(self) -> usize {
        4 * self.m
    }

    /// Bytes of the stream read and the output written: what device
    /// memory must serve however well the L2 keeps the set.
    pub fn streamed_bytes(self) -> f64 {
        8.0 * self.n as f64
    }
}

impl fmt::Display for L2Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} m={}", self.n, self.m)?;
        if self.carve_out > 0 {
            write!(f, " persisting {} B", self.carve_out)?;
        }
        Ok(())
    }
}

impl Shape for L2Shape {
    fn side(&self) -> f64 {
        self.n as f64
    }

    fn options(_: bool) -> Vec<Arg> {
        let help = "KiB of the L2 the L2 lessons' kernels keep for their reused set through a \
                    persisting access-policy window (0: no window)";
        vec![option(
            "persisting-kib",
            "KIB",
            value_parser!(u32),
            "0",
            help,
        )]
    }

    fn parse(sizes: &[usize], options: &ArgMatches) -> Vec<L2Shape> {
        let [n, m] = dims(sizes);
        let carve_out = value::<u32>(options, "persisting-kib") as usize * 1024;
        vec![L2Shape { n, m, carve_out }]
    }
}

/// The stream, the reused set and the output, with the window that keeps
/// the set's lines in the L2 where the shape asks for one.
pub struct StreamAndSet<B: Backend> {
    pub stream: Buffer<B, f32>,
    pub reused: Buffer<B, f32>,
    pub output: Buffer<B, f32>,
    /// The persisting window over `reused`, while the buffers live.
    pub window: Option<PersistingWindow>,
}

impl<B: Backend> Buffers<B> for StreamAndSet<B> {
    type Output = f32;
    /// The stream and the reused set.
    type Inputs = (Vec<f32>, Vec<f32>);
    /// The shape itself: the lengths, and the carve-out for the window.
    type Layout = L2Shape;

    fn upload(backend: &B, (stream, reused): &Self::Inputs, shape: &L2Shape) -> Result<Self> {
        let reused = backend.upload("reused", reused)?;
        let window = match shape.carve_out {
            0 => None,
            carve_out => Some(backend.persist(&reused, carve_out)?),
        };
        Ok(StreamAndSet {
            stream: backend.upload("stream", stream)?,
            reused,
            output: backend.alloc("output", shape.n)?,
            window,
        })
    }

    fn expect(&self, backend: &B, shape: &L2Shape) -> Result<()> {
        expect_len("stream", shape.n, backend.len(&self.stream))?;
        expect_len("reused", shape.m, backend.len(&self.reused))?;
        expect_len("output", shape.n, backend.len(&self.output))
    }

    fn output(&mut self) -> &mut Buffer<B, f32> {
        &mut self.output
    }
}

family! {
    pub struct L2("l2", Memory, "n (elements of the stream)") {
        size: SizeSyntax {
            value_name: "NxM", names: &["n", "m"],
            help: "Elements of the L2 lessons' stream and of their reused set",
            on_gpu: &[1 << 27, 1 << 22], emulated: &[3001, 97], sweep: "134217728x4194304",
        },
        shape: L2Shape, inputs: (Vec<f32>, Vec<f32>), layout: L2Shape, buffers: StreamAndSet<B>,
        cpu: "the same sums in f32, every core",
    }
}

impl Family for L2 {
    /// n and m within `u32`, the kernels' indices; the carve-out is the
    /// backend's to check, which knows its L2.
    fn problem(shape: L2Shape) -> Result<Problem> {
        let n = nonzero("n (elements of the stream)", shape.n)?;
        nonzero("m (elements of the reused set)", shape.m)?;
        Ok(Problem { n })
    }

    /// One element, a set longer than the stream, a block and one more,
    /// sets of one element and of a block, a window over the set.
    fn test_shapes() -> Vec<L2Shape> {
        let plain = [(1, 1), (1, 5), (256, 1), (257, 256), (1000, 97)];
        let plain = plain.map(|(n, m)| L2Shape { n, m, carve_out: 0 });
        let windows = [(3001, 300, 1024), (3001, 97, 1 << 20)];
        let windows = windows.map(|(n, m, carve_out)| L2Shape { n, m, carve_out });
        [plain.as_slice(), &windows].concat()
    }

    /// An addition per element; the fewest bytes are the stream and the
    /// set read once and the output written once.
    fn work(shape: L2Shape) -> Work {
        let output_bytes = 4.0 * shape.n as f64;
        let bytes = shape.streamed_bytes() + shape.reused_bytes() as f64;
        Work::new(Op::Flop, shape.n as f64, bytes - output_bytes, output_bytes)
    }

    fn host_bytes(shape: L2Shape) -> f64 {
        36.0 * shape.n as f64 + 8.0 * shape.m as f64
    }

    fn inputs(shape: L2Shape, rng: &mut SmallRng) -> Result<(Vec<f32>, Vec<f32>)> {
        Self::problem(shape)?;
        Ok((uniform_floats(shape.n, rng), uniform_floats(shape.m, rng)))
    }

    fn layout(shape: L2Shape) -> Result<L2Shape> {
        Ok(shape)
    }

    /// Tolerance: one f32 addition, within γ(1)·(|a| + |b|).
    fn reference(shape: L2Shape, (stream, reused): &(Vec<f32>, Vec<f32>)) -> Expected {
        let gamma = gamma(1, f64::from(f32::EPSILON) / 2.0);
        let (values, tolerance) = stream
            .par_iter()
            .enumerate()
            .map(|(i, &a)| {
                let (a, b) = (f64::from(a), f64::from(reused[i % shape.m]));
                (a + b, gamma * (a.abs() + b.abs()))
            })
            .unzip();
        Expected { values, tolerance }
    }

    fn cpu(shape: L2Shape, (stream, reused): &(Vec<f32>, Vec<f32>)) -> CpuOutput {
        CpuOutput::F32(
            stream
                .par_iter()
                .enumerate()
                .map(|(i, &a)| a + reused[i % shape.m])
                .collect(),
        )
    }

    /// The stream and the output hold n elements, the set m ≥ 1, both
    /// within u32; the output is a buffer of its own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let buffers = on.buffers;
        let (stream, reused, output) = (&buffers.stream, &buffers.reused, &mut buffers.output);
        (stream, reused, output, on.problem.n, on.shape.m as u32)
    }
}
