//! The GPU, opened once for every trial: with the kernels' PTX, with the
//! sm_75 build a Turing GPU loads, and launching the CUDA C++ twins; and
//! how the trials run the command line and report a failure.

use std::sync::OnceLock;

use clap::Parser;
use libtest_mimic::Failed;
use locality::Gpu;
use locality::cli::{Cli, Verdict};

pub fn gpu() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| locality::gpu::open(0).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// The GPU with the kernels' portable Hopper build, sm_90, as a GPU newer
/// than 9.0 loads it.
pub fn gpu_sm90() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::with_ptx(0, locality::gpu::PTX.sm90).map_err(|e| e.to_string()))
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

/// Runs the command line `args`, which must end with `expected`.
pub fn run_ending(args: &[&str], expected: Verdict) -> Result<(), Failed> {
    let cli = Cli::try_parse_from(args).map_err(failed)?;
    match locality::cli::run(&cli) {
        Ok(verdict) if verdict == expected => Ok(()),
        Ok(verdict) => Err(format!("the run ended {verdict:?}").into()),
        Err(error) => Err(failed(error)),
    }
}
