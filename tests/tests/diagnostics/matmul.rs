//! The tiled matmul, correct, or broken in one of the ways `Bug` names:
//! the bounds and race tests run it broken, this one correct.

use gpu_emulator::{self, Diagnostic, Launch};
use gpu_std::Real;
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};
use rand::Rng;

use crate::support::rng;

/// The tiles' width: each tile of A and B is TILE × TILE floats.
pub const TILE: u32 = 16;

/// What is broken in the tiled matmul below.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Bug {
    None,
    NoFirstBarrier,
    NoSecondBarrier,
    /// A's load guard is `a_col <= k`: one element past each row of A.
    AGuardOnePast,
    /// The store's guard is `row <= m`: one row past C.
    StoreGuardOnePast,
}

/// The tiled matmul (one tile width, A m×k, B k×n), with `bug`.
unsafe fn tiled_matmul(
    a: Global<f32>,
    b: Global<f32>,
    c: GlobalMut<f32>,
    [m, n, k]: [u32; 3],
    bug: Bug,
) {
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (row, col) = (block_idx_y() * TILE + ty, block_idx_x() * TILE + tx);
    unsafe {
        let a_tile = SharedArray::<f32>::launch_sized();
        let b_tile = a_tile.after(TILE * TILE);
        let mut sum = 0.0f32;
        for phase in 0..k.div_ceil(TILE) {
            let (a_col, b_row) = (phase * TILE + tx, phase * TILE + ty);
            let a_in = if bug == Bug::AGuardOnePast {
                a_col <= k
            } else {
                a_col < k
            };
            a_tile.write(
                ty * TILE + tx,
                if row < m && a_in {
                    a.read(row_major(row, a_col, k))
                } else {
                    0.0
                },
            );
            b_tile.write(
                ty * TILE + tx,
                if b_row < k && col < n {
                    b.read(row_major(b_row, col, n))
                } else {
                    0.0
                },
            );
            if bug != Bug::NoFirstBarrier {
                sync_threads();
            }
            for i in 0..TILE {
                sum = Real::mul_add(a_tile.read(ty * TILE + i), b_tile.read(i * TILE + tx), sum);
            }
            if bug != Bug::NoSecondBarrier {
                sync_threads();
            }
        }
        let row_in = if bug == Bug::StoreGuardOnePast {
            row <= m
        } else {
            row < m
        };
        if row_in && col < n {
            c.write(row_major(row, col, n), sum);
        }
    }
}

/// Runs the tiled matmul with `bug` on random m×k and k×n matrices; the
/// product, or the diagnostic.
pub fn run_tiled_matmul([m, n, k]: [u32; 3], bug: Bug) -> Result<(Vec<f32>, Vec<f64>), Diagnostic> {
    let mut rng = rng();
    let mut random =
        |len: u32| -> Vec<f32> { (0..len).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect() };
    let (a, b) = (random(m * k), random(k * n));
    let mut c = vec![f32::NAN; (m * n) as usize];
    let expected: Vec<f64> = (0..m * n)
        .map(|index| {
            let (row, col) = (index / n, index % n);
            (0..k)
                .map(|i| {
                    f64::from(a[(row * k + i) as usize]) * f64::from(b[(i * n + col) as usize])
                })
                .sum()
        })
        .collect();
    let (a_view, b_view, c_view) = (
        Global::new("a", &a),
        Global::new("b", &b),
        GlobalMut::new("c", &mut c),
    );
    let launch = Launch::covering((n, m, 1), (TILE, TILE, 1), 2 * TILE * TILE * 4);
    // SAFETY: the views check every access, and the launch covers C.
    gpu_emulator::run("tiled_matmul", &launch, &|| unsafe {
        tiled_matmul(a_view, b_view, c_view, [m, n, k], bug)
    })?;
    Ok((c, expected))
}

#[test]
fn the_tiled_matmul_without_a_bug_is_correct() {
    let (c, expected) = run_tiled_matmul([40, 37, 45], Bug::None).unwrap();
    for (got, want) in c.iter().zip(expected) {
        assert!(
            (f64::from(*got) - want).abs() < 1e-4,
            "{got} against {want}"
        );
    }
}
