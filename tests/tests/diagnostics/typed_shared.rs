//! Shared memory of every scalar type, and as much of it as a Hopper
//! block may have: `__shared__ unsigned bins[256]` and `__shared__ short`
//! as `shared_array!`s, launch-sized memory of half floats, and the 227 KiB
//! a block gets once its kernel opts in.

use gpu_emulator::{self, Diagnostic, Fault};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use gpu_std::{bf16, f16};
use rand::Rng;

use crate::support::{assert_fault, one_block, rng};

/// Runs `kernel` as `name` on one block of `(threads, shared_bytes)`,
/// over views of `input` and `out` under those names.
fn run_on_one_block<I: Copy, O: Copy>(
    name: &'static str,
    (threads, shared_bytes): (u32, u32),
    input: &[I],
    out: &mut [O],
    kernel: impl Fn(Global<I>, GlobalMut<O>),
) -> Result<(), Diagnostic> {
    let (x, y) = (Global::new("input", input), GlobalMut::new("out", out));
    gpu_emulator::run(name, &one_block(threads, shared_bytes), &|| kernel(x, y))
}

/// Thread t of a block of 256 counts the bytes of `input` equal to t into
/// `bins[t]` (`__shared__ unsigned bins[256]`), then writes bin 255 − t,
/// which another thread counted, to `out[t]`.
///
/// # Safety
/// One block of 256 threads; `out` has 256 elements.
unsafe fn count_bytes(input: Global<u8>, out: GlobalMut<u32>, n: u32) {
    // SAFETY: by this function's contract.
    let bins = unsafe { gpu_std::shared_array!(BINS: [u32; 256]) };
    let t = thread_idx_x();
    let mut count = 0u32;
    for i in 0..n {
        // SAFETY: i < n, the input's length.
        if u32::from(unsafe { input.read(i as usize) }) == t {
            count += 1;
        }
    }
    // SAFETY: t < 256, each thread its own bin, a barrier before the reads.
    unsafe {
        bins.write(t, count);
        sync_threads();
        out.write(t as usize, bins.read(255 - t));
    }
}

#[test]
fn a_static_shared_array_of_u32_holds_a_histogram() {
    let mut rng = rng();
    let input: Vec<u8> = (0..3000).map(|_| rng.random()).collect();
    let mut out = vec![u32::MAX; 256];
    // SAFETY: one block of 256 threads, 256 outputs.
    run_on_one_block("count_bytes", (256, 0), &input, &mut out, |x, y| unsafe {
        count_bytes(x, y, input.len() as u32)
    })
    .unwrap();
    let mut counts = vec![0u32; 256];
    for &byte in &input {
        counts[usize::from(byte)] += 1;
    }
    counts.reverse();
    assert_eq!(out, counts);
}

/// Thread t of a block of 64 stores `input[t]` to a static array of `i16`
/// and writes its right neighbour's minus its own, wrapping, to `out[t]`.
///
/// # Safety
/// One block of 64 threads; `input` and `out` have 64 elements.
unsafe fn neighbour_differences(input: Global<i16>, out: GlobalMut<i16>) {
    // SAFETY: by this function's contract.
    let values = unsafe { gpu_std::shared_array!(SHORTS: [i16; 64]) };
    let t = thread_idx_x();
    // SAFETY: t < 64, a barrier between the writes and the reads.
    unsafe {
        values.write(t, input.read(t as usize));
        sync_threads();
        let difference = values.read((t + 1) % 64).wrapping_sub(values.read(t));
        out.write(t as usize, difference);
    }
}

#[test]
fn a_static_shared_array_of_i16_keeps_signs_and_its_own_bounds() {
    let mut rng = rng();
    let input: Vec<i16> = (0..64).map(|_| rng.random()).collect();
    let mut out = vec![0i16; 64];
    // SAFETY: one block of 64 threads, 64 elements each.
    run_on_one_block(
        "neighbour_differences",
        (64, 0),
        &input,
        &mut out,
        |x, y| unsafe { neighbour_differences(x, y) },
    )
    .unwrap();
    let expected: Vec<i16> = (0..64)
        .map(|t| input[(t + 1) % 64].wrapping_sub(input[t]))
        .collect();
    assert_eq!(out, expected);
    // 64 i16 are 128 bytes: element 64 is past the array, not in a
    // neighbouring one, whatever its byte offset.
    let diagnostic = gpu_emulator::run("past", &one_block(1, 0), &|| {
        // SAFETY: none: the emulator reports the read.
        unsafe { std::hint::black_box(gpu_std::shared_array!(SHORTS: [i16; 64]).read(64)) };
    })
    .unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::StaticSharedOutOfBounds {
            array: "SHORTS",
            index: 64,
            len: 64,
            ..
        }
    );
}

/// Thread t stores `input[t]` as an f16 and a bf16 in the launch-sized
/// memory (the bf16s after the 32 f16s), and writes back its neighbour's
/// sum of the two, as an f32.
///
/// # Safety
/// One block of 32 threads, 128 bytes of launch-sized shared memory.
unsafe fn half_floats(input: Global<f32>, out: GlobalMut<f32>) {
    // SAFETY: by this function's contract: 64 bytes of f16, 64 of bf16.
    let (halves, brains) = unsafe {
        let halves = SharedArray::<f16>::launch_sized();
        (halves, SharedArray::<bf16>::launch_sized().after(32))
    };
    let t = thread_idx_x();
    // SAFETY: t < 32 in each, a barrier between writes and reads.
    unsafe {
        let value = input.read(t as usize);
        halves.write(t, f16::from_f32(value));
        brains.write(t, bf16::from_f32(value));
        sync_threads();
        let next = (t + 1) % 32;
        out.write(
            t as usize,
            halves.read(next).to_f32() + brains.read(next).to_f32(),
        );
    }
}

#[test]
fn launch_sized_shared_memory_holds_f16_and_bf16() {
    let mut rng = rng();
    let input: Vec<f32> = (0..32).map(|_| rng.random_range(-100.0..100.0)).collect();
    let mut out = vec![f32::NAN; 32];
    // SAFETY: one block of 32 threads and 128 bytes.
    run_on_one_block("half_floats", (32, 128), &input, &mut out, |x, y| unsafe {
        half_floats(x, y)
    })
    .unwrap();
    let expected: Vec<f32> = (0..32)
        .map(|t| {
            let value = input[(t + 1) % 32];
            f16::from_f32(value).to_f32() + bf16::from_f32(value).to_f32()
        })
        .collect();
    assert_eq!(out, expected);
}

/// Every thread writes its word at the end of the launch-sized memory, of
/// `bytes` bytes, and reads its neighbour's.
///
/// # Safety
/// `bytes` of launch-sized shared memory, 32 threads.
unsafe fn touch_the_end(bytes: u32) {
    // SAFETY: by this function's contract.
    let words = unsafe { SharedArray::<u64>::launch_sized() };
    let (t, last) = (thread_idx_x(), bytes / 8 - 32);
    // SAFETY: the last 32 words, a barrier between writes and reads.
    unsafe {
        words.write(last + t, u64::from(t));
        sync_threads();
        assert_eq!(words.read(last + (t + 1) % 32), u64::from((t + 1) % 32));
    }
}

#[test]
fn a_block_may_have_hoppers_227_kib_of_shared_memory_and_no_more() {
    let run = |kib: u32| {
        // SAFETY: the launch gives the kernel its bytes.
        gpu_emulator::run("touch_the_end", &one_block(32, kib * 1024), &|| unsafe {
            touch_the_end(kib * 1024)
        })
    };
    run(200).unwrap();
    run(227).unwrap();
    let diagnostic = run(228).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::InvalidLaunch {
            what: "the shared memory per block, in bytes,",
            value: 228 * 1024,
            limit: 227 * 1024
        }
    );
    assert!(
        diagnostic.to_string().contains("233472") && diagnostic.to_string().contains("232448"),
        "{diagnostic}"
    );
}

#[test]
fn the_emulator_backend_launches_past_48_kib_what_the_portable_check_refuses() {
    use gpu_host::{Backend, Emulator};
    use kernels::blur::{Problem, tiled_shared_bytes};
    use locality::families::blur::Blur;
    use locality_tests::kernel;

    // A 236² tile: 55696 bytes, past 48 KiB. A small image keeps the
    // windows, clipped to it, small.
    let (radius, width, height) = (110, 5, 3);
    assert!(u64::from(tiled_shared_bytes(radius)) > gpu_std::shared::LIMIT_BYTES);
    let mut rng = rng();
    let image: Vec<u8> = (0..width * height).map(|_| rng.random()).collect();
    let problem = Problem {
        width,
        height,
        channels: 1,
        radius,
    };
    let emulator = Emulator::default();
    let input = emulator.upload("image", &image).unwrap();
    let mut outputs = Vec::new();
    for name in ["blur_naive", "blur_tiled"] {
        let mut output = emulator.alloc::<u8>("blurred", image.len()).unwrap();
        let args = (&input, &mut output, width, height, 1, radius);
        // SAFETY: both buffers hold the image; the contract sizes the rest.
        unsafe { emulator.launch(kernel::<Blur>(name), &problem, args) }.unwrap();
        outputs.push(emulator.download(&output).unwrap());
    }
    assert_eq!(outputs[0], outputs[1]);
    let portable = gpu_host::checked_launch(kernel::<Blur>("blur_tiled"), &problem);
    assert!(
        matches!(
            portable,
            Err(gpu_host::Error::SharedTooLarge { bytes: 55696, .. })
        ),
        "{portable:?}"
    );
}
