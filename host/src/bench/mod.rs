//! `locality bench`: every kernel over a sweep of sizes, against the
//! hardware's limits measured in the same run and against what a user would
//! run instead, placed on a roofline.

pub mod ceilings;
mod inputs;
pub mod json;
pub mod markdown;
pub mod plot;
pub mod roofline;
mod table;

use std::fs;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use gpu_std::Kernel;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{SeedableRng, rngs::SmallRng};

use self::ceilings::Hardware;
use self::inputs::{Rotation, copies};
use self::json::{FamilySummary, KernelSummary, Op, Report, Role, Row, Size, Trip};
use self::roofline::{Roof, intensity, per_second_g, ratio_to_baseline};
use gpu_host::Error as HostError;
use gpu_host::Gpu;
use gpu_host::timing::gpu_median_ms;

use crate::blas::Blas;
use crate::case::cpu_ms;
use crate::console::{self, say};
use crate::error::{Error, Result};
use crate::families::{self, Visitor};
use crate::family::{Family, Library, Shape, Tools, Work};
use crate::interrupt;
use crate::npp::Npp;
use crate::output::{self, Pending};
use crate::suite::{self, Plan, cpu_runs};

/// Where the report goes.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// The JSON report.
    pub json: Option<PathBuf>,
    /// The directory of the plots.
    pub plots: Option<PathBuf>,
    /// The Markdown tables.
    pub markdown: Option<PathBuf>,
}

/// How many medians the sweep takes, for the progress bar, and what it
/// sweeps, for the reader.
fn describe(plan: &Plan, tools: &Tools<'_>, with_twins: bool) -> (usize, String) {
    struct Describe<'a> {
        plan: &'a Plan,
        tools: &'a Tools<'a>,
        with_twins: bool,
        count: usize,
        families: Vec<String>,
    }
    impl Visitor for Describe<'_> {
        fn visit<F: Family>(&mut self) -> Result<()> {
            let kernels = self.plan.kernels::<F>();
            if kernels.is_empty() {
                return Ok(());
            }
            let baselines = F::baselines(&kernels);
            let shapes = self.plan.sizes.shapes::<F>();
            let twins = if self.with_twins { kernels.len() } else { 0 };
            // Per size: each kernel, twin and baseline, and the trip.
            for &shape in &shapes {
                let timed = baselines
                    .iter()
                    .filter(|b| b.available(self.tools) && (b.supports)(shape))
                    .count();
                self.count += kernels.len() + twins + timed + 1;
            }
            let sizes: Vec<String> = shapes.iter().map(Shape::short).collect();
            let family = format!("{} {}", F::NAME, sizes.join(", "));
            if !self.families.contains(&family) {
                self.families.push(family);
            }
            Ok(())
        }
    }
    let mut describe = Describe {
        plan,
        tools,
        with_twins,
        count: 0,
        families: Vec::new(),
    };
    families::visit(&mut describe).expect("describing cannot fail");
    let text = format!(
        "plan: {} · {} kernels · {} warm-up + {} timed runs each, median reported",
        describe.families.join(" · "),
        plan.kernels.len(),
        plan.runs.warmup,
        plan.runs.timed
    );
    (describe.count, text)
}

/// The outputs, created before the sweep so that a bad path fails at once
/// rather than after it, and written whole or not at all after it: an
/// existing report survives any failure.
struct OpenOutputs {
    json: Option<Pending>,
    plots: Option<PathBuf>,
    markdown: Option<Pending>,
}

impl OpenOutputs {
    fn open(outputs: &Outputs) -> Result<Self> {
        let json = outputs.json.as_deref().map(Pending::create).transpose()?;
        let markdown = outputs
            .markdown
            .as_deref()
            .map(Pending::create)
            .transpose()?;
        if let Some(dir) = &outputs.plots {
            fs::create_dir_all(dir).map_err(|source| Error::write(dir, source))?;
            // A plot's name is known only once the sweep has run; a probe
            // proves now that the folder takes files.
            drop(Pending::create(&dir.join("roofline.svg"))?);
        }
        Ok(Self {
            json,
            plots: outputs.plots.clone(),
            markdown,
        })
    }

    /// Writes every report, then says which: a closed standard output
    /// loses none of them.
    fn write(self, report: &Report) -> Result<()> {
        let mut written = Vec::new();
        if let Some(json) = self.json {
            let path = json.path().to_path_buf();
            json.finish(|writer| {
                serde_json::to_writer_pretty(&mut *writer, report)?;
                writeln!(writer)
            })?;
            written.push(path);
        }
        if let Some(markdown) = self.markdown {
            let path = markdown.path().to_path_buf();
            markdown.finish(|writer| writer.write_all(markdown::render(report).as_bytes()))?;
            written.push(path);
        }
        if let Some(dir) = self.plots {
            for (name, svg) in plot::all(report)? {
                let path = dir.join(name);
                output::write(&path, svg.as_bytes())?;
                written.push(path);
            }
        }
        for path in written {
            say!("wrote {}", path.display())?;
        }
        Ok(())
    }
}

/// Runs the sweep on GPU `device` with inputs from `seed`, prints the
/// table, writes the JSON and the plots.
pub fn run(plan: &Plan, outputs: &Outputs, device: usize, seed: u64) -> Result<()> {
    plan.validate()?;
    let gpu = crate::gpu::open(device)?;
    let outputs = OpenOutputs::open(outputs)?;
    let hardware = Hardware::read(&gpu);
    let device = hardware.describe(&gpu)?;
    let na = |value: Option<String>| value.unwrap_or_else(|| "n/a".to_string());
    say!(
        "{} · compute capability {} · {} SMs · L2 {}",
        device.name,
        na(device.compute_capability.clone()),
        na(device.multiprocessors.map(|sms| sms.to_string())),
        na(device.l2_bytes.map(|bytes| format!("{} MiB", bytes >> 20))),
    )?;
    let blas = open_blas(&gpu)?;
    let twin = console::or_say_why(gpu.twin(), |error| {
        format!("{error}; the CUDA C++ twins are skipped")
    })?;
    let npp = if needs(plan, Library::Npp) {
        open_npp(&gpu)?
    } else {
        None
    };
    let tools = Tools {
        gpu: &gpu,
        blas: blas.as_ref(),
        npp: npp.as_ref(),
    };
    let (measurements, description) = describe(plan, &tools, twin.is_some());
    say!("{description}")?;
    let rotation_bytes = hardware.l2_bytes.map(|l2| inputs::L2_MULTIPLE * l2);
    match rotation_bytes {
        Some(bytes) => say!(
            "inputs rotated through copies that span {} MiB ({}× L2), so that no run finds them in L2",
            bytes >> 20,
            inputs::L2_MULTIPLE
        )?,
        None => say!("L2 size unknown: inputs not rotated, small sizes may run from L2")?,
    }

    say!("random inputs from seed {seed} (--seed {seed} replays them)")?;
    let mut rng = SmallRng::seed_from_u64(seed);
    say!("measuring the ceilings…")?;
    let ceilings = ceilings::measure(&gpu, &hardware, blas.as_ref(), plan.runs, &mut rng)?;
    let roofline = json::Roofline::from_ceilings(&ceilings);
    console::print(format_args!("{}", table::ceilings(&ceilings, &roofline)))?;

    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(measurements as u64).with_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
                .expect("a valid template"),
        );
        // The clock keeps moving through a step that takes minutes.
        bar.enable_steady_tick(std::time::Duration::from_millis(250));
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut sweep = Sweep {
        plan,
        twin,
        tools,
        l2_bytes: hardware.l2_bytes,
        bar: &bar,
        rng,
        measured: Vec::new(),
        trips: Vec::new(),
        visited: 0,
        families: Vec::new(),
        kernels: Vec::new(),
        left_out: Vec::new(),
    };
    families::visit(&mut sweep)?;
    bar.finish_and_clear();

    let report = Report {
        schema_version: 2,
        device,
        ceilings,
        roofline,
        runs: json::Runs {
            warmup: plan.runs.warmup,
            timed: plan.runs.timed,
            rotation_bytes,
            seed,
        },
        families: sweep.families,
        kernels: sweep.kernels,
        results: rows(&sweep.measured, roofline.roof(), &sweep.trips),
        trips: sweep.trips,
    };
    // The reports are written even when the table cannot be printed.
    let printed = console::print(format_args!(
        "{}\n{}{}",
        table::results(&report.results),
        table::trips(&report),
        sweep
            .left_out
            .iter()
            .map(|line| format!("{line}\n"))
            .collect::<String>(),
    ));
    outputs.write(&report)?;
    printed
}

/// Whether a baseline of the plan's kernels calls `library`, so that a
/// run that times none is not told it is missing.
fn needs(plan: &Plan, library: Library) -> bool {
    struct Needs<'a> {
        plan: &'a Plan,
        library: Library,
        found: bool,
    }
    impl Visitor for Needs<'_> {
        fn visit<F: Family>(&mut self) -> Result<()> {
            let kernels = self.plan.kernels::<F>();
            self.found |= !kernels.is_empty()
                && F::baselines(&kernels)
                    .iter()
                    .any(|baseline| baseline.needs == Some(self.library));
            Ok(())
        }
    }
    let mut needs = Needs {
        plan,
        library,
        found: false,
    };
    families::visit(&mut needs).expect("looking at baselines cannot fail");
    needs.found
}

/// NPP, or `None` after saying why it cannot be had.
fn open_npp(gpu: &Gpu) -> Result<Option<Npp>> {
    console::or_say_why(Npp::open(gpu), |error| {
        format!("NPP unavailable ({error}): the blurs are timed without NPP's box filter")
    })
}

/// cuBLAS, or `None` after saying why it cannot be had.
fn open_blas(gpu: &Gpu) -> Result<Option<Blas>> {
    console::or_say_why(Blas::open(gpu), |error| {
        format!(
            "cuBLAS unavailable ({error}): no cuBLAS baselines, and the roofline's \
             compute ceiling is the theoretical FP32 peak"
        )
    })
}

/// One median, before it is set against the roofline and its baseline.
struct Measurement {
    family: &'static str,
    /// Where the row goes: the family's place in the list, kernels before
    /// baselines, each in its own order.
    order: (usize, Role, usize),
    kernel: &'static str,
    size: Size,
    median_ms: f64,
    /// The CUDA C++ twin's median, for a kernel whose twin ran.
    twin_ms: Option<f64>,
    work: Work,
    baseline: Option<&'static str>,
}

/// The report's rows: grouped by family, kernels before baselines, each in
/// teaching order, sizes in the order given; each kernel set against its
/// problem's trip.
fn rows(measured: &[Measurement], roof: Roof, trips: &[Trip]) -> Vec<Row> {
    let mut measured: Vec<&Measurement> = measured.iter().collect();
    measured.sort_by_key(|m| m.order);
    measured
        .iter()
        .map(|m| {
            let baseline_ms = m.baseline.and_then(|baseline| {
                measured
                    .iter()
                    .find(|b| b.kernel == baseline && b.size == m.size)
                    .map(|b| b.median_ms)
            });
            let Work { op, ops, bytes, .. } = m.work;
            let intensity = intensity(ops, bytes);
            let trip = trips
                .iter()
                .find(|trip| trip.kernels.iter().any(|k| k == m.kernel) && trip.size == m.size);
            let end_to_end_ms =
                trip.map(|trip| trip.to_gpu.pinned_ms + m.median_ms + trip.from_gpu.pinned_ms);
            Row {
                family: m.family.to_string(),
                kernel: m.kernel.to_string(),
                role: m.order.1,
                size: m.size.clone(),
                median_ms: m.median_ms,
                op,
                ops,
                gops_per_s: (ops > 0.0).then(|| per_second_g(ops, m.median_ms)),
                bytes,
                gbytes_per_s: per_second_g(bytes, m.median_ms),
                intensity,
                roofline_bound_gops_per_s: intensity.map(|i| roof.bound(i)),
                roofline_fraction: roof.fraction(ops, bytes, m.median_ms),
                baseline: baseline_ms.and(m.baseline.map(str::to_string)),
                ratio_to_baseline: baseline_ms.map(|b| ratio_to_baseline(b, m.median_ms)),
                twin_median_ms: m.twin_ms,
                vs_cuda_cpp: m.twin_ms.map(|twin| twin / m.median_ms),
                end_to_end_ms,
                vs_cpu: trip.map(|trip| trip.cpu_ms / m.median_ms),
                vs_cpu_end_to_end: trip.zip(end_to_end_ms).map(|(trip, ms)| trip.cpu_ms / ms),
            }
        })
        .collect()
}

/// The sweep's state: the plan, the GPU and cuBLAS, where the inputs come
/// from, and what it has measured so far.
struct Sweep<'a> {
    plan: &'a Plan,
    tools: Tools<'a>,
    /// The GPU launching the CUDA C++ twins, where NVRTC is there.
    twin: Option<Gpu>,
    l2_bytes: Option<usize>,
    bar: &'a ProgressBar,
    rng: SmallRng,
    measured: Vec<Measurement>,
    trips: Vec<Trip>,
    /// Families visited so far, which orders the rows.
    visited: usize,
    families: Vec<FamilySummary>,
    kernels: Vec<KernelSummary>,
    /// Each kernel left out of a size it is not made for, and why.
    left_out: Vec<String>,
}

impl Sweep<'_> {
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
            let count = copies(work.bytes as usize, self.l2_bytes);
            self.bar
                .set_message(format!("{count} copies of the inputs uploaded at {shape}"));
            let mut sets = Rotation::build(count, || F::upload(gpu, shape, &inputs))?;
            for (index, &kernel) in kernels.iter().enumerate() {
                if let Err(why) = F::made_for(kernel, shape) {
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

#[cfg(test)]
mod tests;
