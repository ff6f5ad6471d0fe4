//! The lessons of global-memory accesses: coalescing, alignment, width.

use crate::error::Result;
use crate::families::access::{Access, AccessShape};
use crate::families::width::{Width, WidthShape};
use crate::family::Declaration;

use super::lab::{
    COUNTED_ELEMENTS, Criterion, Lab, Outcome, Point, Verdict, copy_rate, fetched_per_used,
    kernel_traffic, listed, mean_y, outcome,
};

/// The strided copy at `stride` and `offset`, as the point at `x`: its
/// bandwidth of bytes used, and the sectors the emulator counts for it.
fn strided_copy(lab: &mut Lab<'_>, stride: usize, offset: usize, x: f64) -> Result<Point> {
    let shape = |n| AccessShape { n, stride, offset };
    let n = Access::SIZE.on_gpu[0];
    let (timing, correct) = lab.measure::<Access>(shape(n))?;
    Ok(
        Point::timed(x, timing, copy_rate(n, timing.median_ms), correct)
            .counting(fetched_per_used::<Access>(shape(COUNTED_ELEMENTS))?),
    )
}

/// The copy at each stride, and the sectors the emulator counts for it.
pub(super) fn coalescing(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for stride in [1, 2, 4, 8, 16, 32] {
        points.push(strided_copy(lab, stride, 0, stride as f64)?);
    }
    let (first, last) = (&points[0], &points[points.len() - 1]);
    let ratio = last.y / first.y;
    let finding = format!(
        "stride 1: {:.0} GB/s, every byte fetched used; stride {}: {:.0} GB/s ({:.2}× stride 1), \
         the reads fetching {:.0} bytes per byte used (emulator's sector count).",
        first.y,
        last.x,
        last.y,
        ratio,
        last.counted.unwrap_or(f64::NAN),
    );
    let verdict = Verdict::confirmed_if(Criterion::below(ratio, 0.5), Verdict::NotShown);
    Ok(outcome(Access::KERNELS[0].name, points, (finding, verdict)))
}

/// The copy from each offset of a sector and a line and one past.
pub(super) fn alignment(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for offset in 0..=32 {
        points.push(strided_copy(lab, 1, offset, offset as f64)?);
    }
    let aligned_to = |sector: bool| {
        mean_y(&points, |point| {
            (point.x as usize).is_multiple_of(8) == sector
        })
    };
    let (aligned, misaligned) = (aligned_to(true), aligned_to(false));
    let worst = points
        .iter()
        .map(|point| point.y)
        .fold(f64::INFINITY, f64::min);
    let extra = points
        .iter()
        .map(|point| point.counted.unwrap_or(1.0))
        .fold(1.0, f64::max);
    let ratio = misaligned / aligned;
    let finding = format!(
        "offsets that are multiples of 8 (32 bytes): {aligned:.0} GB/s on average; the others: \
         {misaligned:.0} GB/s ({ratio:.3}×, worst {:.3}×), though their reads fetch {extra:.2} \
         bytes per byte used (emulator's sector count): the extra sector is the neighbouring \
         warp's, which L1 and L2 then serve.",
        worst / aligned,
    );
    let verdict = Verdict::confirmed_if(Criterion::below(ratio, 0.95), Verdict::Hidden);
    Ok(outcome(Access::KERNELS[0].name, points, (finding, verdict)))
}

/// Every width's copy, and the two pairs', with the bytes each fetches
/// per byte used as the emulator counts them.
pub(super) fn width(lab: &mut Lab<'_>) -> Result<Outcome> {
    let shape = WidthShape {
        bytes: Width::SIZE.on_gpu[0],
    };
    let mut points = Vec::new();
    for kernel in Width::KERNELS {
        let (timing, correct) = lab.measure_on::<Width>(lab.gpu, kernel, shape)?;
        let loads = kernel_traffic::<Width>(kernel, WidthShape { bytes: 4096 })?.global_load;
        let pair = kernel.name.strip_prefix("copy_pairs_");
        let width = kernel.name.strip_prefix("copy_bytes_");
        let label = pair.map(|alignment| format!("a pair of f32, {}", alignment.replace('_', " ")));
        let x = width.map_or(8.0, |bytes| bytes.parse().unwrap_or(f64::NAN));
        let rate = 2.0 * shape.bytes as f64 / timing.median_ms / 1e6;
        let point = Point::timed(x, timing, rate, correct);
        let fetched = loads.bytes_fetched() as f64 / loads.bytes_used as f64;
        points.push(Point { label, ..point }.counting(fetched));
    }
    let (widths, pairs): (Vec<&Point>, Vec<&Point>) =
        points.iter().partition(|point| point.label.is_none());
    let by_width = listed(widths, |point| format!("{} B {:.0} GB/s", point.x, point.y));
    let (align_4, align_8) = (pairs[0], pairs[1]);
    let finding = format!(
        "by bytes per access: {}. A pair of f32 aligned to 4 bytes: {:.0} GB/s, its two 4-byte \
         loads fetching {:.2} bytes per byte used; aligned to 8: {:.0} GB/s, one 8-byte load, \
         {:.2}: the aligned pair copies {:.2}× as fast.",
        by_width,
        align_4.y,
        align_4.counted.unwrap_or(f64::NAN),
        align_8.y,
        align_8.counted.unwrap_or(f64::NAN),
        align_8.y / align_4.y,
    );
    let verdict = Verdict::confirmed_if(
        Criterion::below(align_4.y / align_8.y, 0.95),
        Verdict::Hidden,
    );
    Ok(outcome(
        "copy_bytes_{1,2,4,8,16}, copy_pairs_align_{4,8}",
        points,
        (finding, verdict),
    ))
}
