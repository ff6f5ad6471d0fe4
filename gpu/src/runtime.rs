//! The device runtime: everything a kernel needs from the hardware, under the
//! names a Rust-CUDA (`cuda_std`) reader knows.
//!
//! Kernels never touch `core::arch::nvptx` themselves; they go through this
//! module, so that the lesson reads the same as CUDA C++ and so that the one
//! place that talks to the hardware is small enough to audit.

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
            kernel! {
                [$lesson $($doc)*] ($($bounds),+)
                [$($($by),+ in $(($($value),+))+)?] [$($(const $constant: $constant_ty),+)?]
                $name ($($arg: $ty),*) ($($arg),*) $body
            }
        )*

        $(#[doc = $list_doc])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub const $list: &[$crate::runtime::Kernel<$args, $problem>] = &[$(
            $crate::runtime::Kernel {
                name: stringify!($name),
                lesson: $lesson,
                params: &[$(stringify!($arg)),*],
                launch: $launch,
                bounds: launch_bounds!($($bounds),+),
                local_memory: local_memory!($($local)?),
                instances: instances!($name $($($by),+ in $(($($value),+))+)?),
                // SAFETY: the caller of `run` takes on the kernel's contract.
                run: |($($arg,)*)| unsafe { $name($($arg),*) },
            }
        ),*];
    };
}

/// One kernel of [`kernels!`]: an entry point, or one for each instance of
/// a kernel generic over constants, and the host build of its body.
macro_rules! kernel {
    (
        [$lesson:literal $($doc:literal)*] $bounds:tt [] []
        $name:ident $params:tt $call:tt $body:block
    ) => {
        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(
            concat!("// launch_bounds ", stringify!($name), " {max_threads} {min_blocks}"),
            max_threads = const launch_bounds! $bounds.max_threads,
            min_blocks = const launch_bounds! $bounds.ptx_min_blocks(),
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
        $(kernel_instance!($name $bounds ($($value),+) $generics $params $call $body);)+

        #[doc = $lesson]
        $(#[doc = $doc])*
        ///
        /// On the host, the instance its parameters `
        #[doc = stringify!($($by),+)]
        /// ` pick.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name $params {
            generic_body!($generics $params $body);
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
            max_threads = const launch_bounds! $bounds.max_threads,
            min_blocks = const launch_bounds! $bounds.ptx_min_blocks(),
        );

        #[cfg(target_arch = "nvptx64")]
        const _: () = {
            #[unsafe(export_name = concat!(stringify!($name), $("_", $value),+))]
            #[allow(improper_gpu_kernel_arg)]
            unsafe extern "gpu-kernel" fn instance $params {
                generic_body!($generics $params $body);
                // SAFETY: by the kernel's contract.
                unsafe { body::<$($value),+> $call }
            }
        };
    };
}

/// A generic kernel's body, `body`, inlined into each instance.
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
macro_rules! instances {
    ($name:ident) => {
        None
    };
    ($name:ident $($by:ident),+ in $(($($value:literal),+))+) => {
        Some($crate::runtime::Instances {
            by: &[$(stringify!($by)),+],
            each: &[$(
                $crate::runtime::Instance {
                    entry: concat!(stringify!($name), $("_", $value),+),
                    values: &[$($value),+],
                }
            ),+],
        })
    };
}

/// A kernel's [`LaunchBounds`] from its `#[launch_bounds(...)]`: the most
/// threads a block has, and optionally the fewest blocks an SM holds.
macro_rules! launch_bounds {
    ($max_threads:expr) => {
        $crate::runtime::LaunchBounds::new($max_threads, None)
    };
    ($max_threads:expr, $min_blocks:expr) => {
        $crate::runtime::LaunchBounds::new($max_threads, Some($min_blocks))
    };
}

/// Whether a kernel's declaration says `#[launch(contract, local_memory)]`:
/// it puts data in local memory on purpose, as its lesson.
macro_rules! local_memory {
    () => {
        false
    };
    (local_memory) => {
        true
    };
}

/// x, y and z extents or coordinates.
pub type Dim3 = (u32, u32, u32);

/// A launch's shape: what a kernel's launch contract asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub grid: Dim3,
    pub block: Dim3,
    /// Launch-sized shared memory per block.
    pub shared_bytes: u32,
}

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
        }
    }
}

/// CUDA's `__launch_bounds__(max_threads, min_blocks)`: the most threads a
/// block of the kernel is ever launched with, and, where declared, the
/// fewest such blocks that must fit on one SM at once.
///
/// They reach ptxas as the entry's `.maxntid` and `.minnctapersm`, and it
/// allocates registers for that occupancy: with 65536 registers an SM, 256
/// threads and 2 blocks leave at most 128 registers a thread, 4 blocks 64,
/// 8 blocks 32, and a kernel that needs more spills. Declaring the fewest
/// blocks is not free: ptxas then also feels free to use every register
/// up to that cap, so a small kernel that would take 36 registers takes
/// 80 under `(128, 1)`, and a chain of loads may run further ahead with
/// more registers than full occupancy leaves (the gemvs). Each kernel's
/// bounds were measured against the others (docs/rust-as-fast-as-cuda.md
/// §9), and its doc comment says why they are what they are.
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

    /// The fewest blocks as the PTX line of [`kernels!`] writes it: 0 for
    /// none declared.
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
        let values: Vec<_> = instances.by.iter().map(|&by| value_of(by)).collect();
        instances
            .each
            .iter()
            .find(|instance| {
                instance
                    .values
                    .iter()
                    .map(|&v| Some(v))
                    .eq(values.iter().copied())
            })
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
pub mod thread {
    #[cfg(target_arch = "nvptx64")]
    use core::arch::nvptx;

    #[cfg(not(target_arch = "nvptx64"))]
    use crate::emulator;

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
        /// `gridDim.x`: blocks in the grid along x.
        grid_dim_x => _grid_dim_x, grid_dim.0;
        /// `gridDim.y`.
        grid_dim_y => _grid_dim_y, grid_dim.1;
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
}

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
pub mod global {
    use super::Real;
    #[cfg(not(target_arch = "nvptx64"))]
    use crate::emulator::{self, AccessKind, GlobalAccess};

    macro_rules! view {
        ($(#[$meta:meta])* $name:ident, $pointer:ty) => {
            $(#[$meta])*
            #[cfg(target_arch = "nvptx64")]
            #[derive(Clone, Copy)]
            #[repr(transparent)]
            pub struct $name<T> {
                base: $pointer,
            }

            $(#[$meta])*
            #[cfg(not(target_arch = "nvptx64"))]
            #[derive(Clone, Copy)]
            pub struct $name<T> {
                base: $pointer,
                len: usize,
                buffer: &'static str,
            }

            #[cfg(not(target_arch = "nvptx64"))]
            impl<T> $name<T> {
                /// Checks and records an access to `elements` elements from
                /// `index` on, made where the caller was called, `index`
                /// being a multiple of `alignment`.
                #[track_caller]
                fn access(self, index: usize, elements: usize, alignment: usize, kind: AccessKind) {
                    let access = GlobalAccess {
                        buffer: self.buffer,
                        base: self.base as usize,
                        len: self.len,
                        index,
                        elements,
                        alignment,
                        element_bytes: size_of::<T>(),
                        piece_bytes: match elements {
                            1 => align_of::<T>().min(size_of::<T>()),
                            _ => (elements * size_of::<T>()).max(1),
                        },
                        kind,
                    };
                    emulator::global_access(access, core::panic::Location::caller());
                }
            }

            impl<T: Copy> $name<T> {
                /// Reads element `index`.
                ///
                /// # Safety
                /// `index` lies inside the buffer, and no other thread
                /// writes the element during the launch.
                #[inline(always)]
                #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
                pub unsafe fn read(self, index: usize) -> T {
                    #[cfg(not(target_arch = "nvptx64"))]
                    self.access(index, 1, 1, AccessKind::Read);
                    #[cfg(target_arch = "nvptx64")]
                    // SAFETY: by this function's contract.
                    unsafe {
                        *self.base.add(index)
                    }
                    // SAFETY: checked inside the buffer just now; a view
                    // made by `cast` need not be aligned on the host.
                    #[cfg(not(target_arch = "nvptx64"))]
                    unsafe {
                        self.base.add(index).read_unaligned()
                    }
                }

                /// The same buffer as elements of `U`, as CUDA C++'s
                /// `reinterpret_cast<const U*>` makes it: element i of the
                /// view is the bytes from i·size_of::<U>() on. Each access
                /// through it is one access of `size_of::<U>()` bytes.
                ///
                /// # Safety
                /// `U` is plain data, every bit pattern a value, and its
                /// alignment at most 256: the buffer starts on a 256-byte
                /// boundary, as `cudaMalloc`'s do.
                #[inline(always)]
                pub unsafe fn cast<U>(self) -> $name<U> {
                    $name {
                        base: self.base.cast(),
                        #[cfg(not(target_arch = "nvptx64"))]
                        len: self.len * size_of::<T>() / size_of::<U>(),
                        #[cfg(not(target_arch = "nvptx64"))]
                        buffer: self.buffer,
                    }
                }
            }

            impl<T: Real> $name<T> {
                /// Reads the [`Real::VECTOR_LEN`] elements from `index` on
                /// with one 16-byte load (`LDG.E.128.CONSTANT`), through the
                /// read-only data cache (`ld.global.nc`, CUDA's `__ldg`).
                ///
                /// # Safety
                /// The elements lie inside the buffer, no thread writes them
                /// during the launch, and `index` is a multiple of
                /// [`Real::VECTOR_LEN`]: the buffer starts on a 256-byte
                /// boundary, as `cudaMalloc`'s do, so the load is 16-byte
                /// aligned, which the hardware requires (a misaligned one
                /// stops the kernel). The emulator checks all three.
                #[inline(always)]
                #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
                pub unsafe fn read_vector(self, index: usize) -> T::Vector {
                    #[cfg(target_arch = "nvptx64")]
                    // SAFETY: by this function's contract.
                    unsafe {
                        T::load_vector(self.base.add(index))
                    }
                    #[cfg(not(target_arch = "nvptx64"))]
                    {
                        self.access(index, T::VECTOR_LEN as usize, T::VECTOR_LEN as usize, AccessKind::Read);
                        // SAFETY: checked in bounds just now; the host's
                        // buffer need not be 16-byte aligned, hence unaligned.
                        unsafe { self.base.add(index).cast::<T::Vector>().read_unaligned() }
                    }
                }
            }
        };
    }

    /// The index of element (`row`, `col`) of a row-major array whose rows
    /// are `width` elements long.
    ///
    /// # Safety
    /// `row × width + col` fits in `u32`, as every kernel's launch contract
    /// promises. The arithmetic may then assume that it does not wrap, as
    /// CUDA C++ may assume of `int`: this is what lets the compiler step a
    /// pointer along a loop instead of recomputing every address (see
    /// docs/rust-as-fast-as-cuda.md). The emulator checks the promise.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub unsafe fn row_major(row: u32, col: u32, width: u32) -> usize {
        // SAFETY: by this function's contract.
        unsafe { row.unchecked_mul(width).unchecked_add(col) as usize }
    }

    /// The index of element (`row`, `col`) of a row-major array whose rows
    /// are `width` elements long; an index beyond `u32` stops the emulated
    /// thread with a panic, which the emulator reports.
    ///
    /// # Safety
    /// None on the host; kept `unsafe` to match the GPU's contract.
    #[cfg(not(target_arch = "nvptx64"))]
    pub unsafe fn row_major(row: u32, col: u32, width: u32) -> usize {
        row.checked_mul(width)
            .and_then(|start| start.checked_add(col))
            .unwrap_or_else(|| panic!("index of ({row}, {col}) in rows of {width} overflows u32"))
            as usize
    }

    view! {
        /// A buffer the kernel only reads (`const T*`).
        Global, *const T
    }

    view! {
        /// A buffer the kernel writes, and may read (`T*`).
        GlobalMut, *mut T
    }

    impl<T: Copy> GlobalMut<T> {
        /// Writes element `index`.
        ///
        /// # Safety
        /// `index` lies inside the buffer, and no other thread touches the
        /// element during the launch.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn write(self, index: usize, value: T) {
            #[cfg(not(target_arch = "nvptx64"))]
            self.access(index, 1, 1, AccessKind::Write);
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                *self.base.add(index) = value
            }
            // SAFETY: checked inside the buffer just now; a view made by
            // `cast` need not be aligned on the host.
            #[cfg(not(target_arch = "nvptx64"))]
            unsafe {
                self.base.add(index).write_unaligned(value)
            }
        }
    }

    impl<T: Real> GlobalMut<T> {
        /// Writes the [`Real::VECTOR_LEN`] elements from `index` on with one
        /// 16-byte store (`STG.E.128`).
        ///
        /// # Safety
        /// The elements lie inside the buffer, no other thread touches them
        /// during the launch, and `index` is a multiple of
        /// [`Real::VECTOR_LEN`], so that the store is 16-byte aligned, as
        /// the hardware requires. The emulator checks all three.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn write_vector(self, index: usize, values: T::Vector) {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                T::store_vector(self.base.add(index), values)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                self.access(
                    index,
                    T::VECTOR_LEN as usize,
                    T::VECTOR_LEN as usize,
                    AccessKind::Write,
                );
                // SAFETY: checked in bounds just now; the host's buffer
                // need not be 16-byte aligned, hence unaligned.
                unsafe {
                    self.base
                        .add(index)
                        .cast::<T::Vector>()
                        .write_unaligned(values)
                }
            }
        }
    }

    #[cfg(target_arch = "nvptx64")]
    impl<T> Global<T> {
        /// The address of element `index`, which need not lie inside the
        /// buffer: for the runtime's own instructions.
        #[inline(always)]
        pub(crate) fn address(self, index: usize) -> *const T {
            self.base.wrapping_add(index)
        }
    }

    /// A word: four bytes moved by one 4-byte load or store.
    pub type Word = [u8; 4];

    impl Global<u8> {
        /// Reads the four bytes from `index` on with one 4-byte load
        /// (`LDG.E`), a quarter of the instructions of four byte loads.
        ///
        /// # Safety
        /// The bytes lie inside the buffer, no thread writes them during the
        /// launch, and `index` is a multiple of 4: the buffer starts on a
        /// 256-byte boundary, as `cudaMalloc`'s do, so the load is aligned,
        /// which the hardware requires. The emulator checks all three.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn read_word(self, index: usize) -> Word {
            let address = self.base.wrapping_add(index).cast::<u32>();
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            let word = unsafe { address.read() };
            #[cfg(not(target_arch = "nvptx64"))]
            // SAFETY: checked just now; the host's buffer need not be
            // 4-byte aligned, hence unaligned.
            let word = {
                self.access(index, 4, 4, AccessKind::Read);
                unsafe { address.read_unaligned() }
            };
            word.to_le_bytes()
        }
    }

    /// A line: sixteen bytes moved by one 16-byte load or store, as four
    /// little-endian words, the registers it lands in.
    pub type Line = [u32; 4];

    /// One 16-byte load through the read-only path
    /// (`ld.global.nc.v4.b32`, `LDG.E.128.CONSTANT`). In assembly, because
    /// LLVM splits a 16-byte value it is handed into narrower accesses.
    ///
    /// # Safety
    /// `address` is 16-byte aligned, in global memory, and nothing writes
    /// its bytes while the kernel runs.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) unsafe fn load_v4(address: *const u8) -> [u32; 4] {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: by this function's contract; the load only reads.
        unsafe {
            core::arch::asm!(
                "ld.global.nc.v4.b32 {{{}, {}, {}, {}}}, [{}];",
                out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d,
                in(reg64) address,
                options(pure, readonly, nostack),
            );
        }
        [a, b, c, d]
    }

    /// One 16-byte store (`st.global.v4.b32`, `STG.E.128`).
    ///
    /// # Safety
    /// `address` is 16-byte aligned, in global memory, and no other thread
    /// touches its bytes.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) unsafe fn store_v4(address: *mut u8, words: [u32; 4]) {
        let [a, b, c, d] = words;
        // SAFETY: by this function's contract.
        unsafe {
            core::arch::asm!(
                "st.global.v4.b32 [{}], {{{}, {}, {}, {}}};",
                in(reg64) address,
                in(reg32) a, in(reg32) b, in(reg32) c, in(reg32) d,
                options(nostack),
            );
        }
    }

    impl Global<u8> {
        /// Reads the sixteen bytes from `index` on with one 16-byte load
        /// through the read-only path (`load_v4` on the GPU), a sixteenth
        /// of the instructions of byte loads.
        ///
        /// # Safety
        /// As [`Global::read_word`], with `index` a multiple of 16.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn read_line(self, index: usize) -> Line {
            let address = self.base.wrapping_add(index);
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                load_v4(address)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                self.access(index, 16, 16, AccessKind::Read);
                // SAFETY: checked just now; unaligned as in `read_word`.
                let bytes = unsafe { address.cast::<[u8; 16]>().read_unaligned() };
                core::array::from_fn(|w| {
                    u32::from_le_bytes([
                        bytes[4 * w],
                        bytes[4 * w + 1],
                        bytes[4 * w + 2],
                        bytes[4 * w + 3],
                    ])
                })
            }
        }
    }

    impl GlobalMut<u8> {
        /// Writes the sixteen bytes from `index` on with one 16-byte store
        /// (`STG.E.128`).
        ///
        /// # Safety
        /// As [`Global::read_line`], with no other thread touching the bytes.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn write_line(self, index: usize, line: Line) {
            let address = self.base.wrapping_add(index);
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                store_v4(address, line)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                self.access(index, 16, 16, AccessKind::Write);
                let bytes: [u8; 16] =
                    core::array::from_fn(|i| (line[i / 4] >> (8 * (i % 4))) as u8);
                // SAFETY: checked just now; unaligned as in `read_word`.
                unsafe { address.cast::<[u8; 16]>().write_unaligned(bytes) }
            }
        }
    }

    impl GlobalMut<u8> {
        /// Writes the four bytes from `index` on with one 4-byte store
        /// (`STG.E`).
        ///
        /// # Safety
        /// As [`Global::read_word`], with no other thread touching the bytes.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn write_word(self, index: usize, word: Word) {
            let address = self.base.wrapping_add(index).cast::<u32>();
            let word = u32::from_le_bytes(word);
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                address.write(word)
            };
            #[cfg(not(target_arch = "nvptx64"))]
            // SAFETY: checked just now; unaligned as in `read_word`.
            {
                self.access(index, 4, 4, AccessKind::Write);
                unsafe { address.write_unaligned(word) }
            }
        }
    }

    #[cfg(not(target_arch = "nvptx64"))]
    impl<T: Real> Global<T> {
        /// The `count` elements from `index` on, the start of a 16-byte
        /// span, checked and recorded as one access: what an asynchronous
        /// 16-byte copy reads.
        #[track_caller]
        pub(crate) fn read_span(self, index: usize, count: usize) -> Vec<T> {
            self.access(index, count, T::VECTOR_LEN as usize, AccessKind::Read);
            // SAFETY: checked in bounds just now.
            (0..count)
                .map(|i| unsafe { *self.base.add(index + i) })
                .collect()
        }
    }

    #[cfg(not(target_arch = "nvptx64"))]
    impl<T> Global<T> {
        /// A view of `data`, called `buffer` in diagnostics.
        pub fn new(buffer: &'static str, data: &[T]) -> Self {
            Self {
                base: data.as_ptr(),
                len: data.len(),
                buffer,
            }
        }
    }

    #[cfg(not(target_arch = "nvptx64"))]
    impl<T> GlobalMut<T> {
        /// A view of `data`, called `buffer` in diagnostics.
        pub fn new(buffer: &'static str, data: &mut [T]) -> Self {
            Self {
                base: data.as_mut_ptr(),
                len: data.len(),
                buffer,
            }
        }
    }
}

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
            $crate::runtime::shared::StaticArray::<$element>::at(address, LEN)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = $crate::runtime::shared::StaticArray::<$element>::at(stringify!($name), LEN);
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
            $crate::runtime::constant::ConstantArray::at(address, LEN)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = $crate::runtime::constant::ConstantArray::at(stringify!($name), LEN);
        array
    }};
}

/// Constant memory: a small read-only space the host fills before a
/// launch, cached on every SM. Its cache serves a warp one address at a
/// time: all lanes reading one element is a single read (a broadcast),
/// lanes reading different elements are served one after another.
pub mod constant {
    #[cfg(not(target_arch = "nvptx64"))]
    use crate::emulator;

    /// A constant array of `f32`, as [`constant_array!`](crate::constant_array)
    /// declares it.
    #[derive(Clone, Copy)]
    pub struct ConstantArray {
        #[cfg(target_arch = "nvptx64")]
        address: u64,
        #[cfg(not(target_arch = "nvptx64"))]
        name: &'static str,
        len: u32,
    }

    impl ConstantArray {
        /// The array of `len` elements at `address` in the constant space.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn at(address: u64, len: u32) -> Self {
            Self { address, len }
        }

        /// The emulated array `name` of `len` elements.
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn at(name: &'static str, len: u32) -> Self {
            Self { name, len }
        }

        /// Its elements.
        pub const fn len(self) -> u32 {
            self.len
        }

        /// Whether it has none.
        pub const fn is_empty(self) -> bool {
            self.len == 0
        }

        /// Reads element `index` through the constant cache (`LDC`).
        ///
        /// # Safety
        /// `index` is below [`ConstantArray::len`], and the host has set
        /// the array. The emulator checks both.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn read(self, index: u32) -> f32 {
            #[cfg(target_arch = "nvptx64")]
            {
                let bits: u32;
                // SAFETY: by this function's contract; the load only reads.
                unsafe {
                    core::arch::asm!(
                        "ld.const.b32 {}, [{}];",
                        out(reg32) bits,
                        in(reg64) self.address + 4 * u64::from(index),
                        options(pure, readonly, nostack, preserves_flags),
                    );
                }
                f32::from_bits(bits)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            emulator::constant_read(self.name, self.len, index, core::panic::Location::caller())
        }
    }
}

/// Shared memory: launch-sized ("dynamic"), one allocation per block whose
/// size in bytes the host chooses at launch, and statically sized arrays
/// ([`shared_array!`](crate::shared_array)) whose sizes the kernel fixes.
pub mod shared {
    use core::marker::PhantomData;

    use super::Real;

    #[cfg(not(target_arch = "nvptx64"))]
    use crate::emulator;

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
                // Declared 16-byte aligned, whatever `T`, for `read_vector`.
                base: core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Aligned<[u32; 4]>>()
                    .cast(),
                element: PhantomData,
            }
        }

        /// The start of the emulated block's launch-sized shared memory.
        ///
        /// # Safety
        /// Only inside an emulated kernel.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn launch_sized() -> Self {
            Self {
                base: emulator::shared_base().cast(),
                element: PhantomData,
            }
        }

        /// The array that starts `elements` elements after this one.
        ///
        /// # Safety
        /// The result must still lie inside the launch-sized allocation.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub unsafe fn after(self, elements: u32) -> Self {
            Self {
                // SAFETY: in bounds by this function's contract.
                base: unsafe { self.base.add(elements as usize) },
                element: PhantomData,
            }
        }

        /// The array that starts `elements` elements after this one; the
        /// emulator checks the bounds when it is accessed.
        ///
        /// # Safety
        /// None on the host; kept `unsafe` to match the GPU's contract.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn after(self, elements: u32) -> Self {
            Self {
                base: self.base.wrapping_add(elements as usize),
                element: PhantomData,
            }
        }

        /// The address of element `index`, for the runtime's own
        /// instructions.
        #[inline(always)]
        pub(crate) fn address(self, index: u32) -> *mut T {
            self.base.wrapping_add(index as usize)
        }

        /// The 32-bit shared-window address of element `index`
        /// (`__cvta_generic_to_shared`), as `cp.async` takes it: the
        /// window's start, converted once a kernel, plus a byte offset,
        /// instead of a 64-bit generic address converted at each copy.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub(crate) fn shared_address(self, index: u32) -> u32 {
            let start = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u8>();
            let window_start: u32;
            // SAFETY: converting an address reads and writes nothing; as
            // `pure`, the conversion of the one start is computed once.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .u64 window; cvta.to.shared.u64 window, {start}; \
                     cvt.u32.u64 {window_start}, window; }}",
                    start = in(reg64) start,
                    window_start = out(reg32) window_start,
                    options(pure, nomem, nostack),
                );
            }
            let offset = self.address(index) as usize - start as usize;
            window_start + offset as u32
        }

        /// Reads element `index`.
        ///
        /// # Safety
        /// `index` must be inside the allocation, and the element must have
        /// been written by this block, with a barrier between a write by
        /// another thread and this read.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn read(self, index: u32) -> T {
            #[cfg(not(target_arch = "nvptx64"))]
            emulator::shared_access(
                self.base.wrapping_add(index as usize).cast(),
                size_of::<T>(),
                emulator::AccessKind::Read,
                core::panic::Location::caller(),
            );
            // SAFETY: by this function's contract (which the emulator has
            // just checked, on the host).
            unsafe { *self.base.add(index as usize) }
        }

        /// Writes element `index`.
        ///
        /// # Safety
        /// `index` must be inside the allocation, and no other thread may
        /// touch the element between the same two barriers.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn write(self, index: u32, value: T) {
            #[cfg(not(target_arch = "nvptx64"))]
            emulator::shared_access(
                self.base.wrapping_add(index as usize).cast(),
                size_of::<T>(),
                emulator::AccessKind::Write,
                core::panic::Location::caller(),
            );
            // SAFETY: by this function's contract (which the emulator has
            // just checked, on the host).
            unsafe { *self.base.add(index as usize) = value }
        }
    }

    /// A statically sized shared array, `__shared__ T name[N]` in CUDA C++,
    /// as [`shared_array!`](crate::shared_array) declares it: its size is
    /// part of the kernel, which ptxas and the driver report, and the host
    /// asks for nothing at launch.
    ///
    /// On the GPU it is the array's address in the shared window, read and
    /// written with `ld.shared`/`st.shared` (`LDS`/`STS`); in the emulator,
    /// a region of the block's shared memory with the same race, barrier
    /// and initialisation checks as launch-sized memory, and its own bounds.
    #[derive(Clone, Copy)]
    pub struct StaticArray<T> {
        #[cfg(target_arch = "nvptx64")]
        address: u32,
        #[cfg(not(target_arch = "nvptx64"))]
        base: *mut T,
        #[cfg(not(target_arch = "nvptx64"))]
        name: &'static str,
        len: u32,
        element: PhantomData<T>,
    }

    impl<T: Real> StaticArray<T> {
        /// The array of `len` elements at `address` in the shared window.
        ///
        /// # Safety
        /// `address` is that of a `.shared` array of at least `len`
        /// elements, 16-byte aligned, as [`shared_array!`](crate::shared_array)
        /// declares it.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub unsafe fn at(address: u32, len: u32) -> Self {
            Self {
                address,
                len,
                element: PhantomData,
            }
        }

        /// The emulated block's array `name` of `len` elements: the same
        /// memory for every thread of the block.
        ///
        /// # Safety
        /// None on the host; kept `unsafe` to match the GPU's contract.
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn at(name: &'static str, len: u32) -> Self {
            let bytes = len * size_of::<T>() as u32;
            Self {
                base: emulator::static_shared(name, bytes).cast(),
                name,
                len,
                element: PhantomData,
            }
        }

        /// Its elements.
        pub const fn len(self) -> u32 {
            self.len
        }

        /// Whether it has none.
        pub const fn is_empty(self) -> bool {
            self.len == 0
        }

        /// Checks an access to element `index` and records it.
        #[cfg(not(target_arch = "nvptx64"))]
        #[track_caller]
        fn access(self, index: u32, kind: emulator::AccessKind) -> *mut T {
            if index >= self.len {
                emulator::static_shared_out_of_bounds(self.name, index, self.len, kind);
            }
            let address = self.base.wrapping_add(index as usize);
            emulator::shared_access(
                address.cast(),
                size_of::<T>(),
                kind,
                core::panic::Location::caller(),
            );
            address
        }

        /// Reads element `index`.
        ///
        /// # Safety
        /// As [`SharedArray::read`], `index` below [`StaticArray::len`].
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn read(self, index: u32) -> T {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                T::load_shared(self.address + index * size_of::<T>() as u32)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            // SAFETY: checked inside the array just now.
            unsafe {
                self.access(index, emulator::AccessKind::Read).read()
            }
        }

        /// Writes element `index`.
        ///
        /// # Safety
        /// As [`SharedArray::write`], `index` below [`StaticArray::len`].
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn write(self, index: u32, value: T) {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                T::store_shared(self.address + index * size_of::<T>() as u32, value)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            // SAFETY: checked inside the array just now.
            unsafe {
                self.access(index, emulator::AccessKind::Write).write(value)
            }
        }
    }

    /// A value stored on a 16-byte boundary.
    #[cfg(target_arch = "nvptx64")]
    #[repr(C, align(16))]
    #[derive(Clone, Copy)]
    struct Aligned<V>(V);

    impl<T: Real> SharedArray<T> {
        /// Reads the [`Real::VECTOR_LEN`] elements from `index` on with one
        /// 16-byte load (`LDS.128`): a quarter of the instructions of four
        /// loads of one f32 each.
        ///
        /// # Safety
        /// As [`SharedArray::read`] for each element, and `index` is a
        /// multiple of [`Real::VECTOR_LEN`] from a 16-byte boundary: the
        /// launch-sized memory starts on one, and the hardware requires
        /// the alignment. The emulator checks it.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn read_vector(self, index: u32) -> T::Vector {
            let address = self.base.wrapping_add(index as usize);
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: by this function's contract.
            unsafe {
                address.cast::<Aligned<T::Vector>>().read().0
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                emulator::shared_access(
                    address.cast(),
                    size_of::<T::Vector>(),
                    emulator::AccessKind::Read,
                    core::panic::Location::caller(),
                );
                // SAFETY: checked just now; the host's memory is only 8-byte
                // aligned, hence unaligned.
                unsafe { address.cast::<T::Vector>().read_unaligned() }
            }
        }
    }
}

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
pub mod pipeline {
    use super::global::Global;
    use super::shared::SharedArray;
    #[cfg(not(target_arch = "nvptx64"))]
    use crate::emulator;

    /// `__pipeline_memcpy_async(&tile[index], &source[element], 4, 0)`:
    /// starts copying `source[element]` to `tile[index]`; or, when
    /// `element` is `None`, writing zero there without reading `source`
    /// (`cp.async` with a source size of 0 bytes).
    ///
    /// # Safety
    /// `tile[index]` lies inside the launch-sized shared memory and no other
    /// thread touches it until a barrier after this thread's wait;
    /// `source[element]` lies inside the buffer and no thread writes it
    /// during the launch.
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    #[inline(always)]
    pub unsafe fn memcpy_async(
        tile: SharedArray<f32>,
        index: u32,
        source: Global<f32>,
        element: Option<usize>,
    ) {
        let (from, bytes) = match element {
            Some(element) => (source.address(element), 4u32),
            None => (source.address(0), 0),
        };
        // SAFETY: by this function's contract.
        unsafe {
            core::arch::asm!(
                "cp.async.ca.shared.global [{to}], [{from}], 4, {bytes};",
                to = in(reg32) tile.shared_address(index),
                from = in(reg64) from,
                bytes = in(reg32) bytes,
                options(nostack),
            );
        }
    }

    /// `__pipeline_memcpy_async` below compute capability 8.0: a load and
    /// a store, landed when the call returns.
    ///
    /// # Safety
    /// As the `cp.async` version.
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    #[inline(always)]
    pub unsafe fn memcpy_async(
        tile: SharedArray<f32>,
        index: u32,
        source: Global<f32>,
        element: Option<usize>,
    ) {
        // SAFETY: by this function's contract.
        unsafe { tile.write(index, element.map_or(0.0, |element| source.read(element))) }
    }

    /// `__pipeline_memcpy_async`, emulated: `source[element]` is read now
    /// and lands in `tile[index]` at this thread's wait.
    ///
    /// # Safety
    /// None on the host beyond the GPU's contract, which the emulator
    /// checks.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub unsafe fn memcpy_async(
        tile: SharedArray<f32>,
        index: u32,
        source: Global<f32>,
        element: Option<usize>,
    ) {
        let value = match element {
            // SAFETY: the emulator checks the bounds before reading.
            Some(element) => unsafe { source.read(element) },
            None => 0.0,
        };
        emulator::memcpy_async(
            tile.address(index).cast(),
            &value.to_le_bytes(),
            core::panic::Location::caller(),
        );
    }

    /// `__pipeline_memcpy_async(&tile[index], &source[element], 16, 4 × count)`:
    /// starts copying the `count` (0 to 4) elements from `source[element]`
    /// on into the four from `tile[index]` on, zero-filling the rest: one
    /// 16-byte `cp.async`, which bypasses L1 (`.cg`).
    ///
    /// # Safety
    /// As [`memcpy_async`] for each element copied; `index` and `element`
    /// are multiples of 4 from 16-byte boundaries (the buffers' starts),
    /// which the emulator checks.
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    #[inline(always)]
    pub unsafe fn memcpy_async_vector(
        tile: SharedArray<f32>,
        index: u32,
        source: Global<f32>,
        element: usize,
        count: u32,
    ) {
        let from = source.address(if count > 0 { element } else { 0 });
        // SAFETY: as in `memcpy_async`.
        unsafe {
            core::arch::asm!(
                "cp.async.cg.shared.global [{to}], [{from}], 16, {bytes};",
                to = in(reg32) tile.shared_address(index),
                from = in(reg64) from,
                bytes = in(reg32) 4 * count,
                options(nostack),
            );
        }
    }

    /// `memcpy_async_vector` below compute capability 8.0: four loads and
    /// stores.
    ///
    /// # Safety
    /// As the `cp.async` version.
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    #[inline(always)]
    pub unsafe fn memcpy_async_vector(
        tile: SharedArray<f32>,
        index: u32,
        source: Global<f32>,
        element: usize,
        count: u32,
    ) {
        for i in 0..4 {
            // SAFETY: by this function's contract.
            unsafe {
                let value = if i < count {
                    source.read(element + i as usize)
                } else {
                    0.0
                };
                tile.write(index + i, value);
            }
        }
    }

    /// `memcpy_async_vector`, emulated: the elements are read now, as one
    /// access, and land at this thread's wait.
    ///
    /// # Safety
    /// None on the host beyond the GPU's contract, which the emulator
    /// checks.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub unsafe fn memcpy_async_vector(
        tile: SharedArray<f32>,
        index: u32,
        source: Global<f32>,
        element: usize,
        count: u32,
    ) {
        let mut bytes = [0u8; 16];
        if count > 0 {
            let values = source.read_span(element, count as usize);
            for (i, value) in values.iter().enumerate() {
                bytes[4 * i..4 * i + 4].copy_from_slice(&value.to_le_bytes());
            }
        }
        let site = core::panic::Location::caller();
        emulator::memcpy_async(tile.address(index).cast(), &bytes, site);
    }

    /// `__pipeline_commit()`: closes the group of copies started since the
    /// last commit.
    #[inline(always)]
    pub fn commit() {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        // SAFETY: `cp.async.commit_group` only groups this thread's copies.
        unsafe {
            core::arch::asm!("cp.async.commit_group;", options(nostack))
        };
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::pipeline_commit();
    }

    /// `__pipeline_wait_prior(N)`: waits until at most this thread's `N`
    /// newest committed groups are still in flight. Their destinations are
    /// then this thread's to read; other threads' after a barrier.
    #[inline(always)]
    pub fn wait_prior<const N: u32>() {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
        // SAFETY: waiting has no other effect; the asm is a compiler barrier
        // too, so no read of shared memory moves above it.
        unsafe {
            core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack))
        };
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::pipeline_wait(N);
    }
}

/// Warp-level operations: the 32 lanes of a warp exchanging registers
/// directly, without going through memory.
///
/// A lane is a thread's index in its warp, the 32 threads of consecutive
/// linear index in the block (`thread_idx_x() % SIZE` in a 1-D block).
pub mod warp {
    #[cfg(not(target_arch = "nvptx64"))]
    use crate::emulator::{self, ShuffleKind};

    /// Threads per warp.
    pub const SIZE: u32 = 32;

    /// The mask that names all 32 lanes.
    pub const ALL_LANES: u32 = u32::MAX;

    /// A value a shuffle moves: one 32-bit register, or two for 64 bits
    /// (which the hardware shuffles one half at a time, as CUDA does).
    pub trait Shuffle: Copy {
        fn to_bits(self) -> u64;
        fn from_bits(bits: u64) -> Self;
    }

    impl Shuffle for u32 {
        fn to_bits(self) -> u64 {
            self.into()
        }
        fn from_bits(bits: u64) -> Self {
            bits as u32
        }
    }

    impl Shuffle for f32 {
        fn to_bits(self) -> u64 {
            self.to_bits().into()
        }
        fn from_bits(bits: u64) -> Self {
            f32::from_bits(bits as u32)
        }
    }

    impl Shuffle for f64 {
        fn to_bits(self) -> u64 {
            self.to_bits()
        }
        fn from_bits(bits: u64) -> Self {
            f64::from_bits(bits)
        }
    }

    /// The clamp operand of a shuffle across the whole warp: lanes 0 to 31
    /// form one segment.
    #[cfg(target_arch = "nvptx64")]
    const WHOLE_WARP: u32 = 0x1f;

    #[cfg(target_arch = "nvptx64")]
    unsafe extern "C" {
        #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
        fn shfl_sync_bfly(mask: u32, value: u32, lane_mask: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
        fn shfl_sync_down(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
        fn shfl_sync_up(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    }

    /// A shuffle of `kind` on the emulator: the lanes of `mask` exchange
    /// their values where the caller's caller stands.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn emulated<T: Shuffle>(kind: ShuffleKind, mask: u32, value: T) -> T {
        let site = core::panic::Location::caller();
        T::from_bits(emulator::shuffle(kind, mask, value.to_bits(), site))
    }

    /// Applies a 32-bit shuffle to each register of `value`.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn each_word<T: Shuffle>(value: T, shuffle: impl Fn(u32) -> u32) -> T {
        let bits = value.to_bits();
        let low = u64::from(shuffle(bits as u32));
        let high = if size_of::<T>() == 8 {
            u64::from(shuffle((bits >> 32) as u32)) << 32
        } else {
            0
        };
        T::from_bits(high | low)
    }

    /// `__shfl_xor_sync(mask, value, lane_mask)`: the `value` of lane
    /// `lane ^ lane_mask` (`SHFL.BFLY`), this lane's own where that is past
    /// lane 31. Summing the results for lane masks 16, 8, 4, 2, 1 leaves
    /// the warp's sum in every lane.
    ///
    /// Every lane named in `mask` must reach this same shuffle, this lane
    /// among them, and read a lane named in it: otherwise the value is
    /// undefined. The emulator checks that and reports a mask that names a
    /// lane that is not there, has returned, or waits elsewhere.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn shfl_xor_sync<T: Shuffle>(mask: u32, value: T, lane_mask: u32) -> T {
        // SAFETY: `shfl.sync` is defined for every operand; a mask broken
        // as above gives an undefined value, not undefined behaviour.
        each_word(value, |word| unsafe {
            shfl_sync_bfly(mask, word, lane_mask, WHOLE_WARP)
        })
    }

    /// `__shfl_xor_sync`, emulated with the lanes of the mask exchanging
    /// their values.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub fn shfl_xor_sync<T: Shuffle>(mask: u32, value: T, lane_mask: u32) -> T {
        emulated(ShuffleKind::Xor(lane_mask), mask, value)
    }

    /// `__shfl_down_sync(mask, value, delta)`: the `value` of lane
    /// `lane + delta` (`SHFL.DOWN`), this lane's own where that is past
    /// lane 31. Summing the results for deltas 16, 8, 4, 2, 1 leaves the
    /// warp's sum in lane 0. The same rules as [`shfl_xor_sync`].
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn shfl_down_sync<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        // SAFETY: as in `shfl_xor_sync`.
        each_word(value, |word| unsafe {
            shfl_sync_down(mask, word, delta, WHOLE_WARP)
        })
    }

    /// `__shfl_down_sync`, emulated.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub fn shfl_down_sync<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        emulated(ShuffleKind::Down(delta), mask, value)
    }

    /// `__shfl_up_sync(mask, value, delta)`: the `value` of lane
    /// `lane - delta` (`SHFL.UP`), this lane's own where that is before
    /// lane 0. Adding the result for deltas 1, 2, 4, 8, 16, each in the
    /// lanes at or past the delta, leaves in every lane the sum of its own
    /// and all earlier lanes' values: a prefix sum. The same rules as
    /// [`shfl_xor_sync`].
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn shfl_up_sync<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        // SAFETY: as in `shfl_xor_sync`.
        each_word(value, |word| unsafe { shfl_sync_up(mask, word, delta, 0) })
    }

    /// `__shfl_up_sync`, emulated.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub fn shfl_up_sync<T: Shuffle>(mask: u32, value: T, delta: u32) -> T {
        emulated(ShuffleKind::Up(delta), mask, value)
    }
}

/// Hints to the compiler that change no result.
pub mod hint {
    /// `value` itself, made again each time this runs, so that LLVM hoists
    /// neither it nor anything computed from it out of the loop it is in.
    ///
    /// LLVM moves every computation whose inputs do not change in a loop
    /// out of it, however many: each then holds a register along the whole
    /// loop. Where sixteen such values crowd out what the loop needs, it is
    /// cheaper to compute them again where they are used, as nvcc's
    /// rematerialisation does and LLVM's NVPTX backend does not. One `mov`,
    /// which ptxas removes.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn per_iteration(value: u64) -> u64 {
        let made: u64;
        // SAFETY: a register copy. Not `pure`, so that LLVM neither hoists
        // nor merges it; `nomem`, so that memory accesses still move
        // freely around it.
        unsafe {
            core::arch::asm!(
                "mov.b64 {}, {};",
                out(reg64) made,
                in(reg64) value,
                options(nomem, nostack, preserves_flags),
            );
        }
        made
    }

    /// [`per_iteration`] on the host: `value`.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn per_iteration(value: u64) -> u64 {
        value
    }
}

/// Bit manipulation of one register, as CUDA's integer intrinsics.
pub mod bits {
    #[cfg(target_arch = "nvptx64")]
    unsafe extern "C" {
        #[link_name = "llvm.nvvm.prmt"]
        fn prmt(x: u32, y: u32, selector: u32) -> u32;
        #[link_name = "llvm.nvvm.mulhi.ui"]
        fn mulhi(x: u32, y: u32) -> u32;
    }

    /// `__byte_perm(x, y, selector)`: four bytes picked from the eight of
    /// `x` (bytes 0 to 3) and `y` (bytes 4 to 7), byte `n` of the result
    /// the one that nibble `n` of `selector` names (`PRMT`, one
    /// instruction). Moves bytes between 8- and 16-bit lanes of a register:
    /// `byte_perm(x, 0, 0x4140)` spreads bytes 0 and 1 of `x` into the two
    /// 16-bit halves. Each nibble must be at most 7 (the hardware's eighth
    /// bit asks for a sign instead): the emulator checks it.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn byte_perm(x: u32, y: u32, selector: u32) -> u32 {
        // SAFETY: `prmt` is defined for every operand.
        unsafe { prmt(x, y, selector) }
    }

    /// `__umulhi(x, y)`: the high 32 bits of the 64-bit product of `x`
    /// and `y` (`IMAD.HI.U32`, one instruction). Written out, LLVM keeps
    /// a 32-bit operand it cannot see is one in a 64-bit register and
    /// multiplies all 64 bits (three instructions, two more registers).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn umulhi(x: u32, y: u32) -> u32 {
        // SAFETY: `mulhi` is defined for every operand.
        unsafe { mulhi(x, y) }
    }

    /// `__umulhi`, emulated.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn umulhi(x: u32, y: u32) -> u32 {
        ((u64::from(x) * u64::from(y)) >> 32) as u32
    }

    /// `__byte_perm`, emulated.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub fn byte_perm(x: u32, y: u32, selector: u32) -> u32 {
        assert!(
            selector & !0x7777 == 0,
            "byte_perm's selector {selector:#x} names a byte past 7"
        );
        let bytes = (u64::from(y) << 32 | u64::from(x)).to_le_bytes();
        let pick = |n: u32| u32::from(bytes[(selector >> (4 * n) & 7) as usize]) << (8 * n);
        pick(0) | pick(1) | pick(2) | pick(3)
    }
}

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
