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
//! Each legend sits beside its chart, never over the data. Each kind of
//! plot, a lesson's too, is a module of its own, drawn on one canvas
//! (`canvas`) from the report's rows grouped into series (`series`).

mod against_parameter;
mod canvas;
mod lesson;
mod roofline;
mod series;
mod throughput;
mod versus_cpu;

use crate::error::Result;

use super::json::Report;

pub use self::against_parameter::against_parameter;
pub use self::lesson::{LessonLine, lesson};
pub use self::roofline::roofline;
pub use self::throughput::throughput;
pub use self::versus_cpu::versus_cpu;

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
