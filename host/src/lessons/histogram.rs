//! The lesson of privatisation: a histogram's bins in global memory
//! (updated lane by lane, or once per distinct byte of a warp), in a copy
//! per block in shared memory, and in a copy per warp, on uniform and on
//! skewed bytes.

use crate::error::Result;
use crate::families::histogram::{Bytes, Histogram, HistogramShape};
use crate::family::{Declaration, Shape};

use super::lab::{
    Criterion, Judgement, Lab, Outcome, Point, Verdict, kernel_traffic, listed, outcome,
    with_speedups,
};

/// Bytes the emulator counts the atomics of.
const COUNTED_BYTES: usize = 1 << 16;

/// Every kernel on every source of bytes; the emulator's global atomics
/// per KiB counted beside each.
pub(super) fn privatisation(lab: &mut Lab<'_>) -> Result<Outcome> {
    let bytes = Histogram::SIZE.on_gpu[0];
    let mut points = Vec::new();
    for kernel in Histogram::KERNELS {
        let counted = HistogramShape {
            bytes: COUNTED_BYTES,
            from: Bytes::Uniform,
        };
        let atomics = kernel_traffic::<Histogram>(kernel, counted)?.global_atomic;
        let per_kib = atomics.updates as f64 * 1024.0 / COUNTED_BYTES as f64;
        for from in Bytes::ALL {
            let shape = HistogramShape { bytes, from };
            let x = (points.len() + 1) as f64;
            let point = lab.point::<Histogram>(kernel, shape, x, |ms| bytes as f64 / ms / 1e6)?;
            points.push(
                point
                    .labelled(format!("{}, {} bytes", kernel.name, shape.short()))
                    .counting(per_kib),
            );
        }
    }
    let (finding, verdict) = judge(&points);
    Ok(outcome(
        "histogram_global, histogram_aggregated, histogram_shared, histogram_warps",
        points,
        (finding, verdict),
    ))
}

/// The finding and verdict from the points, kernel by kernel in teaching
/// order (global, aggregated, shared, warps), each on every source of
/// bytes: privatisation shown where the block's copy is faster than the
/// global bins on every source and makes fewer global atomics.
fn judge(points: &[Point]) -> (String, Judgement) {
    let sources = Bytes::ALL.len();
    let rates = |kernel: usize| &points[kernel * sources..(kernel + 1) * sources];
    let labels: Vec<String> = Bytes::ALL.iter().map(|from| format!("{from:?}")).collect();
    let over = |kernel: usize, base: usize| -> Vec<f64> {
        rates(kernel)
            .iter()
            .zip(rates(base))
            .map(|(one, other)| one.y / other.y)
            .collect()
    };
    let (aggregated, shared, warps) = (over(1, 0), over(2, 0), over(3, 2));
    let counted = |kernel: usize| rates(kernel)[0].counted.unwrap_or(f64::NAN);
    let faster = Criterion::all(shared.iter().map(|&speedup| Criterion::above(speedup, 1.0)));
    let shown = faster.and(Criterion::exact(counted(2) < counted(0)));
    let finding = format!(
        "GB/s counted, global bins: {}; aggregated in the warp: {}; a copy per block: {}; a \
         copy per warp: {}. Over the global bins, aggregated: {}; a copy per block: {}. The copy \
         per warp over the copy per block: faster on {}, slower on {}. Global atomics per KiB \
         of uniform bytes: {:.0}, {:.0}, {:.1} and {:.1}.",
        rate_list(rates(0), &labels),
        rate_list(rates(1), &labels),
        rate_list(rates(2), &labels),
        rate_list(rates(3), &labels),
        with_speedups(&labels, &aggregated, |_| true),
        with_speedups(&labels, &shared, |_| true),
        with_speedups(&labels, &warps, |speedup| speedup > 1.0),
        with_speedups(&labels, &warps, |speedup| speedup <= 1.0),
        counted(0),
        counted(1),
        counted(2),
        counted(3),
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

/// "Uniform 1234, Photo 567, One 89".
fn rate_list(points: &[Point], labels: &[String]) -> String {
    listed(labels.iter().zip(points), |(label, point)| {
        format!("{label} {:.0}", point.y)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(rates: [f64; 12], counted: [f64; 4]) -> Vec<Point> {
        (0..12)
            .map(|i| Point::new(i as f64, 1.0, rates[i], true).counting(counted[i / 3]))
            .collect()
    }

    #[test]
    fn privatisation_is_confirmed_only_where_the_block_copy_wins_on_every_source() {
        let counted = [1024.0, 1000.0, 16.0, 16.0];
        let aggregated = [100., 60., 300.];
        let faster = [aggregated, [900., 800., 300.], [950., 850., 600.]].concat();
        let rates = |rest: &[f64]| -> [f64; 12] {
            [&[100., 50., 10.][..], rest].concat().try_into().unwrap()
        };
        let (finding, verdict) = judge(&points(rates(&faster), counted));
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(
            finding.contains("aggregated: Uniform (1.00×), Photo (1.20×), One (30.00×)"),
            "{finding}"
        );
        assert!(
            finding.contains("a copy per block: Uniform (9.00×), Photo (16.00×), One (30.00×)"),
            "{finding}"
        );
        assert!(
            finding.contains("faster on Uniform (1.06×), Photo (1.06×), One (2.00×)"),
            "{finding}"
        );
        let one_slower = [aggregated, [900., 800., 9.], [950., 850., 600.]].concat();
        assert_eq!(
            judge(&points(rates(&one_slower), counted)).1,
            Verdict::NotShown
        );
        assert_eq!(
            judge(&points(rates(&faster), [16.0; 4])).1,
            Verdict::NotShown
        );
    }
}
