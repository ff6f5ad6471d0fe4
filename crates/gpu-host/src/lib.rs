//! Launches GPU kernels written with `gpu-std`: the step Rust-CUDA's `cust`
//! takes, for kernels compiled by rustc's own NVPTX backend (Rust-CUDA's
//! code generator needs LLVM 7 for every GPU before Blackwell, which no
//! package registry provides, so it does not build here).
//!
//! A [`Backend`] is where kernels run, with buffers of its own: a [`Gpu`]
//! (the PTX that `gpu-builder` compiled, loaded with the CUDA driver) or the
//! CPU [`Emulator`], which runs the same kernels, compiled for the host,
//! under `gpu-emulator` and reports their races, divergent barriers and
//! out-of-bounds accesses. Every launch goes through [`Backend::launch`],
//! typed by the kernel's own parameter list as `gpu_std::kernels!` declared
//! it, with the kernel's launch contract and launch bounds checked on the
//! host first ([`checked_launch`]).
//!
//! A buffer lives in one [`Placement`] ([`Backend::alloc_in`]): the
//! device's memory, page-locked host memory mapped into the GPU's address
//! space (which a kernel reads in place across the host link), or managed
//! memory (pages the driver moves, [`Backend::prefetch`]). A kernel takes
//! each alike; the emulator counts each placement's traffic apart.
//!
//! ```
//! use gpu_host::{Backend, Emulator};
//! use gpu_std::global::{Global, GlobalMut};
//! use gpu_std::thread::{block_dim_x, block_idx_x, thread_idx_x};
//! use gpu_std::{Launch, kernels};
//!
//! kernels! {
//!     /// The crate's kernels, as the host knows them.
//!     pub const KERNELS: [Kernel<(Global<f32>, GlobalMut<f32>, u32), u32>];
//!
//!     /// Doubles n elements, one a thread.
//!     #[launch(|&n| Launch::covering((n, 1, 1), (128, 1, 1), 0))]
//!     #[launch_bounds(128)]
//!     pub unsafe fn double(input: Global<f32>, output: GlobalMut<f32>, n: u32) {
//!         let i = block_idx_x() * block_dim_x() + thread_idx_x();
//!         if i < n {
//!             // SAFETY: i < n, the length of both buffers.
//!             unsafe { output.write(i as usize, 2.0 * input.read(i as usize)) };
//!         }
//!     }
//! }
//!
//! fn doubled<B: Backend>(backend: &B, values: &[f32]) -> gpu_host::Result<Vec<f32>> {
//!     let input = backend.upload("input", values)?;
//!     let mut output = backend.alloc("output", values.len())?;
//!     let n = values.len() as u32;
//!     // SAFETY: both buffers hold the n elements the kernel reads and writes.
//!     unsafe { backend.launch(&KERNELS[0], &n, (&input, &mut output, n))? };
//!     backend.download(&output)
//! }
//!
//! assert_eq!(doubled(&Emulator::default(), &[1.0, 2.5, -3.0])?, [2.0, 5.0, -6.0]);
//! # Ok::<(), gpu_host::Error>(())
//! ```
//!
//! On a GPU the same function takes `&Gpu::new(0, &include_ptx!("NAME"))?`,
//! `NAME` the kernel crate that the build script compiled with
//! `gpu_builder::PtxBuilder`.
#![deny(missing_docs)]

pub mod backend;
pub mod emulator;
pub mod error;
pub mod gpu;
pub mod l2;
mod launch_check;
pub mod timing;
mod value;

pub use backend::{
    Advice, Backend, Buffer, TensorMap, Texture, TextureObject, Transfer, Value, checked_launch,
    checked_launch_within, runs,
};
pub use emulator::{CountingEmulator, Emulator, HostBuffer};
pub use error::{Error, Result};
pub use gpu::{DeviceBuffer, Gpu, Ptx};
pub use gpu_emulator::BlockOrder;
pub use gpu_std::Placement;
pub use l2::{PersistingL2, PersistingWindow};
pub use timing::{Runs, Timing};

/// The PTX that `gpu_builder::PtxBuilder` compiled from kernel crate
/// `name` in this crate's build script, embedded: every build, as a
/// [`Ptx`].
#[macro_export]
macro_rules! include_ptx {
    ($name:literal) => {
        $crate::Ptx {
            sm75: include_str!(concat!(env!("OUT_DIR"), "/", $name, ".ptx")),
            sm80: include_str!(concat!(env!("OUT_DIR"), "/", $name, "_sm80.ptx")),
            sm90: include_str!(concat!(env!("OUT_DIR"), "/", $name, "_sm90.ptx")),
            sm90a: include_str!(concat!(env!("OUT_DIR"), "/", $name, "_sm90a.ptx")),
        }
    };
}
