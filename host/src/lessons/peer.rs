//! The lesson of another GPU's memory: a kernel reading the peer's device
//! memory in place over the link between the two (peer access), against
//! reading its own and against the copy engines moving the bytes first
//! (`cuMemcpyPeer`).

use gpu_host::Gpu;
use gpu_host::backend::Backend;
use gpu_host::timing::Timing;

use crate::error::Result;
use crate::families::access::{Access, AccessShape};
use crate::family::{Declaration, Family, InputOutput};

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome};

/// The input's sizes, in MiB.
const SIZES_MIB: [usize; 4] = [16, 64, 256, 1024];

/// The least share of the copy engines' rate that the kernel reading the
/// peer's memory in place must reach, at the largest size.
const IN_PLACE_SHARE: f64 = 0.9;

/// The ways of reading the input, in the order they are plotted.
pub(super) const WAYS: [&str; 5] = [
    "read from the GPU's own memory",
    "read in place from the peer's memory",
    "copied from the peer (cuMemcpyPeer)",
    "copied from the peer, then read",
    "read in place from the peer's memory, CUDA C++ twin",
];

/// GB/s of `mib` MiB in `ms`.
fn rate(mib: usize, ms: f64) -> f64 {
    (mib << 20) as f64 / ms / 1e6
}

/// At `mib` MiB: the stride-1 copy reading its input from `gpu`'s memory
/// and from `peer`'s, the peer's copied over, and the two added; each
/// point's y is GB/s of the input.
fn at_size(lab: &mut Lab<'_>, peer: &Gpu, mib: usize) -> Result<[Point; 4]> {
    let n = (mib << 20) / 4;
    let shape = AccessShape {
        n,
        stride: 1,
        offset: 0,
    };
    let inputs = Access::inputs(shape, &mut lab.rng)?;
    let expected = Access::reference(shape, &inputs);
    let gpu = lab.gpu;
    let kernel = &Access::KERNELS[0];
    let read_from = |buffers: &mut InputOutput<Gpu>| -> Result<(Timing, bool)> {
        gpu.wait_for(peer)?;
        Access::launch(gpu, kernel, shape, buffers)?;
        let correct = Access::compare(gpu, buffers, &expected)?.passed();
        let timing = lab.time(gpu, || Access::launch(gpu, kernel, shape, buffers))?;
        Ok((timing, correct))
    };
    let mut own = InputOutput {
        input: gpu.upload("input", &inputs)?,
        output: gpu.alloc("output", n)?,
    };
    let (own_timing, own_correct) = read_from(&mut own)?;
    let mut remote = InputOutput {
        input: peer.upload("input", &inputs)?,
        output: gpu.alloc("output", n)?,
    };
    let (in_place, in_place_correct) = read_from(&mut remote)?;
    let mut copy = gpu.alloc::<f32>("copy", n)?;
    gpu.copy_from_peer(peer, &remote.input, &mut copy)?;
    let copied_correct = gpu.download(&copy)? == inputs;
    let copied = lab.time(gpu, || {
        Ok(gpu.copy_from_peer(peer, &remote.input, &mut copy)?)
    })?;
    let both = Timing {
        median_ms: copied.median_ms + own_timing.median_ms,
        spread: copied.spread.max(own_timing.spread),
    };
    let point = |timing: Timing, correct: bool, way: usize| {
        Point::timed(mib as f64, timing, rate(mib, timing.median_ms), correct).on(WAYS[way])
    };
    Ok([
        point(own_timing, own_correct, 0),
        point(in_place, in_place_correct, 1),
        point(copied, copied_correct, 2),
        point(both, copied_correct && own_correct, 3),
    ])
}

/// Each way at each size, and the CUDA C++ twin reading the peer's memory
/// in place at the largest.
pub(super) fn peer(lab: &mut Lab<'_>) -> Result<Outcome> {
    let name = Access::KERNELS[0].name;
    let Some(peer) = lab.peer()? else {
        return Ok(Outcome::skipped(
            name,
            "it needs two GPUs, and this host has one",
        ));
    };
    let mut points = Vec::new();
    for mib in SIZES_MIB {
        points.extend(at_size(lab, &peer, mib)?);
    }
    let mib = SIZES_MIB[SIZES_MIB.len() - 1];
    let shape = AccessShape {
        n: (mib << 20) / 4,
        stride: 1,
        offset: 0,
    };
    let twin = lab.gpu.twin()?;
    let inputs = Access::inputs(shape, &mut lab.rng)?;
    let expected = Access::reference(shape, &inputs);
    let mut remote = InputOutput {
        input: peer.upload("input", &inputs)?,
        output: twin.alloc("output", shape.n)?,
    };
    twin.wait_for(&peer)?;
    let kernel = &Access::KERNELS[0];
    Access::launch(&twin, kernel, shape, &mut remote)?;
    let correct = Access::compare(&twin, &mut remote, &expected)?.passed();
    let timing = lab.time(&twin, || Access::launch(&twin, kernel, shape, &mut remote))?;
    points.push(Point::timed(mib as f64, timing, rate(mib, timing.median_ms), correct).on(WAYS[4]));
    let judged = judge(&points);
    Ok(outcome(name, points, judged))
}

/// The rate of `way` at the largest size.
fn largest(points: &[Point], way: usize) -> f64 {
    let on = |point: &&Point| point.series.as_deref() == Some(WAYS[way]);
    points
        .iter()
        .rev()
        .find(on)
        .map_or(f64::NAN, |point| point.y)
}

/// The finding and verdict from the points: confirmed where, at the
/// largest size, reading the peer's memory in place reaches
/// [`IN_PLACE_SHARE`] of the copy engines' rate, stays below half the
/// GPU's own memory's, and beats copying first then reading.
fn judge(points: &[Point]) -> (String, Judgement) {
    let [own, in_place, copied, then_read, twin] = [0, 1, 2, 3, 4].map(|way| largest(points, way));
    let shown = Criterion::all([
        Criterion::at_least(in_place / copied, IN_PLACE_SHARE),
        Criterion::below(in_place / own, 0.5),
        Criterion::above(in_place / then_read, 1.0),
    ]);
    let finding = format!(
        "at {} MiB, a kernel reads the peer's memory in place at {in_place:.0} GB/s, {:.2}× \
         the copy engines' cuMemcpyPeer ({copied:.0} GB/s) and {:.3}× its own memory \
         ({own:.0} GB/s). Copying first then reading moves the same bytes at {then_read:.0} \
         GB/s, so data read once is best read in place. The CUDA C++ twin reads the peer at \
         {twin:.0} GB/s (Rust {:.2}× the twin).",
        SIZES_MIB[SIZES_MIB.len() - 1],
        in_place / copied,
        in_place / own,
        in_place / twin,
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::super::lab::{assert_confirmed_past_spread, own_committed_runs};
    use super::*;

    #[test]
    fn the_committed_h200_pair_runs_at_three_seeds_give_one_verdict() {
        for (file, points) in own_committed_runs("h200-pair", "peer") {
            // The verdict rests on the largest size alone: its points'
            // spread is the one its margin must pass, not a 16 MiB copy's
            // of a few tens of microseconds.
            let largest = SIZES_MIB[SIZES_MIB.len() - 1] as f64;
            let at_largest: Vec<Point> = points
                .iter()
                .filter(|point| point.x == largest)
                .cloned()
                .collect();
            assert_confirmed_past_spread(&file, &at_largest, judge(&points));
        }
    }

    #[test]
    fn reading_in_place_below_the_copy_engines_share_is_not_shown() {
        let point = |way: usize, y: f64| Point::new(1024.0, 1.0, y, true).on(WAYS[way]);
        let points = |in_place: f64| {
            [
                (0, 1300.0),
                (1, in_place),
                (2, 390.0),
                (3, 300.0),
                (4, in_place),
            ]
            .map(|(way, y)| point(way, y))
        };
        assert_eq!(judge(&points(375.0)).1.verdict, Verdict::Confirmed);
        assert_eq!(judge(&points(340.0)).1.verdict, Verdict::NotShown);
    }
}
