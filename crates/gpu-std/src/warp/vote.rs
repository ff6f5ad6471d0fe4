//! The warp's synchronisation, votes and matches: what the lanes of a mask
//! learn about each other's predicates and values at once.

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::WarpOp;

use super::lanes::Shuffle;
#[cfg(not(target_arch = "nvptx64"))]
use super::lanes::emulated;

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, predicate: bool) -> u32;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any_sync(mask: u32, predicate: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn vote_all_sync(mask: u32, predicate: bool) -> bool;
    #[link_name = "llvm.nvvm.activemask"]
    fn activemask_b32() -> u32;
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn match_any_sync_i32(mask: u32, value: u32) -> u32;
    #[link_name = "llvm.nvvm.match.any.sync.i64"]
    fn match_any_sync_i64(mask: u32, value: u64) -> u32;
}

/// `__syncwarp(mask)` (`bar.warp.sync`): waits until every lane of `mask`
/// has reached it, and orders their memory accesses before it before
/// those after, so that lanes may hand each other values through shared
/// memory without a `sync_threads`.
///
/// The emulator orders shared-memory accesses by it, not global ones: two
/// lanes of a warp touching one global byte between two `sync_threads`,
/// one of them writing, are still reported as a race.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn syncwarp(mask: u32) {
    // SAFETY: `bar.warp.sync` with a mask broken as the module says is
    // undefined on the hardware; every lane of a kernel's mask reaches it,
    // which the emulator checks.
    #[cfg(target_arch = "nvptx64")]
    unsafe {
        bar_warp_sync(mask)
    };
    #[cfg(not(target_arch = "nvptx64"))]
    emulated(WarpOp::Sync, mask, 0);
}

/// `__ballot_sync(mask, predicate)` (`vote.sync.ballot.b32`): bit `i` set
/// where lane `i` of the mask passed a true `predicate`; the lanes outside
/// the mask are 0.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: `vote.sync` is defined for every operand; a broken mask
        // gives an undefined value.
        unsafe { vote_ballot_sync(mask, predicate) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        emulated(WarpOp::Ballot, mask, predicate.into()) as u32
    }
}

/// Declares a vote whose answer is one `bool` for the whole mask.
macro_rules! predicate_vote {
    ($($(#[$doc:meta])* $name:ident => $intrinsic:ident, $op:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub fn $name(mask: u32, predicate: bool) -> bool {
            #[cfg(target_arch = "nvptx64")]
            {
                // SAFETY: as in `ballot_sync`.
                unsafe { $intrinsic(mask, predicate) }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                emulated(WarpOp::$op, mask, predicate.into()) != 0
            }
        }
    )*};
}

predicate_vote! {
    /// `__any_sync(mask, predicate)` (`vote.sync.any.pred`): whether any lane
    /// of the mask passed a true `predicate`.
    any_sync => vote_any_sync, Any;
    /// `__all_sync(mask, predicate)` (`vote.sync.all.pred`): whether every
    /// lane of the mask passed a true `predicate`.
    all_sync => vote_all_sync, All;
}

/// `elect.sync`: true in exactly one lane of `mask`, the same one for
/// every lane (CUTLASS's `elect_one_sync`): one lane to issue what the
/// warp needs done once, a copy or an arrival, chosen by the hardware
/// among lanes it knows converged, with no compare of a lane index. The
/// emulator elects the lowest lane of the mask. Only the arch-specific
/// build for 9.0 has it: elsewhere it traps.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn elect_sync(mask: u32) -> bool {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90a"))]
    {
        let elected: u32;
        // SAFETY: reads and writes registers only; a broken mask is
        // undefined as for every `_sync` operation, and the emulator
        // reports it.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred p; elect.sync _|p, {mask}; selp.u32 {elected}, 1, 0, p; }}",
                mask = in(reg32) mask,
                elected = out(reg32) elected,
                options(nomem, nostack),
            )
        };
        elected != 0
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90a")))]
    {
        let _ = mask;
        crate::below_sm90a();
        false
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        emulated(WarpOp::Elect, mask, 0) != 0
    }
}

/// `__activemask()` (`activemask.b32`): the lanes of the warp executing
/// this call together with this one. It synchronises nothing, and what
/// it answers depends on how the hardware happens to have converged the
/// warp: a mask for the `_sync` operations that follow only where the
/// code around guarantees which lanes arrive.
///
/// The emulator answers with the lanes that wait at this same call, on
/// the same pass, when the warp's collectives are resolved: those that
/// reach it before any of them moves on past a barrier or collective. It
/// reports no misuse.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn activemask() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        // SAFETY: `activemask` reads the warp's state and nothing else.
        unsafe { activemask_b32() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        emulated(WarpOp::ActiveMask, 0, 0) as u32
    }
}

/// `__match_any_sync(mask, value)` (`match.any.sync.b32`, or `.b64` for a
/// 64-bit value; compute capability 7.0): the lanes of the mask whose
/// `value` has the same bits as this lane's, this one among them. The
/// lanes with equal keys learn each other at once, e.g. to add up one
/// histogram bin's count in one lane before a single atomic.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn match_any_sync<T: Shuffle>(mask: u32, value: T) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let bits = value.to_bits();
        // SAFETY: `match.sync` is defined for every operand; a broken mask
        // gives an undefined value.
        unsafe {
            if size_of::<T>() == 8 {
                match_any_sync_i64(mask, bits)
            } else {
                match_any_sync_i32(mask, bits as u32)
            }
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        emulated(WarpOp::MatchAny, mask, value.to_bits()) as u32
    }
}
