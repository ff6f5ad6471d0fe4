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
//! - `traffic`: the material's claims about memory traffic, from the
//!   emulator's counts, and docs/traffic.md's table recounted.
//!
//! [`placements::check_placements`] runs one kernel over buffers of every
//! placement, on the GPU (`on_gpu`) and on the emulator (`emulated`);
//! `locality::peers::check_peers`, the two-GPU lessons' kernels across two
//! GPUs, or two emulated ones.
//!
//! The helpers below are written once against `Family` and `Backend`, so
//! that a new family or kernel is tested on both backends without a line
//! here. Every randomised test draws from [`seed`]: `LOCALITY_SEED=N`
//! replays it, and a failing one prints its N.

pub mod placements;

use locality::Backend;
use locality::case::Case;
use locality::families::{self, Visitor};
use locality::family::Family;
use proptest::test_runner::{Config, FailurePersistence, RngSeed};
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// The variable that replays every randomised test: its inputs, and the
/// property tests' choice of cases.
pub const SEED_VARIABLE: &str = "LOCALITY_SEED";

/// The seed of a randomised test: `LOCALITY_SEED` when set, else a fresh
/// one. Printed, so that the output of a failing test (which the harness
/// shows) says how to replay it.
pub fn seed() -> u64 {
    let seed = quiet_seed();
    println!("{SEED_VARIABLE}={seed} replays this test");
    seed
}

/// [`seed`] without the line, for harnesses that do not capture output:
/// [`check_kernel`]'s failure names the seed instead.
pub fn quiet_seed() -> u64 {
    seed_from(std::env::var(SEED_VARIABLE).ok())
}

/// The seed `value` of `LOCALITY_SEED` names, or a fresh one without it.
fn seed_from(value: Option<String>) -> u64 {
    match value {
        Some(value) => value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_VARIABLE}={value} is not a u64")),
        None => rand::random(),
    }
}

/// The property tests' configuration: `cases` cases drawn from [`seed`],
/// and no regressions file written into the source tree (a failure prints
/// its minimal input and its seed instead).
pub fn proptest_config(cases: u32) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed()),
        failure_persistence: None::<Box<dyn FailurePersistence>>,
        ..Config::default()
    }
}

/// Family `F`'s kernel called `name`.
pub fn kernel<F: Family>(name: &str) -> &'static gpu_std::Kernel<F::Args, F::Problem> {
    F::KERNELS
        .iter()
        .find(|kernel| kernel.name == name)
        .unwrap_or_else(|| panic!("no kernel {name} in {}", F::NAME))
}

/// Checks every kernel of `F` made for `shape` ([`Family::made_for`])
/// with inputs from `seed`: the error names the kernel, the shape and the
/// seed.
pub fn check_family<B: Backend, F: Family>(
    backend: &B,
    shape: F::Shape,
    seed: u64,
) -> Result<(), String> {
    for kernel in F::KERNELS
        .iter()
        .filter(|kernel| F::made_for(kernel, shape).is_ok())
    {
        check_kernel::<B, F>(backend, kernel, shape, seed)?;
    }
    Ok(())
}

/// Checks one kernel of `F` on `shape` with inputs from `seed`.
pub fn check_kernel<B: Backend, F: Family>(
    backend: &B,
    kernel: &gpu_std::Kernel<F::Args, F::Problem>,
    shape: F::Shape,
    seed: u64,
) -> Result<(), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let failed = |what: String| {
        format!(
            "{} at {shape:?} on the {}, inputs from seed {seed} ({SEED_VARIABLE}={seed} replays \
             it): {what}",
            kernel.name,
            backend.description()
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

/// Every family's every test shape, checked on `backend` with inputs drawn
/// from `seed`.
pub fn check_every_family<B: Backend>(backend: &B, seed: u64) -> Result<(), String> {
    struct Check<'a, B> {
        backend: &'a B,
        rng: SmallRng,
        failures: Vec<String>,
    }
    impl<B: Backend> Visitor for Check<'_, B> {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for shape in F::test_shapes() {
                let seed = self.rng.random();
                if let Err(failure) = check_family::<B, F>(self.backend, shape, seed) {
                    self.failures.push(failure);
                }
            }
            Ok(())
        }
    }
    let mut check = Check {
        backend,
        rng: SmallRng::seed_from_u64(seed),
        failures: Vec::new(),
    };
    families::visit(&mut check).map_err(|e| e.to_string())?;
    match check.failures.as_slice() {
        [] => Ok(()),
        failures => Err(failures.join("\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use locality::Emulator;
    use locality::families::matmul::{Matmul, MatmulShape};

    #[test]
    fn the_seed_variable_replays_and_its_absence_draws_afresh() {
        assert_eq!(seed_from(Some("12345".to_string())), 12345);
        assert_ne!(seed_from(None), seed_from(None));
    }

    #[test]
    fn a_failing_check_says_how_to_replay_it() {
        let kernel = kernel::<Matmul>("matmul_naive");
        let failure = check_kernel::<Emulator, Matmul>(
            &Emulator::from_seed(77),
            kernel,
            MatmulShape::new(0, 1, 1),
            77,
        )
        .unwrap_err();
        assert!(failure.contains("blocks shuffled by seed 77"), "{failure}");
        assert!(failure.contains("LOCALITY_SEED=77 replays it"), "{failure}");
    }

    #[test]
    fn property_tests_write_no_regressions_file() {
        let config = proptest_config(1);
        assert!(config.failure_persistence.is_none());
        assert!(matches!(config.rng_seed, RngSeed::Fixed(_)));
    }
}
