//! The lesson of the tensor cores' ridge point: one matmul, k swept, on
//! the FP32 cores and on the tensor cores, each family's best kernel.

use gpu_host::backend::runs;
use gpu_std::Kernel;

use crate::error::Result;
use crate::families::matmul::{Matmul, MatmulShape};
use crate::families::matmul_bf16::MatmulBf16;
use crate::family::{Declaration, Family};

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome};

/// C's side: 4096×4096, 64 MiB of f32, more than an H100's L2.
const SIDE: usize = 4096;

/// k from 16 to 4096, doubling. At a small k, writing C is most of the
/// bytes and each byte feeds a few FLOP; each doubling doubles the
/// arithmetic for much less than twice the bytes.
const DEPTHS: [usize; 9] = [16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// How much longer than at the smallest k a kernel may take while its
/// arithmetic still hides under its memory traffic: past it, the FLOP cost
/// half as much time as the bytes, and the kernel is past its ridge point.
const FREE: f64 = 1.5;

/// How many times larger a k the tensor cores must reach before their
/// arithmetic shows in the time, against the FP32 cores, for the claim to
/// hold: two doublings of the sweep, well short of the fifteenfold their
/// peaks differ by.
const LATER: usize = 4;

/// Each family's last kernel, the best of its ladder, at every k.
pub(super) fn tensor_ridge(lab: &mut Lab<'_>) -> Result<Outcome> {
    let fp32 = Matmul::KERNELS
        .last()
        .expect("the matmul family has kernels");
    let tensor = MatmulBf16::KERNELS
        .last()
        .expect("the tensor-core family has kernels");
    let names = format!("{}, {}", fp32.name, tensor.name);
    if let Err(why) = runs(lab.gpu, tensor) {
        return Ok(Outcome::skipped(&names, &why.to_string()));
    }
    let mut fp32_points = Vec::new();
    let mut tensor_points = Vec::new();
    for k in DEPTHS {
        fp32_points.push(sweep::<Matmul>(lab, fp32, k)?);
    }
    for k in DEPTHS {
        tensor_points.push(sweep::<MatmulBf16>(lab, tensor, k)?);
    }
    let judged = judge(&fp32_points, &tensor_points);
    Ok(outcome(
        &names,
        [fp32_points, tensor_points].concat(),
        judged,
    ))
}

/// `kernel` at 4096×4096×`k`: its FLOP per byte the matmul must move, and
/// its GFLOP/s.
fn sweep<F: Family<Shape = MatmulShape>>(
    lab: &mut Lab<'_>,
    kernel: &Kernel<F::Args, F::Problem>,
    k: usize,
) -> Result<Point> {
    let shape = MatmulShape {
        m: SIDE,
        n: SIDE,
        k,
    };
    let work = F::work(shape);
    lab.point::<F>(kernel, shape, work.ops / work.bytes, |ms| {
        work.ops / ms / 1e6
    })
}

/// The k at which the sweep's time passes [`FREE`] times its first: where
/// it passes its ridge point, read between the two points that bracket it
/// (the time ratio taken as linear in log₂ k), so that a time a little
/// either side of the line moves the ridge a little, not a whole doubling;
/// `None` if it never does.
fn ridge(points: &[Point]) -> Option<f64> {
    let ratio = |point: &Point| point.ms / points[0].ms;
    let past = points.iter().position(|point| ratio(point) > FREE)?;
    let (before, after) = (ratio(&points[past - 1]), ratio(&points[past]));
    let step = (FREE - before) / (after - before);
    Some(DEPTHS[past - 1] as f64 * 2f64.powf(step))
}

/// Where each kind of arithmetic starts to cost time, and whether the
/// tensor cores start at least [`LATER`] times further up k than the FP32
/// cores; the margin is how far their ratio is from [`LATER`].
fn judge(fp32: &[Point], tensor: &[Point]) -> (String, Judgement) {
    let best = |points: &[Point]| points.iter().map(|point| point.y).fold(0.0, f64::max);
    let ridges = (ridge(fp32), ridge(tensor));
    let crossing = |ridge: Option<f64>| match ridge {
        Some(k) => format!("from k ≈ {k:.0}"),
        None => "at no k swept".to_string(),
    };
    let (later, shown) = match ridges {
        (Some(f), Some(t)) => (
            format!(" ({:.1}× further up k)", t / f),
            Criterion::at_least(t / f, LATER as f64),
        ),
        (Some(_), None) => (String::new(), Criterion::exact(true)),
        (None, _) => (String::new(), Criterion::exact(false)),
    };
    let finding = format!(
        "the arithmetic hides under the bytes (the time within {FREE}× that at k = {}) up to a \
         ridge, past which the time grows with k: on the FP32 cores {}, on the tensor cores \
         {}{later}. Best rates: {:.0} and {:.0} GFLOP/s.",
        DEPTHS[0],
        crossing(ridges.0),
        crossing(ridges.1),
        best(fp32),
        best(tensor),
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::super::lab::{COMMITTED_SEEDS, committed_points};
    use super::*;

    /// A sweep over [`DEPTHS`] whose times are `ms`.
    fn sweep(ms: [f64; 9]) -> Vec<Point> {
        DEPTHS
            .iter()
            .zip(ms)
            .map(|(&k, ms)| Point::new(k as f64 / 2.0, ms, k as f64 / ms, true))
            .collect()
    }

    /// FP32 times that pass 1.5× the first between k = 64 (1.25×) and 128
    /// (1.67×): at k ≈ 97.
    const FP32: [f64; 9] = [0.12, 0.13, 0.15, 0.2, 0.3, 0.48, 0.87, 1.6, 3.1];

    #[test]
    fn a_tensor_ridge_four_times_further_up_confirms_the_claim() {
        // 1.5× the first between k = 512 (1.375×) and 1024 (2×): k ≈ 588.
        let tensor = sweep([0.04, 0.04, 0.04, 0.042, 0.046, 0.055, 0.08, 0.17, 0.31]);
        let (finding, verdict) = judge(&sweep(FP32), &tensor);
        assert_eq!(verdict, Verdict::Confirmed, "{finding}");
        assert!(
            finding.contains(
                "on the FP32 cores from k ≈ 97, on the tensor cores from k ≈ 588 (6.1× further up k)"
            ),
            "{finding}"
        );
        assert!((verdict.margin - (588.1336 / 97.0059 / 4.0 - 1.0)).abs() < 1e-4);
    }

    /// A time a hair either side of the line moves the ridge a hair, not
    /// a doubling: the verdict cannot flip on it.
    #[test]
    fn a_point_on_the_line_moves_the_ridge_a_little() {
        let near = |at_512: f64| {
            ridge(&sweep([
                0.04, 0.04, 0.04, 0.042, 0.05, at_512, 0.08, 0.17, 0.31,
            ]))
            .unwrap()
        };
        let (below, above) = (near(0.0598), near(0.0602));
        assert!(below > 512.0 && above < 512.0, "{below} {above}");
        assert!(below / above < 1.03, "{below} {above}");
    }

    #[test]
    fn a_tensor_ridge_one_doubling_up_does_not() {
        let tensor = sweep([0.04, 0.04, 0.045, 0.05, 0.07, 0.09, 0.1, 0.17, 0.31]);
        assert_eq!(judge(&sweep(FP32), &tensor).1, Verdict::NotShown);
    }

    #[test]
    fn tensor_cores_that_never_pass_their_ridge_confirm_it_and_fp32_cores_that_never_do_not() {
        let flat = sweep([0.04; 9]);
        let (finding, verdict) = judge(&sweep(FP32), &flat);
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(
            finding.contains("on the tensor cores at no k swept"),
            "{finding}"
        );
        assert_eq!(judge(&flat, &flat).1, Verdict::NotShown);
    }

    #[test]
    fn the_committed_h200_runs_at_three_seeds_give_one_verdict() {
        // Read at whole doublings, the tensor cores' ridge fell at k = 512
        // or 1024 as a point 1.47× or 1.53× its first fell below or above
        // the line: not shown, or confirmed. Read between the points, it
        // is 3.3–3.7× the FP32 cores' at every seed.
        for seed in COMMITTED_SEEDS {
            let points = committed_points("tensor-ridge", seed);
            let (fp32, tensor) = points.split_at(DEPTHS.len());
            let (finding, verdict) = judge(fp32, tensor);
            assert_eq!(verdict, Verdict::NotShown, "seed {seed}: {finding}");
            assert!(verdict.margin < -0.05, "seed {seed}: {finding}");
        }
    }
}
