//! The tables `cargo run` prints: the results, and the list of kernels.

use std::fmt::Write;

use crate::device::Gpu;
use crate::error::Result;
use crate::families::KernelInfo;
use crate::suite::Row;

/// One line per kernel: its family, what the driver gave it on `gpu` (when
/// there is one), and its lesson.
pub fn kernels(kernels: &[KernelInfo], gpu: Option<&Gpu>) -> Result<String> {
    let mut header = vec!["family", "kernel"];
    if gpu.is_some() {
        header.extend(["registers", "local B", "static shared B", "max threads"]);
    }
    header.push("lesson");
    let mut rows = Vec::new();
    for kernel in kernels {
        let mut row = vec![kernel.family.to_string(), kernel.name.to_string()];
        if let Some(gpu) = gpu {
            let resources = gpu.resources(kernel.name)?;
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
    Ok(aligned(&header, &rows, |column| {
        column < 2 || column == lesson
    }))
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
