#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx;

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

macro_rules! special_register {
    ($($(#[$meta:meta])* $name:ident => $intrinsic:ident, $emulated:ident . $axis:tt;)*) => {$(
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn $name() -> u32 {
            // SAFETY: reading a special register has no side effects and
            // is defined in every kernel.
            unsafe { nvptx::$intrinsic() as u32 }
        }

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn $name() -> u32 {
            emulator::$emulated().$axis
        }
    )*};
}

special_register! {
    /// `threadIdx.x`: this thread's index inside its block.
    thread_idx_x => _thread_idx_x, thread_idx.0;
    /// `threadIdx.y`.
    thread_idx_y => _thread_idx_y, thread_idx.1;
    /// `threadIdx.z`.
    thread_idx_z => _thread_idx_z, thread_idx.2;
    /// `blockIdx.x`: this block's index inside the grid.
    block_idx_x => _block_idx_x, block_idx.0;
    /// `blockIdx.y`.
    block_idx_y => _block_idx_y, block_idx.1;
    /// `blockIdx.z`.
    block_idx_z => _block_idx_z, block_idx.2;
    /// `blockDim.x`: threads per block along x.
    block_dim_x => _block_dim_x, block_dim.0;
    /// `blockDim.y`.
    block_dim_y => _block_dim_y, block_dim.1;
    /// `blockDim.z`.
    block_dim_z => _block_dim_z, block_dim.2;
    /// `gridDim.x`: blocks in the grid along x.
    grid_dim_x => _grid_dim_x, grid_dim.0;
    /// `gridDim.y`.
    grid_dim_y => _grid_dim_y, grid_dim.1;
    /// `gridDim.z`.
    grid_dim_z => _grid_dim_z, grid_dim.2;
}

/// `__syncthreads()`: waits until every thread of the block has arrived,
/// and makes the shared-memory writes made before it visible after it.
///
/// Every live thread of the block must reach the same barrier: calling
/// it under control flow that diverges inside a block is undefined. (A
/// thread that has returned no longer counts.)
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0` is defined for any block whose live threads
    // all reach it, which is the contract stated above.
    unsafe { nvptx::_syncthreads() }
}

/// `__syncthreads()`, emulated: the barrier is known by its call site,
/// so that the emulator can tell two different barriers apart.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
pub fn sync_threads() {
    emulator::sync_threads(core::panic::Location::caller());
}

/// Reads the 64-bit special register of a clock. Not `pure`: two reads
/// must stay two reads, in place.
#[cfg(target_arch = "nvptx64")]
macro_rules! clock_register {
    ($register:literal) => {{
        let value: u64;
        // SAFETY: reading a special register has no side effects.
        unsafe {
            core::arch::asm!(
                concat!("mov.u64 {}, ", $register, ";"),
                out(reg64) value,
                options(nomem, nostack, preserves_flags),
            );
        }
        value
    }};
}

/// `clock64()`: the SM's cycle counter (`%clock64`), for timing a stretch
/// of one thread's code by the difference of two reads. Counters of
/// different SMs are unrelated, so only differences within a thread
/// mean anything.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn clock64() -> u64 {
    clock_register!("%clock64")
}

/// `clock64()`, emulated: a count of the running thread's calls into the
/// device runtime, which only grows, so that differences are positive
/// and ordered as on the GPU. It is no count of cycles.
#[cfg(not(target_arch = "nvptx64"))]
pub fn clock64() -> u64 {
    emulator::clock64()
}

/// `%globaltimer`: nanoseconds of a clock shared by every SM of the GPU
/// (`globaltimer` in PTX, which CUDA C++ reads with inline assembly),
/// for ordering and timing events across blocks. Its resolution is
/// coarser than a nanosecond (about a microsecond on many GPUs).
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn globaltimer() -> u64 {
    clock_register!("%globaltimer")
}

/// `%globaltimer`, emulated: the host's monotonic clock, in nanoseconds
/// since the emulator first read it.
#[cfg(not(target_arch = "nvptx64"))]
pub fn globaltimer() -> u64 {
    emulator::globaltimer()
}
