//! `syncwarp` orders the shared-memory accesses of the lanes of its mask:
//! a warp may hand values through shared memory without a `sync_threads`,
//! and the emulator reports no race there, but still does where nothing
//! orders two lanes, or two warps.

use gpu_emulator::{Diagnostic, Fault};
use gpu_std::shared::SharedArray;
use gpu_std::thread::sync_threads;
use gpu_std::warp::{ALL_LANES, syncwarp};
use locality_tests::seed;
use rand::{Rng, SeedableRng, rngs::SmallRng};

use super::{one_block, per_thread_in};

/// Runs `body(thread, tile)` on one block of `threads` with a shared tile
/// of one `u32` a thread; what each returns, in an output poisoned first.
fn with_tile(
    threads: u32,
    body: impl Fn(u32, SharedArray<u32>) -> u32,
) -> Result<Vec<u32>, Diagnostic> {
    let launch = one_block(threads, 4 * threads);
    // SAFETY: inside the launch, `u32` aligned.
    per_thread_in(&launch, u32::MAX, |t| {
        body(t, unsafe { SharedArray::launch_sized() })
    })
}

/// Each warp sums its values through its part of the tile, halving the
/// lanes at work each step, with a `syncwarp` after each step where
/// `synced`; lane 0 returns the sum.
fn warp_sums(values: &[u32], synced: bool) -> Result<Vec<u32>, Diagnostic> {
    with_tile(values.len() as u32, |t, tile| {
        let lane = t % 32;
        // SAFETY: every index is inside the warp's 32 elements of the tile.
        unsafe {
            tile.write(t, values[t as usize]);
            for offset in [16, 8, 4, 2, 1] {
                if synced {
                    syncwarp(ALL_LANES);
                }
                if lane < offset {
                    tile.write(t, tile.read(t).wrapping_add(tile.read(t + offset)));
                }
            }
            if lane == 0 { tile.read(t) } else { 0 }
        }
    })
}

#[test]
fn a_warp_synchronous_sum_through_shared_memory_is_no_race() {
    let mut rng = SmallRng::seed_from_u64(seed());
    let values: Vec<u32> = (0..96).map(|_| rng.random_range(0..1 << 20)).collect();
    let sums = warp_sums(&values, true).unwrap();
    for (t, &sum) in sums.iter().enumerate() {
        let expected = if t % 32 == 0 {
            values[t..t + 32].iter().sum()
        } else {
            0
        };
        assert_eq!(sum, expected, "thread {t}");
    }
}

/// The race on shared memory `result` must stop at: the x indices of its
/// earlier and later threads, and the diagnostic.
#[track_caller]
fn shared_race(result: Result<Vec<u32>, Diagnostic>) -> ((u32, u32), Diagnostic) {
    let diagnostic = result.unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    ((earlier.thread.0, later.thread.0), diagnostic)
}

#[test]
fn the_same_sum_without_syncwarp_is_a_race() {
    let values = vec![1; 64];
    shared_race(warp_sums(&values, false));
}

#[test]
fn a_syncwarp_orders_the_lanes_of_its_mask_and_those_they_sync_with_later() {
    // Lane 0 writes; lanes 0 and 1 sync; lanes 1 and 2 sync; lane 2 reads
    // what lane 0 wrote, after it through lane 1.
    let got = with_tile(32, |t, tile| unsafe {
        if t == 0 {
            tile.write(0, 77);
        }
        if t < 2 {
            syncwarp(0b011);
        }
        if (1..3).contains(&t) {
            syncwarp(0b110);
        }
        if t == 2 { tile.read(0) } else { 0 }
    })
    .unwrap();
    assert_eq!(got[2], 77);
}

#[test]
fn a_lane_outside_the_syncwarp_still_races() {
    // Lanes 0 and 1 sync, lane 2 does not: its read of what lane 0 wrote
    // is a race whichever runs first.
    let ((earlier, later), diagnostic) = shared_race(with_tile(32, |t, tile| unsafe {
        if t == 0 {
            tile.write(0, 77);
        }
        if t < 2 {
            syncwarp(0b011);
        }
        if t == 2 || t == 1 { tile.read(0) } else { 0 }
    }));
    let threads = [earlier, later];
    assert!(threads.contains(&0) && threads.contains(&2), "{diagnostic}");
}

#[test]
fn a_syncwarp_does_not_order_two_warps() {
    // Warp 0 writes, syncs, and warp 1 reads, with no sync_threads: a race.
    shared_race(with_tile(64, |t, tile| unsafe {
        if t < 32 {
            tile.write(t, t);
        }
        syncwarp(ALL_LANES);
        let value = if t >= 32 { tile.read(t - 32) } else { 0 };
        sync_threads();
        value
    }));
}

#[test]
fn a_syncwarp_of_lanes_past_the_first_orders_them() {
    // Lanes 5 and 9 of the second warp, neither the lowest: each lane's
    // clock is its own, kept by its index in the warp.
    let got = with_tile(64, |t, tile| unsafe {
        if t == 37 {
            tile.write(37, 77);
        }
        if t == 37 || t == 41 {
            syncwarp(1 << 5 | 1 << 9);
        }
        if t == 41 { tile.read(37) } else { 0 }
    })
    .unwrap();
    assert_eq!(got[41], 77);
}

#[test]
fn a_write_after_the_syncwarp_races_with_a_read_after_it() {
    // Lane 5 writes after the barrier lane 9 reads after: nothing orders
    // the two.
    let (threads, diagnostic) = shared_race(with_tile(64, |t, tile| unsafe {
        if t == 37 || t == 41 {
            syncwarp(1 << 5 | 1 << 9);
        }
        if t == 37 {
            tile.write(37, 77);
        }
        if t == 41 { tile.read(37) } else { 0 }
    }));
    assert_eq!(threads, (37, 41), "{diagnostic}");
}
