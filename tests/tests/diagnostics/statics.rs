//! Static shared arrays (`shared_array!`): one per block beside the
//! launch-sized memory, checked by name for races, bounds and unwritten
//! elements, and limited together with the launch-sized memory.

use gpu_emulator::{self, AccessKind, Diagnostic, Fault, SharedPlace};
use gpu_std::global::GlobalMut;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_idx_x, sync_threads, thread_idx_x};

use crate::support::{assert_fault, assert_says, blocks, one_block};

/// How `rotate_static` goes wrong, if at all.
#[derive(Clone, Copy, PartialEq)]
enum StaticBug {
    None,
    /// Reads a neighbour's word without the barrier after the writes.
    NoBarrier,
    /// Reads one word past the array.
    PastTheEnd,
    /// Reads a word nobody wrote in this block.
    Unwritten,
}

/// Thread t of a block of 32 writes t to a static shared array of 32
/// words and reads back its neighbour's, t + 1 (mod 32); a launch-sized
/// array of 32 words beside it holds the same, at t, written by t. Each
/// block writes its own 32 elements of `out`.
///
/// # Safety
/// Blocks of 32 threads and 128 bytes of launch-sized shared memory; the
/// emulator checks the rest.
unsafe fn rotate_static(out: GlobalMut<f32>, bug: StaticBug) {
    // SAFETY: inside an emulated kernel.
    let (words, launch_sized) = unsafe {
        (
            gpu_std::shared_array!(ROTATED: [f32; 32]),
            SharedArray::<f32>::launch_sized(),
        )
    };
    let t = thread_idx_x();
    // SAFETY: by this function's contract; the emulator checks it.
    unsafe {
        launch_sized.write(t, t as f32);
        if bug != StaticBug::Unwritten || t != 5 {
            words.write(t, t as f32);
        }
        if bug != StaticBug::NoBarrier {
            sync_threads();
        }
        // Without the barrier the emulator has run the threads before t,
        // not those after: t − 1's word is the one written but unsynced.
        let neighbour = match bug {
            StaticBug::PastTheEnd if t == 31 => 32,
            StaticBug::NoBarrier => t.saturating_sub(1),
            _ => (t + 1) % 32,
        };
        out.write(
            (block_idx_x() * 32 + t) as usize,
            words.read(neighbour) + launch_sized.read(t),
        );
    }
}

fn run_rotate_static(bug: StaticBug) -> (Result<(), Diagnostic>, Vec<f32>) {
    let mut out = vec![f32::NAN; 64];
    let view = GlobalMut::new("out", &mut out);
    let launch = blocks(2, 32, 128);
    // SAFETY: blocks of 32 threads and 128 bytes; the emulator checks the
    // rest.
    let result = gpu_emulator::run("rotate_static", &launch, &|| unsafe {
        rotate_static(view, bug)
    });
    (result, out)
}

#[test]
fn a_static_shared_array_is_one_per_block_beside_the_launch_sized_memory() {
    let (result, out) = run_rotate_static(StaticBug::None);
    result.unwrap();
    let expected: Vec<f32> = (0..32).map(|t| (t + (t + 1) % 32) as f32).collect();
    assert_eq!(out[..32], expected);
    assert_eq!(out[32..], expected);
}

#[test]
fn a_static_shared_array_read_without_a_barrier_is_a_race_named_by_the_array() {
    let diagnostic = run_rotate_static(StaticBug::NoBarrier).0.unwrap_err();
    // Thread 1 reads word 0, which thread 0 wrote: its first byte.
    assert_fault!(
        diagnostic,
        Fault::SharedRace {
            place: SharedPlace::Static("ROTATED", 0),
            ..
        }
    );
    assert_says(&diagnostic, "race at byte 0 of the shared array ROTATED");
}

#[test]
fn a_static_shared_array_read_past_its_end_is_reported_by_name() {
    let diagnostic = run_rotate_static(StaticBug::PastTheEnd).0.unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::StaticSharedOutOfBounds {
            thread: (31, 0, 0),
            kind: AccessKind::Read,
            array: "ROTATED",
            index: 32,
            len: 32
        }
    );
    assert_says(&diagnostic, "shared array ROTATED");
}

#[test]
fn a_static_shared_array_element_nobody_wrote_is_uninitialised() {
    let diagnostic = run_rotate_static(StaticBug::Unwritten).0.unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::SharedUninitialized {
            thread: (4, 0, 0),
            ..
        }
    );
}

/// Declares a static shared array of 200 KiB.
///
/// # Safety
/// Inside an emulated kernel.
unsafe fn large_static_array() {
    // SAFETY: by this function's contract.
    let large = unsafe { gpu_std::shared_array!(LARGE: [f32; 51200]) };
    // SAFETY: inside the array.
    unsafe { large.write(thread_idx_x(), 1.0) };
}

#[test]
fn static_and_launch_sized_shared_memory_together_are_limited() {
    // Hopper's opt-in limit, 227 KiB: 200 of them static, 27 launch-sized.
    // SAFETY: the emulator checks the launch.
    let fits = gpu_emulator::run(
        "large_static_array",
        &one_block(32, 27 * 1024),
        &|| unsafe { large_static_array() },
    );
    fits.unwrap();
    // SAFETY: the emulator checks the launch.
    let diagnostic = gpu_emulator::run(
        "large_static_array",
        &one_block(32, 28 * 1024),
        &|| unsafe { large_static_array() },
    )
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::StaticSharedTooLarge {
            array: "LARGE",
            bytes: 28 * 1024 + 200 * 1024,
            limit: 227 * 1024
        }
    );
}

#[test]
fn a_race_in_the_second_static_array_is_placed_in_it() {
    // FIRST takes 20 bytes; SECOND starts at the next 16-byte boundary,
    // and its third word is its bytes 8 to 11.
    let diagnostic = gpu_emulator::run("second", &one_block(2, 0), &|| {
        // SAFETY: inside an emulated kernel; the emulator checks the rest.
        unsafe {
            let first = gpu_std::shared_array!(FIRST: [f32; 5]);
            let second = gpu_std::shared_array!(SECOND: [f32; 8]);
            first.write(thread_idx_x(), 1.0);
            if thread_idx_x() == 0 {
                second.write(2, 1.0);
            } else {
                std::hint::black_box(second.read(2));
            }
        }
    })
    .unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::SharedRace {
            place: SharedPlace::Static("SECOND", 8),
            ..
        }
    );
}
