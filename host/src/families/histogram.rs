//! The histogram lesson's kernels: their shapes, inputs and reference.
//! The bins start at random counts, which the kernels add to: a kernel
//! that overwrote a bin, or skipped one, fails as surely as one that
//! miscounted.

use clap::ValueEnum;
use gpu_host::backend::Buffer;
use kernels::histogram::{Args, BINS, KERNELS, Problem};
use rand::Rng;
use rand::distr::Uniform;

use crate::families::prelude::*;
use crate::verify::random_vec;

/// Where the bytes come from: how they crowd into the bins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Bytes {
    /// Every value equally likely: a warp's lanes rarely meet at a bin.
    Uniform,
    /// A smooth picture's samples (gradients and a little noise): a few
    /// dozen bins hold most bytes.
    Photo,
    /// One value repeated: every lane of every warp at one bin.
    One,
}

impl Bytes {
    pub const ALL: [Bytes; 3] = [Bytes::Uniform, Bytes::Photo, Bytes::One];
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.to_possible_value().expect("no variant is skipped");
        f.write_str(name.get_name())
    }
}

/// `bytes` bytes drawn as `from` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistogramShape {
    pub bytes: usize,
    pub from: Bytes,
}

impl fmt::Display for HistogramShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes, {}", self.bytes, self.from)
    }
}

impl Shape for HistogramShape {
    fn side(&self) -> f64 {
        self.bytes as f64
    }

    fn short(&self) -> String {
        format!("{} MiB {}", self.bytes >> 20, self.from)
    }

    fn options(_: bool) -> Vec<Arg> {
        let help = "Where the histogram lesson's bytes come from; each one given is a shape";
        let parser = value_parser!(Bytes);
        vec![
            option("histogram-bytes", "FROM", parser, "uniform,photo,one", help)
                .value_delimiter(','),
        ]
    }

    fn parse(sizes: &[usize], options: &ArgMatches) -> Vec<HistogramShape> {
        let [bytes] = dims(sizes);
        let from = options.get_many::<Bytes>("histogram-bytes");
        from.expect("the option has a default")
            .map(|&from| HistogramShape { bytes, from })
            .collect()
    }
}

/// The bytes, and the counts the bins start at.
pub struct Inputs {
    pub bytes: Vec<u8>,
    pub start: Vec<u32>,
}

/// The bytes and the bins, which the kernels add to.
pub struct BytesAndBins<B: Backend> {
    pub bytes: Buffer<B, u8>,
    pub bins: Buffer<B, u32>,
}

impl<B: Backend> Buffers<B> for BytesAndBins<B> {
    type Output = u32;
    type Inputs = Inputs;
    type Layout = Arrays<2>;

    /// The bins as yet poisoned: `prepare` sets their start counts.
    fn upload(backend: &B, inputs: &Inputs, layout: &Arrays<2>) -> Result<Self> {
        Ok(Self {
            bytes: backend.upload(layout.names[0], &inputs.bytes)?,
            bins: backend.alloc(layout.names[1], layout.lens[1])?,
        })
    }

    fn expect(&self, backend: &B, layout: &Arrays<2>) -> Result<()> {
        layout.expect([backend.len(&self.bytes), backend.len(&self.bins)])
    }

    fn output(&mut self) -> &mut Buffer<B, u32> {
        &mut self.bins
    }
}

/// The buffers' names in errors.
const NAMES: [&str; 2] = ["bytes", "bins"];

/// Sample `index` of a smooth picture 4096 samples wide: two slow waves
/// and up to ±8 of noise from `noise`.
fn photo_sample(index: usize, noise: u8) -> u8 {
    let (x, y) = ((index % 4096) as f64, (index / 4096) as f64);
    let smooth = 128.0 + 60.0 * (x / 97.0).sin() + 40.0 * (y / 61.0).cos();
    (smooth + f64::from(noise % 17) - 8.0).clamp(0.0, 255.0) as u8
}

/// The bins: the start counts plus every byte's, wrapping as the kernels'
/// `u32` additions do.
fn counts(inputs: &Inputs) -> Vec<u32> {
    let counted = inputs
        .bytes
        .par_chunks(1 << 20)
        .map(|chunk| {
            let mut bins = vec![0u32; BINS as usize];
            chunk.iter().for_each(|&byte| bins[byte as usize] += 1);
            bins
        })
        .reduce(
            || vec![0u32; BINS as usize],
            |a, b| a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect(),
        );
    inputs
        .start
        .iter()
        .zip(&counted)
        .map(|(start, count)| start.wrapping_add(*count))
        .collect()
}

family! {
    pub struct Histogram("histogram", Memory, "bytes") {
        size: SizeSyntax::n("The histogram lesson's bytes, counted into 256 bins", &[1 << 28], &[20_000], "268435456"),
        shape: HistogramShape, inputs: Inputs, layout: Arrays<2>, buffers: BytesAndBins<B>,
        cpu: "a histogram of each MiB, summed, every core",
    }
}

impl Family for Histogram {
    fn problem(shape: HistogramShape) -> Result<Problem> {
        Ok(Problem {
            bytes: nonzero("the bytes", shape.bytes)?,
        })
    }

    /// Fewer bytes than a word, a word and a tail, a block's bytes and
    /// one more, several blocks; each from every source.
    fn test_shapes() -> Vec<HistogramShape> {
        let sizes = [1, 3, 4, 7, 1000, 16_385, 70_001];
        let shapes = sizes.map(|bytes| Bytes::ALL.map(|from| HistogramShape { bytes, from }));
        shapes.concat()
    }

    /// An atomic add per byte; the bytes read, the bins written.
    fn work(shape: HistogramShape) -> Work {
        let bytes = shape.bytes as f64;
        Work::new(Op::IntAdd, bytes, bytes, 4.0 * f64::from(BINS))
    }

    fn host_bytes(shape: HistogramShape) -> f64 {
        shape.bytes as f64
    }

    fn inputs(shape: HistogramShape, rng: &mut SmallRng) -> Result<Inputs> {
        Self::problem(shape)?;
        let (seed, every) = (
            rng.random(),
            Uniform::new_inclusive(0, 255).expect("a valid range"),
        );
        let bytes = match shape.from {
            Bytes::Uniform => random_vec(shape.bytes, every, seed),
            Bytes::Photo => {
                let noise: Vec<u8> = random_vec(shape.bytes, every, seed);
                noise
                    .into_par_iter()
                    .enumerate()
                    .map(|(index, noise)| photo_sample(index, noise))
                    .collect()
            }
            Bytes::One => vec![rng.random(); shape.bytes],
        };
        let start = (0..BINS).map(|_| rng.random_range(0..1 << 24)).collect();
        Ok(Inputs { bytes, start })
    }

    fn layout(shape: HistogramShape) -> Result<Arrays<2>> {
        Ok(Arrays::new(NAMES, [shape.bytes, BINS as usize]))
    }

    /// The bins at their start counts, which the kernels add to.
    fn prepare<B: Backend>(
        backend: &B,
        _: &Kernel<Args, Problem>,
        inputs: &Inputs,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        Ok(backend.overwrite(&inputs.start, &mut buffers.bins)?)
    }

    fn reference(_: HistogramShape, inputs: &Inputs) -> Expected {
        Expected::exact(counts(inputs).into_iter().map(f64::from).collect())
    }

    fn cpu(_: HistogramShape, inputs: &Inputs) -> CpuOutput {
        CpuOutput::U32(counts(inputs))
    }

    /// The bytes are the shape's, and the bins 256 counts, a buffer of
    /// their own.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        (&on.buffers.bytes, &mut on.buffers.bins, on.problem.bytes)
    }
}
