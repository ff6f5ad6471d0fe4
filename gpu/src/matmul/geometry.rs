//! How the matmul kernels divide C among blocks and threads: the problem
//! every launch contract is a function of, the tiles and register blocks of
//! each step of the ladder, the shared memory they take, and the launches
//! that cover C with them.

use gpu_std::Launch;

/// What every matmul kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// Threads per block along x and y for [`matmul_naive`](super::matmul_naive).
pub const NAIVE_BLOCK: u32 = 16;

/// Elements of launch-sized shared memory the tiled kernel of width `tile`
/// needs: one tile of A followed by one tile of B.
pub const fn tiled_shared_elements(tile: u32) -> u32 {
    2 * tile * tile
}

/// How a register-blocked kernel divides C: a block computes a `rows`×`cols`
/// tile of C, staging a `slice` of k at a time; each thread computes a
/// `thread_rows`×`thread_cols` block of it in registers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    pub rows: u32,
    pub cols: u32,
    pub slice: u32,
    pub thread_rows: u32,
    pub thread_cols: u32,
}

impl Blocking {
    /// Threads per block: one per register block of the block's tile.
    pub const fn threads(&self) -> u32 {
        (self.rows / self.thread_rows) * (self.cols / self.thread_cols)
    }

    /// Elements of the A tile each thread stages per slice.
    pub const fn a_loads_per_thread(&self) -> u32 {
        self.rows * self.slice / self.threads()
    }

    /// Elements of the B tile each thread stages per slice.
    pub const fn b_loads_per_thread(&self) -> u32 {
        self.slice * self.cols / self.threads()
    }

    /// One block per tile of C: n columns along x, m rows along y.
    pub(super) fn launch(&self, problem: &Problem, shared_elements: u32) -> Launch {
        Launch {
            grid: (
                problem.n.div_ceil(self.cols),
                problem.m.div_ceil(self.rows),
                1,
            ),
            block: (self.threads(), 1, 1),
            shared_bytes: shared_elements * size_of::<f32>() as u32,
            cluster: (1, 1, 1),
        }
    }

    /// [`matmul_split_k`](super::matmul_split_k)'s launch: one block a tile
    /// with `shared_elements` f32, [`SPLIT_K`] blocks a tile along z, each
    /// cluster the blocks of one tile.
    pub(super) fn split_launch(&self, problem: &Problem, shared_elements: u32) -> Launch {
        let whole = self.launch(problem, shared_elements);
        Launch {
            grid: (whole.grid.0, whole.grid.1, SPLIT_K),
            cluster: (1, 1, SPLIT_K),
            ..whole
        }
    }
}

/// [`matmul_coarse_1d`](super::matmul_coarse_1d): a 64×64 tile of C per block,
/// eight rows of one column per thread.
pub const COARSE_1D: Blocking = Blocking {
    rows: 64,
    cols: 64,
    slice: 8,
    thread_rows: 8,
    thread_cols: 1,
};

/// [`matmul_blocked_2d`](super::matmul_blocked_2d): a 128×128 tile of C per
/// block, 8×8 of it per thread, slices of 8 of k.
pub const BLOCKED_2D: Blocking = Blocking {
    rows: 128,
    cols: 128,
    slice: 8,
    thread_rows: 8,
    thread_cols: 8,
};

/// [`matmul_vectorised`](super::matmul_vectorised) and the kernels after it:
/// the same tiles, slices of 16 of k, half the barriers. LLVM leaves their step
/// along a slice a loop (unrolled it would pass its size limit), which costs
/// them nothing: each step's fragments are four 16-byte loads. Unrolled, the
/// 2-D kernel's eight one-word loads of A from eight steps merge into 16-byte
/// loads; rolled, they cannot, so it keeps slices of 8 (with 16 it is 1.6×
/// slower, measured).
pub const VECTOR_BLOCKING: Blocking = Blocking {
    slice: 16,
    ..BLOCKED_2D
};

/// Padding after each k-row of [`matmul_warptiled`](super::matmul_warptiled)'s
/// transposed A tile: four words shift each k-row by four banks, so that the
/// eight k-rows a warp writes at once, four words of each, land in different
/// banks.
pub const A_TILE_PADDING: u32 = 4;

/// Buffers of the pipelined kernels: one slice is computed on while the
/// next is copied into the other. (A third, measured on the H100, bought
/// nothing: at one block an SM, a slice of FMAs already outlasts a copy.)
pub const PIPELINE_STAGES: u32 = 2;

/// [`matmul_wide`](super::matmul_wide) and
/// [`matmul_rasterised`](super::matmul_rasterised): a 128×256 tile of C per
/// block, 8×16 of it per thread, slices of 8 of k (16 would need more than the
/// 48 KiB of shared memory a block gets without opting in).
pub const WIDE_BLOCKING: Blocking = Blocking {
    rows: 128,
    cols: 256,
    slice: 8,
    thread_rows: 8,
    thread_cols: 16,
};

/// Rows of tiles in a band of [`matmul_rasterised`](super::matmul_rasterised):
/// with 128×256 tiles, 16 rows against the 132 SMs of an H100 make the patch of
/// C running at once about as tall, in bytes of A read, as it is wide in bytes
/// of B.
pub const BAND_ROWS: u32 = 16;

/// [`matmul_mid_tiles`](super::matmul_mid_tiles): a 128×192 tile of C per
/// block, three quarters of [`WIDE_BLOCKING`]'s, 8×12 of it per thread,
/// slices of 16 of k (two stages of them take 41 KiB of shared memory; with
/// slices of 8, B's 16-byte spans would not divide evenly among the threads).
pub const MID_TILES: Blocking = Blocking {
    rows: 128,
    cols: 192,
    slice: 16,
    thread_rows: 8,
    thread_cols: 12,
};

/// [`matmul_small_tiles`](super::matmul_small_tiles): a 64×64 tile of C per
/// block of four warps, 8×4 of it per thread, slices of 16 of k. Two other
/// small tiles were measured on the H200 (seed 24): 64×64 with 8×8 a thread
/// (two warps a block) and 128×64 with 8×8 were 1.4–1.9× slower at 512³ and
/// 1024³, where small tiles are picked, and slower than the wide tiles at
/// every size where they beat these.
pub const SMALL_TILES: Blocking = Blocking {
    rows: 64,
    cols: 64,
    slice: 16,
    thread_rows: 8,
    thread_cols: 4,
};

/// Blocks a tile's k is split among in
/// [`matmul_split_k`](super::matmul_split_k), one cluster a tile: each
/// block sums a quarter of the slices, and a quarter of the tile's rows
/// across the cluster.
pub const SPLIT_K: u32 = 4;

/// Elements of launch-sized shared memory of a kernel blocked as `blocking`:
/// an A tile (each of its `slice` k-rows or rows padded by `padding`) and a
/// B tile.
pub const fn blocked_shared_elements(blocking: Blocking, padding: u32) -> u32 {
    (blocking.rows + padding) * blocking.slice + blocking.slice * blocking.cols
}

/// One thread per element of C: n columns along x, m rows along y.
pub(super) fn one_thread_per_element(problem: &Problem, block: u32, shared_bytes: u32) -> Launch {
    Launch::covering((problem.n, problem.m, 1), (block, block, 1), shared_bytes)
}

/// [`matmul_tiled`](super::tiled::matmul_tiled)'s contract: TILE×TILE threads
/// and two tiles of shared memory per block.
pub(super) fn tiled_launch<const TILE: u32>(problem: &Problem) -> Launch {
    let shared_bytes = tiled_shared_elements(TILE) * size_of::<f32>() as u32;
    one_thread_per_element(problem, TILE, shared_bytes)
}
