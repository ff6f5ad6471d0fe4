//! CPU references, computed in f64 or better, each with a per-element
//! tolerance that a correct kernel provably stays within.
//!
//! The tolerances are the standard worst-case bounds for floating-point dot
//! products (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1):
//! a dot product of n terms, summed in any order, with or without FMA, is
//! within γₙ·Σ|aᵢbᵢ| of the exact value, where γₙ = nu/(1 − nu) and u is the
//! unit roundoff. An output that is not within that bound is wrong; the
//! bound is also far tighter than any indexing or barrier bug can hide in.

use rayon::prelude::*;

use gpu_host::backend::Value;

/// The floating-point element types: f32 and f64.
pub trait Float: Value + Into<f64> {
    /// Unit roundoff: half the distance from 1 to the next number.
    const UNIT_ROUNDOFF: f64;
    const NAME: &'static str;
    fn from_f64(value: f64) -> Self;
}

impl Float for f32 {
    const UNIT_ROUNDOFF: f64 = f32::EPSILON as f64 / 2.0;
    const NAME: &'static str = "f32";
    fn from_f64(value: f64) -> Self {
        value as f32
    }
}

impl Float for f64 {
    const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;
    const NAME: &'static str = "f64";
    fn from_f64(value: f64) -> Self {
        value
    }
}

/// What a kernel should produce, element by element.
pub struct Expected {
    pub values: Vec<f64>,
    /// How far a correct kernel's element may be from `values`.
    pub tolerance: Vec<f64>,
}

impl Expected {
    /// Values a correct kernel computes exactly: moved, or summed in
    /// integers, never rounded.
    pub fn exact(values: Vec<f64>) -> Self {
        Self {
            tolerance: vec![0.0; values.len()],
            values,
        }
    }

    /// Element i's value and tolerance, `element(i)` for each i of
    /// `0..len`, on every core.
    pub fn par_from_fn(len: usize, element: impl Fn(usize) -> (f64, f64) + Send + Sync) -> Self {
        let (values, tolerance) = (0..len).into_par_iter().map(element).unzip();
        Self { values, tolerance }
    }

    /// Sums a kernel adds in f32, `roundings` deep: element i the sum in
    /// f64 of the terms `terms(i)`, within γ(roundings)·Σ|x|.
    pub fn f32_sums<I: IntoIterator<Item = f64>>(
        len: usize,
        roundings: usize,
        terms: impl Fn(usize) -> I + Send + Sync,
    ) -> Self {
        let gamma = gamma(roundings, f64::from(f32::EPSILON) / 2.0);
        Self::par_from_fn(len, |i| {
            let sums = terms(i)
                .into_iter()
                .fold((0.0, 0.0), |(sum, magnitude), x| {
                    (sum + x, magnitude + x.abs())
                });
            (sums.0, gamma * sums.1)
        })
    }
}

/// γₙ = nu/(1 − nu): the relative error bound of n successive roundings.
pub fn gamma(n: usize, unit_roundoff: f64) -> f64 {
    let nu = n as f64 * unit_roundoff;
    nu / (1.0 - nu)
}

/// C = A·B in f64, A m×k and B k×n, row-major, their elements f32 or
/// narrower. The products of such values are exact in f64, and the f64
/// sums are 2²⁹ times more precise than the f32 accumulators under test.
///
/// Tolerance: `roundings` · ‖row of A‖₂ · ‖column of B‖₂, which bounds
/// `roundings`·Σ|aᵢₗbₗⱼ| by Cauchy–Schwarz at a fraction of its cost;
/// `roundings` is the accumulators' error factor, γₖ₊₁ (f32) for k
/// additions in IEEE arithmetic.
pub fn matmul<T: Copy + Into<f64> + Sync>(
    a: &[T],
    b: &[T],
    [m, n, k]: [usize; 3],
    roundings: f64,
) -> Expected {
    let b: Vec<f64> = b.par_iter().map(|&v| v.into()).collect();
    let mut values = vec![0.0f64; m * n];
    values.par_chunks_mut(n).enumerate().for_each(|(i, c_row)| {
        for (l, &a_il) in a[i * k..(i + 1) * k].iter().enumerate() {
            let a_il: f64 = a_il.into();
            for (c, &b_lj) in c_row.iter_mut().zip(&b[l * n..(l + 1) * n]) {
                *c += a_il * b_lj;
            }
        }
    });
    let row_norms: Vec<f64> = a
        .par_chunks(k)
        .map(|row| norm(row.iter().map(|&v| v.into())))
        .collect();
    let column_norms: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|j| norm((0..k).map(|l| b[l * n + j])))
        .collect();
    let tolerance = (0..m * n)
        .into_par_iter()
        .map(|index| roundings * row_norms[index / n] * column_norms[index % n])
        .collect();
    Expected { values, tolerance }
}

fn norm(values: impl Iterator<Item = f64>) -> f64 {
    values.map(|v| v * v).sum::<f64>().sqrt()
}

/// y = αAx + βy, A m×n row-major, each dot product compensated (Ogita, Rump and Oishi's
/// Dot2: error-free products and sums), so that the reference is about twice
/// as precise as f64 and can judge the f64 kernels too. y is not read when
/// β = 0, as in BLAS.
///
/// Tolerance: 2·γₙ₊₃ · (|α|·Σ|aᵢⱼxⱼ| + |β·yᵢ|) in the kernel's precision;
/// the factor 2 covers the reference's own final rounding.
pub fn gemv<T: Float>(
    alpha: T,
    a: &[T],
    x: &[T],
    beta: T,
    y: &[T],
    [m, n]: [usize; 2],
) -> Expected {
    let (alpha, beta): (f64, f64) = (alpha.into(), beta.into());
    let element = |i: usize, j: usize| -> f64 { a[i * n + j].into() };
    let gamma = 2.0 * gamma(n + 3, T::UNIT_ROUNDOFF);
    let (values, tolerance) = (0..m)
        .into_par_iter()
        .map(|i| {
            let mut dot = CompensatedSum::default();
            let mut magnitude = 0.0;
            for (j, &x_j) in x.iter().enumerate() {
                let (a_ij, x_j) = (element(i, j), x_j.into());
                dot.add_product(a_ij, x_j);
                magnitude += (a_ij * x_j).abs();
            }
            let old_y = if beta == 0.0 { 0.0 } else { beta * y[i].into() };
            (
                alpha * dot.value() + old_y,
                gamma * (alpha.abs() * magnitude + old_y.abs()),
            )
        })
        .unzip();
    Expected { values, tolerance }
}

/// A sum carried as a value plus the exact rounding errors made so far.
#[derive(Default)]
struct CompensatedSum {
    sum: f64,
    error: f64,
}

impl CompensatedSum {
    fn add_product(&mut self, a: f64, b: f64) {
        let product = a * b;
        let product_error = a.mul_add(b, -product);
        let sum = self.sum + product;
        let b_virtual = sum - self.sum;
        let sum_error = (self.sum - (sum - b_virtual)) + (product - b_virtual);
        self.sum = sum;
        self.error += product_error + sum_error;
    }

    fn value(&self) -> f64 {
        self.sum + self.error
    }
}

/// The box blur, exactly: each sample the mean over its window clipped to
/// the image, rounded half up. Written as a direct sum over the window, not
/// as the kernels' integer expression, so the two are checked against each
/// other.
pub fn blur(input: &[u8], [width, height, channels]: [usize; 3], radius: usize) -> Vec<u8> {
    let mut output = vec![0u8; input.len()];
    output
        .par_chunks_mut(width * channels)
        .enumerate()
        .for_each(|(row, out_row)| {
            let rows = row.saturating_sub(radius)..=(row + radius).min(height - 1);
            for col in 0..width {
                let cols = col.saturating_sub(radius)..=(col + radius).min(width - 1);
                for channel in 0..channels {
                    let mut sum = 0u64;
                    for y in rows.clone() {
                        for x in cols.clone() {
                            sum += u64::from(input[(y * width + x) * channels + channel]);
                        }
                    }
                    let count = (rows.end() - rows.start() + 1) * (cols.end() - cols.start() + 1);
                    out_row[col * channels + channel] =
                        (sum as f64 / count as f64 + 0.5).floor() as u8;
                }
            }
        });
    output
}

/// The transpose of a row-major `rows` × `cols` matrix, exactly: output
/// row `c` is input column `c`. No arithmetic, so no tolerance: each value
/// is moved, never rounded, and a kernel's output must equal it bit for bit.
pub fn transpose(input: &[f32], [rows, cols]: [usize; 2]) -> Vec<f32> {
    let mut output = vec![0.0f32; input.len()];
    output
        .par_chunks_mut(rows)
        .enumerate()
        .for_each(|(col, out_row)| {
            for (row, out) in out_row.iter_mut().enumerate() {
                *out = input[row * cols + col];
            }
        });
    output
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_of_a_2x3_and_a_3x2_matrix() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
        let expected = matmul(&a, &b, [2, 2, 3], 0.0);
        assert_eq!(expected.values, [58.0, 64.0, 139.0, 154.0]);
    }

    #[test]
    fn matmul_tolerance_is_the_roundings_times_the_norms() {
        let expected = matmul(&[3.0f32, 4.0], &[0.0, 1.0, 0.0, 0.0], [1, 2, 2], 0.25);
        assert_eq!(expected.values, [0.0, 3.0]);
        assert_eq!(expected.tolerance, [0.0, 1.25]);
    }

    #[test]
    fn gemv_of_a_3x2_matrix() {
        // A = [[1, 2], [3, 5], [5, 6]], x = [1, -1], y = [1, 1, 1].
        let a = [1.0f64, 2.0, 3.0, 5.0, 5.0, 6.0];
        let expected = gemv(2.0, &a, &[1.0, -1.0], 10.0, &[1.0, 1.0, 1.0], [3, 2]);
        assert_eq!(expected.values, [8.0, 6.0, 8.0]);
    }

    #[test]
    fn gemv_ignores_y_when_beta_is_zero() {
        let expected = gemv(1.0f32, &[2.0], &[3.0], 0.0, &[f32::NAN], [1, 1]);
        assert_eq!(expected.values, [6.0]);
        assert!(expected.tolerance[0].is_finite());
    }

    #[test]
    fn gemv_tolerance_is_twice_gamma_of_the_magnitudes() {
        // |α|·Σ|aᵢⱼxⱼ| + |β·yᵢ| = 2·(3 + 2) + 0.5·4 = 12, over n + 3 = 5 roundings.
        let expected = gemv(2.0f32, &[1.0, -2.0], &[3.0, 1.0], 0.5, &[4.0], [1, 2]);
        assert_eq!(expected.values, [4.0]);
        assert_eq!(
            expected.tolerance,
            [2.0 * gamma(5, f32::EPSILON as f64 / 2.0) * 12.0]
        );
        let expected = gemv(2.0f64, &[1.0, -2.0], &[3.0, 1.0], 0.5, &[4.0], [1, 2]);
        assert_eq!(
            expected.tolerance,
            [2.0 * gamma(5, f64::EPSILON / 2.0) * 12.0]
        );
    }

    #[test]
    fn a_gemv_output_just_past_its_tolerance_fails() {
        use rand::{Rng, SeedableRng, rngs::SmallRng};
        let seed = rand::random();
        let mut rng = SmallRng::seed_from_u64(seed);
        let (m, n) = (64, 1000);
        let mut draw =
            |len: usize| -> Vec<f64> { (0..len).map(|_| rng.random_range(-1.0..1.0)).collect() };
        let (a, x, y) = (draw(m * n), draw(n), draw(m));
        let expected = gemv(1.5, &a, &x, 0.5, &y, [m, n]);
        let row = seed as usize % m;
        let output_with = |factor: f64| -> Vec<f64> {
            let mut output = expected.values.clone();
            output[row] += factor * expected.tolerance[row];
            output
        };
        let within = crate::verify::compare(&output_with(0.99), &expected);
        assert!(within.passed(), "seed {seed}: {within}");
        let past = crate::verify::compare(&output_with(1.01), &expected);
        assert_eq!(past.mismatches, 1, "seed {seed}: {past}");
        assert_eq!(
            past.first_mismatch.map(|m| m.index),
            Some(row),
            "seed {seed}"
        );
    }

    #[test]
    fn compensated_dot_product_survives_cancellation() {
        // 1e16 + 1 − 1e16 loses the 1 in plain f64 arithmetic.
        let a = [1e16, 1.0, -1e16];
        let expected = gemv(1.0, &a, &[1.0, 1.0, 1.0], 0.0, &[0.0], [1, 3]);
        assert_eq!(expected.values, [1.0]);
    }

    #[test]
    fn blur_clips_the_window_at_the_border() {
        // 3×2 grayscale, radius 1.
        let input = [0, 3, 6, 9, 12, 15];
        let output = blur(&input, [3, 2, 1], 1);
        // Corner (0,0): mean of 0, 3, 9, 12 = 6; centre top (1,0): all six, 7.5 → 8.
        assert_eq!(output, [6, 8, 9, 6, 8, 9]);
    }

    #[test]
    fn blur_treats_channels_separately() {
        let input = [10, 200, 20, 100];
        let output = blur(&input, [2, 1, 2], 1);
        assert_eq!(output, [15, 150, 15, 150]);
    }

    #[test]
    fn blur_of_radius_zero_is_the_identity() {
        let input = [1, 2, 3, 4, 5, 6];
        assert_eq!(blur(&input, [2, 3, 1], 0), input);
    }

    #[test]
    fn transpose_of_a_2x3_matrix() {
        let input = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        assert_eq!(transpose(&input, [2, 3]), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    }

    #[test]
    fn transpose_twice_is_the_identity() {
        let input: Vec<f32> = (0..37 * 70).map(|i| i as f32).collect();
        assert_eq!(transpose(&transpose(&input, [37, 70]), [70, 37]), input);
    }
}
