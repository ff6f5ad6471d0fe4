//! Asynchronous copies to shared memory (`pipeline`): they land at the
//! wait, zero-fill past the source and, 16 bytes wide, must be aligned; a
//! read of one or a store into it before its wait, or a read of another
//! thread's without a barrier after it, is reported.

use gpu_emulator::{self, Access, AccessKind, Diagnostic, Fault, SharedPlace};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::pipeline;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};

use crate::support::one_block;

/// What is broken in the asynchronous rotation below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CopyBug {
    None,
    /// The copier reads its own copy's destination before its wait.
    ReadBeforeWait,
    /// The copier stores into its own copy's destination before its wait:
    /// which of the two values lands is undefined.
    StoreBeforeWait,
    /// No thread waits: its copy is still in flight at the barrier.
    NoWait,
    /// Every thread waits for its own copy, but no barrier follows.
    NoBarrier,
}

/// Each thread copies `source[t]` (or zero, past `len`) into shared
/// memory asynchronously, over what the block wrote there before, and,
/// once every copy has landed, stores its right neighbour's in `out[t]`.
unsafe fn rotate_by_copies(source: Global<f32>, out: GlobalMut<f32>, len: u32, bug: CopyBug) {
    let t = thread_idx_x();
    unsafe {
        let tile = SharedArray::<f32>::launch_sized();
        tile.write(t, -1.0);
        sync_threads();
        pipeline::memcpy_async(tile, t, source, (t < len).then_some(t as usize));
        pipeline::commit();
        if bug == CopyBug::ReadBeforeWait {
            std::hint::black_box(tile.read(t));
        }
        if bug == CopyBug::StoreBeforeWait {
            tile.write(t, 0.0);
        }
        if bug != CopyBug::NoWait {
            pipeline::wait_prior::<0>();
        }
        if bug != CopyBug::NoBarrier {
            sync_threads();
        }
        out.write(t as usize, tile.read((t + 1) % 32));
    }
}

fn rotate(bug: CopyBug) -> (Result<(), Diagnostic>, Vec<f32>) {
    let source: Vec<f32> = (0..30).map(|i| i as f32 + 1.0).collect();
    let mut out = vec![f32::NAN; 32];
    let (source_view, out_view) = (
        Global::new("source", &source),
        GlobalMut::new("out", &mut out),
    );
    // SAFETY: 32 threads, 32 floats of shared memory and of `out`; the
    // emulator checks the rest.
    let result = gpu_emulator::run("rotate_by_copies", &one_block(32, 32 * 4), &|| unsafe {
        rotate_by_copies(source_view, out_view, 30, bug)
    });
    (result, out)
}

#[test]
fn asynchronous_copies_land_at_the_wait_and_zero_fill_past_the_end() {
    let (result, out) = rotate(CopyBug::None);
    result.unwrap();
    let expected: Vec<f32> = (1..32)
        .chain([0])
        .map(|i| if i < 30 { i as f32 + 1.0 } else { 0.0 })
        .collect();
    assert_eq!(out, expected);
}

/// Each of four threads copies the span of four elements from `4t + shift`
/// on, as much of it as lies inside `source`, then stores the block's
/// sixteen landed elements, zero-filled, in `out`.
unsafe fn copy_spans(source: Global<f32>, out: GlobalMut<f32>, len: u32, shift: u32) {
    let t = thread_idx_x();
    unsafe {
        let tile = SharedArray::<f32>::launch_sized();
        let start = 4 * t + shift;
        let count = len.saturating_sub(start).min(4);
        pipeline::memcpy_async_vector(tile, 4 * t, source, start as usize, count);
        pipeline::commit();
        pipeline::wait_prior::<0>();
        sync_threads();
        for i in 0..4 {
            out.write((4 * t + i) as usize, tile.read(4 * ((t + 1) % 4) + i));
        }
    }
}

#[test]
fn a_16_byte_copy_zero_fills_past_the_end_and_must_be_aligned() {
    let source: Vec<f32> = (1..=10).map(|i| i as f32).collect();
    let mut out = vec![f32::NAN; 16];
    let (source_view, out_view) = (
        Global::new("source", &source),
        GlobalMut::new("out", &mut out),
    );
    let run = |shift| {
        // SAFETY: 4 threads, 16 floats of shared memory and of `out`; the
        // emulator checks the rest.
        gpu_emulator::run("copy_spans", &one_block(4, 16 * 4), &|| unsafe {
            copy_spans(source_view, out_view, 10, shift)
        })
    };
    run(0).unwrap();
    // Thread t stored thread t + 1's span: 5..=8, then 9, 10 and zeros,
    // then zeros (nothing of thread 3's span lies inside), then 1..=4.
    let spans: Vec<f32> = [5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 0.0, 0.0]
        .into_iter()
        .chain([0.0; 4])
        .chain([1.0, 2.0, 3.0, 4.0])
        .collect();
    assert_eq!(out, spans);
    let diagnostic = run(2).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalMisaligned {
            thread: (0, 0, 0),
            buffer: "source",
            index: 2,
            bytes: 16
        }
    );
}

#[test]
fn reading_an_asynchronous_copy_before_its_wait_is_reported() {
    assert_own_copy_in_flight(CopyBug::ReadBeforeWait, AccessKind::Read);
    // Without the wait, the barrier does not land the copies either: thread
    // 0 reads thread 1's copy.
    let (result, _) = rotate(CopyBug::NoWait);
    assert!(matches!(
        result.unwrap_err().fault,
        Fault::CopyInFlight {
            copier: (1, 0, 0),
            access: Access {
                thread: (0, 0, 0),
                ..
            },
            ..
        }
    ));
}

#[test]
fn a_store_into_an_asynchronous_copys_destination_before_its_wait_is_reported() {
    assert_own_copy_in_flight(CopyBug::StoreBeforeWait, AccessKind::Write);
}

/// The rotation with `bug` is reported as thread 0 touching (`kind`) its
/// own copy's destination while the copy is in flight, in those words.
fn assert_own_copy_in_flight(bug: CopyBug, kind: AccessKind) {
    let verb = if kind == AccessKind::Read {
        "read"
    } else {
        "wrote"
    };
    let message = format!(
        "thread (0, 0, 0) {verb} shared byte 0, the destination of a memcpy_async by thread \
         (0, 0, 0) that is still in flight"
    );
    let diagnostic = rotate(bug).0.unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::CopyInFlight {
            offset: 0,
            copier: (0, 0, 0),
            access: Access {
                thread: (0, 0, 0),
                kind
            }
        }
    );
    assert!(
        diagnostic.fault.to_string().starts_with(&message),
        "{diagnostic}"
    );
}

#[test]
fn reading_another_threads_copy_without_a_barrier_after_its_wait_is_a_race() {
    // Thread 0 has read thread 1's element when thread 1's copy to it
    // starts: on the GPU it may read either value.
    let (result, _) = rotate(CopyBug::NoBarrier);
    assert_eq!(
        result.unwrap_err().fault,
        Fault::SharedRace {
            offset: 4,
            place: SharedPlace::LaunchSized(4),
            earlier: Access {
                thread: (0, 0, 0),
                kind: AccessKind::Read
            },
            later: Access {
                thread: (1, 0, 0),
                kind: AccessKind::Write
            }
        }
    );
}
