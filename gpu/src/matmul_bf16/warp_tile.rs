//! What a warp does with a staged slice, in every staged rung: its
//! fragments by `ldmatrix`, A's directly and B's transposed, and one
//! `mma.sync` for each 16×8 of its warp tile, 16 of k at a time; then its
//! sums stored to C.

use gpu_std::global::{GlobalMut, row_major};
use gpu_std::mma::{Accumulator, FragmentA, FragmentB, ldmatrix, mma_sync};
use gpu_std::shared::SharedArray;
use gpu_std::{bf16, thread::*};

use super::geometry::{MMA_K, Tile};
use super::layout::Layout;

/// A warp's sums: `M` `mma` tiles down, `N` across.
pub type Sums<const M: usize, const N: usize> = [[Accumulator; N]; M];

/// This warp's tile's first row and column in the block's tile.
#[inline(always)]
pub fn warp_origin(tile: Tile) -> (u32, u32) {
    let warp = thread_idx_x() / 32;
    (
        warp / tile.warps_across * tile.warp_rows(),
        warp % tile.warps_across * tile.warp_cols(),
    )
}

/// The warp's fragments of 16 of k from `i` on: A's `M` by `ldmatrix`,
/// B's `N` transposed on the way, two by each `ldmatrix`.
///
/// # Safety
/// As [`multiply_slice`].
#[inline(always)]
#[allow(clippy::needless_range_loop)]
pub unsafe fn fragments<const M: usize, const N: usize>(
    tile: Tile,
    layout: Layout,
    stage: SharedArray<bf16>,
    i: u32,
) -> Fragments<M, N> {
    let lane = thread_idx_x() % 32;
    let (warp_row, warp_col) = warp_origin(tile);
    let mut a = [FragmentA::ZERO; M];
    let mut b = [FragmentB::ZERO; N];
    // Lane l names row l % 16 of a 16×16 block of A, its left or right
    // half: the four 8×8 matrices of a fragment. Index loops over
    // constant counts, which LLVM unrolls into registers.
    for t in 0..M {
        let row = warp_row + 16 * t as u32 + lane % 16;
        // SAFETY: by this function's contract.
        a[t] = FragmentA(unsafe { ldmatrix(stage, layout.a(tile, row, i + lane / 16 * 8), false) });
    }
    // Lane l names row l % 16 of a 16×16 block of B (k), its left or
    // right 8 columns: two fragments.
    for pair in 0..N / 2 {
        let col = warp_col + 16 * pair as u32 + lane / 16 * 8;
        // SAFETY: as for A.
        let [b0, b1, b2, b3] = unsafe { ldmatrix(stage, layout.b(tile, i + lane % 16, col), true) };
        b[2 * pair] = FragmentB([b0, b1]);
        b[2 * pair + 1] = FragmentB([b2, b3]);
    }
    (a, b)
}

/// Adds the products of the slice in `stage` (its first element) to the
/// warp's `sums`, 16 of k at a time, loading the next 16's fragments
/// before multiplying these, as CUTLASS does, so that no `mma` waits on
/// the `ldmatrix` just issued. (Measured on the H100: the same time as
/// loading each fragment just before its `mma`, which ptxas had already
/// scheduled apart.)
///
/// # Safety
/// The slice was staged with `layout` and made visible to the block
/// (a barrier after the copies landed); every lane of the warp calls it.
#[inline(always)]
pub unsafe fn multiply_slice<const M: usize, const N: usize>(
    tile: Tile,
    layout: Layout,
    stage: SharedArray<bf16>,
    sums: &mut Sums<M, N>,
) {
    let steps = tile.slice / MMA_K;
    // SAFETY: by this function's contract.
    let mut current = unsafe { fragments::<M, N>(tile, layout, stage, 0) };
    for step in 0..steps {
        let next = if step + 1 < steps {
            // SAFETY: as above.
            unsafe { fragments::<M, N>(tile, layout, stage, (step + 1) * MMA_K) }
        } else {
            current
        };
        multiply(&current, sums);
        current = next;
    }
}

/// A warp's fragments of A and B for 16 of k.
pub type Fragments<const M: usize, const N: usize> = ([FragmentA<bf16>; M], [FragmentB<bf16>; N]);

/// Adds one step's products to the warp's `sums`: an `mma` for each 16×8
/// tile, consecutive ones sharing A's fragment.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
pub fn multiply<const M: usize, const N: usize>((a, b): &Fragments<M, N>, sums: &mut Sums<M, N>) {
    for t in 0..M {
        for u in 0..N {
            sums[t][u] = mma_sync(a[t], b[u], sums[t][u]);
        }
    }
}

/// Two neighbouring elements of a row of C, stored together
/// (`st.global.v2.f32`): a lane's sums come in such pairs.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
pub(super) struct TwoSums(pub(super) [f32; 2]);

/// Stores the warp's `sums` into C, whose block tile starts at (`row0`,
/// `col0`), two neighbouring elements a store, those past m or n left out.
///
/// # Safety
/// `c` is m×n, n even; no other thread writes these elements.
#[inline(always)]
#[allow(clippy::needless_range_loop)]
pub unsafe fn store<const M: usize, const N: usize>(
    tile: Tile,
    sums: &Sums<M, N>,
    c: GlobalMut<f32>,
    (row0, col0): (u32, u32),
    (m, n): (u32, u32),
) {
    let lane = thread_idx_x() % 32;
    let (warp_row, warp_col) = warp_origin(tile);
    let (row, col) = (row0 + warp_row + lane / 4, col0 + warp_col + 2 * (lane % 4));
    // SAFETY: C starts on a 256-byte boundary and n is even, so every
    // pair of columns 2q and 2q + 1 is one aligned element of the view.
    let pairs = unsafe { c.cast::<TwoSums>() };
    // Index loops over constant counts, unrolled whole so that the sums
    // stay in registers; a pair is inside C when its first column is, n
    // being even.
    for t in 0..M {
        for half in 0..2 {
            let r = row + 16 * t as u32 + 8 * half as u32;
            for u in 0..N {
                let j = col + 8 * u as u32;
                if r < m && j < n {
                    let [first, second] = [sums[t][u].0[2 * half], sums[t][u].0[2 * half + 1]];
                    // SAFETY: inside C; each pair is one lane's.
                    unsafe { pairs.write(row_major(r, j, n) / 2, TwoSums([first, second])) };
                }
            }
        }
    }
}
