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

/// Declares a family's GPU entry points, in teaching order, and the list
/// the host knows them by.
///
/// Each `pub unsafe fn` inside becomes an unmangled `extern "gpu-kernel"`
/// function on nvptx64, which is what the PTX `.entry` needs. On the host it
/// stays an ordinary function, the body of one thread, which the emulator
/// runs once per thread of a launch; and the list becomes a constant of
/// [`Kernel`]s, each with its entry-point name (the identifier itself), the
/// first line of its doc comment as its lesson, its parameters' names, its
/// launch contract (`#[launch(f)]`, `f` a `fn(&Problem) -> Launch`;
/// `#[launch(f, local_memory)]` for a kernel that uses local memory on
/// purpose), its launch bounds (`#[launch_bounds(max_threads,
/// min_blocks)]` or `#[launch_bounds(max_threads)]`, see [`LaunchBounds`])
/// and the host build of its body. Nothing about a kernel is written twice.
///
/// A kernel generic over constants, `pub unsafe fn name<const C: usize,
/// …>(…, c: u32, …)`, declares the values it is compiled for,
/// `#[instances(c, … in (1, …) (2, …))]`: each tuple becomes an entry
/// point `name_1_…` of its own, which ptxas allocates registers for alone,
/// the parameters named standing for the constants; on the host the body
/// picks its instance by those parameters (see [`Instances`]).
///
/// On nvptx64 the launch bounds also become a line of the PTX,
/// `// launch_bounds NAME MAX_THREADS MIN_BLOCKS` (0 for no fewest
/// blocks), which the build turns into the entry's `.maxntid` and
/// `.minnctapersm` directives: rustc has no attribute that reaches them,
/// and they must sit inside the entry, where no inline assembly can write.
#[macro_export]
macro_rules! kernels {
    (
        $(#[doc = $list_doc:literal])*
        pub const $list:ident: [Kernel<$args:ty, $problem:ty>];
        $(
            #[doc = $lesson:literal]
            $(#[doc = $doc:literal])*
            #[launch($launch:expr $(, $local:ident)?)]
            #[launch_bounds($($bounds:expr),+)]
            $(#[instances($($by:ident),+ in $(($($value:literal),+))+)])?
            pub unsafe fn $name:ident $(<$(const $constant:ident: $constant_ty:ty),+>)?
                ($($arg:ident: $ty:ty),* $(,)?) $body:block
        )*
    ) => {
        $(
            $crate::kernel! {
                [$lesson $($doc)*] ($($bounds),+)
                [$($($by),+ in $(($($value),+))+)?] [$($(const $constant: $constant_ty),+)?]
                $name ($($arg: $ty),*) ($($arg),*) $body
            }
        )*

        $(#[doc = $list_doc])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub const $list: &[$crate::Kernel<$args, $problem>] = &[$(
            $crate::Kernel {
                name: stringify!($name),
                lesson: $lesson,
                params: &[$(stringify!($arg)),*],
                launch: $launch,
                bounds: $crate::launch_bounds!($($bounds),+),
                local_memory: $crate::local_memory!($($local)?),
                instances: $crate::instances!($name $($($by),+ in $(($($value),+))+)?),
                // SAFETY: the caller of `run` takes on the kernel's contract.
                run: |($($arg,)*)| unsafe { $name($($arg),*) },
            }
        ),*];
    };
}

/// One kernel of [`kernels!`]: an entry point, or one for each instance of
/// a kernel generic over constants, and the host build of its body.
#[doc(hidden)]
#[macro_export]
macro_rules! kernel {
    (
        [$lesson:literal $($doc:literal)*] $bounds:tt [] []
        $name:ident $params:tt $call:tt $body:block
    ) => {
        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(
            concat!("// launch_bounds ", stringify!($name), " {max_threads} {min_blocks}"),
            max_threads = const $crate::launch_bounds! $bounds.max_threads,
            min_blocks = const $crate::launch_bounds! $bounds.ptx_min_blocks(),
        );

        #[doc = $lesson]
        $(#[doc = $doc])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        // The global-memory views are `#[repr(transparent)]` raw pointers,
        // which the lint cannot see: the PTX passes each as the same
        // `.param .u64` a raw pointer is.
        #[allow(improper_gpu_kernel_arg)]
        pub unsafe extern "gpu-kernel" fn $name $params $body

        #[doc = $lesson]
        $(#[doc = $doc])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name $params $body
    };
    (
        [$lesson:literal $($doc:literal)*] $bounds:tt
        [$($by:ident),+ in $(($($value:literal),+))+] $generics:tt
        $name:ident $params:tt $call:tt $body:block
    ) => {
        $($crate::kernel_instance!($name $bounds ($($value),+) $generics $params $call $body);)+

        #[doc = $lesson]
        $(#[doc = $doc])*
        ///
        /// On the host, the instance its parameters `
        #[doc = stringify!($($by),+)]
        /// ` pick.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name $params {
            $crate::generic_body!($generics $params $body);
            match ($($by),+) {
                // SAFETY: by the kernel's contract.
                $(($($value),+) => unsafe { body::<$($value),+> $call },)+
                other => panic!(
                    "{} is compiled for no ({}) = {other:?}",
                    stringify!($name),
                    stringify!($($by),+)
                ),
            }
        }
    };
}

/// One instance of a generic kernel of [`kernels!`]: an entry point
/// `NAME_VALUE_VALUE…` with its launch bounds, the body with the constants
/// given.
#[doc(hidden)]
#[macro_export]
macro_rules! kernel_instance {
    (
        $name:ident $bounds:tt ($($value:literal),+) $generics:tt
        $params:tt $call:tt $body:block
    ) => {
        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(
            concat!(
                "// launch_bounds ", stringify!($name), $("_", $value,)+
                " {max_threads} {min_blocks}"
            ),
            max_threads = const $crate::launch_bounds! $bounds.max_threads,
            min_blocks = const $crate::launch_bounds! $bounds.ptx_min_blocks(),
        );

        #[cfg(target_arch = "nvptx64")]
        const _: () = {
            #[unsafe(export_name = concat!(stringify!($name), $("_", $value),+))]
            #[allow(improper_gpu_kernel_arg)]
            unsafe extern "gpu-kernel" fn instance $params {
                $crate::generic_body!($generics $params $body);
                // SAFETY: by the kernel's contract.
                unsafe { body::<$($value),+> $call }
            }
        };
    };
}

/// A generic kernel's body, `body`, inlined into each instance.
#[doc(hidden)]
#[macro_export]
macro_rules! generic_body {
    ([$($generic:tt)+] $params:tt $body:block) => {
        // The constants stand for the parameters that picked the instance,
        // which the body may leave unread.
        #[allow(unused_variables)]
        #[inline(always)]
        unsafe fn body<$($generic)+> $params $body
    };
}

/// A kernel's [`Instances`] from its `#[instances(...)]`, or none.
#[doc(hidden)]
#[macro_export]
macro_rules! instances {
    ($name:ident) => {
        None
    };
    ($name:ident $($by:ident),+ in $(($($value:literal),+))+) => {
        Some($crate::Instances {
            by: &[$(stringify!($by)),+],
            each: &[$(
                $crate::Instance {
                    entry: concat!(stringify!($name), $("_", $value),+),
                    values: &[$($value),+],
                }
            ),+],
        })
    };
}

/// A kernel's [`LaunchBounds`] from its `#[launch_bounds(...)]`: the most
/// threads a block has, and optionally the fewest blocks an SM holds.
#[doc(hidden)]
#[macro_export]
macro_rules! launch_bounds {
    ($max_threads:expr) => {
        $crate::LaunchBounds::new($max_threads, None)
    };
    ($max_threads:expr, $min_blocks:expr) => {
        $crate::LaunchBounds::new($max_threads, Some($min_blocks))
    };
}

/// Whether a kernel's declaration says `#[launch(contract, local_memory)]`:
/// it puts data in local memory on purpose, as its lesson.
#[doc(hidden)]
#[macro_export]
macro_rules! local_memory {
    () => {
        false
    };
    (local_memory) => {
        true
    };
}

pub use gpu_core::{Dim3, FULL_SM_THREADS, Launch, LaunchBounds};

/// A kernel as the host sees it, made by [`kernels!`] from the kernel's
/// declaration. `Args` is the tuple of its parameter types; `Problem` what
/// its launch contract is a function of.
#[cfg(not(target_arch = "nvptx64"))]
pub struct Kernel<Args, Problem> {
    /// The function's own name: its entry point in the PTX, or, for a
    /// kernel generic over constants, the stem of its instances' (see
    /// [`Kernel::entries`]).
    pub name: &'static str,
    /// The first line of its doc comment: what it teaches.
    pub lesson: &'static str,
    /// Its parameters' names, in order, which name the buffers in the
    /// emulator's diagnostics.
    pub params: &'static [&'static str],
    /// The grid, block and shared memory it must be launched with.
    pub launch: fn(&Problem) -> Launch,
    /// The most threads a block of it has, and the fewest blocks an SM must
    /// hold, which ptxas allocates its registers for.
    pub bounds: LaunchBounds,
    /// Whether it uses local memory on purpose (an array indexed at run
    /// time, or spilled registers), as its lesson; every other kernel keeps
    /// its data in registers, which the tests and CI hold it to.
    pub local_memory: bool,
    /// For a kernel generic over constants, the instances it is compiled
    /// for, each its own entry point; `None` for one entry point, `name`.
    pub instances: Option<Instances>,
    /// The body of one thread, compiled for the host, for the emulator.
    ///
    /// # Safety
    /// As the kernel's own `# Safety` section.
    pub run: unsafe fn(Args),
}

#[cfg(not(target_arch = "nvptx64"))]
impl<Args, Problem> Kernel<Args, Problem> {
    /// The lesson line, without the doc comment's leading space.
    pub fn lesson(&self) -> &'static str {
        self.lesson.trim()
    }

    /// Its entry points: its name, or one per instance.
    pub fn entries(&self) -> Vec<&'static str> {
        entries(self.name, self.instances)
    }

    /// The entry point that runs a launch whose parameters named `by` an
    /// instance have the values `value_of` gives: `name` itself for a
    /// kernel that is not generic, `None` where no instance has them.
    pub fn entry(&self, value_of: impl Fn(&str) -> Option<u32>) -> Option<&'static str> {
        let Some(instances) = self.instances else {
            return Some(self.name);
        };
        let picks = |instance: &&Instance| {
            let mut pairs = instance.values.iter().zip(instances.by);
            pairs.all(|(&value, &by)| value_of(by) == Some(value))
        };
        instances
            .each
            .iter()
            .find(picks)
            .map(|instance| instance.entry)
    }
}

/// The instances of a kernel generic over constants, as C++ instantiates a
/// template: each compiled with its constants known, so that every index
/// they fix is a constant and its arrays live in registers, and with
/// registers allocated for it alone. Its launch picks the one whose
/// constants its parameters `by` equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instances {
    /// The parameters the constants stand for, in order.
    pub by: &'static [&'static str],
    /// The instances compiled.
    pub each: &'static [Instance],
}

/// The entry points of the kernel `name` with `instances`: its name, or
/// one per instance.
#[cfg(not(target_arch = "nvptx64"))]
pub fn entries(name: &'static str, instances: Option<Instances>) -> Vec<&'static str> {
    match instances {
        Some(instances) => instances
            .each
            .iter()
            .map(|instance| instance.entry)
            .collect(),
        None => vec![name],
    }
}

/// One instance of a generic kernel: its entry point,
/// `NAME_VALUE_VALUE…`, and its constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instance {
    pub entry: &'static str,
    pub values: &'static [u32],
}

/// Thread, block and grid coordinates, and the block-wide barrier.
///
/// On nvptx64 each is one special register or instruction; on the host each
/// asks the emulator about the emulated thread that is running.
pub mod thread;

/// Global memory, as kernels see it: views of the host's buffers.
///
/// Elements are indexed with `usize`, as Rust slices are, and kernels
/// compute row-major indices with [`row_major`], whose arithmetic may not
/// wrap: a wrapping `u32` expression such as `j * m + row` keeps the
/// compiler from turning it into a pointer that steps by `m` along a loop,
/// which CUDA C++ gets from `int`, whose overflow is undefined.
///
/// On nvptx64 a view is the bare device pointer, so a kernel's parameters
/// and loads are exactly those of a raw pointer. On the host a view also
/// knows its buffer's name and length, and the emulator checks every access
/// against them: an index past the end is a diagnostic naming the kernel,
/// block, thread, buffer and index, never a read of someone else's memory.
pub mod global;

/// Declares a statically sized shared array, `__shared__ T NAME[N]` in
/// CUDA C++, and evaluates to its [`shared::StaticArray`]:
/// `let tile = shared_array!(TILE: [f32; 1024]);`.
///
/// `T` is a concrete [`Real`], and `NAME` is unique among the crate's
/// shared arrays: it is the `.shared` variable's name in the PTX.
///
/// # Safety
/// Used inside a kernel only, as an `unsafe` expression's operand.
#[macro_export]
macro_rules! shared_array {
    ($name:ident: [$element:ty; $len:expr]) => {{
        const LEN: u32 = $len;
        #[cfg(target_arch = "nvptx64")]
        let array = {
            ::core::arch::global_asm!(
                concat!(".shared .align 16 .b8 ", stringify!($name), "[{bytes}];"),
                bytes = const LEN as usize * ::core::mem::size_of::<$element>(),
            );
            let address: u32;
            // SAFETY: taking a variable's address reads and writes nothing.
            unsafe {
                ::core::arch::asm!(
                    concat!("mov.u32 {}, ", stringify!($name), ";"),
                    out(reg32) address,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            $crate::shared::StaticArray::<$element>::at(address, LEN)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = $crate::shared::StaticArray::<$element>::at(stringify!($name), LEN);
        array
    }};
}

/// Declares a constant array, `__constant__ f32 NAME[N]` in CUDA C++, and
/// evaluates to its [`constant::ConstantArray`]:
/// `let weights = constant_array!(WEIGHTS: [f32; 256]);`.
///
/// The host sets its contents by name before a launch (`cuModuleGetGlobal`
/// and a copy on the GPU, `emulator::set_constant` in the emulator).
/// `NAME` is unique among the crate's constant arrays: it is the `.const`
/// variable's name in the PTX.
#[macro_export]
macro_rules! constant_array {
    ($name:ident: [f32; $len:expr]) => {{
        const LEN: u32 = $len;
        #[cfg(target_arch = "nvptx64")]
        let array = {
            ::core::arch::global_asm!(
                concat!(".visible .const .align 4 .b8 ", stringify!($name), "[{bytes}];"),
                bytes = const LEN as usize * 4,
            );
            let address: u64;
            // SAFETY: taking a variable's address reads and writes nothing.
            unsafe {
                ::core::arch::asm!(
                    concat!("mov.u64 {}, ", stringify!($name), ";"),
                    out(reg64) address,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            $crate::constant::ConstantArray::at(address, LEN)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = $crate::constant::ConstantArray::at(stringify!($name), LEN);
        array
    }};
}

/// Constant memory: a small read-only space the host fills before a
/// launch, cached on every SM. Its cache serves a warp one address at a
/// time: all lanes reading one element is a single read (a broadcast),
/// lanes reading different elements are served one after another.
pub mod constant;

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

/// Warp-level operations: the 32 lanes of a warp exchanging registers
/// directly, without going through memory.
///
/// A lane is a thread's index in its warp, the 32 threads of consecutive
/// linear index in the block (`thread_idx_x() % SIZE` in a 1-D block).
pub mod warp;

/// Hints to the compiler that change no result.
pub mod hint;

/// Bit manipulation of one register, as CUDA's integer intrinsics.
pub mod bits;

/// Floating-point element types the kernels are generic over.
pub trait Real:
    Copy + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self> + PartialEq + warp::Shuffle
{
    const ZERO: Self;

    /// The elements of one 16-byte vector load: `[f32; 4]` or `[f64; 2]`.
    type Vector: Copy + Default + AsRef<[Self]> + AsMut<[Self]>;

    /// Elements in a [`Real::Vector`].
    const VECTOR_LEN: u32;

    /// `self * a + b` with one rounding: CUDA C++ contracts `x * y + z` into
    /// an FMA by default, Rust never does, so the kernels ask for it.
    fn mul_add(self, a: Self, b: Self) -> Self;

    /// One 16-byte load through the read-only data cache.
    ///
    /// # Safety
    /// As [`global::Global::read_vector`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn load_vector(address: *const Self) -> Self::Vector;

    /// One 16-byte store.
    ///
    /// # Safety
    /// As [`global::GlobalMut::write_vector`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn store_vector(address: *mut Self, values: Self::Vector);

    /// One load from `address` in the shared window (`LDS`).
    ///
    /// # Safety
    /// As [`shared::StaticArray::read`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn load_shared(address: u32) -> Self;

    /// One store to `address` in the shared window (`STS`).
    ///
    /// # Safety
    /// As [`shared::StaticArray::write`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn store_shared(address: u32, value: Self);
}

/// [`Real::load_shared`] and [`Real::store_shared`] for a type of `$bits`
/// bits, moved through an unsigned integer of as many.
macro_rules! shared_access {
    ($bits:literal, $unsigned:ty, $register:ident) => {
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        unsafe fn load_shared(address: u32) -> Self {
            let bits: $unsigned;
            // SAFETY: by the caller's contract; the load only reads.
            unsafe {
                core::arch::asm!(
                    concat!("ld.shared.b", $bits, " {}, [{}];"),
                    out($register) bits,
                    in(reg32) address,
                    options(readonly, nostack, preserves_flags),
                );
            }
            Self::from_bits(bits)
        }

        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        unsafe fn store_shared(address: u32, value: Self) {
            // SAFETY: by the caller's contract.
            unsafe {
                core::arch::asm!(
                    concat!("st.shared.b", $bits, " [{}], {};"),
                    in(reg32) address,
                    in($register) value.to_bits(),
                    options(nostack, preserves_flags),
                );
            }
        }
    };
}

impl Real for f32 {
    shared_access!("32", u32, reg32);

    const ZERO: Self = 0.0;
    type Vector = [f32; 4];
    const VECTOR_LEN: u32 = 4;

    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf32(self, a, b)
    }

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn load_vector(address: *const Self) -> [f32; 4] {
        // SAFETY: by the caller's contract.
        unsafe { global::load_v4(address.cast()) }.map(f32::from_bits)
    }

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn store_vector(address: *mut Self, values: [f32; 4]) {
        // SAFETY: by the caller's contract.
        unsafe { global::store_v4(address.cast(), values.map(f32::to_bits)) }
    }
}

impl Real for f64 {
    shared_access!("64", u64, reg64);

    const ZERO: Self = 0.0;
    type Vector = [f64; 2];
    const VECTOR_LEN: u32 = 2;

    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf64(self, a, b)
    }

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn load_vector(address: *const Self) -> [f64; 2] {
        let (a, b): (u64, u64);
        // SAFETY: by the caller's contract; the load only reads.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.v2.b64 {{{}, {}}}, [{}];",
                out(reg64) a, out(reg64) b,
                in(reg64) address,
                options(pure, readonly, nostack),
            );
        }
        [a, b].map(f64::from_bits)
    }

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    unsafe fn store_vector(address: *mut Self, values: [f64; 2]) {
        let [a, b] = values.map(f64::to_bits);
        // SAFETY: by the caller's contract.
        unsafe {
            core::arch::asm!(
                "st.global.v2.b64 [{}], {{{}, {}}};",
                in(reg64) address,
                in(reg64) a, in(reg64) b,
                options(nostack),
            );
        }
    }
}

/// A kernel that panics stops its thread with `trap`, which the host sees as
/// a launch failure.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` is always defined; it aborts the kernel.
    unsafe { core::arch::nvptx::trap() }
}
