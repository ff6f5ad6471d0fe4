//! The table `cargo run` prints.

use std::fmt::Write;

use crate::suite::Row;

/// One line per kernel: what ran, how fast, how correct.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let header = [
        "kernel",
        "size",
        "median ms",
        "GFLOP/s",
        "GB/s",
        "rel. error",
        "ok",
    ];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|row| {
            [
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
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |out: &mut String, values: &[&str]| {
        for (c, value) in values.iter().enumerate() {
            let pad = widths[c] - value.chars().count();
            // Text left-aligned, numbers right-aligned.
            if c < 2 {
                write!(out, "{value}{}  ", " ".repeat(pad))
            } else {
                write!(out, "{}{value}  ", " ".repeat(pad))
            }
            .expect("writing to a String cannot fail");
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
    };
    line(&mut out, &header);
    for row in &cells {
        line(&mut out, &row.each_ref().map(String::as_str));
    }
    out
}
