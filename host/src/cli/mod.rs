//! The `locality` command line: the options it accepts, and the run of the
//! command they name.

mod default_run;
mod options;
mod plans;
mod sizes;
mod verdict;

use gpu_host::Error as HostError;
use gpu_host::emulator::{CountingEmulator, Emulator};
use gpu_host::timing::Runs;

use crate::bench;
use crate::console::{self, say};
use crate::error::{Error, Result};
use crate::families;
use crate::family::Target;
use crate::lessons;
use crate::output;
use crate::picture;
use crate::report;
use crate::suite::{Plan, WorkLimit};

use default_run::{Screen, verify, verify_on_gpu, verify_without_gpu};
pub use options::{BenchArgs, BlurArgs, Cli, Command, LessonsArgs};
pub use sizes::FamilySizes;
pub use verdict::Verdict;

/// Runs the command.
pub fn run(cli: &Cli) -> Result<Verdict> {
    // An output on standard output takes it before anything is printed.
    let outputs = match &cli.command {
        Some(Command::Bench(args)) => vec![args.json.as_deref(), args.markdown.as_deref()],
        Some(Command::Blur(args)) => vec![args.output.as_deref()],
        Some(Command::Lessons(args)) => vec![args.json.as_deref()],
        None => Vec::new(),
    };
    if outputs.into_iter().flatten().any(output::is_stdout) {
        console::hand_stdout_over();
    }
    match &cli.command {
        Some(Command::Bench(args)) => {
            let ceilings = args.ceilings.as_deref();
            bench::run(
                &args.plan(),
                &args.outputs(),
                args.device,
                args.seed,
                ceilings,
            )
            .map(|()| Verdict::Benchmarked)
        }
        Some(Command::Blur(args)) => picture::run(&args.request()).map(|()| Verdict::Blurred),
        Some(Command::Lessons(args)) => run_lessons(args),
        None if cli.list => list(cli.device.unwrap_or(0)).map(|()| Verdict::Listed),
        None if cli.traffic => verify(
            &CountingEmulator::from_seed(cli.seed),
            None,
            &cli.plan(Target::Emulator)?,
            cli.seed,
            Screen::every_row(),
        ),
        None if cli.emulate => verify(
            &Emulator::from_seed(cli.seed),
            None,
            &cli.plan(Target::Emulator)?,
            cli.seed,
            Screen::emulated(cli.verbose),
        ),
        None => verify_on_gpu(cli),
    }
}

/// The lessons on the GPU, or their kernels verified on the emulator when
/// there is none.
fn run_lessons(args: &LessonsArgs) -> Result<Verdict> {
    let request = lessons::Request {
        lesson: args.lesson.clone(),
        json: args.json.clone(),
        plots: args.plots.clone(),
        runs: Runs {
            warmup: 3,
            timed: args.runs as usize,
        },
        seed: args.seed,
        device: args.device,
        peer: args.peer,
    };
    match lessons::run(&request) {
        Ok(true) => Ok(Verdict::Correct),
        Ok(false) => Ok(Verdict::Wrong),
        Err(missing @ Error::Host(HostError::NoDriver | HostError::NoDevice)) => {
            say!(
                "{missing}: the lessons need a GPU to time. Verifying their kernels on the CPU \
                 emulator instead, at small sizes."
            )?;
            if args.json.is_some() || args.plots.is_some() {
                say!("No JSON or plots are written: they are the GPU's figures.")?;
            }
            let kernels = families::kernels()
                .into_iter()
                .filter(|kernel| !kernel.benched)
                .map(|kernel| kernel.name)
                .collect();
            let plan = Plan {
                kernels,
                sizes: FamilySizes::<false>::unset().defaults(Target::Emulator),
                runs: Runs {
                    warmup: 0,
                    timed: 1,
                },
                limit: WorkLimit::EMULATED,
            };
            plan.validate()?;
            let verdict = verify_without_gpu(&plan, request.seed, Screen::every_row())?;
            let first = Emulator::from_seed(request.seed);
            let second = first.on_device(1)?;
            match crate::peers::check_peers([&first, &second], request.seed) {
                Ok(()) => say!(
                    "the two-GPU lessons' kernels (sum_pair, chase) across two emulated GPUs, \
                     each reading the other's memory by peer access: correct"
                )?,
                Err(why) => {
                    say!("the two-GPU lessons' kernels across two emulated GPUs: WRONG: {why}")?;
                    return Ok(Verdict::Wrong);
                }
            }
            Ok(verdict)
        }
        Err(error) => Err(error),
    }
}

/// Prints every kernel with its family and lesson, and what the driver
/// gave it on GPU `device` when there is one.
fn list(device: usize) -> Result<()> {
    let gpu = match crate::gpu::open(device) {
        Ok(gpu) => Some(gpu),
        Err(missing @ Error::Host(HostError::NoDriver | HostError::NoDevice)) => {
            say!("{missing}: no resources to show, only the kernels.")?;
            None
        }
        Err(error) => return Err(error),
    };
    if let Some(gpu) = &gpu {
        say!(
            "{} · resources as the driver compiled the PTX for it",
            gpu.name()
        )?;
    }
    console::print(format_args!(
        "{}",
        report::kernels(&families::kernels(), gpu.as_ref())?
    ))?;
    Ok(())
}
