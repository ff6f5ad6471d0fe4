//! Matrix multiplication on the tensor cores, C = A·B: A (m×k) and B (k×n)
//! bf16, C f32, all row-major, as the FP32 `matmul` family lays them out.
//!
//! The lesson of this family: a warp's `mma.sync` does 4096 multiply-adds
//! in one instruction, sixteen times what the warp's FP32 lanes do in one,
//! so the bytes each multiply-add may cost shrink sixteenfold too. The
//! tensor cores' fragments come from registers, and the ladder is about
//! what fills them: global memory directly (every fragment re-read from
//! the L2), then tiles staged in shared memory and handed out by
//! `ldmatrix`, whose eight 16-byte rows a pass fall in the same banks
//! unless the tile is padded or swizzled.
//!
//! k and n are multiples of 8, so that every row of A and B starts on a
//! 16-byte boundary and is copied eight elements at a time; m is any.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{Launch, bf16};

mod fragments;
mod layout;
mod staged;
use fragments::from_global;
pub use layout::{Padded, Swizzled, TileLayout, Unpadded};
use staged::staged;

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// The parameters every kernel takes: A, B, C, m, n, k.
pub type Args = (Global<bf16>, Global<bf16>, GlobalMut<f32>, u32, u32, u32);

/// Elements of a row of A or B copied at once: 16 bytes.
pub const CHUNK: u32 = 8;

/// The warp tile of [`mma_global`]: one `mma.sync` of 16 rows by 8 columns.
pub const MMA_ROWS: u32 = 16;
pub const MMA_COLS: u32 = 8;
/// The k of one `mma.sync`.
pub const MMA_K: u32 = 16;

/// Warps of [`mma_global`]'s block, 2×2.
const GLOBAL_WARPS: u32 = 4;

/// The staged kernels' block tile: `BLOCK_ROWS`×`BLOCK_COLS` of C, k in
/// slices of `SLICE`; 8 warps as 2×4, each a 64×32 warp tile.
pub const BLOCK_ROWS: u32 = 128;
pub const BLOCK_COLS: u32 = 128;
pub const SLICE: u32 = 32;
pub const THREADS: u32 = 256;

/// [`mma_global`]'s grid: a 32×16 tile of C a block.
const fn warp_tiles(problem: &Problem) -> Launch {
    let (rows, cols) = (2 * MMA_ROWS, 2 * MMA_COLS);
    Launch {
        grid: (problem.n.div_ceil(cols), problem.m.div_ceil(rows), 1),
        block: (32 * GLOBAL_WARPS, 1, 1),
        shared_bytes: 0,
        cluster: (1, 1, 1),
    }
}

/// The staged kernels' grid, one [`BLOCK_ROWS`]×[`BLOCK_COLS`] tile of C a
/// block, and the launch-sized shared memory of one slice of A and B laid
/// out by `L`.
const fn block_tiles<L: TileLayout>(problem: &Problem) -> Launch {
    Launch {
        grid: (
            problem.n.div_ceil(BLOCK_COLS),
            problem.m.div_ceil(BLOCK_ROWS),
            1,
        ),
        block: (THREADS, 1, 1),
        shared_bytes: 2 * (L::A_ELEMENTS + L::B_ELEMENTS),
        cluster: (1, 1, 1),
    }
}

kernels! {
    /// The tensor-core matmul kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// `mma.sync` on fragments loaded straight from global memory: the tensor cores wait on the L2.
    ///
    /// Each warp computes a 16×8 tile of C, one `mma.sync` a step of 16
    /// along k, each lane loading its own elements of A and B (two 16-bit
    /// loads a register, B's along a column).
    ///
    /// Compute-to-global-memory-access ratio: 4096 multiply-adds (8192
    /// FLOP) per 768 bytes of fragments, 10.7 FLOP/B, where the tensor
    /// cores' ridge point is about 300 (990 TFLOP/s over 3.35 TB/s of
    /// DRAM): bound by the load instructions and the L2, which serves the
    /// re-reads, at a few per cent of the tensor cores' peak.
    ///
    /// Launch bounds: 128 threads (four warps, 2×2), no fewest blocks:
    /// a few registers, as many warps as the SM holds.
    ///
    /// # Safety
    /// `a`, `b` and `c` are m×k, k×n and m×n arrays, `c` overlapping
    /// neither; m·k, k·n and m·n fit in `u32`; k and n are multiples of 8;
    /// the grid is [`warp_tiles`]'s.
    #[launch(warp_tiles)]
    #[launch_bounds(32 * GLOBAL_WARPS)]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_global(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { from_global(a, b, c, m, n, k) }
    }

    /// Tiles staged in shared memory and fragments by `ldmatrix`, unpadded: eight rows a pass in the same banks.
    ///
    /// [`staged`] with [`Unpadded`] tiles: a 128×128 tile of C a block,
    /// each slice of A and B copied once into shared memory and read by
    /// `ldmatrix` as often as warps need it. A's rows are 64 bytes apart
    /// and B's 128: the eight rows of an `ldmatrix` pass fall in four
    /// banks, and the pass takes four and eight wavefronts.
    ///
    /// Compute-to-global-memory-access ratio: 64 FLOP/B (each element of
    /// a 128-wide tile feeds 128 multiply-adds). Bound by shared-memory
    /// wavefronts: the bank conflicts serialise `ldmatrix`.
    ///
    /// Launch bounds: 256 threads (8 warps, 2×4, 64×32 warp tiles), no
    /// fewest blocks.
    ///
    /// # Safety
    /// As [`mma_global`], with [`block_tiles`]`::<Unpadded>`'s grid and
    /// shared memory.
    #[launch(block_tiles::<Unpadded>)]
    #[launch_bounds(THREADS)]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_ldmatrix(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { staged::<Unpadded>(a, b, c, m, n, k) }
    }

    /// The same tiles padded by 16 bytes a row: `ldmatrix`'s eight rows fall in eight different banks.
    ///
    /// [`staged`] with [`Padded`] tiles: each row starts 16 bytes further
    /// round the banks than the one before, so that a pass's eight rows
    /// fill the 32 banks once. The cost: 12% more shared memory, and
    /// rows that no longer start on the 128-byte lines a TMA copy writes.
    ///
    /// Compute-to-global-memory-access ratio: 64 FLOP/B, as
    /// [`mma_ldmatrix`]. Bound by the copies into shared memory, which
    /// nothing overlaps with the tensor cores' work.
    ///
    /// Launch bounds: as [`mma_ldmatrix`].
    ///
    /// # Safety
    /// As [`mma_global`], with [`block_tiles`]`::<Padded>`'s grid and
    /// shared memory.
    #[launch(block_tiles::<Padded>)]
    #[launch_bounds(THREADS)]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_padded(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { staged::<Padded>(a, b, c, m, n, k) }
    }

    /// The same tiles XOR-swizzled as the TMA writes them: conflict-free without padding.
    ///
    /// [`staged`] with [`Swizzled`] tiles: each 16-byte chunk of a
    /// 128-byte line moves to the chunk its index XOR the line's index
    /// (mod 8) names, so that eight rows of one column lie in eight
    /// different chunks, and so in different banks.
    ///
    /// Compute-to-global-memory-access ratio: 64 FLOP/B, as
    /// [`mma_ldmatrix`]. Bound as [`mma_padded`].
    ///
    /// Launch bounds: as [`mma_ldmatrix`].
    ///
    /// # Safety
    /// As [`mma_global`], with [`block_tiles`]`::<Swizzled>`'s grid and
    /// shared memory.
    #[launch(block_tiles::<Swizzled>)]
    #[launch_bounds(THREADS)]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_swizzled(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { staged::<Swizzled>(a, b, c, m, n, k) }
    }
}
