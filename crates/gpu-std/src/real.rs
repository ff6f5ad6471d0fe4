//! The floating-point types kernels compute in, and what each does on the
//! hardware.

#[cfg(target_arch = "nvptx64")]
use crate::global;
use crate::scalar::Scalar;
use crate::warp;

/// Floating-point element types the kernels compute in and are generic
/// over: a [`Scalar`] (which stores it in shared and constant memory) with
/// the arithmetic, vector width and shuffles the kernels use.
pub trait Real:
    Scalar + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self> + warp::Shuffle
{
    /// Zero: where a sum starts.
    const ZERO: Self;

    /// The elements of one 16-byte vector load: `[f32; 4]` or `[f64; 2]`.
    type Vector: Copy + Default + AsRef<[Self]> + AsMut<[Self]>;

    /// Elements in a [`Real::Vector`].
    const VECTOR_LEN: u32;

    /// `self * a + b` with one rounding: CUDA C++ contracts `x * y + z` into
    /// an FMA by default, Rust never does, so the kernels ask for it.
    fn mul_add(self, a: Self, b: Self) -> Self;

    /// The largest integer not above `self` (`floorf`): `core` has no
    /// `floor` without `std`, which a kernel cannot link.
    fn floor(self) -> Self;

    /// One 16-byte load through the read-only data cache.
    ///
    /// # Safety
    /// As [`crate::global::Global::read_vector`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn load_vector(address: *const Self) -> Self::Vector;

    /// One 16-byte store.
    ///
    /// # Safety
    /// As [`crate::global::GlobalMut::write_vector`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn store_vector(address: *mut Self, values: Self::Vector);
}

/// Implements [`Real`] for a float type: its zero, its 16-byte vector of
/// `lanes` elements, its fused multiply-add and floor, and the vector
/// load and store given, which differ with the PTX vector types.
macro_rules! real {
    ($type:ty, $lanes:literal lanes, $fma:ident, $floor:ident; $($vector:tt)*) => {
        impl Real for $type {
            const ZERO: Self = 0.0;
            type Vector = [$type; $lanes];
            const VECTOR_LEN: u32 = $lanes;

            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                core::intrinsics::$fma(self, a, b)
            }

            #[inline(always)]
            fn floor(self) -> Self {
                core::intrinsics::$floor(self)
            }

            $($vector)*
        }
    };
}

real! {
    f32, 4 lanes, fmaf32, floorf32;

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

real! {
    f64, 2 lanes, fmaf64, floorf64;

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
