//! The read-only path (`ld.global.nc`, `__ldg`): a byte it reads may not be
//! written in the same launch, by any thread, before or after, whatever
//! orders them, for the path is not coherent with the launch's stores.

use gpu_emulator::{self, Diagnostic, Fault};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{block_idx_x, sync_threads, thread_idx_x};

use crate::support::blocks;

/// Runs `body` over `grid` blocks of 32 threads, with two views of one
/// buffer of 64 elements: written through the one, read through the other.
fn run(grid: u32, body: fn(Global<f32>, GlobalMut<f32>)) -> Result<(), Diagnostic> {
    let mut data = vec![1.0f32; 64];
    let written = GlobalMut::new("data", &mut data);
    // SAFETY: the same 64 elements, read by the emulated kernel alone
    // while `written` writes them: the emulator checks every access.
    let read = Global::new("data", unsafe {
        std::slice::from_raw_parts(data.as_ptr(), 64)
    });
    let launch = blocks(grid, 32, 0);
    gpu_emulator::run("read_only", &launch, &|| body(read, written))
}

fn written_read_only(index: usize, writer: (u32, u32, u32), reader: (u32, u32, u32)) -> Fault {
    let block = (0, 0, 0);
    Fault::WrittenReadOnly {
        buffer: "data",
        index,
        writer: (writer, block),
        reader: (reader, block),
    }
}

#[test]
fn a_thread_reading_its_own_store_through_the_read_only_path_is_reported() {
    // SAFETY: element t of 64; the read breaks `ldg`'s contract on purpose.
    let result = run(1, |read, written| unsafe {
        let t = thread_idx_x() as usize;
        written.write(t, 2.0);
        std::hint::black_box(read.ldg(t));
    });
    let diagnostic = result.unwrap_err();
    assert_eq!(diagnostic.fault, written_read_only(0, (0, 0, 0), (0, 0, 0)));
    assert!(
        diagnostic.to_string().ends_with(
            "data[0] was written by thread (0, 0, 0) of block (0, 0, 0) and read through the \
             read-only path (ld.global.nc, __ldg) by thread (0, 0, 0) of block (0, 0, 0) in the \
             same launch: that path is not coherent with the launch's stores, so the read may \
             see either value"
        ),
        "{diagnostic}"
    );
}

#[test]
fn a_store_after_a_read_only_load_is_reported_though_a_barrier_orders_them() {
    // SAFETY: element 5 of 64, read by every thread through the read-only
    // path, then written by thread 5 after the barrier.
    let result = run(1, |read, written| unsafe {
        std::hint::black_box(read.ldg(5));
        sync_threads();
        if thread_idx_x() == 5 {
            written.write(5, 2.0);
        }
    });
    assert_eq!(
        result.unwrap_err().fault,
        written_read_only(5, (5, 0, 0), (31, 0, 0))
    );
}

#[test]
fn a_vector_load_takes_the_read_only_path_too() {
    // SAFETY: block 1 writes what block 0 read with 16-byte loads.
    let result = run(2, |read, written| unsafe {
        let t = thread_idx_x() as usize;
        if block_idx_x() == 0 && t < 16 {
            std::hint::black_box(read.read_vector(4 * t));
        }
        if block_idx_x() == 1 {
            written.write(t, 2.0);
        }
    });
    let Fault::WrittenReadOnly { index, reader, .. } = result.unwrap_err().fault else {
        panic!("not a write to read-only data");
    };
    assert_eq!((index, reader), (0, ((0, 0, 0), (0, 0, 0))));
}

#[test]
fn plain_loads_of_a_threads_own_store_are_ordered() {
    // SAFETY: element t of 64, written and read back by thread t alone.
    let result = run(2, |read, written| unsafe {
        let t = (block_idx_x() * 32 + thread_idx_x()) as usize;
        written.write(t, 2.0);
        written.write(t, read.read(t) + 1.0);
    });
    result.unwrap();
}
