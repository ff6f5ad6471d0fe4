//! Persisting L2 accesses on the GPU: the context's carve-out
//! (`cuCtxSetLimit`) and an access-policy window on the stream
//! (`cuStreamSetAttribute`), both undone when the window drops.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUaccessProperty, CUlimit};
use cudarc::driver::{CudaContext, CudaStream, DriverError};

use crate::error::{During, Result};
use crate::l2::{PersistingL2, PersistingWindow, WindowHolder, check_window};

/// What `context`'s GPU can keep persisting; `None` where it keeps nothing.
pub(super) fn limits(context: &CudaContext) -> Result<Option<PersistingL2>> {
    let attribute = |attribute| {
        context
            .attribute(attribute)
            .during("reading the L2's persisting limits")
    };
    let max_carve_out =
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?;
    let max_window =
        attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?;
    Ok(
        (max_carve_out > 0 && max_window > 0).then_some(PersistingL2 {
            max_carve_out: max_carve_out as usize,
            max_window: max_window as usize,
        }),
    )
}

/// The bytes of the L2 `context` sets aside for persisting lines now.
pub(super) fn carve_out(context: &CudaContext) -> Result<usize> {
    context
        .bind_to_thread()
        .during("reading the L2's carve-out")?;
    let mut bytes = 0;
    // SAFETY: the context is current; the limit is written to `bytes`.
    unsafe { sys::cuCtxGetLimit(&mut bytes, CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE) }
        .result()
        .during("reading the L2's carve-out")?;
    Ok(bytes)
}

/// Sets `carve_out` bytes of the L2 aside and a window over the `bytes`
/// from `base` on `stream`, once [`check_window`] allows it.
pub(super) fn persist(
    context: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    holder: &Arc<WindowHolder>,
    (base, bytes): (sys::CUdeviceptr, usize),
    carve_out: usize,
) -> Result<PersistingWindow> {
    let hit_ratio = check_window(limits(context)?, bytes, carve_out, holder)?;
    let window = PersistingWindow::new(hit_ratio, holder.clone(), {
        let (context, stream) = (context.clone(), stream.clone());
        // Errors here can only be the context's own, which the next call
        // on it reports; there is no one to give them to.
        move || {
            let _ = stream.synchronize();
            let _ = release(&context, &stream);
        }
    });
    context
        .bind_to_thread()
        .during("setting a persisting window")?;
    // SAFETY: the context is current; any size up to the limit checked
    // above is valid.
    unsafe { sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, carve_out) }
        .result()
        .during("setting the L2's carve-out for persisting lines")?;
    set_window(stream, base as *mut _, bytes, hit_ratio)
        .during("setting an access-policy window on the stream")?;
    Ok(window)
}

/// Sets `stream`'s access-policy window: the `bytes` from `base`,
/// `hit_ratio` of their accesses persisting and the rest normal; no
/// window where `bytes` is 0.
fn set_window(
    stream: &CudaStream,
    base: *mut std::ffi::c_void,
    bytes: usize,
    hit_ratio: f32,
) -> Result<(), DriverError> {
    // SAFETY: a union of plain data, of which the window is set below.
    let mut value: sys::CUstreamAttrValue = unsafe { std::mem::zeroed() };
    value.accessPolicyWindow = sys::CUaccessPolicyWindow {
        base_ptr: base,
        num_bytes: bytes,
        hitRatio: hit_ratio,
        hitProp: CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
        missProp: CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
    };
    let attribute = sys::CUstreamAttrID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
    // SAFETY: the stream is live, and the value is a complete window.
    unsafe { sys::cuStreamSetAttribute(stream.cu_stream(), attribute, &value) }.result()
}

/// Clears the window, turns the persisting lines back into normal ones
/// and gives the carve-out back.
fn release(context: &CudaContext, stream: &CudaStream) -> Result<(), DriverError> {
    context.bind_to_thread()?;
    set_window(stream, std::ptr::null_mut(), 0, 0.0)?;
    // SAFETY: the context is current, and the stream's work is done.
    unsafe { sys::cuCtxResetPersistingL2Cache() }.result()?;
    // SAFETY: as above; 0 is always a valid limit.
    unsafe { sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0) }.result()
}
