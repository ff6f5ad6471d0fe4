//! The streaming hints (`__ldcs`, `__stcs`): the hint changes where a line
//! may stay in the caches, never what the access may touch, so an index
//! past the buffer and a race are reported as for plain accesses.

use gpu_emulator::{self, AccessKind, Diagnostic, Fault};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::thread_idx_x;

use crate::support::{assert_fault, one_block};

/// Asserts that `result` reports thread 31's access of `kind` one past
/// the 31 elements of `buffer`.
#[track_caller]
fn assert_thread_31_one_past(
    result: Result<(), Diagnostic>,
    kind: AccessKind,
    buffer: &'static str,
) {
    assert_eq!(
        result.unwrap_err().fault,
        Fault::GlobalOutOfBounds {
            thread: (31, 0, 0),
            kind,
            buffer,
            index: 31,
            len: 31,
        }
    );
}

#[test]
fn a_streaming_load_past_the_buffer_is_reported() {
    let input = vec![1.0f32; 31];
    let mut output = vec![0.0f32; 32];
    let (read, written) = (
        Global::new("stream", &input),
        GlobalMut::new("output", &mut output),
    );
    // SAFETY: none for thread 31, whose load is one past the stream: the
    // emulator stops it.
    let result = gpu_emulator::run("ldcs_past", &one_block(32, 0), &|| unsafe {
        let t = thread_idx_x() as usize;
        written.stcs(t, read.ldcs(t));
    });
    assert_thread_31_one_past(result, AccessKind::Read, "stream");
}

/// Runs kernel `name` on a block of 32 threads, thread t storing with
/// the streaming hint the value `store(t)` gives to the element it names,
/// in an output of `len` elements.
fn streaming_stores(
    name: &'static str,
    len: usize,
    store: fn(u32) -> (usize, f32),
) -> Result<(), Diagnostic> {
    let mut output = vec![0.0f32; len];
    let written = GlobalMut::new("output", &mut output);
    // SAFETY: none where `store` names an element past the output, or one
    // that another thread stores too: the emulator stops the thread.
    gpu_emulator::run(name, &one_block(32, 0), &|| unsafe {
        let (index, value) = store(thread_idx_x());
        written.stcs(index, value);
    })
}

#[test]
fn a_streaming_store_past_the_buffer_is_reported() {
    // Thread 31's store is one past the output.
    let result = streaming_stores("stcs_past", 31, |t| (t as usize, 1.0));
    assert_thread_31_one_past(result, AccessKind::Write, "output");
}

#[test]
fn two_threads_storing_one_element_with_the_hint_race() {
    // Element 0 of 32, stored by every thread: the race the emulator
    // reports.
    let result = streaming_stores("stcs_race", 32, |t| (0, t as f32));
    let diagnostic = result.unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::GlobalRace {
            buffer: "output",
            index: 0,
            ..
        }
    );
}
