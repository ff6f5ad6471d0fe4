//! The lesson of Hopper's `wgmma`: one 128×128 tile of C a block, its
//! slices staged by the block's threads into the same swizzled shared
//! memory, multiplied three ways: by `ldmatrix` into registers and
//! `mma.sync` from them (`mma_swizzled`); by `wgmma` with A still loaded
//! by `ldmatrix` and B read from shared memory by the tensor cores
//! (`mma_a_registers`); and by `wgmma` reading both itself
//! (`mma_warpgroups`).

use gpu_host::backend::runs;
use gpu_std::Kernel;

use crate::error::Result;
use crate::families::matmul::MatmulShape;
use crate::families::matmul_bf16::MatmulBf16;
use crate::family::{Declaration, Family};

use super::lab::{
    Criterion, Judgement, Lab, Outcome, Point, Verdict, kernel_traffic, listed, outcome,
};

/// The three kernels: the warp's way, the warpgroup's with A from
/// registers, the warpgroup's from shared memory alone.
const KERNELS: [&str; 3] = ["mma_swizzled", "mma_a_registers", "mma_warpgroups"];

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
        .expect("the tensor-core family declares the lesson's kernels")
}

/// Each kernel at every side, with the shared-memory loads the emulator
/// counts and the registers the driver gave each.
pub(super) fn wgmma(lab: &mut Lab<'_>) -> Result<Outcome> {
    let kernels = KERNELS.map(kernel);
    let names = KERNELS.join(", ");
    if let Err(why) = kernels.iter().try_for_each(|kernel| runs(lab.gpu, kernel)) {
        return Ok(Outcome::skipped(&names, &why.to_string()));
    }
    let mut points = Vec::new();
    let mut registers = [0; 3];
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

/// Each side's speedup of each `wgmma` kernel over `mma.sync`, with what
/// each issues and holds, and whether `wgmma` from shared memory alone,
/// loading nothing through the load/store unit, is [`MARGIN`] faster at
/// every side from [`JUDGED_FROM`] on, A from registers loading fewer than
/// `mma.sync` and more than none. `points` are [`KERNELS`]' in order, each
/// at every side of [`SIDES`].
fn judge(points: &[Point], registers: [u32; 3]) -> (String, Judgement) {
    let (warp, rest) = points.split_at(SIDES.len());
    let (a_registers, shared) = rest.split_at(SIDES.len());
    let speedups = |kernel: &[Point]| -> Vec<(usize, f64)> {
        SIDES
            .iter()
            .zip(warp.iter().zip(kernel))
            .map(|(&side, (a, b))| (side, a.ms / b.ms))
            .collect()
    };
    let sides = |speedups: &[(usize, f64)]| {
        listed(speedups, |&(side, speedup)| {
            format!("{side}³ {speedup:.2}×")
        })
    };
    let loads = |point: &Point| point.counted.unwrap_or(f64::NAN);
    let [warp_loads, a_loads, shared_loads] =
        [warp, a_registers, shared].map(|kernel| loads(&kernel[0]));
    let from_shared = speedups(shared);
    let finding = format!(
        "warp-level shared-memory loads a tile issues each 64 of k: {warp_loads:.0} by ldmatrix \
         for mma.sync, {a_loads:.0} for wgmma's A from registers, {shared_loads:.0} with wgmma \
         from shared memory alone; registers a thread: {}, {} and {}. Against mma.sync, A from \
         registers: {}; from shared memory alone: {}.",
        registers[0],
        registers[1],
        registers[2],
        sides(&speedups(a_registers)),
        sides(&from_shared),
    );
    let counted = shared_loads == 0.0 && a_loads > 0.0 && a_loads < warp_loads;
    let faster = from_shared
        .iter()
        .filter(|&&(side, _)| side >= JUDGED_FROM)
        .map(|&(_, speedup)| Criterion::at_least(speedup, MARGIN));
    let shown = Criterion::exact(counted).and(Criterion::all(faster));
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three kernels' points at [`SIDES`]: `times` each one's, `loads`
    /// what each counts.
    fn points(times: [[f64; 3]; 3], loads: [f64; 3]) -> Vec<Point> {
        times
            .iter()
            .zip(loads)
            .flat_map(|(&times, counted)| {
                SIDES.iter().zip(times).map(move |(&side, ms)| {
                    Point::new(side as f64, ms, 1.0 / ms, true).counting(counted)
                })
            })
            .collect()
    }

    const WARP: [f64; 3] = [0.05, 0.1, 0.6];
    const A_REGISTERS: [f64; 3] = [0.05, 0.09, 0.55];

    #[test]
    fn the_lessons_kernels_are_the_familys() {
        assert_eq!(KERNELS.map(|name| kernel(name).name), KERNELS);
    }

    #[test]
    fn wgmma_faster_at_every_judged_side_with_no_loads_confirms_the_claim() {
        let (finding, verdict) = judge(
            &points([WARP, A_REGISTERS, [0.06, 0.08, 0.5]], [48.0, 8.0, 0.0]),
            [128, 110, 90],
        );
        assert_eq!(verdict, Verdict::Confirmed, "{finding}");
        assert_eq!(
            finding,
            "warp-level shared-memory loads a tile issues each 64 of k: 48 by ldmatrix for \
             mma.sync, 8 for wgmma's A from registers, 0 with wgmma from shared memory alone; \
             registers a thread: 128, 110 and 90. Against mma.sync, A from registers: 1024³ \
             1.00×, 2048³ 1.11×, 4096³ 1.09×; from shared memory alone: 1024³ 0.83×, 2048³ \
             1.25×, 4096³ 1.20×."
        );
    }

    #[test]
    fn wgmma_short_of_the_margin_at_one_judged_side_does_not() {
        let slow = points([WARP, A_REGISTERS, [0.04, 0.08, 0.56]], [48.0, 8.0, 0.0]);
        assert_eq!(judge(&slow, [128, 110, 90]).1, Verdict::NotShown);
    }

    #[test]
    fn wgmma_that_loads_through_the_load_store_unit_does_not() {
        let fast = [0.04, 0.08, 0.5];
        for loads in [
            [48.0, 8.0, 8.0],
            [0.0, 0.0, 0.0],
            [48.0, 48.0, 0.0],
            [48.0, 0.0, 0.0],
        ] {
            let judged = judge(&points([WARP, A_REGISTERS, fast], loads), [128, 110, 90]);
            assert_eq!(judged.1, Verdict::NotShown, "{loads:?}");
        }
    }
}
