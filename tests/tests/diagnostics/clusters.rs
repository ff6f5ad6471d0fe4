//! Clusters and distributed shared memory (`cluster`): the blocks of a
//! cluster run at once and exchange data through each other's shared
//! memory; two blocks touching one byte between the same two cluster
//! barriers, one of them writing, is reported, and so are an access to the
//! memory of a block that exits before a cluster barrier orders it, a rank
//! the cluster does not have, a cluster barrier some threads of a block
//! skip, and clusters that do not tile the grid.

use gpu_emulator::{self, AccessKind, Diagnostic, Fault, Launch};
use gpu_std::cluster;
use gpu_std::global::GlobalMut;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_idx_x, sync_threads, thread_idx_x};
use gpu_std::warp;

use crate::support::assert_says;

/// What is broken in the ring exchange below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RingBug {
    None,
    /// A block barrier where the first cluster barrier belongs: the next
    /// block may not have written yet.
    BlockBarrierOnly,
    /// No cluster barrier before the end: a block may exit while the one
    /// before it still reads its memory.
    NoFinalBarrier,
    /// The threads map rank `num_blocks`, one past the cluster.
    RankPastTheCluster,
    /// Thread 0 writes the next block's memory after the first cluster
    /// barrier too, while that block reads it.
    WriteAfterBarrier,
}

/// Each block of `blocks` threads writes `1000·block + t` into the
/// shared memory of the next block of its cluster, around it; after a
/// cluster barrier every thread reads its own memory and writes it out,
/// then reads the next block's memory and adds it.
unsafe fn ring(out: GlobalMut<u32>, bug: RingBug) {
    let t = thread_idx_x();
    unsafe {
        let tile = SharedArray::<u32>::launch_sized();
        let blocks = cluster::num_blocks();
        let next = match bug {
            RingBug::RankPastTheCluster => blocks,
            _ => (cluster::block_rank() + 1) % blocks,
        };
        let theirs = cluster::map_shared_rank(tile, next);
        theirs.write(t, 1000 * block_idx_x() + t);
        match bug {
            RingBug::BlockBarrierOnly => sync_threads(),
            _ => cluster::sync(),
        }
        if bug == RingBug::WriteAfterBarrier && t == 0 {
            theirs.write(1, 0);
        }
        let mine = tile.read(t);
        let index = block_idx_x() * 32 + t;
        out.write(index as usize, mine.wrapping_add(theirs.read(t)));
        if bug != RingBug::NoFinalBarrier {
            cluster::sync();
        }
    }
}

fn clusters_of(blocks: u32, cluster: u32, threads: u32) -> Launch {
    Launch {
        grid: (blocks, 1, 1),
        block: (threads, 1, 1),
        shared_bytes: 4 * threads,
        cluster: (cluster, 1, 1),
    }
}

fn run_ring(bug: RingBug) -> (Result<(), Diagnostic>, Vec<u32>) {
    let mut out = vec![u32::MAX; 4 * 32];
    let view = GlobalMut::new("out", &mut out);
    let launch = clusters_of(4, 2, 32);
    // SAFETY: 32 threads a block, a word of shared memory each, a word of
    // `out` each; the emulator checks the rest.
    let result = gpu_emulator::run("ring", &launch, &|| unsafe { ring(view, bug) });
    (result, out)
}

fn fault(bug: RingBug) -> Fault {
    run_ring(bug)
        .0
        .expect_err("the emulator must report the bug")
        .fault
}

#[test]
fn the_blocks_of_a_cluster_exchange_data_through_each_others_shared_memory() {
    let (result, out) = run_ring(RingBug::None);
    result.unwrap();
    // Block b's memory holds what the block before it in its cluster (of
    // 2) wrote; the next block's holds b's own.
    let before = |block: u32| block ^ 1;
    for (index, &value) in (0..).zip(&out) {
        let (block, t) = (index / 32, index % 32);
        let expected = (1000 * before(block) + t) + (1000 * block + t);
        assert_eq!(value, expected, "block {block}, thread {t}");
    }
}

#[test]
fn a_neighbours_memory_read_without_a_cluster_barrier_is_a_race() {
    // Both blocks write each other's memory and pass their own block
    // barriers; then block 0's threads read their own memory, which block
    // 1 wrote with no cluster barrier since.
    let diagnostic = run_ring(RingBug::BlockBarrierOnly).0.unwrap_err();
    let Fault::ClusterRace {
        owner,
        earlier_block,
        earlier_kind,
        later_block,
        later,
        ..
    } = diagnostic.fault
    else {
        panic!("not a cluster race: {diagnostic}");
    };
    assert_eq!(
        (owner, earlier_block, later_block),
        ((0, 0, 0), (1, 0, 0), (0, 0, 0))
    );
    assert_eq!(
        (earlier_kind, later.kind),
        (AccessKind::Write, AccessKind::Read)
    );
    assert_says(&diagnostic, "cluster::sync");
}

#[test]
fn a_write_to_a_neighbours_memory_while_it_reads_is_a_race() {
    let Fault::ClusterRace {
        owner,
        offset,
        earlier_kind,
        later,
        ..
    } = fault(RingBug::WriteAfterBarrier)
    else {
        panic!("not a cluster race");
    };
    // Block 0's thread 0 writes word 1 of block 1's memory, which block
    // 0's thread 1 reads with no barrier between.
    assert_eq!((owner, offset / 4), ((1, 0, 0), 1));
    assert_eq!(
        (earlier_kind, later.kind),
        (AccessKind::Write, AccessKind::Read)
    );
    assert_eq!(later.thread, (1, 0, 0));
}

#[test]
fn a_block_exiting_while_another_reads_its_memory_is_reported() {
    let diagnostic = run_ring(RingBug::NoFinalBarrier).0.unwrap_err();
    let Fault::NeighbourExited {
        owner,
        accessor,
        kind,
        ..
    } = diagnostic.fault
    else {
        panic!("not an access to an exited block: {diagnostic}");
    };
    // Block 0 exits first; block 1 then reads its memory.
    assert_eq!(
        (owner, accessor, kind),
        ((0, 0, 0), (1, 0, 0), AccessKind::Read)
    );
}

#[test]
fn a_rank_past_the_cluster_is_reported() {
    let Fault::ClusterRankOutOfRange {
        thread,
        rank,
        blocks,
    } = fault(RingBug::RankPastTheCluster)
    else {
        panic!("not a rank past the cluster");
    };
    assert_eq!((thread, rank, blocks), ((0, 0, 0), 2, 2));
}

#[test]
fn clusters_that_do_not_tile_the_grid_are_refused() {
    for (blocks, cluster) in [(6, 4), (8, 0), (16, 16)] {
        let launch = clusters_of(blocks, cluster, 32);
        let diagnostic = gpu_emulator::run("ring", &launch, &|| {}).unwrap_err();
        assert_eq!(
            diagnostic.fault,
            Fault::ClusterShape {
                grid: (blocks, 1, 1),
                cluster: (cluster, 1, 1),
            }
        );
    }
}

#[test]
fn a_cluster_barrier_some_threads_skip_is_a_divergent_barrier() {
    let launch = clusters_of(2, 2, 32);
    let diagnostic = gpu_emulator::run("divergent", &launch, &|| {
        if thread_idx_x() < 16 {
            cluster::sync();
        } else {
            sync_threads();
        }
    })
    .unwrap_err();
    let Fault::DivergentBarrier { first, other } = diagnostic.fault else {
        panic!("not a divergent barrier: {diagnostic}");
    };
    assert_eq!((first.cluster, other.cluster), (false, true));
    assert_says(&diagnostic, "at the cluster::sync at");
}

#[test]
fn warps_stay_within_their_block_when_a_cluster_runs_its_blocks_at_once() {
    // 48 threads a block: block 1's first warp starts at thread 48 of the
    // cluster, and its lanes shuffle with each other, not with block 0's.
    let mut out = vec![u32::MAX; 2 * 48];
    let view = GlobalMut::new("out", &mut out);
    let launch = clusters_of(2, 2, 48);
    let result = gpu_emulator::run("shuffled", &launch, &|| {
        let t = thread_idx_x();
        let mask = if t < 32 { u32::MAX } else { 0xffff };
        let value = warp::shfl_xor_sync(mask, 1000 * block_idx_x() + t, 1);
        // SAFETY: one word a thread of `out`.
        unsafe { view.write((block_idx_x() * 48 + t) as usize, value) };
    });
    result.unwrap();
    for (index, &value) in (0..).zip(&out) {
        let (block, t) = (index / 48, index % 48);
        assert_eq!(value, 1000 * block + (t ^ 1), "block {block}, thread {t}");
    }
}

#[test]
fn two_blocks_of_a_cluster_touching_one_global_element_race_in_either_order() {
    // The blocks run at once, their barrier intervals interleaved: the
    // reader's read after its own block barrier is still unordered with
    // the other block's write, whichever block writes.
    for (writer, reader) in [(0, 1), (1, 0)] {
        let mut data = vec![0u32; 1];
        let view = GlobalMut::new("data", &mut data);
        let launch = clusters_of(2, 2, 32);
        let diagnostic = gpu_emulator::run("global", &launch, &|| {
            // SAFETY: one element, which the emulator checks.
            unsafe {
                if block_idx_x() == writer && thread_idx_x() == 0 {
                    view.write(0, 1);
                }
                sync_threads();
                if block_idx_x() == reader && thread_idx_x() == 0 {
                    view.read(0);
                }
            }
        })
        .unwrap_err();
        assert!(
            matches!(diagnostic.fault, Fault::GlobalRace { .. }),
            "block {writer} writing, {reader} reading: not a global race: {diagnostic}"
        );
    }
}

/// In a cluster of two, block 1 reads or writes block 0's memory after a
/// cluster barrier, and block 0 returns with no cluster barrier after it:
/// block 0's memory is gone while the access is unordered with its exit.
/// Block 0 waits at a block barrier first, so that block 1's access comes
/// before the exit, which must report it then.
fn touched_then_exited(kind: AccessKind) -> Fault {
    let launch = clusters_of(2, 2, 32);
    let diagnostic = gpu_emulator::run("exit", &launch, &|| {
        let t = thread_idx_x();
        // SAFETY: a word of shared memory a thread; the emulator checks
        // the rest.
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, t);
            cluster::sync();
            if cluster::block_rank() == 1 {
                let theirs = cluster::map_shared_rank(tile, 0);
                match kind {
                    AccessKind::Read => drop(theirs.read(t)),
                    AccessKind::Write => theirs.write(t, 0),
                    AccessKind::Atomic => unreachable!("no atomics through a mapped address"),
                }
            } else {
                sync_threads();
            }
        }
    })
    .unwrap_err();
    diagnostic.fault
}

#[test]
fn a_block_exiting_after_another_touched_its_memory_is_reported_at_the_exit() {
    for kind in [AccessKind::Read, AccessKind::Write] {
        let Fault::NeighbourExited {
            owner,
            accessor,
            kind: reported,
            ..
        } = touched_then_exited(kind)
        else {
            panic!("not an access to an exited block ({kind:?})");
        };
        assert_eq!((owner, accessor, reported), ((0, 0, 0), (1, 0, 0), kind));
    }
}
