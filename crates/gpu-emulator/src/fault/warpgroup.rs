//! What the reports of a warpgroup's misused `wgmma.mma_async` and
//! `setmaxnreg` name, and their messages: each a struct of its own, which
//! its [`Fault`](crate::Fault) variant holds.

use std::fmt;
use std::panic::Location;

use super::parts::thread;
use crate::{Dim3, WarpOp};

/// The four warps of a warpgroup (128 threads from a multiple of 128) did
/// not issue the same `wgmma.mma_async`s and `setmaxnreg`s in the same
/// order: each is `.sync.aligned` over the warpgroup, so one that a warp
/// skips leaves the others' undefined (on the GPU, a hang or a product of
/// the wrong tiles). Found where the warps meet again, at a
/// `sync_threads` or the block's end, or at once where the block lacks a
/// warp of the warpgroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpgroupDivergent {
    /// The first thread of the warp that issued the instruction.
    pub thread: Dim3,
    /// That warp, by index in the block (threads 32·warp to 32·warp + 31
    /// by linear index).
    pub warp: u32,
    /// The instruction (its name in the runtime: [`WarpOp::name`]).
    pub call: WarpOp,
    /// Where that warp issued it.
    pub site: &'static Location<'static>,
    /// The warpgroup's instructions that warp had issued before it, as
    /// every warp of the warpgroup had.
    pub passed: u32,
    /// A warp of the same warpgroup that did not issue it, by index in the
    /// block.
    pub other: u32,
    /// What that warp did instead.
    pub instead: OtherWarp,
}

/// What a warp of a warpgroup did where another issued a warpgroup
/// instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtherWarp {
    /// It issued another one: which, and where.
    Issued(WarpOp, &'static Location<'static>),
    /// It issued none before the `sync_threads` here, where the warps met.
    AtBarrier(&'static Location<'static>),
    /// It issued none before it returned.
    Returned,
    /// The block lacks the warp, or part of it: its threads end inside the
    /// warpgroup.
    NotInBlock,
}

/// A `wgmma` read a shared byte whose last write, a thread's store or
/// `cp.async` copy (the generic proxy), no `fence.proxy.async.shared::cta`
/// of its writer ordered before the `wgmma` followed: the tensor cores
/// read through the async proxy, which may not see the write yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaUnfenced {
    /// The thread whose `wgmma` read the byte.
    pub thread: Dim3,
    /// Where the `wgmma` was issued.
    pub site: &'static Location<'static>,
    /// The byte, in the launch-sized shared memory.
    pub offset: u32,
    /// The thread that wrote it last.
    pub writer: Dim3,
    /// Where the writer fenced after the write, if it did: a fence that
    /// nothing orders before the `wgmma` (one after the barrier that
    /// orders the write before it).
    pub fence: Option<&'static Location<'static>>,
}

/// A `wgmma` operand's descriptor reaches past the block's launch-sized
/// shared memory, where the tensor cores would read whatever lies there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaOutOfBounds {
    /// The thread whose `wgmma` read it.
    pub thread: Dim3,
    /// Where the `wgmma` was issued.
    pub site: &'static Location<'static>,
    /// The operand: `'A'` or `'B'`.
    pub operand: char,
    /// The descriptor's start address, in bytes.
    pub start: u32,
    /// The first byte of the thread's elements of the operand outside the
    /// memory.
    pub offset: u32,
    /// The launch-sized shared memory, in bytes.
    pub limit: u32,
}

/// A swizzled `wgmma` operand's descriptor starts in another row than the
/// first of the swizzle's repeating pattern of eight rows (1024, 512 or
/// 256 bytes for the 128-, 64- and 32-byte swizzles): the tensor cores
/// count the rows from the descriptor's base offset, which the runtime's
/// descriptors leave 0, not from the address, so they swizzle the operand
/// with the wrong rows' pattern. Stepping along k inside the first row (by
/// 32, 64 or 96 bytes for the next 16 k) is fine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaMisaligned {
    /// The thread whose `wgmma` read it.
    pub thread: Dim3,
    /// Where the `wgmma` was issued.
    pub site: &'static Location<'static>,
    /// The operand: `'A'` or `'B'`.
    pub operand: char,
    /// The descriptor's start address, in bytes.
    pub start: u32,
    /// The swizzle's row, in bytes: 128, 64 or 32.
    pub swizzle: u32,
}

impl fmt::Display for WarpgroupDivergent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (call, other) = (self.call.name(), self.other);
        write!(
            f,
            "warpgroup divergence: warp {} (from {}) issued the {call} at {} (its warpgroup \
             instruction #{}), but warp {other} of its warpgroup ",
            self.warp,
            thread(self.thread),
            self.site,
            self.passed + 1
        )?;
        match self.instead {
            OtherWarp::Issued(instead, site) => {
                write!(f, "issued the {} at {site} there", instead.name())?;
            }
            OtherWarp::AtBarrier(barrier) => {
                write!(f, "issued none before the sync_threads at {barrier}")?;
            }
            OtherWarp::Returned => write!(f, "issued none before it returned")?,
            OtherWarp::NotInBlock => write!(f, "is not wholly in the block")?,
        }
        write!(
            f,
            ": the four warps of a warpgroup (128 threads from a multiple of 128) issue each \
             wgmma_mma_async and setmaxnreg together, in the same order (.sync.aligned)"
        )
    }
}

impl fmt::Display for WgmmaUnfenced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}'s wgmma at {} reads shared byte {} through the async proxy, but {} wrote it \
             through the generic proxy (a store or a cp.async) ",
            thread(self.thread),
            self.site,
            self.offset,
            thread(self.writer)
        )?;
        match self.fence {
            None => write!(
                f,
                "and made no fence_proxy_async_shared_cta after the write"
            ),
            Some(fence) => write!(
                f,
                "and its fence_proxy_async_shared_cta after the write, at {fence}, is not \
                 ordered before the wgmma"
            ),
        }?;
        write!(
            f,
            ": the tensor cores may read the byte's old value; the writer fences \
             (fence.proxy.async.shared::cta) after its writes, before the barrier that orders \
             them before the wgmma"
        )
    }
}

impl fmt::Display for WgmmaOutOfBounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}'s wgmma at {} reads its {} operand's shared byte {} through a descriptor that \
             starts at byte {}, outside the launch's {} bytes of shared memory",
            thread(self.thread),
            self.site,
            self.operand,
            self.offset,
            self.start,
            self.limit
        )
    }
}

impl fmt::Display for WgmmaMisaligned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pattern = 8 * self.swizzle;
        write!(
            f,
            "{}'s wgmma at {} reads its {} operand through a descriptor with the {}-byte \
             swizzle that starts at shared byte {}, {} bytes into the swizzle's {pattern}-byte \
             pattern: with base offset 0 the operand starts in the pattern's first row of {} \
             bytes (its address a multiple of {pattern}, plus 16-byte steps along k within the \
             row), or the tensor cores swizzle it with another row's pattern",
            thread(self.thread),
            self.site,
            self.operand,
            self.swizzle,
            self.start,
            self.start % pattern,
            self.swizzle
        )
    }
}
