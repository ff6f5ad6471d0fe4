//! The streaming hints (`__ldcs`, `__stcs`): the hint changes where a line
//! may stay in the caches, never what the access may touch, so an index
//! past the buffer and a race are reported as for plain accesses.

use gpu_emulator::{self, AccessKind, Fault};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::thread_idx_x;

use crate::support::one_block;

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
    let diagnostic = result.unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalOutOfBounds {
            thread: (31, 0, 0),
            kind: AccessKind::Read,
            buffer: "stream",
            index: 31,
            len: 31,
        }
    );
}

#[test]
fn a_streaming_store_past_the_buffer_is_reported() {
    let mut output = vec![0.0f32; 31];
    let written = GlobalMut::new("output", &mut output);
    // SAFETY: none for thread 31, whose store is one past the output.
    let result = gpu_emulator::run("stcs_past", &one_block(32, 0), &|| unsafe {
        written.stcs(thread_idx_x() as usize, 1.0);
    });
    let diagnostic = result.unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalOutOfBounds {
            thread: (31, 0, 0),
            kind: AccessKind::Write,
            buffer: "output",
            index: 31,
            len: 31,
        }
    );
}

#[test]
fn two_threads_storing_one_element_with_the_hint_race() {
    let mut output = vec![0.0f32; 32];
    let written = GlobalMut::new("output", &mut output);
    // SAFETY: element 0 of 32, stored by every thread: the race the
    // emulator reports.
    let result = gpu_emulator::run("stcs_race", &one_block(32, 0), &|| unsafe {
        written.stcs(0, thread_idx_x() as f32);
    });
    let diagnostic = result.unwrap_err();
    assert!(
        matches!(
            diagnostic.fault,
            Fault::GlobalRace {
                buffer: "output",
                index: 0,
                ..
            }
        ),
        "{diagnostic}"
    );
}
