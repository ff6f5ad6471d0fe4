//! The GPU: one CUDA context, one stream, and a module of kernels loaded
//! from PTX that `gpu-builder` compiled, with each kernel's resources as
//! the driver reports them; and, where NVRTC is there and the caller gives
//! them, the kernels' CUDA C++ twins compiled for this GPU.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute as Attribute;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtrMut, DriverError,
    LaunchConfig, result, sys,
};
use cudarc::nvrtc::{CompileOptions, Ptx as NvrtcPtx, compile_ptx_with_opts};
use gpu_std::Kernel;
use serde::{Deserialize, Serialize};

use crate::backend::{Backend, DeviceMemory, Params, Transfer, Value, checked_launch};
use crate::error::{During, Error, Result};
use crate::timing::{self, Runs};

/// A kernel crate's PTX, as `gpu-builder` compiles it: one build for every
/// GPU from Turing (compute capability 7.5) on, one for Ampere (8.0) on,
/// where `gpu-std`'s asynchronous copies are `cp.async` instead of a load
/// and a store. [`include_ptx!`](crate::include_ptx) embeds both.
#[derive(Clone, Copy, Debug)]
pub struct Ptx {
    /// The build for `sm_75`.
    pub sm75: &'static str,
    /// The build for `sm_80`.
    pub sm80: &'static str,
}

impl Ptx {
    /// The build for a GPU of compute capability `major`.`minor`: the
    /// newest it can run.
    pub fn for_capability(&self, (major, minor): (i32, i32)) -> &'static str {
        if (major, minor) >= (8, 0) {
            self.sm80
        } else {
            self.sm75
        }
    }
}

/// Every entry point `ptx` defines, in the order it defines them.
pub fn entry_points(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.lines()
        .filter_map(|line| line.strip_prefix(".visible .entry "))
        .map(|rest| rest.trim_end_matches('('))
}

/// `ptx` with kernel `entry` compiled under a cap of `registers` registers
/// a thread: the `.maxnreg` directive on its entry, as CUDA C++'s
/// `__maxnreg__` or nvcc's `-maxrregcount` asks for; `None` where `ptx`
/// has no such entry.
pub fn with_register_cap(ptx: &str, entry: &str, registers: u32) -> Option<String> {
    let start = ptx.find(&format!(".entry {entry}("))?;
    let body = start + ptx[start..].find("\n{")?;
    Some(format!(
        "{}\n.maxnreg {registers}{}",
        &ptx[..body],
        &ptx[body..]
    ))
}

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
    fn most(self, other: Self) -> Self {
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
struct Functions {
    module: Arc<CudaModule>,
    kernels: HashMap<String, (CudaFunction, Resources)>,
}

/// Which implementation of the kernels a [`Gpu`] launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// The Rust kernels, from their PTX.
    Rust,
    /// Their CUDA C++ twins, compiled with NVRTC.
    CudaCpp,
}

/// A GPU ready to run the kernels of one PTX module.
#[derive(Clone)]
pub struct Gpu {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ptx: Arc<str>,
    kernels: Arc<Functions>,
    /// The twins, or why there are none.
    twins: Arc<Result<Functions, String>>,
    language: Language,
    name: String,
}

impl Gpu {
    /// Opens GPU `ordinal` and loads every kernel of the newest build of
    /// `ptx` it runs, with its resources, so that a kernel the driver
    /// cannot compile fails here and not in the middle of a run.
    pub fn new(ordinal: usize, ptx: &Ptx) -> Result<Self> {
        let context = open(ordinal)?;
        let capability = compute_capability(&context).during("reading the compute capability")?;
        Self::with_context(context, ptx.for_capability(capability))
    }

    /// GPU `ordinal` with the kernels of exactly `ptx`, one build's text:
    /// the sm_75 build on a newer GPU runs what a Turing GPU runs, copies
    /// without `cp.async` included.
    pub fn with_ptx(ordinal: usize, ptx: &str) -> Result<Self> {
        Self::with_context(open(ordinal)?, ptx)
    }

    fn with_context(context: Arc<CudaContext>, ptx: &str) -> Result<Self> {
        let stream = context.default_stream();
        let kernels = load_module(&context, NvrtcPtx::from_src(ptx), entry_points(ptx))?;
        let name = context.name().during("reading the GPU's name")?;
        Ok(Self {
            context,
            stream,
            ptx: ptx.into(),
            kernels: Arc::new(kernels),
            twins: Arc::new(Err("none were given (Gpu::with_twins)".to_string())),
            language: Language::Rust,
            name,
        })
    }

    /// The same GPU with the kernels' CUDA C++ twins, compiled from
    /// `source` with NVRTC for this GPU: each twin `extern "C"` under its
    /// Rust kernel's entry-point name. Where they cannot be compiled,
    /// [`Gpu::twin`] says why.
    pub fn with_twins(self, source: &str) -> Self {
        let twins = compile_twins(&self.context, source, &self.ptx);
        Self {
            twins: Arc::new(twins),
            ..self
        }
    }

    /// The PTX this GPU's kernels were loaded from.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The same GPU, stream and buffers, launching the kernels' CUDA C++
    /// twins instead of the Rust kernels; an error says why there are none.
    pub fn twin(&self) -> Result<Gpu> {
        match self.twins.as_ref() {
            Ok(_) => Ok(Self {
                language: Language::CudaCpp,
                ..self.clone()
            }),
            Err(reason) => Err(Error::NoTwins(reason.clone())),
        }
    }

    fn functions(&self) -> Result<&Functions> {
        match (self.language, self.twins.as_ref()) {
            (Language::Rust, _) => Ok(&self.kernels),
            (Language::CudaCpp, Ok(twins)) => Ok(twins),
            (Language::CudaCpp, Err(reason)) => Err(Error::NoTwins(reason.clone())),
        }
    }

    /// The GPU's marketing name, as the driver reports it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The GPU's ordinal, as CUDA numbers devices.
    pub fn ordinal(&self) -> usize {
        self.context.ordinal()
    }

    /// The one stream every launch, copy and timing of this GPU goes
    /// through, for libraries such as cuBLAS to join.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// What the kernel with the entry points `entries` (or its twin, on a
    /// twin) takes of this GPU: for a generic kernel, the most any of its
    /// instances takes.
    pub fn resources(&self, entries: &[&'static str]) -> Result<Resources> {
        let functions = self.functions()?;
        let each = entries.iter().map(|&entry| {
            let found = functions.kernels.get(entry);
            found
                .map(|(_, resources)| *resources)
                .ok_or(Error::MissingKernel(entry))
        });
        each.reduce(|most, resources| Ok(most?.most(resources?)))
            .unwrap_or(Err(Error::MissingKernel("a kernel of no entry points")))
    }

    /// The GPU's memory, in bytes.
    pub fn total_bytes(&self) -> Result<usize> {
        self.context
            .total_mem()
            .during("reading the GPU's memory size")
    }

    /// The GPU memory free now, in bytes.
    pub fn free_bytes(&self) -> Result<usize> {
        let (free, _total) = self
            .context
            .mem_get_info()
            .during("reading the GPU's free memory")?;
        Ok(free)
    }

    /// Enqueues a copy of `source` into `destination`, of the same length,
    /// on the GPU's stream.
    pub fn copy<T: Value>(
        &self,
        source: &CudaSlice<T>,
        destination: &mut CudaSlice<T>,
    ) -> Result<()> {
        if source.len() != destination.len() {
            return Err(Error::LengthMismatch {
                what: "the copy's destination",
                expected: source.len(),
                actual: destination.len(),
            });
        }
        self.stream
            .memcpy_dtod(source, destination)
            .during("copying on the GPU")
    }

    /// A device attribute, such as the maximum grid size.
    pub fn attribute(&self, attribute: sys::CUdevice_attribute) -> Result<i32> {
        self.context
            .attribute(attribute)
            .during("reading a device attribute")
    }

    /// Waits for all work on the stream, surfacing errors of earlier launches.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().during("running a kernel")
    }
}

impl Backend for Gpu {
    type Memory = DeviceMemory;

    fn description(&self) -> String {
        match self.language {
            Language::Rust => self.name.clone(),
            Language::CudaCpp => format!("{} (CUDA C++ twins)", self.name),
        }
    }

    fn upload<T: Value>(&self, what: &'static str, data: &[T]) -> Result<CudaSlice<T>> {
        let mut buffer = self.alloc(what, data.len())?;
        self.overwrite(data, &mut buffer)?;
        Ok(buffer)
    }

    fn len<T: Value>(&self, buffer: &CudaSlice<T>) -> usize {
        buffer.len()
    }

    fn alloc<T: Value>(&self, what: &'static str, len: usize) -> Result<CudaSlice<T>> {
        let bytes = len.saturating_mul(size_of::<T>());
        // SAFETY: the contents are poisoned right below, before any read.
        let mut buffer =
            unsafe { self.stream.alloc::<T>(len) }.map_err(|e| out_of_memory(e, what, bytes))?;
        self.poison(&mut buffer)?;
        Ok(buffer)
    }

    /// Sets every byte to 0xFF with one memset, which is [`Value::POISON`]
    /// for every element type.
    fn poison<T: Value>(&self, buffer: &mut CudaSlice<T>) -> Result<()> {
        let bytes = buffer.num_bytes();
        let (pointer, _record) = buffer.device_ptr_mut(&self.stream);
        // SAFETY: the range is exactly the buffer's, on the buffer's stream.
        unsafe { result::memset_d8_async(pointer, 0xFF, bytes, self.stream.cu_stream()) }
            .during("poisoning a buffer")
    }

    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut CudaSlice<T>) -> Result<()> {
        self.stream
            .memcpy_htod(data, buffer)
            .during("copying to the GPU")
    }

    fn download<T: Value>(&self, buffer: &CudaSlice<T>) -> Result<Vec<T>> {
        self.stream
            .clone_dtoh(buffer)
            .during("copying from the GPU")
    }

    fn set_constant(&self, name: &'static str, values: &[f32]) -> Result<()> {
        let module = &self.functions()?.module;
        let mut symbol = module
            .get_global(name, &self.stream)
            .during("finding a constant array")?;
        let bytes: Vec<u8> = values
            .iter()
            .flat_map(|value| value.to_ne_bytes())
            .collect();
        if bytes.len() != symbol.len() {
            return Err(Error::LengthMismatch {
                what: name,
                expected: symbol.len() / 4,
                actual: values.len(),
            });
        }
        self.stream
            .memcpy_htod(&bytes, &mut symbol)
            .during("copying to a constant array")
    }

    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, DeviceMemory>,
    ) -> Result<()> {
        let launch = checked_launch(kernel, problem)?;
        let elements = A::largest(&args);
        if self.language == Language::CudaCpp && elements > i32::MAX as usize {
            return Err(Error::TwinTooLarge {
                kernel: kernel.name,
                elements,
            });
        }
        let entry = A::entry(kernel, &args)?;
        let (function, _) = self
            .functions()?
            .kernels
            .get(entry)
            .ok_or(Error::MissingKernel(entry))?;
        let mut builder = self.stream.launch_builder(function);
        A::push(&args, &mut builder);
        let config = LaunchConfig {
            grid_dim: launch.grid,
            block_dim: launch.block,
            shared_mem_bytes: launch.shared_bytes,
        };
        // SAFETY: the arguments have the kernel's own parameter types, in
        // order; the caller vouches for the rest of the kernel's contract,
        // and the launch shape is the contract's own.
        unsafe { builder.launch(config) }.during("launching a kernel")?;
        Ok(())
    }

    fn median_ms<E: From<Error>>(
        &self,
        runs: Runs,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<f64, E> {
        timing::gpu_median_ms(&self.stream, runs, launch)
    }

    fn transfer_ms(&self, bytes: usize, transfer: Transfer, runs: Runs) -> Result<Option<f64>> {
        let mut device = self.alloc::<u8>("a transfer's device buffer", bytes)?;
        let copy = "copying between the host and the GPU";
        let ms = if transfer.pinned {
            // SAFETY: the pinned buffer is written below before it is read.
            let mut host = unsafe { self.stream.context().alloc_pinned::<u8>(bytes) }
                .map_err(|source| out_of_memory(source, "a pinned host buffer", bytes))?;
            host.as_mut_slice().during(copy)?.fill(1);
            timing::gpu_median_ms(&self.stream, runs, || match transfer.to_device {
                true => self.stream.memcpy_htod(&host, &mut device).during(copy),
                false => self.stream.memcpy_dtoh(&device, &mut host).during(copy),
            })?
        } else {
            let mut host = vec![1u8; bytes];
            timing::gpu_median_ms(&self.stream, runs, || match transfer.to_device {
                true => self.stream.memcpy_htod(&host, &mut device).during(copy),
                false => self.stream.memcpy_dtoh(&device, &mut host).during(copy),
            })?
        };
        Ok(Some(ms))
    }
}

/// The functions `names` of `ptx`, loaded, with their resources.
fn load_module<'a>(
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
fn compile_twins(context: &Arc<CudaContext>, source: &str, ptx: &str) -> Result<Functions, String> {
    let (major, minor) = compute_capability(context).map_err(|error| error.to_string())?;
    // SAFETY: only tries to open the library; no NVRTC function is called.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("NVRTC not found: libnvrtc could not be loaded".to_string());
    }
    let options = CompileOptions {
        options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
        name: Some("twins.cu".to_string()),
        ..CompileOptions::default()
    };
    let twins = compile_ptx_with_opts(source, options)
        .map_err(|error| format!("NVRTC could not compile them: {error}"))?;
    load_module(context, twins, entry_points(ptx)).map_err(|error| error.to_string())
}

/// GPU `ordinal`'s context, once there is a driver and such a GPU.
fn open(ordinal: usize) -> Result<Arc<CudaContext>> {
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
fn compute_capability(context: &Arc<CudaContext>) -> Result<(i32, i32), DriverError> {
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    Ok((context.attribute(MAJOR)?, context.attribute(MINOR)?))
}

fn out_of_memory(error: DriverError, what: &'static str, bytes: usize) -> Error {
    match error.0 {
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::OutOfMemory { what, bytes },
        _ => Error::Cuda {
            action: "allocating GPU memory",
            source: error,
        },
    }
}
