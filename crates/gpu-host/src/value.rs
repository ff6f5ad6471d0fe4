//! The element types of buffers and constant arrays, and the scalar
//! kernel parameters: every integer of 8 to 64 bits, `f16`, `bf16`, `f32`
//! and `f64`.

use std::any::Any;

use cudarc::driver::CudaStream;
pub use cudarc::driver::DeviceRepr;

use crate::backend::{Memory, Param};

/// The element types of buffers and constant arrays: every integer of 8
/// to 64 bits, `f16`, `bf16`, `f32` and `f64`, and any plain-data type a
/// crate implements it for.
///
/// A kernel crate's own `#[repr(C)]` struct (of scalars, say a point
/// `{ x: f32, y: f32, id: u32 }`) becomes a buffer's element with two
/// impls in that crate: cudarc's `unsafe impl DeviceRepr` (re-exported
/// here), which vouches that its bytes may be copied to the GPU as they
/// are (no references, no padding read as data), and `impl Value` with
/// its [`Value::POISON`]. The kernel then takes `Global<Point>` or
/// `GlobalMut<Point>`, and the GPU lays the struct out as the host does.
pub trait Value: DeviceRepr + Copy + Default + Send + Sync + 'static {
    /// Every byte 0xFF, as the GPU's poisoning memset leaves it: NaN for
    /// the floats, the largest value of an unsigned integer, -1 of a
    /// signed one.
    const POISON: Self;
}

macro_rules! values {
    ($($type:ty => $poison:expr),* $(,)?) => {$(
        impl Value for $type {
            const POISON: Self = $poison;
        }
    )*};
}

values!(
    u8 => u8::MAX,
    u16 => u16::MAX,
    u32 => u32::MAX,
    u64 => u64::MAX,
    i8 => -1,
    i16 => -1,
    i32 => -1,
    i64 => -1,
    half::f16 => half::f16::from_bits(u16::MAX),
    half::bf16 => half::bf16::from_bits(u16::MAX),
    f32 => f32::from_bits(u32::MAX),
    f64 => f64::from_bits(u64::MAX),
);

macro_rules! scalar_params {
    ($($scalar:ty => $bits:expr),*) => {$(
        impl Param for $scalar {
            type Host<'a, M: Memory>
        = $scalar
    where
        M: 'a;

            fn word(host: &$scalar, _stream: &CudaStream) -> u64 {
                $bits(*host)
            }

            fn emulated(host: $scalar, _name: &'static str) -> Self {
                host
            }

            fn value<M: Memory>(host: &$scalar) -> Option<u32> {
                (host as &dyn Any).downcast_ref::<u32>().copied()
            }
        }
    )*};
}

// Each scalar's bits, zero-extended: the driver copies the parameter's own
// size from the word's low bytes, so a sign extension would not matter.
scalar_params!(
    u8 => u64::from,
    u16 => u64::from,
    u32 => u64::from,
    u64 => |value: u64| value,
    i8 => |value: i8| u64::from(value as u8),
    i16 => |value: i16| u64::from(value as u16),
    i32 => |value: i32| u64::from(value as u32),
    i64 => |value: i64| value as u64,
    half::f16 => |value: half::f16| u64::from(value.to_bits()),
    half::bf16 => |value: half::bf16| u64::from(value.to_bits()),
    f32 => |value: f32| u64::from(value.to_bits()),
    f64 => f64::to_bits
);
