//! Races on shared memory: two threads touch one element, at least one of
//! them writing, with no barrier between, whatever order the emulator
//! happens to run them in.

use gpu_emulator::{self, Access, AccessKind, Diagnostic, Fault, SharedPlace};
use gpu_std::global::Global;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use rand::Rng;

use crate::matmul::{Bug, run_tiled_matmul};
use crate::support::{assert_says, on_one_word, one_block, rng};

/// A race at shared byte `offset` between an earlier and a later access,
/// each a thread (its x index in a 1-D block) and what it did.
fn race(offset: u32, earlier: (u32, AccessKind), later: (u32, AccessKind)) -> Fault {
    let access = |(x, kind)| Access {
        thread: (x, 0, 0),
        kind,
    };
    Fault::SharedRace {
        offset,
        place: SharedPlace::LaunchSized(offset),
        earlier: access(earlier),
        later: access(later),
    }
}

#[test]
fn a_missing_second_barrier_is_a_race() {
    let diagnostic = run_tiled_matmul([40, 40, 40], Bug::NoSecondBarrier).unwrap_err();
    assert_eq!(
        (diagnostic.kernel, diagnostic.block),
        ("tiled_matmul", (0, 0, 0))
    );
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("expected a race, got {diagnostic}");
    };
    assert_ne!(earlier.thread, later.thread);
    assert!(earlier.kind == AccessKind::Write || later.kind == AccessKind::Write);
    assert_says(&diagnostic, "with no sync_threads between");
}

/// Thread 0 reads a tile element before thread 1 writes it: that the
/// element is unwritten when the emulator happens to run the read is not
/// the bug, the race is, whatever order the threads run in.
#[test]
fn a_missing_first_barrier_is_a_race_with_the_write_it_skips() {
    let diagnostic = run_tiled_matmul([40, 40, 40], Bug::NoFirstBarrier).unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("{diagnostic}");
    };
    assert_eq!(
        (earlier.kind, later.kind),
        (AccessKind::Read, AccessKind::Write)
    );
    assert_ne!(earlier.thread, later.thread);
}

/// Runs `body` as kernel `name` on a block of 32 threads, each of which
/// has first stored a random value to its word of a 32-word tile of
/// launch-sized memory, before a barrier; the diagnostic that stops it.
fn after_staging(name: &'static str, body: fn(SharedArray<u32>, u32)) -> Diagnostic {
    let mut rng = rng();
    let values: Vec<u32> = (0..32).map(|_| rng.random()).collect();
    let values = Global::new("values", &values);
    let thread = || {
        let t = thread_idx_x();
        // SAFETY: 32 threads, 32 values, 32 words of shared memory.
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, values.read(t as usize));
            sync_threads();
            body(tile, t);
        }
    };
    gpu_emulator::run(name, &one_block(32, 128), &thread).unwrap_err()
}

#[test]
fn a_write_after_a_read_by_another_thread_is_a_race() {
    // Thread t reads element t + 1, then writes element t: thread t + 1's
    // write comes after thread t's read, with no barrier between.
    let diagnostic = after_staging("shift_left", |tile, t| unsafe {
        let right = tile.read((t + 1) % 32);
        tile.write(t, right);
    });
    let Fault::SharedRace {
        earlier,
        later,
        offset,
        place,
    } = diagnostic.fault
    else {
        panic!("expected a race, got {diagnostic}")
    };
    assert_eq!(
        (earlier.kind, later.kind),
        (AccessKind::Read, AccessKind::Write)
    );
    assert_eq!(
        (earlier.thread, later.thread, offset, place),
        ((0, 0, 0), (1, 0, 0), 4, SharedPlace::LaunchSized(4))
    );
    assert_says(
        &diagnostic,
        "race at byte 4 of the launch-sized shared memory",
    );
}

#[test]
fn a_read_after_a_write_by_another_thread_is_a_race() {
    // After a barrier every thread overwrites its element, then reads its
    // left neighbour's, with no barrier between: thread 1 reads what thread
    // 0 has just written.
    let diagnostic = after_staging("rewrite_then_read_left", |tile, t| unsafe {
        tile.write(t, tile.read(t) ^ 1);
        std::hint::black_box(tile.read((t + 31) % 32));
    });
    assert_eq!(
        diagnostic.fault,
        race(0, (0, AccessKind::Write), (1, AccessKind::Read))
    );
    assert!(
        diagnostic.to_string().ends_with(
            "thread (0, 0, 0) wrote it and thread (1, 0, 0) read it with no sync_threads between"
        ),
        "{diagnostic}"
    );
}

#[test]
fn two_threads_writing_one_element_is_a_race() {
    unsafe fn all_write_zero() {
        unsafe { SharedArray::<f64>::launch_sized().write(0, thread_idx_x() as f64) };
    }
    // SAFETY: the kernel touches only shared memory.
    let diagnostic = gpu_emulator::run("all_write_zero", &one_block(4, 8), &|| unsafe {
        all_write_zero()
    })
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        race(0, (0, AccessKind::Write), (1, AccessKind::Write))
    );
}

/// Runs `body` over a word that thread 0 sets to 1 before a barrier.
fn on_a_written_word(body: fn(SharedArray<u32>, u32)) -> Result<(), Diagnostic> {
    on_one_word("word", 1, body)
}

#[test]
fn a_read_in_an_earlier_barrier_interval_does_not_hide_a_later_one() {
    // Thread 3 reads before the barrier; after it thread 5 reads and
    // thread 9 writes, with nothing between.
    let diagnostic = on_a_written_word(|word, t| unsafe {
        if t == 3 {
            let _ = word.read(0);
        }
        sync_threads();
        match t {
            5 => {
                let _ = word.read(0);
            }
            9 => word.write(0, 2),
            _ => {}
        }
    })
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        race(0, (5, AccessKind::Read), (9, AccessKind::Write))
    );
}

#[test]
fn a_thread_that_reads_twice_leaves_room_for_another_reader() {
    // Thread 0 reads twice and waits at a shuffle, which orders no
    // memory, for thread 1 to read; then thread 0 writes.
    let diagnostic = on_a_written_word(|word, t| unsafe {
        if t < 2 {
            let _ = word.read(0);
            if t == 0 {
                let _ = word.read(0);
            }
            gpu_std::warp::shfl_sync(0b11, t, 0);
            if t == 0 {
                word.write(0, 2);
            }
        }
    })
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        race(0, (1, AccessKind::Read), (0, AccessKind::Write))
    );
}
