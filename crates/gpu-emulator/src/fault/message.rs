//! The message of each [`Fault`], in the groups of its enum.

use std::fmt;

use super::kinds::Fault;
use super::parts::{LaneProblem, thread, verb};
use crate::MAX_ARRIVALS;

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Barriers.
            Self::DivergentBarrier { first, other } => write!(
                f,
                "divergent barrier: {} waits at the {} at {} (its barrier #{}), but {} waits at the \
                 {} at {} (its barrier #{}); every live thread of a block must reach the same \
                 barrier",
                thread(first.thread),
                first.call(),
                first.barrier,
                first.passed + 1,
                thread(other.thread),
                other.call(),
                other.barrier,
                other.passed + 1
            ),

            // Shared memory: races, bounds, alignment, bytes never written.
            Self::SharedRace {
                place,
                earlier,
                later,
                ..
            } => write!(
                f,
                "shared-memory race at {place}: {} {} it and {} {} it with no sync_threads between",
                thread(earlier.thread),
                verb(earlier.kind),
                thread(later.thread),
                verb(later.kind)
            ),
            Self::SharedOutOfBounds {
                thread: t,
                kind,
                offset,
                size,
                limit,
            } => write!(
                f,
                "{} {} {size} bytes of shared memory at offset {offset}, outside the launch's {limit} bytes",
                thread(*t),
                verb(*kind)
            ),
            Self::StaticSharedOutOfBounds {
                thread: t,
                kind,
                array,
                index,
                len,
            } => write!(
                f,
                "{} {} element {index} of the shared array {array}, which has {len}",
                thread(*t),
                verb(*kind)
            ),
            Self::StaticSharedTooLarge {
                array,
                bytes,
                limit,
            } => write!(
                f,
                "declaring the shared array {array} takes the block's shared memory to {bytes} \
                 bytes, more than {limit}"
            ),
            Self::SharedMisaligned {
                thread: t,
                kind,
                offset,
                size,
            } => write!(
                f,
                "{} {} {size} bytes of shared memory at offset {offset}, not a multiple of \
                 {size}: a misaligned address on the GPU",
                thread(*t),
                verb(*kind)
            ),
            Self::SharedUninitialized { thread: t, offset } => {
                write!(
                    f,
                    "{} read shared byte {offset}, which no thread of the block had written",
                    thread(*t)
                )
            }

            // Global memory: bounds, alignment, races, the read-only path.
            Self::GlobalUnreachable {
                thread: t,
                kind,
                buffer,
                placement,
            } => write!(
                f,
                "{} {} global buffer {buffer}, which {}",
                thread(*t),
                verb(*kind),
                match placement {
                    gpu_core::Placement::PeerWithoutAccess => {
                        "is another GPU's memory, and peer access to it was never enabled \
                         (cudaDeviceEnablePeerAccess)"
                    }
                    _ =>
                        "is host memory not mapped into the GPU's address space: allocate it \
                          mapped (cudaHostAlloc with cudaHostAllocMapped) or copy it over",
                }
            ),
            Self::GlobalOutOfBounds {
                thread: t,
                kind,
                buffer,
                index,
                len,
            } => write!(
                f,
                "{} {} {buffer}[{index}], outside the {len} elements of global buffer {buffer}",
                thread(*t),
                verb(*kind)
            ),
            Self::GlobalMisaligned {
                thread: t,
                buffer,
                index,
                bytes,
            } => write!(
                f,
                "{} accessed {bytes} bytes of {buffer} at element {index}, not a multiple of \
                 {bytes} bytes from the buffer's start: a misaligned address on the GPU",
                thread(*t)
            ),
            Self::GlobalRace {
                buffer,
                index,
                earlier,
                earlier_block: (x, y, z),
                later,
            } => write!(
                f,
                "global-memory race at {buffer}[{index}]: {} of block ({x}, {y}, {z}) {} it and {} {} \
                 it with nothing ordering them (a sync_threads orders the threads of its own block \
                 only)",
                thread(earlier.thread),
                verb(earlier.kind),
                thread(later.thread),
                verb(later.kind)
            ),
            Self::AtomicScopeTooNarrow {
                buffer,
                index,
                earlier,
                earlier_block,
                later,
            } => write!(
                f,
                "atomics to {buffer}[{index}] by {} of block {earlier_block:?} and by {}, one of them \
                 scoped to its block (Scope::Block), which makes it atomic with its own block's \
                 threads only: two blocks' updates need Scope::Device",
                thread(*earlier),
                thread(*later)
            ),
            Self::WrittenReadOnly {
                buffer,
                index,
                writer: (writer, (wx, wy, wz)),
                reader: (reader, (rx, ry, rz)),
            } => write!(
                f,
                "{buffer}[{index}] was written by {} of block ({wx}, {wy}, {wz}) and read through \
                 the read-only path (ld.global.nc, __ldg) by {} of block ({rx}, {ry}, {rz}) in \
                 the same launch: that path is not coherent with the launch's stores, so the \
                 read may see either value",
                thread(*writer),
                thread(*reader)
            ),

            // Constant memory.
            Self::ConstantOutOfBounds {
                thread: t,
                array,
                index,
                len,
            } => write!(
                f,
                "{} read element {index} of the constant array {array}, which has {len}",
                thread(*t)
            ),
            Self::ConstantUnset {
                thread: t,
                array,
                index,
            } => write!(
                f,
                "{} read element {index} of the constant array {array}, which the host has not set",
                thread(*t)
            ),
            Self::ConstantType {
                thread: t,
                array,
                set,
                read,
            } => write!(
                f,
                "{} read the constant array {array} as {read}, but the host set it as {set}",
                thread(*t)
            ),

            // Textures never set or already destroyed.
            Self::TextureUnset { thread: t } => write!(
                f,
                "{} fetched through texture handle 0, which no texture has: the host never set \
                 it",
                thread(*t)
            ),
            Self::TextureDestroyed { thread: t, handle } => write!(
                f,
                "{} fetched through texture {handle}, which was destroyed before the launch",
                thread(*t)
            ),

            // Asynchronous copies read before their wait.
            Self::CopyInFlight {
                offset,
                copier,
                access,
            } => write!(
                f,
                "{} {} shared byte {offset}, the destination of a memcpy_async by {} that is \
                 still in flight: the copier must wait for it (pipeline::wait_prior), and \
                 other threads pass a sync_threads after that wait",
                thread(access.thread),
                verb(access.kind),
                thread(*copier)
            ),

            // Bulk copies and the shared-memory barriers they complete on.
            Self::BulkInFlight {
                offset,
                barrier,
                access,
            } => write!(
                f,
                "{} {} shared byte {offset}, the destination of a bulk copy still in flight: \
                 wait on the phase of the barrier at shared byte {barrier} that it completes \
                 on first (Mbarrier::wait)",
                thread(access.thread),
                verb(access.kind)
            ),
            Self::BulkUnwaited {
                offset,
                barrier,
                access,
            } => write!(
                f,
                "{} {} shared byte {offset}, which a bulk copy landed in, without waiting on \
                 the phase of the barrier at shared byte {barrier} that it completed on: wait \
                 on it (Mbarrier::wait), or pass a sync_threads after a thread that did",
                thread(access.thread),
                verb(access.kind)
            ),
            Self::BulkCopyShape {
                thread: t,
                offset,
                bytes,
                alignment,
            } => write!(
                f,
                "{} issued a bulk copy of {bytes} bytes to shared byte {offset}: a bulk copy \
                 moves a positive multiple of 16 bytes, from a 16-byte boundary to a multiple \
                 of {alignment} bytes",
                thread(*t)
            ),
            Self::MbarrierCount {
                thread: t,
                offset,
                count,
            } => write!(
                f,
                "{} initialised the barrier at shared byte {offset} for {count} arrivals a \
                 phase: it takes 1 to {MAX_ARRIVALS}",
                thread(*t)
            ),
            Self::MbarrierUninitialized { thread: t, offset } => write!(
                f,
                "{} used the barrier at shared byte {offset}, which no thread of the block has \
                 initialised (Mbarrier::init, then a sync_threads)",
                thread(*t)
            ),
            Self::MbarrierOverArrived {
                thread: t,
                offset,
                count,
            } => write!(
                f,
                "{} arrived at the barrier at shared byte {offset}, whose phase had already had \
                 all the {count} arrivals it was initialised for",
                thread(*t)
            ),
            Self::MbarrierNeverCompletes {
                thread: t,
                site,
                offset,
                outstanding,
                seen,
            } => {
                write!(
                    f,
                    "{} waits at {site} on the barrier at shared byte {offset}, whose phase can \
                     never complete: it still lacks {} of its {} arrivals and {} bytes of bulk \
                     copies, and every other live thread of the block waits too",
                    thread(*t),
                    outstanding.pending,
                    outstanding.count,
                    outstanding.tx
                )?;
                if outstanding.completed >= seen + 2 {
                    write!(
                        f,
                        "; it has seen {seen} of the barrier's {} completed phases: another \
                         thread ran a phase ahead and used the barrier again (a sync_threads \
                         missing between the phases?), so its wait's parity names a phase \
                         still to come",
                        outstanding.completed
                    )?;
                }
                Ok(())
            }

            // Tensor copies.
            Self::TensorMapNotAcquired { thread: t, buffer } => write!(
                f,
                "{} copied through the tensor map {buffer} without acquiring it: the host wrote \
                 the map, so each block acquires it (TensorMap2d::acquire) before its first copy",
                thread(*t)
            ),

            // Clusters.
            Self::ClusterRace {
                owner,
                offset,
                earlier_block,
                earlier_kind,
                later_block,
                later,
            } => write!(
                f,
                "cluster race on byte {offset} of block {owner:?}'s shared memory: block \
                 {earlier_block:?} {} it, then {} of block {later_block:?} {} it, with no \
                 cluster barrier (cluster::sync) between; only a cluster barrier orders the \
                 accesses of two blocks",
                verb(*earlier_kind),
                thread(later.thread),
                verb(later.kind)
            ),
            Self::NeighbourExited {
                owner,
                accessor,
                kind,
                offset,
            } => write!(
                f,
                "block {accessor:?} {} byte {offset} of the shared memory of block {owner:?}, \
                 which exits before a cluster barrier orders that access before its exit: a \
                 block's shared memory is gone once it exits, so a cluster::sync is missing \
                 before the end of the kernel",
                verb(*kind)
            ),
            Self::ClusterRankOutOfRange {
                thread: t,
                rank,
                blocks,
            } => write!(
                f,
                "{} mapped the shared memory of block rank {rank} of its cluster, which has \
                 {blocks} blocks",
                thread(*t)
            ),

            // Warp collectives.
            Self::WgmmaOperandOverwritten {
                thread: t,
                offset,
                started,
                waited,
            } => write!(
                f,
                "{} started a wgmma at {started} that reads shared byte {offset}, which was \
                 overwritten before the wait at {waited}: the tensor cores read it while the \
                 wgmma is in flight, so wait for it (wgmma_wait_group) before the stage is \
                 written again",
                thread(*t)
            ),
            Self::BadWarpCall {
                thread: t,
                call,
                site,
                mask,
                lane,
                problem,
            } => {
                let call = call.name();
                write!(
                    f,
                    "{} calls {call} at {site} with mask {mask:#010x}, ",
                    thread(*t)
                )?;
                let elsewhere = |f: &mut fmt::Formatter<'_>, what: &str| {
                    write!(
                        f,
                        "which names lane {lane}, but that lane waits {what}: every lane of \
                         the mask must reach the same {call}"
                    )
                };
                match problem {
                    LaneProblem::NotInBlock => write!(
                        f,
                        "which names lane {lane}, but its warp has no thread there"
                    ),
                    LaneProblem::Returned => {
                        write!(f, "which names lane {lane}, whose thread has returned")
                    }
                    LaneProblem::AtBarrier(barrier) => {
                        elsewhere(f, &format!("at the sync_threads at {barrier}"))
                    }
                    LaneProblem::AtMbarrier(site) => {
                        elsewhere(f, &format!("on a barrier's phase at {site}"))
                    }
                    LaneProblem::AtClusterBarrier(site) => {
                        elsewhere(f, &format!("at the cluster::sync at {site}"))
                    }
                    LaneProblem::AtWarpCall {
                        call: other_call,
                        site: other,
                        mask: other_mask,
                        passed,
                    } => write!(
                        f,
                        "which names lane {lane}, but that lane waits at the {} at \
                         {other} with mask {other_mask:#010x} (its warp collective #{}): \
                         every lane of the mask must reach the same {call} with the same mask",
                        other_call.name(),
                        passed + 1
                    ),
                    LaneProblem::CallerNotInMask => {
                        write!(f, "which leaves out its own lane {lane}")
                    }
                    LaneProblem::SourceNotInMask => write!(
                        f,
                        "and reads lane {lane}, which the mask leaves out: an undefined value"
                    ),
                }
            }

            // Hopper's warpgroups: `wgmma.mma_async` and `setmaxnreg`.
            Self::WarpgroupDivergent(fault) => fault.fmt(f),
            Self::WgmmaUnfenced(fault) => fault.fmt(f),
            Self::WgmmaOutOfBounds(fault) => fault.fmt(f),
            Self::WgmmaMisaligned(fault) => fault.fmt(f),

            // Panics.
            Self::Panic { thread: t, message } => write!(f, "{} panicked: {message}", thread(*t)),

            // Launches beyond CUDA's limits, refused before any thread runs.
            Self::InvalidLaunch { what, value, limit } => write!(
                f,
                "launch refused: {what} is {value}, outside CUDA's limit of {limit}"
            ),
            Self::BeyondLaunchBounds {
                threads,
                max_threads,
            } => write!(
                f,
                "launch refused: {threads} threads a block, more than the {max_threads} of \
                 the kernel's launch bounds"
            ),
            Self::ClusterShape { grid, cluster } => write!(
                f,
                "launch refused: clusters of {cluster:?} blocks do not tile the grid of \
                 {grid:?}: each cluster dimension must be at least 1 and divide the grid's, \
                 and a cluster may hold at most {} blocks",
                gpu_core::MAX_CLUSTER_BLOCKS
            ),

            // Threads that do not finish or overflow their stack.
            Self::DidNotFinish { thread: t, steps } => write!(
                f,
                "{} did not finish: {steps} calls into the device runtime, a loop that never \
                 ends (waiting for a write that another thread makes after a barrier, or \
                 another block makes at all, never ends here: the emulator runs one thread \
                 at a time between barriers, one block at a time)",
                thread(*t)
            ),
            Self::StackOverflow { thread: t, bytes } => write!(
                f,
                "{} overflowed its stack of {bytes} bytes (a local array too large, or \
                 recursion too deep)",
                thread(*t)
            ),
            Self::NoStack { thread: t, reason } => {
                write!(f, "no stack for {}: {reason}", thread(*t))
            }
        }
    }
}
