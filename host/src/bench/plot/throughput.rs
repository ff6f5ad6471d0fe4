//! `FAMILY.svg`: one family's throughput against size, a line per kernel,
//! its CUDA C++ twin and its baseline, under the family's ceilings.

use plotters::prelude::*;

use crate::bench::json::{Bound, FamilySummary, Report, Role, Row};
use crate::error::Result;

use super::canvas::{
    CEILING, Entry, MarkerStyle, Stroke, decades, draw, draw_line, draw_marker, log_chart, padded,
    rate,
};
use super::series::{colours, marker_style, series};

/// Throughput against size for one family.
pub fn throughput(report: &Report, family: &FamilySummary) -> Result<String> {
    let compute = family.bound != Bound::Memory;
    let (metric, unit): (fn(&Row) -> Option<f64>, _) = if compute {
        (|row| row.gops_per_s, "GFLOP/s")
    } else {
        (|row| Some(row.gbytes_per_s), "GB/s (fewest bytes moved)")
    };
    let ceilings = &report.ceilings;
    let (measured, theoretical, ceiling_name, ceiling_unit) = match family.bound {
        Bound::Compute => (
            ceilings.sgemm_gflops,
            ceilings.theoretical_fp32_gflops,
            "SGEMM",
            "FLOP/s",
        ),
        Bound::Tensor => (ceilings.tensor_gflops, None, "bf16 gemm", "FLOP/s"),
        Bound::Memory => (
            Some(ceilings.copy_gbytes_per_s),
            ceilings.theoretical_gbytes_per_s,
            "copy",
            "B/s",
        ),
    };
    // Each kernel's line, and its CUDA C++ twin's (`true`) where it ran:
    // the same work in the twin's time.
    let mut lines: Vec<Line<'_>> = Vec::new();
    for rows in series(report, Some(&family.name)) {
        for twin in [false, true] {
            let mut points: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|row| {
                    let scale = if twin {
                        row.median_ms / row.twin_median_ms?
                    } else {
                        1.0
                    };
                    Some((row.size.side(), metric(row)? * scale))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if !points.is_empty() {
                lines.push((rows[0], twin, points));
            }
        }
    }
    let mut sizes: Vec<(f64, String)> = Vec::new();
    for row in report
        .results
        .iter()
        .filter(|row| row.family == family.name)
    {
        if !sizes.iter().any(|(side, _)| *side == row.size.side()) {
            sizes.push((row.size.side(), row.size.short().to_string()));
        }
    }
    sizes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let square = sizes.iter().all(|(_, short)| !short.contains('×'));
    let x_label = if square {
        family.square_axis.as_str()
    } else {
        "size (at the side of the square or cube of equal size)"
    };
    let x = padded(sizes.iter().map(|s| s.0));
    let values = lines.iter().flat_map(|(_, _, p)| p.iter().map(|p| p.1));
    let y = decades(values.chain(measured).chain(theoretical));
    let title = if compute {
        format!(
            "{}: FP32 FLOP per second · {}",
            family.name, report.device.name
        )
    } else {
        format!("{}: bytes per second · {}", family.name, report.device.name)
    };
    let subtitle = format!(
        "median of {} runs after {} warm-up runs · kernels solid, CUDA C++ twins dotted, baselines dashed",
        report.runs.timed, report.runs.warmup
    );
    draw(&title, &subtitle, |area| {
        let sides: Vec<f64> = sizes.iter().map(|s| s.0).collect();
        let size_label = |side: &f64| {
            sizes
                .iter()
                .find(|(s, _)| (s / side - 1.0).abs() < 1e-9)
                .map_or(String::new(), |(_, short)| short.clone())
        };
        let x_axis = (x.0..x.1).log_scale().with_key_points(sides);
        let mut chart = log_chart(area, x_axis, y, (x_label, &size_label), unit)?;
        let mut legend = Vec::new();
        for (value, stroke, name) in [
            (
                measured,
                Stroke::Solid,
                format!("{ceiling_name} (measured)"),
            ),
            (theoretical, Stroke::Dashed, "theoretical peak".to_string()),
        ] {
            let Some(value) = value else { continue };
            draw_line(
                &mut chart,
                vec![(x.0, value), (x.1, value)],
                CEILING,
                stroke,
                2,
            )?;
            legend.push(Entry {
                marker: None,
                stroke: Some(stroke),
                colour: CEILING,
                text: format!("{name}: {}", rate(value, ceiling_unit)),
            });
        }
        let colours = colours(report);
        for (row, twin, points) in &lines {
            let style = MarkerStyle {
                filled: !twin && row.role == Role::Kernel,
                ..marker_style(report, row, &colours)
            };
            let stroke = match (twin, row.role) {
                (true, _) => Stroke::Dotted,
                (false, Role::Baseline) => Stroke::Dashed,
                (false, Role::Kernel) => Stroke::Solid,
            };
            draw_line(&mut chart, points.clone(), style.colour, stroke, 2)?;
            for &point in points {
                draw_marker(chart.plotting_area(), point, style)?;
            }
            legend.push(Entry {
                marker: Some(style),
                stroke: Some(stroke),
                colour: style.colour,
                text: if *twin {
                    format!("{} (CUDA C++)", row.kernel)
                } else {
                    row.kernel.to_string()
                },
            });
        }
        Ok(legend)
    })
}

/// One line of a throughput plot: a kernel's or baseline's row, whether the
/// line is its CUDA C++ twin's, and its points (size side, throughput).
type Line<'a> = (&'a Row, bool, Vec<(f64, f64)>);
