//! The canvas every plot is drawn on: the size, the fonts and colours, the
//! log-scaled chart with its grid, lines, markers and legend, tick labels,
//! and labels that move aside rather than overlap.

use std::error::Error as StdError;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use crate::error::{Error, Result};

pub(super) const SIZE: (u32, u32) = (1120, 580);

/// The chart's width; the legend takes the rest.
pub(super) const CHART_WIDTH: u32 = 730;

pub(super) const FONT: &str = "sans-serif";

/// Distinct on white and for most colour vision (Tableau 10, darkened where
/// it was too pale).
pub(super) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb8, 0x86, 0x0b),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x55, 0x55, 0x55),
];

pub(super) const CEILING: RGBColor = RGBColor(0x33, 0x33, 0x33);

pub(super) const GRID: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);

pub(super) const FAINT: RGBColor = RGBColor(0xf1, 0xf1, 0xf1);

pub(super) const SUBTITLE: RGBColor = RGBColor(0x55, 0x55, 0x55);

pub(super) type Drawing<T> = std::result::Result<T, Box<dyn StdError>>;

pub(super) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// A chart whose y axis is logarithmic and whose x axis is `X`.
pub(super) type Chart<'a, 'b, X> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, LogCoord<f64>>>;

/// A chart with a title and a subtitle above it and its legend to the
/// right, drawn by `chart` into the area it is given.
pub(super) fn draw(
    title: &str,
    subtitle: &str,
    chart: impl FnOnce(&Area<'_>) -> Drawing<Vec<Entry>>,
) -> Result<String> {
    let mut svg = String::new();
    let drawn: Drawing<()> = (|| {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        root.draw(&Text::new(
            title.to_string(),
            (86, 14),
            (FONT, 20).into_font().style(FontStyle::Bold),
        ))?;
        root.draw(&Text::new(
            subtitle.to_string(),
            (86, 42),
            (FONT, 13).into_font().color(&SUBTITLE),
        ))?;
        let body = root.margin(64, 16, 16, 8);
        let (left, right) = body.split_horizontally(CHART_WIDTH);
        let entries = chart(&left)?;
        draw_legend(&right, &entries)?;
        root.present()?;
        Ok(())
    })();
    drawn.map_err(|error| Error::Plot(error.to_string()))?;
    Ok(svg)
}

/// A chart over `x` and a logarithmic `y`, with its grid, its ticks (x's
/// named by `x_ticks`) and its axis titles.
pub(super) fn log_chart<'a, 'b, X>(
    area: &'a Area<'b>,
    x: X,
    y: (f64, f64),
    (x_label, x_ticks): (&str, &dyn Fn(&f64) -> String),
    y_label: &str,
) -> Drawing<Chart<'a, 'b, X::CoordDescType>>
where
    X: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin_right(16)
        .x_label_area_size(48)
        .y_label_area_size(70)
        .build_cartesian_2d(x, (y.0..y.1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(x_ticks)
        .y_label_formatter(&|v| tick_label(*v))
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .bold_line_style(GRID)
        .light_line_style(FAINT)
        .draw()?;
    Ok(chart)
}

/// How a line is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Stroke {
    Solid,
    Dashed,
    Dotted,
}

impl Stroke {
    /// The lengths of its dashes and gaps, in pixels; none when solid.
    fn dash(self) -> Option<(u32, u32)> {
        match self {
            Self::Solid => None,
            Self::Dashed => Some((6, 4)),
            Self::Dotted => Some((2, 4)),
        }
    }
}

/// A line through `points`.
pub(super) fn draw_line<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    points: Vec<(f64, f64)>,
    colour: RGBColor,
    stroke: Stroke,
    width: u32,
) -> Drawing<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = colour.stroke_width(width);
    match stroke.dash() {
        None => chart.draw_series(LineSeries::new(points, style))?,
        Some((dash, gap)) => chart.draw_series(DashedLineSeries::new(points, dash, gap, style))?,
    };
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Shape {
    Circle,
    Square,
    Triangle,
}

/// A point's look: the family's shape, the kernel's colour, hollow for a
/// baseline or a twin.
#[derive(Clone, Copy, Debug)]
pub(super) struct MarkerStyle {
    pub(super) shape: Shape,
    pub(super) colour: RGBColor,
    pub(super) filled: bool,
}

/// Draws a marker of `style` at `at`, in the area's own coordinates: the
/// data's in a chart, pixels in the legend.
pub(super) fn draw_marker<CT: CoordTranslate>(
    area: &DrawingArea<SVGBackend<'_>, CT>,
    at: CT::From,
    style: MarkerStyle,
) -> Drawing<()>
where
    CT::From: Clone,
{
    let outline = style.colour.stroke_width(2);
    let paint = if style.filled {
        style.colour.filled()
    } else {
        WHITE.filled()
    };
    let shape = match style.shape {
        Shape::Circle => (0..=16)
            .map(|step| {
                let angle = f64::from(step) * std::f64::consts::TAU / 16.0;
                (
                    (5.0 * angle.cos()).round() as i32,
                    (5.0 * angle.sin()).round() as i32,
                )
            })
            .collect(),
        Shape::Square => vec![(-5, -5), (5, -5), (5, 5), (-5, 5), (-5, -5)],
        Shape::Triangle => vec![(0, -6), (-6, 4), (6, 4), (0, -6)],
    };
    area.draw(
        &(EmptyElement::at(at)
            + Polygon::new(shape.clone(), paint)
            + PathElement::new(shape, outline)),
    )?;
    Ok(())
}

/// One legend line: a line sample, a marker, or both, and its text.
pub(super) struct Entry {
    pub(super) marker: Option<MarkerStyle>,
    pub(super) stroke: Option<Stroke>,
    pub(super) colour: RGBColor,
    pub(super) text: String,
}

/// The legend, one entry per line from the top of `area`.
pub(super) fn draw_legend(area: &Area<'_>, entries: &[Entry]) -> Drawing<()> {
    for (index, entry) in entries.iter().enumerate() {
        let y = 10 + 19 * index as i32;
        if let Some(stroke) = entry.stroke {
            let style = entry.colour.stroke_width(2);
            let sample = [(0, y), (30, y)];
            match stroke.dash() {
                None => area.draw(&PathElement::new(sample, style))?,
                Some((dash, gap)) => {
                    area.draw(&DashedPathElement::new(sample, dash, gap, style))?
                }
            }
        }
        if let Some(marker) = entry.marker {
            draw_marker(area, (15, y), marker)?;
        }
        area.draw(&Text::new(
            entry.text.clone(),
            (40, y - 7),
            (FONT, 13).into_font(),
        ))?;
    }
    Ok(())
}

/// A rate given in G/s, in G or T.
pub(super) fn rate(giga: f64, unit: &str) -> String {
    if giga >= 1e3 {
        format!("{:.1} T{unit}", giga / 1e3)
    } else {
        format!("{giga:.0} G{unit}")
    }
}

/// Whole decades around the values, with room to spare at both ends.
pub(super) fn decades(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (min, max) = finite_range(values).unwrap_or((1.0, 10.0));
    (
        10f64.powf((min / 1.3).log10().floor()),
        10f64.powf((max * 1.3).log10().ceil()),
    )
}

/// The values' range and a little more on either side.
pub(super) fn padded(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (min, max) = finite_range(values).unwrap_or((1.0, 10.0));
    let pad = (max / min).powf(0.08).max(1.3);
    (min / pad, max * pad)
}

pub(super) fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |range, v| match range {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
}

/// A tick value without needless digits: 0.05, 2, 500, 20k, 1M.
pub(super) fn tick_label(value: f64) -> String {
    let exponent = value.log10().floor() as i32;
    match value {
        v if v >= 1e6 => format!("{}M", v / 1e6),
        v if v >= 1e3 => format!("{}k", v / 1e3),
        v if v >= 1.0 => format!("{v}"),
        v => format!("{v:.*}", (-exponent) as usize),
    }
}

/// Places for the points' number labels that overlap neither each other
/// nor the markers, inside the plotting area (pixels).
pub(super) struct Labels {
    area: (std::ops::Range<i32>, std::ops::Range<i32>),
    taken: Vec<(i32, i32, i32, i32)>,
}

impl Labels {
    pub(super) fn within(area: (std::ops::Range<i32>, std::ops::Range<i32>)) -> Self {
        Self {
            area,
            taken: Vec::new(),
        }
    }

    pub(super) fn occupy(&mut self, x: i32, y: i32, width: i32, height: i32) {
        self.taken.push((x, y, width, height));
    }

    /// The first free spot around (x, y), further out when all near ones
    /// are taken: the text's top-left corner.
    pub(super) fn place(&mut self, x: i32, y: i32, text: &str) -> (i32, i32) {
        let (width, height) = (7 * text.len() as i32 + 2, 13);
        let overlaps = |(ax, ay): (i32, i32), taken: &[(i32, i32, i32, i32)]| {
            taken.iter().any(|&(bx, by, bw, bh)| {
                ax < bx + bw && bx < ax + width && ay < by + bh && by < ay + height
            })
        };
        let directions = [
            (1, -1),
            (1, 0),
            (1, 1),
            (-1, -1),
            (-1, 0),
            (-1, 1),
            (0, -1),
            (0, 1),
        ];
        let (xs, ys) = self.area.clone();
        let inside = |(left, top): (i32, i32)| {
            left >= xs.start && left + width <= xs.end && top >= ys.start && top + height <= ys.end
        };
        let spot = (1..6)
            .flat_map(|ring| {
                let distance = 7 + 9 * (ring - 1);
                directions.iter().map(move |&(dx, dy)| {
                    let left = match dx {
                        -1 => x - distance - width,
                        1 => x + distance,
                        _ => x - width / 2,
                    };
                    (left, y + dy * distance - height / 2)
                })
            })
            .find(|&spot| inside(spot) && !overlaps(spot, &self.taken))
            .unwrap_or((x + 7, y - height / 2));
        self.occupy(spot.0, spot.1, width, height);
        spot
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decade_range_covers_the_values_with_room() {
        assert_eq!(decades([0.25, 800.0].into_iter()), (0.1, 10_000.0));
    }

    #[test]
    fn tick_labels_carry_no_needless_digits() {
        let labels: Vec<String> = [0.05, 0.1, 2.0, 500.0, 20_000.0, 1e6]
            .into_iter()
            .map(tick_label)
            .collect();
        assert_eq!(labels, ["0.05", "0.1", "2", "500", "20k", "1M"]);
    }

    #[test]
    fn labels_move_aside_rather_than_overlap() {
        let mut labels = Labels::within((0..600, 0..400));
        let first = labels.place(300, 300, "1");
        let second = labels.place(300, 300, "2");
        assert_ne!(first, second);
    }
}
