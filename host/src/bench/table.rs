//! What `locality bench` prints: the ceilings, then one row per kernel and
//! size.

use super::json::{Ceilings, ComputeSource, Report, Roofline, Row};
use super::markdown::{pays_off_from, picked_rows};
use crate::report::{WHOLE_TRIP, aligned};

/// A rate given in G/s, shown in G or T.
fn rate(giga: f64, unit: &str) -> String {
    if giga >= 1e3 {
        format!("{:.2} T{unit}", giga / 1e3)
    } else {
        format!("{giga:.1} G{unit}")
    }
}

fn or_na(value: Option<f64>, unit: &str) -> String {
    value.map_or("n/a".to_string(), |value| rate(value, unit))
}

/// The ceilings, measured and theoretical, and the roofline drawn from them.
pub fn ceilings(ceilings: &Ceilings, roofline: &Roofline) -> String {
    let sgemm = match (ceilings.sgemm_gflops, ceilings.sgemm_n) {
        (Some(gflops), Some(n)) => format!(
            "{} measured (cuBLAS SGEMM {n}³, FP32, TF32 off)",
            rate(gflops, "FLOP/s")
        ),
        _ => "n/a measured (no cuBLAS)".to_string(),
    };
    let compute = match (roofline.compute_gops_per_s, roofline.compute_source) {
        (Some(gops), Some(ComputeSource::CublasSgemm)) => {
            format!("{} (cuBLAS SGEMM)", rate(gops, "FLOP/s"))
        }
        (Some(gops), _) => format!("{} (theoretical FP32 peak)", rate(gops, "FLOP/s")),
        (None, _) => "unknown, so memory alone bounds".to_string(),
    };
    let tensor = match (ceilings.tensor_gflops, ceilings.tensor_n) {
        (Some(gflops), Some(n)) => format!(
            "tensor   {} measured (cuBLAS bf16 gemm {n}³, f32 accumulate): the roofline's compute \
             ceiling for the tensor-core families\n",
            rate(gflops, "FLOP/s")
        ),
        _ => String::new(),
    };
    let l2 = match (ceilings.l2_gbytes_per_s, ceilings.l2_set_bytes) {
        (Some(gbytes), Some(set)) => format!(
            "L2       {} measured (the cache lesson's kernel, a {} MiB set)\n",
            rate(gbytes, "B/s"),
            set >> 20
        ),
        _ => String::new(),
    };
    let reads = match (ceilings.reads_gbytes_per_s, ceilings.reads_set_bytes) {
        (Some(gbytes), Some(set)) => format!(
            "reads    {} measured (the cache lesson's kernel, a {} MiB set): the slope of work that reads more than it writes\n",
            rate(gbytes, "B/s"),
            set >> 20
        ),
        _ => String::new(),
    };
    let shared = match ceilings.shared_gbytes_per_s {
        Some(gbytes) => format!(
            "shared   {} measured (the bank lesson's kernel, no conflicts) · {} theoretical\n",
            rate(gbytes, "B/s"),
            or_na(ceilings.theoretical_shared_gbytes_per_s, "B/s"),
        ),
        None => String::new(),
    };
    let links = match (ceilings.host_link_gbytes_per_s, ceilings.peer_gbytes_per_s) {
        (None, None) => String::new(),
        (host, peer) => format!(
            "links    host {} (a pinned copy in) · GPU {} {} (cuMemcpyPeer from its memory)\n",
            or_na(host, "B/s"),
            ceilings
                .peer_device
                .map_or("-".to_string(), |device| device.to_string()),
            or_na(peer, "B/s"),
        ),
    };
    format!(
        "memory   {} measured ({} MiB device-to-device copy, bytes read + written) · {} theoretical\n\
         {reads}{l2}{shared}{links}\
         compute  {sgemm} · {} theoretical FP32\n\
         {tensor}\
         roofline min(compute {compute}, intensity × {} copy bandwidth, nearer reads alone for work that reads more than it writes); what a kernel reads \
         again from the L2 or shared memory, at theirs\n",
        rate(ceilings.copy_gbytes_per_s, "B/s"),
        ceilings.copy_bytes >> 20,
        or_na(ceilings.theoretical_gbytes_per_s, "B/s"),
        or_na(ceilings.theoretical_fp32_gflops, "FLOP/s"),
        rate(roofline.bandwidth_gbytes_per_s, "B/s"),
    )
}

/// One line per kernel or baseline and size, then what the columns mean.
pub fn results(rows: &[Row]) -> String {
    let header = [
        "kernel",
        "size",
        "median ms",
        "Gop/s",
        "GB/s",
        "op/B",
        "bound Gop/s",
        "of roofline",
        "C++ ms",
        "vs C++",
        "vs baseline",
    ];
    // Baselines padded to one width, so that the right-aligned column
    // lines up its ratios.
    let name_width = rows
        .iter()
        .filter_map(|row| row.baseline.as_deref())
        .map(str::len)
        .max()
        .unwrap_or(0);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let number = |value: Option<f64>, digits: usize| {
                value.map_or("-".to_string(), |v| format!("{v:.digits$}"))
            };
            vec![
                row.kernel.to_string(),
                row.size.to_string(),
                format!("{:.4}", row.median_ms),
                number(row.gops_per_s, 1),
                format!("{:.1}", row.gbytes_per_s),
                number(row.intensity, 2),
                number(row.roofline_bound_gops_per_s, 0),
                format!("{:.1}%", 100.0 * row.roofline_fraction),
                number(row.twin_median_ms, 4),
                row.vs_cuda_cpp
                    .map_or("-".to_string(), |ratio| format!("{ratio:.2}×")),
                match (row.ratio_to_baseline, &row.baseline) {
                    (Some(ratio), Some(baseline)) => format!("{ratio:.2}× {baseline:<name_width$}"),
                    _ => format!("-{}", " ".repeat(name_width + 1)),
                },
            ]
        })
        .collect();
    let mut table = aligned(&header, &cells, |column| column < 2);
    table.push_str(
        "op: FLOP for matmul and gemv, integer add for blur · op/B: ops over the fewest bytes \
         the work must move · of roofline: achieved / min(compute, op/B × copy bandwidth) \
         (for a copy: of the copy bandwidth) · C++ ms: the kernel's CUDA C++ twin, same \
         inputs, same run · vs C++: twin time / kernel time, above 1 the Rust kernel is \
         faster · vs baseline: baseline time / kernel time, above 1 the kernel is faster\n",
    );
    table
}

/// One line per kernel and size: the trip to the GPU and back against the
/// CPU baseline, and the size from which the GPU pays off end to end.
pub fn trips(report: &Report) -> String {
    let header = WHOLE_TRIP;
    let cells: Vec<Vec<String>> = report
        .results
        .iter()
        .filter_map(|row| {
            let trip = report
                .trips
                .iter()
                .find(|trip| trip.kernels.contains(&row.kernel) && trip.size == row.size)?;
            Some(vec![
                row.kernel.to_string(),
                row.size.to_string(),
                format!(
                    "{:.3} ({:.3})",
                    trip.to_gpu.pinned_ms, trip.to_gpu.pageable_ms
                ),
                format!("{:.4}", row.median_ms),
                format!(
                    "{:.3} ({:.3})",
                    trip.from_gpu.pinned_ms, trip.from_gpu.pageable_ms
                ),
                format!("{:.3}", row.end_to_end_ms?),
                format!("{:.3}", trip.cpu_ms),
                format!("{:.1}×", row.vs_cpu?),
                format!("{:.2}×", row.vs_cpu_end_to_end?),
            ])
        })
        .collect();
    let mut table = aligned(&header, &cells, |column| column < 2);
    let mut kernels: Vec<&str> = report
        .results
        .iter()
        .map(|row| row.kernel.as_str())
        .collect();
    kernels.dedup();
    for kernel in kernels {
        if report
            .results
            .iter()
            .any(|row| row.kernel == kernel && row.vs_cpu.is_some())
        {
            let from =
                pays_off_from(report, kernel).unwrap_or_else(|| "never, in this sweep".into());
            table.push_str(&format!("{kernel} pays off from {from}\n"));
        }
    }
    table.push_str(
        "copies from pinned host memory (pageable in brackets) · end to end: copy in + kernel + \
         copy out, pinned · vs CPU: CPU baseline time / GPU time\n",
    );
    table
}

/// The kernel each family that picks by shape launches at each size,
/// against the library and beside the ladder's fastest; empty where none
/// picks.
pub fn picked(report: &Report) -> String {
    let rows: Vec<Vec<String>> = picked_rows(report).into_iter().map(Vec::from).collect();
    if rows.is_empty() {
        return String::new();
    }
    let header = [
        "family",
        "size",
        "picks",
        "median ms",
        "vs the library",
        "fastest of the ladder",
        "vs the library",
    ];
    format!(
        "\nthe kernel each family that picks by shape launches at each size:\n{}",
        aligned(&header, &rows, |column| column != 3)
    )
}
