//! Atomics on shared memory: a histogram privatised per block in any
//! block order, and every way a shared atomic and a plain access can meet
//! unordered, or ordered by a barrier, a thread's own order or a
//! `syncwarp`.

use gpu_emulator::{self, AccessKind, BlockOrder, Diagnostic, Dim3, Fault};
use gpu_std::atomic::atomic_add;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
use gpu_std::warp;
use rand::Rng;

use crate::atomics::{access, run_in};
use crate::support::{assert_fault, assert_says, blocks, on_one_word, one_block, rng};

/// A 256-bin histogram of `bytes`: each block counts its share in shared
/// memory with block-scoped atomics, then adds its bins to the global ones.
fn histogram(bytes: &[u32], grid: u32) -> Result<Vec<u32>, Diagnostic> {
    let mut bins = vec![0u32; 256];
    let (input, output) = (
        Global::new("bytes", bytes),
        GlobalMut::new("bins", &mut bins),
    );
    let n = bytes.len() as u32;
    let body = || {
        let (t, threads) = (thread_idx_x(), block_dim_x());
        // SAFETY: 256 u32 of launch-sized memory, one bin each; every
        // index below is inside its buffer.
        unsafe {
            let local = SharedArray::<u32>::launch_sized();
            local.write(t, 0);
            sync_threads();
            let mut i = block_idx_x() * threads + t;
            while i < n {
                atomic_add(local.element(input.read(i as usize)), 1);
                i += threads * grid;
            }
            sync_threads();
            atomic_add(output.element(t as usize), local.read(t));
        }
    };
    run_in(
        BlockOrder::from_seed(grid.into()),
        &blocks(grid, 256, 1024),
        &body,
    )?;
    Ok(bins)
}

#[test]
fn a_histogram_privatised_in_shared_memory_counts_every_byte() {
    let mut rng = rng();
    // Skewed: most bytes in a few bins, so that lanes collide.
    let bytes: Vec<u32> = (0..5000)
        .map(|_| {
            if rng.random_bool(0.7) {
                rng.random_range(0..4)
            } else {
                rng.random_range(0..256)
            }
        })
        .collect();
    let mut expected = vec![0u32; 256];
    bytes.iter().for_each(|&byte| expected[byte as usize] += 1);
    for grid in [1, 3, 7] {
        assert_eq!(histogram(&bytes, grid).unwrap(), expected, "{grid} blocks");
    }
}

#[test]
fn a_plain_increment_racing_an_atomic_one_in_shared_memory_is_reported() {
    let body = || {
        let t = thread_idx_x();
        // SAFETY: one word of launch-sized memory.
        unsafe {
            let bin = SharedArray::<u32>::launch_sized();
            if t == 0 {
                bin.write(0, 0);
            }
            sync_threads();
            if t == 5 {
                bin.write(0, bin.read(0) + 1);
            } else {
                atomic_add(bin.element(0), 1);
            }
        }
    };
    let diagnostic = gpu_emulator::run("racy", &one_block(32, 4), &body).unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    let kinds = [earlier.kind, later.kind];
    assert!(kinds.contains(&AccessKind::Atomic), "{diagnostic}");
    assert!(
        earlier.thread == (5, 0, 0) || later.thread == (5, 0, 0),
        "{diagnostic}"
    );
    assert_says(&diagnostic, "atomically updated");
}

#[test]
fn a_shared_atomic_on_a_word_never_written_is_reported() {
    // SAFETY: one word of launch-sized memory, never zeroed.
    let body = || unsafe {
        atomic_add(SharedArray::<u32>::launch_sized().element(0), 1);
    };
    let diagnostic = gpu_emulator::run("unset", &one_block(32, 4), &body).unwrap_err();
    assert_fault!(diagnostic, Fault::SharedUninitialized { offset: 0, .. });
}

/// Runs `body` over a word that thread 0 zeroes before a barrier.
fn one_word(body: fn(SharedArray<u32>, u32)) -> Result<(), Diagnostic> {
    on_one_word("one_word", 0, body)
}

/// Asserts that `diagnostic` is a race between thread `atomic`'s atomic
/// and thread `reader`'s later plain read.
fn assert_atomic_then_read(diagnostic: &Diagnostic, atomic: Dim3, reader: Dim3) {
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    assert_eq!(earlier, access(atomic, AccessKind::Atomic), "{diagnostic}");
    assert_eq!(later, access(reader, AccessKind::Read), "{diagnostic}");
}

#[test]
fn a_plain_read_after_every_other_threads_atomic_is_reported() {
    // The last thread to run reads: every atomic came before it.
    let diagnostic = one_word(|word, t| unsafe {
        if t == 31 {
            let _ = word.read(0);
        } else {
            atomic_add(word.element(0), 1);
        }
    })
    .unwrap_err();
    assert_atomic_then_read(&diagnostic, (0, 0, 0), (31, 0, 0));
}

#[test]
fn a_thread_reads_and_writes_what_it_alone_updated_atomically() {
    one_word(|word, t| unsafe {
        if t == 3 {
            atomic_add(word.element(0), 5);
            word.write(0, word.read(0) * 2);
        }
    })
    .unwrap();
}

#[test]
fn a_thread_that_updated_atomically_races_with_another_threads_atomic() {
    // A shuffle holds lane 0 until lane 1 has made its atomic, and orders
    // no memory: lane 0's plain read then meets lane 1's atomic.
    let diagnostic = one_word(|word, t| unsafe {
        if t < 2 {
            atomic_add(word.element(0), 1);
            warp::shfl_sync(0b11, t, 0);
            if t == 0 {
                let _ = word.read(0);
            }
        }
    })
    .unwrap_err();
    assert_atomic_then_read(&diagnostic, (1, 0, 0), (0, 0, 0));
}

#[test]
fn a_syncwarp_orders_the_lanes_atomics_before_a_plain_read() {
    one_word(|word, t| unsafe {
        atomic_add(word.element(0), 1);
        warp::syncwarp(warp::ALL_LANES);
        // Lanes 0 and 1, the two atomics the shadow keeps.
        if t < 2 {
            assert_eq!(word.read(0), 32);
        }
    })
    .unwrap();
}

#[test]
fn a_lane_reads_its_own_atomic_made_after_a_syncwarp() {
    // Lane 0's atomic comes first and is ordered by the syncwarp; lane 1's
    // own, after it, is its own to read.
    one_word(|word, t| unsafe {
        if t == 0 {
            atomic_add(word.element(0), 1);
        }
        warp::syncwarp(warp::ALL_LANES);
        if t == 1 {
            atomic_add(word.element(0), 1);
            assert_eq!(word.read(0), 2);
        }
    })
    .unwrap();
}
