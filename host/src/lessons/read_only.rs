//! The lesson of the read-only data cache: one stencil's neighbour reads
//! through L1, through the read-only path, and from shared memory.

use crate::error::Result;
use crate::families::readonly::{ReadOnly, ReadOnlyShape};
use crate::family::Declaration;

use super::lab::{Criterion, Lab, Outcome, Verdict, outcome};

/// The radii swept: from reads that device memory bounds to reads that
/// the SM's caches bound.
const RADII: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Each kernel at every radius, and how the read-only path and the tile
/// compare with plain loads.
pub(super) fn read_only(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for kernel in ReadOnly::KERNELS {
        for radius in RADII {
            let shape = ReadOnlyShape {
                n: ReadOnly::SIZE.on_gpu[0],
                radius,
            };
            let y = |ms| shape.window_bytes() / ms / 1e6;
            points.push(lab.point::<ReadOnly>(kernel, shape, f64::from(radius), y)?);
        }
    }
    // Time over plain loads' at each radius, for kernel `k` (0 plain, 1
    // read-only, 2 shared).
    let speedups = |k: usize| -> Vec<f64> {
        (0..RADII.len())
            .map(|r| points[r].ms / points[k * RADII.len() + r].ms)
            .collect()
    };
    let (read_only, shared) = (speedups(1), speedups(2));
    let range = |values: &[f64]| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(0.0, f64::max);
        format!("{low:.2}–{high:.2}×")
    };
    // The claim holds where the read-only path beats plain loads by a
    // margin at the radii where the caches, not device memory, bound.
    let shown = Criterion::all(
        read_only[RADII.len() / 2..]
            .iter()
            .map(|&speedup| Criterion::above(speedup, 1.1)),
    );
    let last = RADII.len() - 1;
    let finding = format!(
        "against plain loads (L1), at r = {} to {}: the read-only path {}, the shared tile {}. \
         At r = {}: plain loads {:.0} GB/s of window reads, read-only {:.0}, shared {:.0}. {}",
        RADII[0],
        RADII[last],
        range(&read_only),
        range(&shared),
        RADII[last],
        points[last].y,
        points[RADII.len() + last].y,
        points[2 * RADII.len() + last].y,
        if shown.holds {
            "The read-only path serves the shared reads faster than L1."
        } else {
            "On this GPU plain global loads are cached in the SM's one L1 and texture cache \
             too, and the read-only path adds no bandwidth of its own."
        }
    );
    let verdict = Verdict::confirmed_if(shown, Verdict::NotShown);
    Ok(outcome(
        "stencil_global, stencil_read_only, stencil_shared",
        points,
        (finding, verdict),
    ))
}
