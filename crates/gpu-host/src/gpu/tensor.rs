//! Tensor maps on the GPU: the 128 bytes `cuTensorMapEncodeTiled` encodes,
//! copied to global memory, where a kernel's tensor copies read them.

use cudarc::driver::sys::{
    self, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use gpu_std::tensor::{Element, Swizzle, TiledMap};

use crate::error::{During, Result};

use super::buffer::DeviceBuffer;

/// The map of `shape` over `source`, encoded and copied on `stream` (of
/// `context`) to a buffer of its own.
pub(super) fn encode<T>(
    context: &CudaContext,
    stream: &Arc<CudaStream>,
    source: &DeviceBuffer<T>,
    shape: TiledMap,
) -> Result<CudaSlice<u8>> {
    context.bind_to_thread().during("encoding a tensor map")?;
    let (address, _record) = source.device_ptr(stream);
    let dims = [u64::from(shape.width), u64::from(shape.height)];
    // The stride of every dimension but the first, in bytes.
    let strides = [u64::from(shape.element.bytes()) * u64::from(shape.width)];
    let box_dims = [shape.box_width, shape.box_height];
    let element_strides = [1, 1];
    let swizzle = match shape.swizzle {
        Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::Bytes128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    };
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: every array holds the rank's entries (the strides one
    // fewer), `map` is aligned as the driver asks, and `check_tensor_map`
    // checked the shape against the driver's rules first.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            match shape.element {
                Element::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                Element::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            },
            2,
            address as *mut _,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dims.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()
    }
    .during("encoding a tensor map")?;
    let bytes: Vec<u8> = map
        .opaque
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .collect();
    stream
        .clone_htod(&bytes)
        .during("copying a tensor map to the GPU")
}
