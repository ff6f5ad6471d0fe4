//! SVG plots of a report, written by hand: no plotting library, no fonts to
//! find at build time, and the same bytes for the same report.
//!
//! - `roofline.svg`: log-log, every kernel and baseline (except the copy,
//!   which does no arithmetic) as a point at its largest size, under the
//!   measured ceilings (solid) and the theoretical ones (dashed).
//! - one `FAMILY.svg` per family: throughput against size, one line per
//!   kernel (solid) and baseline (dashed): FLOP/s for a family meant to be
//!   compute-bound (matmul), bytes/s for a memory-bound one (gemv, blur).

use std::fmt::Write;

use super::json::{Bound, ComputeSource, FamilySummary, Report, Role, Row};
use super::roofline::Roof;

const WIDTH: f64 = 1120.0;
const HEIGHT: f64 = 580.0;
/// The plot area; the legend sits to its right.
const LEFT: f64 = 86.0;
const RIGHT: f64 = 700.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 510.0;
const LEGEND_X: f64 = RIGHT + 24.0;

/// Distinct on white and for most colour vision (Tableau 10, darkened where
/// it was too pale).
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#b8860b", "#b07aa1", "#ff9da7",
    "#9c755f", "#555555",
];
const CEILING: &str = "#333333";

/// Every plot of the report, by file name: the roofline, then one per
/// family that was measured.
pub fn all(report: &Report) -> Vec<(String, String)> {
    let mut plots = vec![("roofline.svg".to_string(), roofline(report))];
    for family in &report.families {
        if report.results.iter().any(|row| row.family == family.name) {
            plots.push((format!("{}.svg", family.name), throughput(report, family)));
        }
    }
    plots
}

/// The roofline chart.
pub fn roofline(report: &Report) -> String {
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
    let roofs: Vec<Roof> = [Some(measured), theoretical]
        .into_iter()
        .flatten()
        .collect();
    let ridges = roofs.iter().map(|r| r.ridge()).filter(|r| r.is_finite());
    let computes = roofs
        .iter()
        .map(|r| r.compute_gops)
        .filter(|c| c.is_finite());
    let x = Axis::decades(points.iter().map(|p| p.1).chain(ridges), LEFT, RIGHT);
    let y = Axis::decades(points.iter().map(|p| p.2).chain(computes), BOTTOM, TOP);
    let mut svg = Svg::new(
        &format!("Roofline · {}", report.device.name),
        "each kernel at its largest size · op = FLOP (matmul, gemv) or integer add (blur)",
    );
    svg.axes(
        &x,
        &y,
        "intensity (ops per byte of the fewest bytes moved)",
        "Gop/s",
    );
    svg.open_clip();
    let mut legend = Vec::new();
    let compute_name = match report.roofline.compute_source {
        Some(ComputeSource::CublasSgemm) => "SGEMM",
        Some(ComputeSource::TheoreticalFp32) => "FP32 peak",
        None => "compute unknown",
    };
    for (roof, dash, name) in [
        (Some(measured), "", ("copy", compute_name)),
        (theoretical, "6 4", ("peak", "FP32 peak")),
    ] {
        let Some(roof) = roof else { continue };
        let (lo, hi) = (x.lo, x.hi);
        let line: Vec<(f64, f64)> = [lo, roof.ridge().clamp(lo, hi), hi]
            .into_iter()
            .map(|i| (x.at(i), y.at(roof.bound(i))))
            .collect();
        svg.polyline(&line, CEILING, dash, 1.6);
        let compute = if roof.compute_gops.is_finite() {
            rate(roof.compute_gops, "FLOP/s")
        } else {
            String::new()
        };
        legend.push(Entry::line(
            CEILING,
            dash,
            &format!(
                "{} {} · {} {compute}",
                name.0,
                rate(roof.bandwidth_gbytes, "B/s"),
                name.1
            ),
        ));
    }
    svg.close_clip();

    let colours = colours(report);
    let mut labels = Labels::default();
    let placed: Vec<(f64, f64)> = points.iter().map(|p| (x.at(p.1), y.at(p.2))).collect();
    for &(px, py) in &placed {
        labels.occupy(px - 6.0, py - 6.0, 12.0, 12.0);
    }
    for (number, ((row, _, _), (px, py))) in points.iter().zip(&placed).enumerate() {
        let style = marker_style(report, row, &colours);
        svg.marker(style, *px, *py);
        let label = (number + 1).to_string();
        let (lx, ly) = labels.place(*px, *py, &label);
        svg.text(lx, ly, "start", 11.0, &label, "");
        legend.push(Entry::point(
            style,
            &format!("{}  {}", number + 1, row.kernel),
        ));
    }
    svg.legend(&legend);
    svg.finish()
}

/// Throughput against size for one family.
pub fn throughput(report: &Report, family: &FamilySummary) -> String {
    let compute = family.bound == Bound::Compute;
    let (metric, unit): (fn(&Row) -> Option<f64>, _) = if compute {
        (|row| row.gops_per_s, "GFLOP/s")
    } else {
        (|row| Some(row.gbytes_per_s), "GB/s (fewest bytes moved)")
    };
    let title = if compute {
        format!("{}: FP32 FLOP per second", family.name)
    } else {
        format!("{}: bytes per second", family.name)
    };
    let (measured, theoretical, ceiling_name) = if compute {
        (
            report.ceilings.sgemm_gflops,
            report.ceilings.theoretical_fp32_gflops,
            "SGEMM",
        )
    } else {
        (
            Some(report.ceilings.copy_gbytes_per_s),
            report.ceilings.theoretical_gbytes_per_s,
            "copy",
        )
    };
    let family = family.name;
    // Each kernel's line, and its CUDA C++ twin's (`true`) where it ran:
    // the same work in the twin's time.
    let mut lines: Vec<Line<'_>> = Vec::new();
    for rows in series(report, Some(family)) {
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
    let sides = lines.iter().flat_map(|(_, _, p)| p.iter().map(|p| p.0));
    let x = Axis::padded(sides, LEFT, RIGHT);
    let values = lines.iter().flat_map(|(_, _, p)| p.iter().map(|p| p.1));
    let y = Axis::decades(values.chain(measured).chain(theoretical), BOTTOM, TOP);

    let sizes: Vec<(f64, String)> = report
        .results
        .iter()
        .filter(|row| row.family == family)
        .map(|row| (row.size.side(), row.size.short().to_string()))
        .collect();
    let square = sizes.iter().all(|(_, short)| !short.contains('×'));
    let x_label = if square {
        report
            .families
            .iter()
            .find(|summary| summary.name == family)
            .map_or("n", |summary| summary.square_axis)
    } else {
        "size (at the side of the square or cube of equal size)"
    };
    let mut svg = Svg::new(
        &format!("{title} · {}", report.device.name),
        &format!(
            "median of {} runs after {} warm-up runs · kernels solid, CUDA C++ twins dotted, baselines dashed",
            report.runs.timed, report.runs.warmup
        ),
    );
    svg.y_axis(&y, unit);
    svg.x_ticks(&x, &sizes, x_label);
    svg.open_clip();
    let mut legend = Vec::new();
    for (value, dash, kind) in [
        (measured, "", "measured"),
        (theoretical, "6 4", "theoretical"),
    ] {
        if let Some(value) = value {
            let py = y.at(value);
            svg.polyline(&[(LEFT, py), (RIGHT, py)], CEILING, dash, 1.4);
            let name = if kind == "measured" {
                format!("{ceiling_name} (measured)")
            } else {
                "theoretical peak".to_string()
            };
            let unit = if compute { "FLOP/s" } else { "B/s" };
            legend.push(Entry::line(
                CEILING,
                dash,
                &format!("{name}: {}", rate(value, unit)),
            ));
        }
    }
    let colours = colours(report);
    for (row, twin, points) in &lines {
        let style = MarkerStyle {
            filled: !twin && row.role == Role::Kernel,
            ..marker_style(report, row, &colours)
        };
        let pixels: Vec<(f64, f64)> = points.iter().map(|&(s, v)| (x.at(s), y.at(v))).collect();
        let dash = match (twin, row.role) {
            (true, _) => "1.5 3",
            (false, Role::Baseline) => "5 3",
            (false, Role::Kernel) => "",
        };
        svg.polyline(&pixels, style.colour, dash, 2.0);
        for &(px, py) in &pixels {
            svg.marker(style, px, py);
        }
        legend.push(Entry {
            marker: Some(style),
            dash,
            colour: style.colour,
            text: if *twin {
                format!("{} (CUDA C++)", row.kernel)
            } else {
                row.kernel.to_string()
            },
        });
    }
    svg.close_clip();
    svg.legend(&legend);
    svg.finish()
}

/// One line of a throughput plot: a kernel's or baseline's row, whether the
/// line is its CUDA C++ twin's, and its points (size side, throughput).
type Line<'a> = (&'a Row, bool, Vec<(f64, f64)>);

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
            Some(group) => group.push(row),
            None => groups.push(vec![row]),
        }
    }
    groups
}

/// One colour per kernel, the same in every plot: its place in its family.
fn colours(report: &Report) -> Vec<(&'static str, &'static str)> {
    let mut assigned: Vec<(&'static str, &'static str)> = Vec::new();
    for family in &report.families {
        let mut kernels: Vec<&'static str> = Vec::new();
        for row in report
            .results
            .iter()
            .filter(|row| row.family == family.name)
        {
            if !kernels.contains(&row.kernel) {
                kernels.push(row.kernel);
            }
        }
        for (index, kernel) in kernels.into_iter().enumerate() {
            assigned.push((kernel, PALETTE[index % PALETTE.len()]));
        }
    }
    assigned
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Circle,
    Square,
    Triangle,
}

/// A point's look: the family's shape, the kernel's colour, hollow for a
/// baseline.
#[derive(Clone, Copy, Debug)]
struct MarkerStyle {
    shape: Shape,
    colour: &'static str,
    filled: bool,
}

fn marker_style(
    report: &Report,
    row: &Row,
    colours: &[(&'static str, &'static str)],
) -> MarkerStyle {
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

/// A rate given in G/s, in G or T.
fn rate(giga: f64, unit: &str) -> String {
    if giga >= 1e3 {
        format!("{:.1} T{unit}", giga / 1e3)
    } else {
        format!("{giga:.0} G{unit}")
    }
}

/// A logarithmic axis from `lo` to `hi`, drawn from pixel `from` to `to`.
#[derive(Clone, Copy, Debug)]
struct Axis {
    lo: f64,
    hi: f64,
    from: f64,
    to: f64,
}

impl Axis {
    /// Whole decades around the values, with room to spare at both ends.
    fn decades(values: impl Iterator<Item = f64>, from: f64, to: f64) -> Self {
        let (min, max) = finite_range(values).unwrap_or((1.0, 10.0));
        let lo = 10f64.powf((min / 1.3).log10().floor());
        let hi = 10f64.powf((max * 1.3).log10().ceil());
        Self { lo, hi, from, to }
    }

    /// The values' range and a quarter of it again on either side.
    fn padded(values: impl Iterator<Item = f64>, from: f64, to: f64) -> Self {
        let (min, max) = finite_range(values).unwrap_or((1.0, 10.0));
        let pad = (max / min).powf(0.08).max(1.3);
        Self {
            lo: min / pad,
            hi: max * pad,
            from,
            to,
        }
    }

    fn at(&self, value: f64) -> f64 {
        let t = (value.log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10());
        self.from + t * (self.to - self.from)
    }

    /// Decade ticks, labelled; with 2 and 5 labelled too on a short axis.
    fn ticks(&self) -> Vec<(f64, bool)> {
        let (first, last) = (
            self.lo.log10().round() as i32,
            self.hi.log10().round() as i32,
        );
        let label_minor = last - first <= 2;
        let mut ticks = Vec::new();
        for exponent in first..=last {
            for mantissa in 1..10 {
                let value = f64::from(mantissa) * 10f64.powi(exponent);
                if value > self.hi * 1.0001 {
                    break;
                }
                let labelled = mantissa == 1 || (label_minor && (mantissa == 2 || mantissa == 5));
                ticks.push((value, labelled));
            }
        }
        ticks
    }
}

fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |range, v| match range {
            None => Some((v, v)),
            Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
        })
}

/// A tick value without needless digits: 0.05, 2, 500, 20k, 1M.
fn tick_label(value: f64) -> String {
    let exponent = value.log10().floor() as i32;
    match value {
        v if v >= 1e6 => format!("{}M", v / 1e6),
        v if v >= 1e3 => format!("{}k", v / 1e3),
        v if v >= 1.0 => format!("{v}"),
        v => format!("{v:.*}", (-exponent) as usize),
    }
}

/// Positions for small labels that overlap neither each other nor the
/// markers.
#[derive(Default)]
struct Labels {
    taken: Vec<(f64, f64, f64, f64)>,
}

impl Labels {
    fn occupy(&mut self, x: f64, y: f64, width: f64, height: f64) {
        self.taken.push((x, y, width, height));
    }

    /// The first free spot around (x, y), further out when all near ones
    /// are taken; returns the text's baseline start.
    fn place(&mut self, x: f64, y: f64, text: &str) -> (f64, f64) {
        let (width, height) = (6.5 * text.len() as f64 + 2.0, 12.0);
        let overlaps = |(ax, ay): (f64, f64), taken: &[(f64, f64, f64, f64)]| {
            taken.iter().any(|&(bx, by, bw, bh)| {
                ax < bx + bw && bx < ax + width && ay < by + bh && by < ay + height
            })
        };
        let directions = [
            (1.0, -1.0),
            (1.0, 0.0),
            (1.0, 1.0),
            (-1.0, -1.0),
            (-1.0, 0.0),
            (-1.0, 1.0),
            (0.0, -1.0),
            (0.0, 1.0),
        ];
        let mut candidates = (1..6).flat_map(|ring| {
            let distance = 7.0 + 9.0 * f64::from(ring - 1);
            directions.iter().map(move |&(dx, dy)| {
                let left = if dx < 0.0 {
                    x - distance - width
                } else if dx > 0.0 {
                    x + distance
                } else {
                    x - width / 2.0
                };
                let top = y + dy * distance - height / 2.0;
                (left, top)
            })
        });
        let inside = |(left, top): (f64, f64)| {
            left >= LEFT && left + width <= RIGHT && top >= TOP && top + height <= BOTTOM
        };
        let spot = candidates
            .find(|&spot| inside(spot) && !overlaps(spot, &self.taken))
            .unwrap_or((x + 7.0, y - height / 2.0));
        self.occupy(spot.0, spot.1, width, height);
        (spot.0 + 1.0, spot.1 + height - 2.0)
    }
}

/// One legend line: a marker, a line sample, or both, and its text.
struct Entry {
    marker: Option<MarkerStyle>,
    dash: &'static str,
    colour: &'static str,
    text: String,
}

impl Entry {
    fn line(colour: &'static str, dash: &'static str, text: &str) -> Self {
        Self {
            marker: None,
            dash,
            colour,
            text: text.to_string(),
        }
    }

    fn point(style: MarkerStyle, text: &str) -> Self {
        Self {
            marker: Some(style),
            dash: "none",
            colour: style.colour,
            text: text.to_string(),
        }
    }
}

/// An SVG document under construction.
struct Svg {
    out: String,
}

impl Svg {
    fn new(title: &str, subtitle: &str) -> Self {
        let mut svg = Self { out: String::new() };
        svg.raw(format_args!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
             viewBox=\"0 0 {WIDTH} {HEIGHT}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <defs><clipPath id=\"plot\"><rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"/></clipPath></defs>\n",
            RIGHT - LEFT,
            BOTTOM - TOP
        ));
        svg.text(LEFT, 30.0, "start", 17.0, title, "font-weight=\"bold\"");
        svg.text(LEFT, 50.0, "start", 12.0, subtitle, "fill=\"#555\"");
        svg
    }

    fn raw(&mut self, args: std::fmt::Arguments<'_>) {
        self.out
            .write_fmt(args)
            .expect("writing to a String cannot fail");
    }

    fn open_clip(&mut self) {
        self.raw(format_args!("<g clip-path=\"url(#plot)\">\n"));
    }

    fn close_clip(&mut self) {
        self.raw(format_args!("</g>\n"));
    }

    fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
        self.raw(format_args!(
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"{stroke}\" stroke-width=\"{width}\"/>\n"
        ));
    }

    fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, dash: &str, width: f64) {
        let points: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let dash = if dash.is_empty() {
            String::new()
        } else {
            format!(" stroke-dasharray=\"{dash}\"")
        };
        self.raw(format_args!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"{width}\"{dash}/>\n",
            points.join(" ")
        ));
    }

    fn text(&mut self, x: f64, y: f64, anchor: &str, size: f64, text: &str, extra: &str) {
        self.raw(format_args!(
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" font-size=\"{size}\" {extra}>{}</text>\n",
            escape(text)
        ));
    }

    fn marker(&mut self, style: MarkerStyle, x: f64, y: f64) {
        let fill = if style.filled { style.colour } else { "white" };
        let paint = format!(
            "fill=\"{fill}\" stroke=\"{}\" stroke-width=\"1.8\"",
            style.colour
        );
        match style.shape {
            Shape::Circle => self.raw(format_args!(
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"5\" {paint}/>\n"
            )),
            Shape::Square => self.raw(format_args!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"9\" height=\"9\" {paint}/>\n",
                x - 4.5,
                y - 4.5
            )),
            Shape::Triangle => self.raw(format_args!(
                "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" {paint}/>\n",
                x,
                y - 6.0,
                x - 5.5,
                y + 4.5,
                x + 5.5,
                y + 4.5
            )),
        }
    }

    /// The frame, with both axes logarithmic and gridded by decade.
    fn axes(&mut self, x: &Axis, y: &Axis, x_label: &str, y_label: &str) {
        self.y_axis(y, y_label);
        for (value, labelled) in x.ticks() {
            let px = x.at(value);
            self.grid_x(px, labelled);
            if labelled {
                self.text(px, BOTTOM + 18.0, "middle", 12.0, &tick_label(value), "");
            }
        }
        self.x_title(x_label);
    }

    /// The frame and a logarithmic y axis.
    fn y_axis(&mut self, y: &Axis, label: &str) {
        for (value, labelled) in y.ticks() {
            let py = y.at(value);
            let (stroke, width) = if labelled {
                ("#d0d0d0", 1.0)
            } else {
                ("#eeeeee", 0.8)
            };
            self.line((LEFT, py), (RIGHT, py), stroke, width);
            if labelled {
                self.text(LEFT - 8.0, py + 4.0, "end", 12.0, &tick_label(value), "");
            }
        }
        self.raw(format_args!(
            "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#333\"/>\n",
            RIGHT - LEFT,
            BOTTOM - TOP
        ));
        let middle = (TOP + BOTTOM) / 2.0;
        self.text(
            22.0,
            middle,
            "middle",
            13.0,
            label,
            &format!("transform=\"rotate(-90 22 {middle})\""),
        );
    }

    /// Ticks at the sizes measured, labels thinned where they would touch.
    fn x_ticks(&mut self, x: &Axis, sizes: &[(f64, String)], label: &str) {
        let mut sizes: Vec<&(f64, String)> = sizes.iter().collect();
        sizes.sort_by(|a, b| a.0.total_cmp(&b.0));
        sizes.dedup_by(|a, b| a.0 == b.0);
        let mut free_from = f64::NEG_INFINITY;
        for (side, text) in sizes {
            let px = x.at(*side);
            self.grid_x(px, true);
            let half = 3.5 * text.chars().count() as f64;
            if px - half >= free_from {
                self.text(px, BOTTOM + 18.0, "middle", 12.0, text, "");
                free_from = px + half + 6.0;
            }
        }
        self.x_title(label);
    }

    fn grid_x(&mut self, px: f64, major: bool) {
        let (stroke, width) = if major {
            ("#d0d0d0", 1.0)
        } else {
            ("#eeeeee", 0.8)
        };
        self.line((px, TOP), (px, BOTTOM), stroke, width);
        self.line((px, BOTTOM), (px, BOTTOM + 5.0), "#333", 1.0);
    }

    fn x_title(&mut self, label: &str) {
        self.text(
            (LEFT + RIGHT) / 2.0,
            BOTTOM + 44.0,
            "middle",
            13.0,
            label,
            "",
        );
    }

    fn legend(&mut self, entries: &[Entry]) {
        let mut y = TOP + 8.0;
        for entry in entries {
            if entry.dash != "none" {
                let dash = if entry.dash.is_empty() {
                    String::new()
                } else {
                    format!(" stroke-dasharray=\"{}\"", entry.dash)
                };
                self.raw(format_args!(
                    "<line x1=\"{LEGEND_X}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{}\" stroke-width=\"2\"{dash}/>\n",
                    LEGEND_X + 28.0,
                    entry.colour
                ));
            }
            if let Some(style) = entry.marker {
                self.marker(style, LEGEND_X + 14.0, y);
            }
            self.text(LEGEND_X + 36.0, y + 4.0, "start", 12.0, &entry.text, "");
            y += 19.0;
        }
    }

    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decade_axis_covers_the_values_with_room() {
        let axis = Axis::decades([0.25, 800.0].into_iter(), 0.0, 100.0);
        assert_eq!((axis.lo, axis.hi), (0.1, 10_000.0));
        assert!((axis.at(1.0) - 20.0).abs() < 1e-9);
        let labelled: Vec<f64> = axis
            .ticks()
            .into_iter()
            .filter(|t| t.1)
            .map(|t| t.0)
            .collect();
        assert_eq!(labelled.len(), 6);
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
        let mut labels = Labels::default();
        let first = labels.place(300.0, 300.0, "1");
        let second = labels.place(300.0, 300.0, "2");
        assert_ne!(first, second);
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(escape("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
