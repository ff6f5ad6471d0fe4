//! What to run (the plan, which the bench shares), and the run behind
//! `cargo run`: every selected kernel verified against the CPU reference and
//! timed, one row each.

use gpu_emulator::SHADOW_BYTES_PER_BYTE;
use gpu_emulator::traffic::Traffic;
use gpu_host::Error as HostError;
use gpu_host::backend::{Backend, Transfer, runs};
use gpu_host::timing::Runs;
use gpu_std::Kernel;
use rand::rngs::SmallRng;

use crate::case::{Case, CpuRun};
use crate::error::{Error, Result};
use crate::families::{self, Visitor};
use crate::family::{Bound, Family, Op, Sizes, Target, Work};
use crate::interrupt;
use crate::verify::Comparison;

/// What to run, and at which sizes.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Entry points to run, in teaching order.
    pub kernels: Vec<&'static str>,
    pub sizes: Sizes,
    pub runs: Runs,
    /// The most work one run of one kernel may be.
    pub limit: WorkLimit,
}

/// The most operations one run of a kernel may take, and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkLimit {
    pub ops: f64,
    pub because: &'static str,
    /// Whether the limit is on all of a kernel's launches together (the
    /// emulator's time grows with each), rather than on one run (the CPU
    /// reference, computed once).
    pub all_launches: bool,
}

impl WorkLimit {
    /// On the emulator, which runs 10⁷ to 10⁹ operations a second.
    pub const EMULATED: Self = Self {
        ops: (1u64 << 32) as f64,
        because: "the emulator runs one thread at a time, and this would take it minutes to hours",
        all_launches: true,
    };
    /// In the default run, whose CPU reference does the same work in f64.
    pub const VERIFIED: Self = Self {
        ops: (1u64 << 42) as f64,
        because: "the CPU reference does the same work on this machine's cores and would take hours",
        all_launches: false,
    };
    /// In the bench, which runs every kernel 23 times at every size.
    pub const BENCHED: Self = Self {
        ops: (1u64 << 46) as f64,
        because: "every kernel and baseline runs 23 times or more at each size",
        all_launches: false,
    };

    /// Rejects `launches` launches of `cost` operations each, called `what`
    /// in the error, when they are more than this limit (one, where the
    /// limit is on one run).
    pub fn check(&self, what: impl FnOnce() -> String, cost: f64, launches: usize) -> Result<()> {
        let launches = if self.all_launches { launches } else { 1 };
        let ops = cost * launches as f64;
        if ops > self.ops {
            return Err(Error::TooMuchWork {
                what: what(),
                ops,
                launches,
                limit: self.ops,
                because: self.because,
            });
        }
        Ok(())
    }
}

/// The host memory a run of family `F` at `shape` needs on `target`: its
/// inputs and reference, and on the emulator the race checks' shadow of
/// each byte the kernels move.
pub fn host_bytes<F: Family>(shape: F::Shape, target: Target) -> f64 {
    let shadows = match target {
        Target::Emulator => F::work(shape).bytes * SHADOW_BYTES_PER_BYTE as f64,
        Target::Gpu => 0.0,
    };
    F::host_bytes(shape) + shadows
}

/// Rejects `bytes` of host memory, needed by `what`, when more than
/// `available` are.
pub fn check_host_memory(what: impl FnOnce() -> String, bytes: f64, available: u64) -> Result<()> {
    if bytes > available as f64 {
        return Err(Error::NotEnoughHostMemory {
            what: what(),
            bytes: bytes as u64,
            available,
        });
    }
    Ok(())
}

impl Plan {
    /// Checks every selected kernel against its sizes, the work of each run
    /// against the plan's limit and the host memory it needs against what is
    /// free, so that bad input is reported before any work, and without a
    /// GPU.
    pub fn validate(&self) -> Result<()> {
        families::check(&self.kernels, &self.sizes)?;
        self.check_work()?;
        self.check_host_memory(available_host_memory())
    }

    /// Rejects a size whose runs are more work than the plan's limit: each
    /// kernel launched once to check it, then for every warm-up and timed
    /// run.
    fn check_work(&self) -> Result<()> {
        let launches = 1 + self.runs.warmup + self.runs.timed;
        self.each_shape(&mut |family, shape, cost, _| {
            self.limit
                .check(|| format!("{family} at {shape}"), cost, launches)
        })
    }

    /// Rejects a size whose inputs and reference need more host memory than
    /// `available` bytes.
    pub fn check_host_memory(&self, available: u64) -> Result<()> {
        self.each_shape(&mut |family, shape, _, bytes| {
            check_host_memory(|| format!("{family} at {shape}"), bytes, available)
        })
    }

    /// Calls `check` with every selected family's name, each of its shapes,
    /// and its work and host memory.
    fn each_shape(
        &self,
        check: &mut dyn FnMut(&str, String, f64, f64) -> Result<()>,
    ) -> Result<()> {
        struct Each<'a> {
            plan: &'a Plan,
            check: &'a mut dyn FnMut(&str, String, f64, f64) -> Result<()>,
        }
        impl Visitor for Each<'_> {
            fn visit<F: Family>(&mut self) -> Result<()> {
                if self.plan.kernels::<F>().is_empty() {
                    return Ok(());
                }
                for shape in self.plan.sizes.shapes::<F>() {
                    (self.check)(
                        F::NAME,
                        shape.to_string(),
                        F::cost(shape),
                        host_bytes::<F>(shape, self.plan.sizes.target()),
                    )?;
                }
                Ok(())
            }
        }
        families::visit(&mut Each { plan: self, check })
    }

    /// How many kernels at how many sizes the plan runs: one row each.
    pub fn rows(&self) -> usize {
        struct Count<'a>(&'a Plan, usize);
        impl Visitor for Count<'_> {
            fn visit<F: Family>(&mut self) -> Result<()> {
                self.1 += self.0.kernels::<F>().len() * self.0.sizes.shapes::<F>().len();
                Ok(())
            }
        }
        let mut count = Count(self, 0);
        families::visit(&mut count).expect("counting cannot fail");
        count.1
    }

    /// The selected kernels of family `F`, in teaching order.
    pub fn kernels<F: Family>(&self) -> Vec<&'static Kernel<F::Args, F::Problem>> {
        F::KERNELS
            .iter()
            .filter(|kernel| self.kernels.contains(&kernel.name))
            .collect()
    }
}

/// One verified and timed kernel, and its CUDA C++ twin.
#[derive(Clone, Debug)]
pub struct Row {
    /// The family's label.
    pub family: &'static str,
    /// Whether the family is a ladder that `bench` times, not a lesson's.
    pub benched: bool,
    /// The ceiling the family approaches, and so the peak it is held to.
    pub bound: Bound,
    /// Which problem of the run it was: the kernels that ran on the same
    /// inputs share it.
    pub problem: usize,
    pub kernel: &'static str,
    pub size: String,
    pub median_ms: f64,
    pub work: Work,
    pub comparison: Comparison,
    /// The twin on the same inputs; `None` without twins, an error where
    /// this one could not run (a size beyond its `int` indices).
    pub twin: Option<Result<TwinRun, String>>,
    /// What one launch moved, where the backend counts it.
    pub traffic: Option<Traffic>,
    /// The trip to the GPU and back, and the CPU beside it.
    pub whole: Whole,
}

/// The whole picture of one kernel at one size: the copies to the GPU and
/// back (pinned and pageable host memory, where there is a GPU) and the CPU
/// baseline on the same inputs.
#[derive(Clone, Debug)]
pub struct Whole {
    pub to_gpu: Option<Copies>,
    pub from_gpu: Option<Copies>,
    pub cpu: CpuRun,
    pub cpu_name: &'static str,
}

/// One direction's copy, from or into each kind of host memory.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Copies {
    pub bytes: f64,
    pub pinned_ms: f64,
    pub pageable_ms: f64,
}

impl Row {
    /// Copy in, kernel, copy out, from pinned memory: what a user waits
    /// for; `None` without a GPU.
    pub fn end_to_end_ms(&self) -> Option<f64> {
        let (to, from) = (self.whole.to_gpu?, self.whole.from_gpu?);
        Some(to.pinned_ms + self.median_ms + from.pinned_ms)
    }
}

/// A CUDA C++ twin, verified and timed like its kernel.
#[derive(Clone, Debug)]
pub struct TwinRun {
    pub median_ms: f64,
    pub comparison: Comparison,
}

impl Row {
    /// GFLOP/s, for kernels that do floating-point work.
    pub fn gflops(&self) -> Option<f64> {
        (self.work.op == Op::Flop).then(|| self.work.ops / self.median_ms / 1e6)
    }

    /// GB/s of the fewest bytes the kernel must move.
    pub fn gbytes_per_s(&self) -> f64 {
        self.work.bytes / self.median_ms / 1e6
    }

    /// Whether the kernel, and its twin where it ran, are correct.
    pub fn passed(&self) -> bool {
        let twin_passed = match &self.twin {
            Some(Ok(twin)) => twin.comparison.passed(),
            _ => true,
        };
        self.comparison.passed() && twin_passed && self.whole.cpu.comparison.passed()
    }
}

/// The host memory free for a new allocation, in bytes, as the operating
/// system reports it (within a container's limit, where there is one).
pub fn available_host_memory() -> u64 {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    match system.cgroup_limits() {
        Some(limits) => limits.free_memory.min(system.available_memory()),
        None => system.available_memory(),
    }
}

/// The copies of `work`'s inputs to `backend` and of its outputs back, each
/// timed from pinned and from pageable host memory; `None` where nothing is
/// copied.
pub fn copies<B: Backend>(backend: &B, work: Work, runs: Runs) -> Result<Option<(Copies, Copies)>> {
    let time = |bytes: f64, to_device| -> Result<Option<Copies>> {
        let ms = |pinned| backend.transfer_ms(bytes as usize, Transfer { to_device, pinned }, runs);
        Ok(ms(true)?
            .zip(ms(false)?)
            .map(|(pinned_ms, pageable_ms)| Copies {
                bytes,
                pinned_ms,
                pageable_ms,
            }))
    };
    let to_gpu = time(work.bytes - work.output_bytes, true)?;
    let from_gpu = time(work.output_bytes, false)?;
    Ok(to_gpu.zip(from_gpu))
}

/// The CPU baseline's runs: the plan's, but at most 5 timed after one
/// untimed, since at the default sizes one run takes up to a second.
pub fn cpu_runs(runs: Runs) -> Runs {
    Runs {
        warmup: runs.warmup.min(1),
        timed: runs.timed.min(5),
    }
}

/// Runs the plan on `backend`, and each kernel's twin on `twin` when given,
/// reporting each size and each kernel to `progress` as it starts.
pub fn run<B: Backend>(
    backend: &B,
    twin: Option<&B>,
    plan: &Plan,
    rng: &mut SmallRng,
    progress: impl FnMut(Step<'_>),
) -> Result<Vec<Row>> {
    let mut suite = Suite {
        backend,
        twin,
        plan,
        rng,
        progress,
        problems: 0,
        rows: Vec::new(),
    };
    families::visit(&mut suite)?;
    Ok(suite.rows)
}

struct Suite<'a, B, P> {
    backend: &'a B,
    twin: Option<&'a B>,
    plan: &'a Plan,
    rng: &'a mut SmallRng,
    progress: P,
    /// Problems prepared so far.
    problems: usize,
    rows: Vec<Row>,
}

/// What a run is doing, for its progress bar.
pub enum Step<'a> {
    /// A family's problem at one size: its inputs, CPU reference, copies
    /// and CPU baseline, which at the largest sizes take longer than the
    /// kernels.
    Preparing { family: &'static str, size: &'a str },
    /// One kernel verified and timed on it.
    Kernel { kernel: &'static str, size: &'a str },
    /// One kernel not made for it (a radius or channel count it is not
    /// compiled for), and why.
    LeftOut {
        kernel: &'static str,
        size: &'a str,
        why: String,
    },
}

impl<B: Backend, P: FnMut(Step<'_>)> Visitor for Suite<'_, B, P> {
    fn visit<F: Family>(&mut self) -> Result<()> {
        let backend = self.backend;
        let kernels = self.plan.kernels::<F>();
        if kernels.is_empty() {
            return Ok(());
        }
        for shape in self.plan.sizes.shapes::<F>() {
            let size = shape.to_string();
            (self.progress)(Step::Preparing {
                family: F::NAME,
                size: &size,
            });
            let mut case = Case::<B, F>::new(backend, shape, self.rng)?;
            self.problems += 1;
            let work = F::work(shape);
            let (to_gpu, from_gpu) = copies(backend, work, self.plan.runs)?.unzip();
            let whole = Whole {
                to_gpu,
                from_gpu,
                cpu: case.cpu(cpu_runs(self.plan.runs))?,
                cpu_name: F::CPU,
            };
            for &kernel in &kernels {
                let made_for = F::made_for(kernel, shape);
                if let Err(why) = runs(backend, kernel).map_err(Error::from).and(made_for) {
                    (self.progress)(Step::LeftOut {
                        kernel: kernel.name,
                        size: &size,
                        why: why.to_string(),
                    });
                    continue;
                }
                interrupt::check()?;
                (self.progress)(Step::Kernel {
                    kernel: kernel.name,
                    size: &size,
                });
                let comparison = case.check(backend, kernel)?;
                let median_ms =
                    backend.median_ms(self.plan.runs, || case.launch(backend, kernel))?;
                let twin = match self.twin {
                    None => None,
                    Some(twin) => match run_twin(twin, &mut case, kernel, self.plan.runs) {
                        Ok(run) => Some(Ok(run)),
                        Err(skipped @ Error::Host(HostError::TwinTooLarge { .. })) => {
                            Some(Err(skipped.to_string()))
                        }
                        Err(error) => return Err(error),
                    },
                };
                self.rows.push(Row {
                    family: F::LABEL,
                    benched: F::BENCHED,
                    bound: F::BOUND,
                    problem: self.problems,
                    kernel: kernel.name,
                    size: shape.to_string(),
                    median_ms,
                    work: F::work(shape),
                    comparison,
                    twin,
                    traffic: backend.traffic(kernel.name),
                    whole: whole.clone(),
                });
            }
        }
        Ok(())
    }
}

/// Checks and times `kernel`'s twin on the case's inputs.
fn run_twin<B: Backend, F: Family>(
    twin: &B,
    case: &mut Case<B, F>,
    kernel: &Kernel<F::Args, F::Problem>,
    runs: Runs,
) -> Result<TwinRun> {
    let comparison = case.check(twin, kernel)?;
    let median_ms = twin.median_ms(runs, || case.launch(twin, kernel))?;
    Ok(TwinRun {
        median_ms,
        comparison,
    })
}
