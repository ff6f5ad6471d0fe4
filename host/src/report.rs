//! The table `cargo run` prints.

use std::fmt::Write;

use crate::suite::Row;

/// One line per kernel: what ran, how fast, how correct.
pub fn table(rows: &[Row]) -> String {
    let header = [
        "kernel",
        "size",
        "median ms",
        "GFLOP/s",
        "GB/s",
        "rel. error",
        "ok",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            vec![
                row.kernel.to_string(),
                row.size.clone(),
                format!("{:.3}", row.median_ms),
                row.gflops().map_or("-".into(), |g| format!("{g:.1}")),
                format!("{:.1}", row.gbytes_per_s()),
                format!("{:.2e}", row.comparison.relative_error),
                if row.comparison.passed() {
                    "yes".into()
                } else {
                    "NO".into()
                },
            ]
        })
        .collect();
    aligned(&header, &cells, 2)
}

/// Columns padded to their widest cell: the first `text_columns` left-aligned,
/// the rest (numbers) right-aligned.
pub(crate) fn aligned(header: &[&str], rows: &[Vec<String>], text_columns: usize) -> String {
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
            if c < text_columns {
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
