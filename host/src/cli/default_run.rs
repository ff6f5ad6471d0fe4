//! The default run: every selected kernel verified against its CPU
//! reference and timed, on the GPU or, without one, on the emulator; what it
//! prints once they are; and what to try next.

use std::io::IsTerminal;
use std::time::Duration;

use gpu_host::Error as HostError;
use gpu_host::backend::Backend;
use gpu_host::emulator::Emulator;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{SeedableRng, rngs::SmallRng};

use crate::bench::ceilings::{Hardware, Peaks};
use crate::console::{self, say};
use crate::error::{Error, Result};
use crate::family::Target;
use crate::report;
use crate::suite::{self, Plan, Step};

use super::options::Cli;
use super::verdict::Verdict;

/// The default run: verify and time every selected kernel on the GPU, or
/// on the emulator when there is no GPU.
pub(super) fn verify_on_gpu(cli: &Cli) -> Result<Verdict> {
    let plan = cli.plan(Target::Gpu)?;
    match crate::gpu::open(cli.device.unwrap_or(0)) {
        Ok(gpu) => {
            let twin = console::or_say_why(gpu.twin(), |error| {
                format!("{error}; the CUDA C++ twins are skipped.")
            })?;
            let screen = Screen {
                verbose: cli.verbose,
                timed: true,
                peak: Hardware::read(&gpu).peak(),
            };
            verify(&gpu, twin.as_ref(), &plan, cli.seed, screen)
        }
        Err(missing @ Error::Host(HostError::NoDriver | HostError::NoDevice)) => {
            match cli.device {
                Some(device) => say!("{missing}, so GPU {device} was not used.")?,
                None => say!("{missing}.")?,
            }
            if cli.sizes.any_given() {
                say!(
                    "Verifying the kernels on the CPU emulator instead, at its own small sizes, \
                     not the ones given for the GPU (--emulate runs those on the emulator)."
                )?;
            } else {
                say!(
                    "Verifying the kernels on the CPU emulator instead, at small sizes (--emulate asks for this)."
                )?;
            }
            let plan = cli.emulated_defaults()?;
            verify_without_gpu(&plan, cli.seed, Screen::emulated(cli.verbose))
        }
        Err(error) => Err(error),
    }
}

/// What the default run prints once its kernels are verified.
#[derive(Clone, Copy, Debug)]
pub(super) struct Screen {
    /// Every kernel's row, the copies and the CPU, not only the summary.
    verbose: bool,
    /// Whether the times mean something: on a GPU, not on the emulator.
    timed: bool,
    /// The GPU's theoretical limits, the summary's yardstick, where known.
    peak: Option<Peaks>,
}

impl Screen {
    pub(super) fn emulated(verbose: bool) -> Self {
        Self {
            verbose,
            timed: false,
            peak: None,
        }
    }

    pub(super) fn every_row() -> Self {
        Self::emulated(true)
    }
}

/// What to try after the default run.
const NEXT_STEPS: &str = "\
next: cargo run --release -- --verbose       every kernel's row, the copies and the CPU baseline
      cargo run --release -- bench           a sweep of sizes against cuBLAS, NPP and the
                                             GPU's measured ceilings (--plots DIR draws it)
      cargo run --release -- lessons         the material's memory lessons, each with a verdict
      cargo run --release -- blur [PICTURE]  a picture (or a test chart) blurred on the GPU
      cargo run --release -- --help          every option
";

/// Verifies `plan` on the CPU emulator, where a GPU was asked for and is
/// missing: a run that is all correct is then correct on the emulator only.
pub(super) fn verify_without_gpu(plan: &Plan, seed: u64, screen: Screen) -> Result<Verdict> {
    let verdict = verify(&Emulator::from_seed(seed), None, plan, seed, screen)?;
    Ok(if verdict == Verdict::Correct {
        Verdict::EmulatedOnly
    } else {
        verdict
    })
}

/// Verifies and times the plan's kernels on `backend` with inputs from
/// `seed`, and their twins on `twin` when given, and prints what `screen`
/// asks for.
pub(super) fn verify<B: Backend>(
    backend: &B,
    twin: Option<&B>,
    plan: &Plan,
    seed: u64,
    screen: Screen,
) -> Result<Verdict> {
    say!(
        "{} · random inputs from seed {seed} (--seed {seed} replays them)",
        backend.description()
    )?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(plan.rows() as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
                .expect("a valid template"),
        );
        // The clock keeps moving through a step that takes minutes.
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut left_out = Vec::new();
    let rows = suite::run(backend, twin, plan, &mut rng, |step| match step {
        Step::Preparing { family, size } => bar.set_message(format!(
            "{family} at {size}: inputs, CPU reference, copies and CPU baseline"
        )),
        Step::Kernel { kernel, size } => {
            bar.set_message(format!("verifying {kernel} at {size}"));
            bar.inc(1);
        }
        Step::LeftOut { kernel, size, why } => {
            left_out.push(format!("{kernel} left out at {size}: {why}"));
            bar.inc(1);
        }
    });
    bar.finish_and_clear();
    let rows = rows?;
    if screen.verbose {
        console::print(format_args!("{}", report::table(&rows)))?;
        console::print(format_args!("\n{}", report::whole(&rows)))?;
    } else {
        console::print(format_args!(
            "{}",
            report::summary(&rows, screen.timed, screen.peak)
        ))?;
    }
    for line in &left_out {
        say!("{line}")?;
    }
    if rows.iter().any(|row| row.traffic.is_some()) {
        console::print(format_args!("\n{}", report::traffic(&rows)))?;
    }
    let failures: Vec<_> = rows.iter().filter(|row| !row.passed()).collect();
    for row in &failures {
        if !row.comparison.passed() {
            say!("{} is WRONG: {}", row.kernel, row.comparison)?;
        }
        if !row.whole.cpu.comparison.passed() {
            say!(
                "{}'s CPU baseline ({}) is WRONG: {}",
                row.kernel,
                row.whole.cpu_name,
                row.whole.cpu.comparison
            )?;
        }
        if let Some(Ok(twin)) = &row.twin
            && !twin.comparison.passed()
        {
            say!(
                "{}'s CUDA C++ twin is WRONG: {}",
                row.kernel,
                twin.comparison
            )?;
        }
    }
    for row in &rows {
        if let Some(Err(skipped)) = &row.twin {
            say!("{} at {}: twin skipped: {skipped}", row.kernel, row.size)?;
        }
    }
    let checked = match (twin.is_some(), screen.timed) {
        (true, _) => {
            "each kernel and its CUDA C++ twin checked element by element against a CPU reference"
        }
        (false, true) => "each kernel checked element by element against a CPU reference",
        (false, false) => {
            "each kernel checked element by element against a CPU reference, and every barrier, \
             shared-memory access and global-memory index by the emulator"
        }
    };
    let runs = match rows.len() {
        1 => "1 run".to_string(),
        runs => format!("{runs} runs"),
    };
    if failures.is_empty() {
        say!("\nAll correct ({runs}): {checked}.")?;
    } else {
        say!("\n{} of {runs} WRONG (above).", failures.len())?;
    }
    if let (false, Some(peak)) = (screen.verbose, screen.peak) {
        say!(
            "of the peak: the fastest kernel's time against the shortest the GPU's theoretical \
             limits allow ({:.2} TB/s, {:.1} TFLOP/s FP32{}), which nothing reaches; bench \
             measures the practical ones.",
            peak.fp32.bandwidth_gbytes / 1e3,
            peak.fp32.compute_gops / 1e3,
            peak.tensor.map_or(String::new(), |tensor| format!(
                ", {:.1} TFLOP/s bf16 on the tensor cores",
                tensor / 1e3
            )),
        )?;
    }
    if !screen.timed && !screen.verbose {
        say!("Times on the emulator mean nothing; on a GPU this run times every kernel.")?;
    }
    if !screen.verbose {
        console::print(format_args!("\n{NEXT_STEPS}"))?;
    }
    Ok(if failures.is_empty() {
        Verdict::Correct
    } else {
        Verdict::Wrong
    })
}
