//! Global memory: a read or write past a buffer is stopped with the
//! buffer, the index and the thread, and a 16-byte store off its boundary
//! too.

use gpu_emulator::{self, AccessKind, Fault, Launch};
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::thread::{block_idx_x, block_idx_y, thread_idx_x, thread_idx_y};
use rand::Rng;

use crate::matmul::{Bug, TILE, run_tiled_matmul};
use crate::support::{one_block, rng};

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
