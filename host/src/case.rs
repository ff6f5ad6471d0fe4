//! One set of random inputs for a family on a backend, with its reference:
//! every kernel of the family is checked on it in turn.

use gpu::runtime::Kernel;
use rand::rngs::SmallRng;

use crate::backend::Backend;
use crate::error::Result;
use crate::family::Family;
use crate::reference::Expected;
use crate::verify::Comparison;

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

    /// Poisons the outputs, runs `kernel` and compares every output element
    /// with the reference.
    pub fn check(
        &mut self,
        backend: &B,
        kernel: &Kernel<F::Args, F::Problem>,
    ) -> Result<Comparison> {
        F::prepare(backend, kernel, &self.inputs, &mut self.buffers)?;
        self.launch(backend, kernel)?;
        F::compare(backend, &self.buffers, &self.expected)
    }
}
