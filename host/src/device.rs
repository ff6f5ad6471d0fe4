//! The GPU: one CUDA context, one stream, and the kernels' module loaded
//! from the PTX that the build script compiled from the `gpu` crate.

use std::collections::HashMap;
use std::sync::Arc;

use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtrMut, DriverError, result, sys,
};
use cudarc::nvrtc::Ptx;

use crate::backend::{Backend, Value};
use crate::error::{During, Error, Result};
use crate::kernels;
use crate::kernels::blur::{Blur, ImageShape};
use crate::kernels::gemv::{Element, Gemv, GemvShape};
use crate::kernels::matmul::{Matmul, MatmulShape};
use crate::timing::{self, Runs};

/// The PTX of every kernel, compiled from the `gpu` crate at build time.
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"));

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

/// A GPU ready to run the kernels.
pub struct Gpu {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: HashMap<&'static str, CudaFunction>,
    name: String,
}

impl Gpu {
    /// Opens GPU `ordinal` and loads every kernel, so that a missing entry
    /// point fails here and not in the middle of a run.
    pub fn new(ordinal: usize) -> Result<Self> {
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
        let stream = context.default_stream();
        let module = context
            .load_module(Ptx::from_src(PTX))
            .during("loading the kernels' PTX")?;
        let functions = kernels::entry_points()
            .map(|name| {
                Ok((
                    name,
                    module
                        .load_function(name)
                        .during("finding a kernel in the PTX")?,
                ))
            })
            .collect::<Result<_>>()?;
        let name = context.name().during("reading the GPU's name")?;
        Ok(Self {
            context,
            stream,
            functions,
            name,
        })
    }

    /// The GPU's marketing name, as the driver reports it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    pub(crate) fn function(&self, entry_point: &'static str) -> &CudaFunction {
        &self.functions[entry_point]
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
    type Buffer<T: Value> = CudaSlice<T>;

    fn description(&self) -> String {
        self.name.clone()
    }

    fn upload<T: Value>(&self, what: &'static str, data: &[T]) -> Result<CudaSlice<T>> {
        let mut buffer = self.alloc(what, data.len())?;
        self.overwrite(data, &mut buffer)?;
        Ok(buffer)
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

    fn matmul(
        &self,
        kernel: Matmul,
        shape: MatmulShape,
        a: &CudaSlice<f32>,
        b: &CudaSlice<f32>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        kernels::matmul::matmul(self, kernel, shape, a, b, c)
    }

    fn gemv<T: Element>(
        &self,
        kernel: Gemv,
        shape: GemvShape,
        alpha: T,
        a: &CudaSlice<T>,
        x: &CudaSlice<T>,
        beta: T,
        y: &mut CudaSlice<T>,
    ) -> Result<()> {
        kernels::gemv::gemv(self, kernel, shape, alpha, a, x, beta, y)
    }

    fn blur(
        &self,
        kernel: Blur,
        image: ImageShape,
        radius: u32,
        input: &CudaSlice<u8>,
        output: &mut CudaSlice<u8>,
    ) -> Result<()> {
        kernels::blur::blur(self, kernel, image, radius, input, output)
    }

    fn median_ms(&self, runs: Runs, launch: impl FnMut() -> Result<()>) -> Result<f64> {
        timing::median_ms(self, runs, launch)
    }
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
