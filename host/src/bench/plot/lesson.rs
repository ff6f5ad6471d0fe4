//! A lesson's plot: its sweep's lines, measured and bound, against a
//! logarithmic y and a linear or logarithmic x.

use plotters::prelude::*;

use crate::error::Result;

use super::canvas::{
    Drawing, Entry, MarkerStyle, PALETTE, Shape, Stroke, draw, draw_line, draw_marker,
    finite_range, log_chart, padded, tick_label,
};

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
