//! The lesson of Hopper's `wgmma`: one 128×128 tile of C a block, its
//! slices staged by the block's threads into the same swizzled shared
//! memory, multiplied two ways: by `ldmatrix` into registers and
//! `mma.sync` from them (`mma_swizzled`), and by `wgmma`, which reads the
//! slices from shared memory itself (`mma_warpgroups`).

use gpu_host::backend::runs;
use gpu_std::Kernel;

use crate::error::Result;
use crate::families::matmul::MatmulShape;
use crate::families::matmul_bf16::MatmulBf16;
use crate::family::{Declaration, Family};

use super::lab::{Lab, Outcome, Point, Verdict, kernel_traffic, listed, outcome};

/// The two kernels: the warp's way, then the warpgroup's.
const KERNELS: [&str; 2] = ["mma_swizzled", "mma_warpgroups"];

/// C's sides: from one wave of tiles on an H100's 132 SMs (1024: 64
/// tiles) to many.
const SIDES: [usize; 3] = [1024, 2048, 4096];

/// The smallest side at which every SM has tiles to compute, where the
/// time is the tensor cores' and not the few blocks': the verdict is
/// judged from here on.
const JUDGED_FROM: usize = 2048;

/// How much faster `wgmma` must be, from [`JUDGED_FROM`] on, for the claim
/// to hold.
const MARGIN: f64 = 1.1;

/// The shape at which the emulator counts a tile's shared-memory loads:
/// one tile, two slices of 64.
const COUNTED: MatmulShape = MatmulShape {
    m: 128,
    n: 128,
    k: 128,
};

type BfKernel = Kernel<<MatmulBf16 as Declaration>::Args, <MatmulBf16 as Declaration>::Problem>;

/// The family's kernel `name`.
fn kernel(name: &str) -> &'static BfKernel {
    MatmulBf16::KERNELS
        .iter()
        .find(|kernel| kernel.name == name)
        .expect("the tensor-core family declares both kernels")
}

/// Both kernels at every side, with the shared-memory loads the emulator
/// counts and the registers the driver gave each.
pub(super) fn wgmma(lab: &mut Lab<'_>) -> Result<Outcome> {
    let kernels = KERNELS.map(kernel);
    let names = KERNELS.join(", ");
    if let Err(why) = kernels.iter().try_for_each(|kernel| runs(lab.gpu, kernel)) {
        return Ok(Outcome::skipped(&names, &why.to_string()));
    }
    let mut points = Vec::new();
    let mut registers = [0; 2];
    for (index, kernel) in kernels.into_iter().enumerate() {
        let loads = kernel_traffic::<MatmulBf16>(kernel, COUNTED)?
            .shared_load
            .requests;
        let per_slice = loads as f64 / (COUNTED.k / 64) as f64;
        registers[index] = lab.gpu.resources(&kernel.entries())?.registers;
        for side in SIDES {
            let shape = MatmulShape {
                m: side,
                n: side,
                k: side,
            };
            let work = MatmulBf16::work(shape);
            let point =
                lab.point::<MatmulBf16>(kernel, shape, side as f64, |ms| work.ops / ms / 1e6)?;
            points.push(point.counting(per_slice));
        }
    }
    let judged = judge(&points, registers);
    Ok(outcome(&names, points, judged))
}

/// Each side's speedup of `wgmma` over `mma.sync`, with what each issues
/// and holds, and whether `wgmma`, loading nothing through the load/store
/// unit, is [`MARGIN`] faster at every side from [`JUDGED_FROM`] on.
/// `points` are [`KERNELS`]' in order, each at every side of [`SIDES`].
fn judge(points: &[Point], registers: [u32; 2]) -> (String, Verdict) {
    let (warp, warpgroup) = points.split_at(SIDES.len());
    let speedups: Vec<(usize, f64)> = SIDES
        .iter()
        .zip(warp.iter().zip(warpgroup))
        .map(|(&side, (a, b))| (side, a.ms / b.ms))
        .collect();
    let loads = |point: &Point| point.counted.unwrap_or(f64::NAN);
    let finding = format!(
        "warp-level shared-memory loads a tile issues each 64 of k: {:.0} by ldmatrix, {:.0} \
         with wgmma; registers a thread: {} and {}. wgmma against mma.sync: {}.",
        loads(&warp[0]),
        loads(&warpgroup[0]),
        registers[0],
        registers[1],
        listed(&speedups, |&(side, speedup)| format!(
            "{side}³ {speedup:.2}×"
        )),
    );
    let shown = loads(&warpgroup[0]) == 0.0
        && loads(&warp[0]) > 0.0
        && speedups
            .iter()
            .filter(|&&(side, _)| side >= JUDGED_FROM)
            .all(|&(_, speedup)| speedup >= MARGIN);
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both kernels' points at [`SIDES`]: `warp` and `warpgroup` their
    /// times, `loads` what each counts.
    fn points(warp: [f64; 3], warpgroup: [f64; 3], loads: [f64; 2]) -> Vec<Point> {
        [(warp, loads[0]), (warpgroup, loads[1])]
            .iter()
            .flat_map(|&(times, counted)| {
                SIDES.iter().zip(times).map(move |(&side, ms)| {
                    Point::new(side as f64, ms, 1.0 / ms, true).counting(counted)
                })
            })
            .collect()
    }

    #[test]
    fn both_kernels_are_the_familys() {
        assert_eq!(KERNELS.map(|name| kernel(name).name), KERNELS);
    }

    #[test]
    fn wgmma_faster_at_every_judged_side_with_no_loads_confirms_the_claim() {
        let (finding, verdict) = judge(
            &points([0.05, 0.1, 0.6], [0.06, 0.08, 0.5], [48.0, 0.0]),
            [128, 90],
        );
        assert_eq!(verdict, Verdict::Confirmed, "{finding}");
        assert_eq!(
            finding,
            "warp-level shared-memory loads a tile issues each 64 of k: 48 by ldmatrix, 0 with \
             wgmma; registers a thread: 128 and 90. wgmma against mma.sync: 1024³ 0.83×, 2048³ \
             1.25×, 4096³ 1.20×."
        );
    }

    #[test]
    fn wgmma_short_of_the_margin_at_one_judged_side_does_not() {
        let slow = points([0.05, 0.1, 0.6], [0.04, 0.08, 0.56], [48.0, 0.0]);
        assert_eq!(judge(&slow, [128, 90]).1, Verdict::NotShown);
    }

    #[test]
    fn wgmma_that_loads_through_the_load_store_unit_does_not() {
        let loading = points([0.05, 0.1, 0.6], [0.04, 0.08, 0.5], [48.0, 8.0]);
        assert_eq!(judge(&loading, [128, 90]).1, Verdict::NotShown);
        let neither = points([0.05, 0.1, 0.6], [0.04, 0.08, 0.5], [0.0, 0.0]);
        assert_eq!(judge(&neither, [128, 90]).1, Verdict::NotShown);
    }
}
