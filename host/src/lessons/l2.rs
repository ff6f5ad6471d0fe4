//! What the two L2 lessons share: one stream beside reused sets of
//! growing size, and how a change of policy compares with plain accesses
//! set size by set size.

use gpu_std::Kernel;

use crate::error::Result;
use crate::families::l2::{L2, L2Shape};
use crate::family::Declaration;

use super::lab::{Lab, Point, with_speedups};

/// The reused sets swept, in MiB: from sets the L2 keeps whatever the
/// stream does, past the L2's size (50 MiB on an H100, 40 on an A100).
pub(super) const SET_MIB: [usize; 9] = [4, 8, 12, 16, 20, 24, 32, 48, 64];

/// How much faster a policy must make the kernel to call its effect shown:
/// five times the widest run-to-run spread of these lessons' points on the
/// H200 (1.1%, seeds 24 to 26). At 1.1× the verdicts stood on the edge of
/// what both policies gain at 16 MiB there (1.10× to 1.12×).
pub(super) const MARGIN: f64 = 1.05;

/// `kernel` at every set size of [`SET_MIB`] with a carve-out of
/// `carve_out` bytes (0: no window), the points on the line `series`.
pub(super) fn sweep(
    lab: &mut Lab<'_>,
    kernel: &Kernel<<L2 as Declaration>::Args, <L2 as Declaration>::Problem>,
    carve_out: usize,
    series: String,
) -> Result<Vec<Point>> {
    let mut points = Vec::new();
    for mib in SET_MIB {
        let shape = L2Shape {
            n: L2::SIZE.on_gpu[0],
            m: mib << 18,
            carve_out,
        };
        let (timing, correct) = lab.measure_on::<L2>(lab.gpu, kernel, shape)?;
        let rate = shape.streamed_bytes() / timing.median_ms / 1e6;
        points.push(Point::timed(mib as f64, timing, rate, correct).on(&series));
    }
    Ok(points)
}

/// Each set size's time under plain accesses over its time under a
/// policy, in the order of [`SET_MIB`].
pub(super) fn speedups(plain: &[Point], policy: &[Point]) -> Vec<f64> {
    plain.iter().zip(policy).map(|(a, b)| a.ms / b.ms).collect()
}

/// The set sizes whose speedup `keep` keeps, each with it: "16 MiB
/// (1.20×), 20 MiB (1.09×)", or "none".
pub(super) fn sizes_where(speedups: &[f64], keep: impl Fn(f64) -> bool) -> String {
    let sizes = SET_MIB.map(|mib| format!("{mib} MiB"));
    with_speedups(&sizes, speedups, keep)
}
