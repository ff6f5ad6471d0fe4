//! What the emulator bounds: a kernel that never finishes is stopped after
//! its steps, a stack overflow is reported and the process goes on, and a
//! launch beyond CUDA's limits or the kernel's launch bounds is refused
//! before any thread runs.

use gpu_emulator::{self, BlockOrder, Diagnostic, Fault, Launch, LaunchBounds, Limits};
use gpu_std::global::GlobalMut;
use gpu_std::thread::{sync_threads, thread_idx_x};
use rand::Rng;

use crate::support::{assert_fault, assert_says, one_block, rng};

/// Runs `body` as kernel `name` on one block of `threads` threads, each
/// allowed `steps` steps; the diagnostic that stops it.
fn stopped_after(steps: u64, name: &'static str, threads: u32, body: &dyn Fn()) -> Diagnostic {
    let limits = Limits {
        steps_per_thread: steps,
        ..Limits::default()
    };
    let block = one_block(threads, 0);
    gpu_emulator::run_within(name, &block, limits, BlockOrder::Forward, body).unwrap_err()
}

#[test]
fn a_spin_wait_is_stopped_as_a_kernel_that_never_finishes() {
    // Thread 0 waits for a flag that only thread 1 sets; the emulator runs
    // thread 0 first, so the wait never ends there.
    unsafe fn wait_for_flag(flag: GlobalMut<u32>) {
        unsafe {
            if thread_idx_x() == 1 {
                flag.write(0, 1);
            } else {
                // An opaque index, so that the load stays in the loop, as a
                // volatile one would on the GPU.
                while flag.read(std::hint::black_box(0)) == 0 {}
            }
        }
    }
    let mut flag = vec![0u32];
    let view = GlobalMut::new("flag", &mut flag);
    // SAFETY: one flag, read and written through a checked view.
    let diagnostic = stopped_after(10_000, "wait_for_flag", 2, &|| unsafe {
        wait_for_flag(view)
    });
    assert_eq!(
        diagnostic.fault,
        Fault::DidNotFinish {
            thread: (0, 0, 0),
            steps: 10_001
        }
    );
    assert_says(&diagnostic, "did not finish");
}

#[test]
fn a_barrier_in_an_endless_loop_is_stopped_too() {
    fn forever() {
        loop {
            sync_threads();
        }
    }
    let diagnostic = stopped_after(1000, "forever", 4, &forever);
    assert_fault!(
        diagnostic,
        Fault::DidNotFinish {
            thread: (0, 0, 0),
            ..
        }
    );
}

#[test]
fn a_stack_overflow_is_reported_and_the_process_goes_on() {
    fn large_local_array() {
        let array = [thread_idx_x(); gpu_emulator::STACK_BYTES / 4 + 1];
        std::hint::black_box(&array);
    }
    for _ in 0..2 {
        let diagnostic =
            gpu_emulator::run("large_local_array", &one_block(4, 0), &large_local_array)
                .unwrap_err();
        assert_eq!(
            diagnostic.fault,
            Fault::StackOverflow {
                thread: (0, 0, 0),
                bytes: gpu_emulator::STACK_BYTES
            }
        );
    }
    // The emulator still runs kernels afterwards.
    let mut rng = rng();
    let original: Vec<u32> = (0..20).map(|_| rng.random::<u32>() >> 1).collect();
    let mut values = original.clone();
    let view = GlobalMut::new("values", &mut values);
    // SAFETY: one thread per value.
    gpu_emulator::run("double", &one_block(20, 0), &|| unsafe {
        let t = thread_idx_x() as usize;
        view.write(t, 2 * view.read(t));
    })
    .unwrap();
    assert_eq!(values, original.iter().map(|v| 2 * v).collect::<Vec<u32>>());
}

#[test]
fn a_launch_beyond_cudas_limits_or_the_launch_bounds_is_refused_before_any_thread_runs() {
    let ran = std::cell::Cell::new(false);
    let body = || ran.set(true);
    // 65536 × 65536 threads: the count wraps to 0 in 32 bits.
    let wraps = Launch {
        block: (65536, 65536, 1),
        ..one_block(1, 0)
    };
    let diagnostic = gpu_emulator::run("wraps", &wraps, &body).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::InvalidLaunch {
            what: "the block's x dimension",
            value: 65536,
            limit: 1024
        }
    );
    let too_many = Launch {
        block: (64, 32, 1),
        ..one_block(1, 0)
    };
    let diagnostic = gpu_emulator::run("too_many", &too_many, &body).unwrap_err();
    assert_eq!(
        diagnostic.to_string(),
        "too_many: launch refused: the threads per block is 2048, outside CUDA's limit of 1024"
    );
    let huge_shared = one_block(32, u32::MAX);
    let diagnostic = gpu_emulator::run("huge_shared", &huge_shared, &body).unwrap_err();
    assert_fault!(diagnostic, Fault::InvalidLaunch { value, .. } if value == u64::from(u32::MAX));
    let empty = Launch {
        grid: (0, 1, 1),
        block: (32, 1, 1),
        shared_bytes: 0,
        cluster: (1, 1, 1),
    };
    assert!(gpu_emulator::run("empty", &empty, &body).is_err());
    let bounded = Limits::within(LaunchBounds::new(128, Some(4)));
    let diagnostic = gpu_emulator::run_within(
        "bounded",
        &one_block(256, 0),
        bounded,
        BlockOrder::Forward,
        &body,
    )
    .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::BeyondLaunchBounds {
            threads: 256,
            max_threads: 128
        }
    );
    assert_eq!(
        diagnostic.to_string(),
        "bounded: launch refused: 256 threads a block, more than the 128 of the kernel's launch bounds"
    );
    assert!(!ran.get());
    gpu_emulator::run_within(
        "bounded",
        &one_block(128, 0),
        bounded,
        BlockOrder::Forward,
        &body,
    )
    .unwrap();
    assert!(ran.get());
}

#[test]
fn every_thread_of_a_three_dimensional_launch_knows_its_place() {
    use gpu_std::thread::{
        block_dim_x, block_dim_y, block_dim_z, block_idx_x, block_idx_y, block_idx_z, grid_dim_x,
        grid_dim_y, grid_dim_z, thread_idx_y, thread_idx_z,
    };
    // Every dimension different, so that no axis can stand in for another.
    let launch = Launch {
        grid: (2, 3, 4),
        block: (5, 3, 2),
        shared_bytes: 0,
        cluster: (1, 1, 1),
    };
    let mut out = vec![u32::MAX; 2 * 3 * 4 * 5 * 3 * 2];
    let view = GlobalMut::new("out", &mut out);
    gpu_emulator::run("places", &launch, &|| {
        let dims = (block_dim_x(), block_dim_y(), block_dim_z());
        let grid = (grid_dim_x(), grid_dim_y(), grid_dim_z());
        let block = block_idx_x() + grid.0 * (block_idx_y() + grid.1 * block_idx_z());
        let thread = thread_idx_x() + dims.0 * (thread_idx_y() + dims.1 * thread_idx_z());
        let index = block * dims.0 * dims.1 * dims.2 + thread;
        // SAFETY: one element a thread, inside `out`.
        unsafe { view.write(index as usize, index) };
    })
    .unwrap();
    assert!(out.iter().zip(0..).all(|(&value, index)| value == index));
}
