//! Barriers: one reached under divergent control flow is reported with
//! both places, and a thread that has returned no longer counts at one, as
//! on the GPU.

use gpu_emulator::{self, Fault};
use gpu_std::global::GlobalMut;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use rand::Rng;

use crate::support::{assert_says, one_block, rng};

#[test]
fn a_barrier_under_divergent_control_flow_is_reported() {
    // Two barriers every thread passes, then one that only some reach.
    fn divergent() {
        sync_threads();
        sync_threads();
        if thread_idx_x() < 8 {
            sync_threads();
        }
        sync_threads();
    }
    let diagnostic = gpu_emulator::run("divergent", &one_block(32, 0), &divergent).unwrap_err();
    let Fault::DivergentBarrier { first, other } = diagnostic.fault else {
        panic!("expected a divergent barrier, got {diagnostic}");
    };
    assert_eq!((first.thread, other.thread), ((0, 0, 0), (8, 0, 0)));
    assert_eq!((first.passed, other.passed), (2, 2));
    assert_ne!(first.barrier.line(), other.barrier.line());
    assert!(first.barrier.file().ends_with("barriers.rs"));
    assert!(
        diagnostic
            .to_string()
            .starts_with("divergent, block (0, 0, 0): divergent barrier: thread (0, 0, 0)")
    );
    assert_says(&diagnostic, "(its barrier #3)");
}

#[test]
fn a_returned_thread_no_longer_counts_at_a_barrier() {
    // Threads past the data return early; the rest still meet at the
    // barrier, as on the GPU.
    unsafe fn rotate(values: GlobalMut<u32>, len: u32) {
        let t = thread_idx_x();
        if t >= len {
            return;
        }
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, values.read(t as usize));
            sync_threads();
            values.write(t as usize, tile.read((t + 1) % len));
        }
    }
    let mut rng = rng();
    let original: Vec<u32> = (0..20).map(|_| rng.random()).collect();
    let mut values = original.clone();
    let view = GlobalMut::new("values", &mut values);
    // SAFETY: the 20 live threads touch the 20 values.
    gpu_emulator::run("rotate", &one_block(32, 128), &|| unsafe {
        rotate(view, 20)
    })
    .unwrap();
    let rotated: Vec<u32> = (1..20).chain([0]).map(|i| original[i]).collect();
    assert_eq!(values, rotated);
}
