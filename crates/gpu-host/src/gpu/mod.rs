//! The GPU: one CUDA context, one stream, and a module of kernels loaded
//! from PTX that `gpu-builder` compiled, with each kernel's resources as
//! the driver reports them; and, where NVRTC is there and the caller gives
//! them, the kernels' CUDA C++ twins compiled for this GPU.

mod buffer;
mod collective;
mod driver;
mod l2;
mod peer;
mod ptx;
mod tensor;
mod texture;

use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaEvent, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice,
    DriverError, result, sys,
};
use cudarc::nvrtc::Ptx as NvrtcPtx;
use gpu_std::tensor::{MapElement, TiledMap};
use gpu_std::{Kernel, Placement, Sampling, shared};

use crate::backend::{
    Advice, Backend, DeviceMemory, Memory, Params, TensorMap, Transfer, Value, check_allocatable,
    check_overwrite, check_tensor_map, check_texture, checked_launch_within, require_managed, runs,
};
use crate::error::{During, Error, Result};
use crate::l2::{PersistingL2, PersistingWindow, WindowHolder};
use crate::timing::{self, Runs, Timing};
pub use buffer::DeviceBuffer;
pub use collective::Communicators;
use driver::{Functions, compile_twins, compute_capability, load_module, open};
pub use driver::{Resources, availability, device_count};
use peer::Side;
pub use ptx::{Ptx, arch_specific, entry_points, target, with_register_cap};
pub use texture::DeviceTexture;

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
    /// The compute capability the PTX is for, and the GPU's.
    build: (u32, u32),
    /// Whether the PTX is the arch-specific build for `build`.
    build_arch_specific: bool,
    device: (u32, u32),
    /// Who holds the stream's persisting window.
    persisting: Arc<WindowHolder>,
    /// The event another GPU's stream waits on to follow this one's work
    /// ([`Gpu::wait_for`]), recorded afresh each time: one event, so that
    /// ordering two GPUs costs a record and a wait, no allocation.
    marker: Arc<CudaEvent>,
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
        let (major, minor) =
            compute_capability(&context).during("reading the compute capability")?;
        let device = (major as u32, minor as u32);
        let build = target(ptx).ok_or(Error::NotPtx)?;
        let build_arch_specific = arch_specific(ptx);
        let stream = context.default_stream();
        let kernels = load_module(&context, NvrtcPtx::from_src(ptx), entry_points(ptx))?;
        let name = context.name().during("reading the GPU's name")?;
        let marker = context
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .during("creating an event")?;
        Ok(Self {
            context,
            stream,
            ptx: ptx.into(),
            kernels: Arc::new(kernels),
            twins: Arc::new(Err("none were given (Gpu::with_twins)".to_string())),
            language: Language::Rust,
            name,
            build,
            build_arch_specific,
            device,
            persisting: Arc::default(),
            marker: Arc::new(marker),
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
        source: &DeviceBuffer<T>,
        destination: &mut DeviceBuffer<T>,
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

    /// The shared memory a block may have, launch-sized and static
    /// together, once its kernel opts in
    /// (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`): 227 KiB
    /// on an H100.
    pub fn shared_opt_in_limit(&self) -> Result<u64> {
        let limit = self.attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?;
        Ok(u64::try_from(limit).unwrap_or(0))
    }

    /// Lets `function` (of the kernel `kernel`, with `resources`) have
    /// `launch_sized` bytes of launch-sized shared memory: past 48 KiB
    /// with its static arrays, a block gets them only once the kernel
    /// opts in (`cudaFuncSetAttribute(…MaxDynamicSharedMemorySize…)`), up
    /// to the device's opt-in limit, which a larger request exceeds:
    /// refused here, naming both, rather than as the launch's bare
    /// `CUDA_ERROR_INVALID_VALUE`.
    fn opt_in_shared(
        &self,
        kernel: &'static str,
        function: &cudarc::driver::CudaFunction,
        resources: &Resources,
        launch_sized: u32,
    ) -> Result<()> {
        let bytes = u64::from(launch_sized) + u64::from(resources.static_shared_bytes);
        if bytes <= shared::LIMIT_BYTES {
            return Ok(());
        }
        let limit = self.shared_opt_in_limit()?;
        if bytes > limit {
            return Err(Error::SharedBeyondOptIn {
                kernel,
                launch_sized,
                static_bytes: resources.static_shared_bytes,
                limit,
            });
        }
        let attribute = sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
        self.context
            .bind_to_thread()
            .during("opting a kernel in to more shared memory")?;
        function
            .set_attribute(attribute, launch_sized as i32)
            .during("opting a kernel in to more shared memory")
    }

    /// The bytes of the L2 set aside for persisting lines now: 0 but
    /// while a [`PersistingWindow`] lives.
    pub fn persisting_carve_out(&self) -> Result<usize> {
        l2::carve_out(&self.context)
    }

    /// Waits for all work on the stream, surfacing errors of earlier launches.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().during("running a kernel")
    }
}

impl Memory for DeviceMemory {
    type Buffer<T: Value> = DeviceBuffer<T>;
    type Texture = DeviceTexture;
    type EncodedMap = CudaSlice<u8>;

    fn placement<T: Value>(buffer: &DeviceBuffer<T>) -> Placement {
        buffer.placement()
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

    fn len<T: Value>(&self, buffer: &DeviceBuffer<T>) -> usize {
        buffer.len()
    }

    fn alloc_in<T: Value>(
        &self,
        what: &'static str,
        len: usize,
        placement: Placement,
    ) -> Result<DeviceBuffer<T>> {
        check_allocatable(placement, false)?;
        let bytes = len.saturating_mul(size_of::<T>());
        if placement == Placement::Managed {
            buffer::check_managed(what, bytes, self.free_bytes()?)?;
        }
        // SAFETY: the contents are poisoned right below, before any read.
        let mut buffer = match placement {
            Placement::Device => unsafe { self.stream.alloc::<T>(len) }.map(DeviceBuffer::device),
            _ => unsafe { DeviceBuffer::reachable(&self.stream, placement, len) },
        }
        .map_err(|e| out_of_memory(e, what, bytes))?;
        self.poison(&mut buffer)?;
        Ok(buffer)
    }

    /// Sets every byte to 0xFF, which is [`Value::POISON`] for every
    /// element type: one memset on the GPU for a device buffer, the host's
    /// own writes for one it reaches in place, whose pages stay where
    /// they are.
    fn poison<T: Value>(&self, buffer: &mut DeviceBuffer<T>) -> Result<()> {
        if let Some(elements) = buffer.host_mut()? {
            elements.fill(T::POISON);
            return Ok(());
        }
        let bytes = buffer.num_bytes();
        self.bind("poisoning a buffer")?;
        let (pointer, _record) = buffer.device_ptr_mut(&self.stream);
        // SAFETY: the range is exactly the buffer's, on the buffer's stream.
        unsafe { result::memset_d8_async(pointer, 0xFF, bytes, self.stream.cu_stream()) }
            .during("poisoning a buffer")
    }

    /// A copy to the GPU for a device buffer; the host's own writes, once
    /// the stream's work is done, for one it reaches in place.
    fn overwrite<T: Value>(&self, data: &[T], buffer: &mut DeviceBuffer<T>) -> Result<()> {
        check_overwrite(buffer.len(), data)?;
        match buffer.host_mut()? {
            Some(elements) => {
                elements.copy_from_slice(data);
                Ok(())
            }
            None => self
                .stream
                .memcpy_htod(data, buffer)
                .during("copying to the GPU"),
        }
    }

    fn download<T: Value>(&self, buffer: &DeviceBuffer<T>) -> Result<Vec<T>> {
        match buffer.host()? {
            Some(elements) => Ok(elements.to_vec()),
            None => self
                .stream
                .clone_dtoh(buffer)
                .during("copying from the GPU"),
        }
    }

    fn prefetch<T: Value>(&self, buffer: &DeviceBuffer<T>, to_device: bool) -> Result<()> {
        let pointer = managed(buffer)?;
        let location = self.location(to_device);
        self.bind("prefetching managed memory")?;
        // SAFETY: the range is exactly the managed buffer's.
        unsafe {
            result::mem_prefetch_async(
                pointer,
                buffer.num_bytes(),
                location,
                self.stream.cu_stream(),
            )
        }
        .during("prefetching managed memory")
    }

    fn advise<T: Value>(&self, buffer: &DeviceBuffer<T>, advice: Advice) -> Result<()> {
        let pointer = managed(buffer)?;
        use sys::CUmem_advise::*;
        let (advice, location) = match advice {
            Advice::ReadMostly => (CU_MEM_ADVISE_SET_READ_MOSTLY, self.location(true)),
            Advice::PreferDevice => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, self.location(true)),
            Advice::PreferHost => (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, self.location(false)),
        };
        self.bind("advising the driver of managed memory")?;
        // SAFETY: the range is exactly the managed buffer's.
        unsafe { result::mem_advise(pointer, buffer.num_bytes(), advice, location) }
            .during("advising the driver of managed memory")
    }

    fn enable_peer_access(&self, peer: &Gpu) -> Result<()> {
        peer::enable(self.side(), peer.side())
    }

    fn reaches(&self, other: &Gpu) -> bool {
        peer::reaches(self.ordinal(), other.ordinal())
    }

    fn wait_for(&self, other: &Gpu) -> Result<()> {
        peer::follow(self.side(), other.side())
    }

    fn texture(
        &self,
        texels: &DeviceBuffer<f32>,
        width: usize,
        height: usize,
        sampling: Sampling,
    ) -> Result<DeviceTexture> {
        check_texture(texels.len(), width, height)?;
        texture::create(&self.context, &self.stream, texels, width, height, sampling)
    }

    fn tensor_map<T: MapElement + Value>(
        &self,
        source: DeviceBuffer<T>,
        shape: TiledMap,
    ) -> Result<TensorMap<DeviceMemory, T>> {
        check_tensor_map::<T>(source.len(), shape)?;
        let encoded = tensor::encode(&self.context, &self.stream, &source, shape)?;
        Ok(TensorMap::new(source, shape, encoded))
    }

    fn persisting_l2(&self) -> Result<Option<PersistingL2>> {
        l2::limits(&self.context)
    }

    fn persist<T: Value>(
        &self,
        buffer: &DeviceBuffer<T>,
        carve_out: usize,
    ) -> Result<PersistingWindow> {
        let (base, _record) = buffer.device_ptr(&self.stream);
        let window = (base, buffer.num_bytes());
        l2::persist(
            &self.context,
            &self.stream,
            &self.persisting,
            window,
            carve_out,
        )
    }

    /// The PTX build's for the Rust kernels, the GPU's own for the twins,
    /// which NVRTC compiles for it.
    fn capability(&self) -> Option<(u32, u32)> {
        Some(match self.language {
            Language::Rust => self.build,
            Language::CudaCpp => self.device,
        })
    }

    /// The PTX build's, for the Rust kernels; for the twins, whether NVRTC
    /// compiles for the GPU's arch-specific target (from 9.0 on).
    fn arch_specific(&self) -> bool {
        match self.language {
            Language::Rust => self.build_arch_specific,
            Language::CudaCpp => self.device.0 >= 9,
        }
    }

    fn set_constant<T: Value>(&self, name: &'static str, values: &[T]) -> Result<()> {
        let module = &self.functions()?.module;
        let mut symbol = module
            .get_global(name, &self.stream)
            .during("finding a constant array")?;
        // SAFETY: `DeviceRepr` vouches that a `T`'s bytes are what the GPU
        // reads, as cudarc's own copies of a `&[T]` assume.
        let bytes = unsafe {
            std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values))
        };
        if bytes.len() != symbol.len() {
            return Err(Error::LengthMismatch {
                what: name,
                expected: symbol.len() / size_of::<T>(),
                actual: values.len(),
            });
        }
        self.stream
            .memcpy_htod(bytes, &mut symbol)
            .during("copying to a constant array")
    }

    unsafe fn launch<A: Params, P>(
        &self,
        kernel: &Kernel<A, P>,
        problem: &P,
        args: A::Host<'_, DeviceMemory>,
    ) -> Result<()> {
        // The device's own opt-in limit, checked below with the static
        // arrays, rather than the portable 48 KiB.
        let launch = checked_launch_within(kernel, problem, u64::from(u32::MAX))?;
        runs(self, kernel)?;
        let unreached = A::owners(&args)
            .into_iter()
            .find(|&owner| !peer::reaches(self.ordinal(), owner));
        if let Some(owner) = unreached {
            return Err(Error::PeerUnreachable {
                from: self.ordinal(),
                to: owner,
                why: "a buffer of the second is an argument, and peer access to it was never \
                      enabled (Backend::enable_peer_access)",
            });
        }
        let elements = A::largest(&args);
        if self.language == Language::CudaCpp && elements > i32::MAX as usize {
            return Err(Error::TwinTooLarge {
                kernel: kernel.name,
                elements,
            });
        }
        let entry = A::entry(kernel, &args)?;
        let (function, resources) = self
            .functions()?
            .kernels
            .get(entry)
            .ok_or(Error::MissingKernel(entry))?;
        self.opt_in_shared(kernel.name, function, resources, launch.shared_bytes)?;
        let mut words = A::words(&args, &self.stream);
        // SAFETY: the arguments have the kernel's own parameter types, in
        // order; the caller vouches for the rest of the kernel's contract,
        // and the launch shape is the contract's own.
        unsafe { driver::launch(&self.stream, function, &launch, &mut words) }
            .during("launching a kernel")
    }

    fn timing_after<E: From<Error>>(
        &self,
        runs: Runs,
        setup: impl FnMut() -> Result<(), E>,
        launch: impl FnMut() -> Result<(), E>,
    ) -> Result<Timing, E> {
        timing::gpu_timing_after(&self.stream, runs, setup, launch)
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

impl Gpu {
    /// Makes this GPU's context the thread's current one, as every call
    /// to the driver that takes no context needs where a thread drives
    /// two GPUs.
    fn bind(&self, action: &'static str) -> Result<()> {
        self.context.bind_to_thread().during(action)
    }

    /// This GPU, or the host.
    fn location(&self, device: bool) -> sys::CUmemLocation {
        peer::location(self.ordinal(), device)
    }

    /// What the functions of two GPUs need of this one.
    fn side(&self) -> Side<'_> {
        Side {
            context: &self.context,
            stream: &self.stream,
            marker: &self.marker,
        }
    }

    /// Whether this GPU's kernels can reach `peer`'s memory, as the driver
    /// says (`cuDeviceCanAccessPeer`); a GPU is no peer of itself.
    pub fn can_access_peer(&self, peer: &Gpu) -> Result<bool> {
        peer::can_access(self.side(), peer.side())
    }

    /// Enqueues a copy of `source`, a buffer of `peer`, into
    /// `destination`, of the same length, on this GPU's stream
    /// (`cuMemcpyPeerAsync`), after `peer`'s work so far: the copy engines
    /// move it across the link, no kernel.
    pub fn copy_from_peer<T: Value>(
        &self,
        peer: &Gpu,
        source: &DeviceBuffer<T>,
        destination: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        peer::copy_from(self.side(), peer.side(), source, destination)
    }
}

/// The timing of `launch`, which enqueues work on every GPU of `gpus`, as
/// one, from the earliest start to the latest end
/// ([`Backend::wait_for`] orders them).
pub fn timing_together<E: From<Error>>(
    gpus: &[&Gpu],
    runs: Runs,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<Timing, E> {
    let sides: Vec<Side<'_>> = gpus.iter().map(|gpu| gpu.side()).collect();
    peer::timing_together(&sides, runs, launch)
}

/// A managed buffer's device pointer; a buffer in any other placement is
/// refused, as the driver would refuse it.
fn managed<T>(buffer: &DeviceBuffer<T>) -> Result<sys::CUdeviceptr> {
    require_managed(buffer.placement())?;
    Ok(buffer.device_ptr(buffer.stream()).0)
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
