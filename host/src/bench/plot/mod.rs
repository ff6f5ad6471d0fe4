//! The plots of a report, drawn by plotters into SVG with its own font
//! metrics (no system fonts at build or run time), the same bytes for the
//! same report:
//!
//! - `roofline.svg`: log-log, every kernel and baseline (except those that
//!   do no arithmetic: the copy, the transposes) as a numbered point at its
//!   largest size,
//!   under the measured ceilings (solid) and the theoretical ones (dashed).
//! - one `FAMILY.svg` per family: throughput against size on log axes, one
//!   line per kernel (solid), its CUDA C++ twin (dotted) and baseline
//!   (dashed): FLOP/s for a family meant to be compute-bound (matmul),
//!   bytes/s for a memory-bound one (gemv, blur, transpose).
//!
//! - `vs-cpu.svg`, with a GPU's copies measured: each kernel's speed-up
//!   over the CPU baseline end to end, against size, and the 1× line.
//!
//! Each legend sits beside its chart, never over the data.

mod canvas;

use plotters::prelude::*;

use super::json::{Bound, ComputeSource, FamilySummary, Report, Role, Row};
use super::roofline::Roof;
use crate::error::Result;
use crate::family::Parameter;

use self::canvas::{
    CEILING, Drawing, Entry, FONT, Labels, MarkerStyle, PALETTE, Shape, Stroke, decades, draw,
    draw_line, draw_marker, finite_range, log_chart, padded, rate, tick_label,
};

/// Every plot of the report, by file name: the roofline, then one per
/// family that was measured.
pub fn all(report: &Report) -> Result<Vec<(String, String)>> {
    let mut plots = vec![("roofline.svg".to_string(), roofline(report)?)];
    for family in &report.families {
        if report.results.iter().any(|row| row.family == family.name) {
            plots.push((format!("{}.svg", family.name), throughput(report, family)?));
        }
        plots.extend(against_parameter(report, family)?);
    }
    if report
        .results
        .iter()
        .any(|row| row.vs_cpu_end_to_end.is_some())
    {
        plots.push(("vs-cpu.svg".to_string(), versus_cpu(report)?));
    }
    Ok(plots)
}

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

/// Throughput against size for one family.
pub fn throughput(report: &Report, family: &FamilySummary) -> Result<String> {
    let compute = family.bound == Bound::Compute;
    let (metric, unit): (fn(&Row) -> Option<f64>, _) = if compute {
        (|row| row.gops_per_s, "GFLOP/s")
    } else {
        (|row| Some(row.gbytes_per_s), "GB/s (fewest bytes moved)")
    };
    let (measured, theoretical, ceiling_name, ceiling_unit) = if compute {
        (
            report.ceilings.sgemm_gflops,
            report.ceilings.theoretical_fp32_gflops,
            "SGEMM",
            "FLOP/s",
        )
    } else {
        (
            Some(report.ceilings.copy_gbytes_per_s),
            report.ceilings.theoretical_gbytes_per_s,
            "copy",
            "B/s",
        )
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

/// One line of a lesson's plot: its name, its points, and whether it is
/// drawn dashed (a bound, not a measurement).
pub struct LessonLine {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

/// A lesson's sweep: its lines against a logarithmic y and an x that is
/// logarithmic when `log_x`, with a marker at each measured point.
pub fn lesson(
    title: &str,
    subtitle: &str,
    (x_label, log_x): (&str, bool),
    y_label: &str,
    lines: &[LessonLine],
) -> Result<String> {
    let all = || lines.iter().flat_map(|line| line.points.iter());
    let y = padded(all().map(|&(_, y)| y));
    // A log axis shows positive x only; a linear one starts at 0.
    let (x_min, x_max) = finite_range(all().map(|&(x, _)| x)).unwrap_or((1.0, 10.0));
    draw(title, subtitle, |area| {
        let ticks = |v: &f64| tick_label(*v);
        let entries = |chart_lines: &mut dyn FnMut(&LessonLine, RGBColor) -> Drawing<()>| {
            lines
                .iter()
                .zip(PALETTE.iter().cycle())
                .map(|(line, &colour)| {
                    chart_lines(line, colour)?;
                    Ok(Entry {
                        marker: (!line.dashed).then_some(MarkerStyle {
                            shape: Shape::Circle,
                            colour,
                            filled: true,
                        }),
                        stroke: Some(if line.dashed {
                            Stroke::Dashed
                        } else {
                            Stroke::Solid
                        }),
                        colour,
                        text: line.name.clone(),
                    })
                })
                .collect::<Drawing<Vec<Entry>>>()
        };
        if log_x {
            let x = (x_min / 1.3..x_max * 1.3).log_scale();
            let mut chart = log_chart(area, x, y, (x_label, &ticks), y_label)?;
            entries(&mut |line, colour| lesson_line(&mut chart, line, colour))
        } else {
            let pad = (x_max - x_min).max(1.0) * 0.04;
            let x = x_min.min(0.0) - pad..x_max + pad;
            let whole = |v: &f64| format!("{v:.0}");
            let mut chart = log_chart(area, x, y, (x_label, &whole), y_label)?;
            entries(&mut |line, colour| lesson_line(&mut chart, line, colour))
        }
    })
}

/// A lesson's line on its chart, with markers unless it is a bound.
fn lesson_line<X: Ranged<ValueType = f64>>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, LogCoord<f64>>>,
    line: &LessonLine,
    colour: RGBColor,
) -> Drawing<()> {
    let stroke = if line.dashed {
        Stroke::Dashed
    } else {
        Stroke::Solid
    };
    draw_line(chart, line.points.clone(), colour, stroke, 2)?;
    if !line.dashed {
        let style = MarkerStyle {
            shape: Shape::Circle,
            colour,
            filled: true,
        };
        for &point in &line.points {
            draw_marker(chart.plotting_area(), point, style)?;
        }
    }
    Ok(())
}

/// The report's rows grouped by kernel, in report order, for one family or
/// all.
fn series<'a>(report: &'a Report, family: Option<&str>) -> Vec<Vec<&'a Row>> {
    let mut groups: Vec<Vec<&Row>> = Vec::new();
    for row in &report.results {
        if family.is_some_and(|family| row.family != family) {
            continue;
        }
        match groups
            .iter_mut()
            .find(|group| group[0].kernel == row.kernel)
        {
            // Against size, a kernel's line keeps to its first row's
            // parameter (the blur's first radius and channel count).
            Some(group) if group[0].size.parameter() == row.size.parameter() => group.push(row),
            Some(_) => {}
            None => groups.push(vec![row]),
        }
    }
    groups
}

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

/// One colour per kernel, the same in every plot: its place in its family.
fn colours(report: &Report) -> Vec<(&str, RGBColor)> {
    let mut assigned = Vec::new();
    for family in &report.families {
        let mut kernels: Vec<&str> = Vec::new();
        for row in report
            .results
            .iter()
            .filter(|row| row.family == family.name)
        {
            if !kernels.contains(&row.kernel.as_str()) {
                kernels.push(&row.kernel);
            }
        }
        for (index, kernel) in kernels.into_iter().enumerate() {
            assigned.push((kernel, PALETTE[index % PALETTE.len()]));
        }
    }
    assigned
}

fn marker_style(report: &Report, row: &Row, colours: &[(&str, RGBColor)]) -> MarkerStyle {
    let family = report
        .families
        .iter()
        .position(|family| family.name == row.family);
    MarkerStyle {
        shape: [Shape::Circle, Shape::Square, Shape::Triangle][family.unwrap_or(0) % 3],
        colour: colours
            .iter()
            .find(|(kernel, _)| *kernel == row.kernel)
            .map_or(PALETTE[0], |&(_, colour)| colour),
        filled: row.role == Role::Kernel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lesson_plots_from_zero_on_a_linear_axis_and_on_a_log_one() {
        let lines = [
            LessonLine {
                name: "measured".to_string(),
                points: vec![(0.0, 2000.0), (1.0, 1900.0), (32.0, 2100.0)],
                dashed: false,
            },
            LessonLine {
                name: "bound".to_string(),
                points: vec![(0.5, 1000.0), (32.0, 3000.0)],
                dashed: true,
            },
        ];
        let svg = lesson("title", "subtitle", ("x", false), "y", &lines).unwrap();
        assert!(svg.contains("measured") && svg.contains("bound"), "{svg}");
        let svg = lesson("title", "subtitle", ("x", true), "y", &lines[1..]).unwrap();
        assert!(svg.contains("bound"), "{svg}");
    }
}
