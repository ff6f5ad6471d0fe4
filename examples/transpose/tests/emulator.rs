//! The kernels on the CPU emulator: correct at odd sizes, the race that a
//! missing barrier is, and the bank conflicts that the padding removes.

use gpu_host::{Backend, CountingEmulator, Emulator};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::{Kernel, kernels, shared_array};
use transpose::{Args, KERNELS, Shape, TILE, load_tile, store_tile, tiles, transposed};

fn run<B: Backend>(
    backend: &B,
    kernel: &Kernel<Args, Shape>,
    shape: Shape,
) -> gpu_host::Result<()> {
    let input: Vec<f32> = (0..shape.rows * shape.cols).map(|i| i as f32).collect();
    let (x, mut y) = (backend.upload("input", &input)?, backend.alloc("output", input.len())?);
    // SAFETY: both buffers hold rows × cols elements.
    unsafe { backend.launch(kernel, &shape, (&x, &mut y, shape.rows, shape.cols))? };
    assert_eq!(backend.download(&y)?, transposed(&input, shape), "{}", kernel.name);
    Ok(())
}

#[test]
fn every_kernel_transposes_odd_sizes() {
    for (rows, cols) in [(1, 1), (37, 70), (64, 33), (3, 100)] {
        for kernel in KERNELS {
            run(&Emulator::default(), kernel, Shape { rows, cols }).unwrap();
        }
    }
}

kernels! {
    /// The tiled kernel with its barrier left out.
    pub const UNSYNCHRONISED: [Kernel<Args, Shape>];

    /// Tiled, without `sync_threads`: a thread reads what another has not written yet.
    #[launch(tiles)]
    #[launch_bounds(256)]
    pub unsafe fn transpose_unsynchronised(input: Global<f32>, output: GlobalMut<f32>, rows: u32, cols: u32) {
        let tile = unsafe { shared_array!(TILE_32: [f32; TILE * TILE]) };
        unsafe { load_tile(input, tile, TILE, Shape { rows, cols }) };
        unsafe { store_tile(tile, TILE, output, Shape { rows, cols }) };
    }
}

#[test]
fn without_its_barrier_the_tiled_kernel_races() {
    let error =
        run(&Emulator::default(), &UNSYNCHRONISED[0], Shape { rows: 32, cols: 32 }).unwrap_err();
    assert!(error.to_string().contains("race"), "{error}");
}

#[test]
fn the_padding_takes_the_bank_conflicts_away() {
    let conflicts = |kernel| {
        let counting = CountingEmulator::default();
        run(&counting, kernel, Shape { rows: 64, cols: 64 }).unwrap();
        let traffic = counting.traffic(kernel.name).unwrap();
        (traffic.shared_load.requests, traffic.shared_load.bank_conflicts)
    };
    let (requests, tiled) = conflicts(&KERNELS[1]);
    assert_eq!(tiled, 31 * requests, "every load of a tile's column is 32-way");
    assert_eq!(conflicts(&KERNELS[2]).1, 0);
}

kernels! {
    /// The naive kernel with an index that overflows.
    pub const OVERFLOWING: [Kernel<Args, Shape>];

    /// An index `rows · cols · 65536`, past `u32` from 256 × 256 on: wrapped, it would be 0.
    #[launch(tiles)]
    #[launch_bounds(256)]
    pub unsafe fn transpose_overflowing(input: Global<f32>, output: GlobalMut<f32>, rows: u32, cols: u32) {
        let past = rows * cols * 65536;
        unsafe { output.write(past as usize, input.read(0)) };
    }
}

#[test]
fn an_overflow_in_a_kernel_is_reported_in_a_release_build() {
    let error =
        run(&Emulator::default(), &OVERFLOWING[0], Shape { rows: 256, cols: 256 }).unwrap_err();
    assert!(error.to_string().contains("panicked: attempt to multiply with overflow"), "{error}");
}
