//! `vs-cpu.svg`: each kernel's speed-up over the CPU baseline end to end,
//! copies included, against size.

use plotters::prelude::*;

use crate::bench::json::{Report, Row};
use crate::error::Result;

use super::canvas::{
    CEILING, Entry, Stroke, decades, draw, draw_line, draw_marker, log_chart, padded,
};
use super::series::{colours, marker_style, series};

/// Each kernel's speed-up over the CPU baseline, counting the copies to the
/// GPU and back, against size: above the 1× line the GPU pays off.
pub fn versus_cpu(report: &Report) -> Result<String> {
    let lines: Vec<(&Row, Vec<(f64, f64)>)> = series(report, None)
        .into_iter()
        .filter_map(|rows| {
            let mut points: Vec<(f64, f64)> = rows
                .iter()
                .filter_map(|row| Some((row.size.side(), row.vs_cpu_end_to_end?)))
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (!points.is_empty()).then(|| (rows[0], points))
        })
        .collect();
    let x = padded(lines.iter().flat_map(|(_, p)| p.iter().map(|p| p.0)));
    let y = decades(
        lines
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.1))
            .chain([1.0]),
    );
    let title = format!(
        "Faster than the CPU, counting the copies? · {}",
        report.device.name
    );
    let subtitle = "CPU baseline time / (copy in + kernel + copy out), pinned host memory · above 1× the GPU pays off";
    draw(&title, subtitle, |area| {
        let x_label = "n (the problem is n×n or n×n×n)";
        let mut sides: Vec<f64> = lines
            .iter()
            .flat_map(|(_, p)| p.iter().map(|p| p.0))
            .collect();
        sides.sort_by(f64::total_cmp);
        sides.dedup();
        let x_axis = (x.0..x.1).log_scale().with_key_points(sides);
        let mut chart = log_chart(
            area,
            x_axis,
            y,
            (x_label, &|v| format!("{v:.0}")),
            "speed-up, end to end",
        )?;
        draw_line(
            &mut chart,
            vec![(x.0, 1.0), (x.1, 1.0)],
            CEILING,
            Stroke::Dashed,
            2,
        )?;
        let mut legend = vec![Entry {
            marker: None,
            stroke: Some(Stroke::Dashed),
            colour: CEILING,
            text: "1×: as fast as the CPU".to_string(),
        }];
        let colours = colours(report);
        for (row, points) in &lines {
            let style = marker_style(report, row, &colours);
            draw_line(&mut chart, points.clone(), style.colour, Stroke::Solid, 2)?;
            for &point in points {
                draw_marker(chart.plotting_area(), point, style)?;
            }
            legend.push(Entry {
                marker: Some(style),
                stroke: Some(Stroke::Solid),
                colour: style.colour,
                text: row.kernel.to_string(),
            });
        }
        Ok(legend)
    })
}
