//! `locality bench`: every kernel over a sweep of sizes, against the
//! hardware's limits measured in the same run and against what a user would
//! run instead, placed on a roofline.

pub mod ceilings;
mod earlier;
mod inputs;
pub mod json;
pub mod markdown;
mod outputs;
pub mod plot;
pub mod roofline;
mod rows;
mod sweep;
mod table;

use std::io::IsTerminal;
use std::path::Path;

use gpu_host::Gpu;
use indicatif::{ProgressBar, ProgressStyle};
use rand::{SeedableRng, rngs::SmallRng};

use crate::blas::Blas;
use crate::console::{self, say};
use crate::error::Result;
use crate::families::{self, Visitor};
use crate::family::{Family, Library, Shape, Tools};
use crate::npp::Npp;
use crate::suite::Plan;

use self::ceilings::Hardware;
use self::json::Report;
use self::outputs::OpenOutputs;
pub use self::outputs::Outputs;
use self::rows::rows;
use self::sweep::Sweep;

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

/// Runs the sweep on GPU `device` with inputs from `seed`, prints the
/// table, writes the JSON and the plots; with the ceilings of the run in
/// `ceilings_from`, where given, instead of measuring them.
pub fn run(
    plan: &Plan,
    outputs: &Outputs,
    device: usize,
    seed: u64,
    ceilings_from: Option<&Path>,
) -> Result<()> {
    plan.validate()?;
    let earlier = ceilings_from
        .map(|path| earlier::read(path).map(|report| (path, report)))
        .transpose()?;
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
    // The ceilings draw from a generator of their own, so that the
    // kernels' inputs are the same whether they are measured or taken.
    let mut ceilings_rng = SmallRng::from_rng(&mut rng);
    let needed = ceilings::Needed::of(&hardware, blas.is_some(), rereads(plan));
    let ceilings = match &earlier {
        Some((path, earlier)) => {
            let ceilings = earlier::ceilings(earlier, path, &device, needed)?;
            say!(
                "the ceilings of an earlier run on this GPU: {}",
                path.display()
            )?;
            ceilings
        }
        None => {
            say!("measuring the ceilings…")?;
            ceilings::measure(
                &gpu,
                &hardware,
                blas.as_ref(),
                plan.runs,
                needed,
                &mut ceilings_rng,
            )?
        }
    };
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
    let mut sweep = Sweep::new(plan, tools, twin, hardware.l2_bytes, &bar, rng);
    families::visit(&mut sweep)?;
    bar.finish_and_clear();

    let report = Report {
        schema_version: 2,
        device,
        ceilings,
        ceilings_from: ceilings_from.map(|path| path.display().to_string()),
        roofline,
        runs: json::Runs {
            warmup: plan.runs.warmup,
            timed: plan.runs.timed,
            rotation_bytes,
            seed,
        },
        families: sweep.families,
        kernels: sweep.kernels,
        results: rows(&sweep.measured, &roofline, &sweep.trips, hardware.l2_bytes),
        trips: sweep.trips,
    };
    // The reports are written even when the table cannot be printed.
    let printed = console::print(format_args!(
        "{}\n{}{}{}",
        table::results(&report.results),
        table::trips(&report),
        table::picked(&report),
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

/// Whether a kernel of the plan reads again from the L2 or shared memory
/// at one of its sizes, so that a run that times none does not measure
/// their ceilings.
fn rereads(plan: &Plan) -> bool {
    struct Rereads<'a> {
        plan: &'a Plan,
        found: bool,
    }
    impl Visitor for Rereads<'_> {
        fn visit<F: Family>(&mut self) -> Result<()> {
            self.found |= !self.plan.kernels::<F>().is_empty()
                && (self.plan.sizes.shapes::<F>().into_iter())
                    .any(|shape| F::work(shape).reread.is_some());
            Ok(())
        }
    }
    let mut rereads = Rereads { plan, found: false };
    families::visit(&mut rereads).expect("looking at the work cannot fail");
    rereads.found
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

#[cfg(test)]
mod tests;
