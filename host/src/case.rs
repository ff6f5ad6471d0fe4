//! One set of random inputs for a family on a backend, with its reference:
//! every kernel of the family is checked on it in turn.

use gpu_host::backend::Backend;
use gpu_host::timing::{self, Runs};
use gpu_std::Kernel;
use rand::rngs::SmallRng;

use crate::error::Result;
use crate::family::Family;
use crate::reference::Expected;
use crate::verify::Comparison;

/// The CPU baseline, checked and timed on a case's inputs.
#[derive(Clone, Debug)]
pub struct CpuRun {
    pub median_ms: f64,
    pub comparison: Comparison,
}

/// The median wall-clock time of family `F`'s CPU baseline on `inputs`.
pub fn cpu_ms<F: Family>(shape: F::Shape, inputs: &F::Inputs, runs: Runs) -> Result<f64> {
    timing::wall_median_ms(runs, || {
        std::hint::black_box(F::cpu(shape, inputs));
        Ok(())
    })
}

pub struct Case<B: Backend, F: Family> {
    pub shape: F::Shape,
    inputs: F::Inputs,
    buffers: F::Buffers<B>,
    expected: Expected,
}

impl<B: Backend, F: Family> Case<B, F> {
    /// Fresh random inputs from `rng`, on `backend`, and their reference.
    pub fn new(backend: &B, shape: F::Shape, rng: &mut SmallRng) -> Result<Self> {
        F::problem(shape)?;
        let inputs = F::inputs(shape, rng)?;
        let expected = F::reference(shape, &inputs);
        let buffers = F::upload(backend, shape, &inputs)?;
        Ok(Self {
            shape,
            inputs,
            buffers,
            expected,
        })
    }

    /// Launches `kernel` on the case's buffers.
    pub fn launch(&mut self, backend: &B, kernel: &Kernel<F::Args, F::Problem>) -> Result<()> {
        F::launch(backend, kernel, self.shape, &mut self.buffers)
    }

    /// The family's CPU baseline on the case's inputs: every element
    /// checked against the reference, then timed by the wall clock.
    pub fn cpu(&self, runs: Runs) -> Result<CpuRun> {
        Ok(CpuRun {
            comparison: F::cpu(self.shape, &self.inputs).compare(&self.expected),
            median_ms: cpu_ms::<F>(self.shape, &self.inputs, runs)?,
        })
    }

    /// Poisons the outputs, runs `kernel` and compares every output element
    /// with the reference.
    pub fn check(
        &mut self,
        backend: &B,
        kernel: &Kernel<F::Args, F::Problem>,
    ) -> Result<Comparison> {
        F::prepare(backend, kernel, &self.inputs, &mut self.buffers)?;
        self.launch(backend, kernel)?;
        F::compare(backend, &mut self.buffers, &self.expected)
    }
}
