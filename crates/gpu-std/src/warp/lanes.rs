//! What every warp operation shares: the lanes, the values they move, and
//! the emulator's meeting of a mask's lanes.

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::{self as emulator, WarpOp};

/// Threads per warp.
pub const SIZE: u32 = 32;

/// The mask that names all 32 lanes.
pub const ALL_LANES: u32 = u32::MAX;

/// A value a warp operation moves or compares: one 32-bit register, or
/// two for 64 bits (which the hardware shuffles one half at a time, as
/// CUDA does).
pub trait Shuffle: Copy {
    /// The value's bits, zero-extended from 32 for a 32-bit type.
    fn to_bits(self) -> u64;
    /// The value [`Shuffle::to_bits`] gave `bits` for.
    fn from_bits(bits: u64) -> Self;
}

/// `Shuffle` for a type by its bits, as the unsigned integer `$bits`.
macro_rules! by_bits {
    ($($type:ty => $bits:ty),*) => {$(
        impl Shuffle for $type {
            fn to_bits(self) -> u64 {
                <$bits>::from_ne_bytes(self.to_ne_bytes()).into()
            }
            fn from_bits(bits: u64) -> Self {
                <$type>::from_ne_bytes((bits as $bits).to_ne_bytes())
            }
        }
    )*};
}

by_bits!(u32 => u32, i32 => u32, f32 => u32, u64 => u64, i64 => u64, f64 => u64);

/// The warp collective `op` on the emulator: the lanes of `mask` meet
/// where the caller's caller stands, and this lane gets its result.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
pub(super) fn emulated(op: WarpOp, mask: u32, bits: u64) -> u64 {
    emulator::warp_call(op, mask, bits, core::panic::Location::caller())
}
