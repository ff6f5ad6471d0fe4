#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::{self as emulator, ShuffleKind};

/// Threads per warp.
pub const SIZE: u32 = 32;

/// The mask that names all 32 lanes.
pub const ALL_LANES: u32 = u32::MAX;

/// A value a shuffle moves: one 32-bit register, or two for 64 bits
/// (which the hardware shuffles one half at a time, as CUDA does).
pub trait Shuffle: Copy {
    /// The value's bits, in the low 32 for a 32-bit type.
    fn to_bits(self) -> u64;
    /// The value [`Shuffle::to_bits`] gave `bits` for.
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
