//! Constant memory: coefficients every thread reads, from the constant
//! cache and from global memory, the warp's lanes asking for one address
//! or for 32.
//!
//! The constant cache serves a warp one address at a time: when all 32
//! lanes read the same coefficient it is one read, broadcast to all; when
//! they read 32 different ones it is 32 reads, one after another. Global
//! memory through L1 serves 32 neighbouring addresses in one request, and
//! one address for all lanes as well. `locality lessons constant` times
//! the four combinations.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::warp;
use gpu_std::{FULL_SM_THREADS, Launch, Real, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub n: u32,
}

/// The kernels' parameters: input, the coefficients in global memory,
/// output, n, and how far apart the lanes' coefficients are (0: one for
/// the whole warp).
pub type Args = (Global<f32>, Global<f32>, GlobalMut<f32>, u32, u32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Coefficients: 1 KiB, a power of two, so that a mask wraps an index.
pub const COEFFICIENTS: u32 = 256;

/// The constant array's name in the PTX, which the host sets it by.
pub const TABLE: &str = "COEFFICIENT_TABLE";

/// One thread per element, in blocks of [`BLOCK`].
fn one_thread_per_element(problem: &Problem) -> Launch {
    Launch::covering((problem.n, 1, 1), (BLOCK, 1, 1), 0)
}

/// The coefficient lane `lane` uses at step k: (k + spread·lane) mod
/// [`COEFFICIENTS`].
#[inline(always)]
fn coefficient(k: u32, spread: u32) -> u32 {
    k.wrapping_add(spread.wrapping_mul(thread_idx_x() % warp::SIZE)) & (COEFFICIENTS - 1)
}

kernels! {
    /// The constant-memory lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Coefficients from constant memory: one address a warp is broadcast, 32 are serialised.
    ///
    /// Thread i writes Σₖ c[(k + spread·lane) mod 256]·input[i], reading
    /// the coefficients from a constant array (`LDC`) that the host fills
    /// with the same values as `coefficients`, which it leaves unread.
    ///
    /// Compute-to-global-memory-access ratio: 512 FLOP per 8 bytes, 64
    /// FLOP/B; the coefficients come from the constant cache. Bound by the
    /// FMAs at spread 0, by the constant cache's one address per pass at
    /// spread 1.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` and `output` have at least n elements, `output` overlapping
    /// nothing; the host has set the constant array; the grid covers n
    /// threads.
    #[launch(one_thread_per_element)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn coefficients_from_constant(input: Global<f32>, coefficients: Global<f32>, output: GlobalMut<f32>, n: u32, spread: u32) {
        // The constant array holds the same values.
        let _ = coefficients;
        let table = constant_array!(COEFFICIENT_TABLE: [f32; COEFFICIENTS]);
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            // SAFETY: i < n.
            let x = unsafe { input.read(i as usize) };
            let mut sum = 0.0f32;
            for k in 0..COEFFICIENTS {
                // SAFETY: the mask keeps the index inside the array, which
                // the host has set.
                sum = Real::mul_add(unsafe { table.read(coefficient(k, spread)) }, x, sum);
            }
            // SAFETY: i < n.
            unsafe { output.write(i as usize, sum) };
        }
    }

    /// The same coefficients from global memory, through L1.
    ///
    /// As [`coefficients_from_constant`], reading `coefficients` from
    /// global memory (`LDG`): one address for the warp is one request,
    /// 32 neighbouring addresses one request of a line.
    ///
    /// Compute-to-global-memory-access ratio: 2 FLOP per coefficient read,
    /// 0.5 FLOP/B of requests, all served by L1 after the first. Bound by
    /// L1's requests.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// As [`coefficients_from_constant`], `coefficients` holding
    /// [`COEFFICIENTS`] elements.
    #[launch(one_thread_per_element)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn coefficients_from_global(input: Global<f32>, coefficients: Global<f32>, output: GlobalMut<f32>, n: u32, spread: u32) {
        let i = block_idx_x() * block_dim_x() + thread_idx_x();
        if i < n {
            // SAFETY: i < n.
            let x = unsafe { input.read(i as usize) };
            let mut sum = 0.0f32;
            for k in 0..COEFFICIENTS {
                // SAFETY: the mask keeps the index inside the coefficients.
                sum = Real::mul_add(unsafe { coefficients.read(coefficient(k, spread) as usize) }, x, sum);
            }
            // SAFETY: i < n.
            unsafe { output.write(i as usize, sum) };
        }
    }
}
