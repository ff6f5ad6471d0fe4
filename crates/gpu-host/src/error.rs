//! Every way loading or launching a kernel can fail, each with a message a
//! user can act on.

use cudarc::driver::{DriverError, sys::CUresult};

/// The error type of every fallible function in this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No CUDA driver library could be loaded.
    #[error("no CUDA driver found: libcuda could not be loaded (is the NVIDIA driver installed?)")]
    NoDriver,
    /// The driver loaded and found no GPU.
    #[error("the CUDA driver found no GPU")]
    NoDevice,
    /// A GPU ordinal beyond the GPUs there are.
    #[error("GPU {requested} does not exist: the CUDA driver found {available}")]
    NoSuchDevice {
        /// The ordinal asked for.
        requested: usize,
        /// How many GPUs the driver found.
        available: usize,
    },
    /// Two buffers, or a buffer and its data, of different lengths.
    #[error("{what} has {actual} elements, but {expected} are needed")]
    LengthMismatch {
        /// What has the wrong length.
        what: &'static str,
        /// The length needed.
        expected: usize,
        /// The length it has.
        actual: usize,
    },
    /// A texture with no texels, or more along a side than CUDA allows.
    #[error(
        "a texture of {width} × {height} texels cannot be made: each side must be at least 1 and \
         at most 131072 × 65536"
    )]
    TextureSize {
        /// Texels a row asked for.
        width: usize,
        /// Rows asked for.
        height: usize,
    },
    /// A tensor map the Tensor Memory Accelerator cannot copy boxes of.
    #[error(
        "a tensor map of a {width} × {height} array in boxes of {box_width} × {box_height} \
         cannot be made: {why}"
    )]
    TensorMapShape {
        /// Elements a row of the array.
        width: u32,
        /// Rows of the array.
        height: u32,
        /// Elements a row of the box.
        box_width: u32,
        /// Rows of the box.
        box_height: u32,
        /// The rule it breaks.
        why: &'static str,
    },
    /// A persisting window asked of a GPU whose L2 has none (before
    /// compute capability 8.0).
    #[error(
        "this GPU cannot keep lines persisting in its L2 (compute capability 8.0 or newer can)"
    )]
    NoPersistingL2,
    /// A carve-out of the L2 of zero bytes, or more than the GPU sets aside.
    #[error("an L2 carve-out of {bytes} bytes for persisting lines: it takes 1 to {limit} bytes")]
    CarveOut {
        /// The bytes asked for.
        bytes: usize,
        /// The most this GPU sets aside.
        limit: usize,
    },
    /// An access-policy window over no bytes, or more than the GPU takes.
    #[error("an access-policy window of {bytes} bytes: this GPU takes 1 to {limit}")]
    WindowSize {
        /// The window's bytes: its buffer's.
        bytes: usize,
        /// The GPU's largest window.
        limit: usize,
    },
    /// A second persisting window while one is set: the stream holds one,
    /// and the second would replace it.
    #[error("a persisting window is already set on this stream; drop it first")]
    WindowInUse,
    /// A launch contract asked for more blocks than CUDA allows.
    #[error("{kernel} would need {blocks} blocks along {axis}, more than the limit of {limit}")]
    GridTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// `x`, `y` or `z`.
        axis: char,
        /// The blocks asked for.
        blocks: u32,
        /// CUDA's limit along that axis.
        limit: u32,
    },
    /// A launch contract asked for clusters that do not tile its grid, or
    /// of more blocks than a cluster portably holds.
    #[error(
        "{kernel} would be launched in clusters of {cluster:?} blocks, which do not tile its grid \
         of {grid:?} or hold more than {} blocks",
        gpu_std::MAX_CLUSTER_BLOCKS
    )]
    ClusterShape {
        /// The kernel's name.
        kernel: &'static str,
        /// The grid asked for.
        grid: (u32, u32, u32),
        /// The cluster asked for.
        cluster: (u32, u32, u32),
    },
    /// A launch contract asked for blocks larger than the kernel's own
    /// launch bounds.
    #[error(
        "{kernel} would be launched with {threads} threads a block, more than the {max_threads} \
         of its launch bounds"
    )]
    BeyondLaunchBounds {
        /// The kernel's name.
        kernel: &'static str,
        /// The threads a block asked for.
        threads: u32,
        /// The kernel's `#[launch_bounds]`.
        max_threads: u32,
    },
    /// A kernel that needs a newer GPU than the one (or the PTX build) at
    /// hand.
    #[error(
        "{kernel} needs compute capability {}.{} or newer; this GPU's code is for {}.{}",
        needs.0, needs.1, has.0, has.1
    )]
    NeedsCapability {
        /// The kernel's name.
        kernel: &'static str,
        /// The oldest compute capability it runs on.
        needs: (u32, u32),
        /// The compute capability the backend's code is for.
        has: (u32, u32),
    },
    /// A kernel that needs the arch-specific build of one compute
    /// capability (`sm_90a`), which runs on GPUs of that capability only,
    /// where the code at hand is another build.
    #[error(
        "{kernel} needs the arch-specific build sm_{}{}a, which runs on compute capability \
         {}.{} only; this GPU runs the build for {}.{}, which lacks its instructions",
        needs.0, needs.1, needs.0, needs.1, has.0, has.1
    )]
    NeedsArchSpecific {
        /// The kernel's name.
        kernel: &'static str,
        /// The compute capability whose arch-specific build holds it.
        needs: (u32, u32),
        /// The compute capability the backend's code is for.
        has: (u32, u32),
    },
    /// A launch contract asked for more shared memory than a block can have.
    #[error("{kernel} would need {bytes} bytes of shared memory per block, more than {limit}")]
    SharedTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// The bytes asked for.
        bytes: u32,
        /// The most a block can have.
        limit: u64,
    },
    /// A launch asked for more shared memory, launch-sized and static
    /// together, than this GPU gives a block even with the opt-in
    /// attribute.
    #[error(
        "{kernel} would need {launch_sized} bytes of launch-sized shared memory per block \
         and {static_bytes} static, more than this GPU's opt-in limit of {limit} bytes"
    )]
    SharedBeyondOptIn {
        /// The kernel's name.
        kernel: &'static str,
        /// The launch-sized bytes asked for.
        launch_sized: u32,
        /// The kernel's static shared bytes (`shared_array!`).
        static_bytes: u32,
        /// The device's `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
        limit: u64,
    },
    /// The text given as PTX names no target architecture.
    #[error("the PTX names no target (a `.target sm_XY` line): it is not a PTX build")]
    NotPtx,
    /// The PTX lacks an entry point the host asked for.
    #[error("the PTX has no kernel {0}: the build is out of date")]
    MissingKernel(&'static str),
    /// A generic kernel's arguments pick an instance it was not compiled for.
    #[error("{kernel} is compiled for no instance with {values}")]
    NoInstance {
        /// The kernel's name.
        kernel: &'static str,
        /// The arguments that pick the instance, by name.
        values: String,
    },
    /// There is no CUDA C++ twin to launch.
    #[error("no CUDA C++ twins: {0}")]
    NoTwins(String),
    /// A CUDA C++ twin indexes with `int`, and a buffer is beyond it.
    #[error(
        "{kernel}'s CUDA C++ twin indexes with int, and a buffer of {elements} elements is beyond it"
    )]
    TwinTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// The largest buffer's elements.
        elements: usize,
    },
    /// The GPU has not enough free memory.
    #[error("out of GPU memory while allocating {bytes} bytes for {what}")]
    OutOfMemory {
        /// The buffer's name.
        what: &'static str,
        /// Its size.
        bytes: usize,
    },
    /// The host has not enough free memory (the emulator's buffers).
    #[error("out of host memory while allocating {bytes} bytes for {what}")]
    OutOfHostMemory {
        /// The buffer's name.
        what: &'static str,
        /// Its size.
        bytes: usize,
    },
    /// Managed memory larger than the device's free memory, refused
    /// before it is allocated.
    #[error(
        "{what} would take {bytes} bytes of managed memory, more than the {free} the GPU has \
         free: a kernel touching all of it would make the driver evict pages as it faults \
         others in"
    )]
    ManagedBeyondFree {
        /// The buffer's name.
        what: &'static str,
        /// Its size.
        bytes: usize,
        /// The device's free memory when it was asked for.
        free: usize,
    },
    /// A prefetch or advice for a buffer that is not managed memory.
    #[error("only managed memory can be prefetched or advised; this buffer is in {placement:?}")]
    NotManaged {
        /// Where the buffer is.
        placement: gpu_std::Placement,
    },
    /// Peer access asked between two GPUs where one cannot reach the
    /// other's memory, or of a GPU for itself.
    #[error("GPU {from} cannot reach GPU {to}'s memory as a peer: {why}")]
    PeerUnreachable {
        /// The GPU whose kernels would reach.
        from: usize,
        /// The GPU whose memory they would reach.
        to: usize,
        /// Why not.
        why: &'static str,
    },
    /// A buffer asked for in a placement no allocation makes: another
    /// GPU's memory is allocated on that GPU, and unmapped host memory
    /// only on the emulator, whose kernels it shows unable to reach it.
    #[error("a buffer cannot be allocated in {placement:?}: {why}")]
    NotAllocatable {
        /// The placement asked for.
        placement: gpu_std::Placement,
        /// Why not.
        why: &'static str,
    },
    /// NCCL's library could not be loaded.
    #[error(
        "NCCL could not be loaded: put a directory holding libnccl.so (NCCL 2.18 or newer) on \
         LD_LIBRARY_PATH"
    )]
    NoNccl,
    /// Any error NCCL reports.
    #[error("NCCL error while {action}: {message}")]
    Nccl {
        /// What was being done.
        action: &'static str,
        /// NCCL's error.
        message: String,
    },
    /// The emulator caught a bug in a kernel: a race, a divergent barrier,
    /// an access out of bounds…
    #[error("the emulator caught a bug in {0}")]
    Emulator(gpu_emulator::Diagnostic),
    /// Any other error of the CUDA driver.
    #[error("CUDA error while {action}: {source}")]
    Cuda {
        /// What was being done.
        action: &'static str,
        /// The driver's error.
        #[source]
        source: DriverError,
    },
}

/// Shorthand for results in this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches what was being done to a CUDA driver error.
pub trait During<T> {
    /// The result, its error saying it happened while doing `action`.
    fn during(self, action: &'static str) -> Result<T>;
}

impl<T> During<T> for Result<T, DriverError> {
    fn during(self, action: &'static str) -> Result<T> {
        self.map_err(|source| match source.0 {
            CUresult::CUDA_ERROR_NO_DEVICE => Error::NoDevice,
            _ => Error::Cuda { action, source },
        })
    }
}
