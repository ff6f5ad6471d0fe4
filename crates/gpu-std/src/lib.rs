//! The device runtime of GPU kernels written in Rust: everything a kernel
//! needs from the hardware, under the names a CUDA or Rust-CUDA reader
//! knows (`thread::thread_idx_x`, `sync_threads`, `shared_array!`,
//! `shfl_xor_sync`, `memcpy_async`), and [`kernels!`], which declares a
//! crate's kernels once for the GPU and the host.
//!
//! It stands where Rust-CUDA's `cuda_std` stands, on stock nightly Rust:
//! a kernel crate built for `nvptx64-nvidia-cuda` (by `gpu-builder`) gets
//! PTX entry points, and built for the host gets the same kernels as
//! ordinary functions, which `gpu-emulator` runs on the CPU with every
//! barrier, shared-memory access and global-memory index checked. Kernels
//! never touch `core::arch::nvptx` or `asm!` themselves: this crate is the
//! one place that talks to the hardware, small enough to audit, and
//! everything in it is emulated with CUDA's semantics.
//!
//! A kernel, declared once and run on the emulator (built for the GPU, the
//! same declaration is the PTX entry `scale`):
//!
//! ```
//! use gpu_std::global::{Global, GlobalMut};
//! use gpu_std::thread::{block_dim_x, block_idx_x, thread_idx_x};
//! use gpu_std::{Launch, kernels};
//!
//! kernels! {
//!     /// The crate's kernels, as the host knows them.
//!     pub const KERNELS: [Kernel<(Global<f32>, GlobalMut<f32>, u32), u32>];
//!
//!     /// Doubles n elements, one a thread.
//!     #[launch(|&n| Launch::covering((n, 1, 1), (128, 1, 1), 0))]
//!     #[launch_bounds(128)]
//!     pub unsafe fn scale(input: Global<f32>, output: GlobalMut<f32>, n: u32) {
//!         let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!         if i < n {
//!             // SAFETY: i < n, the length of both buffers.
//!             unsafe { output.write(i as usize, 2.0 * input.read(i as usize)) };
//!         }
//!     }
//! }
//!
//! let (input, mut output) = (vec![1.5f32; 300], vec![0.0f32; 300]);
//! let kernel = &KERNELS[0];
//! let launch = (kernel.launch)(&300);
//! let (x, y) = (Global::new("input", &input), GlobalMut::new("output", &mut output));
//! // SAFETY: both buffers hold the 300 elements the kernel reads and writes.
//! gpu_emulator::run(kernel.name, &launch, &|| unsafe { scale(x, y, 300) }).unwrap();
//! assert!(output.iter().all(|&value| value == 3.0));
//! ```
//!
//! With its guard gone (`if i <= n`), the emulator names the thread and the
//! element, where a GPU would write past the buffer:
//!
//! ```
//! # use gpu_std::global::{Global, GlobalMut};
//! # use gpu_std::thread::{block_dim_x, block_idx_x, thread_idx_x};
//! # use gpu_std::{Launch, kernels};
//! kernels! {
//!     /// One kernel with a wrong guard.
//!     pub const KERNELS: [Kernel<(Global<f32>, GlobalMut<f32>, u32), u32>];
//!
//!     /// Copies n elements, and one more.
//!     #[launch(|&n| Launch::covering((n + 1, 1, 1), (128, 1, 1), 0))]
//!     #[launch_bounds(128)]
//!     pub unsafe fn copy_one_past(input: Global<f32>, output: GlobalMut<f32>, n: u32) {
//!         let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!         if i <= n {
//!             // SAFETY: none: i = n is past both buffers, which the emulator reports.
//!             unsafe { output.write(i as usize, input.read(i as usize)) };
//!         }
//!     }
//! }
//! let (input, mut output) = (vec![1.0f32; 300], vec![0.0f32; 300]);
//! let launch = (KERNELS[0].launch)(&300);
//! let (x, y) = (Global::new("input", &input), GlobalMut::new("output", &mut output));
//! let diagnostic = gpu_emulator::run("copy_one_past", &launch, &|| unsafe {
//!     copy_one_past(x, y, 300)
//! })
//! .unwrap_err();
//! assert!(diagnostic.to_string().contains("input[300]"), "{diagnostic}");
//! ```
#![deny(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        stdarch_nvptx,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        link_llvm_intrinsics,
        asm_experimental_arch
    )
)]
#![feature(core_intrinsics)]
#![allow(internal_features)]
// The builds for GPUs older than Hopper's arch-specific one compile out the
// instructions those GPUs lack, leaving what only those instructions use;
// the sm_90a build holds every path, and is where these lints speak.
#![cfg_attr(
    all(target_arch = "nvptx64", not(target_feature = "sm_90a")),
    allow(dead_code, unused_mut, unused_variables)
)]

pub use gpu_core::{
    AddressMode, Dim3, FULL_SM_THREADS, FilterMode, Launch, LaunchBounds, MAX_CLUSTER_BLOCKS,
    Placement, Sampling, Scope, fraction_256, linear_weights,
};

#[macro_use]
mod declare;
pub use declare::{Instance, Instances};
#[cfg(not(target_arch = "nvptx64"))]
pub use declare::{Kernel, entries};

/// Thread, block and grid coordinates, and the block-wide barrier.
///
/// On nvptx64 each is one special register or instruction; on the host each
/// asks the emulator about the emulated thread that is running.
pub mod thread;

/// Global memory, as kernels see it: views of the host's buffers.
///
/// Elements are indexed with `usize`, as Rust slices are, and kernels
/// compute row-major indices with [`global::row_major`], whose arithmetic
/// may not wrap: a wrapping `u32` expression such as `j * m + row` keeps
/// the compiler from turning it into a pointer that steps by `m` along a
/// loop, which CUDA C++ gets from `int`, whose overflow is undefined.
///
/// On nvptx64 a view is the bare device pointer, so a kernel's parameters
/// and loads are exactly those of a raw pointer. On the host a view also
/// knows its buffer's name and length, and the emulator checks every access
/// against them: an index past the end is a diagnostic naming the kernel,
/// block, thread, buffer and index, never a read of someone else's memory.
pub mod global;

// `Global::ldcs` and `GlobalMut::stcs`: the streaming cache hints.
mod streaming;

/// What [`shared_array!`] and [`constant_array!`] expand to: the PTX
/// variable `$name` of `$len` elements of `$element`, declared by
/// `$declaration` (with the named constants it uses), and its `$array`,
/// at the variable's address (a `$bits` in a `$register`) on the GPU, or
/// by its name in the emulator.
#[doc(hidden)]
#[macro_export]
macro_rules! static_array {
    (
        $array:ty, $name:ident, $element:ty, $len:expr, $declaration:literal,
        $bits:ident in $register:ident $(, $constant:ident = $value:expr)*
    ) => {{
        const LEN: u32 = $len;
        #[cfg(target_arch = "nvptx64")]
        let array = {
            ::core::arch::global_asm!(
                concat!($declaration, stringify!($name), "[{bytes}];"),
                $($constant = const $value,)*
                bytes = const LEN as usize * ::core::mem::size_of::<$element>(),
            );
            let address: $bits;
            // SAFETY: taking a variable's address reads and writes nothing.
            unsafe {
                ::core::arch::asm!(
                    concat!("mov.", stringify!($bits), " {}, ", stringify!($name), ";"),
                    out($register) address,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            <$array>::at(address, LEN)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = <$array>::at(stringify!($name), LEN);
        array
    }};
}

/// Declares a statically sized shared array, `__shared__ T NAME[N]` in
/// CUDA C++, and evaluates to its [`shared::StaticArray`]:
/// `let tile = shared_array!(TILE: [f32; 1024]);`.
///
/// `T` is a concrete [`Scalar`]: any integer of 8 to 64 bits, [`f16`](struct@f16),
/// [`bf16`], `f32` or `f64`; and `NAME` is unique among the crate's
/// shared arrays: it is the `.shared` variable's name in the PTX.
///
/// # Safety
/// Used inside a kernel only, as an `unsafe` expression's operand.
#[macro_export]
macro_rules! shared_array {
    ($name:ident: [$element:ty; $len:expr]) => {
        $crate::static_array!(
            $crate::shared::StaticArray<$element>, $name, $element, $len,
            ".shared .align 16 .b8 ", u32 in reg32
        )
    };
}

/// Declares a constant array, `__constant__ T NAME[N]` in CUDA C++, and
/// evaluates to its [`constant::ConstantArray`]:
/// `let weights = constant_array!(WEIGHTS: [f32; 256]);`.
///
/// `T` is a concrete [`Scalar`]. The host sets its contents by name before
/// a launch, as values of the same `T` (`cuModuleGetGlobal` and a copy on
/// the GPU, `emulator::set_constant` in the emulator, which reports a read
/// of an array set with another type). `NAME` is unique among the crate's
/// constant arrays: it is the `.const` variable's name in the PTX.
#[macro_export]
macro_rules! constant_array {
    ($name:ident: [$element:ty; $len:expr]) => {
        $crate::static_array!(
            $crate::constant::ConstantArray<$element>, $name, $element, $len,
            ".visible .const .align {align} .b8 ", u64 in reg64,
            align = ::core::mem::align_of::<$element>()
        )
    };
}

/// The length of a statically sized array, whose `len` field the
/// declaration fixed: the same two methods for its constant and its shared
/// arrays.
macro_rules! fixed_len {
    () => {
        /// Its elements.
        pub const fn len(self) -> u32 {
            self.len
        }

        /// Whether it has none.
        pub const fn is_empty(self) -> bool {
            self.len == 0
        }
    };
}

/// Constant memory: a small read-only space the host fills before a
/// launch, cached on every SM. Its cache serves a warp one address at a
/// time: all lanes reading one element is a single read (a broadcast),
/// lanes reading different elements are served one after another.
pub mod constant;

/// Texture memory: 2-D textures the host makes from a buffer, read through
/// the texture unit, which clamps or zeroes coordinates outside and
/// interpolates between texels in hardware, and caches for 2-D locality.
pub mod texture;

/// Shared memory: launch-sized ("dynamic"), one allocation per block whose
/// size in bytes the host chooses at launch, and statically sized arrays
/// ([`shared_array!`](crate::shared_array)) whose sizes the kernel fixes.
pub mod shared;

/// Asynchronous copies from global to shared memory, under the names of
/// CUDA's pipeline primitives (`__pipeline_memcpy_async`,
/// `__pipeline_commit`, `__pipeline_wait_prior`).
///
/// A thread starts copies, commits them as a group, and goes on computing
/// while they are in flight; before it reads their destinations it waits
/// until all but its newest `N` groups have landed, and before any other
/// thread reads them the block passes a barrier. On compute capability 8.0
/// and newer each copy is one `cp.async` (`LDGSTS`), which moves the
/// element from global to shared memory without passing through a
/// register; below that, where there is no such instruction, it is a load
/// and a store, complete before the call returns. The emulator keeps each
/// copy in flight until its wait: a read or write of its destination before
/// then is a diagnostic, and so is a read by another thread without a
/// barrier after the wait.
pub mod pipeline;

/// Shared-memory barriers with transaction counts (`mbarrier`) and the
/// bulk copies that complete on them (`cp.async.bulk`), compute
/// capability 9.0 and newer.
///
/// One thread initialises an [`Mbarrier`](bulk::Mbarrier) and, after a
/// `sync_threads`, says how many bytes the phase expects and issues one
/// bulk copy for a whole tile, which the Tensor Memory Accelerator moves
/// from global to shared memory; every thread waits on the phase and then
/// reads the tile. The emulator keeps the copy's bytes in flight until the
/// phase completes: touching them before, or without waiting, is a
/// diagnostic, and so are a wait that can never succeed, an arrival too
/// many and a barrier used before its initialisation.
pub mod bulk;

/// Tensor copies, compute capability 9.0 and newer: the Tensor Memory
/// Accelerator's bulk copy of a 2-D box of an array, described by a tensor
/// map the host encodes (`cuTensorMapEncodeTiled`), completing on an
/// [`Mbarrier`](bulk::Mbarrier).
///
/// One instruction moves a whole tile however its rows lie in global
/// memory, fills what falls outside the array with zeros, and can swizzle
/// the tile's rows in shared memory ([`Swizzle::Bytes128`](tensor::Swizzle)),
/// which keeps a column's reads free of bank conflicts where the copy
/// cannot pad the rows. The emulator reads the box as the hardware does,
/// lays it out as the map says, and checks the destination's alignment
/// and that the thread acquired the map.
pub mod tensor;

/// Thread block clusters, compute capability 9.0 and newer: blocks of one
/// cluster run at once on neighbouring SMs, and each may read and write
/// the others' shared memory ("distributed shared memory"), through
/// [`map_shared_rank`](cluster::map_shared_rank). The host groups a
/// launch's blocks with [`Launch::in_clusters`].
///
/// Only a cluster barrier ([`cluster::sync`]) orders two blocks'
/// accesses, and a block's shared memory is gone once it exits. The
/// emulator runs a cluster's blocks at once, and reports two blocks
/// touching one byte between the same two cluster barriers, one of them
/// writing, and an access to the memory of a block that exits before a
/// cluster barrier after it.
pub mod cluster;

/// Atomic read-modify-writes on global and shared memory, under CUDA's
/// names (`atomicAdd`, `atomicCAS`, …), and the memory fences
/// (`__threadfence` and its block and system forms).
///
/// An atomic takes a [`Place`](atomic::Place): one element of a view, from
/// [`GlobalMut::element`](global::GlobalMut::element),
/// [`SharedArray::element`](shared::SharedArray::element) or
/// [`StaticArray::element`](shared::StaticArray::element). Each is
/// relaxed, as CUDA's are, and atomic with the threads of its
/// [`Scope`]: a global place's is the whole GPU (`atomicAdd`) unless
/// [`Place::in_scope`](atomic::Place::in_scope) narrows it (`atomicAdd_block`), a shared place's
/// its block, the only threads that see the memory.
///
/// On the GPU each is one `atom.relaxed.<scope>.<space>.<op>` instruction
/// (`ATOMG`, `ATOMS`, or `RED` where the result goes unused). In the
/// emulator atomics to one element are ordered with each other, never a
/// race; a plain load or store of an element that another thread updates
/// atomically, with nothing ordering the two, is reported as a race, and
/// so are atomics to one global element from two blocks where one of them
/// is scoped to its block. The traffic counts atomics apart from loads and
/// stores ([`Atomics`](gpu_emulator::traffic::Atomics)).
pub mod atomic;

/// The tensor cores, a warp at a time: `mma.sync` on fragments that the
/// warp's lanes hold between them, loaded from shared memory by
/// `ldmatrix`. Compute capability 8.0.
pub mod mma;

/// The tensor cores, a warpgroup at a time: `wgmma.mma_async` reading A
/// and B from shared memory through matrix descriptors. Compute
/// capability 9.0, its arch-specific build (`sm_90a`).
pub mod wgmma;

/// Warp-level operations: the 32 lanes of a warp exchanging registers
/// directly, without going through memory (shuffles), voting, matching
/// and reducing their values, and synchronising among themselves.
///
/// A lane is a thread's index in its warp, the 32 threads of consecutive
/// linear index in the block (`thread_idx_x() % SIZE` in a 1-D block).
pub mod warp;

/// Hints to the compiler that change no result.
pub mod hint;

/// Bit manipulation of one register, as CUDA's integer intrinsics.
pub mod bits;

mod real;
pub use real::Real;

mod scalar;
pub use scalar::{Scalar, bf16, f16};

/// Below compute capability 9.0 there are no clusters, no `mbarrier` with
/// transaction counts and no bulk copies: a kernel using them traps,
/// whatever the operation's operands, and the host launches such kernels
/// only on a GPU that has them.
#[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
#[inline(always)]
fn below_sm90<T>(_operands: &T) {
    // SAFETY: trapping ends the kernel, with an error the host reports.
    unsafe { core::arch::nvptx::trap() }
}

/// Outside the arch-specific build for compute capability 9.0 there is no
/// `wgmma`, `setmaxnreg` or `elect.sync` here: a kernel using them traps,
/// and the host launches such kernels only from that build.
#[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
#[inline(always)]
fn below_sm90a() {
    // SAFETY: trapping ends the kernel, with an error the host reports.
    unsafe { core::arch::nvptx::trap() }
}

/// Below compute capability 8.0 there is no `mma.sync` of bf16 or of 16
/// k (Turing's tensor cores take f16 eight k at a time): a kernel using
/// the runtime's `mma` traps, and the host launches such kernels only on
/// a GPU that has them.
#[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
#[inline(always)]
fn below_sm80() {
    // SAFETY: trapping ends the kernel, with an error the host reports.
    unsafe { core::arch::nvptx::trap() }
}

/// A kernel that panics stops its thread with `trap`, which the host sees as
/// a launch failure.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` is always defined; it aborts the kernel.
    unsafe { core::arch::nvptx::trap() }
}
