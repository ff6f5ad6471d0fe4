//! What the `locality` command line accepts: the default run's options, each
//! subcommand's, and the parsers of their values; and what a subcommand's
//! options ask for besides a plan (the picture to blur, the bench's
//! reports).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::bench;
use crate::families;
use crate::lessons;
use crate::picture;

use super::sizes::{FamilySizes, parse_dims};

/// The most timed runs `--runs` asks for: beyond it the median no longer
/// moves, only the time spent.
const MAX_RUNS: i64 = 1000;

/// Runs every kernel on the GPU, verifies each against a CPU reference and
/// prints how fast and how correct it is. Without a GPU, or with --emulate,
/// verifies the same kernels on the CPU emulator instead, at small sizes.
///
/// Exit status: 0 when every kernel is correct, 1 when any is not, 2 when
/// nothing could run (bad arguments, a failed CUDA call, a bug the emulator
/// caught) or standard output could not be written, 3 when there is no CUDA
/// driver or GPU (the kernels were then verified on the emulator instead).
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Kernels to run: a family (matmul, gemv, blur, transpose, or a
    /// lesson's: access, caches, intensity) or an entry point (e.g.
    /// matmul_tiled_32, gemv_col_major_f64); repeatable. Default: all.
    #[arg(long = "kernel", value_name = "NAME", value_parser = kernel_names())]
    pub kernels: Vec<String>,
    #[command(flatten)]
    pub sizes: FamilySizes<false>,
    /// Timed runs per kernel (the median is reported), after 3 untimed ones
    /// on the GPU; at most 1000 [default: 20 on the GPU, 1 emulated].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_RUNS))]
    pub runs: Option<u32>,
    /// Verify the kernels on the CPU emulator, which also catches barrier,
    /// shared- and global-memory bugs, instead of on the GPU.
    #[arg(long)]
    pub emulate: bool,
    /// With --emulate: count each kernel's memory traffic as the hardware
    /// would (requests, sectors, bank conflicts) and print it.
    #[arg(long, requires = "emulate")]
    pub traffic: bool,
    /// Print every kernel's row (time, throughput, error, its twin's time),
    /// the copies to the GPU and back and the CPU baseline, not only each
    /// family's fastest kernel.
    #[arg(short, long)]
    pub verbose: bool,
    /// List every kernel with its lesson and, on a GPU, the registers,
    /// local memory and shared memory the driver gave it; run nothing.
    #[arg(long)]
    pub list: bool,
    /// Seed for the random inputs; drawn afresh when not given.
    #[arg(long, default_value_t = rand::random(), hide_default_value = true)]
    pub seed: u64,
    /// The CUDA device to use [default: 0].
    #[arg(long, conflicts_with = "emulate")]
    pub device: Option<usize>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Times every kernel over a sweep of sizes against cuBLAS and the
    /// limits of the GPU measured in the same run, and places each on a
    /// roofline. No verification: the default run does that.
    ///
    /// Exit status: 0 when the sweep ran, 2 when it could not or standard
    /// output could not be written (the reports are written first).
    Bench(BenchArgs),
    /// Blurs a PNG or JPEG picture on the GPU (on the emulator without
    /// one), checks every sample against the CPU reference, prints the
    /// kernel's time and writes the result in the picture's format. Without
    /// a picture, blurs a built-in test chart.
    ///
    /// Exit status: 0 when the blurred picture was written, 2 when it could
    /// not be (nothing is then written, and an existing OUTPUT is as it was).
    Blur(BlurArgs),
    /// Runs each memory lesson of the material on the GPU: the claim as
    /// the material states it, what this GPU shows (times, bandwidth, the
    /// ratio the claim is about) and a verdict. Every launch is verified
    /// against the CPU reference before it is timed. Without a GPU,
    /// verifies the lessons' kernels on the CPU emulator instead.
    ///
    /// Exit status: 0 when every lesson ran with correct kernels, 1 when a
    /// kernel was wrong, 2 when the lessons could not run, 3 when there is
    /// no CUDA driver or GPU (the kernels were then verified on the
    /// emulator).
    Lessons(LessonsArgs),
}

/// The options of `locality lessons`.
#[derive(Args, Debug)]
pub struct LessonsArgs {
    /// The lesson to run; all of them when not given.
    #[arg(value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(lessons::names()))]
    pub lesson: Option<String>,
    /// Timed runs per point (the median is reported), after 3 untimed
    /// ones; 5 to 1000.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(5..=MAX_RUNS))]
    pub runs: u32,
    /// Write every lesson's claim, points, finding and verdict to FILE as
    /// JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write one plot per lesson, NAME.svg, into DIR, creating it if
    /// needed.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Seed for the random inputs; drawn afresh when not given.
    #[arg(long, default_value_t = rand::random(), hide_default_value = true)]
    pub seed: u64,
    /// The CUDA device to use.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// The second GPU of the two-GPU lessons (peer, latency, all-reduce)
    /// [default: the first GPU other than --device, where there is one].
    #[arg(long, value_name = "DEVICE")]
    pub peer: Option<usize>,
}

/// The options of `locality blur`.
#[derive(Args, Debug)]
pub struct BlurArgs {
    /// The picture to blur (PNG, JPEG, BMP, TIFF, WebP or GIF), or - for
    /// standard input; without it, a built-in test chart.
    #[arg(value_name = "INPUT")]
    pub input: Option<PathBuf>,
    /// Where to write the result, in the format its extension names (the
    /// input's without one), or - for standard output [default: INPUT's
    /// name with -blurred, or blurred.png for the chart]; never INPUT
    /// itself. A symbolic link is written through, a FIFO or device
    /// written to; only a regular file is replaced.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: Option<PathBuf>,
    /// The blur radius: the window is (2r+1)×(2r+1).
    #[arg(long, default_value_t = 3)]
    pub radius: u32,
    /// The blur kernel; by default the last of the ladder that takes the
    /// picture's channels and the radius, the fastest.
    #[arg(long, value_parser = blur_kernels())]
    pub kernel: Option<String>,
    /// The built-in chart's size, WxH or one number for a square.
    #[arg(long, value_name = "WxH", conflicts_with = "input", default_value = "1024x768", value_parser = parse_chart)]
    pub size: (u32, u32),
    /// Blur on the CPU emulator, even with a GPU.
    #[arg(long)]
    pub emulate: bool,
    /// The CUDA device to use [default: 0].
    #[arg(long, conflicts_with = "emulate")]
    pub device: Option<usize>,
}

impl BlurArgs {
    pub fn request(&self) -> picture::Request {
        picture::Request {
            input: self.input.clone(),
            output: self.output.clone(),
            chart: self.size,
            radius: self.radius,
            kernel: self.kernel.clone(),
            emulate: self.emulate,
            device: self.device.unwrap_or(0),
        }
    }
}

/// A chart's `WxH`, each side from 1 to 65535.
fn parse_chart(text: &str) -> Result<(u32, u32), String> {
    let side = |size: usize| match u16::try_from(size) {
        Ok(0) | Err(_) => Err(format!("{size} is not a side from 1 to 65535")),
        Ok(side) => Ok(u32::from(side)),
    };
    let dims = parse_dims(text, 2)?;
    Ok((side(dims[0])?, side(dims[1])?))
}

fn blur_kernels() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(picture::kernels())
}

/// The options of `locality bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Kernels to time: a family (matmul, gemv, blur, transpose, or a
    /// lesson's: access, caches, intensity) or an entry point (e.g.
    /// matmul_tiled_32, gemv_col_major_f64); repeatable. Default: every
    /// kernel of matmul, gemv, blur and transpose. Each kernel's baseline is
    /// timed with it.
    #[arg(long = "kernel", value_name = "NAME", value_parser = kernel_names())]
    pub kernels: Vec<String>,
    #[command(flatten)]
    pub sizes: FamilySizes<true>,
    /// Timed runs per kernel and size (the median is reported), after 3
    /// untimed ones; 20 to 1000.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(20..=MAX_RUNS))]
    pub runs: u32,
    /// Write every result, the ceilings, the device and each kernel's
    /// resources to FILE as JSON (schema in docs/bench.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write roofline.svg and one throughput plot per family into DIR,
    /// creating it if needed.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Write the results tables to FILE as Markdown: each kernel
    /// at its family's largest size, then every row.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Seed for the random inputs; drawn afresh when not given.
    #[arg(long, default_value_t = rand::random(), hide_default_value = true)]
    pub seed: u64,
    /// The CUDA device to use.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Take the ceilings from an earlier run's `--json` FILE, on a GPU of
    /// the same name, compute capability and SM count, instead of
    /// measuring them: a minute or two saved on a run of a few kernels.
    /// The kernels' ratios to their baselines and twins are measured in
    /// the run either way.
    #[arg(long, value_name = "FILE")]
    pub ceilings: Option<PathBuf>,
}

impl BenchArgs {
    pub fn outputs(&self) -> bench::Outputs {
        bench::Outputs {
            json: self.json.clone(),
            plots: self.plots.clone(),
            markdown: self.markdown.clone(),
        }
    }
}

fn kernel_names() -> clap::builder::PossibleValuesParser {
    let kernels = families::kernels().into_iter().map(|kernel| kernel.name);
    clap::builder::PossibleValuesParser::new(families::names().into_iter().chain(kernels))
}

#[cfg(test)]
mod tests {
    use crate::families::{self, Visitor};
    use crate::family::{Family, Shape};

    /// Every family brings its own options, all in one command line: two
    /// of one name would read each other's values.
    #[test]
    fn no_two_families_options_share_a_name() {
        struct Names(Vec<String>);
        impl Visitor for Names {
            fn visit<F: Family>(&mut self) -> crate::Result<()> {
                let options = F::Shape::options(false).into_iter();
                self.0
                    .extend(options.map(|option| option.get_id().to_string()));
                Ok(())
            }
        }
        let mut names = Names(Vec::new());
        families::visit(&mut names).unwrap();
        let mut unique = names.0.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.0.len(), "{:?}", names.0);
    }
}
