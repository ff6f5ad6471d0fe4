//! The texture lesson's kernels: their shapes, inputs and reference. The
//! reference samples each output pixel's point with the emulator's model
//! of the texture unit, whose weights both kernels compute.

use clap::ValueEnum;
use gpu_emulator::texture::{FILTER_ROUNDING, Texture as Texels, sample};
use gpu_host::backend::{Buffer, Texture};
use gpu_std::{AddressMode, FilterMode, Sampling};
use kernels::texture::{Args, KERNELS, Problem, source};

use crate::families::prelude::*;

/// The texture's addressing and filter modes, as the command line names
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Modes {
    /// Zero outside, bilinear between texels: the lesson's.
    BorderLinear,
    /// The edge's texel outside, bilinear between texels.
    ClampLinear,
    /// Zero outside, the nearest texel.
    BorderPoint,
    /// The edge's texel outside, the nearest texel.
    ClampPoint,
}

impl Modes {
    pub const ALL: [Modes; 4] = [
        Modes::BorderLinear,
        Modes::ClampLinear,
        Modes::BorderPoint,
        Modes::ClampPoint,
    ];

    pub fn sampling(self) -> Sampling {
        let (address, filter) = match self {
            Modes::BorderLinear => (AddressMode::Border, FilterMode::Linear),
            Modes::ClampLinear => (AddressMode::Clamp, FilterMode::Linear),
            Modes::BorderPoint => (AddressMode::Border, FilterMode::Point),
            Modes::ClampPoint => (AddressMode::Clamp, FilterMode::Point),
        };
        Sampling { address, filter }
    }
}

impl fmt::Display for Modes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.to_possible_value().expect("no variant is skipped");
        f.write_str(name.get_name())
    }
}

shape! {
    /// A width × height picture turned by `degrees` about its centre, read
    /// with `modes`.
    pub struct TextureShape {
        pub width: usize,
        pub height: usize,
        #[option("angle", "DEGREES", "30", "Degrees the texture lesson's kernels turn the picture by",
            value_parser!(u32).range(0..360))]
        pub degrees: u32,
        #[option("texture-modes", "MODES", "border-linear",
            "The texture's addressing and filter modes (rotate_global reads border-linear only)")]
        pub modes: Modes,
    }
    shown("{width}x{height} {degrees}° {modes}"), side((width as f64 * height as f64).sqrt())
}

impl TextureShape {
    /// The rotation's cosine and sine, as the kernels get them.
    pub fn rotation(self) -> (f32, f32) {
        let radians = f64::from(self.degrees).to_radians();
        (radians.cos() as f32, radians.sin() as f32)
    }

    /// Pixels of the picture, and of the output.
    fn pixels(self) -> usize {
        self.width * self.height
    }
}

/// The picture and the rotated picture, as every one-in, one-out family
/// has them, and the picture as a texture too.
pub struct TextureBuffers<B: Backend> {
    pub arrays: InputOutput<B>,
    pub texture: Texture<B>,
}

/// The picture's and the output's names and lengths.
fn arrays(shape: &TextureShape) -> Arrays<2> {
    Arrays::new(["picture", "output"], [shape.pixels(); 2])
}

impl<B: Backend> Buffers<B> for TextureBuffers<B> {
    type Output = f32;
    type Inputs = Vec<f32>;
    /// The shape itself: the picture's sides and the texture's modes.
    type Layout = TextureShape;

    fn upload(backend: &B, input: &Vec<f32>, shape: &TextureShape) -> Result<Self> {
        let arrays = InputOutput::upload(backend, input, &arrays(shape))?;
        let (width, height, sampling) = (shape.width, shape.height, shape.modes.sampling());
        let texture = backend.texture(&arrays.input, width, height, sampling)?;
        Ok(TextureBuffers { arrays, texture })
    }

    fn expect(&self, backend: &B, shape: &TextureShape) -> Result<()> {
        self.arrays.expect(backend, &arrays(shape))
    }

    fn output(&mut self) -> &mut Buffer<B, f32> {
        self.arrays.output()
    }
}

family! {
    pub struct TextureFamily("texture", Memory, "n (the picture is n×n)") {
        size: SizeSyntax {
            value_name: "WxH", names: &["width", "height"],
            help: "Pixels of the texture lesson's picture, which its kernels rotate",
            on_gpu: &[8192, 8192], emulated: &[97, 61], sweep: "8192",
        },
        shape: TextureShape, inputs: Vec<f32>, layout: TextureShape, buffers: TextureBuffers<B>,
        cpu: "the texture unit's model, every core",
    }
}

impl Family for TextureFamily {
    /// Each side within a texture's limits, the pixels within `u32`.
    fn problem(shape: TextureShape) -> Result<Problem> {
        let width = nonzero("width", shape.width)?;
        let height = nonzero("height", shape.height)?;
        let (max_width, max_height) = gpu_host::backend::TEXTURE_LIMIT;
        at_most("width", width, max_width as u64)?;
        at_most("height", height, max_height as u64)?;
        indexable("the picture", &[width, height])?;
        Ok(Problem { width, height })
    }

    /// The kernel reading global memory weighs texels as linear filtering
    /// does and reads zero outside: border-linear only.
    fn made_for(kernel: &Kernel<Args, Problem>, shape: TextureShape) -> Result<()> {
        if kernel.name == "rotate_global" && shape.modes != Modes::BorderLinear {
            return Err(Error::ModesUnsupported {
                kernel: kernel.name,
                modes: shape.modes.to_string(),
            });
        }
        Ok(())
    }

    /// One pixel, a row, a column, odd rectangles past a block both ways,
    /// each mode, and angles that put points outside, on texel centres
    /// (0°, 90°, 180°) and between them.
    fn test_shapes() -> Vec<TextureShape> {
        let sizes = [(1, 1), (37, 1), (1, 23), (33, 9), (61, 47), (97, 61)];
        let angles = [0, 17, 90, 180, 301];
        sizes
            .into_iter()
            .zip(angles.into_iter().cycle())
            .flat_map(|((width, height), degrees)| {
                Modes::ALL.map(|modes| TextureShape {
                    width,
                    height,
                    degrees,
                    modes,
                })
            })
            .collect()
    }

    /// 4 multiplies and 3 adds a pixel; the fewest bytes are the picture
    /// read once and the output written once.
    fn work(shape: TextureShape) -> Work {
        let bytes = 4.0 * shape.pixels() as f64;
        Work::new(Op::Flop, 4.0 * shape.pixels() as f64, bytes, bytes)
    }

    fn host_bytes(shape: TextureShape) -> f64 {
        40.0 * shape.pixels() as f64
    }

    fn inputs(shape: TextureShape, rng: &mut SmallRng) -> Result<Vec<f32>> {
        Self::problem(shape)?;
        Ok(uniform_floats(shape.pixels(), rng))
    }

    fn layout(shape: TextureShape) -> Result<TextureShape> {
        Ok(shape)
    }

    /// Each pixel's point sampled by the model of the texture unit
    /// (`gpu_emulator::texture::sample`), which the H100 matched: exact
    /// for point filtering, within `FILTER_ROUNDING` of the weighted
    /// magnitudes for linear (the hand-written kernel's four products and
    /// three sums in f32 come within 7 · 2⁻²⁴ of them).
    fn reference(shape: TextureShape, input: &Vec<f32>) -> Expected {
        let texels = Texels {
            texels: input.clone(),
            width: shape.width as u32,
            height: shape.height as u32,
            sampling: shape.modes.sampling(),
        };
        let (cos, sin) = shape.rotation();
        let (width, height) = (shape.width as u32, shape.height as u32);
        Expected::par_from_fn(shape.pixels(), |at| {
            let (x, y) = ((at % shape.width) as u32, (at / shape.width) as u32);
            let (u, v) = source(x, y, width, height, cos, sin);
            let read = sample(&texels, u, v);
            (read.value, FILTER_ROUNDING * read.magnitude)
        })
    }

    fn cpu(shape: TextureShape, input: &Vec<f32>) -> CpuOutput {
        let values = Self::reference(shape, input).values;
        CpuOutput::F32(values.into_iter().map(|value| value as f32).collect())
    }

    /// The picture and the output hold width × height pixels each, within
    /// u32, the output a buffer of its own; the texture was made from the
    /// picture and lives as long as the buffers; the kernel is made for
    /// the modes.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B> {
        let (cos, sin) = on.shape.rotation();
        let (width, height) = (on.problem.width, on.problem.height);
        let TextureBuffers { arrays, texture } = on.buffers;
        (
            &arrays.input,
            &*texture,
            &mut arrays.output,
            width,
            height,
            cos,
            sin,
        )
    }
}
