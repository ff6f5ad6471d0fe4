//! A kernel that panics (a division by zero, an overflow, which release
//! builds check too, an index past u32) is reported with its thread and
//! the panic's message.

use gpu_emulator::{self, Diagnostic, Fault};
use gpu_std::global::{Global, row_major};
use gpu_std::thread::thread_idx_x;

use crate::support::{blocks, one_block};

/// Asserts that `diagnostic` reports a panic of thread (0, 0, 0) whose
/// message says `words`.
#[track_caller]
fn assert_thread_0_panicked(diagnostic: &Diagnostic, words: &str) {
    let Fault::Panic { thread, message } = &diagnostic.fault else {
        panic!("expected a panic, got {diagnostic}")
    };
    assert_eq!(*thread, (0, 0, 0));
    assert!(message.contains(words), "{message}");
}

#[test]
fn a_panicking_kernel_is_reported_with_its_thread_and_message() {
    fn divide(divisor: u32) {
        std::hint::black_box(100 / (thread_idx_x() * divisor));
    }
    let launch = blocks(2, 4, 0);
    let diagnostic = gpu_emulator::run("divide", &launch, &|| divide(1)).unwrap_err();
    assert_eq!(diagnostic.block, (0, 0, 0));
    assert_thread_0_panicked(&diagnostic, "divide by zero");
}

/// The README's test command builds in release mode; overflow checks stay
/// on for the kernels' host build, so a wrapped index is a diagnostic.
#[test]
fn an_overflow_in_a_kernel_is_reported_in_a_release_build() {
    fn left_neighbour() -> u32 {
        std::hint::black_box(thread_idx_x()) - 1
    }
    let launch = blocks(1, 4, 0);
    let diagnostic = gpu_emulator::run("left_neighbour", &launch, &|| {
        std::hint::black_box(left_neighbour());
    })
    .unwrap_err();
    assert_thread_0_panicked(&diagnostic, "subtract with overflow");
}

#[test]
fn an_index_beyond_u32_breaks_the_promise_the_gpu_code_relies_on() {
    // On the GPU, row_major may assume its arithmetic does not wrap; the
    // emulator checks that it does not.
    unsafe fn far_row(values: Global<u32>, rows: u32) {
        let value = unsafe { values.read(row_major(rows, thread_idx_x(), 1 << 16)) };
        std::hint::black_box(value);
    }
    let values = vec![0u32; 4];
    let view = Global::new("values", &values);
    // SAFETY: the emulator checks the index arithmetic and the access.
    let diagnostic = gpu_emulator::run("far_row", &one_block(2, 0), &|| unsafe {
        far_row(view, 1 << 16)
    })
    .unwrap_err();
    assert_thread_0_panicked(&diagnostic, "overflows u32");
}
