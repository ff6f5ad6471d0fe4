//! `FAMILY-PARAMETER.svg`: each kernel's time against the family's
//! parameter besides size (the blur's radius), at the largest size.

use crate::bench::json::{FamilySummary, Report, Row};
use crate::error::Result;
use crate::family::Parameter;

use super::canvas::{Entry, Stroke, decades, draw, draw_line, draw_marker, log_chart};
use super::series::{colours, marker_style};

/// One line of a plot against a parameter: a kernel's or baseline's row,
/// its series' index and its points (parameter value, milliseconds).
type SeriesLine<'a> = (&'a Row, usize, Vec<(f64, f64)>);

/// Each kernel's and baseline's time against the family's parameter
/// besides size (the blur's radius) at the family's largest size, one line
/// per kernel and series (the blur's channel counts: the first solid, the
/// others dashed, then dotted), named after the family and the parameter;
/// `None` where fewer than two values of it were measured there.
pub fn against_parameter(
    report: &Report,
    family: &FamilySummary,
) -> Result<Option<(String, String)>> {
    let rows: Vec<&Row> = report
        .results
        .iter()
        .filter(|row| row.family == family.name)
        .collect();
    let side = rows.iter().map(|row| row.size.side()).fold(0.0, f64::max);
    let largest: Vec<(&Row, &Parameter)> = rows
        .into_iter()
        .filter(|row| row.size.side() == side)
        .filter_map(|row| Some((row, row.size.parameter()?)))
        .collect();
    let mut values: Vec<f64> = largest.iter().map(|(_, p)| p.value).collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let (Some(&(first, parameter)), true) = (largest.first(), values.len() > 1) else {
        return Ok(None);
    };
    let mut series_names: Vec<&str> = Vec::new();
    let mut lines: Vec<SeriesLine<'_>> = Vec::new();
    for &(row, parameter) in &largest {
        let series = match series_names.iter().position(|s| *s == parameter.series) {
            Some(index) => index,
            None => {
                series_names.push(&parameter.series);
                series_names.len() - 1
            }
        };
        let point = (parameter.value, row.median_ms);
        match lines
            .iter_mut()
            .find(|(line, index, _)| line.kernel == row.kernel && *index == series)
        {
            Some((_, _, points)) => points.push(point),
            None => lines.push((row, series, vec![point])),
        }
    }
    let strokes = [Stroke::Solid, Stroke::Dashed, Stroke::Dotted];
    let x = (values[0], values[values.len() - 1]);
    let pad = (x.1 - x.0) * 0.04;
    let y = decades(lines.iter().flat_map(|(_, _, p)| p.iter().map(|p| p.1)));
    let short_name = parameter.name.split(' ').next().unwrap_or(parameter.name);
    let title = format!(
        "{}: time against {short_name} at {} · {}",
        family.name,
        first.size.short(),
        report.device.name
    );
    let subtitle = format!(
        "median of {} runs after {} warm-up runs · {}",
        report.runs.timed,
        report.runs.warmup,
        series_names
            .iter()
            .zip(["solid", "dashed", "dotted"])
            .map(|(series, stroke)| format!("{series} {stroke}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let svg = draw(&title, &subtitle, |area| {
        let tick = |value: &f64| format!("{value}");
        let x_axis = (x.0 - pad)..(x.1 + pad);
        let mut chart = log_chart(area, x_axis, y, (parameter.name, &tick), "time (ms)")?;
        let colours = colours(report);
        let mut legend = Vec::new();
        for (row, series, points) in &mut lines {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let style = marker_style(report, row, &colours);
            let stroke = strokes[*series % strokes.len()];
            draw_line(&mut chart, points.clone(), style.colour, stroke, 2)?;
            for &point in points.iter() {
                draw_marker(chart.plotting_area(), point, style)?;
            }
            legend.push(Entry {
                marker: Some(style),
                stroke: Some(stroke),
                colour: style.colour,
                text: format!("{} · {}", row.kernel, series_names[*series]),
            });
        }
        Ok(legend)
    })?;
    Ok(Some((format!("{}-{short_name}.svg", family.name), svg)))
}
