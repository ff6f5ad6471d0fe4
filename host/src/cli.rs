//! The `locality` command line.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rand::{SeedableRng, rngs::SmallRng};

use crate::backend::Backend;
use crate::bench;
use crate::device::Gpu;
use crate::emulator::Emulator;
use crate::error::{Error, Result};
use crate::kernels::{self, blur::ImageShape, gemv::GemvShape, matmul::MatmulShape};
use crate::report;
use crate::suite::{self, Plan};
use crate::timing::Runs;

/// Runs every kernel on the GPU, verifies each against a CPU reference and
/// prints how fast and how correct it is. Without a GPU, or with --emulate,
/// verifies the same kernels on the CPU emulator instead, at small sizes.
///
/// Exit status: 0 when every kernel is correct, 1 when any is not, 2 when
/// nothing could run (bad arguments, a failed CUDA call, a bug the emulator
/// caught), 3 when there is no CUDA driver or GPU (the kernels were then
/// verified on the emulator instead).
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Kernels to run: a family (matmul, gemv, blur) or an entry point
    /// (e.g. matmul_tiled_32, gemv_col_major_f64); repeatable. Default: all.
    #[arg(long = "kernel", value_name = "NAME", value_parser = kernel_names())]
    pub kernels: Vec<String>,
    /// Matmul size M×N×K (A is M×K, B is K×N), or one number for a cube
    /// [default: 4096 on the GPU, 100x75x50 emulated].
    #[arg(long, value_name = "MxNxK", value_parser = parse_dims::<3>)]
    pub matmul: Option<[usize; 3]>,
    /// Gemv size M×N (A is M×N), or one number for a square
    /// [default: 16384 on the GPU, 300x200 emulated].
    #[arg(long, value_name = "MxN", value_parser = parse_dims::<2>)]
    pub gemv: Option<[usize; 2]>,
    /// Blur image WIDTH×HEIGHT, or one number for a square
    /// [default: 8192 on the GPU, 100x75 emulated].
    #[arg(long, value_name = "WxH", value_parser = parse_dims::<2>)]
    pub blur: Option<[usize; 2]>,
    /// Blur channels: 1 for grayscale, 3 for RGB.
    #[arg(long, default_value_t = 3)]
    pub channels: usize,
    /// Blur radius: the window is (2r+1)×(2r+1).
    #[arg(long, default_value_t = 3)]
    pub radius: u32,
    /// Timed runs per kernel (the median is reported), after 3 untimed ones
    /// on the GPU [default: 20 on the GPU, 1 emulated].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: Option<u32>,
    /// Verify the kernels on the CPU emulator, which also catches barrier
    /// and shared-memory bugs, instead of on the GPU.
    #[arg(long)]
    pub emulate: bool,
    /// Seed for the random inputs; drawn afresh when not given.
    #[arg(long)]
    pub seed: Option<u64>,
    /// The CUDA device to use.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Times every kernel over a sweep of sizes against cuBLAS and the
    /// limits of the GPU measured in the same run, and places each on a
    /// roofline. No verification: the default run does that.
    ///
    /// Exit status: 0 when the sweep ran, 2 when it could not.
    Bench(BenchArgs),
}

/// The options of `locality bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Kernels to time: a family (matmul, gemv, blur) or an entry point
    /// (e.g. matmul_tiled_32, gemv_col_major_f64); repeatable. Default: all.
    /// Each kernel's baseline is timed with it.
    #[arg(long = "kernel", value_name = "NAME", value_parser = kernel_names())]
    pub kernels: Vec<String>,
    /// Matmul sizes, comma-separated: each M×N×K, or one number for a cube.
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_dims::<3>,
          default_value = "512,1024,2048,4096,8192")]
    pub matmul_sizes: Vec<[usize; 3]>,
    /// Gemv sizes, comma-separated: each M×N, or one number for a square.
    /// Every size runs in f32 and in f64.
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_dims::<2>,
          default_value = "1024,2048,4096,8192,16384")]
    pub gemv_sizes: Vec<[usize; 2]>,
    /// Blur image sizes, comma-separated: each WIDTH×HEIGHT, or one number
    /// for a square.
    #[arg(long, value_name = "SIZES", value_delimiter = ',', value_parser = parse_dims::<2>,
          default_value = "1024,2048,4096,8192")]
    pub blur_sizes: Vec<[usize; 2]>,
    /// Blur channels: 1 for grayscale, 3 for RGB.
    #[arg(long, default_value_t = 3)]
    pub channels: usize,
    /// Blur radius: the window is (2r+1)×(2r+1).
    #[arg(long, default_value_t = 3)]
    pub radius: u32,
    /// Timed runs per kernel and size (the median is reported), after 3
    /// untimed ones; at least 20.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(20..))]
    pub runs: u32,
    /// Write every result, the ceilings and the device to FILE as JSON
    /// (schema in docs/bench.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write roofline.svg and one throughput plot per family into DIR,
    /// creating it if needed.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// The CUDA device to use.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

impl BenchArgs {
    pub fn plan(&self) -> bench::Plan {
        bench::Plan {
            kernels: selected(&self.kernels),
            matmul: self
                .matmul_sizes
                .iter()
                .map(|&[m, n, k]| MatmulShape::new(m, n, k))
                .collect(),
            gemv: self
                .gemv_sizes
                .iter()
                .map(|&[m, n]| GemvShape::new(m, n))
                .collect(),
            images: self
                .blur_sizes
                .iter()
                .map(|&[width, height]| ImageShape::new(width, height, self.channels))
                .collect(),
            radius: self.radius,
            runs: Runs {
                warmup: 3,
                timed: self.runs as usize,
            },
            json: self.json.clone(),
            plots: self.plots.clone(),
            device: self.device,
        }
    }
}

fn kernel_names() -> clap::builder::PossibleValuesParser {
    let families = ["matmul", "gemv", "blur"];
    clap::builder::PossibleValuesParser::new(families.into_iter().chain(kernels::entry_points()))
}

/// Parses `A`, `AxB` or `AxBxC` (`×` allowed too) into N dimensions; one
/// number stands for all N.
fn parse_dims<const N: usize>(text: &str) -> Result<[usize; N], String> {
    let parts: Vec<usize> = text
        .split(['x', '×'])
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .map_err(|e| format!("'{part}' is not a size: {e}"))
        })
        .collect::<Result<_, _>>()?;
    match parts.len() {
        1 => Ok([parts[0]; N]),
        n if n == N => Ok(parts.try_into().expect("length checked")),
        n => Err(format!("expected 1 or {N} sizes separated by 'x', got {n}")),
    }
}

/// The entry points that `--kernel` names select, in teaching order: all of
/// them when none is named.
fn selected(names: &[String]) -> Vec<&'static str> {
    kernels::entry_points()
        .filter(|entry| {
            names.is_empty()
                || names
                    .iter()
                    .any(|k| entry == k || entry.starts_with(&format!("{k}_")))
        })
        .collect()
}

impl Cli {
    /// The entry points selected, in teaching order.
    pub fn selected_kernels(&self) -> Vec<&'static str> {
        selected(&self.kernels)
    }

    /// The plan for `target`, with its default sizes where none were given,
    /// checked against every selected kernel before any work starts.
    pub fn plan(&self, target: Target) -> Result<Plan> {
        let defaults = match target {
            Target::Gpu => GPU_DEFAULTS,
            Target::Emulator => EMULATOR_DEFAULTS,
        };
        let [m, n, k] = self.matmul.unwrap_or(defaults.matmul);
        let [gemv_m, gemv_n] = self.gemv.unwrap_or(defaults.gemv);
        let [width, height] = self.blur.unwrap_or(defaults.blur);
        let plan = Plan {
            kernels: self.selected_kernels(),
            matmul: MatmulShape::new(m, n, k),
            gemv: GemvShape::new(gemv_m, gemv_n),
            image: ImageShape::new(width, height, self.channels),
            radius: self.radius,
            runs: Runs {
                warmup: defaults.warmup,
                timed: self.runs.map_or(defaults.runs, |runs| runs as usize),
            },
        };
        plan.validate()?;
        Ok(plan)
    }
}

/// Where the kernels are to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gpu,
    Emulator,
}

struct Defaults {
    matmul: [usize; 3],
    gemv: [usize; 2],
    blur: [usize; 2],
    warmup: usize,
    runs: usize,
}

/// Sizes that fill a large GPU, so that timings mean something.
const GPU_DEFAULTS: Defaults = Defaults {
    matmul: [4096; 3],
    gemv: [16384; 2],
    blur: [8192; 2],
    warmup: 3,
    runs: 20,
};

/// Sizes that are no multiple of any tile width, small enough to emulate in
/// seconds; one untimed-free run, since the time is the emulator's.
const EMULATOR_DEFAULTS: Defaults = Defaults {
    matmul: [100, 75, 50],
    gemv: [300, 200],
    blur: [100, 75],
    warmup: 0,
    runs: 1,
};

/// How a run ended, when nothing stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every kernel was correct where it ran.
    Correct,
    /// The benchmark ran to the end.
    Benchmarked,
    /// Some kernel was wrong.
    Wrong,
    /// There was no GPU to run on; every kernel was correct on the emulator.
    EmulatedOnly,
}

impl Verdict {
    /// The process exit status this verdict stands for.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Correct | Self::Benchmarked => 0,
            Self::Wrong => 1,
            Self::EmulatedOnly => 3,
        }
    }
}

/// Runs the command.
pub fn run(cli: &Cli) -> Result<Verdict> {
    match &cli.command {
        Some(Command::Bench(args)) => bench::run(&args.plan()).map(|()| Verdict::Benchmarked),
        None if cli.emulate => verify(&Emulator, &cli.plan(Target::Emulator)?, cli.seed),
        None => verify_on_gpu(cli),
    }
}

/// The default run: verify and time every selected kernel on the GPU, or
/// on the emulator when there is no GPU.
fn verify_on_gpu(cli: &Cli) -> Result<Verdict> {
    let plan = cli.plan(Target::Gpu)?;
    match Gpu::new(cli.device) {
        Ok(gpu) => verify(&gpu, &plan, cli.seed),
        Err(missing @ (Error::NoDriver | Error::NoDevice)) => {
            println!("{missing}.");
            println!(
                "Verifying the kernels on the CPU emulator instead, at small sizes (--emulate asks for this)."
            );
            let verdict = verify(&Emulator, &cli.plan(Target::Emulator)?, cli.seed)?;
            Ok(if verdict == Verdict::Correct {
                Verdict::EmulatedOnly
            } else {
                verdict
            })
        }
        Err(error) => Err(error),
    }
}

/// Verifies and times the plan's kernels on `backend` and prints the table.
fn verify(backend: &impl Backend, plan: &Plan, seed: Option<u64>) -> Result<Verdict> {
    let seed = seed.unwrap_or_else(rand::random);
    println!("{} · random inputs from seed {seed}", backend.description());
    let mut rng = SmallRng::seed_from_u64(seed);
    let show_progress = std::io::stderr().is_terminal();
    let rows = suite::run(backend, plan, &mut rng, |kernel, size| {
        if show_progress {
            eprint!("\rverifying {kernel} at {size}…\x1b[K");
            let _ = std::io::stderr().flush();
        }
    })?;
    if show_progress {
        eprint!("\r\x1b[K");
    }
    print!("{}", report::table(&rows));
    let failures: Vec<_> = rows.iter().filter(|row| !row.comparison.passed()).collect();
    for row in &failures {
        println!("{} is WRONG: {}", row.kernel, row.comparison);
    }
    Ok(if failures.is_empty() {
        Verdict::Correct
    } else {
        Verdict::Wrong
    })
}
