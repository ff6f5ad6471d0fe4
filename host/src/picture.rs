//! `locality blur`: a picture (PNG, JPEG, BMP, TIFF, WebP or GIF, from a
//! file or standard input) blurred by one of the blur kernels, checked
//! sample by sample against the CPU reference, timed, and written in the
//! format the output's name asks for; without a picture, a test chart
//! drawn here, whose edges and rings make the blur easy to see.

use std::borrow::Cow;
use std::fs;
use std::io::{Cursor, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use gpu_host::Error as HostError;
use gpu_host::backend::Backend;
use gpu_host::emulator::Emulator;
use gpu_host::timing::Runs;
use gpu_std::Kernel;
use image::codecs::gif::GifDecoder;
use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::PngDecoder;
use image::codecs::webp::WebPDecoder;
use image::metadata::Orientation;
use image::{
    AnimationDecoder, ColorType, DynamicImage, GenericImageView, ImageBuffer, ImageDecoder,
    ImageFormat, ImageReader, Luma, LumaA, Rgb, RgbImage, Rgba,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::console::{self, say};
use crate::error::{Error, Result};
use crate::families::blur::{Blur, BlurShape};
use crate::family::{Declaration, Family, Target};
use crate::output::{self, Pending};
use crate::suite::{WorkLimit, available_host_memory, check_host_memory, host_bytes};

/// What to blur, with what, and where the result goes.
#[derive(Clone, Debug)]
pub struct Request {
    /// The picture; `None` for the test chart.
    pub input: Option<PathBuf>,
    /// Where the result goes; `None` for beside the input (`NAME-blurred.EXT`),
    /// or `blurred.png` for the chart.
    pub output: Option<PathBuf>,
    /// The test chart's width and height.
    pub chart: (u32, u32),
    pub radius: u32,
    /// The blur kernel's entry point, one of [`kernels()`]; by default
    /// [`fastest_kernel`].
    pub kernel: Option<String>,
    /// Whether to run on the emulator even with a GPU.
    pub emulate: bool,
    pub device: usize,
}

/// A picture as the kernels take it: interleaved 8-bit samples.
struct Picture {
    samples: Vec<u8>,
    width: u32,
    height: u32,
    channels: u8,
    format: ImageFormat,
}

/// The kernels that can blur a picture.
pub fn kernels() -> Vec<&'static str> {
    Blur::KERNELS.iter().map(|kernel| kernel.name).collect()
}

/// The kernel `locality blur` uses unless told: the last of the ladder
/// made for `shape`, the fastest (the README's blur tables).
pub fn fastest_kernel(
    shape: BlurShape,
) -> &'static Kernel<<Blur as Declaration>::Args, <Blur as Declaration>::Problem> {
    let ladder = Blur::KERNELS.iter().rev();
    let mut made_for = ladder.filter(|kernel| Blur::made_for(kernel, shape).is_ok());
    made_for.next().unwrap_or(&Blur::KERNELS[0])
}

/// Blurs the picture `request` names and writes the result.
pub fn run(request: &Request) -> Result<()> {
    // The picture is the result; the messages beside it are notes.
    console::messages_are_notes();
    let named = match &request.kernel {
        Some(name) => Some(
            Blur::KERNELS
                .iter()
                .find(|kernel| kernel.name == name)
                .ok_or_else(|| Error::NotABlurKernel(name.clone()))?,
        ),
        None => None,
    };
    let picture = match &request.input {
        Some(path) => read(path)?,
        None => chart(request.chart)?,
    };
    let output = output_path(request, picture.format)?;
    let format = output_format(&output, picture.format)?;
    let shape = BlurShape::new(
        picture.width as usize,
        picture.height as usize,
        picture.channels.into(),
        request.radius,
    );
    let kernel = named.unwrap_or_else(|| fastest_kernel(shape));
    Blur::check(kernel, shape)?;
    let pending = Pending::create(&output)?;
    let samples = &picture.samples;
    let on_emulator = || {
        blur_on(
            &Emulator::default(),
            Target::Emulator,
            kernel,
            shape,
            samples,
        )
    };
    let blurred = if request.emulate {
        on_emulator()?
    } else {
        match crate::gpu::open(request.device) {
            Ok(gpu) => blur_on(&gpu, Target::Gpu, kernel, shape, samples)?,
            Err(missing @ Error::Host(HostError::NoDriver | HostError::NoDevice)) => {
                say!("{missing}: blurring on the CPU emulator instead.")?;
                on_emulator()?
            }
            Err(error) => return Err(error),
        }
    };
    let encoded = encode(&to_image(&picture, blurred)?, format)
        .map_err(|source| Error::write(&output, std::io::Error::other(source)))?;
    for loss in &encoded.losses {
        say!("note: {format:?} cannot hold this picture exactly: {loss}")?;
    }
    pending.finish(|writer| writer.write_all(&encoded.bytes))?;
    let written = if output::is_stdout(&output) {
        "standard output".to_string()
    } else {
        output.display().to_string()
    };
    match format {
        ImageFormat::Jpeg => say!("wrote {written} (JPEG, quality {JPEG_QUALITY})"),
        _ => say!("wrote {written} ({format:?})"),
    }
}

/// The quality JPEG outputs are written at, out of 100.
pub const JPEG_QUALITY: u8 = 90;

/// The formats a blurred picture can be written in.
const WRITABLE: [ImageFormat; 6] = [
    ImageFormat::Png,
    ImageFormat::Jpeg,
    ImageFormat::Bmp,
    ImageFormat::Tiff,
    ImageFormat::WebP,
    ImageFormat::Gif,
];

/// The format `output` is written in: the one its extension names, or the
/// input's where it has none (`-`, a FIFO, a device); an extension of no
/// format we write is an error, before any work.
fn output_format(output: &Path, input: ImageFormat) -> Result<ImageFormat> {
    if output.extension().is_none() {
        return Ok(input);
    }
    match ImageFormat::from_path(output) {
        Ok(format) if WRITABLE.contains(&format) => Ok(format),
        _ => Err(Error::PictureFormat(output.to_path_buf())),
    }
}

/// A picture encoded in a format, and what the format could not hold of it.
struct Encoded {
    bytes: Vec<u8>,
    losses: Vec<String>,
}

/// `image` encoded in `format`, with whatever the format could not hold,
/// found by reading the encoded picture back: an alpha channel, colours
/// (GIF's palette of 256), any sample of a lossless format.
fn encode(image: &DynamicImage, format: ImageFormat) -> image::ImageResult<Encoded> {
    let mut bytes = Cursor::new(Vec::new());
    let encodable = encodable(image, format);
    match format {
        ImageFormat::Jpeg => {
            encodable.write_with_encoder(JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY))?
        }
        _ => encodable.write_to(&mut bytes, format)?,
    }
    let bytes = bytes.into_inner();
    let read_back = image::load_from_memory_with_format(&bytes, format)?;
    Ok(Encoded {
        losses: losses(image, &read_back, format != ImageFormat::Jpeg),
        bytes,
    })
}

/// `image` as it is where `format`'s encoder takes its colour type, else
/// with 8-bit RGB(A) samples (GIF takes no grey).
fn encodable(image: &DynamicImage, format: ImageFormat) -> Cow<'_, DynamicImage> {
    let takes = |color| {
        let probe = DynamicImage::new(1, 1, color);
        probe.write_to(&mut Cursor::new(Vec::new()), format).is_ok()
    };
    match image.color() {
        color if takes(color) => Cow::Borrowed(image),
        color if color.has_alpha() && takes(ColorType::Rgba8) => {
            Cow::Owned(image.to_rgba8().into())
        }
        _ => Cow::Owned(image.to_rgb8().into()),
    }
}

/// What `read_back` lost of `written`: its alpha channel, where that was
/// not opaque everywhere; and for a `lossless` format, the pixels that
/// changed, with the colours before and after.
fn losses(written: &DynamicImage, read_back: &DynamicImage, lossless: bool) -> Vec<String> {
    let mut losses = Vec::new();
    let before = written.to_rgba8();
    let mut after = read_back.to_rgba8();
    if !read_back.color().has_alpha() {
        if before.pixels().any(|pixel| pixel[3] != u8::MAX) {
            losses.push("the alpha channel is dropped".to_string());
        }
        // Counted once, above, not again in every pixel.
        for (after, before) in after.pixels_mut().zip(before.pixels()) {
            after[3] = before[3];
        }
    }
    if lossless {
        let (changed, largest) = before.pixels().zip(after.pixels()).fold(
            (0usize, 0u8),
            |(changed, largest), (before, after)| {
                let difference = (0..4)
                    .map(|c| before[c].abs_diff(after[c]))
                    .max()
                    .unwrap_or(0);
                (
                    changed + usize::from(difference > 0),
                    largest.max(difference),
                )
            },
        );
        if changed > 0 {
            let colours = |image: &image::RgbaImage| {
                image
                    .pixels()
                    .map(|pixel| u32::from_le_bytes(pixel.0))
                    .collect::<std::collections::HashSet<_>>()
                    .len()
            };
            losses.push(format!(
                "its {} colours become {}, and {:.1}% of the pixels change, by up to {largest}",
                colours(&before),
                colours(&after),
                100.0 * changed as f64 / before.pixels().len() as f64
            ));
        }
    }
    losses
}

/// Uploads `samples`, blurs them with `kernel`, checks the result against
/// the reference twice (the output poisoned with 255, then with 0, so that
/// a sample the kernel never wrote cannot pass where the answer is either)
/// and times it; the blurred samples.
fn blur_on<B: Backend>(
    backend: &B,
    target: Target,
    kernel: &Kernel<<Blur as Declaration>::Args, <Blur as Declaration>::Problem>,
    shape: BlurShape,
    samples: &Vec<u8>,
) -> Result<Vec<u8>> {
    let (limit, runs) = match target {
        Target::Emulator => (
            WorkLimit::EMULATED,
            Runs {
                warmup: 0,
                timed: 1,
            },
        ),
        Target::Gpu => (
            WorkLimit::VERIFIED,
            Runs {
                warmup: 3,
                timed: 20,
            },
        ),
    };
    // Checked twice, then timed.
    let launches = 2 + runs.warmup + runs.timed;
    limit.check(
        || format!("the blur of a {shape} picture"),
        Blur::cost(shape),
        launches,
    )?;
    check_host_memory(
        || format!("the blur of a {shape} picture"),
        host_bytes::<Blur>(shape, target),
        available_host_memory(),
    )?;
    let work = Blur::work(shape);
    let spinner = if std::io::stderr().is_terminal() {
        let spinner = ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("a valid template"),
        );
        spinner.enable_steady_tick(Duration::from_millis(250));
        spinner
    } else {
        ProgressBar::hidden()
    };
    spinner.set_message(format!("the CPU reference of {shape}"));
    let expected = Blur::reference(shape, samples);
    spinner.set_message(format!(
        "{} on {shape}, checked twice, then timed",
        kernel.name
    ));
    let mut buffers = Blur::upload(backend, shape, samples)?;
    let mut check = |poison: Option<u8>| -> Result<crate::verify::Comparison> {
        match poison {
            Some(value) => backend.overwrite(&vec![value; samples.len()], &mut buffers.output)?,
            None => Blur::prepare(backend, kernel, samples, &mut buffers)?,
        }
        Blur::launch(backend, kernel, shape, &mut buffers)?;
        Blur::compare(backend, &mut buffers, &expected)
    };
    for comparison in [check(None)?, check(Some(0))?] {
        if !comparison.passed() {
            return Err(Error::WrongPicture {
                kernel: kernel.name,
                comparison: comparison.to_string(),
            });
        }
    }
    let median_ms =
        backend.median_ms(runs, || Blur::launch(backend, kernel, shape, &mut buffers))?;
    spinner.finish_and_clear();
    let speed = match target {
        Target::Gpu => format!(
            "{median_ms:.3} ms, median of {} runs, {:.1} GB/s",
            runs.timed,
            work.bytes / median_ms / 1e6
        ),
        Target::Emulator => format!("{median_ms:.0} ms emulated, which says nothing of a GPU"),
    };
    say!(
        "{} · {} on {shape}: {speed}; every sample matches the CPU reference",
        backend.description(),
        kernel.name,
    )?;
    Ok(backend.download(&buffers.output)?)
}

/// The picture at `path`, checked before it is decoded: its size against
/// the kernels' 32-bit indices and the free memory. The file is read whole
/// first, so that a pipe, a FIFO or `/dev/stdin`, which cannot seek, is
/// read like a file.
fn read(path: &Path) -> Result<Picture> {
    let unreadable = |source: std::io::Error| unreadable(path, source.into());
    let bytes = if path == Path::new("-") {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(unreadable)?;
        bytes
    } else {
        fs::read(path).map_err(unreadable)?
    };
    decode(path, &bytes)
}

/// The error of a picture at `path` that cannot be read.
fn unreadable(path: &Path, source: image::ImageError) -> Error {
    Error::Picture {
        path: path.to_path_buf(),
        source,
    }
}

/// The picture `bytes` hold, read from `path` (`-`: standard input), turned
/// upright as its EXIF orientation says.
fn decode(path: &Path, bytes: &[u8]) -> Result<Picture> {
    let unreadable = |source| unreadable(path, source);
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|source| unreadable(source.into()))?;
    let format = reader
        .format()
        .ok_or_else(|| Error::NotAPicture(path.to_path_buf()))?;
    // Our own limits below, which know the free memory.
    reader.no_limits();
    let mut decoder = reader.into_decoder().map_err(unreadable)?;
    let orientation = decoder.orientation().map_err(unreadable)?;
    let (width, height) = decoder.dimensions();
    let color = decoder.color_type();
    let channels = color.channel_count();
    let shape = BlurShape::new(width as usize, height as usize, channels.into(), 0);
    shape.checked_len()?;
    check_host_memory(
        || format!("{} ({width}×{height}×{channels})", path.display()),
        Blur::host_bytes(shape),
        available_host_memory(),
    )?;
    let image = DynamicImage::from_decoder(decoder).map_err(unreadable)?;
    let mut image = eight_bits(image, color)?;
    if orientation != Orientation::NoTransforms {
        image.apply_orientation(orientation);
        say!("note: turned upright as its EXIF orientation says ({orientation:?})")?;
    }
    let frames = frames(format, bytes).map_err(unreadable)?;
    if frames > 1 {
        say!("note: the picture is animated ({frames} frames); only the first is blurred")?;
    }
    let (width, height) = image.dimensions();
    say!(
        "{}: {width}×{height}, {} channel{}",
        path.display(),
        image.color().channel_count(),
        if image.color().channel_count() == 1 {
            ""
        } else {
            "s"
        }
    )?;
    Ok(Picture {
        width,
        height,
        channels: image.color().channel_count(),
        samples: image.into_bytes(),
        format,
    })
}

/// The frames of a picture in `format`: more than one where it is animated
/// (a GIF, an animated PNG or WebP), which the blur does not follow.
fn frames(format: ImageFormat, bytes: &[u8]) -> image::ImageResult<usize> {
    let bytes = Cursor::new(bytes);
    Ok(match format {
        ImageFormat::Gif => GifDecoder::new(bytes)?.into_frames().count(),
        ImageFormat::Png => {
            let decoder = PngDecoder::new(bytes)?;
            if decoder.is_apng()? {
                decoder.apng()?.into_frames().count()
            } else {
                1
            }
        }
        ImageFormat::WebP => {
            let decoder = WebPDecoder::new(bytes)?;
            if decoder.has_animation() {
                decoder.into_frames().count()
            } else {
                1
            }
        }
        _ => 1,
    })
}

/// `image` with 8 bits per sample, converted with a note when it had more.
fn eight_bits(image: DynamicImage, color: ColorType) -> Result<DynamicImage> {
    let converted = match color {
        ColorType::L8 | ColorType::La8 | ColorType::Rgb8 | ColorType::Rgba8 => return Ok(image),
        ColorType::L16 => DynamicImage::ImageLuma8(image.to_luma8()),
        ColorType::La16 => DynamicImage::ImageLumaA8(image.to_luma_alpha8()),
        _ if color.has_alpha() => DynamicImage::ImageRgba8(image.to_rgba8()),
        _ => DynamicImage::ImageRgb8(image.to_rgb8()),
    };
    say!(
        "note: the picture has {color:?} samples; the blur kernels take 8 bits a \
         sample, so it is blurred and written as {:?}: what lies below 8 bits is lost",
        converted.color()
    )?;
    Ok(converted)
}

/// The test chart, `width × height`: squares, rings and thin lines, in
/// colour, with sharp edges everywhere.
fn chart((width, height): (u32, u32)) -> Result<Picture> {
    BlurShape::new(width as usize, height as usize, 3, 0).checked_len()?;
    let image = RgbImage::from_fn(width, height, |x, y| {
        let (fx, fy) = (x as f32 / width as f32, y as f32 / height as f32);
        let (dx, dy) = (fx - 0.5, (fy - 0.5) * height as f32 / width as f32);
        let ring = (((dx * dx + dy * dy).sqrt() * 24.0) as u32).is_multiple_of(2);
        let square = (x * 8 / width + y * 6 / height).is_multiple_of(2);
        let line = x.is_multiple_of(64) || y.is_multiple_of(64);
        if line {
            Rgb([0, 0, 0])
        } else if ring && (dx * dx + dy * dy) < 0.09 {
            Rgb([230, 40, 40])
        } else if square {
            Rgb([250, 250, 250])
        } else {
            Rgb([(fx * 255.0) as u8, 90, (fy * 255.0) as u8])
        }
    });
    say!("the built-in test chart: {width}×{height}, 3 channels")?;
    Ok(Picture {
        width,
        height,
        channels: 3,
        samples: image.into_raw(),
        format: ImageFormat::Png,
    })
}

/// The blurred samples as an image of the picture's kind.
fn to_image(picture: &Picture, samples: Vec<u8>) -> Result<DynamicImage> {
    let (width, height) = (picture.width, picture.height);
    let image = match picture.channels {
        1 => ImageBuffer::<Luma<u8>, _>::from_raw(width, height, samples).map(DynamicImage::from),
        2 => ImageBuffer::<LumaA<u8>, _>::from_raw(width, height, samples).map(DynamicImage::from),
        3 => ImageBuffer::<Rgb<u8>, _>::from_raw(width, height, samples).map(DynamicImage::from),
        _ => ImageBuffer::<Rgba<u8>, _>::from_raw(width, height, samples).map(DynamicImage::from),
    };
    image.ok_or(Error::ShapeMismatch {
        what: "blurred picture",
        expected: (width * height) as usize * usize::from(picture.channels),
        actual: 0,
    })
}

/// Where the result goes: never onto the input.
fn output_path(request: &Request, format: ImageFormat) -> Result<PathBuf> {
    let output = match (&request.output, &request.input) {
        (Some(output), _) => output.clone(),
        (None, Some(input)) if input == Path::new("-") => {
            PathBuf::from(format!("blurred.{}", format.extensions_str()[0]))
        }
        (None, Some(input)) => {
            let stem = input.file_stem().unwrap_or_default().to_string_lossy();
            // The input's extension where it names a format we write (not
            // `.jpe`, say), else the usual one of the picture's format.
            let name = match input.extension() {
                Some(extension) if output_format(input, format).is_ok() => {
                    format!("{stem}-blurred.{}", extension.to_string_lossy())
                }
                None => format!("{stem}-blurred"),
                Some(_) => format!("{stem}-blurred.{}", format.extensions_str()[0]),
            };
            input.with_file_name(name)
        }
        (None, None) => PathBuf::from("blurred.png"),
    };
    if let Some(input) = request
        .input
        .as_ref()
        .filter(|input| *input != Path::new("-"))
    {
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        if same(input, &output) {
            return Err(Error::OutputIsInput(output));
        }
    }
    Ok(output)
}
