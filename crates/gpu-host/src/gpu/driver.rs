//! What the GPU asks of the CUDA driver and NVRTC: whether there is a GPU
//! at all, a GPU's context and compute capability, and a module of kernels
//! loaded with each kernel's resources, from PTX or from CUDA C++ twins
//! compiled for this GPU.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute as Attribute;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError, sys};
use cudarc::nvrtc::{CompileOptions, Ptx as NvrtcPtx, compile_ptx_with_opts};
use gpu_std::Launch;
use serde::{Deserialize, Serialize};

use super::ptx::entry_points;
use crate::error::{During, Error, Result};

/// Whether this machine can run the GPU kernels at all: a CUDA driver that
/// loads and at least one GPU. Never panics.
pub fn availability() -> Result<()> {
    // SAFETY: only tries to open the driver library; no CUDA call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::NoDriver);
    }
    match CudaContext::device_count().during("counting GPUs")? {
        0 => Err(Error::NoDevice),
        _ => Ok(()),
    }
}

/// How many GPUs the driver finds: 0 where there is no driver.
pub fn device_count() -> Result<usize> {
    // SAFETY: only tries to open the driver library; no CUDA call is made.
    if !unsafe { sys::is_culib_present() } {
        return Ok(0);
    }
    Ok(CudaContext::device_count().during("counting GPUs")? as usize)
}

/// What a compiled kernel takes of the GPU, as the driver reports it once
/// the PTX is compiled for this GPU (ptxas's register allocation and spills
/// included, which the PTX itself cannot show).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread: spills and arrays indexed at run time.
    pub local_bytes: u32,
    /// Statically sized shared memory per block (launch-sized comes on top).
    pub static_shared_bytes: u32,
    /// The most threads a block of this kernel can have.
    pub max_threads_per_block: u32,
}

impl Resources {
    /// The most of each resource of `self` and `other`; the fewer threads
    /// a block.
    pub(super) fn most(self, other: Self) -> Self {
        Self {
            registers: self.registers.max(other.registers),
            local_bytes: self.local_bytes.max(other.local_bytes),
            static_shared_bytes: self.static_shared_bytes.max(other.static_shared_bytes),
            max_threads_per_block: self.max_threads_per_block.min(other.max_threads_per_block),
        }
    }

    fn read(function: &CudaFunction) -> Result<Self> {
        let get = |attribute| {
            function
                .get_attribute(attribute)
                .during("reading a kernel's attributes")
                .map(|value| value.max(0) as u32)
        };
        Ok(Self {
            registers: get(Attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            local_bytes: get(Attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            static_shared_bytes: get(Attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            max_threads_per_block: get(Attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        })
    }
}

/// A loaded module and its kernels, by entry-point name, with their
/// resources.
pub(super) struct Functions {
    pub(super) module: Arc<CudaModule>,
    pub(super) kernels: HashMap<String, (CudaFunction, Resources)>,
}

/// The functions `names` of `ptx`, loaded, with their resources.
pub(super) fn load_module<'a>(
    context: &Arc<CudaContext>,
    ptx: NvrtcPtx,
    names: impl Iterator<Item = &'a str>,
) -> Result<Functions> {
    let module = context
        .load_module(ptx)
        .during("loading a module of kernels")?;
    let kernels = names
        .map(|name| {
            let function = module
                .load_function(name)
                .during("finding a kernel in a module")?;
            let resources = Resources::read(&function)?;
            Ok((name.to_string(), (function, resources)))
        })
        .collect::<Result<_>>()?;
    Ok(Functions { module, kernels })
}

/// The CUDA C++ twins of `source`, compiled with NVRTC for this GPU's
/// architecture and loaded under the entry points of `ptx`; or why they
/// cannot be.
pub(super) fn compile_twins(
    context: &Arc<CudaContext>,
    source: &str,
    ptx: &str,
) -> Result<Functions, String> {
    let (major, minor) = compute_capability(context).map_err(|error| error.to_string())?;
    // SAFETY: only tries to open the library; no NVRTC function is called.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("NVRTC not found: libnvrtc could not be loaded".to_string());
    }
    // Arch-specific from Hopper on, as the Rust kernels' build is there:
    // `wgmma` and `setmaxnreg` exist only in `compute_90a`.
    let specific = if major >= 9 { "a" } else { "" };
    let options = CompileOptions {
        options: vec![format!(
            "--gpu-architecture=compute_{major}{minor}{specific}"
        )],
        name: Some("twins.cu".to_string()),
        ..CompileOptions::default()
    };
    let twins = compile_ptx_with_opts(source, options)
        .map_err(|error| format!("NVRTC could not compile them: {error}"))?;
    load_module(context, twins, entry_points(ptx)).map_err(|error| error.to_string())
}

/// GPU `ordinal`'s context, once there is a driver and such a GPU.
pub(super) fn open(ordinal: usize) -> Result<Arc<CudaContext>> {
    availability()?;
    let available = CudaContext::device_count().during("counting GPUs")? as usize;
    if ordinal >= available {
        return Err(Error::NoSuchDevice {
            requested: ordinal,
            available,
        });
    }
    let context = CudaContext::new(ordinal).during("creating the CUDA context")?;
    // One stream and no other: cudarc's per-buffer events, which order
    // work across streams, would only add launch overhead.
    // SAFETY: called before any buffer or stream is created.
    unsafe { context.disable_event_tracking() };
    Ok(context)
}

/// The GPU's compute capability, major and minor.
pub(super) fn compute_capability(context: &Arc<CudaContext>) -> Result<(i32, i32), DriverError> {
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    Ok((context.attribute(MAJOR)?, context.attribute(MINOR)?))
}

/// Launches `function` on `stream` in the shape of `launch`, with the
/// arguments `words` ([`Params::words`](crate::Params::words)):
/// `cuLaunchKernelEx`, whose attribute groups the blocks in clusters where
/// the launch has them.
///
/// # Safety
/// The words are the kernel's parameters, in order, and the launch keeps
/// the kernel's contract.
pub(super) unsafe fn launch(
    stream: &CudaStream,
    function: &CudaFunction,
    launch: &Launch,
    words: &mut [u64],
) -> std::result::Result<(), DriverError> {
    let mut parameters: Vec<*mut c_void> = words
        .iter_mut()
        .map(|word| std::ptr::from_mut(word).cast())
        .collect();
    let (x, y, z) = launch.cluster;
    let mut cluster = sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        pad: [0; 4],
        value: sys::CUlaunchAttributeValue {
            clusterDim: sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x, y, z },
        },
    };
    let config = sys::CUlaunchConfig {
        gridDimX: launch.grid.0,
        gridDimY: launch.grid.1,
        gridDimZ: launch.grid.2,
        blockDimX: launch.block.0,
        blockDimY: launch.block.1,
        blockDimZ: launch.block.2,
        sharedMemBytes: launch.shared_bytes,
        hStream: stream.cu_stream(),
        attrs: &raw mut cluster,
        numAttrs: u32::from(launch.cluster != (1, 1, 1)),
    };
    stream.context().bind_to_thread()?;
    // SAFETY: `parameters` points at one word per parameter, alive for
    // the call, which copies them; the rest is this function's contract.
    unsafe {
        sys::cuLaunchKernelEx(
            &raw const config,
            function.cu_function(),
            parameters.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
}
