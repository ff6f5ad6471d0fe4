//! `--markdown`: the bench's results as the README shows them, generated
//! from the report so that no table is typed by hand: the device and the
//! ceilings, each kernel and baseline at its family's largest size, and
//! every row.

use std::fmt::Write;

use super::json::{Device, Report, Role, Row, Size};
use crate::error::Result;
use crate::families::{self, Visitor};
use crate::family::{DEVICE_COPY, Family, PickFor};

/// The Markdown of `report`.
pub fn render(report: &Report) -> String {
    let mut text = String::new();
    let device = &report.device;
    let mut about = Vec::new();
    if let Some(sms) = device.multiprocessors {
        about.push(format!("{sms} SMs"));
    }
    if let Some(l2) = device.l2_bytes {
        about.push(format!("{} MiB L2", l2 >> 20));
    }
    let ceilings = &report.ceilings;
    let theoretical = |value: Option<f64>, scale: f64| {
        value.map_or(String::new(), |value| {
            format!(" (theoretical {:.2})", value / scale)
        })
    };
    let sgemm = match (ceilings.sgemm_gflops, ceilings.sgemm_n) {
        (Some(gflops), Some(n)) => format!(
            " and cuBLAS SGEMM at {n}³ reached **{:.1} TFLOP/s**{}",
            gflops / 1e3,
            theoretical(ceilings.theoretical_fp32_gflops, 1e3)
        ),
        _ => " (no cuBLAS: no measured compute ceiling)".to_string(),
    };
    let tensor = match (ceilings.tensor_gflops, ceilings.tensor_n) {
        (Some(gflops), Some(n)) => format!(
            "; on the tensor cores, cuBLAS's bf16 gemm at {n}³ reached **{:.1} TFLOP/s**",
            gflops / 1e3
        ),
        _ => String::new(),
    };
    let levels = match (ceilings.l2_gbytes_per_s, ceilings.shared_gbytes_per_s) {
        (Some(l2), Some(shared)) => format!(
            "; reads again from the L2 reached **{:.2} TB/s** and from shared memory **{:.2} TB/s**{}",
            l2 / 1e3,
            shared / 1e3,
            theoretical(ceilings.theoretical_shared_gbytes_per_s, 1e3)
        ),
        _ => String::new(),
    };
    let reads = match ceilings.reads_gbytes_per_s {
        Some(reads) => format!(", reads alone **{:.2} TB/s**", reads / 1e3),
        None => String::new(),
    };
    let host_link = match ceilings.host_link_gbytes_per_s {
        Some(link) => format!("; beyond the GPU, a pinned copy from the host **{link:.1} GB/s**"),
        None => String::new(),
    };
    let peer = match (ceilings.peer_gbytes_per_s, ceilings.peer_device) {
        (Some(peer), Some(device)) => {
            format!(" and a copy from GPU {device}'s memory (cuMemcpyPeer) **{peer:.0} GB/s**")
        }
        _ => String::new(),
    };
    let _ = writeln!(
        text,
        "{} ({}), {} warm-up and {} timed runs per measurement, random inputs from seed {}. \
         Ceilings measured in the same run: a {} MiB device copy moved **{:.2} TB/s**{}{reads}{levels}{sgemm}{tensor}{host_link}{peer}.\n",
        device.name,
        about.join(", "),
        report.runs.warmup,
        report.runs.timed,
        report.runs.seed,
        ceilings.copy_bytes >> 20,
        ceilings.copy_gbytes_per_s / 1e3,
        theoretical(ceilings.theoretical_gbytes_per_s, 1e3),
    );
    let largest: Vec<&Row> = report
        .families
        .iter()
        .flat_map(|family| {
            at_largest_size(
                report
                    .results
                    .iter()
                    .filter(|row| row.family == family.name),
            )
        })
        .collect();
    text.push_str("Each kernel and baseline at its family's largest size:\n\n");
    text.push_str(&table(&largest));
    text.push_str(&fastest(&largest));
    text.push_str(&whole_trip(report, &largest));
    let picked = picked(report);
    if !picked.is_empty() {
        let _ = write!(
            text,
            "\nThe kernel each family that picks by shape launches, at every size ({} SMs):\n\n{picked}",
            device.multiprocessors.unwrap_or_default()
        );
    }
    text.push_str(&above_the_roofline(&report.results));
    let every: Vec<&Row> = report.results.iter().collect();
    text.push_str("\n<details><summary>Every size</summary>\n\n");
    text.push_str(&table(&every));
    text.push_str("\n</details>\n");
    text
}

/// How far past its roofline a run may put a kernel before the roofline,
/// not the kernel, is wrong: the ceilings' own run-to-run spread.
pub const ROOFLINE_SLACK: f64 = 1.05;

/// The rows past [`ROOFLINE_SLACK`] of their roofline, each at its size:
/// a kernel there reads from a level its ceiling does not describe.
pub fn above_the_roofline(rows: &[Row]) -> String {
    let above: Vec<String> = rows
        .iter()
        .filter(|row| row.roofline_fraction > ROOFLINE_SLACK)
        .map(|row| {
            format!(
                "`{}` at {} ({:.1}%)",
                row.kernel,
                row.size,
                100.0 * row.roofline_fraction
            )
        })
        .collect();
    format!(
        "\nPast {:.0}% of its roofline, where the roofline would misjudge it: {}.\n",
        100.0 * ROOFLINE_SLACK,
        if above.is_empty() {
            "none".to_string()
        } else {
            above.join(", ")
        }
    )
}

/// The run's device and ceilings in one line, for a table taken from it.
pub fn measured_on(report: &Report) -> String {
    let ceilings = &report.ceilings;
    let sgemm = match ceilings.sgemm_gflops {
        Some(gflops) => format!(", cuBLAS SGEMM {:.1} TFLOP/s", gflops / 1e3),
        None => String::new(),
    };
    let tensor = match ceilings.tensor_gflops {
        Some(gflops) => format!(", cuBLAS bf16 gemm {:.1} TFLOP/s", gflops / 1e3),
        None => String::new(),
    };
    let reads = match ceilings.reads_gbytes_per_s {
        Some(reads) => format!(", reads alone {:.2} TB/s", reads / 1e3),
        None => String::new(),
    };
    let levels = match (ceilings.l2_gbytes_per_s, ceilings.shared_gbytes_per_s) {
        (Some(l2), Some(shared)) => format!(
            ", reads again from the L2 {:.2} TB/s and from shared memory {:.2} TB/s",
            l2 / 1e3,
            shared / 1e3
        ),
        _ => String::new(),
    };
    let host_link = match ceilings.host_link_gbytes_per_s {
        Some(link) => format!(", a pinned copy from the host {link:.1} GB/s"),
        None => String::new(),
    };
    let peer = match (ceilings.peer_gbytes_per_s, ceilings.peer_device) {
        (Some(peer), Some(device)) => format!(", a copy from GPU {device}'s memory {peer:.0} GB/s"),
        _ => String::new(),
    };
    let source = match &report.ceilings_from {
        Some(earlier) => format!("ceilings from an earlier run ({earlier})"),
        None => "ceilings measured in the same run".to_string(),
    };
    format!(
        "{}, seed {}, {source}: a device copy {:.2} TB/s{reads}{levels}{sgemm}{tensor}\
         {host_link}{peer}",
        report.device.name,
        report.runs.seed,
        ceilings.copy_gbytes_per_s / 1e3
    )
}

/// Each ladder family's best kernel at its largest size, one line per
/// problem there: its time, its share of the roofline, and its speed
/// against the library a user would call instead and against its CUDA C++
/// twin. A ladder family is one with a baseline to beat.
pub fn summary(report: &Report) -> String {
    let mut text = String::from(
        "| family | size | best kernel | median ms | of the roofline | vs the library | vs its C++ twin |\n\
         | --- | --- | --- | ---: | ---: | --- | ---: |\n",
    );
    for family in &report.families {
        let rows = || {
            report
                .results
                .iter()
                .filter(|row| row.family == family.name)
        };
        if !rows().any(|row| row.ratio_to_baseline.is_some()) {
            continue;
        }
        // Each problem at the largest size: a trip of its own.
        let side = at_largest_size(rows())[0].size.side();
        for trip in report
            .trips
            .iter()
            .filter(|trip| trip.family == family.name && trip.size.side() == side)
        {
            let Some(best) = rows()
                .filter(|row| row.size == trip.size && trip.kernels.contains(&row.kernel))
                .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms))
            else {
                continue;
            };
            let _ = writeln!(
                text,
                "| {} | {} | `{}` | {:.3} | {:.1}% | {} | {} |",
                family.name,
                best.size,
                best.kernel,
                best.median_ms,
                100.0 * best.roofline_fraction,
                versus_baseline(best),
                best.vs_cuda_cpp
                    .map_or(String::new(), |ratio| format!("{ratio:.2}×")),
            );
        }
    }
    text
}

/// Each kernel and baseline of `family` at `size` (its largest, when not
/// given), in teaching order, with what it teaches.
pub fn ladder(report: &Report, family: &str, size: Option<&str>) -> Option<String> {
    let rows = report.results.iter().filter(|row| row.family == family);
    let at_size: Vec<&Row> = match size {
        Some(size) => rows.filter(|row| row.size.label() == size).collect(),
        None => at_largest_size(rows),
    };
    if at_size.is_empty() {
        return None;
    }
    let mut text = String::from(
        "| step | what it teaches | median ms | Gop/s | GB/s | of the roofline | vs the library | vs C++ |\n\
         | --- | --- | ---: | ---: | ---: | ---: | --- | ---: |\n",
    );
    for row in at_size {
        let lesson = report
            .kernels
            .iter()
            .find(|kernel| kernel.name == row.kernel)
            .map_or("", |kernel| kernel.lesson.as_str());
        let _ = writeln!(
            text,
            "| `{}` | {lesson} | {:.3} | {} | {:.0} | {:.1}% | {} | {} |",
            row.kernel,
            row.median_ms,
            row.gops_per_s
                .map_or(String::new(), |gops| format!("{gops:.0}")),
            row.gbytes_per_s,
            100.0 * row.roofline_fraction,
            versus_baseline(row),
            row.vs_cuda_cpp
                .map_or(String::new(), |ratio| format!("{ratio:.2}×")),
        );
    }
    Some(text)
}

/// Every kernel against its CUDA C++ twin: the ratio at each size's
/// extremes and at the family's largest size, and the registers ptxas gave
/// each side.
pub fn twins(report: &Report) -> String {
    let mut text = String::from(
        "| kernel | vs C++, over the sweep | at the largest size | registers, Rust / C++ |\n\
         | --- | ---: | ---: | ---: |\n",
    );
    for kernel in &report.kernels {
        let rows: Vec<&Row> = report
            .results
            .iter()
            .filter(|row| row.kernel == kernel.name && row.vs_cuda_cpp.is_some())
            .collect();
        if rows.is_empty() {
            continue;
        }
        let (low, high) = span(rows.iter().filter_map(|row| row.vs_cuda_cpp));
        let largest = at_largest_size(rows.iter().copied());
        let (at_low, at_high) = span(largest.iter().filter_map(|row| row.vs_cuda_cpp));
        let registers = match kernel.twin_resources {
            Some(twin) => format!("{} / {}", kernel.resources.registers, twin.registers),
            None => kernel.resources.registers.to_string(),
        };
        let _ = writeln!(
            text,
            "| `{}` | {} | {} | {registers} |",
            kernel.name,
            ratio_range(low, high),
            ratio_range(at_low, at_high),
        );
    }
    text
}

/// The kernels named against their CUDA C++ twins in several runs, side
/// by side: each run's lowest and highest ratio over its sweep. `runs` are
/// each run's column heading and report.
pub fn twins_beside(runs: &[(String, &Report)], kernels: &[&str]) -> String {
    let mut text = String::from("| kernel |");
    for (heading, _) in runs {
        let _ = write!(text, " {heading} |");
    }
    text.push_str("\n| --- |");
    text.push_str(&" ---: |".repeat(runs.len()));
    text.push('\n');
    for kernel in kernels {
        let _ = write!(text, "| `{kernel}` |");
        for (_, report) in runs {
            let mut ratios = report
                .results
                .iter()
                .filter(|row| row.kernel == *kernel)
                .filter_map(|row| row.vs_cuda_cpp)
                .peekable();
            let cell = match ratios.peek() {
                Some(_) => {
                    let (low, high) = span(ratios);
                    ratio_range(low, high)
                }
                None => "not run".to_string(),
            };
            let _ = write!(text, " {cell} |");
        }
        text.push('\n');
    }
    text
}

/// Every kernel against its CUDA C++ twin at every size of the run, both
/// medians and the ratio, the ratios under the 0.97× the project holds
/// itself to in bold.
pub fn twins_by_size(report: &Report) -> String {
    let mut text = String::from(
        "| kernel | size | Rust ms | C++ ms | vs C++ |\n| --- | --- | ---: | ---: | ---: |\n",
    );
    for row in &report.results {
        let (Some(twin_ms), Some(ratio)) = (row.twin_median_ms, row.vs_cuda_cpp) else {
            continue;
        };
        // Bold as the table rounds it: 0.969 shows as 0.97 and is not.
        let shown = format!("{ratio:.2}");
        let ratio = match shown.parse::<f64>().is_ok_and(|ratio| ratio < 0.97) {
            true => format!("**{shown}×**"),
            false => format!("{shown}×"),
        };
        let _ = writeln!(
            text,
            "| `{}` | {} | {:.4} | {twin_ms:.4} | {ratio} |",
            row.kernel, row.size, row.median_ms,
        );
    }
    text
}

/// Each family that picks among its kernels by shape: at every size of
/// the run, the kernel it picks for this run's GPU, against the library
/// and beside the ladder's fastest there, all from the same run. Empty
/// where no family picks, or the run does not record the GPU's SM count
/// and compute capability.
pub fn picked(report: &Report) -> String {
    let rows = picked_rows(report);
    if rows.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "| family | size | picks | median ms | vs the library | fastest of the ladder | vs the library |\n\
         | --- | --- | --- | ---: | --- | --- | --- |\n",
    );
    for [family, size, picks, ms, versus, fastest, fastest_versus] in rows {
        let _ = writeln!(
            text,
            "| {family} | {size} | `{picks}` | {ms} | {versus} | `{fastest}` | {fastest_versus} |"
        );
    }
    text
}

/// [`picked`]'s rows: family, size, the picked kernel, its median and its
/// ratio to the library (or "not timed in this run" and nothing), the
/// ladder's fastest and its ratio.
pub fn picked_rows(report: &Report) -> Vec<[String; 7]> {
    let Some(gpu) = pick_for(&report.device) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for family in &report.families {
        let kernels = || {
            report
                .results
                .iter()
                .filter(|row| row.family == family.name && row.role == Role::Kernel)
        };
        let mut sizes: Vec<&Size> = Vec::new();
        for row in kernels() {
            if !sizes.contains(&&row.size) {
                sizes.push(&row.size);
            }
        }
        for size in sizes {
            let at_size = || kernels().filter(|row| row.size == *size);
            let Some(name) = picked_at(&family.name, size, gpu) else {
                continue;
            };
            let Some(fastest) = at_size().min_by(|a, b| a.median_ms.total_cmp(&b.median_ms)) else {
                continue;
            };
            let (ms, versus) = match at_size().find(|row| row.kernel == name) {
                Some(row) => (format!("{:.3}", row.median_ms), versus_baseline(row)),
                None => ("not timed in this run".to_string(), String::new()),
            };
            rows.push([
                family.name.clone(),
                size.to_string(),
                name.to_string(),
                ms,
                versus,
                fastest.kernel.clone(),
                versus_baseline(fastest),
            ]);
        }
    }
    rows
}

/// What a family that picks by shape knows of the run's GPU: its SM count
/// and compute capability, where the run recorded both.
fn pick_for(device: &Device) -> Option<PickFor> {
    let (major, minor) = device.compute_capability.as_deref()?.split_once('.')?;
    Some(PickFor {
        multiprocessors: device.multiprocessors?,
        compute_capability: (major.parse().ok()?, minor.parse().ok()?),
    })
}

/// The kernel `family` picks at `size` on `gpu`, for a family that picks
/// among its kernels by shape.
fn picked_at(family: &str, size: &Size, gpu: PickFor) -> Option<&'static str> {
    struct Pick<'a> {
        family: &'a str,
        size: &'a Size,
        gpu: PickFor,
        picked: Option<&'static str>,
    }
    impl Visitor for Pick<'_> {
        fn visit<F: Family>(&mut self) -> Result<()> {
            if F::NAME == self.family
                && self.picked.is_none()
                && let Some(shape) = self.size.shape::<F::Shape>()
                && let Ok(problem) = F::problem(shape)
            {
                self.picked = F::pick(&problem, self.gpu).map(|kernel| kernel.name);
            }
            Ok(())
        }
    }
    let mut pick = Pick {
        family,
        size,
        gpu,
        picked: None,
    };
    families::visit(&mut pick).expect("picking cannot fail");
    pick.picked
}

/// The rows of `rows` at the largest size among them, by the side of the
/// square or cube of the same volume.
pub fn at_largest_size<'a>(rows: impl Iterator<Item = &'a Row> + Clone) -> Vec<&'a Row> {
    let side = rows.clone().map(|row| row.size.side()).fold(0.0, f64::max);
    rows.filter(|row| row.size.side() == side).collect()
}

/// `low–high×`, or one ratio where both round alike.
fn ratio_range(low: f64, high: f64) -> String {
    if format!("{low:.2}") == format!("{high:.2}") {
        format!("{low:.2}×")
    } else {
        format!("{low:.2}–{high:.2}×")
    }
}

/// The lowest and the highest of `values`.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, 0.0), |(low, high), value| {
        (low.min(value), high.max(value))
    })
}

/// `ratio× name`: a row against its baseline, where it has one.
fn versus_baseline(row: &Row) -> String {
    match (row.ratio_to_baseline, &row.baseline) {
        (Some(ratio), Some(baseline)) => format!("{ratio:.2}× `{baseline}`"),
        _ => String::new(),
    }
}

/// One table row per row of `rows`.
fn table(rows: &[&Row]) -> String {
    let mut text = String::from(
        "| kernel | size | median ms | Gop/s | GB/s | op/B | of roofline | vs C++ | vs baseline |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for row in rows {
        let vs_cpp = row
            .vs_cuda_cpp
            .map_or(String::new(), |ratio| format!("{ratio:.2}×"));
        let vs_baseline = versus_baseline(row);
        let _ = writeln!(
            text,
            "| `{}` | {} | {:.3} | {} | {:.0} | {} | {:.1}% | {vs_cpp} | {vs_baseline} |",
            row.kernel,
            row.size,
            row.median_ms,
            row.gops_per_s
                .map_or(String::new(), |gops| format!("{gops:.0}")),
            row.gbytes_per_s,
            row.intensity.map_or(String::new(), significant),
            100.0 * row.roofline_fraction,
        );
    }
    text
}

/// The fastest kernel of `rows` at each size, against its baseline and,
/// where the family times one, the device copy of the same bytes (copy
/// time / kernel time: the kernel's share of the copy bandwidth).
pub fn fastest(rows: &[&Row]) -> String {
    let mut text = String::from(
        "\nThe fastest kernel at each size:\n\n\
         | size | fastest kernel | median ms | vs baseline | share of a device copy |\n\
         | --- | --- | ---: | --- | ---: |\n",
    );
    let mut sizes: Vec<&str> = Vec::new();
    for row in rows {
        if !sizes.contains(&row.size.label()) {
            sizes.push(row.size.label());
        }
    }
    for size in sizes {
        let at_size = || rows.iter().filter(move |row| row.size.label() == size);
        let kernels = at_size().filter(|row| row.role == Role::Kernel);
        let Some(best) = kernels.min_by(|a, b| a.median_ms.total_cmp(&b.median_ms)) else {
            continue;
        };
        let vs_baseline = versus_baseline(best);
        let copy = at_size().find(|row| row.kernel == DEVICE_COPY);
        let share = copy.map_or(String::new(), |copy| {
            format!("{:.2}×", copy.median_ms / best.median_ms)
        });
        let _ = writeln!(
            text,
            "| {size} | `{}` | {:.3} | {vs_baseline} | {share} |",
            best.kernel, best.median_ms
        );
    }
    text
}

/// Three significant figures, at most, for numbers from 0.01 up.
fn significant(value: f64) -> String {
    match value {
        v if v >= 100.0 => format!("{v:.0}"),
        v if v >= 10.0 => format!("{v:.1}"),
        v => format!("{v:.2}"),
    }
}

/// The copies to the GPU and back and the CPU baseline beside each kernel
/// of `rows`, and the size from which each pays off end to end.
fn whole_trip(report: &Report, rows: &[&Row]) -> String {
    let mut text = String::from(
        "\nThe whole trip, at the same sizes: copies from pinned host memory (pageable in \
         brackets), end to end = copy in + kernel + copy out, against the CPU baseline on the \
         same inputs; *pays off from*: the smallest size of the sweep from which the GPU is \
         faster end to end at every larger size too.\n\n\
         | kernel | to GPU ms | kernel ms | from GPU ms | end to end ms | CPU ms | vs CPU | end to end | pays off from |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for row in rows.iter().filter(|row| row.end_to_end_ms.is_some()) {
        let Some(trip) = report
            .trips
            .iter()
            .find(|trip| trip.kernels.contains(&row.kernel) && trip.size == row.size)
        else {
            continue;
        };
        let _ = writeln!(
            text,
            "| `{}` | {:.3} ({:.3}) | {:.3} | {:.3} ({:.3}) | {:.3} | {:.3} | {:.1}× | {:.2}× | {} |",
            row.kernel,
            trip.to_gpu.pinned_ms,
            trip.to_gpu.pageable_ms,
            row.median_ms,
            trip.from_gpu.pinned_ms,
            trip.from_gpu.pageable_ms,
            row.end_to_end_ms.unwrap_or(f64::NAN),
            trip.cpu_ms,
            row.vs_cpu.unwrap_or(f64::NAN),
            row.vs_cpu_end_to_end.unwrap_or(f64::NAN),
            pays_off_from(report, &row.kernel)
                .unwrap_or_else(|| "never, in this sweep".to_string()),
        );
    }
    let mut cpus: Vec<String> = report
        .trips
        .iter()
        .map(|trip| format!("{} ({} threads)", trip.cpu, trip.cpu_threads))
        .collect();
    cpus.dedup();
    let _ = writeln!(text, "\nCPU baselines: {}.", cpus.join("; "));
    text
}

/// The smallest size from which `kernel` is faster than the CPU end to end
/// at every size of the sweep.
pub fn pays_off_from(report: &Report, kernel: &str) -> Option<String> {
    let mut rows: Vec<&Row> = report
        .results
        .iter()
        .filter(|row| row.kernel == kernel && row.vs_cpu_end_to_end.is_some())
        .collect();
    rows.sort_by(|a, b| a.size.side().total_cmp(&b.size.side()));
    let from = rows
        .iter()
        .rposition(|row| row.vs_cpu_end_to_end.is_some_and(|ratio| ratio < 1.0))
        .map_or(0, |last_loss| last_loss + 1);
    rows.get(from).map(|row| row.size.to_string())
}
