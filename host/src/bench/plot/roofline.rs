//! `roofline.svg`: every kernel and baseline that does arithmetic as a
//! numbered point at its largest size, under the measured ceilings and the
//! theoretical ones.

use plotters::prelude::*;

use crate::bench::json::{Bound, ComputeSource, Report, Row};
use crate::bench::roofline::Roof;
use crate::error::Result;

use super::canvas::{
    CEILING, Entry, FONT, Labels, Stroke, decades, draw, draw_line, draw_marker, log_chart, rate,
    tick_label,
};
use super::series::{colours, marker_style, series};

/// The roofline chart.
pub fn roofline(report: &Report) -> Result<String> {
    let measured = report.roofline.roof();
    let theoretical = report
        .ceilings
        .theoretical_gbytes_per_s
        .zip(report.ceilings.theoretical_fp32_gflops)
        .map(|(bandwidth, compute)| Roof {
            compute_gops: compute,
            bandwidth_gbytes: bandwidth,
        });
    // Each kernel at its largest size.
    let points: Vec<(&Row, f64, f64)> = series(report, None)
        .into_iter()
        .filter_map(|rows| {
            let row = rows
                .into_iter()
                .max_by(|a, b| a.bytes.total_cmp(&b.bytes))?;
            Some((row, row.intensity?, row.gops_per_s?))
        })
        .collect();
    let roofs: Vec<(Roof, Stroke, &str, &str)> = {
        let compute_name = match report.roofline.compute_source {
            Some(ComputeSource::CublasSgemm) => "SGEMM",
            Some(ComputeSource::TheoreticalFp32) => "FP32 peak",
            None => "compute unknown",
        };
        let mut roofs = vec![(measured, Stroke::Solid, "copy", compute_name)];
        if report.roofline.tensor_gops_per_s.is_some() {
            let roof = report.roofline.roof_for(Bound::Tensor);
            roofs.push((roof, Stroke::Dotted, "copy", "bf16 gemm (tensor cores)"));
        }
        if let Some(roof) = theoretical {
            roofs.push((roof, Stroke::Dashed, "peak", "FP32 peak"));
        }
        roofs
    };
    let x = decades(
        points
            .iter()
            .map(|p| p.1)
            .chain(roofs.iter().map(|r| r.0.ridge())),
    );
    let y = decades(
        points
            .iter()
            .map(|p| p.2)
            .chain(roofs.iter().map(|r| r.0.compute_gops)),
    );
    let title = format!("Roofline · {}", report.device.name);
    let subtitle = "each kernel at its largest size · op = FLOP (matmul, gemv) or integer add (blur: 4 a sample)";
    draw(&title, subtitle, |area| {
        let x_axis = (x.0..x.1).log_scale();
        let x_label = "intensity (ops per byte of the fewest bytes moved)";
        let mut chart = log_chart(area, x_axis, y, (x_label, &|v| tick_label(*v)), "Gop/s")?;
        let mut legend = Vec::new();
        for &(roof, stroke, bandwidth_name, compute_name) in &roofs {
            let line: Vec<(f64, f64)> = [x.0, roof.ridge().clamp(x.0, x.1), x.1]
                .into_iter()
                .map(|i| (i, roof.bound(i)))
                .collect();
            draw_line(&mut chart, line, CEILING, stroke, 2)?;
            let compute = if roof.compute_gops.is_finite() {
                rate(roof.compute_gops, "FLOP/s")
            } else {
                String::new()
            };
            legend.push(Entry {
                marker: None,
                stroke: Some(stroke),
                colour: CEILING,
                text: format!(
                    "{bandwidth_name} {} · {compute_name} {compute}",
                    rate(roof.bandwidth_gbytes, "B/s")
                ),
            });
        }
        let colours = colours(report);
        let pixels: Vec<(i32, i32)> = points
            .iter()
            .map(|&(_, i, g)| chart.backend_coord(&(i, g)))
            .collect();
        let mut labels = Labels::within(chart.plotting_area().get_pixel_range());
        for &(px, py) in &pixels {
            labels.occupy(px - 6, py - 6, 12, 12);
        }
        for (number, (&(row, i, g), &(px, py))) in points.iter().zip(&pixels).enumerate() {
            let style = marker_style(report, row, &colours);
            draw_marker(chart.plotting_area(), (i, g), style)?;
            let label = (number + 1).to_string();
            let (lx, ly) = labels.place(px, py, &label);
            chart.plotting_area().draw(
                &(EmptyElement::at((i, g))
                    + Text::new(label, (lx - px, ly - py), (FONT, 12).into_font())),
            )?;
            legend.push(Entry {
                marker: Some(style),
                stroke: None,
                colour: style.colour,
                text: format!("{}  {}", number + 1, row.kernel),
            });
        }
        Ok(legend)
    })
}
