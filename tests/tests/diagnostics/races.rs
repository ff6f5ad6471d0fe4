//! Races on shared memory: two threads touch one element, at least one of
//! them writing, with no barrier between, whatever order the emulator
//! happens to run them in.

use gpu_emulator::{self, Access, AccessKind, Dim3, Fault, SharedPlace};
use gpu_std::global::Global;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use rand::Rng;

use crate::matmul::{Bug, run_tiled_matmul};
use crate::support::{one_block, rng};

/// A race at shared byte `offset` between an earlier and a later access,
/// each a thread and what it did.
fn race(offset: u32, earlier: (Dim3, AccessKind), later: (Dim3, AccessKind)) -> Fault {
    let access = |(thread, kind)| Access { thread, kind };
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
    assert!(
        diagnostic
            .to_string()
            .contains("with no sync_threads between"),
        "{diagnostic}"
    );
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

#[test]
fn a_write_after_a_read_by_another_thread_is_a_race() {
    // Thread t reads element t + 1, then writes element t: thread t + 1's
    // write comes after thread t's read, with no barrier between.
    unsafe fn shift_left(values: Global<u32>) {
        let t = thread_idx_x();
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, values.read(t as usize));
            sync_threads();
            let right = tile.read((t + 1) % 32);
            tile.write(t, right);
        }
    }
    let mut rng = rng();
    let values: Vec<u32> = (0..32).map(|_| rng.random()).collect();
    let values = Global::new("values", &values);
    // SAFETY: 32 threads, 32 values.
    let diagnostic = gpu_emulator::run("shift_left", &one_block(32, 128), &|| unsafe {
        shift_left(values)
    })
    .unwrap_err();
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
    assert!(
        diagnostic
            .to_string()
            .contains("race at byte 4 of the launch-sized shared memory"),
        "{diagnostic}"
    );
}

#[test]
fn a_read_after_a_write_by_another_thread_is_a_race() {
    // After a barrier every thread overwrites its element, then reads its
    // left neighbour's, with no barrier between: thread 1 reads what thread
    // 0 has just written.
    unsafe fn rewrite_then_read_left(values: Global<u32>) {
        let t = thread_idx_x();
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, values.read(t as usize));
            sync_threads();
            tile.write(t, tile.read(t) ^ 1);
            std::hint::black_box(tile.read((t + 31) % 32));
        }
    }
    let mut rng = rng();
    let values: Vec<u32> = (0..32).map(|_| rng.random()).collect();
    let values = Global::new("values", &values);
    // SAFETY: 32 threads, 32 values.
    let diagnostic = gpu_emulator::run("rewrite_then_read_left", &one_block(32, 128), &|| unsafe {
        rewrite_then_read_left(values)
    })
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        race(
            0,
            ((0, 0, 0), AccessKind::Write),
            ((1, 0, 0), AccessKind::Read)
        )
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
        race(
            0,
            ((0, 0, 0), AccessKind::Write),
            ((1, 0, 0), AccessKind::Write)
        )
    );
}

/// Runs `body` on one block of 32 threads over one word of launch-sized
/// memory that thread 0 writes before a barrier.
fn on_a_written_word(body: fn(SharedArray<u32>, u32)) -> Result<(), gpu_emulator::Diagnostic> {
    let thread = || {
        let t = thread_idx_x();
        // SAFETY: one word of launch-sized memory.
        unsafe {
            let word = SharedArray::<u32>::launch_sized();
            if t == 0 {
                word.write(0, 1);
            }
            sync_threads();
            body(word, t);
        }
    };
    gpu_emulator::run("word", &one_block(32, 4), &thread)
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
        race(
            0,
            ((5, 0, 0), AccessKind::Read),
            ((9, 0, 0), AccessKind::Write)
        )
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
        race(
            0,
            ((1, 0, 0), AccessKind::Read),
            ((0, 0, 0), AccessKind::Write)
        )
    );
}
