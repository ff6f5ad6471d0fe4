//! Integration tests of locality; the tests live in `tests/`.
//!
//! - `ptx`: the compiled PTX has every entry point, shared memory and
//!   barriers exactly where a kernel's launch contract asks for shared
//!   memory, no local memory, no undefined call.
//! - `errors`: every bad input is a typed error, checked without a GPU.
//! - `on_gpu`: every kernel of every family against the CPU reference on
//!   its family's test shapes, and each kernel's resources; reported as
//!   "not run: no CUDA device" (ignored, never passed) without a GPU.
//! - `emulated`: the same kernels and shapes on the CPU emulator, plus
//!   property tests over random sizes; runs everywhere.
//! - `diagnostics`: deliberately broken kernels, each caught by the emulator
//!   with the right diagnostic.
//!
//! The helpers below are written once against `Family` and `Backend`, so
//! that a new family or kernel is tested on both backends without a line
//! here.

use locality::Backend;
use locality::case::Case;
use locality::families::{self, Visitor};
use locality::family::Family;
use rand::{SeedableRng, rngs::SmallRng};

/// Family `F`'s kernel called `name`.
pub fn kernel<F: Family>(name: &str) -> &'static gpu::runtime::Kernel<F::Args, F::Problem> {
    F::KERNELS
        .iter()
        .find(|kernel| kernel.name == name)
        .unwrap_or_else(|| panic!("no kernel {name} in {}", F::NAME))
}

/// Checks every kernel of `F` on `shape` with inputs from `seed`: the
/// error names the kernel, the shape and the seed.
pub fn check_family<B: Backend, F: Family>(
    backend: &B,
    shape: F::Shape,
    seed: u64,
) -> Result<(), String> {
    for kernel in F::KERNELS {
        check_kernel::<B, F>(backend, kernel, shape, seed)?;
    }
    Ok(())
}

/// Checks one kernel of `F` on `shape` with inputs from `seed`.
pub fn check_kernel<B: Backend, F: Family>(
    backend: &B,
    kernel: &gpu::runtime::Kernel<F::Args, F::Problem>,
    shape: F::Shape,
    seed: u64,
) -> Result<(), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let failed = |what: String| {
        format!(
            "{} at {shape:?}, inputs from seed {seed}: {what}",
            kernel.name
        )
    };
    let mut case =
        Case::<B, F>::new(backend, shape, &mut rng).map_err(|e| failed(e.to_string()))?;
    match case.check(backend, kernel) {
        Ok(comparison) if comparison.passed() => Ok(()),
        Ok(comparison) => Err(failed(comparison.to_string())),
        Err(error) => Err(failed(error.to_string())),
    }
}

/// Every family's every test shape, checked on `backend`.
pub fn check_every_family<B: Backend>(backend: &B) -> Result<(), String> {
    struct Check<'a, B>(&'a B, Vec<String>);
    impl<B: Backend> Visitor for Check<'_, B> {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for shape in F::test_shapes() {
                if let Err(failure) = check_family::<B, F>(self.0, shape, rand::random()) {
                    self.1.push(failure);
                }
            }
            Ok(())
        }
    }
    let mut check = Check(backend, Vec::new());
    families::visit(&mut check).map_err(|e| e.to_string())?;
    match check.1.as_slice() {
        [] => Ok(()),
        failures => Err(failures.join("\n")),
    }
}
