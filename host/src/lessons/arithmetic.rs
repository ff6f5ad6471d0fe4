//! The lesson of arithmetic intensity against the ridge point.

use crate::error::Result;
use crate::families::intensity::{Intensity, IntensityShape};
use crate::family::{Declaration, Family};

use super::lab::{Criterion, Lab, Outcome, Point, Verdict, outcome};

/// FMAs per element from 1 to 2048, doubling: 0.25 to 512 FLOP/B.
pub(super) fn intensity(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    let mut fmas = 1;
    while fmas <= 2048 {
        let shape = IntensityShape {
            n: Intensity::SIZE.on_gpu[0],
            fmas,
        };
        let (timing, correct) = lab.measure::<Intensity>(shape)?;
        points.push(Point::timed(
            shape.intensity(),
            timing,
            Intensity::work(shape).ops / timing.median_ms / 1e6,
            correct,
        ));
        fmas *= 2;
    }
    // The two ceilings, each from the sweep's own end: bandwidth where the
    // FMAs cost nothing, FLOP/s where the bytes cost nothing.
    let bandwidth = points[0].y / points[0].x;
    let flops = points.iter().map(|point| point.y).fold(0.0, f64::max);
    let ridge = flops / bandwidth;
    let (low, high) = (points[0].x, points[points.len() - 1].x);
    let bound = vec![(low, bandwidth * low), (ridge, flops), (high, flops)];
    let below: Vec<&Point> = points.iter().filter(|p| p.x <= ridge / 4.0).collect();
    let flat = below.iter().map(|p| p.ms).fold(0.0, f64::max)
        / below.iter().map(|p| p.ms).fold(f64::INFINITY, f64::min);
    let finding = format!(
        "{:.0} GB/s at the lowest intensity and {:.0} GFLOP/s at the highest: the ridge point of \
         this GPU, as the kernel measures it, is {ridge:.1} FLOP/B. Up to a quarter of it the \
         time stays within {:.0}% of the fastest: the FMAs are free; above it the time grows \
         with them.",
        bandwidth * 1.0,
        flops,
        (flat - 1.0) * 100.0,
    );
    let shown = Criterion::below(flat, 1.2).and(Criterion::exact(!below.is_empty()));
    let verdict = Verdict::confirmed_if(shown, Verdict::NotShown);
    Ok(Outcome {
        bound: Some(bound),
        ..outcome(Intensity::KERNELS[0].name, points, (finding, verdict))
    })
}
