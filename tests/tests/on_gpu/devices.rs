//! The GPU, opened once for every trial: with the kernels' PTX, with the
//! sm_75 build a Turing GPU loads, and launching the CUDA C++ twins.

use std::sync::OnceLock;

use libtest_mimic::Failed;
use locality::Gpu;

pub fn gpu() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| locality::gpu::open(0).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// The GPU with the kernels built for sm_75, as a Turing GPU loads them.
pub fn gpu_sm75() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        Gpu::with_ptx(0, locality::gpu::PTX.sm75)
            .map(|gpu| gpu.with_twins(kernels::CUDA_TWINS))
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| e.clone().into())
}

/// The GPU launching the CUDA C++ twins.
pub fn twin() -> Result<&'static Gpu, Failed> {
    static TWIN: OnceLock<Result<Gpu, String>> = OnceLock::new();
    TWIN.get_or_init(|| {
        gpu()
            .map_err(|e| format!("{e:?}"))?
            .twin()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| e.clone().into())
}

pub fn failed(error: impl std::fmt::Display) -> Failed {
    error.to_string().into()
}
