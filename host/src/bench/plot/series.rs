//! The report's rows as the plots draw them: one series per kernel, and the
//! colour and marker each kernel has in every plot.

use plotters::prelude::RGBColor;

use crate::bench::json::{Report, Role, Row};

use super::canvas::{MarkerStyle, PALETTE, Shape};

/// The report's rows grouped by kernel, in report order, for one family or
/// all.
pub(super) fn series<'a>(report: &'a Report, family: Option<&str>) -> Vec<Vec<&'a Row>> {
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

/// One colour per kernel, the same in every plot: its place in its family.
pub(super) fn colours(report: &Report) -> Vec<(&str, RGBColor)> {
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

/// The marker of `row`: its family's shape, its kernel's colour, filled
/// for a kernel and hollow for a baseline.
pub(super) fn marker_style(
    report: &Report,
    row: &Row,
    colours: &[(&str, RGBColor)],
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
