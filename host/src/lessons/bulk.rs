//! The lessons of bulk copies: a tile staged in shared memory by the
//! Tensor Memory Accelerator, one instruction issued by one thread,
//! against every thread's asynchronous copies and against loads and
//! stores through registers; in a copy (`bulk`), and in a transpose whose
//! tiles a tensor copy stages through a tensor map (`bulk-tensor`).

use gpu_host::Backend;
use kernels::bulk::TILE;
use kernels::tensor::{TILE_COLS, TILE_ROWS};

use crate::error::Result;
use crate::families::bulk::{Bulk, BulkShape};
use crate::families::tensor::Tensor;
use crate::families::transpose::TransposeShape;
use crate::family::Family;

use super::lab::{
    Criterion, Judgement, Lab, Outcome, Point, Verdict, copy_rate, kernel_traffic, listed, outcome,
};

/// The sizes swept, in elements: from buffers the L2 holds (4 MiB) to
/// 1 GiB, twenty times an H100's L2.
const SIZES: [usize; 5] = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28];

/// How far below the per-thread copies the bulk copy may fall and still
/// count as keeping up: the spread of repeated medians.
const TOLERANCE: f64 = 0.97;

/// The shortest launch whose time decides the verdict, in ms. Shorter
/// ones are a few launch overheads long: on the H200 (three runs, seeds
/// 24 to 26) the bulk copy's 4 MiB point, 4–5 µs, went from 0.82× to
/// 1.17× the per-thread copies, where every point from 64 MiB (40 µs) on
/// stayed within 1.5% of its ratio. They are shown, not judged.
const DECISIVE_MS: f64 = 0.02;

/// MiB of an input of `n` elements.
fn mib(n: usize) -> f64 {
    (4 * n) as f64 / f64::from(1 << 20)
}

/// The square transpose of `n` elements.
fn square(n: usize) -> TransposeShape {
    let side = n.isqrt();
    TransposeShape::new(side, side)
}

/// Every kernel of the copy at every size.
pub(super) fn bulk(lab: &mut Lab<'_>) -> Result<Outcome> {
    let one_tile = BulkShape { n: TILE as usize };
    staged::<Bulk>(lab, one_tile, |n| BulkShape { n }, "stages tiles")
}

/// Every kernel of the transpose at every size (square matrices).
pub(super) fn tensor(lab: &mut Lab<'_>) -> Result<Outcome> {
    let one_tile = TransposeShape::new(TILE_ROWS as usize, TILE_COLS as usize);
    let what = "stages a transpose's tiles";
    staged::<Tensor>(lab, one_tile, square, what)
}

/// Family `F`'s three kernels (loads, per-thread copies, bulk copy) at
/// every size, `shape` giving the shape of `n` elements, with the
/// warp-level copy instructions a tile takes as the emulator counts them
/// at `counted`, one tile; `what` says what the kernels do with the tiles.
fn staged<F: Family>(
    lab: &mut Lab<'_>,
    counted: F::Shape,
    shape: impl Fn(usize) -> F::Shape,
    what: &str,
) -> Result<Outcome> {
    let names: Vec<&str> = F::KERNELS.iter().map(|kernel| kernel.name).collect();
    let kernels = names.join(", ");
    if lab.gpu.capability() < Some((9, 0)) {
        return Ok(Outcome::skipped(
            &kernels,
            "this GPU has no Tensor Memory Accelerator (compute capability 9.0 or newer has)",
        ));
    }
    let mut points = Vec::new();
    for kernel in F::KERNELS {
        let traffic = kernel_traffic::<F>(kernel, counted)?;
        let instructions = traffic.global_load.requests + traffic.bulk_load.requests;
        for n in SIZES {
            let (timing, correct) = lab.measure_on::<F>(lab.gpu, kernel, shape(n))?;
            points.push(
                Point::timed(mib(n), timing, copy_rate(n, timing.median_ms), correct)
                    .on(kernel.name)
                    .counting(instructions as f64),
            );
        }
    }
    let (finding, verdict) = judge(&points, what);
    Ok(Outcome {
        spread: judged_spread(&points),
        ..outcome(&kernels, points, (finding, verdict))
    })
}

/// The widest spread of the points the verdict rests on, every kernel's
/// at the [`decisive`] sizes: the short launches', shown only, reached
/// 13% on the H200.
fn judged_spread(points: &[Point]) -> Option<f64> {
    let decided = decisive(points);
    points
        .iter()
        .enumerate()
        .filter(|(i, _)| decided.contains(&(i % SIZES.len())))
        .map(|(_, point)| point.spread)
        .reduce(f64::max)
}

/// The sizes whose launches of both the bulk copy and the per-thread
/// copies last [`DECISIVE_MS`] or more (every size, where none does), by
/// their index in [`SIZES`].
fn decisive(points: &[Point]) -> Vec<usize> {
    let [copies, bulk] = [1, 2].map(|k| &points[k * SIZES.len()..(k + 1) * SIZES.len()]);
    let long = |i: &usize| bulk[*i].ms.min(copies[*i].ms) >= DECISIVE_MS;
    let decisive: Vec<usize> = (0..SIZES.len()).filter(long).collect();
    if decisive.is_empty() {
        (0..SIZES.len()).collect()
    } else {
        decisive
    }
}

/// The finding and verdict: shown where the bulk copy stages tiles at
/// [`TOLERANCE`] or more of the per-thread copies' rate at every size
/// whose launches of both last [`DECISIVE_MS`] or more (at every size,
/// where none does).
fn judge(points: &[Point], what: &str) -> (String, Judgement) {
    let [loads, copies, bulk] = [0, 1, 2].map(|k| &points[k * SIZES.len()..(k + 1) * SIZES.len()]);
    let ratios = |of: &[Point], to: &[Point]| -> Vec<f64> {
        of.iter().zip(to).map(|(a, b)| b.ms / a.ms).collect()
    };
    let (over_copies, over_loads) = (ratios(bulk, copies), ratios(bulk, loads));
    let decisive = decisive(points);
    let shown = Criterion::all(
        decisive
            .iter()
            .map(|&i| Criterion::at_least(over_copies[i], TOLERANCE)),
    );
    let list = |ratios: &[f64]| {
        listed(bulk.iter().zip(ratios), |(point, ratio)| {
            format!("{} MiB {ratio:.2}×", point.x)
        })
    };
    let finding = format!(
        "one bulk copy a tile, issued by one thread ({} warp-level copy instruction a tile, \
         against {} for the per-thread copies and {} loads), {what} at {} the rate of the \
         per-thread cp.async copies, and {} that of loads and stores, by buffer size \
         (judged from {} MiB, where a launch lasts {} ms or more). {}",
        bulk[0].counted.unwrap_or(0.0),
        copies[0].counted.unwrap_or(0.0),
        loads[0].counted.unwrap_or(0.0),
        list(&over_copies),
        list(&over_loads),
        bulk[decisive[0]].x,
        DECISIVE_MS,
        if shown.holds {
            "The threads issue almost nothing and the tile arrives as fast: who moves the data \
             no longer costs the threads' instructions."
        } else {
            "On this GPU the bulk copy stages tiles more slowly than the threads' own copies."
        }
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::super::lab::{COMMITTED_SEEDS, committed_points};
    use super::*;

    fn points(ms: [f64; 3]) -> Vec<Point> {
        let counted = [128.0, 32.0, 1.0];
        (0..3)
            .flat_map(|k| SIZES.map(|n| Point::new(mib(n), ms[k], 0.0, true).counting(counted[k])))
            .collect()
    }

    #[test]
    fn the_bulk_verdict_holds_the_bulk_copy_to_the_per_thread_copies() {
        let (finding, verdict) = judge(&points([1.1, 1.0, 1.02]), "stages tiles");
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(finding.contains("(1 warp-level copy instruction a tile, against 32"));
        assert!(finding.contains("stages tiles at 4 MiB 0.98×"), "{finding}");
        assert!(finding.contains("and 4 MiB 1.08×"), "{finding}");
        let (_, verdict) = judge(&points([1.0, 1.0, 1.05]), "stages tiles");
        assert_eq!(verdict, Verdict::NotShown);
    }

    #[test]
    fn launches_too_short_to_time_are_shown_but_do_not_decide() {
        // The smallest size's launches last 5 µs, and there the bulk copy
        // is at 0.8× the per-thread copies; everywhere else at 1.0×.
        let mut short = points([1.1, 1.0, 1.0]);
        for (k, ms) in [(0, 0.0055), (1, 0.004), (2, 0.005)] {
            short[k * SIZES.len()].ms = ms;
        }
        let (finding, verdict) = judge(&short, "stages tiles");
        assert_eq!(verdict, Verdict::Confirmed, "{finding}");
        assert!(finding.contains("stages tiles at 4 MiB 0.80×"), "{finding}");
        assert!(
            finding.contains("(judged from 16 MiB, where a launch lasts 0.02 ms or more)"),
            "{finding}"
        );
        // Where no launch is long enough, every size decides.
        let mut all_short = points([0.011, 0.010, 0.010]);
        all_short[2 * SIZES.len()].ms = 0.0125;
        let (finding, verdict) = judge(&all_short, "stages tiles");
        assert_eq!(verdict, Verdict::NotShown, "{finding}");
        assert!(finding.contains("(judged from 4 MiB"), "{finding}");
    }

    #[test]
    fn the_spread_is_that_of_the_judged_points() {
        // The loads take 1 ms at every size and never decide; the copies'
        // and the bulk copy's 4 MiB launches are too short, and spread
        // widest.
        let mut points = points([1.0, 0.03, 0.03]);
        for (k, spread) in [(0, 0.5), (1, 0.2), (2, 0.3)] {
            points[k * SIZES.len()].spread = spread;
        }
        points[SIZES.len()].ms = 0.004;
        points[2 * SIZES.len()].ms = 0.005;
        points[SIZES.len() + 3].spread = 0.04;
        assert_eq!(decisive(&points), [1, 2, 3, 4]);
        assert_eq!(judged_spread(&points), Some(0.04));
        // Where no launch is long enough, every point counts.
        let short = self::points([0.001, 0.001, 0.001]);
        assert_eq!(decisive(&short), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_committed_h200_runs_at_three_seeds_give_each_lesson_one_verdict() {
        // Run before the short launches were left out of the verdict, the
        // bulk lesson read confirmed, confirmed and not shown; judged now,
        // the same points give one verdict at every seed.
        for (lesson, expected) in [
            ("bulk", Verdict::Confirmed),
            ("bulk-tensor", Verdict::NotShown),
        ] {
            for seed in COMMITTED_SEEDS {
                let points = committed_points(lesson, seed);
                let (finding, verdict) = judge(&points, "stages tiles");
                assert_eq!(verdict, expected, "{lesson}, seed {seed}: {finding}");
            }
        }
    }

    #[test]
    fn a_square_transpose_holds_the_elements_asked_for() {
        for n in SIZES {
            let shape = square(n);
            assert_eq!(shape.rows * shape.cols, n);
            assert!(shape.cols.is_multiple_of(4));
        }
    }
}
