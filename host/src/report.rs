//! The tables `cargo run` prints: the results, and the list of kernels.

use gpu_host::Gpu;
use std::fmt::Write;

use crate::bench::ceilings::Peaks;
use crate::error::Result;
use crate::families::{self, KernelInfo};
use crate::suite::{Copies, Row};

/// One line per kernel: its family, what the driver gave it on `gpu` (when
/// there is one), and its lesson.
pub fn kernels(kernels: &[KernelInfo], gpu: Option<&Gpu>) -> Result<String> {
    let mut header = vec!["family", "kernel", "launch bounds"];
    if gpu.is_some() {
        header.extend(["registers", "local B", "static shared B", "max threads"]);
    }
    header.push("lesson");
    let mut rows = Vec::new();
    for kernel in kernels {
        let bounds = match kernel.bounds.min_blocks {
            Some(blocks) => format!("{}, {blocks}", kernel.bounds.max_threads),
            None => kernel.bounds.max_threads.to_string(),
        };
        let mut row = vec![kernel.family.to_string(), kernel.name.to_string(), bounds];
        if let Some(gpu) = gpu {
            let resources = gpu.resources(&kernel.entries())?;
            row.extend(
                [
                    resources.registers,
                    resources.local_bytes,
                    resources.static_shared_bytes,
                    resources.max_threads_per_block,
                ]
                .map(|value| value.to_string()),
            );
        }
        row.push(kernel.lesson.to_string());
        rows.push(row);
    }
    let lesson = header.len() - 1;
    let mut table = aligned(&header, &rows, |column| column < 2 || column == lesson);
    for (family, picks) in families::pickers() {
        let _ = writeln!(
            table,
            "\n{family} by shape, as a library launches it (bench times it at every size): {picks}"
        );
    }
    Ok(table)
}

/// The first screen of the default run: one line per problem of a ladder
/// family, saying how many of its kernels are correct and, where `timed`
/// (on a GPU), which is fastest, its share of `peak` where the GPU's is
/// known, and its speed against its CUDA C++ twin; then the lessons'
/// kernels in one line.
pub fn summary(rows: &[Row], timed: bool, peak: Option<Peaks>) -> String {
    let mut header = vec!["family", "size", "correct"];
    if timed {
        header.extend(["fastest kernel", "median ms"]);
        if peak.is_some() {
            header.push("of the peak");
        }
        header.push("vs its C++ twin");
    }
    let benched: Vec<&Row> = rows.iter().filter(|row| row.benched).collect();
    let problems = benched.chunk_by(|a, b| a.problem == b.problem);
    let correct = |rows: &[&Row]| {
        let passed = rows.iter().filter(|row| row.passed()).count();
        format!("{passed} of {}", rows.len())
    };
    let cells: Vec<Vec<String>> = problems
        .map(|problem| {
            let mut cells = vec![
                problem[0].family.to_string(),
                problem[0].size.clone(),
                correct(problem),
            ];
            if timed {
                let fastest = problem
                    .iter()
                    .min_by(|a, b| a.median_ms.total_cmp(&b.median_ms))
                    .expect("a problem has a kernel");
                let (work, ms) = (fastest.work, fastest.median_ms);
                cells.extend([fastest.kernel.to_string(), format!("{ms:.3}")]);
                if let Some(peak) = peak {
                    let roof = peak.roof_for(fastest.bound);
                    cells.push(format!(
                        "{:.1}%",
                        100.0
                            * roof.fraction_rereading(
                                work.ops,
                                work.bytes,
                                peak.nearer(work.reread),
                                ms
                            )
                    ));
                }
                cells.push(match &fastest.twin {
                    Some(Ok(twin)) => format!("{:.2}×", twin.median_ms / ms),
                    _ => "-".to_string(),
                });
            }
            cells
        })
        .collect();
    let mut text = aligned(&header, &cells, |column| column < 2 || column == 3);
    let lessons: Vec<&Row> = rows.iter().filter(|row| !row.benched).collect();
    if !lessons.is_empty() {
        let mut families: Vec<&str> = lessons.iter().map(|row| row.family).collect();
        families.dedup();
        let _ = writeln!(
            text,
            "the lessons' kernels ({}): {} correct",
            families.join(", "),
            correct(&lessons)
        );
    }
    text
}

/// One line per kernel: what ran, how fast, how correct; and, where twins
/// ran, the CUDA C++ twin's time and the ratio of the two.
pub fn table(rows: &[Row]) -> String {
    let twins = rows.iter().any(|row| row.twin.is_some());
    let mut header = vec![
        "kernel",
        "size",
        "median ms",
        "GFLOP/s",
        "GB/s",
        "rel. error",
    ];
    if twins {
        header.extend(["C++ ms", "vs C++"]);
    }
    header.push("ok");
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut cells = vec![
                row.kernel.to_string(),
                row.size.clone(),
                format!("{:.3}", row.median_ms),
                row.gflops().map_or("-".into(), |g| format!("{g:.1}")),
                format!("{:.1}", row.gbytes_per_s()),
                format!("{:.2e}", row.comparison.relative_error),
            ];
            if twins {
                match &row.twin {
                    Some(Ok(twin)) => cells.extend([
                        format!("{:.3}", twin.median_ms),
                        format!("{:.2}×", twin.median_ms / row.median_ms),
                    ]),
                    _ => cells.extend(["-".to_string(), "-".to_string()]),
                }
            }
            cells.push(if row.passed() { "yes" } else { "NO" }.to_string());
            cells
        })
        .collect();
    let mut table = aligned(&header, &cells, |column| column < 2);
    if twins {
        table.push_str(
            "C++ ms: the kernel's CUDA C++ twin (NVRTC) on the same inputs · \
             vs C++: twin time / Rust time, above 1 the Rust kernel is faster\n",
        );
    }
    table
}

/// Columns padded to their widest cell: text columns left-aligned, the rest
/// (numbers) right-aligned.
pub(crate) fn aligned(
    header: &[&str],
    rows: &[Vec<String>],
    is_text: impl Fn(usize) -> bool,
) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let mut line = |values: &[&str]| {
        for (c, value) in values.iter().enumerate() {
            let pad = " ".repeat(widths[c] - value.chars().count());
            if is_text(c) {
                write!(out, "{value}{pad}  ")
            } else {
                write!(out, "{pad}{value}  ")
            }
            .expect("writing to a String cannot fail");
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    };
    line(header);
    for row in rows {
        line(&row.iter().map(String::as_str).collect::<Vec<_>>());
    }
    out
}

/// One line per kernel that the backend counted: the memory traffic of one
/// launch, per warp-level instruction, as `gpu_emulator::traffic` counts
/// it.
pub fn traffic(rows: &[Row]) -> String {
    let header = [
        "kernel",
        "size",
        "ld requests",
        "sectors/req",
        "st requests",
        "sectors/req",
        "efficiency",
        "shared req",
        "wavefronts/req",
        "conflicts/req",
        "atomic req",
        "queued/req",
        "global B/op",
    ];
    let per = |count: u64, requests: u64| {
        if requests == 0 {
            "-".to_string()
        } else {
            format!("{:.2}", count as f64 / requests as f64)
        }
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .filter_map(|row| {
            let traffic = row.traffic.as_ref()?;
            let (load, store) = (traffic.global_load, traffic.global_store);
            let shared_requests = traffic.shared_load.requests + traffic.shared_store.requests;
            let fetched = load.bytes_fetched() + store.bytes_fetched();
            let used = load.bytes_used + store.bytes_used;
            let atomics = [traffic.global_atomic, traffic.shared_atomic];
            let atomic_requests: u64 = atomics.iter().map(|atomic| atomic.requests).sum();
            let queued = atomics.iter().map(|a| a.updates - a.addresses).sum();
            Some(vec![
                row.kernel.to_string(),
                row.size.clone(),
                load.requests.to_string(),
                per(load.sectors, load.requests),
                store.requests.to_string(),
                per(store.sectors, store.requests),
                format!("{:.0}%", 100.0 * used as f64 / fetched.max(1) as f64),
                shared_requests.to_string(),
                per(
                    traffic.shared_load.wavefronts + traffic.shared_store.wavefronts,
                    shared_requests,
                ),
                per(
                    traffic.shared_load.bank_conflicts + traffic.shared_store.bank_conflicts,
                    shared_requests,
                ),
                atomic_requests.to_string(),
                per(queued, atomic_requests),
                if row.work.ops > 0.0 {
                    format!("{:.3}", fetched as f64 / row.work.ops)
                } else {
                    "-".to_string()
                },
            ])
        })
        .collect();
    let mut table = aligned(&header, &cells, |column| column < 2);
    table.push_str(
        "per warp-level instruction (a call site's k-th access between barriers) · sectors: \
         32 bytes · efficiency: bytes the lanes used / bytes in the sectors fetched · \
         wavefronts: passes through the 32 shared-memory banks; conflicts: those beyond the \
         fewest · atomic req: atomic instructions, global and shared; queued: their lanes \
         that wait behind another lane's update of the same address · global B/op: bytes \
         fetched per operation\n",
    );
    table
}

/// The columns of a table of whole trips, here and in the bench.
pub const WHOLE_TRIP: [&str; 9] = [
    "kernel",
    "size",
    "to GPU ms",
    "kernel ms",
    "from GPU ms",
    "end to end ms",
    "CPU ms",
    "vs CPU: kernel",
    "end to end",
];

/// One line per kernel: the trip to the GPU and back against the CPU
/// baseline on the same inputs, answering "how much faster than the CPU,
/// counting the copies?"; without a GPU, the CPU baseline alone.
pub fn whole(rows: &[Row]) -> String {
    let mut cpus: Vec<&str> = rows.iter().map(|row| row.whole.cpu_name).collect();
    cpus.dedup();
    let cpu_note = format!(
        "CPU: {} on {} threads, median of up to 5 runs, checked against the reference",
        cpus.join("; "),
        rayon::current_num_threads()
    );
    if rows.iter().all(|row| row.end_to_end_ms().is_none()) {
        let cells: Vec<Vec<String>> = rows
            .iter()
            .map(|row| {
                vec![
                    row.kernel.to_string(),
                    row.size.clone(),
                    format!("{:.3}", row.whole.cpu.median_ms),
                ]
            })
            .collect();
        let mut table = aligned(&["kernel", "size", "CPU ms"], &cells, |column| column < 2);
        let _ = writeln!(
            table,
            "{cpu_note} · no GPU: nothing was copied and no kernel ran on one, so there is no \
             GPU time to set against the CPU's"
        );
        return table;
    }
    let header = WHOLE_TRIP;
    let copies = |copies: Option<Copies>| {
        copies.map_or("-".to_string(), |copies| {
            format!("{:.3} ({:.3})", copies.pinned_ms, copies.pageable_ms)
        })
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let cpu = row.whole.cpu.median_ms;
            let end_to_end = row.end_to_end_ms();
            vec![
                row.kernel.to_string(),
                row.size.clone(),
                copies(row.whole.to_gpu),
                format!("{:.3}", row.median_ms),
                copies(row.whole.from_gpu),
                end_to_end.map_or("-".to_string(), |ms| format!("{ms:.3}")),
                format!("{cpu:.3}"),
                format!("{:.1}×", cpu / row.median_ms),
                end_to_end.map_or("-".to_string(), |ms| format!("{:.1}×", cpu / ms)),
            ]
        })
        .collect();
    let mut table = aligned(&header, &cells, |column| column < 2);
    let _ = writeln!(
        table,
        "copies from pinned host memory (pageable in brackets), timed with CUDA events · end to \
         end: copy in + kernel + copy out, pinned · {cpu_note} · vs CPU: CPU time / GPU time"
    );
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_list_says_how_a_family_that_picks_by_shape_picks() {
        let list = kernels(&families::kernels(), None).unwrap();
        let picks = list
            .lines()
            .find(|line| line.starts_with("matmul by shape"))
            .unwrap_or_else(|| panic!("{list}"));
        for kernel in [
            "matmul_rasterised",
            "matmul_mid_tiles",
            "matmul_small_tiles",
            "matmul_split_k",
        ] {
            assert!(picks.contains(kernel), "{picks}");
        }
        assert_eq!(
            list.lines()
                .filter(|line| line.contains(" by shape"))
                .count(),
            1,
            "{list}"
        );
    }

    #[test]
    fn the_kernel_list_aligns_names_and_lessons_left_and_launch_bounds_right() {
        let list = kernels(&families::kernels(), None).unwrap();
        let mut lines = list.lines();
        let header = lines.next().unwrap();
        let kernel = header.find("kernel").unwrap();
        let bounds_end = header.find("launch bounds").unwrap() + "launch bounds".len();
        let lesson = header.find("lesson").unwrap();
        // The columns before the lesson are ASCII: byte offsets are columns.
        for row in lines.take_while(|line| !line.is_empty()) {
            let byte = |at: usize| row.as_bytes()[at];
            assert_ne!(byte(0), b' ', "{row}");
            assert!(byte(kernel - 1) == b' ' && byte(kernel) != b' ', "{row}");
            assert!(
                byte(bounds_end - 1) != b' ' && byte(bounds_end) == b' ',
                "{row}"
            );
            assert!(byte(lesson - 1) == b' ' && byte(lesson) != b' ', "{row}");
        }
    }
}
