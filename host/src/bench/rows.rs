//! The report's rows, made from the sweep's medians: each set against the
//! roofline, its baseline and its problem's trip.

use crate::family::{Bound, Work};

use super::json::{Role, Roofline, Row, Size, Trip, held};
use super::roofline::{intensity, per_second_g, ratio_to_baseline};

/// One median, before it is set against the roofline and its baseline.
pub(super) struct Measurement {
    pub(super) family: &'static str,
    /// The ceiling its family approaches, which its roof is drawn from.
    pub(super) bound: Bound,
    /// Where the row goes: the family's place in the list, kernels before
    /// baselines, each in its own order.
    pub(super) order: (usize, Role, usize),
    pub(super) kernel: &'static str,
    pub(super) size: Size,
    pub(super) median_ms: f64,
    /// The CUDA C++ twin's median, for a kernel whose twin ran.
    pub(super) twin_ms: Option<f64>,
    pub(super) work: Work,
    pub(super) baseline: Option<&'static str>,
}

/// The report's rows: grouped by family, kernels before baselines, each in
/// teaching order, sizes in the order given; each kernel set against its
/// problem's trip.
/// `l2_bytes` tells which level holds a working set.
pub(super) fn rows(
    measured: &[Measurement],
    roofline: &Roofline,
    trips: &[Trip],
    l2_bytes: Option<usize>,
) -> Vec<Row> {
    let mut measured: Vec<&Measurement> = measured.iter().collect();
    measured.sort_by_key(|m| m.order);
    measured
        .iter()
        .map(|m| {
            let baseline_ms = m.baseline.and_then(|baseline| {
                measured
                    .iter()
                    .find(|b| b.kernel == baseline && b.size == m.size)
                    .map(|b| b.median_ms)
            });
            let Work { op, ops, bytes, .. } = m.work;
            let roof = roofline.roof_moving(m.bound, &m.work);
            let intensity = intensity(ops, bytes);
            let held = m
                .work
                .reread
                .map(|reread| held(reread, l2_bytes, |level| roofline.bandwidth_of(level)));
            let nearer = held.and_then(|(_, nearer)| nearer);
            let trip = trips
                .iter()
                .find(|trip| trip.kernels.iter().any(|k| k == m.kernel) && trip.size == m.size);
            let end_to_end_ms =
                trip.map(|trip| trip.to_gpu.pinned_ms + m.median_ms + trip.from_gpu.pinned_ms);
            Row {
                family: m.family.to_string(),
                kernel: m.kernel.to_string(),
                role: m.order.1,
                size: m.size.clone(),
                median_ms: m.median_ms,
                op,
                ops,
                gops_per_s: (ops > 0.0).then(|| per_second_g(ops, m.median_ms)),
                bytes,
                gbytes_per_s: per_second_g(bytes, m.median_ms),
                intensity,
                roofline_bound_gops_per_s: intensity.map(|i| roof.bound(i)),
                roofline_fraction: roof.fraction_rereading(ops, bytes, nearer, m.median_ms),
                reread_level: held.map(|(level, _)| level),
                reread_gbytes_per_s: m
                    .work
                    .reread
                    .map(|reread| per_second_g(reread.bytes, m.median_ms)),
                baseline: baseline_ms.and(m.baseline.map(str::to_string)),
                ratio_to_baseline: baseline_ms.map(|b| ratio_to_baseline(b, m.median_ms)),
                twin_median_ms: m.twin_ms,
                vs_cuda_cpp: m.twin_ms.map(|twin| twin / m.median_ms),
                end_to_end_ms,
                vs_cpu: trip.map(|trip| trip.cpu_ms / m.median_ms),
                vs_cpu_end_to_end: trip.zip(end_to_end_ms).map(|(trip, ms)| trip.cpu_ms / ms),
            }
        })
        .collect()
}
