//! The element types of buffers and constant arrays: every integer of 8
//! to 64 bits, `f16`, `bf16`, `f32` and `f64`, and a crate's own.

pub use cudarc::driver::DeviceRepr;

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
