//! Declaring kernels: [`kernels!`](crate::kernels) turns a crate's
//! kernel functions into PTX entry points on the GPU and, on the host, into
//! a list of [`Kernel`]s that say everything a launcher needs.

#[cfg(not(target_arch = "nvptx64"))]
use crate::{Launch, LaunchBounds};

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
/// min_blocks)]` or `#[launch_bounds(max_threads)]`, see [`LaunchBounds`](crate::LaunchBounds)),
/// the oldest compute capability it runs on (`#[compute_capability(9, 0)]`
/// for a kernel that uses what only Hopper and newer have; 7.5 unsaid;
/// `#[compute_capability(9, 0, arch_specific)]` for one that uses what only
/// the arch-specific build for exactly that capability, `sm_90a`, holds:
/// `wgmma` and `setmaxnreg`)
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
            $(#[compute_capability($major:literal, $minor:literal $(, $specific:ident)?)])?
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
                capability: $crate::compute_capability!($($major, $minor)?),
                arch_specific: $crate::arch_specific!($($($specific)?)?),
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
        // A kernel's parameters are its CUDA signature, however many.
        #[allow(clippy::too_many_arguments)]
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
        // A kernel's parameters are its CUDA signature, however many.
        #[allow(clippy::too_many_arguments)]
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

/// A kernel's [`LaunchBounds`](crate::LaunchBounds) from its `#[launch_bounds(...)]`: the most
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

/// The oldest compute capability a kernel runs on, from its
/// `#[compute_capability(major, minor)]`, or Turing's 7.5, the oldest the
/// project builds for.
#[doc(hidden)]
#[macro_export]
macro_rules! compute_capability {
    () => {
        (7, 5)
    };
    ($major:literal, $minor:literal) => {
        ($major, $minor)
    };
}

/// Whether a kernel's declaration says `#[compute_capability(major, minor,
/// arch_specific)]`.
#[doc(hidden)]
#[macro_export]
macro_rules! arch_specific {
    () => {
        false
    };
    (arch_specific) => {
        true
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
    /// The oldest compute capability whose GPUs have what it uses, major
    /// and minor: the PTX builds for older GPUs hold it as a trap, and the
    /// host launches it on none of them.
    pub capability: (u32, u32),
    /// Whether it needs the arch-specific build for exactly its
    /// capability (`sm_90a`, whose `wgmma` and `setmaxnreg` no other build
    /// holds), which runs on GPUs of that capability only.
    pub arch_specific: bool,
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
    /// The entry point's name: the kernel's, then each value after a `_`.
    pub entry: &'static str,
    /// The constants' values, in the order of [`Instances::by`].
    pub values: &'static [u32],
}
