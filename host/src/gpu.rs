//! The project's kernels on a GPU: the PTX that the build script compiled
//! from the `kernels` crate, and the kernels' CUDA C++ twins.

use gpu_host::{Gpu, Ptx};

use crate::error::Result;

/// Both builds of the `kernels` crate's PTX.
pub const PTX: Ptx = gpu_host::include_ptx!("kernels");

/// GPU `ordinal` with every kernel of the project loaded, and its twins
/// compiled where NVRTC is there.
pub fn open(ordinal: usize) -> Result<Gpu> {
    Ok(Gpu::new(ordinal, &PTX)?.with_twins(kernels::CUDA_TWINS))
}
