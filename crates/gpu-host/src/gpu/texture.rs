//! Textures on the GPU: a CUDA array holding a copy of a buffer's texels,
//! and a texture object reading it with the lesson's modes.

use std::ptr;
use std::sync::Arc;

use cudarc::driver::sys::{self, CUaddress_mode, CUfilter_mode};
use cudarc::driver::{CudaContext, CudaStream, DevicePtr, DriverError};

use gpu_std::{AddressMode, FilterMode, Sampling};

use crate::backend::TextureObject;
use crate::error::{During, Result};

use super::buffer::DeviceBuffer;

/// A texture object and the CUDA array it reads, destroyed together when
/// dropped.
pub struct DeviceTexture {
    handle: u64,
    array: sys::CUarray,
    context: Arc<CudaContext>,
}

impl TextureObject for DeviceTexture {
    fn handle(&self) -> &u64 {
        &self.handle
    }
}

impl Drop for DeviceTexture {
    fn drop(&mut self) {
        // Errors here can only be the context's own, already reported by
        // the call that met them first; there is no one to give them to.
        let _ = self.context.bind_to_thread();
        // SAFETY: both were created by `Gpu::texture` and are destroyed
        // once; no launch still in flight can read them, since every
        // launch that takes the texture borrows it.
        unsafe {
            sys::cuTexObjectDestroy(self.handle);
            sys::cuArrayDestroy(self.array);
        }
    }
}

/// The CUDA array of `width × height` f32 texels, copied on `stream` (of
/// `context`) from `texels`, which holds exactly that many, row-major; and
/// a texture object on it.
pub(super) fn create(
    context: &Arc<CudaContext>,
    stream: &CudaStream,
    texels: &DeviceBuffer<f32>,
    width: usize,
    height: usize,
    sampling: Sampling,
) -> Result<DeviceTexture> {
    context.bind_to_thread().during("making a texture")?;
    let descriptor = sys::CUDA_ARRAY_DESCRIPTOR {
        Width: width,
        Height: height,
        Format: sys::CUarray_format::CU_AD_FORMAT_FLOAT,
        NumChannels: 1,
    };
    let mut array = ptr::null_mut();
    // SAFETY: the descriptor is complete; the array is destroyed by the
    // texture's drop, or right here if the texture cannot be made.
    unsafe { sys::cuArrayCreate_v2(&mut array, &descriptor) }
        .result()
        .during("allocating a texture's CUDA array")?;
    let made = fill(stream, texels, array, width, height).and_then(|()| object(array, sampling));
    match made {
        Ok(handle) => Ok(DeviceTexture {
            handle,
            array,
            context: context.clone(),
        }),
        Err(error) => {
            // SAFETY: the array was created above and nothing else has it.
            unsafe { sys::cuArrayDestroy(array) };
            Err(error).during("making a texture")
        }
    }
}

/// Copies `texels` into `array` on `stream`, after the work before it.
fn fill(
    stream: &CudaStream,
    texels: &DeviceBuffer<f32>,
    array: sys::CUarray,
    width: usize,
    height: usize,
) -> Result<(), DriverError> {
    let (source, _record) = texels.device_ptr(stream);
    let row = width * size_of::<f32>();
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        srcHost: ptr::null(),
        srcDevice: source,
        srcArray: ptr::null_mut(),
        srcPitch: row,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
        dstHost: ptr::null_mut(),
        dstDevice: 0,
        dstArray: array,
        dstPitch: 0,
        WidthInBytes: row,
        Height: height,
    };
    // SAFETY: the source holds `height` rows of `row` bytes (the caller
    // checked its length), the array is that size, and the copy is on the
    // stream every launch uses.
    unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }.result()
}

/// A texture object reading `array` with unnormalized coordinates, as
/// element values, with `sampling`'s modes.
fn object(array: sys::CUarray, sampling: Sampling) -> Result<u64, DriverError> {
    // SAFETY: every field is an integer, a float or an enum whose zero is
    // a variant (an array resource; wrap addressing; point filtering),
    // and each that matters is set below.
    let mut resource: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
    resource.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
    resource.res.array.hArray = array;
    // SAFETY: as above.
    let mut description: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
    description.addressMode = [match sampling.address {
        AddressMode::Clamp => CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP,
        AddressMode::Border => CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
    }; 3];
    description.filterMode = match sampling.filter {
        FilterMode::Point => CUfilter_mode::CU_TR_FILTER_MODE_POINT,
        FilterMode::Linear => CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
    };
    let mut handle = 0;
    // SAFETY: both descriptions are complete and no view is asked for.
    unsafe { sys::cuTexObjectCreate(&mut handle, &resource, &description, ptr::null()) }
        .result()?;
    Ok(handle)
}
