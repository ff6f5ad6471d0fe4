//! Registers and local memory: a thread's own array, where it lives, and
//! what that costs.
//!
//! A per-thread array stays in registers only when every index into it is
//! known at compile time (after the loops over it are unrolled); indexed
//! at run time, it is placed in local memory, the thread's private slice of
//! device memory, reached through L1 with `LDL`/`STL`. Values that do not
//! fit the registers a thread is given spill there too: `locality lessons
//! registers` times both kernels, and [`array_in_registers`] again under a
//! register cap that makes it spill (`.maxnreg` on its PTX entry, what
//! `__maxnreg__` or `-maxrregcount` does for CUDA C++).

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Threads, one per output element.
    pub n: u32,
}

/// The kernels' parameters: the arrays (element k of thread i at
/// input[k·n + i]), one result per thread, n, and the rotation.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Elements of each thread's array: few enough for registers.
pub const LENGTH: u32 = 64;

/// The weight of element k: k + 1.
#[inline(always)]
fn weight(k: u32) -> f32 {
    (k + 1) as f32
}

/// One thread per element, in blocks of [`BLOCK`].
fn one_thread_per_element(problem: &Problem) -> Launch {
    Launch::covering((problem.n, 1, 1), (BLOCK, 1, 1), 0)
}

/// Thread i's array of `L` elements, read column by column (coalesced),
/// and its sum.
///
/// # Safety
/// i < n, and the input holds L·n elements.
#[inline(always)]
unsafe fn load<const L: usize>(input: Global<f32>, n: u32, i: u32) -> ([f32; L], f32) {
    let mut array = [0.0; L];
    let mut sum = 0.0;
    for (k, element) in array.iter_mut().enumerate() {
        // SAFETY: k < L and i < n, so k·n + i < L·n.
        *element = unsafe { input.read(k * n as usize + i as usize) };
        sum += *element;
    }
    (array, sum)
}

/// Σₖ a[k]·(w((k − rotation) mod L) + s), every index known at compile
/// time: the rotation moves into the weights' arithmetic.
#[inline(always)]
fn rotated_in_registers<const L: usize>(array: &[f32; L], sum: f32, rotation: u32) -> f32 {
    let length = L as u32;
    let mut result = 0.0;
    for (k, &element) in array.iter().enumerate() {
        let weight = weight((k as u32 + length - rotation % length) % length);
        result += element * (weight + sum);
    }
    result
}

kernels! {
    /// The register and local-memory lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// A thread's array indexed at compile time: it lives in registers.
    ///
    /// Thread i reads its [`LENGTH`] elements a[k] = input[k·n + i] into an
    /// array, sums them into s, and writes Σₖ a[k]·(w + s), w the weight
    /// (k − rotation) mod L + 1 computed from k: no index depends on a run
    /// time value, so after unrolling each element is a register.
    ///
    /// Compute-to-global-memory-access ratio: 4 FLOP per 4 bytes read, 1
    /// FLOP/B. Bound by memory bandwidth.
    ///
    /// Launch bounds: 256 threads, and two blocks an SM: the 64-element array
    /// needs 72 registers or more; at three blocks (80) sm_80 spills it.
    ///
    /// # Safety
    /// `input` has [`LENGTH`]·n elements, which fits in `u32`, and `output`
    /// n, overlapping nothing; the grid covers n threads.
    #[launch(one_thread_per_element)]
    #[launch_bounds(BLOCK, 2)]
    pub unsafe fn array_in_registers(input: Global<f32>, output: GlobalMut<f32>, n: u32, rotation: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            // SAFETY: i < n, and the input holds LENGTH·n elements.
            let (array, sum) = unsafe { load::<{ LENGTH as usize }>(input, n, i) };
            let result = rotated_in_registers(&array, sum, rotation);
            // SAFETY: i < n.
            unsafe { output.write(i as usize, result) };
        }
    }

    /// The same array indexed at run time: it lives in local memory.
    ///
    /// As [`array_in_registers`], but the rotation indexes the array:
    /// Σⱼ a[(j + rotation) mod L]·(w(j) + s). The same terms in another
    /// order; but an index known only at run time cannot name a register,
    /// so the array goes to local memory (`.local` in the PTX, `STL` and
    /// `LDL` in the SASS).
    ///
    /// Compute-to-global-memory-access ratio: as [`array_in_registers`],
    /// plus 4 bytes of local memory written and read per element. Bound by
    /// local memory's traffic through L1.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks): its
    /// array is in local memory, whatever the registers.
    ///
    /// # Safety
    /// As [`array_in_registers`].
    #[launch(one_thread_per_element, local_memory)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn array_in_local_memory(input: Global<f32>, output: GlobalMut<f32>, n: u32, rotation: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            // SAFETY: i < n, and the input holds LENGTH·n elements.
            let (array, sum) = unsafe { load::<{ LENGTH as usize }>(input, n, i) };
            let mut result = 0.0;
            for j in 0..LENGTH {
                let element = array[((j + rotation % LENGTH) % LENGTH) as usize];
                result += element * (weight(j) + sum);
            }
            // SAFETY: i < n.
            unsafe { output.write(i as usize, result) };
        }
    }

}
