//! Shuffles: each lane reads a register of another lane of the mask.

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::{ShuffleKind, WarpOp};

use super::lanes::Shuffle;

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
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
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

/// A shuffle of `kind` on the emulator: the lanes of `mask` exchange
/// their values where the caller's caller stands.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
fn emulated<T: Shuffle>(kind: ShuffleKind, mask: u32, value: T) -> T {
    T::from_bits(super::lanes::emulated(
        WarpOp::Shuffle(kind),
        mask,
        value.to_bits(),
    ))
}

/// Declares a shuffle: the 32-bit intrinsic with its clamp operand on
/// each word of the value on the GPU, the emulator's exchange elsewhere.
macro_rules! shuffles {
    ($(
        $(#[$doc:meta])*
        $name:ident($operand:ident) => $intrinsic:ident, clamp $clamp:expr, $kind:ident;
    )*) => {$(
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name<T: Shuffle>(mask: u32, value: T, $operand: u32) -> T {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: `shfl.sync` is defined for every operand; a mask
                // broken as the module says gives an undefined value, not
                // undefined behaviour.
                each_word(value, |word| unsafe { $intrinsic(mask, word, $operand, $clamp) })
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                emulated(ShuffleKind::$kind($operand), mask, value)
            }
        }
    )*};
}

// The clamp bounds the lanes a shuffle reads from: the warp's last lane
// for the indexed, xor and down shuffles; its first for `shfl.sync.up`,
// which reads the lanes below.
shuffles! {
    /// `__shfl_sync(mask, value, src_lane)`: the `value` of lane `src_lane`
    /// (`SHFL.IDX`), taken modulo 32 as CUDA does over the whole warp. Every
    /// lane may name its own source; all reading one lane broadcasts its value.
    shfl_sync(src_lane) => shfl_sync_idx, clamp WHOLE_WARP, Index;
    /// `__shfl_xor_sync(mask, value, lane_mask)`: the `value` of lane
    /// `lane ^ lane_mask` (`SHFL.BFLY`), this lane's own where that is past
    /// lane 31. Summing the results for lane masks 16, 8, 4, 2, 1 leaves
    /// the warp's sum in every lane. The lane read must be in the mask too.
    shfl_xor_sync(lane_mask) => shfl_sync_bfly, clamp WHOLE_WARP, Xor;
    /// `__shfl_down_sync(mask, value, delta)`: the `value` of lane
    /// `lane + delta` (`SHFL.DOWN`), this lane's own where that is past
    /// lane 31. Summing the results for deltas 16, 8, 4, 2, 1 leaves the
    /// warp's sum in lane 0. The same rules as [`shfl_xor_sync`].
    shfl_down_sync(delta) => shfl_sync_down, clamp WHOLE_WARP, Down;
    /// `__shfl_up_sync(mask, value, delta)`: the `value` of lane
    /// `lane - delta` (`SHFL.UP`), this lane's own where that is before
    /// lane 0. Adding the result for deltas 1, 2, 4, 8, 16, each in the
    /// lanes at or past the delta, leaves in every lane the sum of its own
    /// and all earlier lanes' values: a prefix sum. The same rules as
    /// [`shfl_xor_sync`].
    shfl_up_sync(delta) => shfl_sync_up, clamp 0, Up;
}
