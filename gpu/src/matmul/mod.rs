//! Matrix multiplication, C = A·B, f32, row-major, A m×k and B k×n.
//!
//! The lesson of this family: every output element needs a whole row of A
//! and a whole column of B, so the naive kernel re-reads each input element
//! from global memory once per output that uses it. Tiling stages a TILE×TILE
//! block of A and of B in shared memory, where TILE×TILE threads reuse each
//! staged element TILE times, cutting global traffic by the tile width.
//!
//! The ladder past the seeds carries the same lesson one level further in:
//! each thread keeps a block of C in registers, so that each element it
//! loads from shared memory feeds many FMAs too (register blocking, 1-D then
//! 2-D); then it loads those elements 16 bytes at a time, from a tile of A
//! stored transposed; then the warp's threads are arranged so that no two
//! of them wait on the same shared-memory bank; then the next slice of A
//! and B is copied into a second buffer, asynchronously, while the warps
//! compute on this one; and last, wider tiles, and an order of blocks whose
//! neighbours share their A and B in the L2.

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::{FULL_SM_THREADS, Real, thread::*, warp};

mod geometry;
#[cfg(not(target_arch = "nvptx64"))]
mod pick;
mod pipelined;
mod split;
mod staging;
mod tiled;
pub use geometry::*;
#[cfg(not(target_arch = "nvptx64"))]
pub use pick::{MID_TILES_RATE, SMALL_TILES_RATE, Tiles, tiles};
use pipelined::pipelined;
pub use pipelined::pipelined_shared_elements;
use split::split_k;
pub use split::split_shared_elements;
use staging::*;
pub(crate) use staging::{TileOrder, in_bands, tile_position};
use tiled::matmul_tiled;

/// The parameters every matmul kernel takes: A, B, C, m, n, k.
pub type Args = (Global<f32>, Global<f32>, GlobalMut<f32>, u32, u32, u32);

kernels! {
    /// The matmul kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Naive: one thread per element of C, every input re-read from global memory.
    ///
    /// Each thread reads its row of A and column of B straight from global
    /// memory. Threads with consecutive x compute consecutive columns, so a
    /// warp's loads of B and stores of C are coalesced, and its loads of A
    /// are one broadcast address.
    ///
    /// Compute-to-global-memory-access ratio: one FMA (2 FLOP) per two
    /// 4-byte loads, 0.25 FLOP/B. Bound by memory traffic (relieved only by
    /// what the caches catch), far below the arithmetic peak.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks):
    /// memory-bound, it wants every load in flight.
    ///
    /// # Safety
    /// `a`, `b` and `c` are m×k, k×n and m×n f32 arrays, `c` not overlapping
    /// the others; every index `row * cols + col` fits in `u32`; the grid
    /// covers n columns along x and m rows along y.
    #[launch(|problem| one_thread_per_element(problem, NAIVE_BLOCK, 0))]
    #[launch_bounds(NAIVE_BLOCK * NAIVE_BLOCK, FULL_SM_THREADS / (NAIVE_BLOCK * NAIVE_BLOCK))]
    pub unsafe fn matmul_naive(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        let row = block_idx_y() * block_dim_y() + thread_idx_y();
        let col = block_idx_x() * block_dim_x() + thread_idx_x();
        if row < m && col < n {
            let mut sum = 0.0f32;
            for i in 0..k {
                // SAFETY: row < m, i < k, col < n: both indices are in bounds.
                let (a_ik, b_ij) = unsafe { (a.read(row_major(row, i, k)), b.read(row_major(i, col, n))) };
                sum = Real::mul_add(a_ik, b_ij, sum);
            }
            // SAFETY: row < m and col < n.
            unsafe { c.write(row_major(row, col, n), sum) };
        }
    }

    /// Tiled, 16×16: tiles of A and B staged in shared memory, each element reused 16 times.
    ///
    /// [`matmul_tiled`] with TILE = 16.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks): its
    /// 32 registers cost no occupancy.
    ///
    /// # Safety
    /// As for [`matmul_tiled`] with TILE = 16.
    #[launch(tiled_launch::<16>)]
    #[launch_bounds(16 * 16, FULL_SM_THREADS / (16 * 16))]
    pub unsafe fn matmul_tiled_16(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { matmul_tiled::<16>(a, b, c, m, n, k) }
    }

    /// Tiled, 32×32: twice the tile width, half the global loads of the 16-wide tile.
    ///
    /// [`matmul_tiled`] with TILE = 32.
    ///
    /// Launch bounds: 1024 threads, and two blocks an SM (every warp): its
    /// 32 registers cost no occupancy.
    ///
    /// # Safety
    /// As for [`matmul_tiled`] with TILE = 32.
    #[launch(tiled_launch::<32>)]
    #[launch_bounds(32 * 32, FULL_SM_THREADS / (32 * 32))]
    pub unsafe fn matmul_tiled_32(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { matmul_tiled::<32>(a, b, c, m, n, k) }
    }

    /// 1-D register blocking: each thread computes eight elements of a column of C, reusing each element of B it loads eight times.
    ///
    /// A block of 512 threads computes a 64×64 tile of C, staging a 64×8
    /// slice of A and an 8×64 slice of B per phase, one element of each per
    /// thread. Each thread keeps eight sums in registers; per step along k it
    /// loads one element of B, and the eight elements of A it multiplies by
    /// it are one broadcast address for the whole warp.
    ///
    /// Compute-to-memory-access ratios: from global memory 16 FLOP/B (each
    /// staged element feeds 64 FMAs), from shared memory 16 FLOP per 36 B
    /// loaded, 0.44 FLOP/B (0.25 in the tiled kernels). Bound by shared-
    /// memory instruction issue: still nine loads per eight FMAs.
    ///
    /// Launch bounds: 512 threads, and four blocks an SM (32 registers): ptxas
    /// alone took 44 registers and fitted two; four run 1.19× faster (H100,
    /// 4096³).
    ///
    /// # Safety
    /// `a`, `b` and `c` are m×k, k×n and m×n f32 arrays, `c` not overlapping
    /// the others; every index `row * cols + col` fits in `u32`; blocks are
    /// [`COARSE_1D`]`.threads()` threads with
    /// [`blocked_shared_elements`]`(COARSE_1D, 0)` f32 of launch-sized
    /// shared memory; the grid covers n columns and m rows in 64×64 tiles.
    #[launch(|problem| COARSE_1D.launch(problem, blocked_shared_elements(COARSE_1D, 0)))]
    #[launch_bounds(COARSE_1D.threads(), 4)]
    pub unsafe fn matmul_coarse_1d(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        const B: Blocking = COARSE_1D;
        const ROWS: usize = B.thread_rows as usize;
        let t = thread_idx_x();
        let (first_row, first_col) = tile_origin(B, TileOrder::RowByRow);
        // SAFETY: the launch provides both tiles.
        let (a_tile, b_tile) = unsafe { slice_tiles(B, B.rows, 0) };
        let (col, row) = (t % B.cols, t / B.cols * B.thread_rows);
        let mut sums = [0.0f32; ROWS];
        for phase in 0..k.div_ceil(B.slice) {
            let k0 = phase * B.slice;
            // SAFETY: guarded loads; thread t writes element t of each tile.
            unsafe {
                let a_value = element_or_zero(a, first_row + t / B.slice, k0 + t % B.slice, m, k);
                let b_value = element_or_zero(b, k0 + t / B.cols, first_col + t % B.cols, k, n);
                a_tile.write(t, a_value);
                b_tile.write(t, b_value);
            }
            sync_threads();
            for i in 0..B.slice {
                // SAFETY: both tiles were completely written before the barrier.
                let b_value = unsafe { b_tile.read(i * B.cols + col) };
                for (r, sum) in sums.iter_mut().enumerate() {
                    let a_value = unsafe { a_tile.read((row + r as u32) * B.slice + i) };
                    *sum = Real::mul_add(a_value, b_value, *sum);
                }
            }
            sync_threads();
        }
        // SAFETY: each thread stores its own elements of C.
        unsafe { store_block(c, &sums.map(|sum| [sum]), |r| first_row + row + r, |_| first_col + col, m, n) };
    }

    /// 2-D register blocking: each thread computes an 8×8 block of C from eight elements of A and eight of B per step.
    ///
    /// A block of 256 threads computes a 128×128 tile of C, staging a 128×16
    /// slice of A and a 16×128 slice of B per phase, eight elements of each
    /// per thread. Per step along k each thread loads a column of eight
    /// elements of A and a row of eight of B into registers and adds their
    /// outer product to its 64 sums: 16 loads for 64 FMAs.
    ///
    /// Compute-to-memory-access ratios: from global memory 32 FLOP/B, from
    /// shared memory 128 FLOP per 64 B, 2 FLOP/B. Bound by shared-memory
    /// instruction issue and bank conflicts: a warp's loads of B are 32
    /// bytes apart, four threads to a bank.
    ///
    /// Launch bounds: 256 threads, and two blocks an SM: the 64 accumulators
    /// and the fragments need up to 128 registers; at three blocks (80) they
    /// spill.
    ///
    /// # Safety
    /// As [`matmul_coarse_1d`], with [`BLOCKED_2D`] and
    /// [`blocked_shared_elements`]`(BLOCKED_2D, 0)`, 128×128 tiles.
    #[launch(|problem| BLOCKED_2D.launch(problem, blocked_shared_elements(BLOCKED_2D, 0)))]
    #[launch_bounds(BLOCKED_2D.threads(), 2)]
    pub unsafe fn matmul_blocked_2d(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        const B: Blocking = BLOCKED_2D;
        const ROWS: usize = B.thread_rows as usize;
        const COLS: usize = B.thread_cols as usize;
        let t = thread_idx_x();
        let (first_row, first_col) = tile_origin(B, TileOrder::RowByRow);
        // SAFETY: the launch provides both tiles.
        let (a_tile, b_tile) = unsafe { slice_tiles(B, B.rows, 0) };
        let (row, col) = thread_block_origin(B);
        let mut sums = [[0.0f32; COLS]; ROWS];
        for phase in 0..k.div_ceil(B.slice) {
            let k0 = phase * B.slice;
            // A square tile: as many elements of A as of B a thread.
            for load in 0..B.a_loads_per_thread() {
                let e = t + load * B.threads();
                // SAFETY: guarded loads; element e of each tile is this thread's.
                unsafe {
                    a_tile.write(e, element_or_zero(a, first_row + e / B.slice, k0 + e % B.slice, m, k));
                    b_tile.write(e, element_or_zero(b, k0 + e / B.cols, first_col + e % B.cols, k, n));
                }
            }
            sync_threads();
            for i in 0..B.slice {
                // SAFETY: both tiles were completely written before the barrier.
                let a_column: [f32; ROWS] =
                    core::array::from_fn(|r| unsafe { a_tile.read((row + r as u32) * B.slice + i) });
                let b_row: [f32; COLS] =
                    core::array::from_fn(|j| unsafe { b_tile.read(i * B.cols + col + j as u32) });
                add_outer_product(&mut sums, &a_column, &b_row);
            }
            sync_threads();
        }
        // SAFETY: each thread stores its own elements of C.
        unsafe { store_block(c, &sums, |r| first_row + row + r, |j| first_col + col + j, m, n) };
    }

    /// Vector loads: A's tile stored transposed, so that a thread's eight elements of A are adjacent, and every fragment moves in 16-byte loads.
    ///
    /// [`matmul_blocked_2d`] with slices of 16 and the A tile stored k-row
    /// by k-row (element (row, i) at `i × 128 + row`): a thread's column of
    /// eight elements of A is then eight adjacent words, like its row of B,
    /// and each is two `LDS.128` instead of eight `LDS`: 4 shared-memory
    /// loads per 64 FMAs instead of 16, whether or not the compiler unrolls
    /// the slice. Global loads stay one element each, guarded: they are a
    /// sixty-fourth of the instructions, and any m, n and k works.
    ///
    /// Compute-to-memory-access ratios: as [`matmul_blocked_2d`] (32 FLOP/B
    /// from global, 2 FLOP/B from shared memory), in a quarter of the
    /// shared-memory instructions. Bound by bank conflicts: the transposed
    /// stores put eight threads of a warp on one bank, and a quarter-warp's
    /// 16-byte loads of B are still 32 bytes apart.
    ///
    /// Launch bounds: 256 threads, and two blocks an SM (at most 128
    /// registers), as for [`matmul_blocked_2d`].
    ///
    /// # Safety
    /// As [`matmul_blocked_2d`], with [`VECTOR_BLOCKING`] and
    /// [`blocked_shared_elements`]`(VECTOR_BLOCKING, 0)`.
    #[launch(|problem| VECTOR_BLOCKING.launch(problem, blocked_shared_elements(VECTOR_BLOCKING, 0)))]
    #[launch_bounds(VECTOR_BLOCKING.threads(), 2)]
    pub unsafe fn matmul_vectorised(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        const B: Blocking = VECTOR_BLOCKING;
        const ROWS: usize = B.thread_rows as usize;
        const COLS: usize = B.thread_cols as usize;
        let (first_row, first_col) = tile_origin(B, TileOrder::RowByRow);
        // SAFETY: the launch provides both tiles.
        let (a_tile, b_tile) = unsafe { slice_tiles(B, B.rows, 0) };
        let (row, col) = thread_block_origin(B);
        let mut sums = [[0.0f32; COLS]; ROWS];
        for phase in 0..k.div_ceil(B.slice) {
            let k0 = phase * B.slice;
            // SAFETY: guarded loads; the elements this thread writes are its own.
            unsafe {
                stage_a(B, load_and_store, a, a_tile, B.rows, (first_row, k0), (m, k));
                stage_b(B, load_and_store, b, b_tile, (first_col, k0), (n, k));
            }
            sync_threads();
            for i in 0..B.slice {
                // SAFETY: both tiles were completely written before the
                // barrier; row and col are multiples of 8, so 16-byte aligned.
                let (a_column, b_row) = unsafe {
                    (
                        fragment::<ROWS>(a_tile, i * B.rows + row, 4),
                        fragment::<COLS>(b_tile, i * B.cols + col, 4),
                    )
                };
                add_outer_product(&mut sums, &a_column, &b_row);
            }
            sync_threads();
        }
        // SAFETY: each thread stores its own elements of C.
        unsafe { store_block(c, &sums, |r| first_row + row + r, |j| first_col + col + j, m, n) };
    }

    /// Warp tiling: a warp computes a 64×32 tile of C from 16-byte loads that no two of its threads make from one bank.
    ///
    /// [`matmul_vectorised`] with the threads arranged for the banks. The
    /// eight warps of a block each compute a 64×32 tile of C; in it each
    /// thread computes four 4×4 blocks, 32 rows and 16 columns apart, so
    /// that a quarter-warp's 16-byte loads of a fragment are adjacent (or
    /// the same) and each takes one pass through the banks. The transposed
    /// A tile is padded by [`A_TILE_PADDING`] words a k-row, so that a
    /// warp's stores into eight k-rows fall in different banks.
    ///
    /// Compute-to-memory-access ratios: as [`matmul_blocked_2d`]. Bound by
    /// FMA issue, and by the barriers twice per slice of k.
    ///
    /// Launch bounds: 256 threads, and two blocks an SM (at most 128
    /// registers), as for [`matmul_blocked_2d`].
    ///
    /// # Safety
    /// As [`matmul_vectorised`], with
    /// [`blocked_shared_elements`]`(VECTOR_BLOCKING, A_TILE_PADDING)` f32 of
    /// launch-sized shared memory.
    #[launch(|problem| VECTOR_BLOCKING.launch(problem, blocked_shared_elements(VECTOR_BLOCKING, A_TILE_PADDING)))]
    #[launch_bounds(VECTOR_BLOCKING.threads(), 2)]
    pub unsafe fn matmul_warptiled(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        const B: Blocking = VECTOR_BLOCKING;
        const A_ROWS: u32 = B.rows + A_TILE_PADDING;
        let t = thread_idx_x();
        let (first_row, first_col) = tile_origin(B, TileOrder::RowByRow);
        // SAFETY: the launch provides both tiles.
        let (a_tile, b_tile) = unsafe { slice_tiles(B, A_ROWS, 0) };
        // Warps 2 (down) × 4 (across), each 64×32; lanes 8 × 4 in a warp,
        // each with 4×4 blocks at rows +0 and +32, columns +0 and +16.
        let (warp, lane) = (t / warp::SIZE, t % warp::SIZE);
        let row = warp / 4 * 64 + lane / 4 * 4;
        let col = warp % 4 * 32 + lane % 4 * 4;
        let mut sums = [[0.0f32; 8]; 8];
        for phase in 0..k.div_ceil(B.slice) {
            let k0 = phase * B.slice;
            // SAFETY: guarded loads; the elements this thread writes are its own.
            unsafe {
                stage_a(B, load_and_store, a, a_tile, A_ROWS, (first_row, k0), (m, k));
                stage_b(B, load_and_store, b, b_tile, (first_col, k0), (n, k));
            }
            sync_threads();
            for i in 0..B.slice {
                // SAFETY: both tiles were completely written before the
                // barrier; every start is a multiple of 4 from a 16-byte
                // boundary (A_ROWS is a multiple of 4).
                let (a_column, b_row) = unsafe {
                    (
                        fragment::<8>(a_tile, i * A_ROWS + row, 32),
                        fragment::<8>(b_tile, i * B.cols + col, 16),
                    )
                };
                add_outer_product(&mut sums, &a_column, &b_row);
            }
            sync_threads();
        }
        let spread = |start: u32, apart: u32| move |index: u32| start + index / 4 * apart + index % 4;
        // SAFETY: each thread stores its own elements of C.
        unsafe { store_block(c, &sums, spread(first_row + row, 32), spread(first_col + col, 16), m, n) };
    }

    /// Software pipelining: the next slice of A and B copied asynchronously into a second buffer while the warps compute on the first.
    ///
    /// [`matmul_warptiled`] with two stages of shared memory ([`pipelined`]
    /// with no slice pending): before it computes on one slice of k, each
    /// thread starts copying its elements of the next slice into the other
    /// stage with `memcpy_async` (on compute capability 8.0 and newer one
    /// `cp.async`, `LDGSTS`, straight from global to shared memory without
    /// a register); they land while it computes. One barrier per slice
    /// instead of two. In registers too, the next step's fragments load
    /// while this step's FMAs run (in pairs of steps, each with fragments
    /// of its own). Where B's rows start on 16-byte boundaries (n a
    /// multiple of 4), B's part moves in 16-byte copies, two a thread
    /// instead of eight.
    ///
    /// Compute-to-memory-access ratios: as [`matmul_blocked_2d`]. Bound by
    /// FMA issue, with the copies' latency hidden behind a slice of FMAs.
    ///
    /// Launch bounds: 256 threads, and two blocks an SM (at most 128
    /// registers), as for [`matmul_blocked_2d`]; without them its twin took 159
    /// registers and fitted one.
    ///
    /// # Safety
    /// As [`pipelined`] with [`VECTOR_BLOCKING`].
    #[launch(|problem| VECTOR_BLOCKING.launch(problem, pipelined_shared_elements(VECTOR_BLOCKING)))]
    #[launch_bounds(VECTOR_BLOCKING.threads(), 2)]
    pub unsafe fn matmul_pipelined(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { pipelined::<{ VECTOR_BLOCKING.thread_cols as usize }>(VECTOR_BLOCKING, TileOrder::RowByRow, a, b, c, (m, n, k)) }
    }

    /// Wide tiles: a 128×256 tile of C per block and 64×64 per warp, each thread an 8×16 block from six 16-byte shared loads a step.
    ///
    /// [`matmul_pipelined`] with [`WIDE_BLOCKING`]: twice the columns per
    /// block, per warp and per thread, in slices of 8 of k. Each element of
    /// A staged now feeds 256 columns, and each step of a thread turns six
    /// 16-byte shared loads into 128 FMAs where [`matmul_pipelined`] turns
    /// four into 64.
    ///
    /// Compute-to-memory-access ratios: 2·128·256 FLOP per (128 + 256)·4
    /// bytes staged, 42.7 FLOP/B from global memory (32 for 128×128);
    /// 256 FLOP per 96 bytes of fragments, 2.7 FLOP/B from shared memory
    /// (2). Bound by FMA issue, and with one block an SM, by how well the
    /// copies of one slice hide behind the FMAs of another.
    ///
    /// Launch bounds: 256 threads and one block an SM: its 128 sums and 24
    /// fragment elements need more than the 128 registers of two.
    ///
    /// # Safety
    /// As [`pipelined`] with [`WIDE_BLOCKING`].
    #[launch(|problem| WIDE_BLOCKING.launch(problem, pipelined_shared_elements(WIDE_BLOCKING)))]
    #[launch_bounds(WIDE_BLOCKING.threads(), 1)]
    pub unsafe fn matmul_wide(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { pipelined::<{ WIDE_BLOCKING.thread_cols as usize }>(WIDE_BLOCKING, TileOrder::RowByRow, a, b, c, (m, n, k)) }
    }

    /// Block rasterisation: the blocks running at once take a squarer patch of C, so that more of the A and B they read is already in the L2.
    ///
    /// [`matmul_wide`] with its blocks taking the tiles of C in bands of
    /// [`BAND_ROWS`] rows of tiles, down each column of a band before the
    /// next, instead of row by row. With one block an SM, the 132 of an
    /// H100 running at once cover 8¼ rows of 16 tiles at 4096³ and 4⅛ rows
    /// of 32 at 8192³ row by row, but 16 rows of 8¼ in bands: per slice
    /// they read 16·128 + 9·256 = 4352 distinct rows of A and columns of B
    /// instead of 5248 and 8832, so each element fetched into the L2 from
    /// memory serves more blocks. Nothing else changes.
    ///
    /// Compute-to-memory-access ratios: as [`matmul_wide`]; what changes is
    /// how much of its global traffic the L2 serves (its hit rate) and how
    /// much reaches memory. Bound by FMA issue, as [`matmul_wide`]: the
    /// traffic it saves is traffic that kernel was mostly not waiting for.
    ///
    /// Launch bounds: as [`matmul_wide`].
    ///
    /// # Safety
    /// As [`pipelined`] with [`WIDE_BLOCKING`].
    #[launch(|problem| WIDE_BLOCKING.launch(problem, pipelined_shared_elements(WIDE_BLOCKING)))]
    #[launch_bounds(WIDE_BLOCKING.threads(), 1)]
    pub unsafe fn matmul_rasterised(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { pipelined::<{ WIDE_BLOCKING.thread_cols as usize }>(WIDE_BLOCKING, TileOrder::Bands { rows: BAND_ROWS }, a, b, c, (m, n, k)) }
    }

    /// Three-quarter tiles: a 128×192 tile of C per block, so that a grid of one wave of the wide tiles' kind fills more of the SMs.
    ///
    /// [`matmul_rasterised`] with [`MID_TILES`]: 8×12 of C a thread, warps
    /// of 64×48, slices of 16 of k. One block still runs an SM, so a grid
    /// takes its blocks in waves; where the wide tiles' last wave leaves
    /// SMs idle, these tiles' may not: at 1000×3000×2000 the wide tiles
    /// make 8 × 12 = 96 blocks for 132 SMs, and these 8 × 16 = 128, each
    /// with three quarters of the work. [`tiles`] picks them by the time
    /// their waves take.
    ///
    /// Compute-to-memory-access ratios: 2·128·192 FLOP per (128 + 192)·4
    /// bytes staged, 38.4 FLOP/B from global memory; 192 FLOP per 80 bytes
    /// of fragments (five 16-byte loads for 96 FMAs), 2.4 FLOP/B from
    /// shared memory. Bound by FMA issue, as [`matmul_wide`].
    ///
    /// Launch bounds: 256 threads and one block an SM: its 96 sums and 40
    /// fragment elements need more than the 128 registers of two.
    ///
    /// # Safety
    /// As [`pipelined`] with [`MID_TILES`].
    #[launch(|problem| MID_TILES.launch(problem, pipelined_shared_elements(MID_TILES)))]
    #[launch_bounds(MID_TILES.threads(), 1)]
    pub unsafe fn matmul_mid_tiles(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { pipelined::<{ MID_TILES.thread_cols as usize }>(MID_TILES, TileOrder::Bands { rows: BAND_ROWS }, a, b, c, (m, n, k)) }
    }

    /// Small tiles: a 64×64 tile of C per block and 8×4 per thread, so that a problem too small for the wide tiles' grid still gives every SM warps to run.
    ///
    /// [`matmul_pipelined`] with [`SMALL_TILES`]: four warps a block, side
    /// by side, each 64×16 of C. The wide tiles' grid is one block an SM:
    /// at 1024³ its 32 blocks leave 100 of an H100's 132 SMs idle, and at
    /// 512³ it has 8. These tiles make 256 blocks of four warps at 1024³
    /// and four blocks fit an SM. Each step of a thread turns three 16-byte
    /// shared loads into 32 FMAs, where the wide tiles turn six into 128:
    /// where both fill the GPU, these run at [`SMALL_TILES_RATE`] of the
    /// wide tiles' rate (H200, 4096³), which is the rule [`tiles`] chooses
    /// by.
    ///
    /// Compute-to-memory-access ratios: 2·64·64 FLOP per (64 + 64)·4 bytes
    /// staged, 16 FLOP/B from global memory; 64 FLOP per 48 bytes of
    /// fragments, 1.3 FLOP/B from shared memory. Bound by shared-memory
    /// instruction issue where the grid fills the GPU, by the warps there
    /// are where it cannot (512³: 64 blocks).
    ///
    /// Launch bounds: 128 threads, and four blocks an SM (at most 128
    /// registers: its 32 sums and 24 fragment elements fit without
    /// spilling).
    ///
    /// # Safety
    /// As [`pipelined`] with [`SMALL_TILES`].
    #[launch(|problem| SMALL_TILES.launch(problem, pipelined_shared_elements(SMALL_TILES)))]
    #[launch_bounds(SMALL_TILES.threads(), 4)]
    pub unsafe fn matmul_small_tiles(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { pipelined::<{ SMALL_TILES.thread_cols as usize }>(SMALL_TILES, TileOrder::RowByRow, a, b, c, (m, n, k)) }
    }

    /// Split k: the small tiles with k divided among the four blocks of a cluster, whose partial tiles meet in distributed shared memory.
    ///
    /// [`matmul_small_tiles`] where even its grid leaves SMs idle (512³:
    /// 64 blocks for 132 SMs), as [`tiles`] picks it: each tile of C is a
    /// cluster of [`SPLIT_K`]
    /// blocks (along z), each of which sums a quarter of k's slices into
    /// its registers, writes that partial tile into its own shared memory,
    /// and after a cluster barrier reads the four partial tiles' values of
    /// a quarter of the tile's rows from the cluster's shared memory
    /// (`ld.shared::cluster`), adds them in rank order and stores them.
    /// Four times the blocks, and no atomics, no second kernel and no
    /// buffer in global memory for the partial sums.
    ///
    /// Compute-to-memory-access ratios: as [`matmul_small_tiles`] from
    /// global and shared memory; the reduction reads 4·64·64 words of
    /// distributed shared memory a tile and stores 64·64 of C. Bound as
    /// [`matmul_small_tiles`] at sizes it is for, plus the reduction and
    /// its two cluster barriers.
    ///
    /// Launch bounds: as [`matmul_small_tiles`]. Compute capability 9.0 or
    /// newer (clusters).
    ///
    /// # Safety
    /// As [`split_k`] with [`SMALL_TILES`].
    #[launch(|problem| SMALL_TILES.split_launch(problem, split_shared_elements(SMALL_TILES)))]
    #[launch_bounds(SMALL_TILES.threads(), 4)]
    #[compute_capability(9, 0)]
    pub unsafe fn matmul_split_k(a: Global<f32>, b: Global<f32>, c: GlobalMut<f32>, m: u32, n: u32, k: u32) {
        // SAFETY: forwarded contract.
        unsafe { split_k::<{ SMALL_TILES.thread_cols as usize }>(SMALL_TILES, a, b, c, (m, n, k)) }
    }
}
