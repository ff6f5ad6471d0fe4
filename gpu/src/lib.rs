//! The kernels of locality, written in Rust with `gpu-std` and compiled
//! to PTX.
//!
//! Built for `nvptx64-nvidia-cuda`, each kernel declared in a `kernels!`
//! block becomes a PTX entry point. Built for the host, each family's list
//! of kernels describes every kernel (its name, lesson, parameters and
//! launch contract), so that the host sizes every launch from the very
//! constants the kernels use, and carries the same kernels as plain
//! functions that `gpu-emulator` runs on the CPU.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_gpu_kernel, asm_experimental_arch)
)]
// The kernel lists and launch contracts exist for the host only.
#![cfg_attr(target_arch = "nvptx64", allow(dead_code))]

#[macro_use]
extern crate gpu_std;

pub mod access;
pub mod banks;
pub mod blur;
pub mod bulk;
pub mod caches;
pub mod chase;
pub mod constant;
pub mod distributed;
pub mod gemv;
pub mod histogram;
pub mod intensity;
pub mod l2;
pub mod matmul;
pub mod matmul_bf16;
pub mod pair_sum;
pub mod readonly;
pub mod registers;
pub mod tensor;
pub mod texture;
pub mod width;

/// The transpose written from scratch in `examples/transpose/` with the
/// same crates, benchmarked here like any family of the project's own.
pub use transpose;

/// The CUDA C++ twin of every kernel (`gpu/cuda/`, one file per family):
/// the same algorithm, launch geometry and memory layout, each `extern "C"`
/// under its Rust kernel's name. The host compiles them with NVRTC for the
/// GPU it runs on and times each beside its kernel.
#[cfg(not(target_arch = "nvptx64"))]
pub const CUDA_TWINS: &str = concat!(
    include_str!("../cuda/matmul.cu"),
    include_str!("../cuda/gemv.cu"),
    include_str!("../cuda/blur.cu"),
    include_str!("../cuda/transpose.cu"),
    include_str!("../cuda/access.cu"),
    include_str!("../cuda/banks.cu"),
    include_str!("../cuda/width.cu"),
    include_str!("../cuda/registers.cu"),
    include_str!("../cuda/constant.cu"),
    include_str!("../cuda/caches.cu"),
    include_str!("../cuda/readonly.cu"),
    include_str!("../cuda/texture.cu"),
    include_str!("../cuda/l2.cu"),
    include_str!("../cuda/intensity.cu"),
    include_str!("../cuda/bulk.cu"),
    include_str!("../cuda/distributed.cu"),
    include_str!("../cuda/tensor.cu"),
    include_str!("../cuda/histogram.cu"),
    include_str!("../cuda/matmul_bf16.cu"),
    include_str!("../cuda/chase.cu"),
    include_str!("../cuda/pair_sum.cu"),
);
