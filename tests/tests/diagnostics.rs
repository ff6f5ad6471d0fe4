//! Deliberately broken kernels, kept here and not in the library: the
//! emulator must stop each one with the right diagnostic, naming the kernel,
//! the block and the threads involved, and for global memory the buffer and
//! the index, without the process crashing. And correct kernels that use CUDA's
//! rule that a returned thread no longer counts at a barrier must pass.

use gpu_emulator::{
    self, Access, AccessKind, Diagnostic, Dim3, Fault, Launch, LaunchBounds, Limits,
};
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};
use gpu_std::{Real, pipeline};
use locality_tests::seed;
use rand::{Rng, SeedableRng, rngs::SmallRng};

const TILE: u32 = 16;

/// What is broken in the tiled matmul below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    NoFirstBarrier,
    NoSecondBarrier,
    /// A's load guard is `a_col <= k`: one element past each row of A.
    AGuardOnePast,
    /// The store's guard is `row <= m`: one row past C.
    StoreGuardOnePast,
}

/// The tiled matmul (one tile width, A m×k, B k×n), with `bug`.
unsafe fn tiled_matmul(
    a: Global<f32>,
    b: Global<f32>,
    c: GlobalMut<f32>,
    [m, n, k]: [u32; 3],
    bug: Bug,
) {
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (row, col) = (block_idx_y() * TILE + ty, block_idx_x() * TILE + tx);
    unsafe {
        let a_tile = SharedArray::<f32>::launch_sized();
        let b_tile = a_tile.after(TILE * TILE);
        let mut sum = 0.0f32;
        for phase in 0..k.div_ceil(TILE) {
            let (a_col, b_row) = (phase * TILE + tx, phase * TILE + ty);
            let a_in = if bug == Bug::AGuardOnePast {
                a_col <= k
            } else {
                a_col < k
            };
            a_tile.write(
                ty * TILE + tx,
                if row < m && a_in {
                    a.read(row_major(row, a_col, k))
                } else {
                    0.0
                },
            );
            b_tile.write(
                ty * TILE + tx,
                if b_row < k && col < n {
                    b.read(row_major(b_row, col, n))
                } else {
                    0.0
                },
            );
            if bug != Bug::NoFirstBarrier {
                sync_threads();
            }
            for i in 0..TILE {
                sum = Real::mul_add(a_tile.read(ty * TILE + i), b_tile.read(i * TILE + tx), sum);
            }
            if bug != Bug::NoSecondBarrier {
                sync_threads();
            }
        }
        let row_in = if bug == Bug::StoreGuardOnePast {
            row <= m
        } else {
            row < m
        };
        if row_in && col < n {
            c.write(row_major(row, col, n), sum);
        }
    }
}

/// Runs the tiled matmul with `bug` on random m×k and k×n matrices; the
/// product, or the diagnostic.
fn run_tiled_matmul([m, n, k]: [u32; 3], bug: Bug) -> Result<(Vec<f32>, Vec<f64>), Diagnostic> {
    let mut rng = rng();
    let mut random =
        |len: u32| -> Vec<f32> { (0..len).map(|_| rng.random::<f32>() * 2.0 - 1.0).collect() };
    let (a, b) = (random(m * k), random(k * n));
    let mut c = vec![f32::NAN; (m * n) as usize];
    let expected: Vec<f64> = (0..m * n)
        .map(|index| {
            let (row, col) = (index / n, index % n);
            (0..k)
                .map(|i| {
                    f64::from(a[(row * k + i) as usize]) * f64::from(b[(i * n + col) as usize])
                })
                .sum()
        })
        .collect();
    let (a_view, b_view, c_view) = (
        Global::new("a", &a),
        Global::new("b", &b),
        GlobalMut::new("c", &mut c),
    );
    let launch = Launch::covering((n, m, 1), (TILE, TILE, 1), 2 * TILE * TILE * 4);
    // SAFETY: the views check every access, and the launch covers C.
    gpu_emulator::run("tiled_matmul", &launch, &|| unsafe {
        tiled_matmul(a_view, b_view, c_view, [m, n, k], bug)
    })?;
    Ok((c, expected))
}

/// A race at shared byte `offset` between an earlier and a later access,
/// each a thread and what it did.
fn race(offset: u32, earlier: (Dim3, AccessKind), later: (Dim3, AccessKind)) -> Fault {
    let access = |(thread, kind)| Access { thread, kind };
    Fault::SharedRace {
        offset,
        earlier: access(earlier),
        later: access(later),
    }
}

/// A generator for a test's inputs, from the seed that replays it.
fn rng() -> SmallRng {
    SmallRng::seed_from_u64(seed())
}

fn one_block(threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        grid: (1, 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
    }
}

#[test]
fn the_tiled_matmul_without_a_bug_is_correct() {
    let (c, expected) = run_tiled_matmul([40, 37, 45], Bug::None).unwrap();
    for (got, want) in c.iter().zip(expected) {
        assert!(
            (f64::from(*got) - want).abs() < 1e-4,
            "{got} against {want}"
        );
    }
}

#[test]
fn a_load_guard_one_past_the_row_reads_past_a() {
    let (m, n, k) = (40, 37, 45);
    let diagnostic = run_tiled_matmul([m, n, k], Bug::AGuardOnePast).unwrap_err();
    // Only the last row of A has no next row to read into: its thread reads
    // one past the end of A, in the block that holds row m − 1.
    assert_eq!(diagnostic.block, (0, (m - 1) / TILE, 0));
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalOutOfBounds {
            thread: (k % TILE, (m - 1) % TILE, 0),
            kind: AccessKind::Read,
            buffer: "a",
            index: (m * k) as usize,
            len: (m * k) as usize,
        }
    );
    assert!(
        diagnostic
            .to_string()
            .ends_with("read a[1800], outside the 1800 elements of global buffer a"),
        "{diagnostic}"
    );
}

#[test]
fn a_store_guard_one_past_the_last_row_writes_past_c() {
    // m = 30: the grid's second block row holds rows 16 to 31, so row m
    // exists in it, one past the end of C.
    let (m, n, k) = (30, 20, 16);
    let diagnostic = run_tiled_matmul([m, n, k], Bug::StoreGuardOnePast).unwrap_err();
    assert_eq!(diagnostic.block, (0, 1, 0));
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalOutOfBounds {
            thread: (0, m % TILE, 0),
            kind: AccessKind::Write,
            buffer: "c",
            index: (m * n) as usize,
            len: (m * n) as usize,
        }
    );
}

#[test]
fn a_blur_window_clipped_one_past_the_edge_reads_past_the_image() {
    /// The naive blur's window, with its last column clipped to `width`
    /// instead of `width − 1`.
    unsafe fn blur_clipped_one_past(
        input: Global<u8>,
        output: GlobalMut<u8>,
        width: u32,
        height: u32,
    ) {
        let (col, row) = (
            block_idx_x() * 16 + thread_idx_x(),
            block_idx_y() * 16 + thread_idx_y(),
        );
        if col < width && row < height {
            let (first_col, last_col) = (col.saturating_sub(1), (col + 1).min(width));
            let (first_row, last_row) = (row.saturating_sub(1), (row + 1).min(height - 1));
            let mut sum = 0u32;
            for y in first_row..=last_row {
                for x in first_col..=last_col {
                    sum += u32::from(unsafe { input.read(row_major(y, x, width)) });
                }
            }
            unsafe { output.write(row_major(row, col, width), (sum / 9) as u8) };
        }
    }
    let (width, height) = (20u32, 18u32);
    let mut rng = rng();
    let input: Vec<u8> = (0..width * height).map(|_| rng.random()).collect();
    let mut output = vec![0u8; input.len()];
    let (input_view, output_view) = (
        Global::new("input", &input),
        GlobalMut::new("output", &mut output),
    );
    let launch = Launch::covering((width, height, 1), (16, 16, 1), 0);
    // SAFETY: the views check every access.
    let diagnostic = gpu_emulator::run("blur_clipped_one_past", &launch, &|| unsafe {
        blur_clipped_one_past(input_view, output_view, width, height)
    })
    .unwrap_err();
    // The windows of the last column reach one pixel past each row, which
    // is the next row's first; past the last row's end that is outside the
    // image. The first thread to get there is the one of row 16, whose
    // window includes the last row.
    assert_eq!(diagnostic.block, (1, 1, 0));
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalOutOfBounds {
            thread: ((width - 1) % 16, 0, 0),
            kind: AccessKind::Read,
            buffer: "input",
            index: (width * height) as usize,
            len: (width * height) as usize,
        }
    );
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

#[test]
fn a_barrier_under_divergent_control_flow_is_reported() {
    fn divergent() {
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
    let launch = one_block(4, TILE * TILE * 4);
    // SAFETY: only shared memory is touched, and the emulator checks it.
    let diagnostic =
        gpu_emulator::run("second_tile", &launch, &|| unsafe { second_tile() }).unwrap_err();
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
fn a_vector_read_of_shared_memory_off_its_16_byte_boundary_is_reported() {
    // Each thread reads the four floats from 4·thread on, plus `shift`:
    // aligned for shift 0, one float past the boundary for shift 1.
    unsafe fn quads(shift: u32) {
        unsafe {
            let tile = SharedArray::<f32>::launch_sized();
            for i in 0..4 {
                tile.write(4 * thread_idx_x() + i, 1.0);
            }
            sync_threads();
            let quad = tile.read_vector(4 * (thread_idx_x() / 2) + shift);
            std::hint::black_box(quad);
        }
    }
    let launch = one_block(4, 4 * 4 * 4);
    // SAFETY: only shared memory is touched, and the emulator checks it.
    gpu_emulator::run("quads", &launch, &|| unsafe { quads(0) }).unwrap();
    let diagnostic = gpu_emulator::run("quads", &launch, &|| unsafe { quads(1) }).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::SharedMisaligned {
            thread: (0, 0, 0),
            kind: AccessKind::Read,
            offset: 4,
            size: 16
        }
    );
    assert!(
        diagnostic.to_string().contains("misaligned address"),
        "{diagnostic}"
    );
}

/// What is broken in the asynchronous rotation below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CopyBug {
    None,
    /// The copier reads its own copy's destination before its wait.
    ReadBeforeWait,
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

/// Each thread stores a 16-byte vector from element `4·t + shift` on.
///
/// # Safety
/// As `GlobalMut::write_vector`, for shift 0; the emulator checks it.
unsafe fn store_vectors(out: GlobalMut<f32>, shift: u32) {
    let t = thread_idx_x();
    let value = t as f32;
    // SAFETY: by this function's contract.
    unsafe { out.write_vector((4 * t + shift) as usize, [value; 4]) };
}

#[test]
fn a_16_byte_store_must_be_aligned_and_inside_the_buffer() {
    let mut out = vec![f32::NAN; 17];
    let out_view = GlobalMut::new("out", &mut out);
    let run = |threads, shift| {
        // SAFETY: the emulator checks the stores.
        gpu_emulator::run("store_vectors", &one_block(threads, 0), &|| unsafe {
            store_vectors(out_view, shift)
        })
    };
    run(4, 0).unwrap();
    let stored: Vec<f32> = (0..16).map(|i| (i / 4) as f32).collect();
    assert_eq!(out[..16], stored);
    assert!(out[16].is_nan());
    assert_eq!(
        run(4, 1).unwrap_err().fault,
        Fault::GlobalMisaligned {
            thread: (0, 0, 0),
            buffer: "out",
            index: 1,
            bytes: 16
        }
    );
    assert!(matches!(
        run(5, 0).unwrap_err().fault,
        Fault::GlobalOutOfBounds {
            thread: (4, 0, 0),
            buffer: "out",
            ..
        }
    ));
}

#[test]
fn reading_an_asynchronous_copy_before_its_wait_is_reported() {
    let (result, _) = rotate(CopyBug::ReadBeforeWait);
    let diagnostic = result.unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::CopyInFlight {
            offset: 0,
            copier: (0, 0, 0),
            access: Access {
                thread: (0, 0, 0),
                kind: AccessKind::Read
            }
        }
    );
    assert!(
        diagnostic.to_string().contains("still in flight"),
        "{diagnostic}"
    );
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
fn reading_another_threads_copy_without_a_barrier_after_its_wait_is_a_race() {
    // Thread 0 has read thread 1's element when thread 1's copy to it
    // starts: on the GPU it may read either value.
    let (result, _) = rotate(CopyBug::NoBarrier);
    assert_eq!(
        result.unwrap_err().fault,
        Fault::SharedRace {
            offset: 4,
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

#[test]
fn a_panicking_kernel_is_reported_with_its_thread_and_message() {
    fn divide(divisor: u32) {
        std::hint::black_box(100 / (thread_idx_x() * divisor));
    }
    let launch = Launch {
        grid: (2, 1, 1),
        block: (4, 1, 1),
        shared_bytes: 0,
    };
    let diagnostic = gpu_emulator::run("divide", &launch, &|| divide(1)).unwrap_err();
    assert_eq!(diagnostic.block, (0, 0, 0));
    let Fault::Panic { thread, message } = diagnostic.fault else {
        panic!("expected a panic, got {diagnostic}")
    };
    assert_eq!(thread, (0, 0, 0));
    assert!(message.contains("divide by zero"), "{message}");
}

/// The README's test command builds in release mode; overflow checks stay
/// on for the kernels' host build, so a wrapped index is a diagnostic.
#[test]
fn an_overflow_in_a_kernel_is_reported_in_a_release_build() {
    fn left_neighbour() -> u32 {
        std::hint::black_box(thread_idx_x()) - 1
    }
    let launch = Launch {
        grid: (1, 1, 1),
        block: (4, 1, 1),
        shared_bytes: 0,
    };
    let diagnostic = gpu_emulator::run("left_neighbour", &launch, &|| {
        std::hint::black_box(left_neighbour());
    })
    .unwrap_err();
    let Fault::Panic { thread, message } = diagnostic.fault else {
        panic!("expected a panic, got {diagnostic}")
    };
    assert_eq!(thread, (0, 0, 0));
    assert!(message.contains("subtract with overflow"), "{message}");
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
        grid: (2, 1, 1),
        block: (4, 1, 1),
        shared_bytes: 16,
    };
    // SAFETY: only shared memory is touched, and the emulator checks it.
    let diagnostic = gpu_emulator::run("read_without_writing", &launch, &|| unsafe {
        read_without_writing()
    })
    .unwrap_err();
    assert_eq!(diagnostic.block, (1, 0, 0));
    assert_eq!(
        diagnostic.fault,
        Fault::SharedUninitialized {
            thread: (0, 0, 0),
            offset: 0
        }
    );
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
    let Fault::Panic { thread, message } = diagnostic.fault else {
        panic!("expected a panic, got {diagnostic}")
    };
    assert_eq!(thread, (0, 0, 0));
    assert!(message.contains("overflows u32"), "{message}");
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
    let limits = Limits {
        steps_per_thread: 10_000,
        ..Limits::default()
    };
    // SAFETY: one flag, read and written through a checked view.
    let diagnostic =
        gpu_emulator::run_within("wait_for_flag", &one_block(2, 0), limits, &|| unsafe {
            wait_for_flag(view)
        })
        .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::DidNotFinish {
            thread: (0, 0, 0),
            steps: 10_001
        }
    );
    assert!(diagnostic.to_string().contains("did not finish"));
}

#[test]
fn a_barrier_in_an_endless_loop_is_stopped_too() {
    fn forever() {
        loop {
            sync_threads();
        }
    }
    let limits = Limits {
        steps_per_thread: 1000,
        ..Limits::default()
    };
    let diagnostic =
        gpu_emulator::run_within("forever", &one_block(4, 0), limits, &forever).unwrap_err();
    assert!(
        matches!(
            diagnostic.fault,
            Fault::DidNotFinish {
                thread: (0, 0, 0),
                ..
            }
        ),
        "{diagnostic}"
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
        grid: (1, 1, 1),
        block: (65536, 65536, 1),
        shared_bytes: 0,
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
        grid: (1, 1, 1),
        block: (64, 32, 1),
        shared_bytes: 0,
    };
    let diagnostic = gpu_emulator::run("too_many", &too_many, &body).unwrap_err();
    assert_eq!(
        diagnostic.to_string(),
        "too_many: launch refused: the threads per block is 2048, outside CUDA's limit of 1024"
    );
    let huge_shared = one_block(32, u32::MAX);
    let diagnostic = gpu_emulator::run("huge_shared", &huge_shared, &body).unwrap_err();
    assert!(
        matches!(diagnostic.fault, Fault::InvalidLaunch { value, .. } if value == u64::from(u32::MAX)),
        "{diagnostic}"
    );
    let empty = Launch {
        grid: (0, 1, 1),
        block: (32, 1, 1),
        shared_bytes: 0,
    };
    assert!(gpu_emulator::run("empty", &empty, &body).is_err());
    let bounded = Limits::within(LaunchBounds::new(128, Some(4)));
    let diagnostic =
        gpu_emulator::run_within("bounded", &one_block(256, 0), bounded, &body).unwrap_err();
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
    gpu_emulator::run_within("bounded", &one_block(128, 0), bounded, &body).unwrap();
    assert!(ran.get());
}

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
/// array of 32 words beside it holds the same, at t, written by t.
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
        out.write(t as usize, words.read(neighbour) + launch_sized.read(t));
    }
}

fn run_rotate_static(bug: StaticBug) -> (Result<(), Diagnostic>, Vec<f32>) {
    let mut out = vec![f32::NAN; 64];
    let view = GlobalMut::new("out", &mut out);
    let launch = Launch {
        grid: (2, 1, 1),
        block: (32, 1, 1),
        shared_bytes: 128,
    };
    // SAFETY: blocks of 32 threads and 128 bytes; the emulator checks the
    // rest. Both blocks write the first 32 elements of `out`, one at a
    // time, as the emulator runs blocks in turn.
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
}

#[test]
fn a_static_shared_array_read_without_a_barrier_is_a_race() {
    let diagnostic = run_rotate_static(StaticBug::NoBarrier).0.unwrap_err();
    assert!(
        matches!(diagnostic.fault, Fault::SharedRace { .. }),
        "{diagnostic}"
    );
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
    assert!(diagnostic.to_string().contains("shared array ROTATED"));
}

#[test]
fn a_static_shared_array_element_nobody_wrote_is_uninitialised() {
    let diagnostic = run_rotate_static(StaticBug::Unwritten).0.unwrap_err();
    assert!(
        matches!(
            diagnostic.fault,
            Fault::SharedUninitialized {
                thread: (4, 0, 0),
                ..
            }
        ),
        "{diagnostic}"
    );
}

/// Declares a static shared array of 40 KiB.
///
/// # Safety
/// Inside an emulated kernel.
unsafe fn large_static_array() {
    // SAFETY: by this function's contract.
    let large = unsafe { gpu_std::shared_array!(LARGE: [f32; 10240]) };
    // SAFETY: inside the array.
    unsafe { large.write(thread_idx_x(), 1.0) };
}

#[test]
fn static_and_launch_sized_shared_memory_together_are_limited() {
    // SAFETY: the emulator checks the launch.
    let fits = gpu_emulator::run("large_static_array", &one_block(32, 8 * 1024), &|| unsafe {
        large_static_array()
    });
    fits.unwrap();
    // SAFETY: the emulator checks the launch.
    let diagnostic =
        gpu_emulator::run("large_static_array", &one_block(32, 9 * 1024), &|| unsafe {
            large_static_array()
        })
        .unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::StaticSharedTooLarge {
            array: "LARGE",
            bytes: 9 * 1024 + 40 * 1024,
            limit: 48 * 1024
        }
    );
}

/// Reads element `index` of a constant array of 4.
///
/// # Safety
/// Inside an emulated kernel.
unsafe fn read_constant(out: GlobalMut<f32>, index: u32) {
    let table = gpu_std::constant_array!(DIAGNOSED: [f32; 4]);
    // SAFETY: by this function's contract; the emulator checks the rest.
    unsafe { out.write(thread_idx_x() as usize, table.read(index)) };
}

#[test]
fn a_constant_array_is_read_as_set_and_checked() {
    let mut out = vec![f32::NAN; 2];
    let view = GlobalMut::new("out", &mut out);
    let run = |index| {
        // SAFETY: the emulator checks the reads.
        gpu_emulator::run("read_constant", &one_block(2, 0), &|| unsafe {
            read_constant(view, index)
        })
    };
    assert_eq!(
        run(1).unwrap_err().fault,
        Fault::ConstantUnset {
            thread: (0, 0, 0),
            array: "DIAGNOSED",
            index: 1
        }
    );
    gpu_emulator::set_constant("DIAGNOSED", &[1.0, 2.0, 3.0, 4.0]);
    run(1).unwrap();
    assert_eq!(out, [2.0, 2.0]);
    assert_eq!(
        run(4).unwrap_err().fault,
        Fault::ConstantOutOfBounds {
            thread: (0, 0, 0),
            array: "DIAGNOSED",
            index: 4,
            len: 4
        }
    );
}
