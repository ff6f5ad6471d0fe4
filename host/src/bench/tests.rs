//! The bench's report on made-up numbers: its rows, tables, JSON and
//! plots, checked without a GPU.

use approx::assert_relative_eq;

use super::json::{
    Bound, Ceilings, ComputeSource, Copies, Device, FamilySummary, Level, Op, Report, Role,
    Roofline, Row, Runs, Size, Trip,
};
use super::rows::{Measurement, rows};
use super::{markdown, plot, table};
use crate::families::blur::BlurShape;
use crate::families::gemv::GemvShape;
use crate::families::matmul::{MatmulShape, SGEMM};
use crate::family::{DEVICE_COPY, Source, Work};

/// Made-up numbers shaped like an H100's, not a measurement: enough to
/// exercise the report, the table and every plot without a GPU.
fn sample_report() -> Report {
    let ceilings = Ceilings {
        copy_gbytes_per_s: 2_950.0,
        copy_bytes: 1 << 30,
        sgemm_gflops: Some(51_000.0),
        sgemm_n: Some(8192),
        tensor_gflops: Some(740_000.0),
        tensor_n: Some(8192),
        theoretical_gbytes_per_s: Some(3_352.32),
        theoretical_fp32_gflops: Some(66_908.16),
        l2_gbytes_per_s: Some(11_500.0),
        l2_set_bytes: Some(4 << 20),
        shared_gbytes_per_s: Some(29_500.0),
        theoretical_shared_gbytes_per_s: Some(33_454.08),
        reads_gbytes_per_s: Some(3_150.0),
        reads_set_bytes: Some(1 << 30),
        host_link_gbytes_per_s: Some(54.0),
        peer_gbytes_per_s: Some(390.0),
        peer_device: Some(1),
    };
    let roofline = Roofline::from_ceilings(&ceilings);
    let mut measured = Vec::new();
    let families = ["matmul", "gemv", "blur"];
    let mut kernels: Vec<&str> = Vec::new();
    let mut push = |(family, kernel, role, baseline), size: &Size, work: Work, rate: f64| {
        // `rate` is Gop/s for matmul, GB/s otherwise.
        let per_ms = if family == "matmul" {
            work.ops
        } else {
            work.bytes
        };
        let place = families.iter().position(|&f| f == family).unwrap();
        if !kernels.contains(&kernel) {
            kernels.push(kernel);
        }
        let index = kernels.iter().position(|&k| k == kernel).unwrap();
        measured.push(Measurement {
            family,
            bound: if family == "matmul" {
                Bound::Compute
            } else {
                Bound::Memory
            },
            order: (place, role, index),
            kernel,
            size: size.clone(),
            median_ms: per_ms / rate / 1e6,
            // Twins 5% slower than their kernels, made up like the rest.
            twin_ms: (role == Role::Kernel).then(|| 1.05 * per_ms / rate / 1e6),
            work,
            baseline,
        });
    };
    let saturate = |peak: f64, n: f64, half: f64| peak * n / (n + half);
    for n in [512, 1024, 2048, 4096, 8192] {
        let shape = MatmulShape::new(n, n, n);
        let size = Size::of(&shape);
        let (flops, bytes) = (2.0 * (n as f64).powi(3), 12.0 * (n * n) as f64);
        let x = n as f64;
        for (kernel, role, peak, baseline) in [
            ("matmul_naive", Role::Kernel, 4_800.0, Some(SGEMM)),
            ("matmul_tiled_16", Role::Kernel, 8_100.0, Some(SGEMM)),
            ("matmul_tiled_32", Role::Kernel, 8_400.0, Some(SGEMM)),
            (SGEMM, Role::Baseline, 50_000.0, None),
        ] {
            let rate = saturate(peak, x, 600.0);
            let work = Work::new(Op::Flop, flops, bytes, 0.0);
            push(("matmul", kernel, role, baseline), &size, work, rate);
        }
    }
    for n in [1024, 2048, 4096, 8192, 16384] {
        let shape = GemvShape::new(n, n);
        let size = Size::of(&shape);
        let flops = 2.0 * (n * n) as f64 + 3.0 * n as f64;
        let bytes = |element: usize| (element * (n * n + 3 * n)) as f64;
        let x = n as f64;
        for (kernel, role, peak, bytes, baseline) in [
            (
                "gemv_row_major_f32",
                Role::Kernel,
                740.0,
                bytes(4),
                Some("cublas_sgemv_row_major"),
            ),
            (
                "gemv_row_major_f64",
                Role::Kernel,
                1_060.0,
                bytes(8),
                Some("cublas_dgemv_row_major"),
            ),
            (
                "gemv_col_major_f32",
                Role::Kernel,
                870.0,
                bytes(4),
                Some("cublas_sgemv_col_major"),
            ),
            (
                "gemv_col_major_f64",
                Role::Kernel,
                960.0,
                bytes(8),
                Some("cublas_dgemv_col_major"),
            ),
            (
                "gemv_col_major_shared_x_f32",
                Role::Kernel,
                490.0,
                bytes(4),
                Some("cublas_sgemv_col_major"),
            ),
            (
                "gemv_col_major_shared_x_f64",
                Role::Kernel,
                560.0,
                bytes(8),
                Some("cublas_dgemv_col_major"),
            ),
            (
                "cublas_sgemv_row_major",
                Role::Baseline,
                2_800.0,
                bytes(4),
                None,
            ),
            (
                "cublas_dgemv_row_major",
                Role::Baseline,
                2_850.0,
                bytes(8),
                None,
            ),
            (
                "cublas_sgemv_col_major",
                Role::Baseline,
                2_700.0,
                bytes(4),
                None,
            ),
            (
                "cublas_dgemv_col_major",
                Role::Baseline,
                2_750.0,
                bytes(8),
                None,
            ),
        ] {
            let rate = saturate(peak, x, 2_000.0);
            let work = Work::new(Op::Flop, flops, bytes, 0.0);
            push(("gemv", kernel, role, baseline), &size, work, rate);
        }
    }
    // The size sweep at 3 channels and r = 3, then the radius sweep at
    // the largest size, at 3 channels and at 1.
    let images = [1024, 2048, 4096, 8192]
        .map(|n| (n, 3, 3))
        .into_iter()
        .chain([(8192, 3, 1), (8192, 3, 8), (8192, 3, 32)])
        .chain([1, 3, 8, 32].map(|radius| (8192, 1, radius)));
    for (n, channels, radius) in images {
        let image = BlurShape::new(n, n, channels, radius);
        let size = Size::of(&image);
        let ops = f64::from((2 * radius + 1).pow(2)) * (channels * n * n) as f64;
        for (kernel, role, op, ops, peak, baseline) in [
            (
                "blur_naive",
                Role::Kernel,
                Op::IntAdd,
                ops,
                48.0,
                Some(DEVICE_COPY),
            ),
            (
                "blur_tiled",
                Role::Kernel,
                Op::IntAdd,
                ops,
                45.5,
                Some(DEVICE_COPY),
            ),
            (DEVICE_COPY, Role::Baseline, Op::None, 0.0, 2_900.0, None),
        ] {
            let rate = saturate(peak, n as f64, 1_000.0);
            let work = Work::new(op, ops, 2.0 * (channels * n * n) as f64, 0.0);
            push(("blur", kernel, role, baseline), &size, work, rate);
        }
    }
    let summary = |name: &str, bound, square_axis: &str| FamilySummary {
        name: name.to_string(),
        bound,
        square_axis: square_axis.to_string(),
    };
    // Copies at 55 GB/s pinned and 8 pageable; a CPU that does 550
    // GFLOP/s of matmul, moves 108 GB/s in gemv and 9 G window adds a
    // second in the blur.
    let mut trips: Vec<Trip> = Vec::new();
    for m in measured.iter().filter(|m| m.order.1 == Role::Kernel) {
        // One problem per family, size and bytes: gemv's f32 and f64.
        let bytes = m.work.bytes - m.work.output_bytes;
        if let Some(trip) = trips
            .iter_mut()
            .find(|t| t.family == m.family && t.size == m.size && t.to_gpu.bytes == bytes)
        {
            trip.kernels.push(m.kernel.to_string());
            continue;
        }
        let copies = |bytes: f64| Copies {
            bytes,
            pinned_ms: bytes / 55e6,
            pageable_ms: bytes / 8e6,
        };
        let cpu_ms = match m.family {
            "matmul" => m.work.ops / 550e6,
            "gemv" => m.work.bytes / 108e6,
            _ => m.work.ops / 9e6,
        };
        trips.push(Trip {
            family: m.family.to_string(),
            kernels: vec![m.kernel.to_string()],
            size: m.size.clone(),
            to_gpu: copies(bytes),
            from_gpu: copies(m.work.output_bytes),
            cpu: "sample".to_string(),
            cpu_threads: 16,
            cpu_ms,
        });
    }
    Report {
        schema_version: 2,
        ceilings_from: None,
        device: Device {
            name: "NVIDIA H100 80GB HBM3 (sample numbers)".to_string(),
            compute_capability: Some("9.0".to_string()),
            multiprocessors: Some(132),
            l2_bytes: Some(50 << 20),
            memory_bytes: 80 << 30,
        },
        ceilings,
        roofline,
        runs: Runs {
            warmup: 3,
            timed: 20,
            rotation_bytes: Some(200 << 20),
            seed: 21,
        },
        families: vec![
            summary("matmul", Bound::Compute, "n (A, B and C are n×n)"),
            summary("gemv", Bound::Memory, "n (A is n×n)"),
            summary("blur", Bound::Memory, "n (the image is n×n pixels)"),
        ],
        kernels: Vec::new(),
        results: rows(&measured, &roofline, &trips, Some(50 << 20)),
        trips,
    }
}

#[test]
fn rows_carry_their_baseline_and_come_grouped_in_teaching_order() {
    let report = sample_report();
    let kernels: Vec<&str> = report.results.iter().map(|r| r.kernel.as_str()).collect();
    assert_eq!(
        &kernels[..6],
        ["matmul_naive"; 5]
            .iter()
            .chain(["matmul_tiled_16"].iter())
            .copied()
            .collect::<Vec<_>>()
    );
    let naive = &report.results[4];
    let sgemm = report
        .results
        .iter()
        .find(|r| r.kernel == SGEMM && r.size == naive.size)
        .unwrap();
    assert_eq!(naive.baseline.as_deref(), Some(SGEMM));
    assert_relative_eq!(
        naive.ratio_to_baseline.unwrap(),
        sgemm.median_ms / naive.median_ms
    );
    assert_eq!(sgemm.ratio_to_baseline, None);
    assert_relative_eq!(naive.vs_cuda_cpp.unwrap(), 1.05);
    assert_eq!((sgemm.twin_median_ms, sgemm.vs_cuda_cpp), (None, None));
    let copy = report.results.last().unwrap();
    assert_eq!(
        (copy.kernel.as_str(), copy.intensity, copy.gops_per_s),
        (DEVICE_COPY, None, None)
    );
    assert!(table::results(&report.results).lines().count() > report.results.len());
}

/// The cache lesson's kernel at `set_bytes`, reading 1 GiB in `ms`, set
/// against the sample's ceilings.
fn working_set_row(set_bytes: f64, ms: f64) -> Row {
    let report = sample_report();
    let reads = f64::from(1 << 30);
    let work = Work::new(Op::Flop, reads / 4.0, set_bytes.min(reads), 1e6)
        .rereading(reads, Source::WorkingSet(set_bytes));
    let measured = Measurement {
        family: "caches",
        bound: Bound::Memory,
        order: (0, Role::Kernel, 0),
        kernel: "read_working_set",
        size: report.results[0].size.clone(),
        median_ms: ms,
        twin_ms: None,
        work,
        baseline: None,
    };
    rows(&[measured], &report.roofline, &[], report.device.l2_bytes).remove(0)
}

#[test]
fn the_markdown_names_every_row_past_its_roofline() {
    let reads = f64::from(1 << 30);
    let mut within = working_set_row(f64::from(64 << 20), reads / 5_000.0 / 1e6);
    assert!(
        markdown::above_the_roofline(std::slice::from_ref(&within))
            .ends_with("misjudge it: none.\n"),
        "a row at 43% of its roofline"
    );
    within.roofline_fraction = markdown::ROOFLINE_SLACK;
    assert!(markdown::above_the_roofline(&[within]).ends_with("misjudge it: none.\n"));
    // 64 MiB held to the L2's 11.5 TB/s, read at 12.5.
    let past = working_set_row(f64::from(64 << 20), reads / 12_500.0 / 1e6);
    assert_eq!(
        markdown::above_the_roofline(&[past]),
        "\nPast 105% of its roofline, where the roofline would misjudge it: \
         `read_working_set` at 512×512×512 (108.7%).\n"
    );
}

#[test]
fn the_ceilings_of_reads_again_are_named_with_the_copys() {
    let report = sample_report();
    let levels = "reads again from the L2 11.50 TB/s and from shared memory 29.50 TB/s";
    let line = markdown::measured_on(&report);
    assert!(
        line.starts_with("NVIDIA H100 80GB HBM3 (sample numbers), seed 21, ceilings measured")
            && line.contains(&format!(
                "a device copy 2.95 TB/s, reads alone 3.15 TB/s, {levels}, cuBLAS SGEMM"
            )),
        "{line}"
    );
    let rendered = markdown::render(&report);
    assert!(
        rendered.contains(
            ", reads alone **3.15 TB/s**; reads again from the L2 reached **11.50 TB/s** and \
             from shared memory **29.50 TB/s** (theoretical 33.45)"
        ),
        "{rendered}"
    );
}

#[test]
fn the_console_names_every_ceiling_measured() {
    let report = sample_report();
    let printed = table::ceilings(&report.ceilings, &report.roofline);
    for line in [
        "memory   2.95 TB/s measured (1024 MiB device-to-device copy",
        "reads    3.15 TB/s measured (the cache lesson's kernel, a 1024 MiB set)",
        "L2       11.50 TB/s measured (the cache lesson's kernel, a 4 MiB set)",
        "shared   29.50 TB/s measured (the bank lesson's kernel, no conflicts)",
        "compute  51.00 TFLOP/s measured (cuBLAS SGEMM 8192³",
    ] {
        assert!(printed.contains(line), "{line:?} not in\n{printed}");
    }
    let unmeasured = Ceilings {
        reads_gbytes_per_s: None,
        ..report.ceilings
    };
    assert!(!table::ceilings(&unmeasured, &report.roofline).contains("reads    "));
}

#[test]
fn rereads_are_held_to_the_level_that_holds_their_set() {
    let reads = f64::from(1 << 30);
    // 64 MiB, past the sample's 50 MiB L2 and within twice it: the L2's
    // 11.5 TB/s, where the DRAM's would have made 5 TB/s 170%.
    let ms = reads / 5_000.0 / 1e6;
    let row = working_set_row(f64::from(64 << 20), ms);
    assert_eq!(row.reread_level, Some(Level::L2));
    assert_relative_eq!(row.reread_gbytes_per_s.unwrap(), 5_000.0);
    assert_relative_eq!(row.roofline_fraction, 5_000.0 / 11_500.0);
    // 4 MiB, where the cache lesson's L2 plateau starts: the L2's.
    let row = working_set_row(f64::from(4 << 20), reads / 10_000.0 / 1e6);
    assert_eq!(row.reread_level, Some(Level::L2));
    // 64 KiB: shared memory's 29.5 TB/s, which L1 shares.
    let row = working_set_row(f64::from(64 << 10), reads / 26_000.0 / 1e6);
    assert_eq!(row.reread_level, Some(Level::OnChip));
    assert_relative_eq!(row.roofline_fraction, 26_000.0 / 29_500.0);
    // 256 MiB: the DRAM, the set itself being a quarter of the reads,
    // held to reads alone (3.15 TB/s), not to the copy's mix.
    let row = working_set_row(f64::from(256 << 20), reads / 2_900.0 / 1e6);
    assert_eq!(row.reread_level, Some(Level::Dram));
    assert_relative_eq!(row.roofline_fraction, 2_900.0 / 3_150.0);
    // Without the rereads' ceiling, the DRAM's bytes alone bound.
    let mut roofline = sample_report().roofline;
    roofline.l2_gbytes_per_s = None;
    let measured = Measurement {
        family: "caches",
        bound: Bound::Memory,
        order: (0, Role::Kernel, 0),
        kernel: "read_working_set",
        size: row.size.clone(),
        median_ms: ms,
        twin_ms: None,
        work: Work::new(Op::Flop, reads / 4.0, f64::from(64 << 20), 0.0)
            .rereading(reads, Source::WorkingSet(f64::from(64 << 20))),
        baseline: None,
    };
    let row = rows(&[measured], &roofline, &[], Some(50 << 20)).remove(0);
    assert_relative_eq!(
        row.roofline_fraction,
        f64::from(64 << 20) / 3_150.0 / 1e6 / ms
    );
}

#[test]
fn the_markdown_shows_each_family_at_its_largest_size_then_every_row() {
    let report = sample_report();
    let text = markdown::render(&report);
    let (largest, rest) = text.split_once("\nThe whole trip").unwrap();
    let (trip, every) = rest.split_once("<details>").unwrap();
    let rows = |text: &str| text.lines().filter(|line| line.starts_with("| `")).count();
    // Four matmul rows at 8192³, six gemv kernels and four cuBLAS gemvs
    // at 16384², two blurs and a copy at 8192² at each of the radius
    // sweep's eight radii and channel counts.
    assert_eq!(rows(largest), 4 + 10 + 3 * 8);
    assert_eq!(rows(every), report.results.len());
    // The kernels, each beside its trip, the blurs at each radius and
    // channel count; baselines have none.
    assert_eq!(rows(trip), 3 + 6 + 2 * 8, "{trip}");
    assert!(trip.contains("| never, in this sweep |"), "{trip}");
    assert!(
        largest.contains("| `matmul_naive` | 8192×8192×8192 |"),
        "{largest}"
    );
    assert!(largest.contains("× `cublas_sgemm` |"), "{largest}");
    // The fastest kernel at each size: one line each (gemv's f32 and
    // f64 share theirs), the blurs' with their share of the device copy.
    let (_, fastest) = largest
        .split_once("The fastest kernel at each size")
        .unwrap();
    let lines = fastest
        .lines()
        .filter(|line| line.starts_with("| ") && line.contains('`'));
    assert_eq!(lines.clone().count(), 1 + 1 + 8, "{fastest:?}");
    assert_eq!(
        lines.filter(|line| line.ends_with("× |")).count(),
        8,
        "{fastest}"
    );
    assert!(text.contains("random inputs from seed 21"));
    assert!(text.contains("**2.95 TB/s** (theoretical 3.35)"), "{text}");
}

#[test]
fn the_picked_kernel_is_shown_at_every_size_timed_or_not() {
    let mut report = sample_report();
    let text = markdown::picked(&report);
    // The sample times none of the kernels the matmul picks.
    let matmul = |text: &str| {
        text.lines()
            .filter(|line| line.starts_with("| matmul |"))
            .count()
    };
    assert_eq!(matmul(&text), 5, "{text}");
    assert!(
        text.contains(
            "| matmul | 512×512×512 | `matmul_split_k` | not timed in this run |  | \
             `matmul_tiled_32` |"
        ),
        "{text}"
    );
    // A GPU without clusters gets the small tiles there, and a run that
    // did not record its GPU's capability is shown no pick.
    let mut older = sample_report();
    older.device.compute_capability = Some("8.0".to_string());
    assert!(
        markdown::picked(&older).contains("| matmul | 512×512×512 | `matmul_small_tiles` |"),
        "{}",
        markdown::picked(&older)
    );
    older.device.compute_capability = None;
    assert_eq!(markdown::picked(&older), "");
    for row in &mut report.results {
        if row.kernel == "matmul_tiled_32" {
            row.kernel = "matmul_rasterised".to_string();
        }
    }
    let text = markdown::picked(&report);
    let at_8192 = text
        .lines()
        .find(|line| line.starts_with("| matmul | 8192×8192×8192 |"))
        .unwrap();
    assert!(
        at_8192.starts_with("| matmul | 8192×8192×8192 | `matmul_rasterised` | 1")
            && at_8192.contains("× `cublas_sgemm` | `matmul_rasterised` |"),
        "{at_8192}"
    );
    assert!(markdown::render(&report).contains(&text));
    let printed = table::picked(&report);
    assert_eq!(
        printed
            .lines()
            .filter(|line| line.starts_with("matmul "))
            .count(),
        5,
        "{printed}"
    );
    report.device.multiprocessors = None;
    assert_eq!(markdown::picked(&report), "");
    assert_eq!(table::picked(&report), "");
}

#[test]
fn every_kernel_meets_its_twin_at_every_size_in_a_row_of_its_own() {
    let mut report = sample_report();
    let twinned = report
        .results
        .iter()
        .filter(|row| row.vs_cuda_cpp.is_some())
        .count();
    let text = markdown::twins_by_size(&report);
    assert_eq!(
        text.lines().filter(|line| line.starts_with("| `")).count(),
        twinned
    );
    assert!(text.contains("| `matmul_naive` | 512×512×512 |"), "{text}");
    assert!(
        !text.contains("**"),
        "the sample's twins are all slower: {text}"
    );
    let row = &mut report.results[0];
    row.vs_cuda_cpp = Some(0.9649);
    assert!(markdown::twins_by_size(&report).contains("| **0.96×** |"));
    report.results[0].vs_cuda_cpp = Some(0.9651);
    assert!(markdown::twins_by_size(&report).contains("| 0.97× |"));
}

#[test]
fn matmul_wins_back_its_copies_and_gemv_does_not() {
    let report = sample_report();
    // The sample's matmul beats the CPU end to end from the smallest
    // size; its gemv never does, since copying A takes longer than the
    // CPU takes to read it.
    assert_eq!(
        markdown::pays_off_from(&report, "matmul_tiled_32").as_deref(),
        Some("512×512×512")
    );
    assert_eq!(markdown::pays_off_from(&report, "gemv_col_major_f32"), None);
    let gemv = report
        .results
        .iter()
        .find(|row| row.kernel == "gemv_col_major_f32")
        .unwrap();
    assert!(gemv.vs_cpu.unwrap() > 1.0 && gemv.vs_cpu_end_to_end.unwrap() < 1.0);
    let row = |kernel| {
        report
            .results
            .iter()
            .rfind(|row| row.kernel == kernel)
            .unwrap()
    };
    // f64 moves twice the bytes of f32: their trips are their own.
    assert!(
        row("gemv_col_major_f64").end_to_end_ms.unwrap()
            > 1.5 * row("gemv_col_major_f32").end_to_end_ms.unwrap()
    );
    let printed = table::trips(&report);
    assert!(printed.contains("gemv_col_major_f32 pays off from never, in this sweep"));
    assert!(printed.contains("matmul_tiled_32 pays off from 512×512×512"));
}

#[test]
fn plots_survive_one_size_and_unknown_ceilings() {
    let mut report = sample_report();
    report
        .results
        .retain(|row| row.role == Role::Kernel && row.size.side() == 1024.0);
    report.ceilings.sgemm_gflops = None;
    assert_eq!(
        Roofline::from_ceilings(&report.ceilings).compute_source,
        Some(ComputeSource::TheoreticalFp32)
    );
    report.ceilings.theoretical_gbytes_per_s = None;
    report.ceilings.theoretical_fp32_gflops = None;
    report.roofline.compute_gops_per_s = None;
    report.roofline.compute_source = None;
    for (name, svg) in plot::all(&report).unwrap() {
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{name}");
    }
}

/// Renders the plots of the sample report and writes them to the
/// temporary directory, for a look without a GPU.
#[test]
fn the_sample_report_renders_every_plot() {
    let report = sample_report();
    let plots = plot::all(&report).unwrap();
    let names: Vec<&str> = plots.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "roofline.svg",
            "matmul.svg",
            "gemv.svg",
            "blur.svg",
            "blur-radius.svg",
            "vs-cpu.svg"
        ]
    );
    for (name, svg) in &plots {
        assert!(
            svg.starts_with("<svg") && svg.ends_with("</svg>\n"),
            "{name}"
        );
        assert_eq!(
            svg.matches("<g").count(),
            svg.matches("</g>").count(),
            "{name}"
        );
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{name}");
        if !["roofline.svg", "vs-cpu.svg", "blur-radius.svg"].contains(&name.as_str()) {
            assert!(svg.contains("(CUDA C++)"), "{name} draws no twin");
        }
    }
    let (_, radius) = &plots[4];
    for kernel in ["blur_naive", "blur_tiled", "device_copy"] {
        for channels in ["3 channels", "1 channel"] {
            let entry = format!("{kernel} · {channels}");
            assert!(radius.contains(&entry), "the radius plot lacks {entry}");
        }
    }
}

#[test]
fn twins_beside_sets_each_run_s_ratios_in_a_column_of_its_own() {
    let first = sample_report();
    let mut second = sample_report();
    for row in second
        .results
        .iter_mut()
        .filter(|row| row.kernel == "matmul_naive")
    {
        row.vs_cuda_cpp = Some(0.5);
    }
    let runs = [("one".to_string(), &first), ("two".to_string(), &second)];
    let text = markdown::twins_beside(&runs, &["matmul_naive", "no_such_kernel"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "| kernel | one | two |", "{text}");
    assert_eq!(lines[1], "| --- | ---: | ---: |", "{text}");
    assert!(lines[2].starts_with("| `matmul_naive` | "), "{text}");
    assert!(lines[2].ends_with(" | 0.50× |"), "{text}");
    assert!(!lines[2].contains("| 0.50× | 0.50× |"), "{text}");
    assert_eq!(
        lines[3], "| `no_such_kernel` | not run | not run |",
        "{text}"
    );
}

#[test]
fn an_earlier_run_lends_its_ceilings_only_to_a_gpu_like_its_own_and_only_those_it_has() {
    use super::ceilings::Needed;
    use super::earlier::ceilings;
    use crate::error::Error;
    let path = std::path::Path::new("earlier.json");
    let every = Needed {
        levels: true,
        sgemm: true,
        tensor: true,
    };
    let earlier = sample_report();
    let lent = ceilings(&earlier, path, &earlier.device, every).unwrap();
    assert_eq!(lent.copy_gbytes_per_s, earlier.ceilings.copy_gbytes_per_s);
    assert_eq!(lent.l2_gbytes_per_s, earlier.ceilings.l2_gbytes_per_s);

    let mut other = earlier.device.clone();
    other.multiprocessors = Some(114);
    let error = ceilings(&earlier, path, &other, every).unwrap_err();
    assert!(
        matches!(error, Error::CeilingsElsewhere { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("this GPU is"), "{error}");
    assert!(error.to_string().contains("114 SMs"), "{error}");

    let mut without = sample_report();
    without.ceilings.l2_gbytes_per_s = None;
    without.ceilings.tensor_gflops = None;
    let missing = |needed| ceilings(&without, path, &without.device, needed).unwrap_err();
    assert!(
        missing(every)
            .to_string()
            .contains("the L2's read bandwidth")
    );
    let no_levels = Needed {
        levels: false,
        ..every
    };
    assert!(missing(no_levels).to_string().contains("bf16"));
    let neither = Needed {
        tensor: false,
        ..no_levels
    };
    assert!(ceilings(&without, path, &without.device, neither).is_ok());
}

#[test]
fn a_run_that_took_its_ceilings_says_so_where_its_figures_are_shown() {
    let mut report = sample_report();
    assert!(markdown::measured_on(&report).contains("ceilings measured in the same run"));
    report.ceilings_from = Some("docs/results/h200/bench.json".to_string());
    let caption = markdown::measured_on(&report);
    assert!(
        caption.contains("ceilings from an earlier run (docs/results/h200/bench.json)"),
        "{caption}"
    );
    assert!(!caption.contains("same run"), "{caption}");
}
