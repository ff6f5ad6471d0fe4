//! The lesson of host memory a kernel reads in place (zero-copy):
//! page-locked host memory mapped into the GPU's address space, read by the
//! access lessons' copy across the host link, against the same reads of
//! device memory and against copying the input over first.

use gpu_host::backend::{Backend, Transfer};
use gpu_std::Placement;

use crate::error::Result;
use crate::families::access::{Access, AccessShape};
use crate::family::{Declaration, Family, InputOutput};

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome};

/// Elements the copy writes: 16 MiB, read from up to 512 MiB of input at
/// the widest stride, the sectors of which are what crosses the link.
const N: usize = 1 << 22;

/// The strides of the sweep: every read of the last in a sector of its own.
const STRIDES: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Reads of the same data at which the lesson weighs copying it first.
const READS: f64 = 4.0;

/// The least share of the link's copy bandwidth that coalesced reads in
/// place must reach for the lesson to call them a way to use the link.
const IN_PLACE_SHARE: f64 = 0.5;

/// GB/s of the input's bytes the copy uses, n of them read in `ms`.
fn read_rate(ms: f64) -> f64 {
    4.0 * N as f64 / ms / 1e6
}

/// The copy at `stride` with its input in `placement` and its output in
/// device memory, verified then timed: the point at x = stride.
fn placed_copy(lab: &mut Lab<'_>, stride: usize, placement: Placement) -> Result<Point> {
    let shape = AccessShape {
        n: N,
        stride,
        offset: 0,
    };
    let inputs = Access::inputs(shape, &mut lab.rng)?;
    let expected = Access::reference(shape, &inputs);
    let [_, written] = shape.checked_lens()?;
    let gpu = lab.gpu;
    let mut buffers = InputOutput {
        input: gpu.upload_in("input", &inputs, placement)?,
        output: gpu.alloc("output", written)?,
    };
    let kernel = &Access::KERNELS[0];
    Access::launch(gpu, kernel, shape, &mut buffers)?;
    let correct = Access::compare(gpu, &mut buffers, &expected)?.passed();
    let timing = lab.time(gpu, || Access::launch(gpu, kernel, shape, &mut buffers))?;
    let series = match placement {
        Placement::MappedHost => "input in mapped host memory",
        _ => "input in device memory",
    };
    Ok(Point::timed(stride as f64, timing, read_rate(timing.median_ms), correct).on(series))
}

/// The copy reading mapped host memory at every stride, and device memory
/// at a few; the link's bandwidth from a pinned copy of the input's bytes;
/// and what reading in place costs against copying first.
pub(super) fn zero_copy(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for stride in STRIDES {
        points.push(placed_copy(lab, stride, Placement::MappedHost)?);
    }
    for stride in [1, 8, 32] {
        points.push(placed_copy(lab, stride, Placement::Device)?);
    }
    let to_device = Transfer {
        to_device: true,
        pinned: true,
    };
    let Some(copy_ms) = lab.gpu.transfer_ms(4 * N, to_device, lab.runs)? else {
        return Ok(Outcome::skipped(
            Access::KERNELS[0].name,
            "this backend copies nothing to a GPU",
        ));
    };
    let link = Point::new(1.0, copy_ms, read_rate(copy_ms), true)
        .labelled("the input copied to the GPU from pinned host memory".to_string());
    let mapped: Vec<f64> = points[..STRIDES.len()].iter().map(|p| p.y).collect();
    let device = points[STRIDES.len()].y;
    let judged = judge(&mapped, device, link.y);
    points.push(link);
    Ok(outcome(Access::KERNELS[0].name, points, judged))
}

/// The finding and verdict from the rates (GB/s of bytes used) of reads in
/// place at each of [`STRIDES`], of coalesced reads of device memory, and
/// of the link's copy: confirmed where coalesced reads in place reach
/// [`IN_PLACE_SHARE`] of the link, the widest stride less than half the
/// coalesced rate, and [`READS`] reads in place cost more than copying
/// once and reading device memory as often.
fn judge(mapped: &[f64], device: f64, link: f64) -> (String, Judgement) {
    let (coalesced, scattered) = (mapped[0], mapped[mapped.len() - 1]);
    // Milliseconds a GB: each way of reading the same bytes.
    let (in_place, copy, local) = (1e3 / coalesced, 1e3 / link, 1e3 / device);
    let reused = READS * in_place / (copy + READS * local);
    let crossover = match in_place > local {
        true => format!(
            "copying first pays from {:.2} reads on",
            copy / (in_place - local)
        ),
        false => "copying first never pays".to_string(),
    };
    let shown = Criterion::all([
        Criterion::at_least(coalesced / link, IN_PLACE_SHARE),
        Criterion::below(scattered / coalesced, 0.5),
        Criterion::above(reused, 1.0),
    ]);
    let finding = format!(
        "read in place from mapped host memory, coalesced: {coalesced:.1} GB/s, {:.2}× the \
         link's copy from pinned memory ({link:.1} GB/s); at stride {}: {scattered:.1} GB/s \
         of bytes used ({:.3}× stride 1), each warp's reads a sector apiece across the link. \
         Device memory, coalesced: {device:.0} GB/s ({:.0}× the link). Read once, in place \
         costs {in_place:.1} ms a GB against {:.1} ms copied first; {crossover} ({READS} \
         reads: in place {reused:.2}× as long).",
        coalesced / link,
        STRIDES[STRIDES.len() - 1],
        scattered / coalesced,
        device / link,
        copy + local,
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::super::lab::{assert_confirmed_past_spread, own_committed_runs};
    use super::*;

    #[test]
    fn the_committed_h200_runs_at_three_seeds_give_one_verdict() {
        for (file, points) in own_committed_runs("h200", "zero-copy") {
            let mapped: Vec<f64> = points[..STRIDES.len()].iter().map(|p| p.y).collect();
            let (device, link) = (points[STRIDES.len()].y, points[points.len() - 1].y);
            assert_confirmed_past_spread(&file, &points, judge(&mapped, device, link));
        }
    }

    #[test]
    fn the_verdict_weighs_the_link_the_stride_and_reuse() {
        let mapped = [50.0, 26.0, 13.0, 6.5, 5.0, 4.8];
        let (finding, judgement) = judge(&mapped, 3000.0, 55.0);
        assert_eq!(judgement.verdict, Verdict::Confirmed, "{finding}");
        assert!(
            finding.contains("coalesced: 50.0 GB/s, 0.91× the link's copy"),
            "{finding}"
        );
        assert!(finding.contains("at stride 32: 4.8 GB/s"), "{finding}");
        // Copying first takes 18.2 + 0.33 ms a GB against 20 in place:
        // it pays even for one read.
        assert!(
            finding.contains("copying first pays from 0.92 reads on"),
            "{finding}"
        );
        assert!(
            finding.contains("(4 reads: in place 4.10× as long)"),
            "{finding}"
        );
        // Reads in place at a third of the link: not a way to use it.
        let slow = mapped.map(|rate| rate / 3.0);
        assert_eq!(judge(&slow, 3000.0, 55.0).1.verdict, Verdict::NotShown);
        // A scattered warp that loses nothing across the link.
        let flat = [50.0; 6];
        assert_eq!(judge(&flat, 3000.0, 55.0).1.verdict, Verdict::NotShown);
        // Device memory no faster than reads in place: copying first
        // never pays.
        let (finding, judgement) = judge(&mapped, 40.0, 55.0);
        assert_eq!(judgement.verdict, Verdict::NotShown);
        assert!(finding.contains("copying first never pays"), "{finding}");
        // Nor where device memory is exactly as fast.
        let (finding, _) = judge(&mapped, 50.0, 55.0);
        assert!(finding.contains("copying first never pays"), "{finding}");
    }
}
