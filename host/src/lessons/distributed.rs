//! The lessons of distributed shared memory: a block reads the shared
//! memory of another block of its cluster, set against its own shared
//! memory and against the L2, by cluster size; its bandwidth with
//! independent reads, its latency with a chain of dependent ones.

use gpu_host::Backend;
use kernels::distributed::{BLOCK, TILE};

use crate::error::Result;
use crate::families::distributed::{Distributed, DistributedShape};
use crate::family::Declaration;

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, listed, outcome};

/// The cluster sizes swept: one block (the neighbour is the block itself,
/// through the cluster's window) to the most a cluster portably holds.
const CLUSTERS: [usize; 4] = [1, 2, 4, 8];

/// Blocks of the bandwidth sweep: 8 an SM on a 132-SM H100, as many as
/// fit at once, and a multiple of every cluster size.
const BANDWIDTH_BLOCKS: usize = 1056;

/// Passes over each tile in the bandwidth sweep: a launch of milliseconds
/// on the slowest path.
const BANDWIDTH_ROUNDS: usize = 1024;

/// Blocks of the latency sweep: about one an SM, so that the few warps
/// on each wait on their reads rather than queue for the memory.
const LATENCY_BLOCKS: usize = 128;

/// Passes over each tile, 16 dependent reads each, in the latency sweep.
const LATENCY_ROUNDS: usize = 4096;

/// The kernels whose names start with `kind`, which read the block's own
/// tile, the next block's and the L2's, at every cluster size.
fn sweep(
    lab: &mut Lab<'_>,
    kind: &str,
    (blocks, rounds): (usize, usize),
    y: impl Fn(f64) -> f64,
) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    let kernels = Distributed::KERNELS.iter();
    for kernel in kernels.filter(|kernel| kernel.name.starts_with(kind)) {
        for cluster in CLUSTERS {
            let shape = DistributedShape {
                blocks,
                cluster,
                rounds,
            };
            points.push(lab.point::<Distributed>(kernel, shape, cluster as f64, &y)?);
        }
    }
    Ok(points)
}

/// Why a GPU below compute capability 9.0 runs neither lesson.
const NO_CLUSTERS: &str = "this GPU has no thread block clusters (compute capability 9.0 or \
                           newer has)";

/// Bandwidth: GB/s read by every block, own, neighbour's and L2, by
/// cluster size.
pub(super) fn bandwidth(lab: &mut Lab<'_>) -> Result<Outcome> {
    let kernels = "sum_own, sum_neighbour, sum_l2";
    if lab.gpu.capability() < Some((9, 0)) {
        return Ok(Outcome::skipped(kernels, NO_CLUSTERS));
    }
    // Every thread reads TILE / BLOCK words a pass: TILE a block.
    let bytes = 4.0 * (BANDWIDTH_BLOCKS * TILE as usize * BANDWIDTH_ROUNDS) as f64;
    let points = sweep(lab, "sum_", (BANDWIDTH_BLOCKS, BANDWIDTH_ROUNDS), |ms| {
        bytes / ms / 1e6
    })?;
    let (finding, verdict) = judge_bandwidth(&points);
    Ok(outcome(kernels, points, (finding, verdict)))
}

/// Latency: ns from one read to the next in a chain, own, neighbour's and
/// L2, by cluster size.
pub(super) fn latency(lab: &mut Lab<'_>) -> Result<Outcome> {
    let kernels = "chase_own, chase_neighbour, chase_l2";
    if lab.gpu.capability() < Some((9, 0)) {
        return Ok(Outcome::skipped(kernels, NO_CLUSTERS));
    }
    let hops = (LATENCY_ROUNDS * (TILE / BLOCK) as usize) as f64;
    let points = sweep(lab, "chase_", (LATENCY_BLOCKS, LATENCY_ROUNDS), |ms| {
        ms * 1e6 / hops
    })?;
    let (finding, verdict) = judge_latency(&points);
    Ok(outcome(kernels, points, (finding, verdict)))
}

/// The own, neighbour's and L2 series of `points`, a point a cluster size.
fn series(points: &[Point]) -> [&[Point]; 3] {
    let n = CLUSTERS.len();
    [0, 1, 2].map(|k| &points[k * n..(k + 1) * n])
}

/// Each cluster size's `of` over `to`, as a list.
fn ratios(of: &[Point], to: &[Point]) -> String {
    listed(of.iter().zip(to), |(a, b)| {
        format!("{} {:.2}×", a.x, a.y / b.y)
    })
}

/// Whether `better` beats `worse` at every cluster of more than one block
/// (the neighbour of a cluster of one is the block itself): higher where
/// `higher`, else lower.
fn beats(better: &[Point], worse: &[Point], higher: bool) -> Criterion {
    let clusters = better.iter().zip(worse).skip(1);
    Criterion::all(clusters.map(|(a, b)| match higher {
        true => Criterion::above(a.y / b.y, 1.0),
        false => Criterion::below(a.y / b.y, 1.0),
    }))
}

/// Shown where the neighbour's shared memory reads slower than the
/// block's own and faster than the L2, at every cluster of 2 or more.
fn judge_bandwidth(points: &[Point]) -> (String, Judgement) {
    let [own, neighbour, l2] = series(points);
    let (below_own, above_l2) = (beats(own, neighbour, true), beats(neighbour, l2, true));
    let finding = format!(
        "the next block's shared memory reads at {} the block's own bandwidth and {} the L2's, \
         by blocks a cluster ({:.0} GB/s own, {:.0} GB/s L2, at one block). {}",
        ratios(neighbour, own),
        ratios(neighbour, l2),
        own[0].y,
        l2[0].y,
        match (below_own.holds, above_l2.holds) {
            (true, true) => {
                "A neighbour's tile crosses the SM-to-SM network slower than the SM's own banks \
                 serve it, but faster than any SM gets it from the L2."
            }
            (true, false) => {
                "When every SM reads a neighbour's tile at once, the SM-to-SM network delivers \
                 less than the L2 does: what distributed shared memory saves is the round trip \
                 (see distributed-latency) and the L2's room and traffic, not bandwidth."
            }
            _ => "On this GPU a neighbour's shared memory reads as fast as the block's own.",
        }
    );
    let shown = below_own.and(above_l2);
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

/// Shown where a read of the neighbour's shared memory takes longer than
/// one of the block's own and less than an L2 hit, at every cluster of 2
/// or more.
fn judge_latency(points: &[Point]) -> (String, Judgement) {
    let [own, neighbour, l2] = series(points);
    let shown = beats(own, neighbour, false).and(beats(neighbour, l2, false));
    let finding = format!(
        "a dependent read of the next block's shared memory takes {} as long as one of the \
         block's own and {} as long as an L2 hit, by blocks a cluster ({:.1} ns own, {:.1} ns \
         L2, at one block). {}",
        ratios(neighbour, own),
        ratios(neighbour, l2),
        own[0].y,
        l2[0].y,
        if shown.holds {
            "The round trip to a neighbouring SM is longer than to the SM's own banks and \
             shorter than to the L2."
        } else {
            "On this GPU a neighbour's shared memory is not between the block's own and the L2 \
             in latency."
        }
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(y: [f64; 3]) -> Vec<Point> {
        (0..3)
            .flat_map(|k| CLUSTERS.map(|cluster| Point::new(cluster as f64, 1.0, y[k], true)))
            .collect()
    }

    #[test]
    fn the_bandwidth_verdict_puts_the_neighbour_between_own_and_l2() {
        let (finding, verdict) = judge_bandwidth(&points([30_000.0, 6_000.0, 4_000.0]));
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(finding.contains("at 1 0.20×, 2 0.20×"), "{finding}");
        assert!(finding.contains("and 1 1.50×"), "{finding}");
        let (finding, verdict) = judge_bandwidth(&points([30_000.0, 3_000.0, 4_000.0]));
        assert_eq!(verdict, Verdict::NotShown);
        assert!(finding.contains("not bandwidth"), "{finding}");
    }

    #[test]
    fn the_latency_verdict_puts_the_neighbour_between_own_and_l2() {
        let (_, verdict) = judge_latency(&points([15.0, 100.0, 150.0]));
        assert_eq!(verdict, Verdict::Confirmed);
        let (finding, verdict) = judge_latency(&points([15.0, 200.0, 150.0]));
        assert_eq!(verdict, Verdict::NotShown);
        assert!(finding.contains("1.33×"), "{finding}");
    }
}
