//! The `locality` command line.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use rand::{SeedableRng, rngs::SmallRng};

use crate::bench;
use crate::device::Gpu;
use crate::error::Result;
use crate::kernels::{self, blur::ImageShape, gemv::GemvShape, matmul::MatmulShape};
use crate::report;
use crate::suite::{self, Plan};
use crate::timing::Runs;

/// Runs every kernel on the GPU, verifies each against a CPU reference and
/// prints how fast and how correct it is.
///
/// Exit status: 0 when every kernel is correct, 1 when any is not, 2 when
/// nothing could run (no driver, no GPU, bad arguments).
#[derive(Parser, Debug)]
#[command(version, about, args_conflicts_with_subcommands = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Kernels to run: a family (matmul, gemv, blur) or an entry point
    /// (e.g. matmul_tiled_32, gemv_col_major_f64); repeatable. Default: all.
    #[arg(long = "kernel", value_name = "NAME", value_parser = kernel_names())]
    pub kernels: Vec<String>,
    /// Matmul size M×N×K (A is M×K, B is K×N), or one number for a cube.
    #[arg(long, value_name = "MxNxK", default_value = "4096", value_parser = parse_dims::<3>)]
    pub matmul: [usize; 3],
    /// Gemv size M×N (A is M×N), or one number for a square.
    #[arg(long, value_name = "MxN", default_value = "16384", value_parser = parse_dims::<2>)]
    pub gemv: [usize; 2],
    /// Blur image WIDTH×HEIGHT, or one number for a square.
    #[arg(long, value_name = "WxH", default_value = "8192", value_parser = parse_dims::<2>)]
    pub blur: [usize; 2],
    /// Blur channels: 1 for grayscale, 3 for RGB.
    #[arg(long, default_value_t = 3)]
    pub channels: usize,
    /// Blur radius: the window is (2r+1)×(2r+1).
    #[arg(long, default_value_t = 3)]
    pub radius: u32,
    /// Timed runs per kernel (the median is reported), after 3 untimed ones.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
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

    pub fn plan(&self) -> Plan {
        let [m, n, k] = self.matmul;
        let [gemv_m, gemv_n] = self.gemv;
        let [width, height] = self.blur;
        Plan {
            kernels: self.selected_kernels(),
            matmul: MatmulShape::new(m, n, k),
            gemv: GemvShape::new(gemv_m, gemv_n),
            image: ImageShape::new(width, height, self.channels),
            radius: self.radius,
            runs: Runs {
                warmup: 3,
                timed: self.runs as usize,
            },
        }
    }
}

/// Runs the command; `Ok(true)` when every kernel verified, or when the
/// benchmark ran.
pub fn run(cli: &Cli) -> Result<bool> {
    match &cli.command {
        Some(Command::Bench(args)) => bench::run(&args.plan()).map(|()| true),
        None => verify(cli),
    }
}

/// The default run: verify and time every selected kernel.
fn verify(cli: &Cli) -> Result<bool> {
    let plan = cli.plan();
    plan.validate()?;
    let gpu = Gpu::new(cli.device)?;
    let seed = cli.seed.unwrap_or_else(rand::random);
    println!("{} · random inputs from seed {seed}", gpu.name());
    let mut rng = SmallRng::seed_from_u64(seed);
    let show_progress = std::io::stderr().is_terminal();
    let rows = suite::run(&gpu, &plan, &mut rng, |kernel, size| {
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
    Ok(failures.is_empty())
}
