//! Verification: fresh random inputs, and every output element compared
//! with the CPU reference.

use approx::abs_diff_eq;
use rand::distr::{Distribution, Uniform};
use rand::{Rng, SeedableRng, rngs::SmallRng};
use rayon::prelude::*;

use crate::reference::{Expected, Float};

/// How a kernel's output compares with the reference.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// ‖out − ref‖₂ / ‖ref‖₂ (‖out − ref‖₂ when ref is all zeros).
    pub relative_error: f64,
    /// Elements outside their tolerance, NaN (never written) included.
    pub mismatches: usize,
    pub first_mismatch: Option<Mismatch>,
    pub len: usize,
}

#[derive(Clone, Debug)]
pub struct Mismatch {
    pub index: usize,
    pub got: f64,
    pub expected: f64,
    pub tolerance: f64,
}

impl Comparison {
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }
}

impl std::fmt::Display for Comparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} elements wrong, relative error {:.2e}",
            self.mismatches, self.len, self.relative_error
        )?;
        if let Some(Mismatch {
            index,
            got,
            expected,
            tolerance,
        }) = &self.first_mismatch
        {
            write!(
                f,
                "; first at {index}: got {got}, expected {expected} ± {tolerance:.2e}"
            )?;
        }
        Ok(())
    }
}

/// Compares every element of `output` with `expected`.
pub fn compare<T: Copy + Into<f64> + Sync>(output: &[T], expected: &Expected) -> Comparison {
    assert_eq!(
        output.len(),
        expected.values.len(),
        "output and reference differ in length"
    );
    let (error_squared, reference_squared) = output
        .par_iter()
        .zip(&expected.values)
        .map(|(&got, &want)| ((got.into() - want).powi(2), want * want))
        .reduce(|| (0.0, 0.0), |(e1, r1), (e2, r2)| (e1 + e2, r1 + r2));
    let mismatch = |index: usize| {
        let (got, want, tolerance) = (
            output[index].into(),
            expected.values[index],
            expected.tolerance[index],
        );
        (!abs_diff_eq!(got, want, epsilon = tolerance)).then_some(Mismatch {
            index,
            got,
            expected: want,
            tolerance,
        })
    };
    let mismatches = (0..output.len())
        .into_par_iter()
        .filter(|&i| mismatch(i).is_some())
        .count();
    let first_mismatch = if mismatches == 0 {
        None
    } else {
        (0..output.len()).find_map(mismatch)
    };
    let relative_error = if reference_squared > 0.0 {
        error_squared / reference_squared
    } else {
        error_squared
    }
    .sqrt();
    Comparison {
        relative_error,
        mismatches,
        first_mismatch,
        len: output.len(),
    }
}

/// `len` values drawn from `distribution`, in parallel but reproducibly:
/// chunk `i` has its own generator seeded from (`seed`, `i`).
pub fn random_vec<T: Send, D: Distribution<T> + Sync>(
    len: usize,
    distribution: D,
    seed: u64,
) -> Vec<T> {
    const CHUNK: usize = 1 << 16;
    (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .flat_map_iter(|chunk| {
            let mut rng =
                SmallRng::seed_from_u64(seed ^ (chunk as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let count = CHUNK.min(len - chunk * CHUNK);
            (0..count)
                .map(|_| distribution.sample(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `len` values drawn uniformly from [−1, 1).
pub fn uniform_floats<T: Float>(len: usize, rng: &mut impl Rng) -> Vec<T> {
    let unit = Uniform::new(-1.0, 1.0).expect("a valid range");
    random_vec(len, unit, rng.random())
        .into_iter()
        .map(T::from_f64)
        .collect()
}
