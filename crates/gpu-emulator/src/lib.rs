//! The CPU side of the device runtime: runs a kernel's threads, block by
//! block, as coroutines on one OS thread, with CUDA's barrier semantics, and
//! checks every barrier and every shared-memory access.
//!
//! The blocks run one after another in a [`BlockOrder`]: as numbered, in
//! reverse, or shuffled, so that a test can run a launch in an order drawn
//! from its seed, as a GPU runs them in an order of its own. A launch in
//! clusters runs each cluster's blocks at once instead, under one
//! scheduler, each block with its own shared memory, which the others may
//! map (see `cluster`): a block's barrier waits for its own live threads, a
//! cluster barrier for every live thread of the cluster.
//!
//! A block runs in rounds: every live thread runs until it reaches its next
//! `sync_threads` or returns. When all live threads wait, they must wait at
//! the same barrier (the same call site; every thread has passed the same
//! barriers before, all of them together); then the barrier opens and the
//! next round starts. A thread that has
//! returned no longer counts, as on the GPU.
//!
//! Between two barriers, two accesses to the same shared byte by different
//! threads, at least one a write, are a race: on the GPU their order is
//! undefined. Each shared byte carries a shadow of who last wrote and read it
//! in which barrier interval ("epoch"), so a race is found whatever order
//! the emulator happens to run the threads in.
//!
//! A wait on a shared-memory barrier's phase (`mbarrier`) that has not
//! completed gives the OS thread back too; the waiting threads try again
//! whenever a barrier has changed, and a wait that nothing left running
//! can complete is a diagnostic, not a hang (see `mbarrier`).
//!
//! A warp's collectives (shuffles, `syncwarp`, votes, matches, reductions)
//! are rendezvous too, of the lanes their masks name: a lane that reaches
//! one waits, like at a barrier, until every live thread of the block
//! waits somewhere; then each collective whose lanes all wait at it with
//! the same mask computes their results, and they go on. A mask that names
//! a lane that is not there or has returned, or one that waits elsewhere
//! while nothing else can move, is a diagnostic (see `warp`). Between two
//! barriers, a `syncwarp` orders the shared-memory accesses of the lanes
//! of its mask, as on the GPU.
//!
//! A warpgroup's instructions, `wgmma.mma_async` and `setmaxnreg`, are
//! collectives of each of its four warps, which must issue the same ones in
//! the same order: what each warp issued is compared with the others' at
//! every block barrier and at the block's end (see `warpgroup`). A `wgmma`
//! reads shared memory through the async proxy, which sees a thread's
//! stores once a `fence.proxy.async` of that thread ordered before the
//! `wgmma` follows them (see `proxy`).
//!
//! Global memory is the host's own, seen through the runtime's views: every
//! access is checked against its buffer's length, and a vector access
//! against its alignment too, so that an index past the end is reported,
//! never read or written; and, like shared memory, every byte it touches
//! has a shadow, so two threads of one launch touching one byte, one of them
//! writing, with nothing ordering them (two blocks, or no barrier between),
//! are a race.
//!
//! Nothing a kernel does stops the process: a launch beyond CUDA's limits is
//! refused before any thread runs, a thread that calls into the runtime more
//! often than [`Limits::steps_per_thread`] is stopped as one that would never
//! finish (a spin-wait on memory another thread or block should write: the
//! emulator runs one thread at a time between barriers, one block at a
//! time), and a thread that overflows its stack is stopped at the guard page
//! (on Linux, x86-64 and AArch64).
#![deny(missing_docs)]

use std::cell::{Cell, RefCell};
use std::fmt;
use std::panic::{self, AssertUnwindSafe, Location};

use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};

use device::GlobalAccess;
use global::{GlobalMemory, Now};
use mbarrier::Barriers;
use proxy::ProxyFences;
use shadow::Shadows;
use warpgroup::Warpgroups;

pub use fault::{
    Fault, LaneProblem, OtherWarp, SharedPlace, Waiter, WarpgroupDivergent, WgmmaMisaligned,
    WgmmaOutOfBounds, WgmmaUnfenced,
};
pub use global::SHADOW_BYTES_PER_BYTE;
pub use gpu_core::{
    Dim3, Launch, LaunchBounds, Placement, SHARED_LIMIT_BYTES, SHARED_OPT_IN_LIMIT_BYTES, Scope,
};
pub use mbarrier::{MAX_ARRIVALS, Outstanding};
pub use order::BlockOrder;

mod cluster;
pub mod device;
mod fault;
mod global;
mod guard;
mod matrix;
mod mbarrier;
mod order;
mod proxy;
mod shadow;
pub mod texture;
pub mod traffic;
mod warp;
mod warpgroup;
mod wgmma;

pub use matrix::MmaInput;
use traffic::{Record, Space, Traffic};
use warp::WarpCall;
pub use warp::{ShuffleKind, WarpOp};

/// Stack of one emulated thread: room for the 512 KiB of local memory
/// CUDA gives a thread at most, and the host's frames around it.
pub const STACK_BYTES: usize = 1 << 20;

/// CUDA's limits on a launch, for every GPU of compute capability 7.5 or
/// newer.
const MAX_THREADS_PER_BLOCK: u64 = 1024;
const MAX_BLOCK: Dim3 = (1024, 1024, 64);
const MAX_GRID: Dim3 = (u32::MAX >> 1, 65535, 65535);

/// How much an emulated launch may do before it is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Calls one thread may make into the device runtime (an index, a
    /// barrier, a shared- or global-memory access) in one launch.
    pub steps_per_thread: u64,
    /// The most threads a block may have: CUDA's 1024, or the kernel's
    /// launch bounds ([`Limits::within`]), which the GPU enforces too.
    pub threads_per_block: u32,
}

impl Default for Limits {
    /// 2³⁴ calls: more than any kernel of the project makes at the sizes
    /// the host lets the emulator run, and about half a minute of spinning
    /// on one load; blocks of up to CUDA's 1024 threads, as for a kernel
    /// that declares no launch bounds.
    fn default() -> Self {
        Self {
            steps_per_thread: 1 << 34,
            threads_per_block: MAX_THREADS_PER_BLOCK as u32,
        }
    }
}

impl Limits {
    /// The default limits, with blocks no larger than `bounds` allow.
    pub fn within(bounds: LaunchBounds) -> Self {
        Self {
            threads_per_block: bounds.max_threads,
            ..Self::default()
        }
    }
}

/// A bug the emulator found: which kernel, which block, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The kernel's name, as the launch gave it.
    pub kernel: &'static str,
    /// The block the fault happened in (`blockIdx`); `(0, 0, 0)` for a
    /// launch refused before any block ran.
    pub block: Dim3,
    /// What went wrong.
    pub fault: Fault,
}

/// Whether an access reads or writes memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store, or an asynchronous copy's write to shared memory.
    Write,
    /// An atomic read-modify-write: ordered with the other atomics to its
    /// address, racing with the plain accesses nothing orders it with.
    Atomic,
}

/// One thread's access to shared or global memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The thread's index in its block (`threadIdx`).
    pub thread: Dim3,
    /// Whether it read or wrote.
    pub kind: AccessKind,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Fault::InvalidLaunch { .. }
        | Fault::BeyondLaunchBounds { .. }
        | Fault::ClusterShape { .. } = self.fault
        {
            return write!(f, "{}: {}", self.kernel, self.fault);
        }
        let (x, y, z) = self.block;
        write!(f, "{}, block ({x}, {y}, {z}): {}", self.kernel, self.fault)
    }
}

impl std::error::Error for Diagnostic {}

/// Runs `body` once per thread of every block of `launch`, in block order,
/// within the default [`Limits`], and reports the first bug found, naming
/// `kernel`.
///
/// `body` is the body of one thread: typically a call of a `kernels!`
/// function with the launch's arguments.
pub fn run(kernel: &'static str, launch: &Launch, body: &dyn Fn()) -> Result<(), Diagnostic> {
    run_within(kernel, launch, Limits::default(), BlockOrder::Forward, body)
}

/// [`run`] within `limits`, the blocks in `order`.
pub fn run_within(
    kernel: &'static str,
    launch: &Launch,
    limits: Limits,
    order: BlockOrder,
    body: &dyn Fn(),
) -> Result<(), Diagnostic> {
    launch_blocks(kernel, launch, limits, order, false, body).map(drop)
}

/// [`run_within`], counting the launch's memory traffic as the hardware
/// would (see [`traffic`]).
pub fn run_counting(
    kernel: &'static str,
    launch: &Launch,
    limits: Limits,
    order: BlockOrder,
    body: &dyn Fn(),
) -> Result<Traffic, Diagnostic> {
    launch_blocks(kernel, launch, limits, order, true, body)
}

/// Runs every block of `launch` in `order`, a cluster's blocks at once;
/// the traffic when `counting`.
fn launch_blocks(
    kernel: &'static str,
    launch: &Launch,
    limits: Limits,
    order: BlockOrder,
    counting: bool,
    body: &dyn Fn(),
) -> Result<Traffic, Diagnostic> {
    check_launch(launch, limits).map_err(|fault| Diagnostic {
        kernel,
        block: (0, 0, 0),
        fault,
    })?;
    // 8-byte words, so that every element type the kernels use is aligned;
    // all ones, like the poison of the outputs, for stale contents.
    let mut words: Vec<Vec<u64>> = (0..launch.cluster_blocks())
        .map(|_| vec![u64::MAX; (launch.shared_bytes as usize).div_ceil(8)])
        .collect();
    let memories: Vec<RefCell<SharedMemory>> = words
        .iter_mut()
        .zip(0..)
        .map(|(words, rank)| {
            RefCell::new(SharedMemory {
                base: words.as_mut_ptr().cast(),
                shadow: Shadows::new(launch.shared_bytes),
                limit: launch.shared_bytes,
                statics: Vec::new(),
                static_words: None,
                epoch: 0,
                block_start: 0,
                unwritten_read: None,
                barriers: Barriers::default(),
                rank,
                cluster: Vec::new(),
                phase: 0,
                exited: false,
                warp_clocks: Vec::new(),
                warpgroups: Warpgroups::default(),
                proxy_fences: ProxyFences::default(),
            })
        })
        .collect();
    let clock = Cell::new(0);
    let global = RefCell::new(GlobalMemory::default());
    let mut traffic = Traffic::default();
    let (x, y, z) = launch.cluster;
    let clusters = (launch.grid.0 / x, launch.grid.1 / y, launch.grid.2 / z);
    for (cx, cy, cz) in order.blocks(clusters) {
        let blocks: Vec<Dim3> = (0..launch.cluster_blocks())
            .map(|rank| {
                let (rx, ry, rz) = coordinates(rank, launch.cluster);
                (cx * x + rx, cy * y + ry, cz * z + rz)
            })
            .collect();
        let cluster = Cluster {
            memories: &memories,
            clock: &clock,
        };
        traffic += run_cluster(launch, limits, counting, &blocks, &cluster, &global, body)
            .map_err(|(block, fault)| Diagnostic {
                kernel,
                block,
                fault,
            })?;
    }
    Ok(traffic)
}

/// Refuses a launch that no GPU would run: an empty or oversized grid or
/// block, a block beyond the kernel's launch bounds, or more launch-sized
/// shared memory than a block gets with the opt-in attribute (the static
/// arrays, declared as the threads run, are counted as they come).
fn check_launch(launch: &Launch, limits: Limits) -> Result<(), Fault> {
    let within = |what, value: u64, limit: u64| {
        if value == 0 || value > limit {
            return Err(Fault::InvalidLaunch { what, value, limit });
        }
        Ok(())
    };
    let (block, grid) = (launch.block, launch.grid);
    for (what, value, limit) in [
        ("the block's x dimension", block.0, MAX_BLOCK.0),
        ("the block's y dimension", block.1, MAX_BLOCK.1),
        ("the block's z dimension", block.2, MAX_BLOCK.2),
        ("the grid's x dimension", grid.0, MAX_GRID.0),
        ("the grid's y dimension", grid.1, MAX_GRID.1),
        ("the grid's z dimension", grid.2, MAX_GRID.2),
    ] {
        within(what, value.into(), limit.into())?;
    }
    let threads = u64::from(block.0) * u64::from(block.1) * u64::from(block.2);
    within("the threads per block", threads, MAX_THREADS_PER_BLOCK)?;
    if !launch.clusters_tile_grid() {
        return Err(Fault::ClusterShape {
            grid,
            cluster: launch.cluster,
        });
    }
    if threads > u64::from(limits.threads_per_block) {
        return Err(Fault::BeyondLaunchBounds {
            threads,
            max_threads: limits.threads_per_block,
        });
    }
    if u64::from(launch.shared_bytes) > SHARED_OPT_IN_LIMIT_BYTES {
        return Err(Fault::InvalidLaunch {
            what: "the shared memory per block, in bytes,",
            value: launch.shared_bytes.into(),
            limit: SHARED_OPT_IN_LIMIT_BYTES,
        });
    }
    Ok(())
}

/// The launch's shared memory and its shadow. Epochs only grow, across
/// blocks too, so that the shadow never needs clearing.
struct SharedMemory {
    base: *mut u8,
    /// One per byte: the launch-sized memory's from offset 0, the static
    /// arrays' from [`STATIC_START`].
    shadow: Shadows,
    /// The launch-sized memory's bytes.
    limit: u32,
    /// The statically sized arrays declared so far in the launch: name,
    /// offset from [`STATIC_START`], bytes.
    statics: Vec<(&'static str, u32, u32)>,
    /// Their memory, allocated at the first declaration, whole, so that it
    /// never moves while threads hold its address.
    static_words: Option<Box<[u64]>>,
    /// The current barrier interval.
    epoch: u32,
    /// The current block's first epoch: a byte last written before it holds
    /// another block's data.
    block_start: u32,
    /// The first read in this epoch of a byte that no thread of the block
    /// had written.
    unwritten_read: Option<Fault>,
    /// The block's shared-memory barriers.
    barriers: Barriers,
    /// The block's rank in its cluster.
    rank: u32,
    /// The blocks of the cluster, by rank.
    cluster: Vec<Dim3>,
    /// The current cluster barrier interval, the same in every block of
    /// the cluster; numbered across the launch, like epochs.
    phase: u32,
    /// Whether the block's threads have all returned.
    exited: bool,
    /// Each thread's vector clock over the lanes of its warp, by linear
    /// index; empty until the block's first `syncwarp`. A lane's own entry
    /// counts the `syncwarp`s it has passed; a `syncwarp` gives each lane
    /// of its mask the latest entries any of them has seen. An access of
    /// lane `a` at its own entry `t` is ordered before a later access of
    /// lane `b` of the same warp once `b`'s entry for `a` is past `t`.
    warp_clocks: Vec<[u32; 32]>,
    /// The warpgroup instructions each warp has issued (see `warpgroup`).
    warpgroups: Warpgroups,
    /// Each thread's `fence.proxy.async`s (see `proxy`).
    proxy_fences: ProxyFences,
}

/// Who last wrote one shared byte, and who read it, in which epoch; threads
/// as linear indices in the block. Epoch 0, the default, is no epoch at all.
#[derive(Clone, Copy, Default)]
struct Shadow {
    write_epoch: u32,
    writer: u32,
    read_epoch: u32,
    reader: u32,
    /// A second reader in `read_epoch`, other than `reader`; `NONE` while
    /// there is none. Two readers are enough to tell whether a writer races
    /// with a reader other than itself.
    other_reader: u32,
    /// The warp clocks' own entries of `writer`, `reader` and
    /// `other_reader` at their accesses (see `SharedMemory::warp_clocks`).
    write_tick: u32,
    read_tick: u32,
    other_read_tick: u32,
    /// Their mbarrier arrivals then (see `mbarrier`'s ordering).
    write_arrivals: u32,
    read_arrivals: u32,
    other_read_arrivals: u32,
    /// The `fence.proxy.async`s `writer` had made when it wrote (see
    /// `proxy`).
    write_fences: u32,
    /// The thread whose asynchronous copy to this byte is in flight.
    copier: Option<u32>,
    /// The barrier (its offset) that a bulk copy to this byte in flight
    /// completes on.
    bulk: Option<u32>,
    /// While `writer` is [`BULK`]: the barrier the copy that wrote the
    /// byte completed on, and the phases it had completed then.
    landed: (u32, u32),
    /// The cluster barrier interval of the last write, and the rank of
    /// the block that made it.
    cluster_write: (u32, u32),
    /// While the last write was another block's: the barrier interval of
    /// that block it wrote in, and its thread's linear index.
    remote_writer: (u32, u32),
    /// The latest cluster barrier interval with reads, and the ranks of
    /// the blocks that read in it, a bit each.
    cluster_readers: (u32, u32),
    /// The latest epoch with atomics to this byte, the thread that made
    /// the first, and another that made one, `NONE` while there is none:
    /// atomics are ordered with each other, not with plain accesses.
    atomic_epoch: u32,
    atomic_thread: u32,
    other_atomic: u32,
    /// Their threads' ticks then, which a `syncwarp` may order.
    atomic_tick: u32,
    other_atomic_tick: u32,
}

const NONE: u32 = u32::MAX;

/// Whether thread `earlier`'s access (or fence) at its own warp-clock entry
/// `then`, with `arrived` mbarrier arrivals behind it, is ordered before
/// thread `me`'s accesses from now on, within a barrier interval: by a
/// `syncwarp` of theirs, or by an mbarrier phase `me` waited on.
fn synced(
    (clocks, barriers): (&[[u32; 32]], &Barriers),
    me: u32,
    (earlier, then, arrived): (u32, u32, u32),
) -> bool {
    (earlier / 32 == me / 32
        && clocks
            .get(me as usize)
            .is_some_and(|clock| clock[earlier as usize % 32] > then))
        || barriers.ordered(me, earlier, arrived)
}

/// The writer of a byte a bulk copy landed in: no thread.
const BULK: u32 = u32::MAX - 1;

/// The writer of a byte another block of the cluster wrote.
const REMOTE: u32 = u32::MAX - 2;

/// Where the static shared arrays' offsets start: past any launch-sized
/// memory, the opt-in limit's 227 KiB, so that an access past the
/// launch-sized memory is never taken for one of theirs.
const STATIC_START: i64 = 256 * 1024;

const _: () = assert!(SHARED_OPT_IN_LIMIT_BYTES < STATIC_START as u64);

impl SharedMemory {
    /// Thread `me`'s own entry in its warp clock: how many `syncwarp`s
    /// it has passed in this barrier interval.
    fn own_tick(&self, me: u32) -> u32 {
        self.warp_clocks
            .get(me as usize)
            .map_or(0, |clock| clock[me as usize % 32])
    }

    /// Checks one access by thread `me` of `block` and records it.
    fn access(
        &mut self,
        me: u32,
        block: Dim3,
        offset: i64,
        size: u32,
        kind: AccessKind,
    ) -> Result<(), Fault> {
        self.access_aligned(me, block, offset, (size, size), kind)
    }

    /// [`Self::access`] of `size` bytes on a boundary of `alignment`.
    fn access_aligned(
        &mut self,
        me: u32,
        block: Dim3,
        offset: i64,
        (size, alignment): (u32, u32),
        kind: AccessKind,
    ) -> Result<(), Fault> {
        let thread = coordinates(me, block);
        let offset = self.checked_offset(thread, offset, (size, alignment), kind)?;
        let later = Access { thread, kind };
        let tick = self.own_tick(me);
        let arrivals = self.barriers.arrivals(me);
        let fences = self.proxy_fences.count(me);
        for byte in offset..offset + size {
            self.cluster_access(byte, self.rank, Access { thread, kind })?;
            let epoch = self.epoch;
            let orders = (self.warp_clocks.as_slice(), &self.barriers);
            let synced = |earlier, then, arrived| synced(orders, me, (earlier, then, arrived));
            let shadow = &mut self.shadow[byte as usize];
            if let Some(copier) = shadow.copier {
                return Err(Fault::CopyInFlight {
                    offset: byte,
                    copier: coordinates(copier, block),
                    access: Access { thread, kind },
                });
            }
            if let Some(barrier) = shadow.bulk {
                return Err(Fault::BulkInFlight {
                    offset: byte,
                    barrier,
                    access: Access { thread, kind },
                });
            }
            // A bulk copy's bytes are ordered before the threads that
            // waited on its phase, and before every thread after the next
            // barrier.
            let landed_now = shadow.write_epoch == epoch && shadow.writer == BULK;
            if landed_now {
                let (barrier, phase) = shadow.landed;
                if self.barriers.observed(me, barrier) < phase {
                    return Err(Fault::BulkUnwaited {
                        offset: byte,
                        barrier,
                        access: Access { thread, kind },
                    });
                }
            }
            let written_now = shadow.write_epoch == epoch
                && shadow.writer != me
                && !landed_now
                && !synced(shadow.writer, shadow.write_tick, shadow.write_arrivals);
            let other_atomic = match shadow.atomic_thread {
                _ if shadow.atomic_epoch != epoch => NONE,
                thread if thread != me && !synced(thread, shadow.atomic_tick, NONE) => thread,
                _ if !synced(shadow.other_atomic, shadow.other_atomic_tick, NONE) => {
                    shadow.other_atomic
                }
                _ => NONE,
            };
            if kind != AccessKind::Atomic && other_atomic != NONE && other_atomic != me {
                return Err(self.race(byte, (other_atomic, AccessKind::Atomic), later, block));
            }
            // An atomic reads the byte too.
            let written = shadow.write_epoch.max(shadow.atomic_epoch) >= self.block_start;
            if kind != AccessKind::Write && !written && self.unwritten_read.is_none() {
                // Reported at the round's end, unless another thread
                // writes the byte before then: that is a race, which
                // says more (a barrier is missing).
                self.unwritten_read = Some(Fault::SharedUninitialized {
                    thread,
                    offset: byte,
                });
            }
            match kind {
                AccessKind::Read => {
                    if written_now {
                        let writer = shadow.writer;
                        return Err(self.race(byte, (writer, AccessKind::Write), later, block));
                    }
                    // A reader ordered before this one is forgotten for
                    // it: a write ordered after this read is after both.
                    // A third reader unordered with the two kept is not
                    // remembered, so a write ordered after those two but
                    // not after it goes unreported.
                    if shadow.read_epoch != epoch
                        || shadow.reader == me
                        || synced(shadow.reader, shadow.read_tick, shadow.read_arrivals)
                    {
                        let other_reader = if shadow.read_epoch != epoch {
                            NONE
                        } else {
                            shadow.other_reader
                        };
                        *shadow = Shadow {
                            read_epoch: epoch,
                            reader: me,
                            read_tick: tick,
                            read_arrivals: arrivals,
                            other_reader,
                            ..*shadow
                        };
                    } else if shadow.other_reader == NONE
                        || shadow.other_reader == me
                        || synced(
                            shadow.other_reader,
                            shadow.other_read_tick,
                            shadow.other_read_arrivals,
                        )
                    {
                        shadow.other_reader = me;
                        shadow.other_read_tick = tick;
                        shadow.other_read_arrivals = arrivals;
                    }
                }
                AccessKind::Write | AccessKind::Atomic => {
                    if written_now {
                        let writer = shadow.writer;
                        return Err(self.race(byte, (writer, AccessKind::Write), later, block));
                    }
                    let readers = [
                        (shadow.reader, shadow.read_tick, shadow.read_arrivals),
                        (
                            shadow.other_reader,
                            shadow.other_read_tick,
                            shadow.other_read_arrivals,
                        ),
                    ];
                    let unordered = readers.into_iter().find(|&(reader, then, arrived)| {
                        reader != me && reader != NONE && !synced(reader, then, arrived)
                    });
                    if let Some((reader, ..)) = unordered.filter(|_| shadow.read_epoch == epoch) {
                        return Err(self.race(byte, (reader, AccessKind::Read), later, block));
                    }
                    if kind == AccessKind::Write {
                        shadow.write_epoch = epoch;
                        shadow.writer = me;
                        shadow.write_tick = tick;
                        shadow.write_arrivals = arrivals;
                        shadow.write_fences = fences;
                    } else if shadow.atomic_epoch != epoch {
                        shadow.atomic_epoch = epoch;
                        shadow.atomic_thread = me;
                        shadow.atomic_tick = tick;
                        shadow.other_atomic = NONE;
                    } else if shadow.atomic_thread == me {
                        shadow.atomic_tick = tick;
                    } else if shadow.other_atomic == NONE || shadow.other_atomic == me {
                        shadow.other_atomic = me;
                        shadow.other_atomic_tick = tick;
                    }
                }
            }
        }
        Ok(())
    }

    /// `offset` as an offset into the memory, once an access of `size`
    /// bytes there by `thread` lies inside the launch-sized memory or the
    /// static arrays and on a boundary of `alignment`.
    fn checked_offset(
        &self,
        thread: Dim3,
        offset: i64,
        (size, alignment): (u32, u32),
        kind: AccessKind,
    ) -> Result<u32, Fault> {
        let end = offset + i64::from(size);
        let launch_sized = offset >= 0 && end <= i64::from(self.limit);
        let statics = STATIC_START..=STATIC_START + self.static_bytes();
        let declared = statics.contains(&offset) && statics.contains(&end);
        if !launch_sized && !declared {
            return Err(Fault::SharedOutOfBounds {
                thread,
                kind,
                offset,
                size,
                limit: self.limit,
            });
        }
        let offset = offset as u32;
        if !offset.is_multiple_of(alignment) {
            return Err(Fault::SharedMisaligned {
                thread,
                kind,
                offset,
                size,
            });
        }
        Ok(offset)
    }

    /// The offset of `address`: from the start of the launch-sized memory,
    /// or from [`STATIC_START`] on inside the static arrays.
    fn offset_of(&self, address: *const u8) -> i64 {
        if let Some(words) = &self.static_words {
            let start = words.as_ptr() as i64;
            let inside = (address as i64).wrapping_sub(start);
            if (0..(8 * words.len()) as i64).contains(&inside) {
                return STATIC_START + inside;
            }
        }
        (address as i64).wrapping_sub(self.base as i64)
    }

    /// The race at shared byte `offset` between thread `earlier` of
    /// `block`, with what it did, and the `later` access.
    fn race(&self, offset: u32, earlier: (u32, AccessKind), later: Access, block: Dim3) -> Fault {
        Fault::SharedRace {
            offset,
            place: self.place(offset),
            earlier: Access {
                thread: coordinates(earlier.0, block),
                kind: earlier.1,
            },
            later,
        }
    }

    /// Which array the byte at `offset` lies in, and where in it.
    fn place(&self, offset: u32) -> SharedPlace {
        let Some(inside) = i64::from(offset)
            .checked_sub(STATIC_START)
            .filter(|&i| i >= 0)
        else {
            return SharedPlace::LaunchSized(offset);
        };
        let inside = inside as u32;
        self.statics
            .iter()
            .find(|&&(_, start, bytes)| (start..start + bytes).contains(&inside))
            .map_or(SharedPlace::LaunchSized(offset), |&(name, start, _)| {
                SharedPlace::Static(name, inside - start)
            })
    }

    /// The static arrays' bytes so far.
    fn static_bytes(&self) -> i64 {
        self.statics
            .last()
            .map_or(0, |&(_, offset, bytes)| i64::from(offset + bytes))
    }

    /// The address of the static array `name` of `bytes` bytes: where an
    /// earlier declaration in the launch put it, else after the others,
    /// 16-byte aligned, as ptxas places them.
    fn declare(&mut self, name: &'static str, bytes: u32) -> Result<*mut u8, Fault> {
        let offset = match self.statics.iter().find(|&&(known, ..)| known == name) {
            Some(&(_, offset, _)) => offset,
            None => {
                let offset = (self.static_bytes() as u32).next_multiple_of(16);
                let total = u64::from(self.limit) + u64::from(offset) + u64::from(bytes);
                if total > SHARED_OPT_IN_LIMIT_BYTES {
                    return Err(Fault::StaticSharedTooLarge {
                        array: name,
                        bytes: total as u32,
                        limit: SHARED_OPT_IN_LIMIT_BYTES,
                    });
                }
                self.statics.push((name, offset, bytes));
                self.shadow.grow_statics(offset + bytes);
                offset
            }
        };
        // As much as the launch-sized memory leaves, which is all the
        // static arrays may take.
        let most = (SHARED_OPT_IN_LIMIT_BYTES - u64::from(self.limit)) as usize;
        let words = self
            .static_words
            .get_or_insert_with(|| vec![u64::MAX; most.div_ceil(8)].into_boxed_slice());
        // SAFETY: offset + bytes is within the limit, and so inside `words`.
        Ok(unsafe { words.as_mut_ptr().cast::<u8>().add(offset as usize) })
    }

    /// Checks an asynchronous copy of `size` bytes to `offset` by thread
    /// `me` as a write made now, and marks its bytes in flight.
    fn start_copy(&mut self, me: u32, block: Dim3, offset: i64, size: u32) -> Result<(), Fault> {
        self.access(me, block, offset, size, AccessKind::Write)?;
        for byte in offset as u32..offset as u32 + size {
            self.shadow[byte as usize].copier = Some(me);
        }
        Ok(())
    }

    /// Lands a copy started by thread `me`: its bytes are written now, in
    /// the current epoch, as a write of `me`'s.
    fn land_copy(&mut self, me: u32, block: Dim3, copy: &Copy) -> Result<(), Fault> {
        for byte in copy.offset..copy.offset + copy.bytes.len() as u32 {
            self.shadow[byte as usize].copier = None;
        }
        let size = copy.bytes.len() as u32;
        self.access(me, block, copy.offset.into(), size, AccessKind::Write)?;
        // SAFETY: `access` checked that the bytes lie inside the allocation.
        unsafe {
            let to = self.base.add(copy.offset as usize);
            std::ptr::copy_nonoverlapping(copy.bytes.as_ptr(), to, copy.bytes.len());
        }
        Ok(())
    }
}

impl SharedMemory {
    /// A `syncwarp` of the lanes `lanes` of the warp whose first thread is
    /// `first`: each lane's own entry moves on, so that its accesses after
    /// are not taken for ones before, and then each gets the latest entries
    /// any of them has, so that its accesses before are ordered before the
    /// others' after.
    fn join_clocks(&mut self, first: u32, lanes: u32) {
        let end = first as usize + 32;
        if self.warp_clocks.len() < end {
            self.warp_clocks.resize(end, [0; 32]);
        }
        let warp = &mut self.warp_clocks[first as usize..end];
        let joined = (0..32).filter(|&lane| lanes & 1 << lane != 0).fold(
            [0; 32],
            |mut joined: [u32; 32], lane| {
                for (entry, &theirs) in joined.iter_mut().zip(&warp[lane]) {
                    *entry = (*entry).max(theirs);
                }
                joined[lane] = warp[lane][lane] + 1;
                joined
            },
        );
        for lane in (0..32).filter(|&lane| lanes & 1 << lane != 0) {
            warp[lane] = joined;
        }
    }

    /// Checks a bulk copy of `size` bytes to `offset` by thread `me`,
    /// completing on the barrier at `barrier`, as a write made now, and
    /// marks its bytes in flight.
    fn start_bulk(
        &mut self,
        me: u32,
        block: Dim3,
        copy: Copy,
        barrier: i64,
        alignment: u32,
    ) -> Result<(), Fault> {
        let size = copy.bytes.len() as u32;
        if size == 0 || !size.is_multiple_of(16) || !copy.offset.is_multiple_of(alignment) {
            return Err(Fault::BulkCopyShape {
                thread: coordinates(me, block),
                offset: copy.offset,
                bytes: size,
                alignment,
            });
        }
        let (thread, barrier) = self.use_barrier(me, block, barrier, AccessKind::Read)?;
        let (offset, write) = (copy.offset.into(), AccessKind::Write);
        self.access_aligned(me, block, offset, (size, 16), write)?;
        for byte in copy.offset..copy.offset + size {
            self.shadow[byte as usize].bulk = Some(barrier);
        }
        self.barriers.issue(thread, barrier, copy)
    }

    /// Lands the copies of a phase of the barrier at `barrier` that has
    /// just completed, the `completed`-th.
    fn land_bulk(&mut self, barrier: u32, completed: u32, copies: &[Copy]) {
        for copy in copies {
            for byte in copy.offset..copy.offset + copy.bytes.len() as u32 {
                let shadow = &mut self.shadow[byte as usize];
                shadow.bulk = None;
                shadow.write_epoch = self.epoch;
                shadow.writer = BULK;
                shadow.landed = (barrier, completed);
            }
            // SAFETY: `start_bulk` checked that the bytes lie inside the
            // allocation.
            unsafe {
                let to = self.base.add(copy.offset as usize);
                std::ptr::copy_nonoverlapping(copy.bytes.as_ptr(), to, copy.bytes.len());
            }
        }
    }

    /// Checks thread `me`'s use of the barrier at `offset` as an access
    /// of `kind` to its 8 bytes (initialising it writes them; using it
    /// reads them, so a use without a `sync_threads` after another
    /// thread's initialisation is a race); the thread and the offset.
    fn use_barrier(
        &mut self,
        me: u32,
        block: Dim3,
        offset: i64,
        kind: AccessKind,
    ) -> Result<(Dim3, u32), Fault> {
        self.access(me, block, offset, 8, kind)?;
        Ok((coordinates(me, block), offset as u32))
    }

    /// Whether the phase of `parity` of the barrier at `offset` has
    /// completed for thread `me`; its copies land if it completes now.
    fn mbarrier_try_wait(
        &mut self,
        me: u32,
        block: Dim3,
        offset: i64,
        parity: u32,
    ) -> Result<bool, Fault> {
        let (thread, offset) = self.use_barrier(me, block, offset, AccessKind::Read)?;
        let Some((copies, completed)) = self.barriers.try_wait(me, thread, offset, parity)? else {
            return Ok(false);
        };
        self.land_bulk(offset, completed, &copies);
        Ok(true)
    }
}

/// The blocks of the cluster running: their shared memories, by rank, and
/// the launch's clock of barrier intervals, which numbers every block's
/// epochs and the cluster's phases across the launch.
struct Cluster<'a> {
    memories: &'a [RefCell<SharedMemory>],
    clock: &'a Cell<u32>,
}

impl Cluster<'_> {
    /// The next barrier interval's number.
    fn tick(&self) -> u32 {
        self.clock.set(self.clock.get() + 1);
        self.clock.get()
    }

    /// Changes whenever a shared-memory barrier of the cluster's blocks
    /// does.
    fn generation(&self) -> u64 {
        let generations = self.memories.iter();
        generations
            .map(|memory| memory.borrow().barriers.generation)
            .sum()
    }

    /// A cluster barrier opens: a new interval for the cluster, and for
    /// each of its blocks.
    fn pass_barrier(&self) {
        let phase = self.tick();
        for memory in self.memories {
            let mut memory = memory.borrow_mut();
            memory.phase = phase;
            memory.epoch = self.tick();
        }
    }
}

/// An asynchronous copy in flight: the bytes read from global memory when
/// it started, and where in shared memory they land.
struct Copy {
    offset: u32,
    bytes: Vec<u8>,
}

/// A thread's asynchronous copies: the groups it has committed, oldest
/// first, and the copies it has started since its last commit.
#[derive(Default)]
struct Pipeline {
    committed: std::collections::VecDeque<Vec<Copy>>,
    open: Vec<Copy>,
}

/// The emulated thread now running, as the runtime's functions see it.
struct Current<'a> {
    launch: &'a Launch,
    limits: Limits,
    /// Calls this thread has made into the runtime.
    steps: Cell<u64>,
    block: Dim3,
    thread: Dim3,
    linear: u32,
    /// Its block's rank in the cluster.
    rank: u32,
    /// Its block's shared memory.
    memory: &'a RefCell<SharedMemory>,
    cluster: &'a Cluster<'a>,
    global: &'a RefCell<GlobalMemory>,
    yielder: Cell<*const Yielder<(), Wait>>,
    /// The result of the thread's last warp collective.
    warp_result: Cell<u64>,
    /// The registers its last matrix instruction gave it.
    warp_registers: Cell<matrix::Fragment>,
    /// Its two rows of A, gathered from its quad's registers, for its last
    /// `wgmma` with A from registers (see `matrix::a_rows`).
    wgmma_rows: Cell<[u32; 16]>,
    /// The warp collectives' call sites the thread has passed, and how
    /// often each.
    warp_passes: RefCell<Vec<(&'static Location<'static>, u32)>>,
    /// Its asynchronous copies in flight.
    pipeline: RefCell<Pipeline>,
    /// The bulk copies it has issued, which number each copy's reads.
    bulk_copies: Cell<u32>,
    /// The tensor maps it has acquired, by their arrays' first bytes.
    tensor_maps: RefCell<Vec<usize>>,
    fault: &'a RefCell<Option<Fault>>,
    /// The thread's memory accesses since the last barrier, when the launch
    /// counts its traffic.
    accesses: Option<RefCell<Vec<Record>>>,
}

impl Current<'_> {
    /// Records an access from `site` of `size` bytes at `offset` in `space`,
    /// when the launch counts its traffic.
    fn record(
        &self,
        site: &'static Location<'static>,
        kind: AccessKind,
        space: Space,
        offset: u64,
        size: u32,
    ) {
        if let Some(accesses) = &self.accesses {
            accesses.borrow_mut().push(Record {
                site: std::ptr::from_ref(site) as usize,
                kind,
                space,
                offset,
                size,
                lane: self.linear % 32,
            });
        }
    }

    /// Checks an access to global memory, in bounds of its buffer, against
    /// the launch's earlier ones, and records it.
    fn global_access(&self, access: &GlobalAccess) -> Result<(), Fault> {
        let memory = self.memory.borrow();
        let now = Now {
            launch: self.launch,
            epoch: memory.epoch,
            block_start: memory.block_start,
            block: self.block,
            thread: self.linear,
        };
        self.global.borrow_mut().access(access, &now)
    }

    /// Closes this thread's open group of copies.
    fn commit_copies(&self) {
        let mut pipeline = self.pipeline.borrow_mut();
        let group = std::mem::take(&mut pipeline.open);
        pipeline.committed.push_back(group);
    }

    /// Lands every committed group of this thread's copies but the newest
    /// `keep`.
    fn land_copies(&self, keep: u32) -> Result<(), Fault> {
        loop {
            let group = {
                let mut pipeline = self.pipeline.borrow_mut();
                if pipeline.committed.len() <= keep as usize {
                    return Ok(());
                }
                pipeline
                    .committed
                    .pop_front()
                    .expect("more than `keep` groups")
            };
            self.land(&group)?;
        }
    }

    fn land(&self, copies: &[Copy]) -> Result<(), Fault> {
        let mut memory = self.memory.borrow_mut();
        for copy in copies {
            memory.land_copy(self.linear, self.launch.block, copy)?;
        }
        Ok(())
    }
}

thread_local! {
    /// The constant arrays' contents, by name, as the host last set them
    /// on this OS thread, which runs every emulated thread of its launches.
    static CONSTANTS: RefCell<Vec<Constant>> = const { RefCell::new(Vec::new()) };
    /// Erased from `Current<'_>`; valid while the thread it names runs.
    static CURRENT: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
    /// Stacks of finished threads, for the next ones.
    static STACKS: RefCell<Vec<DefaultStack>> = const { RefCell::new(Vec::new()) };
}

/// The panic payload that stops a thread at a fault recorded beforehand.
struct Stop;

/// Calls `f` with the running thread, counting the call as one step.
fn with_current<R>(f: impl FnOnce(&Current<'_>) -> R) -> R {
    let current = running();
    let steps = current.steps.get() + 1;
    current.steps.set(steps);
    if steps > current.limits.steps_per_thread {
        stop(Fault::DidNotFinish {
            thread: current.thread,
            steps,
        });
    }
    f(current)
}

/// Runs `operation` on the running thread's block's shared memory, given
/// the thread and the offset of `address`; stops the thread at the fault
/// it returns.
fn on_shared<R>(
    address: *const u8,
    operation: impl FnOnce(&Current<'_>, &mut SharedMemory, i64) -> Result<R, Fault>,
) -> R {
    let done = with_current(|current| {
        let mut memory = current.memory.borrow_mut();
        let offset = memory.offset_of(address);
        operation(current, &mut memory, offset)
    });
    done.unwrap_or_else(|fault| stop(fault))
}

fn running<'a>() -> &'a Current<'a> {
    let current = CURRENT.get();
    assert!(
        !current.is_null(),
        "a device runtime function was called outside an emulated kernel launch"
    );
    // SAFETY: CURRENT points into `schedule`'s frame for exactly as long as
    // the thread it describes runs, and nothing keeps the reference longer.
    unsafe { &*current.cast::<Current<'_>>() }
}

fn coordinates(linear: u32, block: Dim3) -> Dim3 {
    (
        linear % block.0,
        linear / block.0 % block.1,
        linear / (block.0 * block.1),
    )
}

/// Runs the blocks of one cluster (one block where the launch has no
/// clusters) at once; the traffic, or the block at fault and its fault.
fn run_cluster(
    launch: &Launch,
    limits: Limits,
    counting: bool,
    blocks: &[Dim3],
    cluster: &Cluster<'_>,
    global: &RefCell<GlobalMemory>,
    kernel: &dyn Fn(),
) -> Result<Traffic, (Dim3, Fault)> {
    let phase = cluster.tick();
    for memory in cluster.memories {
        let mut memory = memory.borrow_mut();
        memory.epoch = cluster.tick();
        memory.block_start = memory.epoch;
        memory.barriers = Barriers::default();
        memory.cluster = blocks.to_vec();
        memory.phase = phase;
        memory.exited = false;
        memory.warp_clocks.clear();
        memory.warpgroups = Warpgroups::default();
        memory.proxy_fences = ProxyFences::default();
    }
    let fault = RefCell::new(None);
    let threads_per_block = launch.block.0 * launch.block.1 * launch.block.2;
    let threads: Vec<Current<'_>> = blocks
        .iter()
        .zip(0..)
        .flat_map(|(&block, rank)| {
            let fault = &fault;
            (0..threads_per_block).map(move |linear| Current {
                launch,
                limits,
                steps: Cell::new(0),
                block,
                thread: coordinates(linear, launch.block),
                linear,
                rank,
                memory: &cluster.memories[rank as usize],
                cluster,
                global,
                yielder: Cell::new(std::ptr::null()),
                warp_result: Cell::new(0),
                warp_registers: Cell::new([0; 4]),
                wgmma_rows: Cell::new([0; 16]),
                warp_passes: RefCell::default(),
                pipeline: RefCell::default(),
                bulk_copies: Cell::new(0),
                tensor_maps: RefCell::default(),
                fault,
                accesses: counting.then(RefCell::default),
            })
        })
        .collect();
    schedule(&threads, kernel, &fault)
}

/// What a thread waits at when it gives the OS thread back.
#[derive(Clone, Copy)]
enum Wait {
    Barrier(&'static Location<'static>),
    /// At a warp collective (`warp::exchange`).
    Warp(WarpCall),
    /// On a shared-memory barrier's phase that has not completed: the
    /// call site and the barrier's offset.
    Mbarrier(&'static Location<'static>, i64),
    /// At a cluster barrier (`cluster::sync`).
    ClusterBarrier(&'static Location<'static>),
}

type Thread = Coroutine<(), Wait, (), DefaultStack>;

/// Runs the cluster's threads round by round, barrier to barrier; the
/// traffic of their accesses when they are recorded, or the block at fault
/// and its fault.
fn schedule(
    threads: &[Current<'_>],
    kernel: &dyn Fn(),
    fault: &RefCell<Option<Fault>>,
) -> Result<Traffic, (Dim3, Fault)> {
    let at = |index: usize| move |fault| (threads[index].block, fault);
    let mut traffic = Traffic::default();
    let mut coroutines: Vec<Option<Thread>> = Vec::with_capacity(threads.len());
    let mut guards = Vec::with_capacity(threads.len());
    for (index, current) in threads.iter().enumerate() {
        let stack = match STACKS.with_borrow_mut(Vec::pop) {
            Some(stack) => stack,
            None => DefaultStack::new(STACK_BYTES)
                .map_err(|error| Fault::NoStack {
                    thread: current.thread,
                    reason: error.to_string(),
                })
                .map_err(at(index))?,
        };
        guards.push(guard::guard_page(stack.limit().get()));
        let yielder = &current.yielder;
        // SAFETY: `kernel` and `threads` outlive every coroutine: each one
        // is finished or dropped (unwound) before this function returns.
        coroutines.push(Some(unsafe {
            Coroutine::with_stack_unchecked(stack, move |this: &Yielder<_, _>, ()| {
                yielder.set(this);
                kernel();
            })
        }));
    }
    let cluster = threads[0].cluster;
    let mut barriers_passed = vec![0u32; cluster.memories.len()];
    let mut alive = vec![threads.len() / cluster.memories.len(); cluster.memories.len()];
    let mut live: Vec<usize> = (0..threads.len()).collect();
    // The threads waiting at a cluster barrier: they wait across rounds,
    // while other blocks pass barriers of their own, until every live
    // thread of the cluster waits there.
    let mut parked = Vec::new();
    loop {
        // Run every live thread until it waits at a barrier or returns,
        // resolving the warps' collectives whenever all wait somewhere,
        // and trying the waits on shared-memory barriers' phases again
        // whenever a barrier has changed.
        let mut waiting = Vec::with_capacity(live.len());
        let mut calling = Vec::new();
        let mut runnable = live;
        loop {
            let mut spinning = Vec::new();
            let generation = cluster.generation();
            for index in runnable {
                CURRENT.set((&raw const threads[index]).cast());
                let coroutine = coroutines[index]
                    .as_mut()
                    .expect("a live thread has a coroutine");
                let outcome =
                    guard::watch(coroutine, guards[index].clone(), overflowed, |thread| {
                        panic::catch_unwind(AssertUnwindSafe(|| thread.resume(())))
                    });
                CURRENT.set(std::ptr::null());
                match outcome {
                    Ok(CoroutineResult::Yield(Wait::Barrier(barrier))) => {
                        waiting.push((index, barrier));
                    }
                    Ok(CoroutineResult::Yield(Wait::ClusterBarrier(barrier))) => {
                        parked.push((index, barrier));
                    }
                    Ok(CoroutineResult::Yield(Wait::Warp(call))) => {
                        calling.push((index, call));
                    }
                    Ok(CoroutineResult::Yield(Wait::Mbarrier(site, offset))) => {
                        spinning.push((index, site, offset));
                    }
                    Ok(CoroutineResult::Return(())) => {
                        let finished = coroutines[index]
                            .take()
                            .expect("a live thread has a coroutine");
                        STACKS.with_borrow_mut(|stacks| stacks.push(finished.into_stack()));
                        // Copies nobody waited for still land.
                        threads[index].commit_copies();
                        threads[index].land_copies(0).map_err(at(index))?;
                        let rank = threads[index].rank as usize;
                        alive[rank] -= 1;
                        if alive[rank] == 0 {
                            let mut memory = threads[index].memory.borrow_mut();
                            let block = threads[index].launch.block;
                            let returned = |_| OtherWarp::Returned;
                            memory
                                .warpgroups
                                .compare(block, returned)
                                .map_err(at(index))?;
                            memory.exit().map_err(at(index))?;
                        }
                    }
                    Err(payload) => {
                        let thread = threads[index].thread;
                        let fault = fault.take().unwrap_or_else(|| Fault::Panic {
                            thread,
                            message: panic_message(&*payload),
                        });
                        return Err(at(index)(fault));
                    }
                }
            }
            if !spinning.is_empty() && cluster.generation() != generation {
                runnable = spinning.into_iter().map(|(index, ..)| index).collect();
                continue;
            }
            if calling.is_empty() {
                let Some(&(index, site, offset)) = spinning.first() else {
                    break;
                };
                let barrier = offset as u32;
                let memory = threads[index].memory.borrow();
                return Err(at(index)(Fault::MbarrierNeverCompletes {
                    thread: threads[index].thread,
                    site,
                    offset: barrier,
                    outstanding: memory
                        .barriers
                        .outstanding(barrier)
                        .expect("a thread waits on an initialised barrier only"),
                    seen: memory.barriers.observed(threads[index].linear, barrier),
                }));
            }
            let waits = Waits {
                waiting: &waiting,
                parked: &parked,
                spinning: &spinning,
                calling: &calling,
            };
            let called = warp::exchange(threads, &waits)?;
            calling.retain(|(index, _)| !called.contains(index));
            runnable = called;
            runnable.extend(spinning.into_iter().map(|(index, ..)| index));
        }
        traffic += round_traffic(threads);
        for memory in cluster.memories {
            let mut memory = memory.borrow_mut();
            if let Some(fault) = memory.unwritten_read.take() {
                return Err((memory.cluster[memory.rank as usize], fault));
            }
        }
        live = open_block_barriers(threads, &waiting, &parked, &mut barriers_passed)?;
        if live.is_empty() {
            let Some(&(first, _)) = parked.first() else {
                return Ok(traffic);
            };
            // Every live thread of the cluster waits at a cluster barrier.
            let waiter = |&(index, barrier): &(usize, _)| Waiter {
                thread: threads[index].thread,
                barrier,
                cluster: true,
                passed: barriers_passed[threads[index].rank as usize],
            };
            if let Some(other) = parked.iter().find(|&&(_, barrier)| barrier != parked[0].1) {
                return Err(at(first)(Fault::DivergentBarrier {
                    first: waiter(&parked[0]),
                    other: waiter(other),
                }));
            }
            cluster.pass_barrier();
            barriers_passed.iter_mut().for_each(|passed| *passed += 1);
            live = parked.drain(..).map(|(index, _)| index).collect();
        }
    }
}

/// Opens the barrier of each block whose live threads all wait at the same
/// `sync_threads`; the threads to run on. A block whose threads wait at
/// different barriers, or some at a `sync_threads` and others at a cluster
/// barrier, would never go on.
fn open_block_barriers(
    threads: &[Current<'_>],
    waiting: &[(usize, &'static Location<'static>)],
    parked: &[(usize, &'static Location<'static>)],
    barriers_passed: &mut [u32],
) -> Result<Vec<usize>, (Dim3, Fault)> {
    let mut released = Vec::new();
    for (rank, passed) in (0..).zip(barriers_passed.iter_mut()) {
        let of_block = |&&(index, _): &&(usize, _)| threads[index].rank == rank;
        let mut arrived = waiting.iter().filter(of_block);
        let Some(&(first, first_barrier)) = arrived.next() else {
            continue;
        };
        let waiter = |index: usize, barrier, cluster| Waiter {
            thread: threads[index].thread,
            barrier,
            cluster,
            passed: *passed,
        };
        // Every live thread of a block has passed the same barriers (each
        // opens for all of them at once): only the call site can differ.
        let other = arrived
            .clone()
            .find(|&&(_, barrier)| barrier != first_barrier)
            .map(|&(index, barrier)| waiter(index, barrier, false))
            .or_else(|| {
                let at_cluster = parked.iter().find(of_block);
                at_cluster.map(|&(index, barrier)| waiter(index, barrier, true))
            });
        if let Some(other) = other {
            let fault = Fault::DivergentBarrier {
                first: waiter(first, first_barrier, false),
                other,
            };
            return Err((threads[first].block, fault));
        }
        let waits_here = |warp: u32| {
            let of_warp = |&&(index, _): &&(usize, _)| threads[index].linear / 32 == warp;
            match waiting.iter().filter(of_block).find(of_warp) {
                Some(_) => OtherWarp::AtBarrier(first_barrier),
                None => OtherWarp::Returned,
            }
        };
        let mut memory = threads[first].memory.borrow_mut();
        let block = threads[first].launch.block;
        let at = |fault| (threads[first].block, fault);
        memory.warpgroups.compare(block, waits_here).map_err(at)?;
        memory.epoch = threads[first].cluster.tick();
        *passed += 1;
        released.push(first);
        released.extend(arrived.map(|&(index, _)| index));
    }
    Ok(released)
}

/// Where the threads wait that do not run: at a block barrier, at a
/// cluster barrier, on a shared-memory barrier's phase, at a warp
/// collective.
struct Waits<'a> {
    waiting: &'a [(usize, &'static Location<'static>)],
    parked: &'a [(usize, &'static Location<'static>)],
    spinning: &'a [(usize, &'static Location<'static>, i64)],
    calling: &'a [(usize, WarpCall)],
}

/// The traffic of the round just run, warp by warp, and the accesses
/// forgotten for the next.
fn round_traffic(threads: &[Current<'_>]) -> Traffic {
    let mut traffic = Traffic::default();
    let blocks = threads.chunk_by(|one, other| one.rank == other.rank);
    for warp in blocks.flat_map(|block| block.chunks(32)) {
        let mut records = Vec::new();
        for thread in warp {
            if let Some(accesses) = &thread.accesses {
                records.append(&mut accesses.borrow_mut());
            }
        }
        if !records.is_empty() {
            traffic += traffic::count(&records);
        }
    }
    traffic
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(message), _) => (*message).to_string(),
        (_, Some(message)) => message.clone(),
        _ => "a panic without a message".to_string(),
    }
}

/// Runs on the running thread's stack, reset, once it has overflowed.
fn overflowed() {
    stop(Fault::StackOverflow {
        thread: running().thread,
        bytes: STACK_BYTES,
    });
}

/// Stops the running thread with `fault`; `run` reports it.
fn stop(fault: Fault) -> ! {
    *running().fault.borrow_mut() = Some(fault);
    panic::resume_unwind(Box::new(Stop))
}

/// One constant array as the host set it: its values, a `Vec` of the
/// element type it was set with, which a read of another type cannot
/// downcast to.
struct Constant {
    name: &'static str,
    /// The element type's name, for the diagnostic of a read as another.
    element: &'static str,
    values: Box<dyn std::any::Any>,
}

/// Sets the constant array `name` (`constant_array!`) to `values` for the
/// launches that follow on this thread, as `cudaMemcpyToSymbol` does on a
/// GPU. A kernel that reads it as another type than `T` stops with
/// [`Fault::ConstantType`].
pub fn set_constant<T: std::marker::Copy + 'static>(name: &'static str, values: &[T]) {
    CONSTANTS.with_borrow_mut(|constants| {
        constants.retain(|constant| constant.name != name);
        constants.push(Constant {
            name,
            element: std::any::type_name::<T>(),
            values: Box::new(values.to_vec()),
        });
    });
}
