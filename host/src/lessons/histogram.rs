//! The lesson of privatisation: a histogram's bins in global memory, in a
//! copy per block in shared memory, and in a copy per warp, on uniform and
//! on skewed bytes.

use crate::error::Result;
use crate::families::histogram::{Bytes, Histogram, HistogramShape};
use crate::family::{Family, Shape};

use super::lab::{Lab, Outcome, Point, Verdict, kernel_traffic, outcome, with_speedups};

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
        "histogram_global, histogram_shared, histogram_warps",
        points,
        (finding, verdict),
    ))
}

/// The finding and verdict from the points, kernel by kernel in teaching
/// order, each on every source of bytes: privatisation shown where the
/// shared copy is faster than the global bins on every source and makes
/// fewer global atomics.
fn judge(points: &[Point]) -> (String, Verdict) {
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
    let (shared, warps) = (over(1, 0), over(2, 1));
    let counted = |kernel: usize| rates(kernel)[0].counted.unwrap_or(f64::NAN);
    let shown = shared.iter().all(|&speedup| speedup > 1.0) && counted(1) < counted(0);
    let finding = format!(
        "GB/s counted, global bins: {}; a copy per block: {}; a copy per warp: {}. The copy per \
         block over the global bins: {}; the copy per warp over the copy per block: faster on \
         {}, slower on {}. Global atomics per KiB counted: {:.0}, {:.1} and {:.1}.",
        rate_list(rates(0), &labels),
        rate_list(rates(1), &labels),
        rate_list(rates(2), &labels),
        with_speedups(&labels, &shared, |_| true),
        with_speedups(&labels, &warps, |speedup| speedup > 1.0),
        with_speedups(&labels, &warps, |speedup| speedup <= 1.0),
        counted(0),
        counted(1),
        counted(2),
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

/// "Uniform 1234, Photo 567, One 89".
fn rate_list(points: &[Point], labels: &[String]) -> String {
    let rates: Vec<String> = labels
        .iter()
        .zip(points)
        .map(|(label, point)| format!("{label} {:.0}", point.y))
        .collect();
    rates.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(rates: [f64; 9], counted: [f64; 3]) -> Vec<Point> {
        (0..9)
            .map(|i| Point::new(i as f64, 1.0, rates[i], true).counting(counted[i / 3]))
            .collect()
    }

    #[test]
    fn privatisation_is_confirmed_only_where_the_block_copy_wins_on_every_source() {
        let counted = [1024.0, 16.0, 16.0];
        let faster = points(
            [100., 50., 10., 900., 800., 300., 950., 850., 600.],
            counted,
        );
        let (finding, verdict) = judge(&faster);
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(finding.contains("One (30.00×)"), "{finding}");
        assert!(
            finding.contains("faster on Uniform (1.06×), Photo (1.06×), One (2.00×)"),
            "{finding}"
        );
        let one_slower = points([100., 50., 10., 900., 800., 9., 950., 850., 600.], counted);
        assert_eq!(judge(&one_slower).1, Verdict::NotShown);
        let same_atomics = points(
            [100., 50., 10., 900., 800., 300., 950., 850., 600.],
            [16.0; 3],
        );
        assert_eq!(judge(&same_atomics).1, Verdict::NotShown);
    }
}
