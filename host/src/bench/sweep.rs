//! The sweep: each family's kernels, their CUDA C++ twins and their
//! baselines timed at every size of the plan, on inputs rotated past L2,
//! with each problem's copies and CPU baseline timed beside them.

use gpu_host::Error as HostError;
use gpu_host::timing::gpu_median_ms;
use gpu_host::{Gpu, runs};
use gpu_std::Kernel;
use indicatif::ProgressBar;
use rand::rngs::SmallRng;

use crate::case::cpu_ms;
use crate::error::{Error, Result};
use crate::families::Visitor;
use crate::family::{Family, Tools, Work};
use crate::interrupt;
use crate::suite::{self, Plan, cpu_runs};

use super::inputs::{Rotation, copies};
use super::json::{FamilySummary, KernelSummary, Op, Role, Size, Trip};
use super::rows::Measurement;

/// The sweep's state: the plan, the GPU and cuBLAS, where the inputs come
/// from, and what it has measured so far.
pub(super) struct Sweep<'a> {
    plan: &'a Plan,
    tools: Tools<'a>,
    /// The GPU launching the CUDA C++ twins, where NVRTC is there.
    twin: Option<Gpu>,
    l2_bytes: Option<usize>,
    bar: &'a ProgressBar,
    rng: SmallRng,
    pub(super) measured: Vec<Measurement>,
    pub(super) trips: Vec<Trip>,
    /// Families visited so far, which orders the rows.
    visited: usize,
    pub(super) families: Vec<FamilySummary>,
    pub(super) kernels: Vec<KernelSummary>,
    /// Each kernel left out of a size it is not made for, and why.
    pub(super) left_out: Vec<String>,
}

impl<'a> Sweep<'a> {
    /// A sweep of `plan` with `tools` and the twins on `twin`, its inputs
    /// drawn from `rng` and rotated past an L2 of `l2_bytes`, its progress
    /// shown on `bar`; nothing measured yet.
    pub(super) fn new(
        plan: &'a Plan,
        tools: Tools<'a>,
        twin: Option<Gpu>,
        l2_bytes: Option<usize>,
        bar: &'a ProgressBar,
        rng: SmallRng,
    ) -> Self {
        Self {
            plan,
            tools,
            twin,
            l2_bytes,
            bar,
            rng,
            measured: Vec::new(),
            trips: Vec::new(),
            visited: 0,
            families: Vec::new(),
            kernels: Vec::new(),
            left_out: Vec::new(),
        }
    }

    /// The copies of the problem `shape` to the GPU and back, and the CPU
    /// baseline on its `inputs`, timed.
    fn trip<F: Family>(
        &self,
        shape: F::Shape,
        inputs: &F::Inputs,
        work: Work,
        kernels: &[&Kernel<F::Args, F::Problem>],
    ) -> Result<Trip> {
        interrupt::check()?;
        self.bar.set_message(format!("copies and CPU at {shape}"));
        let (to_gpu, from_gpu) =
            suite::copies(self.tools.gpu, work, self.plan.runs)?.expect("a GPU copies");
        let trip = Trip {
            family: F::NAME.to_string(),
            kernels: kernels
                .iter()
                .map(|kernel| kernel.name.to_string())
                .collect(),
            size: Size::of(&shape),
            to_gpu,
            from_gpu,
            cpu: F::CPU.to_string(),
            cpu_threads: rayon::current_num_threads(),
            cpu_ms: cpu_ms::<F>(shape, inputs, cpu_runs(self.plan.runs))?,
        };
        self.bar.inc(1);
        Ok(trip)
    }

    /// The median time of `launch`, shown on the progress bar meanwhile.
    fn time(&self, name: &str, size: &Size, launch: impl FnMut() -> Result<()>) -> Result<f64> {
        interrupt::check()?;
        self.bar.set_message(format!("{name} {size}"));
        let ms = gpu_median_ms(self.tools.gpu.stream(), self.plan.runs, launch)?;
        self.bar.inc(1);
        Ok(ms)
    }
}

impl Visitor for Sweep<'_> {
    fn visit<F: Family>(&mut self) -> Result<()> {
        let kernels = self.plan.kernels::<F>();
        if kernels.is_empty() {
            return Ok(());
        }
        let family_order = self.visited;
        self.visited += 1;
        if !self.families.iter().any(|family| family.name == F::NAME) {
            self.families.push(FamilySummary {
                name: F::NAME.to_string(),
                bound: F::BOUND,
                square_axis: F::SQUARE_AXIS.to_string(),
            });
        }
        let gpu = self.tools.gpu;
        for kernel in &kernels {
            self.kernels.push(KernelSummary {
                family: F::NAME.to_string(),
                name: kernel.name.to_string(),
                lesson: kernel.lesson().to_string(),
                launch_bounds: kernel.bounds.into(),
                resources: gpu.resources(&kernel.entries())?,
                twin_resources: self
                    .twin
                    .as_ref()
                    .map(|twin| twin.resources(&kernel.entries()))
                    .transpose()?,
            });
        }
        let available: Vec<_> = F::baselines(&kernels)
            .into_iter()
            .filter(|baseline| baseline.available(&self.tools))
            .collect();
        for shape in self.plan.sizes.shapes::<F>() {
            // Numbered among all the family's, so that each keeps its place
            // in the report at every size.
            let baselines: Vec<_> = available
                .iter()
                .enumerate()
                .filter(|(_, baseline)| (baseline.supports)(shape))
                .collect();
            let size = Size::of(&shape);
            let work = F::work(shape);
            self.bar.set_message(format!("inputs at {shape}"));
            let inputs = F::inputs(shape, &mut self.rng)?;
            self.trips
                .push(self.trip::<F>(shape, &inputs, work, &kernels)?);
            let count = copies(F::footprint(shape) as usize, self.l2_bytes);
            self.bar
                .set_message(format!("{count} copies of the inputs uploaded at {shape}"));
            let mut sets = Rotation::build(count, || F::upload(gpu, shape, &inputs))?;
            for (index, &kernel) in kernels.iter().enumerate() {
                let made_for = F::made_for(kernel, shape);
                if let Err(why) = runs(gpu, kernel).map_err(Error::from).and(made_for) {
                    self.left_out
                        .push(format!("{} left out at {shape}: {why}", kernel.name));
                    continue;
                }
                let ms = self.time(kernel.name, &size, || {
                    F::launch(gpu, kernel, shape, sets.next())
                })?;
                let twin_ms = match &self.twin {
                    None => None,
                    Some(twin) => {
                        let twin_ms = self.time(&format!("{} (C++)", kernel.name), &size, || {
                            F::launch(twin, kernel, shape, sets.next())
                        });
                        match twin_ms {
                            Ok(ms) => Some(ms),
                            Err(Error::Host(HostError::TwinTooLarge { .. })) => None,
                            Err(error) => return Err(error),
                        }
                    }
                };
                let baseline = F::baseline_of(kernel);
                self.measured.push(Measurement {
                    family: F::NAME,
                    bound: F::BOUND,
                    order: (family_order, Role::Kernel, index),
                    kernel: kernel.name,
                    size: size.clone(),
                    median_ms: ms,
                    twin_ms,
                    work,
                    baseline: baseline
                        .filter(|&baseline| baselines.iter().any(|(_, b)| b.name == baseline)),
                });
            }
            for &(index, baseline) in &baselines {
                let tools = &self.tools;
                let ms = self.time(baseline.name, &size, || {
                    (baseline.run)(tools, shape, sets.next())
                })?;
                let work = if baseline.arithmetic {
                    work
                } else {
                    Work {
                        op: Op::None,
                        ops: 0.0,
                        ..work
                    }
                };
                self.measured.push(Measurement {
                    family: F::NAME,
                    bound: F::BOUND,
                    order: (family_order, Role::Baseline, index),
                    kernel: baseline.name,
                    size: size.clone(),
                    median_ms: ms,
                    twin_ms: None,
                    work,
                    baseline: None,
                });
            }
        }
        Ok(())
    }
}
