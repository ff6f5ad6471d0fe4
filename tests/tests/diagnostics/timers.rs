//! `clock64()` and `%globaltimer` in the emulator: a per-thread count that
//! only grows, and the host's monotonic nanoseconds.

use gpu_std::global::GlobalMut;
use gpu_std::thread::{clock64, globaltimer, sync_threads, thread_idx_x};

use crate::support::one_block;

#[test]
fn clock64_grows_within_a_thread_and_globaltimer_follows_the_host_clock() {
    let mut out = vec![0u64; 4 * 32];
    let view = GlobalMut::new("out", &mut out);
    let start = std::time::Instant::now();
    // SAFETY: 32 threads, 4 elements each.
    gpu_emulator::run("timers", &one_block(32, 0), &|| unsafe {
        let t = thread_idx_x() as usize;
        let (cycles, nanoseconds) = (clock64(), globaltimer());
        sync_threads();
        std::thread::sleep(std::time::Duration::from_millis(1));
        view.write(4 * t, cycles);
        view.write(4 * t + 1, clock64());
        view.write(4 * t + 2, nanoseconds);
        view.write(4 * t + 3, globaltimer());
    })
    .unwrap();
    let elapsed = start.elapsed().as_nanos() as u64;
    for thread in out.chunks(4) {
        let [before, after, early, late] = thread.try_into().unwrap();
        assert!(after > before, "clock64 went from {before} to {after}");
        assert!(
            late >= early + 1_000_000,
            "globaltimer went from {early} to {late}"
        );
        assert!(
            late - early <= elapsed,
            "{late} - {early} is more than the run's {elapsed} ns"
        );
    }
}
