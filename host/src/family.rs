//! What the host knows of a kernel family beyond its kernels, which come
//! from the `kernels` crate: the problem as the user gives it, random inputs,
//! the CPU reference, the work it counts, and what a user would run instead.
//!
//! The command line, the default run, the bench and the tests are written
//! once against this trait and iterate the families of
//! [`crate::families`]; none of them names a kernel or a family.

use std::collections::HashMap;
use std::fmt;

use clap::{Arg, ArgMatches};
use gpu_host::Gpu;
use gpu_host::backend::{Backend, Params, checked_launch_within};
use gpu_std::Kernel;
use rand::rngs::SmallRng;
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::blas::Blas;
use crate::error::Result;
use crate::npp::Npp;
use crate::reference::Expected;
use crate::verify::Comparison;

mod buffers;
mod size;

pub use buffers::{Arrays, Buffers, InputOutput, NAMES, Parts, TwoInputs, expect_len, expect_map};
pub use size::{at_most, dims, indexable, multiple_of, nonzero, option, power_of_two, value};

/// A size as the user gives it and the report shows it.
pub trait Shape:
    Copy + fmt::Display + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static
{
    /// One number for the x axis of a plot: the side of the square or cube
    /// of the same volume.
    fn side(&self) -> f64;

    /// The shortest label: `n` for a square or cube, the dimensions
    /// otherwise; the whole shape where it has no shorter form.
    fn short(&self) -> String {
        self.to_string()
    }

    /// A parameter besides the size that the bench sweeps (the blur's
    /// radius), where the family has one.
    fn parameter(&self) -> Option<Parameter> {
        None
    }

    /// Options of the shape's own beyond its dimensions (the blur's
    /// radius, say), with the bench's defaults where `sweep`: none, unless
    /// the shape has some.
    fn options(sweep: bool) -> Vec<Arg> {
        let _ = sweep;
        Vec::new()
    }

    /// Every shape of `dims` (as many as the family's `SIZE.names`) the
    /// options ask for: one, unless an option takes a list (the blur's
    /// radii, say).
    fn parse(dims: &[usize], options: &ArgMatches) -> Vec<Self>;
}

/// The short form of a square or cube of `sides`: the side, where all are
/// one; the whole `shape` otherwise.
pub fn square_or_whole(sides: &[usize], shape: &impl fmt::Display) -> String {
    match sides {
        [side, rest @ ..] if rest.iter().all(|other| other == side) => side.to_string(),
        _ => shape.to_string(),
    }
}

/// A shape's parameter besides its size: its name on a plot's axis, its
/// value, and what else tells its series apart (the blur's channels).
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub name: &'static str,
    pub value: f64,
    pub series: String,
}

/// How the command line gives one of the family's sizes.
pub struct SizeSyntax {
    /// The option's value, e.g. `MxNxK`.
    pub value_name: &'static str,
    /// What each number of a size is, in order, as messages name it; one
    /// number stands for all of them.
    pub names: &'static [&'static str],
    pub help: &'static str,
    /// The default run's size on a GPU: large enough that timings mean
    /// something.
    pub on_gpu: &'static [usize],
    /// The size emulated: no multiple of any tile width, small enough to
    /// emulate in seconds.
    pub emulated: &'static [usize],
    /// The bench's default sweep, comma-separated.
    pub sweep: &'static str,
}

impl SizeSyntax {
    /// The size of a family whose problem is `n` elements: one number, `N`.
    pub const fn n(
        help: &'static str,
        on_gpu: &'static [usize],
        emulated: &'static [usize],
        sweep: &'static str,
    ) -> Self {
        Self {
            value_name: "N",
            names: &["n"],
            help,
            on_gpu,
            emulated,
            sweep,
        }
    }

    /// How many numbers a size has.
    pub fn dims(&self) -> usize {
        self.names.len()
    }
}

/// What a run's throughput is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Floating-point operations, a multiply and an add each.
    Flop,
    /// Integer additions.
    IntAdd,
    /// No arithmetic: a copy.
    None,
}

/// The work of one run: operations, the fewest bytes it must move, and
/// what it reads again from nearer the SMs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    pub op: Op,
    pub ops: f64,
    /// Every input read once and every output written once.
    pub bytes: f64,
    /// Of those, the outputs': what comes back from the GPU; the rest goes
    /// to it.
    pub output_bytes: f64,
    /// Bytes read again and again from a cache or from shared memory, for
    /// a kernel whose lesson is that level: the hierarchical roofline holds
    /// them to that level's bandwidth, as it holds `bytes` to the DRAM's.
    pub reread: Option<Reread>,
}

impl Work {
    /// `ops` of `op`, with `read` bytes read and `written` written.
    pub fn new(op: Op, ops: f64, read: f64, written: f64) -> Self {
        Self {
            op,
            ops,
            bytes: read + written,
            output_bytes: written,
            reread: None,
        }
    }

    /// This work, with `bytes` read again from `from`.
    pub fn rereading(self, bytes: f64, from: Source) -> Self {
        Self {
            reread: Some(Reread { bytes, from }),
            ..self
        }
    }
}

/// Bytes a kernel reads again from nearer the SMs than the DRAM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reread {
    pub bytes: f64,
    pub from: Source,
}

/// Where a kernel's rereads come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// Shared memory.
    Shared,
    /// A working set of this many bytes, read over and over: from L1, the
    /// L2 or the DRAM by its size (see `bench::ceilings::Level::holding`).
    WorkingSet(f64),
}

/// Which ceiling of the roofline the family's kernels are meant to approach,
/// and so which throughput its plot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The FP32 CUDA cores': cuBLAS SGEMM's throughput.
    Compute,
    /// The tensor cores': cuBLAS's bf16 gemm's throughput, about fifteen
    /// times the FP32 one.
    Tensor,
    Memory,
}

/// A CPU baseline's output, in the kernels' element type.
pub enum CpuOutput {
    F32(Vec<f32>),
    F64(Vec<f64>),
    U8(Vec<u8>),
    U32(Vec<u32>),
}

impl CpuOutput {
    /// `element(i)` for each i of `0..len`, on every core.
    pub fn par_f32(len: usize, element: impl Fn(usize) -> f32 + Send + Sync) -> Self {
        Self::F32((0..len).into_par_iter().map(element).collect())
    }

    /// The sum in f64 of the terms `terms(i)` for each i of `0..len`,
    /// rounded to f32, on every core: the CPU baseline of a family whose
    /// reference sums in f64.
    pub fn sums<I: IntoIterator<Item = f64>>(
        len: usize,
        terms: impl Fn(usize) -> I + Send + Sync,
    ) -> Self {
        Self::par_f32(len, |i| terms(i).into_iter().sum::<f64>() as f32)
    }

    /// Every element against the reference.
    pub fn compare(&self, expected: &Expected) -> Comparison {
        match self {
            Self::F32(values) => crate::verify::compare(values, expected),
            Self::F64(values) => crate::verify::compare(values, expected),
            Self::U8(values) => crate::verify::compare(values, expected),
            Self::U32(values) => crate::verify::compare(values, expected),
        }
    }
}

/// What the bench's baselines may use.
pub struct Tools<'a> {
    pub gpu: &'a Gpu,
    pub blas: Option<&'a Blas>,
    pub npp: Option<&'a Npp>,
}

impl Tools<'_> {
    /// Whether `library` was loaded.
    pub fn has(&self, library: Library) -> bool {
        match library {
            Library::Cublas => self.blas.is_some(),
            Library::Npp => self.npp.is_some(),
        }
    }
}

/// A library a baseline calls, loaded at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Library {
    Cublas,
    Npp,
}

/// The name of the baseline of a family whose kernels move bytes and
/// compute next to nothing (blur, transpose): the device's own copy of the
/// same bytes, the most such a kernel can hope to match.
pub const DEVICE_COPY: &str = "device_copy";

/// What a user would run instead of the family's kernels.
pub struct Baseline<F: Family> {
    pub name: &'static str,
    /// The library it calls, if any: without it, the bench leaves it out.
    pub needs: Option<Library>,
    /// Whether it does the family's arithmetic, or only moves its bytes.
    pub arithmetic: bool,
    /// Whether it can do a shape: where not, the bench leaves it out.
    pub supports: fn(F::Shape) -> bool,
    pub run: RunBaseline<F>,
}

impl<F: Family> Baseline<F> {
    /// cuBLAS's `name`, doing the family's arithmetic at every shape.
    pub fn cublas(name: &'static str, run: RunBaseline<F>) -> Self {
        Self {
            name,
            needs: Some(Library::Cublas),
            arithmetic: true,
            supports: |_| true,
            run,
        }
    }

    /// The [`DEVICE_COPY`] of the bytes `run` copies: every kernel's
    /// baseline in a family that moves bytes and computes next to nothing.
    pub fn device_copy(run: RunBaseline<F>) -> Self {
        Self {
            name: DEVICE_COPY,
            needs: None,
            arithmetic: false,
            supports: |_| true,
            run,
        }
    }

    /// Whether the bench times it at all with `tools`.
    pub fn available(&self, tools: &Tools<'_>) -> bool {
        self.needs.is_none_or(|library| tools.has(library))
    }
}

/// A baseline's run: one launch on a set of the family's buffers.
pub type RunBaseline<F> =
    fn(&Tools<'_>, <F as Declaration>::Shape, &mut <F as Declaration>::Buffers<Gpu>) -> Result<()>;

/// The kernels of one family, as the `kernels` crate declares them.
pub type Kernels<F> = [Kernel<<F as Declaration>::Args, <F as Declaration>::Problem>];

/// What a kernel family is: its kernels, its names and sizes, and the
/// types of its shapes, inputs and buffers. A family's file declares it in
/// a few lines with the `family!` macro (`host/src/families/declare.rs`);
/// [`Family`] says what the family does with them.
pub trait Declaration: Sized + 'static {
    /// The family's name: what `--kernel NAME` selects all of, the size
    /// options `--NAME` and `--NAME-sizes`, and its group in the report.
    /// Families that differ in element type only share it.
    const NAME: &'static str;
    /// How a run's tables name the family's problems: its name, with the
    /// element type where families share one.
    const LABEL: &'static str = Self::NAME;
    const SIZE: SizeSyntax;
    const BOUND: Bound;
    /// The plot's x axis for square sizes, e.g. "n (A is n×n)".
    const SQUARE_AXIS: &'static str;
    /// Whether `bench` times the family's kernels when none is named: a
    /// lesson's kernels (most families') are timed by `locality lessons`
    /// instead.
    const BENCHED: bool = false;

    /// The kernels' parameter list and launch-contract input.
    type Args: Params;
    type Problem;
    /// The family's kernels, in teaching order.
    const KERNELS: &'static Kernels<Self>;

    type Shape: Shape;
    /// Random inputs on the host.
    type Inputs: Send + Sync;
    /// What a shape says of the buffers: for most families, each one's
    /// name in errors and length ([`Arrays`]).
    type Layout;
    /// The inputs and outputs on a backend.
    type Buffers<B: Backend>: Buffers<B, Inputs = Self::Inputs, Layout = Self::Layout>;

    /// What a user would run on this machine's CPU instead, by name.
    const CPU: &'static str;
}

/// A kernel family, as the host drives it.
pub trait Family: Declaration {
    /// The problem the kernels get, once the shape is valid: no dimension
    /// zero, every index within the kernels' 32-bit arithmetic.
    fn problem(shape: Self::Shape) -> Result<Self::Problem>;

    /// Whether `kernel` is made for `shape` at all, and if not why: a
    /// kernel compiled for some radii or channel counts only is left out of
    /// a run at the others, where the family's other kernels still run; a
    /// shape none of a run's kernels is made for is refused by
    /// [`Family::check`]'s error.
    fn made_for(kernel: &Kernel<Self::Args, Self::Problem>, shape: Self::Shape) -> Result<()> {
        let _ = (kernel, shape);
        Ok(())
    }

    /// Checks that `kernel` can run `shape`, without a GPU: its shared
    /// memory within what a kernel may opt in to (a GPU with less refuses
    /// the launch, naming both).
    fn check(kernel: &Kernel<Self::Args, Self::Problem>, shape: Self::Shape) -> Result<()> {
        checked_launch_within(
            kernel,
            &Self::problem(shape)?,
            gpu_std::shared::OPT_IN_LIMIT_BYTES,
        )?;
        Ok(())
    }

    /// Sizes the tests run every kernel on: 1, primes, non-multiples of
    /// every tile and block width, rectangles.
    fn test_shapes() -> Vec<Self::Shape>;

    /// What the roofline counts: the operations the problem needs and the
    /// fewest bytes it must move.
    fn work(shape: Self::Shape) -> Work;

    /// The bytes of input a run ranges over, which the bench's copies of
    /// the inputs must together span beyond the L2: the work's bytes,
    /// unless a kernel reads a few scattered bytes of a larger input.
    fn footprint(shape: Self::Shape) -> f64 {
        Self::work(shape).bytes
    }

    /// The operations the slowest code a run includes takes (the CPU
    /// reference, the naive kernel): what the work limits hold a size to.
    /// The roofline's count, unless the family's reference does more.
    fn cost(shape: Self::Shape) -> f64 {
        Self::work(shape).ops
    }

    /// The most host memory one set of inputs takes at `shape`, in bytes:
    /// the inputs, the reference and its tolerances, the output read back,
    /// and the emulator's buffers.
    fn host_bytes(shape: Self::Shape) -> f64;

    fn inputs(shape: Self::Shape, rng: &mut SmallRng) -> Result<Self::Inputs>;

    fn reference(shape: Self::Shape, inputs: &Self::Inputs) -> Expected;

    /// The buffers at `shape`, once the shape is valid.
    fn layout(shape: Self::Shape) -> Result<Self::Layout>;

    fn upload<B: Backend>(
        backend: &B,
        shape: Self::Shape,
        inputs: &Self::Inputs,
    ) -> Result<Self::Buffers<B>> {
        Self::Buffers::upload(backend, inputs, &Self::layout(shape)?)
    }

    /// Makes the buffers ready for `kernel` to be checked: the output
    /// ([`Buffers::output`]) poisoned, and where a family says so, the inputs in the layout the
    /// kernel reads.
    fn prepare<B: Backend>(
        backend: &B,
        kernel: &Kernel<Self::Args, Self::Problem>,
        inputs: &Self::Inputs,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        let _ = (kernel, inputs);
        Ok(backend.poison(buffers.output())?)
    }

    /// The kernels' arguments, the one place that knows their parameter
    /// list. [`Family::launch`] calls it once the problem is valid and the
    /// buffers are as [`Family::layout`] says, and launches the kernel with
    /// what it returns: the family's comment says why that keeps the
    /// kernels' contracts.
    fn args<'a, B: Backend>(on: Launch<'a, Self, B>) -> Host<'a, Self, B>;

    /// Launches `kernel` on the buffers, after checking that it is made for
    /// the shape, that the problem is valid and that the buffers are the
    /// shape's.
    fn launch<B: Backend>(
        backend: &B,
        kernel: &Kernel<Self::Args, Self::Problem>,
        shape: Self::Shape,
        buffers: &mut Self::Buffers<B>,
    ) -> Result<()> {
        Self::made_for(kernel, shape)?;
        let problem = Self::problem(shape)?;
        buffers.expect(backend, &Self::layout(shape)?)?;
        let args = Self::args(Launch {
            shape,
            problem: &problem,
            buffers,
        });
        // SAFETY: the problem is valid and the buffers are as the shape
        // lays them out, checked just now, which is all each family's
        // `args` asks to keep the kernels' contracts.
        Ok(unsafe { backend.launch(kernel, &problem, args) }?)
    }

    /// Every element of the output ([`Buffers::output`]) against the
    /// reference.
    fn compare<B: Backend>(
        backend: &B,
        buffers: &mut Self::Buffers<B>,
        expected: &Expected,
    ) -> Result<Comparison> {
        Ok(crate::verify::compare(
            &backend.download(buffers.output())?,
            expected,
        ))
    }

    /// The CPU baseline's output for `inputs`, on every core.
    fn cpu(shape: Self::Shape, inputs: &Self::Inputs) -> CpuOutput;

    /// The baselines the bench times beside `kernels`: none, for a lesson's
    /// kernels.
    fn baselines(kernels: &[&Kernel<Self::Args, Self::Problem>]) -> Vec<Baseline<Self>> {
        let _ = kernels;
        Vec::new()
    }

    /// The baseline `kernel` is compared with, where it has one.
    fn baseline_of(kernel: &Kernel<Self::Args, Self::Problem>) -> Option<&'static str> {
        let _ = kernel;
        None
    }

    /// How [`Family::pick`] chooses, for the kernel list, where the family
    /// picks among its kernels by shape.
    const PICKS: Option<&'static str> = None;

    /// The kernel a library would launch for `problem` on `gpu`, for a
    /// family that picks among its kernels by shape.
    fn pick(
        problem: &Self::Problem,
        gpu: PickFor,
    ) -> Option<&'static Kernel<Self::Args, Self::Problem>> {
        let _ = (problem, gpu);
        None
    }
}

/// What a family that picks by shape ([`Family::pick`]) knows of the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickFor {
    pub multiprocessors: u32,
    /// (major, minor).
    pub compute_capability: (u32, u32),
}

/// A launch as [`Family::args`] sees it: the shape, its problem, and the
/// buffers, checked against both.
pub struct Launch<'a, F: Family, B: Backend> {
    pub shape: F::Shape,
    pub problem: &'a F::Problem,
    pub buffers: &'a mut F::Buffers<B>,
}

/// The kernels' arguments on the host, as [`Family::args`] makes them.
pub type Host<'a, F, B> = <<F as Declaration>::Args as Params>::Host<'a, <B as Backend>::Memory>;

/// Where a run is going to happen, which picks the default sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gpu,
    Emulator,
}

/// The sizes each family runs at, as the command line gave them, and the
/// options that complete a shape.
#[derive(Clone, Debug)]
pub struct Sizes {
    given: HashMap<String, Vec<Vec<usize>>>,
    options: ArgMatches,
    target: Target,
}

impl Sizes {
    /// Where the run is going to happen.
    pub fn target(&self) -> Target {
        self.target
    }

    /// `given` maps a family's name to its sizes, each a list of dimensions.
    pub fn new(
        given: HashMap<String, Vec<Vec<usize>>>,
        options: ArgMatches,
        target: Target,
    ) -> Self {
        Self {
            given,
            options,
            target,
        }
    }

    /// Whether any family's sizes were given.
    pub fn any_given(&self) -> bool {
        !self.given.is_empty()
    }

    /// The shapes family `F` runs at: each size's, in order.
    pub fn shapes<F: Family>(&self) -> Vec<F::Shape> {
        self.dims::<F>()
            .iter()
            .flat_map(|dims| self.shapes_of::<F>(dims))
            .collect()
    }

    /// Family `F`'s shapes of `dims`, with the options given.
    pub fn shapes_of<F: Family>(&self, dims: &[usize]) -> Vec<F::Shape> {
        F::Shape::parse(dims, &self.options)
    }

    /// The dimensions of each size family `F` runs at.
    pub fn dims<F: Family>(&self) -> Vec<Vec<usize>> {
        let default = match self.target {
            Target::Gpu => F::SIZE.on_gpu,
            Target::Emulator => F::SIZE.emulated,
        };
        match self.given.get(F::NAME) {
            Some(sizes) => sizes.clone(),
            None => vec![default.to_vec()],
        }
    }

    /// Family `F`'s shape of `dims`, with the options given.
    pub fn shape<F: Family>(&self, dims: &[usize]) -> F::Shape {
        F::Shape::parse(dims, &self.options)[0]
    }
}
