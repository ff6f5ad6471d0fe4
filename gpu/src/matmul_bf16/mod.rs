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
//! unless the tile is padded or swizzled; then copies that run stages
//! ahead of the warps, into a wider tile. On Hopper the fragments leave
//! the registers: `wgmma` reads A and B from shared memory itself, and the
//! Tensor Memory Accelerator fills a ring of stages that barriers in
//! shared memory hand between it and the warpgroups.
//!
//! k and n are multiples of 8, so that every row of A and B starts on a
//! 16-byte boundary and is copied eight elements at a time; m is any.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::tensor::{TensorMap2d, TiledMap};
use gpu_std::{Launch, bf16};

use crate::matmul::BAND_ROWS;

mod fragments;
mod geometry;
mod layout;
mod pipelined;
mod ring;
mod specialized;
mod staged;
mod warp_tile;
mod warpgroup;
use fragments::from_global;
pub use geometry::{CHUNK, MMA_COLS, MMA_K, MMA_ROWS, Tile};
pub use layout::Layout;
use pipelined::pipelined;
pub use ring::{RING, ring_bytes};
use ring::{operand_map, ring};
pub use specialized::SPECIALIZED;
use specialized::specialized;
use staged::staged;
pub use warpgroup::WARPGROUPS;
use warpgroup::{OperandA, warpgroups};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// The parameters every kernel takes: A, B, C, m, n, k, and the tensor
/// maps of A and B ([`a_map`], [`b_map`]) that the TMA rungs copy through.
pub type Args = (
    Global<bf16>,
    Global<bf16>,
    GlobalMut<f32>,
    u32,
    u32,
    u32,
    TensorMap2d<bf16>,
    TensorMap2d<bf16>,
);

/// Warps of [`mma_global`]'s block, 2×2.
const GLOBAL_WARPS: u32 = 4;

/// The staged rungs' tile: 128×128 of C, slices of 32 of k, 8 warps as
/// 2×4, each a 64×32 warp tile; one slice at a time.
pub const STAGED: Tile = Tile {
    rows: 128,
    cols: 128,
    slice: 32,
    warps_down: 2,
    warps_across: 4,
    stages: 1,
};

/// [`mma_pipelined`]'s tile: 128×256 of C, slices of 64 of k (half the
/// barriers a k of the staged rungs'), 8 warps as 2×4, each a 64×64 warp
/// tile (twice the `mma` per `ldmatrix` of B), four slices in flight: 192
/// KiB of shared memory, one block an SM. Measured on the H100 at 4096³
/// against this one: a 128×128 tile of four such warps, two blocks an
/// SM, 0.99× its speed at best (slices of 32, four stages); 256×128,
/// three stages or slices of 32, 0.81–0.87×; each slice's copies spread
/// over its steps, 0.92×.
pub const PIPELINED: Tile = Tile {
    cols: 256,
    slice: 64,
    stages: 4,
    ..STAGED
};

const _: () = assert!(STAGED.copies_whole_rows() && PIPELINED.copies_whole_rows());

/// The tensor map of A (m×k) that [`mma_tma`] copies from: boxes of a
/// slice's 64 columns by the tile's rows.
pub const fn a_map(problem: &Problem) -> TiledMap {
    operand_map(problem.k, problem.m, RING.rows)
}

/// The tensor map of B (k×n): boxes of one panel's 64 columns by a
/// slice's rows.
pub const fn b_map(problem: &Problem) -> TiledMap {
    operand_map(problem.n, problem.k, RING.slice)
}

/// A TMA rung's grid, one `tile` of C a block, and its ring's shared
/// memory ([`ring_bytes`]).
const fn ring_tiles(tile: Tile, problem: &Problem) -> Launch {
    Launch {
        shared_bytes: ring_bytes(tile),
        ..block_tiles(tile, Layout::Swizzled, problem)
    }
}

/// The SMs of an H100 (SXM) and of an H200: [`mma_persistent`]'s blocks.
/// A GPU of fewer SMs runs the surplus as a second wave; one of more
/// leaves its others idle.
pub const PERSISTENT_BLOCKS: u32 = 132;

/// [`mma_persistent`]'s launch: [`ring_tiles`]'s block and shared memory,
/// one block an SM, or one a tile where there are fewer tiles.
const fn persistent_tiles(tile: Tile, problem: &Problem) -> Launch {
    let tiles = problem.n.div_ceil(tile.cols) * problem.m.div_ceil(tile.rows);
    let blocks = if tiles < PERSISTENT_BLOCKS {
        tiles
    } else {
        PERSISTENT_BLOCKS
    };
    Launch {
        grid: (blocks, 1, 1),
        ..ring_tiles(tile, problem)
    }
}

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

/// The staged kernels' grid, one `tile` of C a block, and the
/// launch-sized shared memory of its stages laid out by `layout`.
const fn block_tiles(tile: Tile, layout: Layout, problem: &Problem) -> Launch {
    Launch {
        grid: (
            problem.n.div_ceil(tile.cols),
            problem.m.div_ceil(tile.rows),
            1,
        ),
        block: (tile.threads(), 1, 1),
        shared_bytes: layout.shared_bytes(tile),
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
    /// loads a register, B's along a column) through the read-only path,
    /// as the twin's `const __restrict__` pointers let nvcc load them.
    ///
    /// Compute-to-global-memory-access ratio: 4096 multiply-adds (8192
    /// FLOP) per 768 bytes of fragments, 10.7 FLOP/B, where the tensor
    /// cores' ridge point is about 300 (990 TFLOP/s over 3.35 TB/s of
    /// DRAM): bound by the load instructions and the L2, which serves the
    /// re-reads, at a few per cent of the tensor cores' peak.
    ///
    /// Launch bounds: 128 threads (four warps, 2×2), no fewest blocks:
    /// 40 registers, which keep a step's twelve loads in flight before
    /// the first is used, and 12 blocks an SM. (Held to the twin's 32 by
    /// asking for 16 blocks, ptxas for sm_90a uses three loads' values
    /// before it issues the last three, and for sm_80 spills.)
    ///
    /// # Safety
    /// `a`, `b` and `c` are m×k, k×n and m×n arrays, `c` overlapping
    /// neither; m·k, k·n and m·n fit in `u32`; k and n are multiples of 8;
    /// the grid is [`warp_tiles`]'s.
    #[launch(warp_tiles)]
    #[launch_bounds(32 * GLOBAL_WARPS)]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_global(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { from_global(a, b, c, m, n, k) }
    }

    /// Tiles staged in shared memory and fragments by `ldmatrix`, unpadded: eight rows a pass in the same banks.
    ///
    /// [`staged`] with [`Layout::Unpadded`] tiles: a 128×128 tile of C a block,
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
    /// As [`mma_global`], with [`block_tiles`]`(STAGED, Layout::Unpadded)`'s
    /// grid and shared memory.
    #[launch(|problem| block_tiles(STAGED, Layout::Unpadded, problem))]
    #[launch_bounds(STAGED.threads())]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_ldmatrix(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { staged::<{ STAGED.m_tiles() }, { STAGED.n_tiles() }>(STAGED, Layout::Unpadded, (a, b, c), (m, n, k)) }
    }

    /// The same tiles padded by 16 bytes a row: `ldmatrix`'s eight rows fall in eight different banks.
    ///
    /// [`staged`] with [`Layout::Padded`] tiles: each row starts 16 bytes further
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
    /// As [`mma_global`], with [`block_tiles`]`(STAGED, Layout::Padded)`'s
    /// grid and shared memory.
    #[launch(|problem| block_tiles(STAGED, Layout::Padded, problem))]
    #[launch_bounds(STAGED.threads())]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_padded(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { staged::<{ STAGED.m_tiles() }, { STAGED.n_tiles() }>(STAGED, Layout::Padded, (a, b, c), (m, n, k)) }
    }

    /// The same tiles XOR-swizzled as the TMA writes them: conflict-free without padding.
    ///
    /// [`staged`] with [`Layout::Swizzled`] tiles: each 16-byte chunk of a
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
    /// As [`mma_global`], with [`block_tiles`]`(STAGED, Layout::Swizzled)`'s
    /// grid and shared memory.
    #[launch(|problem| block_tiles(STAGED, Layout::Swizzled, problem))]
    #[launch_bounds(STAGED.threads())]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_swizzled(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { staged::<{ STAGED.m_tiles() }, { STAGED.n_tiles() }>(STAGED, Layout::Swizzled, (a, b, c), (m, n, k)) }
    }

    /// Copies by `cp.async` three slices ahead into a 128×256 tile, its blocks in bands: the best `mma.sync` kernel.
    ///
    /// [`pipelined`] with [`PIPELINED`]: the copies no longer pass through
    /// registers, and while the warps multiply one slice of 64 the next
    /// three land, so that the tensor cores wait on neither; each warp's
    /// 64×64 tile does twice the `mma` per `ldmatrix` of B, and loads each
    /// step's fragments, the next slice's first ones included, while the
    /// step before multiplies; the blocks take the tiles in bands of
    /// [`BAND_ROWS`](crate::matmul::BAND_ROWS), so that those running at
    /// once read fewer distinct rows of A and columns of B.
    ///
    /// Compute-to-global-memory-access ratio: 85 FLOP/B (each element of
    /// a 128×256 tile's slices feeds 256 or 128 multiply-adds). Bound by
    /// the tensor cores' `mma.sync` issue: two warps a scheduler, with
    /// the barrier a slice, the prologue and the store of C a tile
    /// between their `mma`s; and `mma.sync` itself, which on Hopper feeds
    /// the tensor cores more slowly than cuBLAS's `wgmma` does.
    ///
    /// Launch bounds: 256 threads, one block an SM: the 128 f32
    /// accumulators of a 64×64 warp tile and two steps' fragments need
    /// all 255 registers.
    ///
    /// # Safety
    /// As [`mma_global`], with [`block_tiles`]`(PIPELINED,
    /// Layout::Swizzled)`'s grid and shared memory.
    #[launch(|problem| block_tiles(PIPELINED, Layout::Swizzled, problem))]
    #[launch_bounds(PIPELINED.threads(), 1)]
    #[compute_capability(8, 0)]
    pub unsafe fn mma_pipelined(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { pipelined::<{ PIPELINED.m_tiles() }, { PIPELINED.n_tiles() }, { PIPELINED.stages - 2 }>(PIPELINED, (a, b, c), (m, n, k)) }
    }

    /// Hopper's `wgmma` with A from registers: `ldmatrix` still loads A, the tensor cores read B from shared memory.
    ///
    /// [`warpgroups`] with A from registers: the block's threads stage a
    /// 128×128 tile's slices of 64 as [`mma_warpgroups`] does; each warp
    /// loads its 16 rows of A by `ldmatrix`, as for `mma.sync`, and its
    /// warpgroup multiplies its 64 rows with four `wgmma.mma_async` of
    /// 64×128×16, which read B through a matrix descriptor: a sixth of
    /// [`mma_swizzled`]'s `ldmatrix`s, and 8192 multiply-adds a warp an
    /// instruction. Only the arch-specific build for 9.0 has it.
    ///
    /// Compute-to-global-memory-access ratio: 64 FLOP/B, as
    /// [`mma_ldmatrix`]. Bound as [`mma_warpgroups`], with A's
    /// `ldmatrix`s and their `wgmma.fence` between the barrier and the
    /// `wgmma`s.
    ///
    /// Launch bounds: as [`mma_warpgroups`].
    ///
    /// # Safety
    /// As [`mma_global`], with [`block_tiles`]`(WARPGROUPS,
    /// Layout::Swizzled)`'s grid and shared memory.
    #[launch(|problem| block_tiles(WARPGROUPS, Layout::Swizzled, problem))]
    #[launch_bounds(WARPGROUPS.threads())]
    #[compute_capability(9, 0, arch_specific)]
    pub unsafe fn mma_a_registers(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { warpgroups(OperandA::Registers, (a, b, c), (m, n, k)) }
    }

    /// Hopper's `wgmma`: two warpgroups multiply each staged slice straight from shared memory.
    ///
    /// [`warpgroups`]: the block's threads stage a 128×128 tile's slices of
    /// 64 as [`mma_swizzled`] does, but in the layout a 128-byte-swizzled
    /// tensor map writes, and each warpgroup (four warps) multiplies its
    /// 64 rows with four `wgmma.mma_async` of 64×128×16, which read A and
    /// B through matrix descriptors: no `ldmatrix`, no fragments of A or
    /// B in registers, and 8192 multiply-adds a warp an instruction,
    /// twice `mma.sync`'s. Only the arch-specific build for 9.0 has it.
    ///
    /// Compute-to-global-memory-access ratio: 64 FLOP/B, as
    /// [`mma_ldmatrix`]. Bound by the copies into shared memory, which
    /// nothing overlaps with the tensor cores, and the barriers a slice.
    ///
    /// Launch bounds: 256 threads (two warpgroups), no fewest blocks: 64
    /// f32 accumulators a thread.
    ///
    /// # Safety
    /// As [`mma_global`], with [`block_tiles`]`(WARPGROUPS,
    /// Layout::Swizzled)`'s grid and shared memory.
    #[launch(|problem| block_tiles(WARPGROUPS, Layout::Swizzled, problem))]
    #[launch_bounds(WARPGROUPS.threads())]
    #[compute_capability(9, 0, arch_specific)]
    pub unsafe fn mma_warpgroups(a: Global<bf16>, b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, _a_map: TensorMap2d<bf16>, _b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { warpgroups(OperandA::Shared, (a, b, c), (m, n, k)) }
    }

    /// The TMA copies each slice into a ring of four stages ahead of the `wgmma`s: no thread copies, no block barrier a slice.
    ///
    /// [`ring`]: [`mma_warpgroups`]'s tile and `wgmma`s, each slice of A
    /// and B copied by the Tensor Memory Accelerator, one box of A and two
    /// of B's panels, 128-byte swizzled as the descriptors read them,
    /// into a ring of four 32 KiB stages. A stage's full barrier completes
    /// when its 32 KiB land; its empty barrier when all 256 threads have
    /// waited for the `wgmma`s that read it, after which thread 0 refills
    /// it. The warpgroups keep one slice's `wgmma`s in flight while they
    /// wait for the slice before (`wgmma.wait_group 1`).
    ///
    /// Compute-to-global-memory-access ratio: 64 FLOP/B, as
    /// [`mma_ldmatrix`]. Bound by thread 0, which both issues its
    /// warpgroup's `wgmma`s and waits for every thread before refilling
    /// a stage: the warpgroup waits with it.
    ///
    /// Launch bounds: 256 threads (two warpgroups), one block an SM: 128
    /// KiB of stages.
    ///
    /// # Safety
    /// As [`mma_global`], with [`ring_tiles`]`(RING)`'s grid and shared memory, and
    /// `a_map` and `b_map` [`a_map`] and [`b_map`] of the problem over `a`
    /// and `b`.
    #[launch(|problem| ring_tiles(RING, problem))]
    #[launch_bounds(RING.threads(), 1)]
    #[compute_capability(9, 0, arch_specific)]
    pub unsafe fn mma_tma(_a: Global<bf16>, _b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, a_map: TensorMap2d<bf16>, b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { ring((a_map, b_map, c), (m, n, k)) }
    }

    /// Warp-specialized: a producer warpgroup keeps the ring full while two consumer warpgroups, with its registers, compute a 128×256 tile.
    ///
    /// [`specialized`]: the TMA ring of [`mma_tma`], four stages of 48
    /// KiB, but the copies are a warpgroup's own work. It gives back its
    /// registers (`setmaxnreg.dec` to 40) and one thread of it waits on
    /// each stage's empty barrier and refills it; the two consumer
    /// warpgroups take them (`setmaxnreg.inc` to 232) for 128 f32
    /// accumulators each, a 64×256 half of the tile, four `wgmma`s of
    /// 64×256×16 a slice, and no longer wait for a thread that copies.
    ///
    /// Compute-to-global-memory-access ratio: 85 FLOP/B (each element of
    /// a 128×256 tile's slices feeds 256 or 128 multiply-adds). Bound by
    /// the tensor cores while the ring stays full; by the prologue and
    /// the store of C, which nothing overlaps, between tiles.
    ///
    /// Launch bounds: 384 threads (three warpgroups), one block an SM:
    /// 192 KiB of stages.
    ///
    /// # Safety
    /// As [`mma_tma`], with [`ring_tiles`]`(SPECIALIZED)`'s grid and shared memory.
    #[launch(|problem| ring_tiles(SPECIALIZED, problem))]
    #[launch_bounds(SPECIALIZED.threads(), 1)]
    #[compute_capability(9, 0, arch_specific)]
    pub unsafe fn mma_specialized(_a: Global<bf16>, _b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, a_map: TensorMap2d<bf16>, b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { specialized::<1>(([a_map, b_map], c), (m, n, k)) }
    }

    /// Persistent: one block an SM walks its tiles in bands, and the ring flows on from one tile into the next under the store of C.
    ///
    /// [`specialized`] on a grid of [`PERSISTENT_BLOCKS`] blocks, each
    /// taking every 132nd tile in bands of
    /// [`BAND_ROWS`](crate::matmul::BAND_ROWS) rows, as
    /// [`mma_pipelined`]'s blocks do. A block initialises its barriers
    /// and raises its registers once, not once a tile; the producer copies
    /// the next tile's first slices while the consumers still store this
    /// one's, which [`mma_specialized`] leaves the SM idle for; and no
    /// wave of tiles ends with part of the GPU idle while the blocks of
    /// the next wait to start.
    ///
    /// Compute-to-global-memory-access ratio: 85 FLOP/B, as
    /// [`mma_specialized`]. Bound by the tensor cores; by the store of C
    /// wherever it outlasts the ring's four slices of copies.
    ///
    /// Launch bounds: as [`mma_specialized`].
    ///
    /// # Safety
    /// As [`mma_specialized`], with [`persistent_tiles`]`(SPECIALIZED)`'s
    /// launch.
    #[launch(|problem| persistent_tiles(SPECIALIZED, problem))]
    #[launch_bounds(SPECIALIZED.threads(), 1)]
    #[compute_capability(9, 0, arch_specific)]
    pub unsafe fn mma_persistent(_a: Global<bf16>, _b: Global<bf16>, c: GlobalMut<f32>, m: u32, n: u32, k: u32, a_map: TensorMap2d<bf16>, b_map: TensorMap2d<bf16>) {
        // SAFETY: forwarded contract.
        unsafe { specialized::<BAND_ROWS>(([a_map, b_map], c), (m, n, k)) }
    }
}
