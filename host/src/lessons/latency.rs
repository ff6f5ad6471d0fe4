//! The lesson of latency down the hierarchy: one thread chasing pointers
//! through a chain in the L2, in device memory, in mapped host memory
//! across PCIe, and in another GPU's memory across NVLink (peer access).

use gpu_host::Gpu;
use gpu_host::backend::{Backend, Buffer};
use gpu_std::Placement;
use rand::{Rng, SeedableRng, rngs::SmallRng};

use crate::error::Result;
use crate::families::chase::{Chase, ChaseShape};
use crate::family::{Declaration, Family, InputOutput};
use kernels::chase::LINE;

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome};

/// The chain's sizes in the GPU's own memory, in MiB: from well inside
/// the L2 to many times it.
const DEVICE_MIB: [usize; 6] = [1, 4, 16, 64, 256, 1024];

/// The chain's sizes across a link, in MiB: one the L2 could hold, one
/// it cannot.
const FAR_MIB: [usize; 2] = [1, 1024];

/// Links a run follows: each run starts at a random line, so that a
/// chain many times the L2 is walked where no run before walked it.
const HOPS: usize = 4096;

/// Where the chain lies, in the order the series are plotted.
pub(super) const LEVELS: [&str; 3] = [
    "the GPU's own memory",
    "mapped host memory, across PCIe",
    "the peer GPU's memory, across NVLink",
];

/// The chain in the GPU's memory, the host's or the peer's.
enum Level<'a> {
    Own,
    Host,
    Peer(&'a Gpu),
}

/// The chase through a chain of `mib` MiB at `level`, verified from the
/// first line then timed from a fresh random line each run: the point at
/// x = mib, its y nanoseconds a hop.
fn chase(lab: &mut Lab<'_>, chain: &[u32], mib: usize, level: &Level<'_>) -> Result<Point> {
    let gpu = lab.gpu;
    let n = chain.len();
    let shape = |start: usize| ChaseShape {
        n,
        hops: HOPS,
        start,
    };
    let input: Buffer<Gpu, u32> = match level {
        Level::Own => gpu.upload("chain", chain)?,
        Level::Host => gpu.upload_in("chain", chain, Placement::MappedHost)?,
        Level::Peer(peer) => {
            let input = peer.upload("chain", chain)?;
            gpu.wait_for(peer)?;
            input
        }
    };
    let mut buffers = InputOutput {
        input,
        output: gpu.alloc("reached", 1)?,
    };
    let kernel = &Chase::KERNELS[0];
    Chase::launch(gpu, kernel, shape(0), &mut buffers)?;
    let correct = Chase::compare(
        gpu,
        &mut buffers,
        &Chase::reference(shape(0), &chain.to_vec()),
    )?
    .passed();
    let mut starts = SmallRng::seed_from_u64(lab.rng.random());
    let lines = n / LINE as usize;
    let timing = lab.time(gpu, || {
        let start = starts.random_range(0..lines) * LINE as usize;
        Chase::launch(gpu, kernel, shape(start), &mut buffers)
    })?;
    let ns = timing.median_ms * 1e6 / HOPS as f64;
    let series = LEVELS[match level {
        Level::Own => 0,
        Level::Host => 1,
        Level::Peer(_) => 2,
    }];
    Ok(Point::timed(mib as f64, timing, ns, correct).on(series))
}

/// Each level at each of its sizes; the peer's where there is a second
/// GPU.
pub(super) fn latency(lab: &mut Lab<'_>) -> Result<Outcome> {
    let peer = lab.peer()?;
    let mut points = Vec::new();
    for mib in DEVICE_MIB {
        let chain = chain(lab, mib)?;
        points.push(chase(lab, &chain, mib, &Level::Own)?);
        if FAR_MIB.contains(&mib) {
            points.push(chase(lab, &chain, mib, &Level::Host)?);
            if let Some(peer) = &peer {
                points.push(chase(lab, &chain, mib, &Level::Peer(peer))?);
            }
        }
    }
    let judged = judge(&points);
    Ok(outcome(Chase::KERNELS[0].name, points, judged))
}

/// A chain of `mib` MiB: one random cycle through its lines.
fn chain(lab: &mut Lab<'_>, mib: usize) -> Result<Vec<u32>> {
    let shape = ChaseShape {
        n: (mib << 20) / 4,
        hops: HOPS,
        start: 0,
    };
    Chase::inputs(shape, &mut lab.rng)
}

/// Nanoseconds a hop at `level` with a chain of `mib` MiB, where measured.
fn at(points: &[Point], level: usize, mib: usize) -> Option<f64> {
    points
        .iter()
        .find(|point| point.series.as_deref() == Some(LEVELS[level]) && point.x == mib as f64)
        .map(|point| point.y)
}

/// The finding and verdict from the points: confirmed where a hop costs
/// less in the L2 (the smallest chain) than in device memory (the
/// largest), and more across each link than in device memory.
fn judge(points: &[Point]) -> (String, Judgement) {
    let (small, large) = (DEVICE_MIB[0], DEVICE_MIB[DEVICE_MIB.len() - 1]);
    let far = FAR_MIB[FAR_MIB.len() - 1];
    let l2 = at(points, 0, small).unwrap_or(f64::NAN);
    let device = at(points, 0, large).unwrap_or(f64::NAN);
    let host = at(points, 1, far).unwrap_or(f64::NAN);
    let host_small = at(points, 1, FAR_MIB[0]).unwrap_or(f64::NAN);
    let peer = at(points, 2, far);
    let mut criteria = vec![
        Criterion::below(l2 / device, 1.0),
        Criterion::above(host / device, 1.0),
    ];
    let peer_finding = match peer {
        Some(peer) => {
            criteria.push(Criterion::above(peer / device, 1.0));
            let small = at(points, 2, FAR_MIB[0]).unwrap_or(f64::NAN);
            format!(
                "the peer GPU's memory {peer:.0} ns ({:.1}× device memory; {small:.0} ns for a \
                 {} MiB chain), {} than the host's",
                peer / device,
                FAR_MIB[0],
                if peer < host { "nearer" } else { "farther" },
            )
        }
        None => "the peer GPU's memory not measured: this host has one GPU".to_string(),
    };
    let finding = format!(
        "one dependent read a hop: {l2:.0} ns in a {small} MiB chain (the L2), {device:.0} ns \
         in a {large} MiB one (device memory, {:.1}× the L2); mapped host memory {host:.0} ns \
         ({:.1}× device memory; {host_small:.0} ns for a {} MiB chain); {peer_finding}.",
        device / l2,
        host / device,
        FAR_MIB[0],
    );
    (
        finding,
        Verdict::confirmed_if(Criterion::all(criteria), Verdict::NotShown),
    )
}

#[cfg(test)]
mod tests {
    use super::super::lab::{assert_confirmed_past_spread, own_committed_runs};
    use super::*;

    #[test]
    fn the_committed_h200_pair_runs_at_three_seeds_give_one_verdict() {
        for (file, points) in own_committed_runs("h200-pair", "latency") {
            assert_confirmed_past_spread(&file, &points, judge(&points));
        }
    }

    #[test]
    fn a_peer_no_farther_than_device_memory_is_not_shown() {
        let point = |level: usize, mib: usize, ns: f64| {
            Point::new(mib as f64, 1.0, ns, true).on(LEVELS[level])
        };
        let points = |peer: f64| {
            vec![
                point(0, 1, 150.0),
                point(0, 1024, 350.0),
                point(1, 1024, 1450.0),
                point(2, 1024, peer),
            ]
        };
        assert_eq!(judge(&points(1000.0)).1.verdict, Verdict::Confirmed);
        assert_eq!(judge(&points(300.0)).1.verdict, Verdict::NotShown);
        // Without a peer, the three other levels decide.
        assert_eq!(judge(&points(1000.0)[..3]).1.verdict, Verdict::Confirmed);
    }
}
