//! Launch-sized shared memory: an access past what the launch gave, a
//! vector read off its 16-byte boundary, and a read of what only an
//! earlier block wrote.

use gpu_emulator::{self, AccessKind, Fault};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_idx_x, sync_threads, thread_idx_x};

use crate::matmul::TILE;
use crate::support::{assert_says, blocks, one_block};

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
    assert_says(&diagnostic, "misaligned address");
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
    let launch = blocks(2, 4, 16);
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
