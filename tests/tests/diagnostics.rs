//! Deliberately broken kernels, kept here and not in the library: the
//! emulator must stop each one with the right diagnostic, naming the kernel,
//! the block and the threads involved. And correct kernels that use CUDA's
//! rule that a returned thread no longer counts at a barrier must pass.

use gpu::emulator::{self, AccessKind, Diagnostic, Fault, Launch};
use gpu::runtime::Real;
use gpu::runtime::shared::SharedArray;
use gpu::runtime::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};

const TILE: u32 = 16;

/// The tiled matmul (square n×n, one tile width), with either barrier
/// optionally left out.
unsafe fn tiled_matmul(
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    n: u32,
    first_barrier: bool,
    second_barrier: bool,
) {
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (row, col) = (block_idx_y() * TILE + ty, block_idx_x() * TILE + tx);
    unsafe {
        let a_tile = SharedArray::<f32>::launch_sized();
        let b_tile = a_tile.after(TILE * TILE);
        let mut sum = 0.0f32;
        for phase in 0..n.div_ceil(TILE) {
            let (a_col, b_row) = (phase * TILE + tx, phase * TILE + ty);
            a_tile.write(
                ty * TILE + tx,
                if row < n && a_col < n {
                    *a.add((row * n + a_col) as usize)
                } else {
                    0.0
                },
            );
            b_tile.write(
                ty * TILE + tx,
                if b_row < n && col < n {
                    *b.add((b_row * n + col) as usize)
                } else {
                    0.0
                },
            );
            if first_barrier {
                sync_threads();
            }
            for i in 0..TILE {
                sum = Real::mul_add(a_tile.read(ty * TILE + i), b_tile.read(i * TILE + tx), sum);
            }
            if second_barrier {
                sync_threads();
            }
        }
        if row < n && col < n {
            *c.add((row * n + col) as usize) = sum;
        }
    }
}

/// Runs the tiled matmul on n×n matrices of ones, with the given barriers.
fn run_tiled_matmul(
    n: u32,
    first_barrier: bool,
    second_barrier: bool,
) -> Result<Vec<f32>, Diagnostic> {
    let (a, b) = (
        vec![1.0f32; (n * n) as usize],
        vec![1.0f32; (n * n) as usize],
    );
    let mut c = vec![f32::NAN; (n * n) as usize];
    let (a_ptr, b_ptr, c_ptr) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
    let blocks = n.div_ceil(TILE);
    let launch = Launch {
        kernel: "tiled_matmul",
        grid: (blocks, blocks, 1),
        block: (TILE, TILE, 1),
        shared_bytes: 2 * TILE * TILE * 4,
    };
    // SAFETY: the buffers are n×n and the launch covers them.
    emulator::run(&launch, &|| unsafe {
        tiled_matmul(a_ptr, b_ptr, c_ptr, n, first_barrier, second_barrier)
    })?;
    Ok(c)
}

fn one_block(kernel: &'static str, threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        kernel,
        grid: (1, 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
    }
}

#[test]
fn the_tiled_matmul_with_both_barriers_is_correct() {
    let c = run_tiled_matmul(40, true, true).unwrap();
    assert!(c.iter().all(|&value| value == 40.0));
}

#[test]
fn a_missing_second_barrier_is_a_race() {
    let diagnostic = run_tiled_matmul(40, true, false).unwrap_err();
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

#[test]
fn a_missing_first_barrier_reads_what_no_thread_has_written_yet() {
    let diagnostic = run_tiled_matmul(40, false, true).unwrap_err();
    assert!(
        matches!(diagnostic.fault, Fault::SharedUninitialized { .. }),
        "{diagnostic}"
    );
}

#[test]
fn a_write_after_a_read_by_another_thread_is_a_race() {
    // Thread t reads element t + 1, then writes element t: thread t + 1's
    // write comes after thread t's read, with no barrier between.
    unsafe fn shift_left(values: *mut u32) {
        let t = thread_idx_x();
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, *values.add(t as usize));
            sync_threads();
            let right = tile.read((t + 1) % 32);
            tile.write(t, right);
        }
    }
    let mut values: Vec<u32> = (0..32).collect();
    let values_ptr = values.as_mut_ptr();
    // SAFETY: 32 threads, 32 values.
    let diagnostic = emulator::run(&one_block("shift_left", 32, 128), &|| unsafe {
        shift_left(values_ptr)
    })
    .unwrap_err();
    let Fault::SharedRace {
        earlier,
        later,
        offset,
    } = diagnostic.fault
    else {
        panic!("expected a race, got {diagnostic}")
    };
    assert_eq!(
        (earlier.kind, later.kind),
        (AccessKind::Read, AccessKind::Write)
    );
    assert_eq!(
        (earlier.thread, later.thread, offset),
        ((0, 0, 0), (1, 0, 0), 4)
    );
}

#[test]
fn two_threads_writing_one_element_is_a_race() {
    unsafe fn all_write_zero() {
        unsafe { SharedArray::<f64>::launch_sized().write(0, thread_idx_x() as f64) };
    }
    // SAFETY: the kernel touches only shared memory.
    let diagnostic = emulator::run(&one_block("all_write_zero", 4, 8), &|| unsafe {
        all_write_zero()
    })
    .unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("expected a race, got {diagnostic}")
    };
    assert_eq!(
        (earlier.kind, later.kind),
        (AccessKind::Write, AccessKind::Write)
    );
}

#[test]
fn a_barrier_under_divergent_control_flow_is_reported() {
    fn divergent() {
        if thread_idx_x() < 8 {
            sync_threads();
        }
        sync_threads();
    }
    let diagnostic = emulator::run(&one_block("divergent", 32, 0), &divergent).unwrap_err();
    let Fault::DivergentBarrier { first, other } = diagnostic.fault else {
        panic!("expected a divergent barrier, got {diagnostic}");
    };
    assert_eq!((first.thread, other.thread), ((0, 0, 0), (8, 0, 0)));
    assert_ne!(first.barrier.line(), other.barrier.line());
    assert!(first.barrier.file().ends_with("diagnostics.rs"));
    assert!(
        diagnostic
            .to_string()
            .starts_with("divergent, block (0, 0, 0): divergent barrier: thread (0, 0, 0)")
    );
}

#[test]
fn a_returned_thread_no_longer_counts_at_a_barrier() {
    // Threads past the data return early; the rest still meet at the
    // barrier, as on the GPU.
    unsafe fn rotate(values: *mut u32, len: u32) {
        let t = thread_idx_x();
        if t >= len {
            return;
        }
        unsafe {
            let tile = SharedArray::<u32>::launch_sized();
            tile.write(t, *values.add(t as usize));
            sync_threads();
            *values.add(t as usize) = tile.read((t + 1) % len);
        }
    }
    let mut values: Vec<u32> = (0..20).collect();
    let values_ptr = values.as_mut_ptr();
    // SAFETY: the 20 live threads touch the 20 values.
    emulator::run(&one_block("rotate", 32, 128), &|| unsafe {
        rotate(values_ptr, 20)
    })
    .unwrap();
    assert_eq!(values, (1..20).chain([0]).collect::<Vec<u32>>());
}

#[test]
fn an_access_past_the_launch_sized_shared_memory_is_reported() {
    // One element too far: the second tile starts at TILE×TILE, but only one
    // tile's worth of shared memory was launched.
    unsafe fn second_tile() {
        unsafe {
            let first = SharedArray::<f32>::launch_sized();
            first.after(TILE * TILE).write(thread_idx_x(), 1.0);
        }
    }
    let launch = one_block("second_tile", 4, TILE * TILE * 4);
    // SAFETY: only shared memory is touched, and the emulator checks it.
    let diagnostic = emulator::run(&launch, &|| unsafe { second_tile() }).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::SharedOutOfBounds {
            thread: (0, 0, 0),
            kind: AccessKind::Write,
            offset: 1024,
            size: 4,
            limit: 1024
        }
    );
}

#[test]
fn a_panicking_kernel_is_reported_with_its_thread_and_message() {
    fn divide(divisor: u32) {
        std::hint::black_box(100 / (thread_idx_x() * divisor));
    }
    let launch = Launch {
        kernel: "divide",
        grid: (2, 1, 1),
        block: (4, 1, 1),
        shared_bytes: 0,
    };
    let diagnostic = emulator::run(&launch, &|| divide(1)).unwrap_err();
    assert_eq!(diagnostic.block, (0, 0, 0));
    let Fault::Panic { thread, message } = diagnostic.fault else {
        panic!("expected a panic, got {diagnostic}")
    };
    assert_eq!(thread, (0, 0, 0));
    assert!(message.contains("divide by zero"), "{message}");
}

#[test]
fn later_blocks_see_no_shared_data_of_earlier_ones() {
    // Block 1 reads what only block 0 wrote: on the GPU, stale garbage.
    unsafe fn read_without_writing() {
        let tile = unsafe { SharedArray::<u32>::launch_sized() };
        if block_idx_x() == 0 {
            unsafe { tile.write(thread_idx_x(), 7) };
        } else {
            std::hint::black_box(unsafe { tile.read(thread_idx_x()) });
        }
    }
    let launch = Launch {
        kernel: "read_without_writing",
        grid: (2, 1, 1),
        block: (4, 1, 1),
        shared_bytes: 16,
    };
    // SAFETY: only shared memory is touched, and the emulator checks it.
    let diagnostic = emulator::run(&launch, &|| unsafe { read_without_writing() }).unwrap_err();
    assert_eq!(diagnostic.block, (1, 0, 0));
    assert_eq!(
        diagnostic.fault,
        Fault::SharedUninitialized {
            thread: (0, 0, 0),
            offset: 0
        }
    );
}
