//! The lesson of the all-reduce two ways across two GPUs: a one-shot
//! kernel on each GPU that reads the peer's vector in place over NVLink
//! and sums, against NCCL's all-reduce, the collective a user would call.

use gpu_host::backend::{Backend, Buffer};
use gpu_host::gpu::{Communicators, timing_together};
use gpu_host::timing::Timing;
use gpu_host::{Error as HostError, Gpu};

use crate::error::Result;
use crate::families::pair_sum::{PairSum, PairSumShape};
use crate::family::{Declaration, Family};
use crate::verify::compare;

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome};

/// Bytes of each GPU's vector: 4 KiB, and every fourfold step to 1 GiB.
const SIZES: [usize; 10] = [
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
    1 << 24,
    1 << 26,
    1 << 28,
    1 << 30,
];

/// The ways, in the order they are plotted.
pub(super) const WAYS: [&str; 3] = [
    "one-shot: each GPU sums its vector and the peer's, read in place",
    "NCCL's all-reduce",
    "one-shot, CUDA C++ twins",
];

/// Both GPUs' vectors, and their sums.
struct Vectors {
    mine: [Buffer<Gpu, f32>; 2],
    sums: [Buffer<Gpu, f32>; 2],
}

/// Enqueues the one-shot all-reduce on `gpus` (each GPU's launch as it
/// loaded the kernel: Rust or the twins), after a barrier between the
/// two: each GPU reads the other's vector only once the other's earlier
/// work is done, as a real all-reduce must.
fn one_shot(gpus: [&Gpu; 2], vectors: &mut Vectors, shape: PairSumShape) -> Result<()> {
    let problem = PairSum::problem(shape)?;
    gpus[0].wait_for(gpus[1])?;
    gpus[1].wait_for(gpus[0])?;
    let [first, second] = &mut vectors.sums;
    for (rank, sum) in [(0, first), (1, second)] {
        let (mine, theirs) = (&vectors.mine[rank], &vectors.mine[1 - rank]);
        // SAFETY: the three vectors hold n elements each, the sum overlaps
        // neither, n passed `problem`'s bounds, and each GPU reaches the
        // other's memory (peer access, enabled by `Lab::peer`).
        unsafe {
            gpus[rank].launch(
                &PairSum::KERNELS[0],
                &problem,
                (mine, theirs, sum, problem.n),
            )
        }?;
    }
    Ok(())
}

/// Whether both sums match the reference, after `gpus` ran.
fn both_correct(
    gpus: [&Gpu; 2],
    sums: &[Buffer<Gpu, f32>; 2],
    expected: &crate::reference::Expected,
) -> Result<bool> {
    let mut correct = true;
    for (gpu, sum) in gpus.iter().zip(sums) {
        correct &= compare(&gpu.download(sum)?, expected).passed();
    }
    Ok(correct)
}

/// The time of `launch` on both GPUs as one, batched as [`Lab::time`]
/// batches.
fn time_together(
    lab: &Lab<'_>,
    gpus: [&Gpu; 2],
    launch: impl FnMut() -> Result<()>,
) -> Result<Timing> {
    lab.batched(|runs, launch| timing_together(&gpus, runs, launch), launch)
}

/// At `bytes` a GPU: the one-shot kernels, NCCL's all-reduce and the
/// twins, each verified on both GPUs then timed; each point's y is the
/// algorithm bandwidth, the bytes of one GPU's vector over the time.
fn at_size(
    lab: &mut Lab<'_>,
    gpus: [&Gpu; 2],
    twins: [&Gpu; 2],
    comms: &Communicators,
    bytes: usize,
) -> Result<[Point; 3]> {
    let shape = PairSumShape { n: bytes / 4 };
    let inputs = PairSum::inputs(shape, &mut lab.rng)?;
    let expected = PairSum::reference(shape, &inputs);
    let mut vectors = Vectors {
        mine: [
            gpus[0].upload("mine", &inputs[0])?,
            gpus[1].upload("mine", &inputs[1])?,
        ],
        sums: [
            gpus[0].alloc("sum", shape.n)?,
            gpus[1].alloc("sum", shape.n)?,
        ],
    };
    let point = |timing: Timing, correct: bool, way: usize| {
        let rate = bytes as f64 / timing.median_ms / 1e6;
        Point::timed(bytes as f64, timing, rate, correct).on(WAYS[way])
    };
    let mut ways = Vec::new();
    for (way, on) in [(0, gpus), (2, twins)] {
        for (gpu, sum) in on.iter().zip(&mut vectors.sums) {
            gpu.poison(sum)?;
        }
        one_shot(on, &mut vectors, shape)?;
        let correct = both_correct(on, &vectors.sums, &expected)?;
        let timing = time_together(lab, on, || one_shot(on, &mut vectors, shape))?;
        ways.push(point(timing, correct, way));
    }
    for (gpu, sum) in gpus.iter().zip(&mut vectors.sums) {
        gpu.poison(sum)?;
    }
    nccl(comms, &mut vectors)?;
    let correct = both_correct(gpus, &vectors.sums, &expected)?;
    let timing = time_together(lab, gpus, || nccl(comms, &mut vectors))?;
    let [one, twin] = [ways[0].clone(), ways[1].clone()];
    Ok([one, point(timing, correct, 1), twin])
}

/// Enqueues NCCL's all-reduce of both GPUs' vectors into their sums.
fn nccl(comms: &Communicators, vectors: &mut Vectors) -> Result<()> {
    let [first, second] = &mut vectors.sums;
    let mine = [&vectors.mine[0], &vectors.mine[1]];
    Ok(comms.all_reduce_sum(&mine, &mut [first, second])?)
}

/// Each way at each size, on the lab's GPU and the peer.
pub(super) fn all_reduce(lab: &mut Lab<'_>) -> Result<Outcome> {
    let name = PairSum::KERNELS[0].name;
    let Some(peer) = lab.peer()? else {
        return Ok(Outcome::skipped(
            name,
            "it needs two GPUs, and this host has one",
        ));
    };
    let gpus = [lab.gpu, &peer];
    let comms = match Communicators::new(&[gpus[0].stream(), gpus[1].stream()]) {
        Err(HostError::NoNccl) => {
            return Ok(Outcome::skipped(
                name,
                "NCCL's library (libnccl.so) is not on the library path",
            ));
        }
        other => other?,
    };
    let (twin, peer_twin) = (lab.gpu.twin()?, peer.twin()?);
    let mut points = Vec::new();
    for bytes in SIZES {
        points.extend(at_size(lab, gpus, [&twin, &peer_twin], &comms, bytes)?);
    }
    let judged = judge(&points);
    Ok(outcome(name, points, judged))
}

/// The algorithm bandwidth of `way` at each size.
fn rates(points: &[Point], way: usize) -> Vec<f64> {
    let on = |point: &&Point| point.series.as_deref() == Some(WAYS[way]);
    points.iter().filter(on).map(|point| point.y).collect()
}

/// Bytes shown as KiB, MiB or GiB.
fn shown(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

/// The finding and verdict from the points: confirmed where the one-shot
/// kernels are faster than NCCL at the smallest size and NCCL is faster at
/// the largest; the crossover is the first size from which NCCL stays
/// ahead.
fn judge(points: &[Point]) -> (String, Judgement) {
    let (one_shot, nccl, twin) = (rates(points, 0), rates(points, 1), rates(points, 2));
    let last = SIZES.len() - 1;
    let crossover = (0..SIZES.len())
        .find(|&from| (from..SIZES.len()).all(|i| nccl[i] > one_shot[i]))
        .map_or(
            "NCCL is never ahead up to the largest size: with two GPUs a one-shot moves each byte \
             across the link once, as NCCL's ring does, so the ring saves no bandwidth; it does \
             with more GPUs, where a one-shot reads every peer's whole vector"
                .to_string(),
            |i| format!("NCCL is ahead from {} on", shown(SIZES[i])),
        );
    let shown_criteria = Criterion::all([
        Criterion::above(one_shot[0] / nccl[0], 1.0),
        Criterion::above(nccl[last] / one_shot[last], 1.0),
    ]);
    let twin_ratio = one_shot.iter().zip(&twin).map(|(rust, cpp)| rust / cpp);
    let (least, most) = twin_ratio.fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(r), hi.max(r)));
    let finding = format!(
        "algorithm bandwidth (a GPU's vector over the time): at {} the one-shot kernels reach \
         {:.2} GB/s and NCCL {:.2} ({:.2}× the one-shot's time); at {} the one-shot {:.0} GB/s \
         and NCCL {:.0}; {crossover}. The one-shot Rust kernels run at {least:.2}–{most:.2}× \
         their CUDA C++ twins.",
        shown(SIZES[0]),
        one_shot[0],
        nccl[0],
        one_shot[0] / nccl[0],
        shown(SIZES[last]),
        one_shot[last],
        nccl[last],
    );
    (
        finding,
        Verdict::confirmed_if(shown_criteria, Verdict::NotShown),
    )
}

#[cfg(test)]
mod tests {
    use super::super::lab::own_committed_runs;
    use super::*;

    #[test]
    fn the_committed_h200_pair_runs_at_three_seeds_give_one_verdict() {
        for (file, points) in own_committed_runs("h200-pair", "all-reduce") {
            let (finding, judgement) = judge(&points);
            assert_eq!(judgement.verdict, Verdict::NotShown, "{file}: {finding}");
            assert!(finding.contains("NCCL is never ahead"), "{file}: {finding}");
        }
    }

    #[test]
    fn a_crossover_is_the_first_size_from_which_nccl_stays_ahead() {
        // NCCL ahead at the third size (64 KiB), level with the one-shot
        // at the fourth (not ahead), ahead from the fifth (1 MiB) on: the
        // crossover is the fifth.
        let points: Vec<Point> = SIZES
            .iter()
            .enumerate()
            .flat_map(|(i, &bytes)| {
                let nccl = match i {
                    2 => 2.0,
                    3 => 1.0,
                    i if i >= 4 => 2.0,
                    _ => 0.5,
                };
                [(0, 1.0), (1, nccl), (2, 1.0)]
                    .map(|(way, y)| Point::new(bytes as f64, 1.0, y, true).on(WAYS[way]))
            })
            .collect();
        let (finding, judgement) = judge(&points);
        assert_eq!(judgement.verdict, Verdict::Confirmed, "{finding}");
        assert!(finding.contains("NCCL is ahead from 1 MiB on"), "{finding}");
    }
}
