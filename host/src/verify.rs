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

/// Elements per partial sum of the relative error.
const SUM_CHUNK: usize = 1 << 14;

/// Compares every element of `output` with `expected`.
pub fn compare<T: Copy + Into<f64> + Sync>(output: &[T], expected: &Expected) -> Comparison {
    assert_eq!(
        output.len(),
        expected.values.len(),
        "output and reference differ in length"
    );
    // Fixed chunks, each summed in order, then the chunks' sums in order:
    // the same additions whatever the threads, so a replay of one seed
    // reports the same error to the last bit.
    let partial_sums: Vec<(f64, f64)> = output
        .par_chunks(SUM_CHUNK)
        .zip(expected.values.par_chunks(SUM_CHUNK))
        .map(|(got, want)| {
            got.iter()
                .zip(want)
                .fold((0.0, 0.0), |(error, reference), (&got, &want)| {
                    (error + (got.into() - want).powi(2), reference + want * want)
                })
        })
        .collect();
    let (error_squared, reference_squared) = partial_sums
        .into_iter()
        .fold((0.0, 0.0), |(e1, r1), (e2, r2)| (e1 + e2, r1 + r2));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The relative error of one output, computed on `threads` threads.
    fn relative_error_on(threads: usize, output: &[f32], expected: &Expected) -> f64 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| compare(output, expected).relative_error)
    }

    #[test]
    fn the_relative_error_is_the_same_to_the_last_bit_on_any_number_of_threads() {
        let len = 1 << 20;
        let mut rng = SmallRng::seed_from_u64(rand::random());
        let values: Vec<f64> = (0..len)
            .map(|i| rng.random::<f64>() * 10f64.powi((i % 9) as i32))
            .collect();
        let output: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        let expected = Expected {
            tolerance: vec![f64::INFINITY; len],
            values,
        };
        let one = relative_error_on(1, &output, &expected);
        for threads in [2, 3, 7, 16] {
            assert_eq!(
                relative_error_on(threads, &output, &expected).to_bits(),
                one.to_bits(),
                "{threads} threads"
            );
        }
    }
}
