//! The lesson of unified (managed) memory: pages that move to the GPU when
//! a kernel first touches them, against the same pages prefetched ahead of
//! the kernel and against an explicit copy into device memory.

use std::cell::RefCell;

use gpu_host::backend::{Backend, Transfer};
use gpu_std::Placement;

use crate::error::Result;
use crate::families::access::{Access, AccessShape};
use crate::family::{Declaration, Family, InputOutput};

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome};

/// The input's sizes, in MiB: each allocation is checked against the
/// GPU's free memory before it is made (`Error::ManagedBeyondFree`).
const SIZES_MIB: [usize; 3] = [64, 256, 1024];

/// How much longer than a prefetch a first touch must take, at every
/// size, for the lesson to call faulting the pages in the dearer way.
const FAULT_COST: f64 = 1.5;

/// The least share of an explicit copy's rate a prefetch must reach, at
/// the largest size, for the lesson to call it close.
const PREFETCH_SHARE: f64 = 0.5;

/// The ways of getting the input to the kernel, in the order they are
/// plotted.
const WAYS: [&str; 3] = [
    "managed, faulted in by the kernel",
    "managed, prefetched first",
    "copied to device memory first",
];

/// At `mib` MiB of input: the stride-1 copy reading a managed input whose
/// pages start on the host, faulted in or prefetched, and the same copy
/// of a device input after a pinned copy of its bytes; each point's y is
/// GB/s of the input moved and read.
fn at_size(lab: &mut Lab<'_>, mib: usize) -> Result<[Point; 3]> {
    let n = (mib << 20) / 4;
    let shape = AccessShape {
        n,
        stride: 1,
        offset: 0,
    };
    let inputs = Access::inputs(shape, &mut lab.rng)?;
    let expected = Access::reference(shape, &inputs);
    let gpu = lab.gpu;
    let kernel = &Access::KERNELS[0];
    let rate = |ms: f64| (mib << 20) as f64 / ms / 1e6;
    // The runs' setup reads the input while the launch takes every buffer.
    let managed = RefCell::new(InputOutput {
        input: gpu.upload_in("input", &inputs, Placement::Managed)?,
        output: gpu.alloc("output", n)?,
    });
    let to_host = || Ok(gpu.prefetch(&managed.borrow().input, false)?);
    let managed_way = |prefetch: bool| -> Result<Point> {
        let launch = || {
            let mut buffers = managed.borrow_mut();
            if prefetch {
                gpu.prefetch(&buffers.input, true)?;
            }
            Access::launch(gpu, kernel, shape, &mut buffers)
        };
        gpu.poison(&mut managed.borrow_mut().output)?;
        to_host()?;
        launch()?;
        let correct = Access::compare(gpu, &mut managed.borrow_mut(), &expected)?.passed();
        let timing = gpu.timing_after(lab.runs, to_host, launch)?;
        let point = Point::timed(mib as f64, timing, rate(timing.median_ms), correct);
        Ok(point.on(WAYS[usize::from(prefetch)]))
    };
    let (faulted, prefetched) = (managed_way(false)?, managed_way(true)?);
    drop(managed);
    let mut device = InputOutput {
        input: gpu.upload("input", &inputs)?,
        output: gpu.alloc("output", n)?,
    };
    Access::launch(gpu, kernel, shape, &mut device)?;
    let correct = Access::compare(gpu, &mut device, &expected)?.passed();
    let timing = lab.time(gpu, || Access::launch(gpu, kernel, shape, &mut device))?;
    let to_device = Transfer {
        to_device: true,
        pinned: true,
    };
    let copy_ms = gpu.transfer_ms(mib << 20, to_device, lab.runs)?;
    let ms = timing.median_ms + copy_ms.unwrap_or(f64::NAN);
    let copied = Point::timed(mib as f64, timing, rate(ms), correct);
    Ok([faulted, prefetched, Point { ms, ..copied }.on(WAYS[2])])
}

/// Each way at each size.
pub(super) fn unified(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for mib in SIZES_MIB {
        points.extend(at_size(lab, mib)?);
    }
    let rates: Vec<[f64; 3]> = points
        .chunks(3)
        .map(|ways| [ways[0].y, ways[1].y, ways[2].y])
        .collect();
    let judged = judge(&rates);
    Ok(outcome(Access::KERNELS[0].name, points, judged))
}

/// The finding and verdict from each size's rates (GB/s of the input
/// moved and read) of the three [`WAYS`]: confirmed where a prefetch is
/// [`FAULT_COST`] times as fast as faulting at every size, and reaches
/// [`PREFETCH_SHARE`] of an explicit copy's rate at the largest.
fn judge(rates: &[[f64; 3]]) -> (String, Judgement) {
    let by_size = SIZES_MIB
        .iter()
        .zip(rates)
        .map(|(mib, [faulted, prefetched, copied])| {
            format!(
                "{mib} MiB: faulted in {faulted:.1} GB/s, prefetched {prefetched:.1} \
             ({:.2}×), copied {copied:.1}",
                prefetched / faulted
            )
        });
    let [_, prefetched, copied] = rates[rates.len() - 1];
    let shown = Criterion::all(
        rates
            .iter()
            .map(|[faulted, prefetched, _]| Criterion::at_least(prefetched / faulted, FAULT_COST))
            .chain([Criterion::at_least(prefetched / copied, PREFETCH_SHARE)]),
    );
    let finding = format!(
        "the input moved to the GPU and read once, its pages on the host before each run: {}. \
         At the largest size a prefetch moves the pages at {:.2}× an explicit copy's rate.",
        by_size.collect::<Vec<_>>().join("; "),
        prefetched / copied,
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::super::lab::{assert_confirmed_past_spread, own_committed_runs};
    use super::*;

    #[test]
    fn the_committed_h200_runs_at_three_seeds_give_one_verdict() {
        for (file, points) in own_committed_runs("h200", "unified") {
            let rates: Vec<[f64; 3]> = points
                .chunks(3)
                .map(|ways| [ways[0].y, ways[1].y, ways[2].y])
                .collect();
            assert_confirmed_past_spread(&file, &points, judge(&rates));
        }
    }

    #[test]
    fn the_verdict_weighs_faults_against_a_prefetch_and_a_prefetch_against_a_copy() {
        let rates = [[8.0, 30.0, 40.0], [9.0, 40.0, 48.0], [9.5, 45.0, 52.0]];
        let (finding, judgement) = judge(&rates);
        assert_eq!(judgement.verdict, Verdict::Confirmed, "{finding}");
        assert!(
            finding.contains("64 MiB: faulted in 8.0 GB/s, prefetched 30.0 (3.75×), copied 40.0"),
            "{finding}"
        );
        assert!(
            finding.ends_with("at 0.87× an explicit copy's rate."),
            "{finding}"
        );
        // Faults as fast as a prefetch at one size.
        let mut even = rates;
        even[1][0] = 39.0;
        assert_eq!(judge(&even).1.verdict, Verdict::NotShown);
        // A prefetch far slower than a copy.
        let mut slow = rates;
        slow[2][2] = 200.0;
        assert_eq!(judge(&slow).1.verdict, Verdict::NotShown);
    }
}
