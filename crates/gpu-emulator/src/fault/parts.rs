//! What the faults name besides threads and bytes: where a lane of a
//! collective is instead, where a shared byte lies, who waits at a barrier;
//! and the words the messages name threads and accesses with.

use std::fmt;
use std::panic::Location;

use crate::{AccessKind, Dim3, WarpOp};

/// Where a lane named in a warp collective's mask is instead, or what else
/// is wrong with the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneProblem {
    /// The block has no thread in that lane: its last warp is partial.
    NotInBlock,
    /// The lane's thread has returned.
    Returned,
    /// The lane waits at a barrier.
    AtBarrier(&'static Location<'static>),
    /// The lane waits on a shared-memory barrier's phase.
    AtMbarrier(&'static Location<'static>),
    /// The lane waits at a cluster barrier.
    AtClusterBarrier(&'static Location<'static>),
    /// The lane waits at another warp collective, or at the same one with
    /// another mask, or on another pass (`passed` collectives before it).
    AtWarpCall {
        /// That collective (its name in the runtime: [`WarpOp::name`]).
        call: WarpOp,
        /// Where that lane's call is in the kernel's source.
        site: &'static Location<'static>,
        /// The mask that lane passed.
        mask: u32,
        /// Warp collectives that lane had passed before the one it waits at.
        passed: u32,
    },
    /// The calling lane is not in its own mask.
    CallerNotInMask,
    /// The lane a shuffle reads from is not in the mask.
    SourceNotInMask,
}

/// Where a byte of a block's shared memory lies, for a report a reader can
/// find in the kernel: in which array, how far into it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedPlace {
    /// The launch-sized memory (`extern __shared__`), this many bytes
    /// from its start.
    LaunchSized(u32),
    /// A `shared_array!` by its name, this many bytes from its start.
    Static(&'static str, u32),
}

/// A thread waiting at a barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// The thread's index in its block (`threadIdx`).
    pub thread: Dim3,
    /// The `sync_threads` or `cluster::sync` call it waits at.
    pub barrier: &'static Location<'static>,
    /// Whether that is a cluster barrier (`cluster::sync`).
    pub cluster: bool,
    /// Barriers the block had passed before this one.
    pub passed: u32,
}

impl Waiter {
    pub(super) fn call(&self) -> &'static str {
        if self.cluster {
            "cluster::sync"
        } else {
            "sync_threads"
        }
    }
}

/// A thread as the messages name it.
pub(super) fn thread(t: Dim3) -> String {
    format!("thread ({}, {}, {})", t.0, t.1, t.2)
}

/// What an access of `kind` did, as the messages say it.
pub(super) fn verb(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Read => "read",
        AccessKind::Write => "wrote",
        AccessKind::Atomic => "atomically updated",
    }
}

impl fmt::Display for SharedPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LaunchSized(byte) => write!(f, "byte {byte} of the launch-sized shared memory"),
            Self::Static(name, byte) => write!(f, "byte {byte} of the shared array {name}"),
        }
    }
}
