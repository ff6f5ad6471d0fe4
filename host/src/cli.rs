//! The `locality` command line.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgMatches, Args, Command as ClapCommand, FromArgMatches, Parser, Subcommand};
use gpu_host::Error as HostError;
use gpu_host::backend::Backend;
use gpu_host::emulator::{CountingEmulator, Emulator};
use gpu_host::timing::Runs;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{SeedableRng, rngs::SmallRng};

use crate::bench;
use crate::bench::ceilings::Hardware;
use crate::bench::roofline::Roof;
use crate::console::{self, say};
use crate::error::{Error, Result};
use crate::families::{self, Visitor};
use crate::family::{Family, Sizes, Target};
use crate::lessons;
use crate::output;
use crate::picture;
use crate::report;
use crate::suite::{self, Plan, Step, WorkLimit};

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
    #[arg(long)]
    pub seed: Option<u64>,
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
    #[arg(long)]
    pub seed: Option<u64>,
    /// The CUDA device to use.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
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
    #[arg(long)]
    pub seed: Option<u64>,
    /// The CUDA device to use.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
}

impl BenchArgs {
    pub fn plan(&self) -> Plan {
        // The lessons' kernels are timed by `locality lessons`, unless named.
        let kernels = match self.kernels.as_slice() {
            [] => families::kernels()
                .into_iter()
                .filter(|kernel| kernel.benched)
                .map(|kernel| kernel.name)
                .collect(),
            named => selected(named),
        };
        Plan {
            kernels,
            sizes: self.sizes.sizes(Target::Gpu),
            runs: Runs {
                warmup: 3,
                timed: self.runs as usize,
            },
            limit: WorkLimit::BENCHED,
        }
    }

    pub fn outputs(&self) -> bench::Outputs {
        bench::Outputs {
            json: self.json.clone(),
            plots: self.plots.clone(),
            markdown: self.markdown.clone(),
        }
    }
}

/// Each family's size option and its own options, made from the family
/// list: `--NAME SIZE` for a run, `--NAME-sizes SIZES` (a sweep) for the
/// bench when `SWEEP`.
#[derive(Clone, Debug)]
pub struct FamilySizes<const SWEEP: bool> {
    matches: ArgMatches,
}

/// The size option's id and flag for family `name`.
fn size_option(name: &'static str, sweep: bool) -> String {
    if sweep {
        format!("{name}-sizes")
    } else {
        name.to_string()
    }
}

impl<const SWEEP: bool> FamilySizes<SWEEP> {
    /// No size given, every option at its default.
    fn unset() -> Self {
        let command = Self::augment_args(ClapCommand::new("locality"));
        Self {
            matches: command.get_matches_from(["locality"]),
        }
    }

    /// The default sizes for `target`, with the options given.
    fn defaults(&self, target: Target) -> Sizes {
        Sizes::new(HashMap::new(), self.matches.clone(), target)
    }

    /// Whether any family's size was given.
    fn any_given(&self) -> bool {
        self.sizes(Target::Gpu).any_given()
    }

    fn sizes(&self, target: Target) -> Sizes {
        struct Given<'a> {
            matches: &'a ArgMatches,
            sweep: bool,
            given: HashMap<String, Vec<Vec<usize>>>,
        }
        impl Visitor for Given<'_> {
            fn visit<F: Family>(&mut self) -> Result<()> {
                let id = size_option(F::NAME, self.sweep);
                if let Some(sizes) = self.matches.get_many::<Vec<usize>>(&id) {
                    self.given
                        .insert(F::NAME.to_string(), sizes.cloned().collect());
                }
                Ok(())
            }
        }
        let mut given = Given {
            matches: &self.matches,
            sweep: SWEEP,
            given: HashMap::new(),
        };
        families::visit(&mut given).expect("reading options cannot fail");
        Sizes::new(given.given, self.matches.clone(), target)
    }
}

impl<const SWEEP: bool> FromArgMatches for FamilySizes<SWEEP> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self {
            matches: matches.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.matches = matches.clone();
        Ok(())
    }
}

impl<const SWEEP: bool> Args for FamilySizes<SWEEP> {
    fn augment_args(command: ClapCommand) -> ClapCommand {
        struct Options {
            sweep: bool,
            args: Vec<Arg>,
        }
        impl Visitor for Options {
            fn visit<F: Family>(&mut self) -> Result<()> {
                let id = size_option(F::NAME, self.sweep);
                let known = |args: &[Arg], id: &str| args.iter().any(|arg| arg.get_id() == id);
                if known(&self.args, &id) {
                    return Ok(());
                }
                let dims = F::SIZE.dims();
                let parse = move |text: &str| parse_dims(text, dims);
                let show = |dims: &[usize]| {
                    dims.iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                };
                let size = Arg::new(id.clone())
                    .long(id)
                    .value_name(F::SIZE.value_name)
                    .value_parser(parse);
                let size = if self.sweep {
                    size.value_delimiter(',')
                        .default_value(F::SIZE.sweep)
                        .help(format!("{}; comma-separated for a sweep", F::SIZE.help))
                } else {
                    size.help(format!(
                        "{} [default: {} on the GPU, {} emulated]",
                        F::SIZE.help,
                        show(F::SIZE.on_gpu),
                        show(F::SIZE.emulated)
                    ))
                };
                self.args.push(size);
                for option in F::options(self.sweep) {
                    if !known(&self.args, option.get_id().as_str()) {
                        self.args.push(option);
                    }
                }
                Ok(())
            }
        }
        let mut options = Options {
            sweep: SWEEP,
            args: Vec::new(),
        };
        families::visit(&mut options).expect("listing options cannot fail");
        command.args(options.args)
    }

    fn augment_args_for_update(command: ClapCommand) -> ClapCommand {
        Self::augment_args(command)
    }
}

fn kernel_names() -> clap::builder::PossibleValuesParser {
    let kernels = families::kernels().into_iter().map(|kernel| kernel.name);
    clap::builder::PossibleValuesParser::new(families::names().into_iter().chain(kernels))
}

/// Parses `A`, `AxB` or `AxBxC` (`×` allowed too) into `dims` dimensions or
/// one, which stands for all of them.
fn parse_dims(text: &str, dims: usize) -> Result<Vec<usize>, String> {
    let parts: Vec<usize> = text
        .split(['x', '×'])
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .map_err(|e| format!("'{part}' is not a size: {e}"))
        })
        .collect::<Result<_, _>>()?;
    match parts.len() {
        1 => Ok(vec![parts[0]; dims]),
        n if n == dims => Ok(parts),
        n => Err(format!(
            "expected 1 or {dims} sizes separated by 'x', got {n}"
        )),
    }
}

/// The entry points that `--kernel` names select, in teaching order: all of
/// them when none is named.
fn selected(names: &[String]) -> Vec<&'static str> {
    families::kernels()
        .into_iter()
        .filter(|kernel| {
            names.is_empty()
                || names
                    .iter()
                    .any(|name| kernel.name == name || kernel.family == name)
        })
        .map(|kernel| kernel.name)
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
        self.plan_at(target, self.sizes.sizes(target))
    }

    /// The plan for the emulator at its own small sizes, whatever sizes
    /// were given for the GPU.
    fn emulated_defaults(&self) -> Result<Plan> {
        self.plan_at(Target::Emulator, self.sizes.defaults(Target::Emulator))
    }

    fn plan_at(&self, target: Target, sizes: Sizes) -> Result<Plan> {
        let (warmup, runs, limit) = match target {
            Target::Gpu => (3, 20, WorkLimit::VERIFIED),
            // One run, since the time is the emulator's.
            Target::Emulator => (0, 1, WorkLimit::EMULATED),
        };
        let plan = Plan {
            kernels: self.selected_kernels(),
            sizes,
            runs: Runs {
                warmup,
                timed: self.runs.map_or(runs, |runs| runs as usize),
            },
            limit,
        };
        plan.validate()?;
        Ok(plan)
    }
}

/// How a run ended, when nothing stopped it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every kernel was correct where it ran.
    Correct,
    /// The kernels were listed.
    Listed,
    /// The benchmark ran to the end.
    Benchmarked,
    /// The blurred picture was written.
    Blurred,
    /// Some kernel was wrong.
    Wrong,
    /// There was no GPU to run on; every kernel was correct on the emulator.
    EmulatedOnly,
}

impl Verdict {
    /// The process exit status this verdict stands for.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Correct | Self::Benchmarked | Self::Listed | Self::Blurred => 0,
            Self::Wrong => 1,
            Self::EmulatedOnly => 3,
        }
    }
}

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
            let seed = args.seed.unwrap_or_else(rand::random);
            bench::run(&args.plan(), &args.outputs(), args.device, seed)
                .map(|()| Verdict::Benchmarked)
        }
        Some(Command::Blur(args)) => picture::run(&args.request()).map(|()| Verdict::Blurred),
        Some(Command::Lessons(args)) => run_lessons(args),
        None if cli.list => list(cli.device.unwrap_or(0)).map(|()| Verdict::Listed),
        None if cli.traffic => {
            let counting = CountingEmulator::default();
            let plan = cli.plan(Target::Emulator)?;
            verify(&counting, None, &plan, cli.seed, Screen::every_row())
        }
        None if cli.emulate => verify(
            &Emulator,
            None,
            &cli.plan(Target::Emulator)?,
            cli.seed,
            Screen::emulated(cli.verbose),
        ),
        None => verify_on_gpu(cli),
    }
}

/// The default run: verify and time every selected kernel on the GPU, or
/// on the emulator when there is no GPU.
fn verify_on_gpu(cli: &Cli) -> Result<Verdict> {
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
            let verdict = verify(
                &Emulator,
                None,
                &plan,
                cli.seed,
                Screen::emulated(cli.verbose),
            )?;
            Ok(if verdict == Verdict::Correct {
                Verdict::EmulatedOnly
            } else {
                verdict
            })
        }
        Err(error) => Err(error),
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
        seed: args.seed.unwrap_or_else(rand::random),
        device: args.device,
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
            let verdict = verify(
                &Emulator,
                None,
                &plan,
                Some(request.seed),
                Screen::every_row(),
            )?;
            Ok(if verdict == Verdict::Correct {
                Verdict::EmulatedOnly
            } else {
                verdict
            })
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

/// What the default run prints once its kernels are verified.
#[derive(Clone, Copy, Debug)]
struct Screen {
    /// Every kernel's row, the copies and the CPU, not only the summary.
    verbose: bool,
    /// Whether the times mean something: on a GPU, not on the emulator.
    timed: bool,
    /// The GPU's theoretical limits, the summary's yardstick, where known.
    peak: Option<Roof>,
}

impl Screen {
    fn emulated(verbose: bool) -> Self {
        Self {
            verbose,
            timed: false,
            peak: None,
        }
    }

    fn every_row() -> Self {
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

/// Verifies and times the plan's kernels on `backend`, and their twins on
/// `twin` when given, and prints what `screen` asks for.
fn verify<B: Backend>(
    backend: &B,
    twin: Option<&B>,
    plan: &Plan,
    seed: Option<u64>,
    screen: Screen,
) -> Result<Verdict> {
    let seed = seed.unwrap_or_else(rand::random);
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
             limits allow ({:.2} TB/s, {:.1} TFLOP/s FP32), which nothing reaches; bench measures \
             the practical ones.",
            peak.bandwidth_gbytes / 1e3,
            peak.compute_gops / 1e3
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
