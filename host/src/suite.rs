//! The run behind `cargo run`: every selected kernel verified against the
//! CPU reference and timed, one row each.

use rand::Rng;

use crate::backend::Backend;
use crate::error::Result;
use crate::kernels::blur::{Blur, ImageShape};
use crate::kernels::gemv::{Element, Gemv, GemvShape};
use crate::kernels::matmul::{Matmul, MatmulShape};
use crate::timing::Runs;
use crate::verify::{BlurCase, Comparison, GemvCase, MatmulCase};

/// The gemv scalars of the suite: both non-zero, so y is read and written.
pub(crate) const GEMV_ALPHA: f64 = 1.25;
pub(crate) const GEMV_BETA: f64 = 0.75;

/// What to run, and at which sizes.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Entry points to run, in teaching order.
    pub kernels: Vec<&'static str>,
    pub matmul: MatmulShape,
    pub gemv: GemvShape,
    pub image: ImageShape,
    pub radius: u32,
    pub runs: Runs,
}

impl Plan {
    /// Checks every selected kernel's sizes, so that bad input is reported
    /// before any GPU work, and without a GPU.
    pub fn validate(&self) -> Result<()> {
        let wanted = |name: &str| self.kernels.contains(&name);
        for kernel in Matmul::ALL.into_iter().filter(|k| wanted(k.entry_point())) {
            kernel.launch_config(self.matmul)?;
        }
        for kernel in Gemv::ALL {
            if wanted(kernel.entry_point::<f32>()) {
                kernel.launch_config::<f32>(self.gemv)?;
            }
            if wanted(kernel.entry_point::<f64>()) {
                kernel.launch_config::<f64>(self.gemv)?;
            }
        }
        for kernel in Blur::ALL.into_iter().filter(|k| wanted(k.entry_point())) {
            kernel.launch_config(self.image, self.radius)?;
        }
        Ok(())
    }
}

/// One verified and timed kernel.
#[derive(Clone, Debug)]
pub struct Row {
    pub kernel: &'static str,
    pub size: String,
    pub median_ms: f64,
    /// Floating-point operations, where the kernel does any.
    pub flops: Option<f64>,
    /// The fewest bytes the kernel must move.
    pub bytes: f64,
    pub comparison: Comparison,
}

impl Row {
    pub fn gflops(&self) -> Option<f64> {
        self.flops.map(|flops| flops / self.median_ms / 1e6)
    }

    pub fn gbytes_per_s(&self) -> f64 {
        self.bytes / self.median_ms / 1e6
    }
}

/// Runs the plan, reporting each kernel to `progress` as it starts.
pub fn run<B: Backend>(
    backend: &B,
    plan: &Plan,
    rng: &mut impl Rng,
    mut progress: impl FnMut(&str, &str),
) -> Result<Vec<Row>> {
    let wanted = |name: &str| plan.kernels.contains(&name);
    let mut rows = Vec::new();

    let matmuls: Vec<Matmul> = Matmul::ALL
        .into_iter()
        .filter(|k| wanted(k.entry_point()))
        .collect();
    if !matmuls.is_empty() {
        let mut case = MatmulCase::new(backend, plan.matmul, rng)?;
        for kernel in matmuls {
            progress(kernel.entry_point(), &plan.matmul.to_string());
            let comparison = case.check(backend, kernel)?;
            let median_ms = backend.median_ms(plan.runs, || case.launch(backend, kernel))?;
            let (flops, bytes) = (Some(plan.matmul.flops()), plan.matmul.min_bytes());
            rows.push(Row {
                kernel: kernel.entry_point(),
                size: plan.matmul.to_string(),
                median_ms,
                flops,
                bytes,
                comparison,
            });
        }
    }
    rows.extend(run_gemv::<B, f32>(backend, plan, rng, &mut progress)?);
    rows.extend(run_gemv::<B, f64>(backend, plan, rng, &mut progress)?);

    let blurs: Vec<Blur> = Blur::ALL
        .into_iter()
        .filter(|k| wanted(k.entry_point()))
        .collect();
    if !blurs.is_empty() {
        let mut case = BlurCase::new(backend, plan.image, plan.radius, rng)?;
        let size = format!("{} r={}", plan.image, plan.radius);
        for kernel in blurs {
            progress(kernel.entry_point(), &size);
            let comparison = case.check(backend, kernel)?;
            let median_ms = backend.median_ms(plan.runs, || case.launch(backend, kernel))?;
            let bytes = plan.image.min_bytes();
            rows.push(Row {
                kernel: kernel.entry_point(),
                size: size.clone(),
                median_ms,
                flops: None,
                bytes,
                comparison,
            });
        }
    }
    Ok(rows)
}

fn run_gemv<B: Backend, T: Element>(
    backend: &B,
    plan: &Plan,
    rng: &mut impl Rng,
    progress: &mut impl FnMut(&str, &str),
) -> Result<Vec<Row>> {
    let kernels: Vec<Gemv> = Gemv::ALL
        .into_iter()
        .filter(|k| plan.kernels.contains(&k.entry_point::<T>()))
        .collect();
    if kernels.is_empty() {
        return Ok(Vec::new());
    }
    let shape = plan.gemv;
    let mut case = GemvCase::<B, T>::new(
        backend,
        shape,
        T::from_f64(GEMV_ALPHA),
        T::from_f64(GEMV_BETA),
        rng,
    )?;
    let mut rows = Vec::new();
    for kernel in kernels {
        progress(kernel.entry_point::<T>(), &shape.to_string());
        let comparison = case.check(backend, kernel)?;
        let median_ms = backend.median_ms(plan.runs, || case.launch(backend, kernel))?;
        let (flops, bytes) = (Some(shape.flops()), shape.min_bytes::<T>());
        rows.push(Row {
            kernel: kernel.entry_point::<T>(),
            size: shape.to_string(),
            median_ms,
            flops,
            bytes,
            comparison,
        });
    }
    Ok(rows)
}
