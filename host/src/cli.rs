//! The `locality` command line.

use std::io::{IsTerminal, Write};

use clap::Parser;
use rand::{SeedableRng, rngs::SmallRng};

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
#[command(version, about)]
pub struct Cli {
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

impl Cli {
    /// The entry points selected, in teaching order.
    pub fn selected_kernels(&self) -> Vec<&'static str> {
        kernels::entry_points()
            .filter(|name| {
                self.kernels.is_empty()
                    || self
                        .kernels
                        .iter()
                        .any(|k| name == k || name.starts_with(&format!("{k}_")))
            })
            .collect()
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

/// Runs the command; `Ok(true)` when every kernel verified.
pub fn run(cli: &Cli) -> Result<bool> {
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
