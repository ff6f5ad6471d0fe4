//! The first Hopper rungs: each slice of A and B staged by the block's
//! threads in the swizzled layout of `mma_swizzled`, which with slices of
//! 64 is the one a 128-byte-swizzled tensor map writes (rows of 128 bytes,
//! B in panels of 64 columns), and multiplied by two warpgroups' `wgmma`.
//! First A still goes through registers, each warp loading its rows by
//! `ldmatrix` as for `mma.sync`, and only B is read by the tensor cores
//! from shared memory; then both are: no `ldmatrix`, no fragments in
//! registers.

use gpu_std::bulk::fence_proxy_async_shared_cta;
use gpu_std::global::{Global, GlobalMut, Line, row_major};
use gpu_std::mma::{FragmentA, ldmatrix};
use gpu_std::shared::SharedArray;
use gpu_std::wgmma::{Accumulators, InFlight, MatrixDescriptor, Swizzle};
use gpu_std::{bf16, thread::*};

use super::geometry::{CHUNK, Tile};
use super::layout::Layout;
use super::staged::{Operand, each_chunk};
use super::warp_tile::TwoSums;

/// The block's tile: 128×128 of C, slices of 64 of k (128-byte rows of
/// A), two warpgroups of 64 rows each.
pub const WARPGROUPS: Tile = Tile {
    rows: 128,
    cols: 128,
    slice: 64,
    warps_down: 2,
    warps_across: 4,
    stages: 1,
};

const _: () = assert!(WARPGROUPS.copies_whole_rows());

/// Elements of one slice of A, and of one 64-column panel of B's.
const A_ELEMENTS: u32 = WARPGROUPS.rows * WARPGROUPS.slice;
const PANEL_ELEMENTS: u32 = WARPGROUPS.slice * 64;
/// 16-byte chunks of a slice each thread copies.
const CHUNKS: usize =
    ((A_ELEMENTS + WARPGROUPS.slice * WARPGROUPS.cols) / CHUNK / WARPGROUPS.threads()) as usize;

/// Where the warpgroups' `wgmma`s take A from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandA {
    /// Registers, each warp's 16 rows loaded by `ldmatrix`.
    Registers,
    /// Shared memory, through a descriptor.
    Shared,
}

/// `wgmma` steps of 16 k in a slice.
const STEPS: usize = (WARPGROUPS.slice / 16) as usize;

/// The block's tile of C, k a slice at a time: the threads copy a slice
/// into shared memory, fence it for the async proxy and pass a barrier;
/// each warpgroup multiplies its 64 rows by the slice's B in four
/// `wgmma`s of 16 k, A from where `operand_a` says, waits for them, and
/// the block passes a barrier before the next slice overwrites this one.
///
/// # Safety
/// As [`super::mma_global`], with [`super::block_tiles`]`(WARPGROUPS,
/// Layout::Swizzled)`'s grid and shared memory.
#[inline(always)]
pub unsafe fn warpgroups(
    operand_a: OperandA,
    (a, b, c): (Global<bf16>, Global<bf16>, GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    let tile = WARPGROUPS;
    // SAFETY: inside a kernel; the launch gives the slices.
    let shared = unsafe { SharedArray::<bf16>::launch_sized() };
    let (row0, col0) = (block_idx_y() * tile.rows, block_idx_x() * tile.cols);
    let group = thread_idx_x() / 128;
    // SAFETY: the matrices start on 256-byte boundaries.
    let (a_bytes, b_bytes) = unsafe { (a.cast::<u8>(), b.cast::<u8>()) };
    let line = |bytes: Global<u8>, from: Option<usize>| -> Line {
        // SAFETY: a chunk inside its matrix, 16-byte aligned as the rows
        // are multiples of 8 elements.
        from.map_or([0; 4], |element| unsafe { bytes.read_line(2 * element) })
    };
    let mut sums = Accumulators::<64>::ZERO;
    for k0 in (0..k).step_by(tile.slice as usize) {
        // Every chunk loaded before any is stored, so that all eight
        // loads are in flight at once; B's stored before A's, the last
        // loaded first. ptxas, short of registers, still stores one chunk
        // before the last loads: stored in A's order, it keeps three
        // loads ahead of that store in `mma_a_registers` (the twin's
        // order keeps four, 0.95× its speed on the H200); in this order,
        // four, and six in `mma_warpgroups`.
        let mut lines = [[0; 4]; CHUNKS];
        let mut next = 0;
        each_chunk(tile, (m, n, k), (row0, col0), k0, |operand, _, _, from| {
            let bytes = match operand {
                Operand::A => a_bytes,
                Operand::B => b_bytes,
            };
            lines[next] = line(bytes, from);
            next += 1;
        });
        let store = |stored: Operand| {
            let mut next = 0;
            each_chunk(tile, (m, n, k), (row0, col0), k0, |operand, row, col, _| {
                if operand == stored {
                    let at = match operand {
                        Operand::A => Layout::Swizzled.a(tile, row, col),
                        Operand::B => Layout::Swizzled.b(tile, row, col),
                    };
                    // SAFETY: the layout keeps chunks whole inside the allocation.
                    unsafe { shared.write_line(at, lines[next]) };
                }
                next += 1;
            });
        };
        store(Operand::B);
        store(Operand::A);
        fence_proxy_async_shared_cta();
        sync_threads();
        // SAFETY: the slice is staged, fenced and visible to the whole
        // warpgroup, which issues each wgmma together; nothing writes it
        // before the wait.
        let flight = unsafe {
            match operand_a {
                OperandA::Registers => multiply_slice_registers(sums, shared, group),
                OperandA::Shared => multiply_slice(sums.fence(), shared, 0, group),
            }
        };
        sums = flight.wait();
        sync_threads();
    }
    // SAFETY: each thread stores its own elements, inside C.
    unsafe { store(&sums, c, (row0 + 64 * group, col0), (m, n)) };
}

/// Adds to the warpgroup's accumulators the product of its 64 rows of
/// the stage of A and B from `stage_first` on (laid out as
/// [`Layout::Swizzled`], A's slice 128 rows of 64) by the stage's 2·`F`
/// columns of B: four `wgmma` of 16 k, queued behind those in flight.
///
/// Step `step`'s 16 k: the warpgroup's 64 rows of A, 32 bytes along their
/// 128-byte rows, eight rows 1 KiB apart.
///
/// # Safety
/// As [`InFlight::mma_async`], for each element of the stage.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub(super) unsafe fn multiply_slice<const F: usize>(
    mut flight: InFlight<F>,
    shared: SharedArray<bf16>,
    stage_first: u32,
    group: u32,
) -> InFlight<F> {
    for step in 0..STEPS as u32 {
        let a_first = stage_first + group * 64 * WARPGROUPS.slice + 16 * step;
        let a = MatrixDescriptor::new(shared, a_first, Swizzle::B128, 16, 1024);
        let b = b_descriptor(shared, stage_first, step);
        // SAFETY: by this function's contract.
        flight = unsafe { flight.mma_async::<bf16>(a, b, true) };
    }
    flight
}

/// [`multiply_slice`] of the staged slice, A from registers: each warp
/// loads its 16 rows of the slice's four steps by `ldmatrix` (lane l
/// names row l % 16, the left or right eight k), then, behind a
/// `wgmma.fence` for those registers, the four `wgmma`s read B from
/// shared memory and A from them.
///
/// # Safety
/// As [`multiply_slice`].
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
#[allow(clippy::needless_range_loop)]
unsafe fn multiply_slice_registers<const F: usize>(
    sums: Accumulators<F>,
    shared: SharedArray<bf16>,
    group: u32,
) -> InFlight<F> {
    let (warp, lane) = (thread_idx_x() % 128 / 32, thread_idx_x() % 32);
    let row = 64 * group + 16 * warp + lane % 16;
    let mut fragments = [FragmentA::ZERO; STEPS];
    // Index loops over constant counts, which LLVM unrolls into registers;
    // the array's by-value iterator would keep it in local memory.
    for step in 0..STEPS {
        let col = 16 * step as u32 + lane / 16 * 8;
        // SAFETY: by this function's contract; the block's threads wrote
        // the slice before the barrier.
        fragments[step] =
            FragmentA(unsafe { ldmatrix(shared, Layout::Swizzled.a(WARPGROUPS, row, col), false) });
    }
    // One fence for the four: the fragments' loads before any wgmma.
    let mut flight = sums.fence();
    for step in 0..STEPS {
        let b = b_descriptor(shared, 0, step as u32);
        // SAFETY: by this function's contract.
        flight = unsafe { flight.mma_async_registers::<bf16>(fragments[step], b, true) };
    }
    flight
}

/// B's 16 rows of step `step` of the stage from `stage_first` on: its
/// panels 8 KiB apart, eight rows 1 KiB apart.
#[inline(always)]
fn b_descriptor(shared: SharedArray<bf16>, stage_first: u32, step: u32) -> MatrixDescriptor {
    let first = stage_first + A_ELEMENTS + 16 * 64 * step;
    MatrixDescriptor::new(shared, first, Swizzle::B128, 2 * PANEL_ELEMENTS, 1024)
}

/// Stores a warpgroup's 64×2·`F` tile of C from (`row0`, `col0`): each
/// thread's pairs of columns, as the `wgmma` module lays them out.
///
/// # Safety
/// `c` is m×n, n even; no other thread writes these elements.
#[inline(always)]
pub(super) unsafe fn store<const F: usize>(
    sums: &Accumulators<F>,
    c: GlobalMut<f32>,
    (row0, col0): (u32, u32),
    (m, n): (u32, u32),
) {
    let (warp, lane) = (thread_idx_x() % 128 / 32, thread_idx_x() % 32);
    let (row, col) = (row0 + 16 * warp + lane / 4, col0 + 2 * (lane % 4));
    // SAFETY: C starts on a 256-byte boundary and n is even, so every
    // pair of columns 2q and 2q + 1 is one aligned element of the view.
    let pairs = unsafe { c.cast::<TwoSums>() };
    for i in 0..F as u32 / 4 {
        for half in 0..2 {
            let (r, j) = (row + 8 * half, col + 8 * i);
            if r < m && j < n {
                let first = 4 * i as usize + 2 * half as usize;
                let pair = TwoSums([sums.0[first], sums.0[first + 1]]);
                // SAFETY: inside C; each pair is one thread's.
                unsafe { pairs.write(row_major(r, j, n) / 2, pair) };
            }
        }
    }
}
