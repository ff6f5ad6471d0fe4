//! The element types of shared and constant arrays: every integer of 8 to
//! 64 bits and every float of 16 to 64, and the one instruction each is
//! loaded and stored with.

#[cfg(target_arch = "nvptx64")]
use core::arch::asm;

pub use half::{bf16, f16};

/// Keeps [`Scalar`] to the types below: each has an instruction of its
/// width, which a type of another size or a struct would not.
mod sealed {
    pub trait Sealed {}
}

/// A plain-data element of a shared or constant array, as CUDA C++
/// declares `__shared__ T a[N]` and `__constant__ T c[N]` for any
/// arithmetic `T`: `i8` to `i64`, `u8` to `u64`, [`f16`](struct@f16), [`bf16`], `f32`
/// and `f64`.
///
/// Sealed: each is moved by one `ld`/`st` of its width (`.b8` to `.b64`).
/// A `#[repr(C)]` struct of scalars is a launch-sized
/// [`SharedArray`](crate::shared::SharedArray)'s element, or a global
/// view's, as any `Copy` type is; it is not a static or constant array's.
pub trait Scalar:
    Copy + PartialEq + core::fmt::Debug + Send + Sync + 'static + sealed::Sealed
{
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

    /// One load from `address` in the constant space (`LDC`).
    ///
    /// # Safety
    /// As [`crate::constant::ConstantArray::read`].
    #[cfg(target_arch = "nvptx64")]
    unsafe fn load_constant(address: u64) -> Self;
}

/// [`Scalar`] for each type, moved through an unsigned integer of the
/// register class its width needs: PTX has no 8-bit registers, so a byte
/// travels in a 16-bit one, as nvcc's `ld.shared.u8 %rs` does.
macro_rules! scalars {
    ($($type:ty => $ptx:literal, $register:ident as $bits:ty, $to:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $type {}

        impl Scalar for $type {
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn load_shared(address: u32) -> Self {
                let bits: $bits;
                // SAFETY: by the caller's contract; the load only reads.
                unsafe {
                    asm!(
                        concat!("ld.shared.", $ptx, " {}, [{}];"),
                        out($register) bits,
                        in(reg32) address,
                        options(readonly, nostack, preserves_flags),
                    );
                }
                ($from)(bits)
            }

            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn store_shared(address: u32, value: Self) {
                let bits: $bits = ($to)(value);
                // SAFETY: by the caller's contract.
                unsafe {
                    asm!(
                        concat!("st.shared.", $ptx, " [{}], {};"),
                        in(reg32) address,
                        in($register) bits,
                        options(nostack, preserves_flags),
                    );
                }
            }

            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn load_constant(address: u64) -> Self {
                let bits: $bits;
                // SAFETY: by the caller's contract; the host writes the
                // constant space only between launches, so the load is pure.
                unsafe {
                    asm!(
                        concat!("ld.const.", $ptx, " {}, [{}];"),
                        out($register) bits,
                        in(reg64) address,
                        options(pure, readonly, nostack, preserves_flags),
                    );
                }
                ($from)(bits)
            }
        }
    )*};
}

scalars! {
    u8 => "u8", reg16 as u16, u16::from, |bits: u16| bits as u8;
    i8 => "u8", reg16 as u16, |value: i8| u16::from(value as u8), |bits: u16| bits as u8 as i8;
    u16 => "b16", reg16 as u16, |value: u16| value, |bits: u16| bits;
    i16 => "b16", reg16 as u16, |value: i16| value as u16, |bits: u16| bits as i16;
    f16 => "b16", reg16 as u16, f16::to_bits, f16::from_bits;
    bf16 => "b16", reg16 as u16, bf16::to_bits, bf16::from_bits;
    u32 => "b32", reg32 as u32, |value: u32| value, |bits: u32| bits;
    i32 => "b32", reg32 as u32, |value: i32| value as u32, |bits: u32| bits as i32;
    f32 => "b32", reg32 as u32, f32::to_bits, f32::from_bits;
    u64 => "b64", reg64 as u64, |value: u64| value, |bits: u64| bits;
    i64 => "b64", reg64 as u64, |value: i64| value as u64, |bits: u64| bits as i64;
    f64 => "b64", reg64 as u64, f64::to_bits, f64::from_bits;
}
