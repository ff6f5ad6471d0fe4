//! The faults, grouped as docs/emulator.md groups its checks, and what
//! each one names.

use std::panic::Location;

use super::parts::{LaneProblem, SharedPlace, Waiter};
use super::warpgroup::{WarpgroupDivergent, WgmmaMisaligned, WgmmaOutOfBounds, WgmmaUnfenced};
use crate::{Access, AccessKind, Dim3, Outstanding, WarpOp};

/// What the emulator found wrong with a launch or one of its threads.
///
/// Threads are named by their index in the block (`threadIdx`). Shared
/// offsets count bytes from the start of the launch-sized memory; the
/// statically sized arrays' bytes count from 64 KiB on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    // Barriers.
    /// The live threads of a block wait at different barriers: a
    /// `sync_threads` under control flow that diverges inside the block.
    DivergentBarrier {
        /// The first thread found waiting.
        first: Waiter,
        /// A thread waiting at another barrier.
        other: Waiter,
    },

    // Shared memory: races, bounds, alignment, bytes never written.
    /// Two threads touched one shared byte between the same two barriers,
    /// at least one of them writing.
    SharedRace {
        /// The byte both touched: from the start of the launch-sized
        /// memory, or past it in the static arrays, as `place` says.
        offset: u32,
        /// The array that byte lies in, and where.
        place: SharedPlace,
        /// The access made first in this barrier interval.
        earlier: Access,
        /// The access that conflicts with it.
        later: Access,
    },
    /// An access past the launch's shared-memory size.
    SharedOutOfBounds {
        /// The thread that made the access.
        thread: Dim3,
        /// Whether it read or wrote.
        kind: AccessKind,
        /// The access's first byte; negative when it lies before the
        /// shared memory.
        offset: i64,
        /// Bytes the access moves.
        size: u32,
        /// The launch-sized shared memory, in bytes
        /// ([`Launch::shared_bytes`](crate::Launch::shared_bytes)).
        limit: u32,
    },
    /// An access past the end of a statically sized shared array.
    StaticSharedOutOfBounds {
        /// The thread that made the access.
        thread: Dim3,
        /// Whether it read or wrote.
        kind: AccessKind,
        /// The array's name, as declared.
        array: &'static str,
        /// The element the thread asked for.
        index: u32,
        /// Elements the array has.
        len: u32,
    },
    /// Statically sized shared arrays and the launch-sized memory together
    /// larger than a block may have.
    StaticSharedTooLarge {
        /// The array whose declaration went past the limit.
        array: &'static str,
        /// Shared bytes the block would need with that array.
        bytes: u32,
        /// Shared bytes a block may have with the opt-in attribute
        /// ([`SHARED_OPT_IN_LIMIT_BYTES`](crate::SHARED_OPT_IN_LIMIT_BYTES)).
        limit: u64,
    },
    /// An access of `size` bytes at an offset that is not a multiple of
    /// `size`: on the GPU, a misaligned address.
    SharedMisaligned {
        /// The thread that made the access.
        thread: Dim3,
        /// Whether it read or wrote.
        kind: AccessKind,
        /// The access's first byte.
        offset: u32,
        /// Bytes the access moves.
        size: u32,
    },
    /// A read of a shared byte that no thread of this block wrote before
    /// it, nor (which would be a race) another thread before the next
    /// barrier.
    SharedUninitialized {
        /// The thread that read.
        thread: Dim3,
        /// The byte it read.
        offset: u32,
    },

    // Global memory: bounds, alignment, races, the read-only path.
    /// An access to memory no kernel of this GPU reaches: another GPU's,
    /// with no peer access to it, or host memory that is not mapped.
    GlobalUnreachable {
        /// The thread that made the access.
        thread: Dim3,
        /// Whether it read or wrote.
        kind: AccessKind,
        /// The buffer's name, as its view was given it.
        buffer: &'static str,
        /// Where the buffer's bytes are.
        placement: gpu_core::Placement,
    },
    /// An access past the end of a buffer in global memory.
    GlobalOutOfBounds {
        /// The thread that made the access.
        thread: Dim3,
        /// Whether it read or wrote.
        kind: AccessKind,
        /// The buffer's name, as its view was given it.
        buffer: &'static str,
        /// The first element past the end that the access touches.
        index: usize,
        /// Elements the buffer has.
        len: usize,
    },
    /// A vector or word access of `bytes` at an element index that is not
    /// a multiple of its width: on the GPU, a misaligned address.
    GlobalMisaligned {
        /// The thread that made the access.
        thread: Dim3,
        /// The buffer's name, as its view was given it.
        buffer: &'static str,
        /// The access's first element.
        index: usize,
        /// The access's width in bytes, which its address must be a
        /// multiple of.
        bytes: usize,
    },
    /// Two threads of one launch touched one element of a global buffer,
    /// at least one of them writing, with nothing ordering them: in two
    /// blocks, or in one block with no `sync_threads` between.
    GlobalRace {
        /// The buffer's name, as its view was given it.
        buffer: &'static str,
        /// The element both touched.
        index: usize,
        /// The access made first, as the emulator ran them.
        earlier: Access,
        /// The block of the earlier access (`blockIdx`).
        earlier_block: Dim3,
        /// The access that conflicts with it, in the diagnostic's block.
        later: Access,
    },
    /// Atomics to one element of global memory by threads of two blocks,
    /// one of them scoped to its block (`atomicAdd_block`): such an
    /// atomic is atomic only with the threads of its own block, so the
    /// two updates may tear.
    AtomicScopeTooNarrow {
        /// The buffer's name, as its view was given it.
        buffer: &'static str,
        /// The element both updated.
        index: usize,
        /// The thread of the earlier atomic.
        earlier: Dim3,
        /// The block of the earlier atomic (`blockIdx`).
        earlier_block: Dim3,
        /// The thread of the later atomic, in the diagnostic's block.
        later: Dim3,
    },
    /// A byte of global memory written and read through the read-only
    /// path (`ld.global.nc`, `__ldg`) in one launch: the path is not
    /// coherent with the launch's stores, so the read may see the old
    /// value or the new, whatever orders them.
    WrittenReadOnly {
        /// The buffer's name, as its view was given it.
        buffer: &'static str,
        /// The element written and read.
        index: usize,
        /// The writing thread and its block.
        writer: (Dim3, Dim3),
        /// The thread that read it through the read-only path, and its block.
        reader: (Dim3, Dim3),
    },

    // Constant memory.
    /// A read past the end of a constant array.
    ConstantOutOfBounds {
        /// The thread that read.
        thread: Dim3,
        /// The constant array's name.
        array: &'static str,
        /// The element the thread asked for.
        index: u32,
        /// Elements the array has.
        len: u32,
    },
    /// A read of a constant the host has not set.
    ConstantUnset {
        /// The thread that read.
        thread: Dim3,
        /// The constant array's name.
        array: &'static str,
        /// The element the thread asked for, which no [`set_constant`](crate::set_constant)
        /// call has given a value.
        index: u32,
    },
    /// A read of a constant array as another element type than the host
    /// set it with: on the GPU, the bytes of one type read as another's.
    ConstantType {
        /// The thread that read.
        thread: Dim3,
        /// The constant array's name.
        array: &'static str,
        /// The type the host's [`set_constant`](crate::set_constant) gave.
        set: &'static str,
        /// The type the kernel's array reads.
        read: &'static str,
    },

    // Textures never set or already destroyed.
    /// A fetch through texture handle 0, which no texture ever has: a
    /// texture parameter the host never set.
    TextureUnset {
        /// The thread that fetched.
        thread: Dim3,
    },
    /// A fetch through the handle of a texture that was destroyed (or
    /// made on another OS thread, whose launches this one cannot see).
    TextureDestroyed {
        /// The thread that fetched.
        thread: Dim3,
        /// The texture's handle.
        handle: u64,
    },

    // Asynchronous copies read before their wait.
    /// An access to a shared byte that an asynchronous copy by `copier`
    /// has yet to land in: the copier has not waited for it.
    CopyInFlight {
        /// The byte still in flight.
        offset: u32,
        /// The thread that started the copy.
        copier: Dim3,
        /// The access that came too soon.
        access: Access,
    },

    // Bulk copies and the shared-memory barriers they complete on.
    /// An access to a shared byte that a bulk copy has yet to land in:
    /// the phase of the barrier it completes on has not completed.
    BulkInFlight {
        /// The byte still in flight.
        offset: u32,
        /// The barrier's offset in shared memory.
        barrier: u32,
        /// The access that came too soon.
        access: Access,
    },
    /// An access, in the barrier interval a bulk copy landed in, to one of
    /// its bytes by a thread that has not waited on the barrier's phase.
    BulkUnwaited {
        /// The byte.
        offset: u32,
        /// The barrier's offset in shared memory.
        barrier: u32,
        /// The access that did not wait.
        access: Access,
    },
    /// A bulk copy whose size is 0 or not a multiple of 16 bytes, or whose
    /// shared destination is not a multiple of the copy's alignment: 16
    /// bytes, 128 for a tensor copy, 1024 for one swizzled in 128-byte
    /// rows.
    BulkCopyShape {
        /// The thread that issued it.
        thread: Dim3,
        /// Its destination's offset in shared memory.
        offset: u32,
        /// Its bytes.
        bytes: u32,
        /// What its destination must be a multiple of, in bytes.
        alignment: u32,
    },
    /// A barrier initialised for 0 arrivals a phase, or more than
    /// [`MAX_ARRIVALS`](crate::MAX_ARRIVALS).
    MbarrierCount {
        /// The thread that initialised it.
        thread: Dim3,
        /// The barrier's offset in shared memory.
        offset: u32,
        /// The arrivals asked for.
        count: u32,
    },
    /// An arrival at, wait on or copy completing on a shared-memory
    /// barrier that no thread of the block has initialised.
    MbarrierUninitialized {
        /// The thread.
        thread: Dim3,
        /// The barrier's offset in shared memory.
        offset: u32,
    },
    /// An arrival beyond those the barrier's phase expects.
    MbarrierOverArrived {
        /// The thread that arrived.
        thread: Dim3,
        /// The barrier's offset in shared memory.
        offset: u32,
        /// The arrivals a phase expects.
        count: u32,
    },
    /// A thread waits on a barrier's phase that can never complete: every
    /// other live thread of the block waits too, at it or at a
    /// `sync_threads`, and the phase still lacks arrivals or bytes.
    MbarrierNeverCompletes {
        /// The waiting thread.
        thread: Dim3,
        /// Where it waits in the kernel's source.
        site: &'static Location<'static>,
        /// The barrier's offset in shared memory.
        offset: u32,
        /// What the phase still waits for.
        outstanding: Outstanding,
        /// Phases of the barrier the waiting thread has seen complete.
        seen: u32,
    },

    // Tensor copies.
    /// A tensor copy through a tensor map that its thread has not acquired
    /// (`fence.proxy.tensormap::generic.acquire`): the map's bytes, written
    /// by the host through the generic proxy, are read by the tensor-map
    /// proxy, which may see them stale.
    TensorMapNotAcquired {
        /// The thread that issued the copy.
        thread: Dim3,
        /// The parameter the map came in.
        buffer: &'static str,
    },

    // Clusters.
    /// Two blocks of a cluster touched one byte of the shared memory of
    /// one of them with no cluster barrier between, at least one of them
    /// writing.
    ClusterRace {
        /// The block whose shared memory holds the byte.
        owner: Dim3,
        /// The byte both touched.
        offset: u32,
        /// The block that made the access earlier in this cluster barrier
        /// interval.
        earlier_block: Dim3,
        /// Whether that access read or wrote.
        earlier_kind: AccessKind,
        /// The block that made the later access.
        later_block: Dim3,
        /// The later access.
        later: Access,
    },
    /// A block's shared memory was touched by another block of its cluster
    /// in the cluster barrier interval in which it exited, or after: the
    /// memory is gone once its block exits.
    NeighbourExited {
        /// The block that exited.
        owner: Dim3,
        /// The block that touched its shared memory.
        accessor: Dim3,
        /// Whether it read or wrote.
        kind: AccessKind,
        /// The byte it touched.
        offset: u32,
    },
    /// A thread mapped the shared memory of a block rank its cluster does
    /// not have.
    ClusterRankOutOfRange {
        /// The thread that mapped it.
        thread: Dim3,
        /// The rank it asked for.
        rank: u32,
        /// Blocks its cluster has.
        blocks: u32,
    },

    // Warp collectives.
    /// A warp collective whose mask names `lane` wrongly (see
    /// [`LaneProblem`]).
    BadWarpCall {
        /// The thread that called it.
        thread: Dim3,
        /// The collective it called (its name in the runtime:
        /// [`WarpOp::name`]).
        call: WarpOp,
        /// Where its call is in the kernel's source.
        site: &'static Location<'static>,
        /// The lane mask it passed.
        mask: u32,
        /// The lane at fault: one the mask names, the caller's own, or
        /// the one a shuffle reads.
        lane: u32,
        /// What is wrong with that lane.
        problem: LaneProblem,
    },

    /// A thread wrote a shared element that a `wgmma.mma_async` it or its
    /// warpgroup started reads, before the `wgmma.wait_group` that retires
    /// it: the tensor cores read the operand asynchronously, so the
    /// product may hold either value.
    WgmmaOperandOverwritten {
        /// The thread whose `wgmma` read the element.
        thread: Dim3,
        /// The element's byte in the block's shared memory.
        offset: u32,
        /// Where the `wgmma` was started.
        started: &'static Location<'static>,
        /// Where it was waited for.
        waited: &'static Location<'static>,
    },

    // Hopper's warpgroups: `wgmma.mma_async` and `setmaxnreg`.
    /// The warps of a warpgroup issued different warpgroup instructions.
    WarpgroupDivergent(WarpgroupDivergent),
    /// A `wgmma` read a generic-proxy write its writer did not fence.
    WgmmaUnfenced(WgmmaUnfenced),
    /// A `wgmma` operand reaches past the launch-sized shared memory.
    WgmmaOutOfBounds(WgmmaOutOfBounds),
    /// A swizzled `wgmma` operand starts off its pattern's first row.
    WgmmaMisaligned(WgmmaMisaligned),

    // Panics.
    /// The kernel panicked (an overflow, a division by zero, ...).
    Panic {
        /// The thread that panicked.
        thread: Dim3,
        /// The panic's message.
        message: String,
    },

    // Launches beyond CUDA's limits, refused before any thread runs.
    /// The launch is beyond CUDA's limits: no thread ran.
    InvalidLaunch {
        /// The launch's quantity out of range, in words.
        what: &'static str,
        /// Its value in the launch: 0, or more than `limit`.
        value: u64,
        /// The most CUDA allows.
        limit: u64,
    },
    /// The block has more threads than the kernel's launch bounds allow,
    /// which the GPU refuses too: no thread ran.
    BeyondLaunchBounds {
        /// Threads per block in the launch.
        threads: u64,
        /// The most the kernel's launch bounds allow.
        max_threads: u32,
    },
    /// Clusters that do not tile the grid, or of more blocks than
    /// [`gpu_core::MAX_CLUSTER_BLOCKS`]: no thread ran.
    ClusterShape {
        /// The launch's grid.
        grid: Dim3,
        /// Its cluster.
        cluster: Dim3,
    },

    // Threads that do not finish or overflow their stack.
    /// A thread called into the runtime more often than the limit allows:
    /// a loop that would never end.
    DidNotFinish {
        /// The thread that was stopped.
        thread: Dim3,
        /// Calls it had made into the runtime when it was stopped.
        steps: u64,
    },
    /// A thread ran past the end of its stack.
    StackOverflow {
        /// The thread whose stack overflowed.
        thread: Dim3,
        /// The stack's size ([`STACK_BYTES`](crate::STACK_BYTES)).
        bytes: usize,
    },
    /// The stack of an emulated thread could not be allocated.
    NoStack {
        /// The thread that got no stack.
        thread: Dim3,
        /// Why the allocation failed.
        reason: String,
    },
}
