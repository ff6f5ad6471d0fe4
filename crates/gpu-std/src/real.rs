//! The floating-point types kernels compute in, and what each does on the
//! hardware.

#[cfg(target_arch = "nvptx64")]
use crate::global;
use crate::warp;

/// Floating-point element types the kernels are generic over.
pub trait Real:
    Copy + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self> + PartialEq + warp::Shuffle
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

    /// One load from `address` in the shared window (`LDS`).
    ///
    /// # Safety
    /// As [`crate::shared::StaticArray::read`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn load_shared(address: u32) -> Self;

    /// One store to `address` in the shared window (`STS`).
    ///
    /// # Safety
    /// As [`crate::shared::StaticArray::write`].
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

    #[inline(always)]
    fn floor(self) -> Self {
        core::intrinsics::floorf32(self)
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

    #[inline(always)]
    fn floor(self) -> Self {
        core::intrinsics::floorf64(self)
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
