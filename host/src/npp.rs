//! NPP, what a CUDA C++ user calls for a box blur: its box filter
//! (`nppiFilterBoxBorder_8u_C{1,3,4}R_Ctx`), loaded at run time from the
//! CUDA toolkit's filtering library, as cuBLAS is, on the GPU's stream so
//! that the same events time it.
//!
//! NPP's filter replicates the image's edge pixels where a window hangs
//! over it; ours clip the window and average what is inside. The two agree
//! away from the border and differ within r pixels of it, so NPP is timed,
//! never compared sample by sample.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

use cudarc::driver::sys::CUdevice_attribute as Attribute;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use gpu_host::Gpu;
use gpu_host::gpu::DeviceBuffer;
use libloading::Library;

use crate::error::{Error, Result};

/// `NppiSize`: a width and a height in pixels.
#[repr(C)]
#[derive(Clone, Copy)]
struct Size {
    width: c_int,
    height: c_int,
}

/// `NppiPoint`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Point {
    x: c_int,
    y: c_int,
}

/// `NppStreamContext`: the stream NPP enqueues on and the device facts it
/// would otherwise query at every call.
#[repr(C)]
#[derive(Clone, Copy)]
struct StreamContext {
    stream: *mut c_void,
    device: c_int,
    multiprocessors: c_int,
    max_threads_per_multiprocessor: c_int,
    max_threads_per_block: c_int,
    shared_bytes_per_block: usize,
    compute_capability_major: c_int,
    compute_capability_minor: c_int,
    stream_flags: c_uint,
    reserved: c_int,
}

/// `NPP_BORDER_REPLICATE`.
const BORDER_REPLICATE: c_int = 2;

/// `nppiFilterBoxBorder_8u_C*R_Ctx`.
type FilterBoxBorder = unsafe extern "C" fn(
    source: *const u8,
    source_step: c_int,
    source_size: Size,
    source_offset: Point,
    destination: *mut u8,
    destination_step: c_int,
    region: Size,
    mask: Size,
    anchor: Point,
    border: c_int,
    context: StreamContext,
) -> c_int;

/// The library names tried, newest CUDA first.
const LIBRARIES: [&str; 3] = ["libnppif.so.13", "libnppif.so.12", "libnppif.so"];

/// The channel counts NPP has an 8-bit box filter for (none for 2).
const CHANNELS: [usize; 3] = [1, 3, 4];

/// NPP's box filters, one for each of `CHANNELS`, bound to a GPU's
/// stream.
pub struct Npp {
    filters: [FilterBoxBorder; CHANNELS.len()],
    context: StreamContext,
    stream: Arc<CudaStream>,
    /// Kept loaded while the filters are used.
    _library: Library,
}

impl Npp {
    /// Loads NPP's filtering library and reads what its stream context
    /// needs from `gpu`.
    pub fn open(gpu: &Gpu) -> Result<Self> {
        let library = Self::load()?;
        let filter = |channels: usize| -> Result<FilterBoxBorder> {
            let name = format!("nppiFilterBoxBorder_8u_C{channels}R_Ctx");
            // SAFETY: the symbol is declared in NPP's header with the
            // signature of `FilterBoxBorder`.
            unsafe { library.get::<FilterBoxBorder>(name.as_bytes()) }
                .map(|symbol| *symbol)
                .map_err(|_| Error::NoNpp)
        };
        let [one, three, four] = CHANNELS.map(filter);
        let filters = [one?, three?, four?];
        let attribute = |attribute| gpu.attribute(attribute);
        let context = StreamContext {
            stream: gpu.stream().cu_stream().cast(),
            device: c_int::try_from(gpu.ordinal()).map_err(|_| Error::NoNpp)?,
            multiprocessors: attribute(Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_multiprocessor: attribute(
                Attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )?,
            max_threads_per_block: attribute(Attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            shared_bytes_per_block: attribute(
                Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )? as usize,
            compute_capability_major: attribute(
                Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            )?,
            compute_capability_minor: attribute(
                Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )?,
            stream_flags: 0,
            reserved: 0,
        };
        Ok(Self {
            filters,
            context,
            stream: gpu.stream().clone(),
            _library: library,
        })
    }

    /// NPP's filtering library, or [`Error::NoNpp`].
    pub fn load() -> Result<Library> {
        // SAFETY: loading NVIDIA's library runs its initialisers, which
        // have no preconditions.
        LIBRARIES
            .iter()
            .find_map(|&name| unsafe { Library::new(name) }.ok())
            .ok_or(Error::NoNpp)
    }

    /// Whether NPP has a box filter for images of `channels` channels.
    pub fn supports(channels: usize) -> bool {
        CHANNELS.contains(&channels)
    }

    /// Enqueues NPP's box filter of `radius` over the `width`×`height`
    /// image of `channels` interleaved 8-bit channels in `input`, into
    /// `output`, edges replicated.
    pub fn box_filter(
        &self,
        input: &DeviceBuffer<u8>,
        output: &mut DeviceBuffer<u8>,
        (width, height, channels): (usize, usize, usize),
        radius: u32,
    ) -> Result<()> {
        let index = CHANNELS.iter().position(|&c| c == channels);
        let filter = index
            .map(|index| self.filters[index])
            .ok_or(Error::NppUnsupported { channels, radius })?;
        let samples = width * height * channels;
        if input.len() != samples || output.len() != samples {
            return Err(Error::ShapeMismatch {
                what: "NPP's box filter's image",
                expected: samples,
                actual: input.len().min(output.len()),
            });
        }
        let int = |value: usize| {
            c_int::try_from(value).map_err(|_| Error::NppUnsupported { channels, radius })
        };
        let size = Size {
            width: int(width)?,
            height: int(height)?,
        };
        let step = int(width * channels)?;
        let reach = int(radius as usize)?;
        let side = int(2 * radius as usize + 1)?;
        let (source, _read) = input.device_ptr(&self.stream);
        let (destination, _written) = output.device_ptr_mut(&self.stream);
        // SAFETY: both buffers hold the whole image, `step` bytes a row;
        // the filter reads the source inside it (replicating its edges)
        // and writes the whole destination, on the GPU's stream.
        let status = unsafe {
            filter(
                source as *const u8,
                step,
                size,
                Point { x: 0, y: 0 },
                destination as *mut u8,
                step,
                size,
                Size {
                    width: side,
                    height: side,
                },
                Point { x: reach, y: reach },
                BORDER_REPLICATE,
                self.context,
            )
        };
        // Negative statuses are errors; positive ones, warnings.
        if status < 0 {
            return Err(Error::Npp { status });
        }
        Ok(())
    }
}
