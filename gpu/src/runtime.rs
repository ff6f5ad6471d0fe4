//! The device runtime: everything a kernel needs from the hardware, under the
//! names a Rust-CUDA (`cuda_std`) reader knows.
//!
//! Kernels never touch `core::arch::nvptx` themselves; they go through this
//! module, so that the lesson reads the same as CUDA C++ and so that the one
//! place that talks to the hardware is small enough to audit.

/// Declares GPU entry points.
///
/// Each `pub unsafe fn` inside becomes an unmangled `extern "gpu-kernel"`
/// function on nvptx64, which is what the PTX `.entry` needs. The host sees
/// the same source but no entry point: it links the kernels through the PTX.
macro_rules! kernel {
    ($(
        $(#[$meta:meta])*
        pub unsafe fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $body:block
    )*) => {$(
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn $name($($arg: $ty),*) $body
    )*};
}

/// Thread, block and grid coordinates, and the block-wide barrier.
#[cfg(target_arch = "nvptx64")]
pub mod thread {
    use core::arch::nvptx;

    macro_rules! special_register {
        ($($(#[$meta:meta])* $name:ident => $intrinsic:ident;)*) => {$(
            $(#[$meta])*
            #[inline(always)]
            pub fn $name() -> u32 {
                // SAFETY: reading a special register has no side effects and
                // is defined in every kernel.
                unsafe { nvptx::$intrinsic() as u32 }
            }
        )*};
    }

    special_register! {
        /// `threadIdx.x`: this thread's index inside its block.
        thread_idx_x => _thread_idx_x;
        /// `threadIdx.y`.
        thread_idx_y => _thread_idx_y;
        /// `blockIdx.x`: this block's index inside the grid.
        block_idx_x => _block_idx_x;
        /// `blockIdx.y`.
        block_idx_y => _block_idx_y;
        /// `blockIdx.z`.
        block_idx_z => _block_idx_z;
        /// `blockDim.x`: threads per block along x.
        block_dim_x => _block_dim_x;
        /// `blockDim.y`.
        block_dim_y => _block_dim_y;
    }

    /// `__syncthreads()`: waits until every thread of the block has arrived,
    /// and makes the shared-memory writes made before it visible after it.
    ///
    /// Every thread of the block must reach the same barrier: calling it
    /// under control flow that diverges inside a block is undefined.
    #[inline(always)]
    pub fn sync_threads() {
        // SAFETY: `bar.sync 0` is defined for any block whose threads all
        // reach it, which is the contract stated above.
        unsafe { nvptx::_syncthreads() }
    }
}

/// Launch-sized ("dynamic") shared memory: one allocation per block whose
/// size in bytes the host chooses at launch.
pub mod shared {
    use core::marker::PhantomData;

    /// The launch-sized shared memory every GPU of compute capability 7.5 or
    /// newer gives a block without an opt-in attribute.
    pub const LIMIT_BYTES: u64 = 48 * 1024;

    /// A typed view of part of the block's launch-sized shared memory.
    ///
    /// It is `Copy` and carries no bounds: the host sizes the allocation from
    /// the same layout function the kernel uses, so the bounds are a launch
    /// contract, stated in each kernel's `# Safety` section.
    #[derive(Clone, Copy)]
    pub struct SharedArray<T> {
        base: *mut T,
        element: PhantomData<T>,
    }

    impl<T: Copy> SharedArray<T> {
        /// The start of the block's launch-sized shared memory.
        ///
        /// # Safety
        /// Only inside a kernel, and only for a `T` whose alignment the
        /// launch-sized memory satisfies (it is aligned for every type the
        /// kernels here use).
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub unsafe fn launch_sized() -> Self {
            Self {
                base: core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>(),
                element: PhantomData,
            }
        }

        /// The array that starts `elements` elements after this one.
        ///
        /// # Safety
        /// The result must still lie inside the launch-sized allocation.
        #[inline(always)]
        pub unsafe fn after(self, elements: u32) -> Self {
            Self {
                // SAFETY: in bounds by this function's contract.
                base: unsafe { self.base.add(elements as usize) },
                element: PhantomData,
            }
        }

        /// Reads element `index`.
        ///
        /// # Safety
        /// `index` must be inside the allocation, and the element must have
        /// been written by this block, with a barrier between a write by
        /// another thread and this read.
        #[inline(always)]
        pub unsafe fn read(self, index: u32) -> T {
            // SAFETY: by this function's contract.
            unsafe { *self.base.add(index as usize) }
        }

        /// Writes element `index`.
        ///
        /// # Safety
        /// `index` must be inside the allocation, and no other thread may
        /// touch the element between the same two barriers.
        #[inline(always)]
        pub unsafe fn write(self, index: u32, value: T) {
            // SAFETY: by this function's contract.
            unsafe { *self.base.add(index as usize) = value }
        }
    }
}

/// Floating-point element types the kernels are generic over.
pub trait Real: Copy + core::ops::Mul<Output = Self> + PartialEq {
    const ZERO: Self;

    /// `self * a + b` with one rounding: CUDA C++ contracts `x * y + z` into
    /// an FMA by default, Rust never does, so the kernels ask for it.
    fn mul_add(self, a: Self, b: Self) -> Self;
}

impl Real for f32 {
    const ZERO: Self = 0.0;

    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf32(self, a, b)
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;

    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf64(self, a, b)
    }
}
