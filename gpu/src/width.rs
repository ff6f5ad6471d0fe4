//! One copy, different access widths: how many bytes each thread moves per
//! load, and why a struct's alignment decides it.
//!
//! Every kernel here copies the same bytes; each thread moves one element
//! of its width, 1 to 16 bytes, with one load and one store (`LDG.E.U8` …
//! `LDG.E.128`). A warp's 32 loads of 4 bytes fill a 128-byte line; of 1
//! byte, a quarter of a sector's worth of instructions per byte. A pair of
//! `f32` aligned to 8 bytes is one 8-byte load (`LDG.E.64`); the same pair
//! aligned to 4 may start anywhere a 4-byte value may, so it takes two
//! 4-byte loads (`LDG.E` twice), each of which fetches a 256-byte span for
//! 128 bytes used. `locality lessons width` times them all.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, thread::*};

/// What the copies' launch contracts are a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Bytes copied.
    pub bytes: u32,
}

/// The copies' parameters: input, output, bytes.
pub type Args = (Global<u8>, GlobalMut<u8>, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Two `f32` as `#[repr(C)]` lays them out: aligned to 4 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Pair {
    pub x: f32,
    pub y: f32,
}

/// The same two `f32`, aligned to 8 bytes: CUDA's `float2`.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct AlignedPair {
    pub x: f32,
    pub y: f32,
}

/// One thread per element of `W` bytes, and one per byte past the last
/// whole element.
fn per_element<const W: u32>(problem: &Problem) -> Launch {
    let threads = problem.bytes / W + problem.bytes % W;
    Launch::covering((threads, 1, 1), (BLOCK, 1, 1), 0)
}

/// Thread i copies element i of the buffers viewed as `T`, or, past the
/// last whole element, one of the bytes left.
///
/// # Safety
/// `input` and `output` have at least `bytes` bytes, `output` overlapping
/// nothing, and `T` is plain data of alignment at most 256.
#[inline(always)]
unsafe fn copy_as<T: Copy>(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
    let i = block_idx_x() * block_dim_x() + thread_idx_x();
    let width = size_of::<T>() as u32;
    let whole = bytes / width;
    if i < whole {
        // SAFETY: element i lies inside both buffers; T is plain data.
        unsafe {
            output
                .cast::<T>()
                .write(i as usize, input.cast::<T>().read(i as usize))
        };
    } else {
        let byte = whole * width + (i - whole);
        if byte < bytes {
            // SAFETY: byte < bytes.
            unsafe { output.write(byte as usize, input.read(byte as usize)) };
        }
    }
}

kernels! {
    /// The access-width lesson's copies, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// A copy, 1 byte a thread: a quarter of a sector per warp-wide load.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B, a copy. Bound by
    /// issuing loads and stores: each moves 32 bytes for the whole warp.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<1>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_bytes_1(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        // SAFETY: forwarded contract.
        unsafe { copy_as::<u8>(input, output, bytes) }
    }

    /// A copy, 2 bytes a thread: 64 bytes per warp-wide load.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B. Bound by issuing
    /// loads and stores, or by memory bandwidth where enough are in flight.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<2>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_bytes_2(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        // SAFETY: forwarded contract.
        unsafe { copy_as::<u16>(input, output, bytes) }
    }

    /// A copy, 4 bytes a thread: a whole 128-byte line per warp-wide load.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B. Bound by memory
    /// bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<4>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_bytes_4(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        // SAFETY: forwarded contract.
        unsafe { copy_as::<u32>(input, output, bytes) }
    }

    /// A copy, 8 bytes a thread (`LDG.E.64`): two lines per warp-wide load.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B. Bound by memory
    /// bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<8>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_bytes_8(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        // SAFETY: forwarded contract.
        unsafe { copy_as::<u64>(input, output, bytes) }
    }

    /// A copy, 16 bytes a thread (`LDG.E.128`): four lines per warp-wide load.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B. Bound by memory
    /// bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<16>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_bytes_16(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        let whole = bytes / 16;
        if i < whole {
            // A 16-byte struct is copied as two 8-byte halves; the runtime's
            // vector load and store move it whole.
            // SAFETY: the 16 bytes of element i lie inside both buffers, at
            // a multiple of 16 from their 256-byte-aligned starts.
            unsafe {
                let values = input.cast::<f32>().read_vector(4 * i as usize);
                output.cast::<f32>().write_vector(4 * i as usize, values);
            }
        } else {
            let byte = whole * 16 + (i - whole);
            if byte < bytes {
                // SAFETY: byte < bytes.
                unsafe { output.write(byte as usize, input.read(byte as usize)) };
            }
        }
    }

    /// Pairs of f32 aligned to 4: two 4-byte loads each, half of every span unused.
    ///
    /// `Pair` is `#[repr(C)]`, aligned as an `f32`: the compiler may not
    /// assume 8-byte alignment, so it loads and stores the pair as two
    /// `f32` (`LDG.E` twice). Each of the warp's two loads spans 256 bytes
    /// of which it uses 128.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B. Bound by memory
    /// bandwidth, which L1 keeps the second load from paying twice for.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<8>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_pairs_align_4(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        // SAFETY: forwarded contract.
        unsafe { copy_as::<Pair>(input, output, bytes) }
    }

    /// Pairs of f32 aligned to 8: one 8-byte load each, every byte used.
    ///
    /// `AlignedPair` is `#[repr(C, align(8))]`, CUDA's `float2`: one
    /// `LDG.E.64` per pair.
    ///
    /// Compute-to-global-memory-access ratio: 0 FLOP/B. Bound by memory
    /// bandwidth.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As `copy_as`.
    #[launch(per_element::<8>)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn copy_pairs_align_8(input: Global<u8>, output: GlobalMut<u8>, bytes: u32) {
        // SAFETY: forwarded contract.
        unsafe { copy_as::<AlignedPair>(input, output, bytes) }
    }
}
