//! Arithmetic intensity as a parameter: one kernel that reads an element,
//! does as many FMAs on it as asked and writes it back, so that its FLOP
//! per byte can be set anywhere on either side of the GPU's ridge point.
//!
//! Below the ridge point the kernel's time is the time to move its bytes,
//! whatever the FMAs; above it the time grows with the FMAs and the bytes
//! no longer matter. `locality lessons intensity` sweeps the FMAs and traces
//! the roofline point by point.

use gpu_std::global::{Global, GlobalMut};
use gpu_std::{FULL_SM_THREADS, Launch, Real, thread::*};

/// What the kernel's launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Elements: [`CHAINS`] a thread.
    pub n: u32,
}

/// The kernel's parameters: input, output, n, FMAs per element, and the
/// FMA's multiplier and addend.
pub type Args = (Global<f32>, GlobalMut<f32>, u32, u32, f32, f32);

/// Threads per block.
pub const BLOCK: u32 = 256;

/// Elements a thread takes, one 16-byte vector: four independent chains of
/// FMAs. One chain alone reaches half the H100's FP32 peak, each FMA
/// waiting for the one before (32.2 TFLOP/s against 62.4 with four, 2048
/// FMAs on 2²⁴ elements, measured in CUDA C++), so the roofline's flat part
/// would be the FMA's latency, not the FP32 units.
pub const CHAINS: u32 = <f32 as Real>::VECTOR_LEN;

/// FMAs per chain and step of the loop: enough to hide its counter and
/// branch.
pub const UNROLL: u32 = 8;

/// [`CHAINS`] elements a thread, in blocks of [`BLOCK`].
fn vector_per_thread(problem: &Problem) -> Launch {
    Launch::covering((problem.n.div_ceil(CHAINS), 1, 1), (BLOCK, 1, 1), 0)
}

/// x ← x·a + b, `fmas` times, on each element of `x`.
#[inline(always)]
fn fma_chains(x: &mut [f32; 4], fmas: u32, a: f32, b: f32) {
    for _ in 0..fmas / UNROLL {
        for _ in 0..UNROLL {
            for x in x.iter_mut() {
                *x = Real::mul_add(*x, a, b);
            }
        }
    }
    for _ in 0..fmas % UNROLL {
        for x in x.iter_mut() {
            *x = Real::mul_add(*x, a, b);
        }
    }
}

kernels! {
    /// The arithmetic-intensity lesson's kernel.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// `fmas` FMAs per element read and written: FLOP per byte as a parameter.
    ///
    /// Thread t computes x ← x·a + b, `fmas` times, on each of the
    /// [`CHAINS`] elements from x = input[4t] on, and writes them to
    /// output[4t…], 16 bytes at a time (`LDG.E.128`, `STG.E.128`); the last
    /// thread takes the elements past the last whole vector one by one.
    ///
    /// Compute-to-global-memory-access ratio: 2·fmas FLOP per 8 bytes,
    /// fmas/4 FLOP/B. Bound by memory bandwidth below the ridge point and by
    /// the FP32 units above it.
    ///
    /// Launch bounds: 256 threads, and every warp an SM holds (8 blocks).
    ///
    /// # Safety
    /// `input` and `output` have at least n elements, `output` overlapping
    /// nothing; n + 3 fits in `u32`; blocks are 1-D and the grid covers
    /// n / 4 threads, rounded up.
    #[launch(vector_per_thread)]
    #[launch_bounds(BLOCK, FULL_SM_THREADS / BLOCK)]
    pub unsafe fn fma_chain(input: Global<f32>, output: GlobalMut<f32>, n: u32, fmas: u32, a: f32, b: f32) {
        let first = (block_idx_x() * block_dim_x() + thread_idx_x()) * CHAINS;
        if first < n {
            let whole = n - first >= CHAINS;
            let mut x = [0.0; 4];
            if whole {
                // SAFETY: first + 4 <= n, and first is a multiple of 4.
                x = unsafe { input.read_vector(first as usize) };
            } else {
                // Every lane of the vector, each guarded: a loop of fixed
                // length keeps x in registers.
                for (k, x) in x.iter_mut().enumerate() {
                    let index = first + k as u32;
                    if index < n {
                        // SAFETY: index < n.
                        *x = unsafe { input.read(index as usize) };
                    }
                }
            }
            fma_chains(&mut x, fmas, a, b);
            if whole {
                // SAFETY: as the read.
                unsafe { output.write_vector(first as usize, x) };
            } else {
                for (k, &x) in x.iter().enumerate() {
                    let index = first + k as u32;
                    if index < n {
                        // SAFETY: index < n.
                        unsafe { output.write(index as usize, x) };
                    }
                }
            }
        }
    }
}
