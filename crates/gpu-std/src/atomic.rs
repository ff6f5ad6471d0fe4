pub use gpu_core::Scope;

use crate::global::GlobalMut;
use crate::shared::{SharedArray, StaticArray};
#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::{self as emulator, AccessKind};

/// One element that atomics update: its address and the threads the
/// updates are atomic with.
#[derive(Clone, Copy)]
pub struct Place<T> {
    target: Target<T>,
    scope: Scope,
}

/// Where a place lies: a global address, or a shared-window one.
#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy)]
enum Target<T> {
    Global(*mut T),
    Shared(u32),
}

/// Where a place lies, with what the emulator checks an access by.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy)]
enum Target<T> {
    Global(GlobalMut<T>, usize),
    Shared(SharedArray<T>, u32),
    Static(StaticArray<T>, u32),
}

impl<T> Place<T> {
    /// The same element, updated atomically with the threads of `scope`
    /// only: [`Scope::Block`] is `atomicAdd_block`, served nearer the SM
    /// where the hardware can; [`Scope::System`] is `atomicAdd_system`.
    #[must_use]
    pub fn in_scope(self, scope: Scope) -> Self {
        Self { scope, ..self }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T: Copy> Place<T> {
    /// Checks and records the running thread's atomic access made where
    /// the caller's caller was called, and replaces the element by
    /// `update` of it; the element as it was.
    #[track_caller]
    fn update(self, update: impl FnOnce(T) -> T) -> T {
        let site = core::panic::Location::caller();
        let address = match self.target {
            Target::Global(view, index) => view.atomic_access(index, self.scope),
            Target::Shared(array, index) => {
                let address = array.address(index);
                emulator::shared_access(address.cast(), size_of::<T>(), AccessKind::Atomic, site);
                address
            }
            Target::Static(array, index) => array.atomic_access(index),
        };
        // SAFETY: checked inside its buffer or array just now; the
        // emulator runs one thread at a time, so nothing comes between
        // the read and the write.
        unsafe {
            let old = address.read_unaligned();
            address.write_unaligned(update(old));
            old
        }
    }
}

impl<T> GlobalMut<T> {
    /// Element `index`, for atomics at [`Scope::Device`].
    ///
    /// # Safety
    /// `index` lies inside the buffer (the atomic is the access).
    #[inline(always)]
    pub unsafe fn element(self, index: usize) -> Place<T> {
        Place {
            #[cfg(target_arch = "nvptx64")]
            target: Target::Global(self.address(index)),
            #[cfg(not(target_arch = "nvptx64"))]
            target: Target::Global(self, index),
            scope: Scope::Device,
        }
    }
}

impl<T: Copy> SharedArray<T> {
    /// Element `index`, for atomics at [`Scope::Block`].
    ///
    /// # Safety
    /// `index` lies inside the launch-sized allocation.
    #[inline(always)]
    pub unsafe fn element(self, index: u32) -> Place<T> {
        Place {
            #[cfg(target_arch = "nvptx64")]
            target: Target::Shared(self.shared_address(index)),
            #[cfg(not(target_arch = "nvptx64"))]
            target: Target::Shared(self, index),
            scope: Scope::Block,
        }
    }
}

impl<T: Copy> StaticArray<T> {
    /// Element `index`, for atomics at [`Scope::Block`].
    ///
    /// # Safety
    /// `index` is below [`StaticArray::len`].
    #[inline(always)]
    pub unsafe fn element(self, index: u32) -> Place<T> {
        Place {
            #[cfg(target_arch = "nvptx64")]
            target: Target::Shared(self.shared_address(index)),
            #[cfg(not(target_arch = "nvptx64"))]
            target: Target::Static(self, index),
            scope: Scope::Block,
        }
    }
}

/// One `atom` instruction on `$place` with the operands given, its old
/// value in `$bits`: the place's space and scope pick the instruction's.
#[cfg(target_arch = "nvptx64")]
macro_rules! atom {
    ($place:expr, $op:literal, $type:literal, $reg:ident, $bits:ty, $tail:literal, $($operand:expr),+) => {{
        let old: $bits;
        let place = $place;
        // SAFETY (every arm): the caller's contract puts the address
        // inside its memory; the instruction touches that element only.
        macro_rules! atom_in {
            ($scope:literal, $space:literal, $class:ident, $address:expr) => {
                unsafe {
                    core::arch::asm!(
                        concat!("atom.relaxed.", $scope, ".", $space, ".", $op, ".", $type, " ", $tail),
                        out($reg) old,
                        in($class) $address,
                        $(in($reg) $operand,)+
                        options(nostack),
                    )
                }
            };
        }
        match (place.target, place.scope) {
            (Target::Global(address), Scope::Block) => atom_in!("cta", "global", reg64, address),
            #[cfg(target_feature = "sm_90")]
            (Target::Global(address), Scope::Cluster) => atom_in!("cluster", "global", reg64, address),
            (Target::Global(address), Scope::Device) => atom_in!("gpu", "global", reg64, address),
            (Target::Global(address), Scope::System) => atom_in!("sys", "global", reg64, address),
            (Target::Shared(address), Scope::Block) => atom_in!("cta", "shared", reg32, address),
            #[cfg(target_feature = "sm_90")]
            (Target::Shared(address), Scope::Cluster) => atom_in!("cluster", "shared", reg32, address),
            (Target::Shared(address), Scope::Device) => atom_in!("gpu", "shared", reg32, address),
            (Target::Shared(address), Scope::System) => atom_in!("sys", "shared", reg32, address),
            #[cfg(not(target_feature = "sm_90"))]
            (_, Scope::Cluster) => {
                crate::below_sm90(&place);
                old = 0;
            }
        }
        old
    }};
}

/// Implements an atomic operation's trait for types whose PTX type is
/// given, through their bits (a 32- or 64-bit word, as the type's
/// width); `$host` is the new value from `$old` and the operands, on the
/// emulator.
macro_rules! rmw {
    (
        $trait:ident $operands:tt, $op:literal, $tail:literal,
        |$old:ident| $host:expr,
        $($ty:tt: $type:literal),+ $(,)?
    ) => {$(
        rmw!(@word [$trait $operands, $op, $tail, |$old| $host] $ty: $type);
    )+};
    (@word $args:tt u32: $type:literal) => {
        rmw!(@one $args u32: $type, u32, reg32, core::convert::identity, core::convert::identity);
    };
    (@word $args:tt i32: $type:literal) => {
        rmw!(@one $args i32: $type, u32, reg32, i32::cast_unsigned, u32::cast_signed);
    };
    (@word $args:tt f32: $type:literal) => {
        rmw!(@one $args f32: $type, u32, reg32, f32::to_bits, f32::from_bits);
    };
    (@word $args:tt u64: $type:literal) => {
        rmw!(@one $args u64: $type, u64, reg64, core::convert::identity, core::convert::identity);
    };
    (@word $args:tt i64: $type:literal) => {
        rmw!(@one $args i64: $type, u64, reg64, i64::cast_unsigned, u64::cast_signed);
    };
    (@word $args:tt f64: $type:literal) => {
        rmw!(@one $args f64: $type, u64, reg64, f64::to_bits, f64::from_bits);
    };
    (
        @one [$trait:ident ($($operand:ident),+), $op:literal, $tail:literal,
        |$old:ident| $host:expr] $ty:ty: $type:literal, $bits:ty, $reg:ident,
        $to_bits:path, $from_bits:path
    ) => {
        impl $trait for $ty {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn update(place: Place<Self>, $($operand: Self),+) -> Self {
                #[cfg(target_arch = "nvptx64")]
                {
                    let old = atom!(place, $op, $type, $reg, $bits, $tail, $($to_bits($operand)),+);
                    $from_bits(old)
                }
                #[cfg(not(target_arch = "nvptx64"))]
                place.update(|$old: Self| $host)
            }
        }
    };
}

/// Declares an atomic operation: its trait, implemented for the types
/// that have it, and its CUDA-named function.
macro_rules! operation {
    (
        $(#[$meta:meta])*
        fn $name:ident, trait $trait:ident ($($operand:ident),+)
    ) => {
        #[doc = concat!("The element types [`", stringify!($name), "`] takes.")]
        pub trait $trait: Copy {
            /// The operation on `place`; the element as it was.
            ///
            /// # Safety
            /// As the function's.
            unsafe fn update(place: Place<Self>, $($operand: Self),+) -> Self;
        }

        $(#[$meta])*
        ///
        /// # Safety
        /// The place's element lies inside its buffer or array (its
        /// constructor's contract), and no thread reads or writes it
        /// with a plain access unordered with this one.
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $name<T: $trait>(place: Place<T>, $($operand: T),+) -> T {
            // SAFETY: by this function's contract.
            unsafe { T::update(place, $($operand),+) }
        }
    };
}

operation! {
    /// `atomicAdd(address, value)`: adds `value` to the element (wrapping
    /// for integers, rounded for floats) and returns it as it was.
    fn atomic_add, trait AtomicAdd(value)
}
rmw! {
    AtomicAdd(value), "add", "{}, [{}], {};", |old| old.wrapping_add(value),
    u32: "u32", i32: "s32", u64: "u64", i64: "u64"
}
rmw! {
    AtomicAdd(value), "add", "{}, [{}], {};", |old| old + value,
    f32: "f32", f64: "f64"
}

operation! {
    /// `atomicMin(address, value)`: the smaller of the element and
    /// `value`, stored; the element as it was.
    fn atomic_min, trait AtomicMin(value)
}
rmw! {
    AtomicMin(value), "min", "{}, [{}], {};", |old| old.min(value),
    u32: "u32", i32: "s32", u64: "u64", i64: "s64"
}

operation! {
    /// `atomicMax(address, value)`: the larger of the element and
    /// `value`, stored; the element as it was.
    fn atomic_max, trait AtomicMax(value)
}
rmw! {
    AtomicMax(value), "max", "{}, [{}], {};", |old| old.max(value),
    u32: "u32", i32: "s32", u64: "u64", i64: "s64"
}

operation! {
    /// `atomicAnd(address, value)`: the element's bits and `value`'s;
    /// the element as it was.
    fn atomic_and, trait AtomicAnd(value)
}
rmw! {
    AtomicAnd(value), "and", "{}, [{}], {};", |old| old & value,
    u32: "b32", i32: "b32", u64: "b64", i64: "b64"
}

operation! {
    /// `atomicOr(address, value)`: the element's bits or `value`'s; the
    /// element as it was.
    fn atomic_or, trait AtomicOr(value)
}
rmw! {
    AtomicOr(value), "or", "{}, [{}], {};", |old| old | value,
    u32: "b32", i32: "b32", u64: "b64", i64: "b64"
}

operation! {
    /// `atomicXor(address, value)`: the element's bits xor `value`'s;
    /// the element as it was.
    fn atomic_xor, trait AtomicXor(value)
}
rmw! {
    AtomicXor(value), "xor", "{}, [{}], {};", |old| old ^ value,
    u32: "b32", i32: "b32", u64: "b64", i64: "b64"
}

operation! {
    /// `atomicExch(address, value)`: stores `value`; the element as it
    /// was.
    fn atomic_exch, trait AtomicExch(value)
}
rmw! {
    AtomicExch(value), "exch", "{}, [{}], {};", |_old| value,
    u32: "b32", i32: "b32", f32: "b32", u64: "b64", i64: "b64", f64: "b64"
}

operation! {
    /// `atomicCAS(address, compare, value)`: stores `value` where the
    /// element's bits are `compare`'s (a float's bits, so `-0.0` is not
    /// `0.0` and a NaN can match); the element as it was, which equals
    /// `compare` where the swap happened.
    fn atomic_cas, trait AtomicCas(compare, value)
}
rmw! {
    AtomicCas(compare, value), "cas", "{}, [{}], {}, {};",
    |old| if old.to_bits() == compare.to_bits() { value } else { old },
    f32: "b32", f64: "b64"
}
rmw! {
    AtomicCas(compare, value), "cas", "{}, [{}], {}, {};",
    |old| if old == compare { value } else { old },
    u32: "b32", i32: "b32", u64: "b64", i64: "b64"
}

operation! {
    /// `atomicInc(address, limit)`: the element plus one, or 0 where it
    /// was `limit` or more (a counter that wraps at `limit`); the
    /// element as it was.
    fn atomic_inc, trait AtomicInc(limit)
}
rmw! {
    AtomicInc(limit), "inc", "{}, [{}], {};",
    |old| if old >= limit { 0 } else { old + 1 },
    u32: "u32"
}

operation! {
    /// `atomicDec(address, limit)`: the element minus one, or `limit`
    /// where it was 0 or more than `limit`; the element as it was.
    fn atomic_dec, trait AtomicDec(limit)
}
rmw! {
    AtomicDec(limit), "dec", "{}, [{}], {};",
    |old| if old == 0 || old > limit { limit } else { old - 1 },
    u32: "u32"
}

/// Declares a memory fence: one `fence.sc` instruction on the GPU, nothing
/// in the emulator, which runs one thread at a time.
macro_rules! fence {
    ($($(#[$meta:meta])* $name:ident => $instruction:literal;)*) => {$(
        $(#[$meta])*
        ///
        /// The emulator's race checks do not credit fences: two blocks'
        /// plain accesses to one element race there, whatever fence and
        /// flag order them (use atomics for what blocks share).
        #[inline(always)]
        pub fn $name() {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: a fence orders this thread's accesses; it reads and
            // writes nothing.
            unsafe {
                core::arch::asm!($instruction, options(nostack, preserves_flags))
            }
        }
    )*};
}

fence! {
    /// `__threadfence_block()`: this thread's memory accesses before it
    /// are seen by its block's threads before those after it.
    thread_fence_block => "fence.sc.cta;";
    /// `__threadfence()`: the same for every thread of the GPU.
    thread_fence => "fence.sc.gpu;";
    /// `__threadfence_system()`: the same for every thread of every GPU
    /// and the host's.
    thread_fence_system => "fence.sc.sys;";
}
