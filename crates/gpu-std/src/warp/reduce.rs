//! Reductions across the lanes of a mask: one instruction (`redux.sync`)
//! from compute capability 8.0, a tree of shuffles before.

use gpu_core::Reduction;
#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::WarpOp;

use super::lanes::Shuffle;

#[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.redux.sync.add"]
    fn redux_add(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.min"]
    fn redux_min(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.max"]
    fn redux_max(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.umin"]
    fn redux_umin(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.umax"]
    fn redux_umax(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.and"]
    fn redux_and(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.or"]
    fn redux_or(value: u32, mask: u32) -> u32;
    #[link_name = "llvm.nvvm.redux.sync.xor"]
    fn redux_xor(value: u32, mask: u32) -> u32;
}

/// A 32-bit integer the warp's reductions take: `u32` or `i32`, which
/// differ in how their least and greatest compare.
pub trait Reduce: Shuffle {
    /// Whether the type's values compare as signed numbers.
    const SIGNED: bool;
}

impl Reduce for u32 {
    const SIGNED: bool = false;
}

impl Reduce for i32 {
    const SIGNED: bool = true;
}

/// The `reduction` of the `value`s of the lanes of `mask`, in every one
/// of them.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
fn reduced(reduction: Reduction, mask: u32, value: u32) -> u32 {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    {
        let redux = match reduction {
            Reduction::Add => redux_add,
            Reduction::Min { signed: true } => redux_min,
            Reduction::Max { signed: true } => redux_max,
            Reduction::Min { signed: false } => redux_umin,
            Reduction::Max { signed: false } => redux_umax,
            Reduction::And => redux_and,
            Reduction::Or => redux_or,
            Reduction::Xor => redux_xor,
        };
        // SAFETY: `redux.sync` is defined for every operand; a broken
        // mask gives an undefined value.
        unsafe { redux(value, mask) }
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    {
        use super::lanes::ALL_LANES;
        use super::shuffle::{shfl_sync, shfl_xor_sync};
        if mask == ALL_LANES {
            // A butterfly leaves the whole warp's result in every lane.
            let mut result = value;
            for lane_mask in [16, 8, 4, 2, 1] {
                let other = shfl_xor_sync(mask, result, lane_mask);
                result = reduction.combine(result, other);
            }
            return result;
        }
        // Any other mask: every lane reads each lane of the mask in turn,
        // lowest first, so that all combine the same values in the same
        // order.
        let (mut lanes, mut result) = (mask, None);
        while lanes != 0 {
            let other = shfl_sync(mask, value, lanes.trailing_zeros());
            result = Some(result.map_or(other, |so_far| reduction.combine(so_far, other)));
            lanes &= lanes - 1;
        }
        result.unwrap_or(value)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        super::lanes::emulated(WarpOp::Reduce(reduction), mask, value.into()) as u32
    }
}

/// `__reduce_add_sync(mask, value)` (`redux.sync.add.s32`; a shuffle tree
/// below compute capability 8.0): the sum of the lanes' values, wrapping,
/// in every lane of the mask.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_add_sync<T: Reduce>(mask: u32, value: T) -> T {
    T::from_bits(reduced(Reduction::Add, mask, value.to_bits() as u32).into())
}

/// `__reduce_min_sync(mask, value)` (`redux.sync.min.u32` or `.s32`; a
/// shuffle tree below compute capability 8.0): the least of the lanes'
/// values, in every lane of the mask.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_min_sync<T: Reduce>(mask: u32, value: T) -> T {
    let reduction = Reduction::Min { signed: T::SIGNED };
    T::from_bits(reduced(reduction, mask, value.to_bits() as u32).into())
}

/// `__reduce_max_sync(mask, value)` (`redux.sync.max.u32` or `.s32`; a
/// shuffle tree below compute capability 8.0): the greatest of the lanes'
/// values, in every lane of the mask.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_max_sync<T: Reduce>(mask: u32, value: T) -> T {
    let reduction = Reduction::Max { signed: T::SIGNED };
    T::from_bits(reduced(reduction, mask, value.to_bits() as u32).into())
}

/// `__reduce_and_sync(mask, value)` (`redux.sync.and.b32`; a shuffle tree
/// below compute capability 8.0): the bitwise and of the lanes' values,
/// in every lane of the mask.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_and_sync(mask: u32, value: u32) -> u32 {
    reduced(Reduction::And, mask, value)
}

/// `__reduce_or_sync(mask, value)` (`redux.sync.or.b32`; a shuffle tree
/// below compute capability 8.0): the bitwise or of the lanes' values.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_or_sync(mask: u32, value: u32) -> u32 {
    reduced(Reduction::Or, mask, value)
}

/// `__reduce_xor_sync(mask, value)` (`redux.sync.xor.b32`; a shuffle tree
/// below compute capability 8.0): the bitwise exclusive or of the lanes'
/// values.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn reduce_xor_sync(mask: u32, value: u32) -> u32 {
    reduced(Reduction::Xor, mask, value)
}
