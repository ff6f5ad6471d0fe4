//! A GPU buffer wherever its bytes live ([`Placement`]): the device's DRAM,
//! page-locked host memory mapped into the GPU's address space, or managed
//! memory. A kernel takes each alike, by its device pointer; what differs
//! is the path its loads take, and how the host reaches the bytes.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice, DriverError, SyncOnDrop, result,
    sys,
};
use gpu_std::Placement;

use crate::error::{During, Error, Result};

/// A buffer of `T` on a [`Gpu`](super::Gpu), in one [`Placement`].
pub struct DeviceBuffer<T> {
    storage: Storage<T>,
}

enum Storage<T> {
    /// `cudaMalloc`'s: only the GPU reaches it, and copies move it.
    Device(CudaSlice<T>),
    /// Memory the host reaches in place, as the GPU does.
    Reachable(Reachable<T>),
}

/// Mapped host memory or managed memory: one allocation, a pointer for the
/// host and one for the GPU (the same address, under unified addressing).
struct Reachable<T> {
    stream: Arc<CudaStream>,
    placement: Placement,
    host: *mut T,
    device: sys::CUdeviceptr,
    len: usize,
}

// SAFETY: the buffer owns its allocation, as a `CudaSlice` does; the host
// reaches it only through `&self` or `&mut self`, after the stream's work.
unsafe impl<T: Send> Send for Reachable<T> {}
// SAFETY: as for `Send`: shared references only read.
unsafe impl<T: Sync> Sync for Reachable<T> {}

impl<T> Drop for Reachable<T> {
    fn drop(&mut self) {
        // A kernel may still be reading it: neither free waits for the
        // stream as `cudaFree` does for device memory.
        let _ = self.stream.synchronize();
        let _ = self.stream.context().bind_to_thread();
        // SAFETY: allocated as its placement says, freed once, unused now.
        let _ = unsafe {
            match self.placement {
                Placement::MappedHost => result::free_host(self.host.cast::<c_void>()),
                _ => result::memory_free(self.device),
            }
        };
    }
}

impl<T> DeviceBuffer<T> {
    /// A buffer in the device's DRAM.
    pub(super) fn device(slice: CudaSlice<T>) -> Self {
        Self {
            storage: Storage::Device(slice),
        }
    }

    /// `len` elements of uninitialised memory the host reaches in place:
    /// page-locked and mapped (`cuMemHostAlloc(…, DEVICEMAP)`) or managed
    /// (`cuMemAllocManaged(…, CU_MEM_ATTACH_GLOBAL)`), as `placement` says.
    ///
    /// # Safety
    /// The elements are written before they are read.
    pub(super) unsafe fn reachable(
        stream: &Arc<CudaStream>,
        placement: Placement,
        len: usize,
    ) -> std::result::Result<Self, DriverError> {
        let bytes = len.saturating_mul(size_of::<T>()).max(1);
        stream.context().bind_to_thread()?;
        // SAFETY: a fresh allocation of `bytes`, freed by `Reachable`'s drop.
        let (host, device) = unsafe {
            match placement {
                Placement::MappedHost => {
                    let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
                    let host = result::malloc_host(bytes, flags)?;
                    let mut device = 0;
                    let mapped = sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0).result();
                    if let Err(error) = mapped {
                        let _ = result::free_host(host);
                        return Err(error);
                    }
                    (host.cast::<T>(), device)
                }
                _ => {
                    let attach = sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL;
                    let device = result::malloc_managed(bytes, attach)?;
                    (device as *mut T, device)
                }
            }
        };
        Ok(Self {
            storage: Storage::Reachable(Reachable {
                stream: stream.clone(),
                placement,
                host,
                device,
                len,
            }),
        })
    }

    /// Its elements.
    pub fn len(&self) -> usize {
        DeviceSlice::len(self)
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The GPU whose device memory it is; `None` for memory every GPU of
    /// the process reaches (mapped host memory, managed memory).
    pub fn owner(&self) -> Option<usize> {
        match &self.storage {
            Storage::Device(slice) => Some(slice.stream().context().ordinal()),
            Storage::Reachable(_) => None,
        }
    }

    /// Where its bytes live.
    pub fn placement(&self) -> Placement {
        match &self.storage {
            Storage::Device(_) => Placement::Device,
            Storage::Reachable(memory) => memory.placement,
        }
    }

    /// The elements, for the host to read in place once the stream's work
    /// is done; `None` for a device buffer, which only a copy reaches.
    pub(super) fn host(&self) -> Result<Option<&[T]>> {
        let Storage::Reachable(memory) = &self.storage else {
            return Ok(None);
        };
        memory.stream.synchronize().during("running a kernel")?;
        // SAFETY: the allocation holds `len` elements, initialised since
        // it was made, and no work on the stream touches it now.
        Ok(Some(unsafe {
            std::slice::from_raw_parts(memory.host, memory.len)
        }))
    }

    /// The elements, for the host to write in place; as [`Self::host`].
    pub(super) fn host_mut(&mut self) -> Result<Option<&mut [T]>> {
        let Storage::Reachable(memory) = &mut self.storage else {
            return Ok(None);
        };
        memory.stream.synchronize().during("running a kernel")?;
        // SAFETY: as in `host`; `&mut self` makes this the only reference.
        Ok(Some(unsafe {
            std::slice::from_raw_parts_mut(memory.host, memory.len)
        }))
    }
}

impl<T> DeviceSlice<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        match &self.storage {
            Storage::Device(slice) => slice.len(),
            Storage::Reachable(memory) => memory.len,
        }
    }

    fn stream(&self) -> &Arc<CudaStream> {
        match &self.storage {
            Storage::Device(slice) => slice.stream(),
            Storage::Reachable(memory) => &memory.stream,
        }
    }
}

impl<T> DevicePtr<T> for DeviceBuffer<T> {
    fn device_ptr<'a>(&'a self, stream: &'a CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        match &self.storage {
            Storage::Device(slice) => slice.device_ptr(stream),
            // Every launch and copy of a `Gpu` goes through its one stream,
            // which orders them; the host waits for it before it reaches in.
            Storage::Reachable(memory) => (memory.device, SyncOnDrop::Sync(None)),
        }
    }
}

impl<T> DevicePtrMut<T> for DeviceBuffer<T> {
    fn device_ptr_mut<'a>(
        &'a mut self,
        stream: &'a CudaStream,
    ) -> (sys::CUdeviceptr, SyncOnDrop<'a>) {
        match &mut self.storage {
            Storage::Device(slice) => slice.device_ptr_mut(stream),
            Storage::Reachable(memory) => (memory.device, SyncOnDrop::Sync(None)),
        }
    }
}

/// Refuses a managed buffer larger than the device's free memory, before
/// it is allocated: a kernel touching more managed memory than the device
/// holds makes the driver evict pages as it faults others in, which can
/// stall a GPU for minutes.
pub(super) fn check_managed(what: &'static str, bytes: usize, free: usize) -> Result<()> {
    if bytes > free {
        return Err(Error::ManagedBeyondFree { what, bytes, free });
    }
    Ok(())
}
