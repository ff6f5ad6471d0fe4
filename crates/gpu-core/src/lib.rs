//! What the device, the host and the emulator all know of a launch: its
//! shape (grid, block, shared memory), a kernel's launch bounds, and the
//! limits every GPU of compute capability 7.5 or newer sets. It stands
//! where Rust-CUDA's `cust_core` stands: the vocabulary shared by the code
//! that runs on the GPU and the code that launches it, with no code of
//! either.
#![deny(missing_docs)]
#![no_std]

/// The launch-sized shared memory every GPU of compute capability 7.5 or
/// newer gives a block without an opt-in attribute.
pub const SHARED_LIMIT_BYTES: u64 = 48 * 1024;

/// The shared memory a block of a Hopper GPU (H100, H200) may have,
/// launch-sized and static together, once its kernel opts in
/// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`): 227 KiB, the
/// device's `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`. Older
/// GPUs allow less (Ampere's A100 163 KiB, Turing 64 KiB), which the GPU
/// launcher reads from the device; the emulator holds Hopper's.
pub const SHARED_OPT_IN_LIMIT_BYTES: u64 = 227 * 1024;

/// x, y and z extents or coordinates.
pub type Dim3 = (u32, u32, u32);

/// A launch's shape: what a kernel's launch contract asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Blocks along x, y and z (`gridDim`).
    pub grid: Dim3,
    /// Threads a block along x, y and z (`blockDim`).
    pub block: Dim3,
    /// Launch-sized shared memory per block.
    pub shared_bytes: u32,
    /// Blocks a cluster along x, y and z (`clusterDim`): the blocks of
    /// one cluster run at once, on neighbouring SMs, and may read and
    /// write each other's shared memory. `(1, 1, 1)` is no cluster, as
    /// before compute capability 9.0.
    pub cluster: Dim3,
}

/// The most blocks a cluster may portably hold (CUDA's portable cluster
/// size; the H100 allows 16 only with an opt-in attribute).
pub const MAX_CLUSTER_BLOCKS: u32 = 8;

impl Launch {
    /// Blocks of `block` threads, enough of them to cover `threads` along
    /// each axis.
    pub const fn covering(threads: Dim3, block: Dim3, shared_bytes: u32) -> Self {
        Self {
            grid: (
                threads.0.div_ceil(block.0),
                threads.1.div_ceil(block.1),
                threads.2.div_ceil(block.2),
            ),
            block,
            shared_bytes,
            cluster: (1, 1, 1),
        }
    }

    /// The same launch with its blocks grouped in clusters of `cluster`
    /// blocks, launched with the driver's extended launch
    /// (`cuLaunchKernelEx` with a cluster-dimension attribute).
    pub const fn in_clusters(self, cluster: Dim3) -> Self {
        Self { cluster, ..self }
    }

    /// Whether the clusters tile the grid, each dimension at least 1 and
    /// dividing the grid's, and hold at most [`MAX_CLUSTER_BLOCKS`] blocks.
    pub const fn clusters_tile_grid(&self) -> bool {
        let ((gx, gy, gz), (x, y, z)) = (self.grid, self.cluster);
        let blocks = x as u64 * y as u64 * z as u64;
        x != 0
            && y != 0
            && z != 0
            && gx % x == 0
            && gy % y == 0
            && gz % z == 0
            && blocks <= MAX_CLUSTER_BLOCKS as u64
    }

    /// Blocks a cluster.
    pub const fn cluster_blocks(&self) -> u32 {
        self.cluster.0 * self.cluster.1 * self.cluster.2
    }
}

/// CUDA's `__launch_bounds__(max_threads, min_blocks)`: the most threads a
/// block of the kernel is ever launched with, and, where declared, the
/// fewest such blocks that must fit on one SM at once.
///
/// They reach ptxas as the entry's `.maxntid` and `.minnctapersm` (the
/// build helper writes them there), and it
/// allocates registers for that occupancy: with 65536 registers an SM, 256
/// threads and 2 blocks leave at most 128 registers a thread, 4 blocks 64,
/// 8 blocks 32, and a kernel that needs more spills. Declaring the fewest
/// blocks is not free: ptxas then also feels free to use every register
/// up to that cap, so a small kernel that would take 36 registers takes
/// 80 under `(128, 1)`, and a chain of loads may run further ahead with
/// more registers than full occupancy leaves (the gemvs). Each kernel's
/// bounds are best measured against the others, and its doc comment
/// should say why they are what they are.
///
/// The host and the emulator refuse a launch of more threads a block than
/// `max_threads`, as the GPU does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The most threads a block has (`.maxntid`).
    pub max_threads: u32,
    /// The fewest blocks an SM must hold at once (`.minnctapersm`).
    pub min_blocks: Option<u32>,
}

impl LaunchBounds {
    /// The bounds of a kernel's declaration; checked when the crate
    /// compiles: a block has 1 to 1024 threads, an SM holds at least one.
    pub const fn new(max_threads: u32, min_blocks: Option<u32>) -> Self {
        assert!(
            max_threads >= 1 && max_threads <= 1024,
            "a block has 1 to 1024 threads"
        );
        if let Some(blocks) = min_blocks {
            assert!(blocks >= 1, "an SM holds at least one block");
        }
        Self {
            max_threads,
            min_blocks,
        }
    }

    /// The fewest blocks as the PTX line of `gpu_std::kernels!` writes
    /// it: 0 for none declared.
    pub const fn ptx_min_blocks(&self) -> u32 {
        match self.min_blocks {
            Some(blocks) => blocks,
            None => 0,
        }
    }
}

/// The most threads an SM of compute capability 8.0 or 9.0 holds at once.
/// A memory-bound kernel whose registers do not limit it declares
/// `FULL_SM_THREADS / threads` blocks in its launch bounds: every warp an
/// SM can hold is another load in flight, so ptxas must fit them all, at
/// most 32 registers a thread.
pub const FULL_SM_THREADS: u32 = 2048;

/// How a texture is read where a kernel asks between or outside its texels:
/// CUDA's `cudaTextureDesc` as far as the lessons use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sampling {
    /// What a fetch outside the texels reads.
    pub address: AddressMode,
    /// How a fetch between texel centres reads its texels.
    pub filter: FilterMode,
}

/// What a fetch outside a texture's texels reads (`cudaAddressMode`).
///
/// The other two modes, wrap and mirror, need normalized coordinates,
/// which the lessons do not use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddressMode {
    /// The nearest texel inside: coordinates clamped to the edge.
    Clamp,
    /// Zero.
    Border,
}

/// How a fetch reads the texels around its coordinates (`cudaFilterMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterMode {
    /// The texel the coordinates fall in.
    Point,
    /// The four texels whose centres surround the coordinates, weighted by
    /// [`linear_weights`].
    Linear,
}

/// A linear fetch's fraction between two texel centres, `fraction` in
/// [0, 1), as the texture unit holds it: in 256ths, rounded to the
/// nearest, halves up (0 to 256).
///
/// CUDA documents 9-bit fixed point with 8 fractional bits and no more;
/// the rounding, and the weights of [`linear_weights`], were measured on
/// an H100: a million fetches against this model, every combination of
/// clamp and border addressing with point and linear filtering.
///
/// # Safety
/// `fraction` lies in [0, 1): the conversion to an integer is unchecked,
/// one `cvt` on the GPU, where a checked one costs four instructions more.
pub unsafe fn fraction_256(fraction: f32) -> u32 {
    let scaled = fraction * 256.0;
    // SAFETY: scaled lies in [0, 256) by the contract.
    let whole: u32 = unsafe { scaled.to_int_unchecked() };
    whole + u32::from(scaled - whole as f32 >= 0.5)
}

/// The weights, in 256ths, of the four texels around a linear fetch whose
/// fractions are `alpha` along x and `beta` along y ([`fraction_256`]), in
/// the order (i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1): the corner's
/// product rounded to 256ths, halves up, and the others what makes each
/// row and column sum exact. They sum to 256.
pub const fn linear_weights(alpha: u32, beta: u32) -> [u32; 4] {
    let corner = (alpha * beta + 128) >> 8;
    [
        256 + corner - alpha - beta,
        alpha - corner,
        beta - corner,
        corner,
    ]
}

/// How a tensor copy lays a box's rows out in shared memory
/// (`CUtensorMapSwizzle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// Row after row, as in global memory.
    None,
    /// Each 128-byte row's eight 16-byte chunks permuted: chunk `c` of row
    /// `r` lands at chunk `c ^ (r % 8)`, so that a column of eight rows
    /// lies in eight different groups of four banks. The box's rows are
    /// 128 bytes or fewer, and its destination 1024-byte aligned.
    Bytes128,
}

/// The element type of a tensor map's array (`CUtensorMapDataType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    /// `f32`: the transpose's.
    F32,
    /// `bf16`: the tensor-core matmul's.
    Bf16,
}

impl Element {
    /// Bytes of one element.
    pub const fn bytes(self) -> u32 {
        match self {
            Element::F32 => 4,
            Element::Bf16 => 2,
        }
    }
}

/// A tiled tensor map of a row-major 2-D array, as the host encodes it
/// (`cuTensorMapEncodeTiled`): the array's element type and shape, and
/// the box that one tensor copy moves into shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TiledMap {
    /// Elements a row of the array.
    pub width: u32,
    /// Rows of the array.
    pub height: u32,
    /// Elements a row of the box.
    pub box_width: u32,
    /// Rows of the box.
    pub box_height: u32,
    /// The box's layout in shared memory.
    pub swizzle: Swizzle,
    /// What the array holds.
    pub element: Element,
}

/// The most elements along each side of a tensor copy's box.
pub const MAX_BOX_SIDE: u32 = 256;

impl TiledMap {
    /// Why the Tensor Memory Accelerator cannot copy this map's boxes, or
    /// `None` where it can: the rules `cuTensorMapEncodeTiled` checks, for
    /// a row-major array.
    pub const fn problem(&self) -> Option<&'static str> {
        let bytes = self.element.bytes() as u64;
        let row_bytes = self.box_width as u64 * bytes;
        if self.width == 0 || self.height == 0 {
            Some("the array has no elements")
        } else if !(self.width as u64 * bytes).is_multiple_of(16) {
            Some("a row of the array must be a multiple of 16 bytes")
        } else if self.box_width == 0
            || self.box_height == 0
            || self.box_width > MAX_BOX_SIDE
            || self.box_height > MAX_BOX_SIDE
        {
            Some("each side of the box must be 1 to 256 elements")
        } else if !row_bytes.is_multiple_of(16) {
            Some("a row of the box must be a multiple of 16 bytes")
        } else if matches!(self.swizzle, Swizzle::Bytes128) && row_bytes > 128 {
            Some("a row of a box swizzled in 128-byte rows must be 128 bytes or fewer")
        } else {
            None
        }
    }

    /// The bytes one copy writes to shared memory: the whole box, out of
    /// bounds or not.
    pub const fn box_bytes(&self) -> u32 {
        self.element.bytes() * self.box_width * self.box_height
    }

    /// What a copy's destination must be a multiple of, in bytes of the
    /// shared window: 1024 for a 128-byte swizzle, whose pattern repeats
    /// every eight rows of 128 bytes; 128 otherwise.
    pub const fn destination_alignment(&self) -> u32 {
        match self.swizzle {
            Swizzle::None => 128,
            Swizzle::Bytes128 => 1024,
        }
    }

    /// Where element `(row, column)` of a box lies in shared memory, in
    /// elements from the box's start.
    pub const fn box_index(&self, row: u32, column: u32) -> u32 {
        let linear = row * self.box_width + column;
        let bytes = self.element.bytes();
        match self.swizzle {
            Swizzle::None => linear,
            Swizzle::Bytes128 => swizzle_128b_bytes(linear * bytes) / bytes,
        }
    }
}

/// The byte at `offset` of a 128-byte-swizzled box, counted as if the
/// box were not swizzled, in bytes from its start: its 16-byte chunk
/// XORed with its 128-byte row's place among eight.
pub const fn swizzle_128b_bytes(offset: u32) -> u32 {
    offset ^ (((offset >> 7) & 7) << 4)
}

/// [`swizzle_128b_bytes`] of the `f32` at `index`, in elements.
pub const fn swizzle_128b(index: u32) -> u32 {
    index ^ (((index >> 5) & 7) << 2)
}

/// The threads an atomic operation or a fence is atomic or ordered
/// against (PTX's `.cta`, `.cluster`, `.gpu`, `.sys`): the narrower the
/// scope, the nearer the memory that can serve it, and the fewer the
/// threads that may take part.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The threads of one block (`atomicAdd_block`, `__threadfence_block`).
    Block,
    /// The threads of one cluster of blocks, compute capability 9.0 and
    /// newer.
    Cluster,
    /// Every thread of the GPU (`atomicAdd`, `__threadfence`): CUDA's
    /// default.
    Device,
    /// Every thread of every GPU and the host's (`atomicAdd_system`,
    /// `__threadfence_system`).
    System,
}

/// How a warp's reduction (`__reduce_*_sync`) combines 32-bit values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    /// Their sum, wrapping (the same bits signed or not).
    Add,
    /// Their least, as signed numbers where `signed`.
    Min {
        /// Whether the values are `i32`.
        signed: bool,
    },
    /// Their greatest, as signed numbers where `signed`.
    Max {
        /// Whether the values are `i32`.
        signed: bool,
    },
    /// Their bitwise and.
    And,
    /// Their bitwise or.
    Or,
    /// Their bitwise exclusive or.
    Xor,
}

impl Reduction {
    /// `one` and `other` combined: a step of the reduction, on the GPU
    /// below compute capability 8.0 and on the emulator alike.
    #[inline(always)]
    pub fn combine(self, one: u32, other: u32) -> u32 {
        match self {
            Self::Add => one.wrapping_add(other),
            Self::Min { signed: false } => one.min(other),
            Self::Max { signed: false } => one.max(other),
            Self::Min { signed: true } => (one as i32).min(other as i32) as u32,
            Self::Max { signed: true } => (one as i32).max(other as i32) as u32,
            Self::And => one & other,
            Self::Or => one | other,
            Self::Xor => one ^ other,
        }
    }
}

/// Where the bytes behind a global-memory pointer live: the same loads
/// and stores reach each, over a different path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Placement {
    /// The GPU's own DRAM (`cudaMalloc`).
    #[default]
    Device,
    /// Page-locked host memory mapped into the GPU's address space
    /// (`cudaHostAlloc(…, cudaHostAllocMapped)`): every access crosses
    /// the host link, and nothing is copied first.
    MappedHost,
    /// Managed memory (`cudaMallocManaged`): pages the driver moves to
    /// whichever processor touches them, on a fault or ahead of it when
    /// prefetched.
    Managed,
    /// Another GPU's DRAM, reached by peer access over NVLink or PCIe:
    /// how a kernel sees a buffer another GPU allocated, once that GPU's
    /// memory is open to its own (`cudaDeviceEnablePeerAccess`).
    Peer,
    /// Another GPU's DRAM with no peer access to it: no kernel of this
    /// GPU can reach it.
    PeerWithoutAccess,
    /// Host memory not mapped into the GPU's address space (pageable, the
    /// host allocator's): copies reach it, no kernel does.
    Unmapped,
}

impl Placement {
    /// Whether a kernel can load from and store to it.
    pub fn reachable(self) -> bool {
        !matches!(self, Self::PeerWithoutAccess | Self::Unmapped)
    }
}
