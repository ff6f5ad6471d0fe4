use super::global::Global;
use super::shared::SharedArray;
#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

/// `__pipeline_memcpy_async(&tile[index], &source[element], 4, 0)`:
/// starts copying `source[element]` to `tile[index]`; or, when
/// `element` is `None`, writing zero there without reading `source`
/// (`cp.async` with a source size of 0 bytes).
///
/// Below compute capability 8.0, a load and a store, landed when the
/// call returns. On the emulator, `source[element]` is read now and lands
/// in `tile[index]` at this thread's wait.
///
/// # Safety
/// `tile[index]` lies inside the launch-sized shared memory and no other
/// thread touches it until a barrier after this thread's wait;
/// `source[element]` lies inside the buffer and no thread writes it
/// during the launch. The emulator checks all of it.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn memcpy_async(
    tile: SharedArray<f32>,
    index: u32,
    source: Global<f32>,
    element: Option<usize>,
) {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    {
        let (from, bytes) = match element {
            Some(element) => (source.address(element), 4u32),
            None => (source.address(0), 0),
        };
        // SAFETY: by this function's contract.
        unsafe {
            core::arch::asm!(
                "cp.async.ca.shared.global [{to}], [{from}], 4, {bytes};",
                to = in(reg32) tile.shared_address(index),
                from = in(reg64) from,
                bytes = in(reg32) bytes,
                options(nostack),
            );
        }
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    // SAFETY: by this function's contract.
    unsafe {
        tile.write(index, element.map_or(0.0, |element| source.read(element)))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let value = match element {
            // SAFETY: the emulator checks the bounds before reading.
            Some(element) => unsafe { source.read(element) },
            None => 0.0,
        };
        emulator::memcpy_async(
            tile.address(index).cast(),
            &value.to_le_bytes(),
            core::panic::Location::caller(),
        );
    }
}

/// `__pipeline_memcpy_async(&tile[index], &source[element], 16, 4 × count)`:
/// starts copying the `count` (0 to 4) elements from `source[element]`
/// on into the four from `tile[index]` on, zero-filling the rest: one
/// 16-byte `cp.async`, which bypasses L1 (`.cg`).
///
/// Below compute capability 8.0, four loads and stores. On the emulator,
/// the elements are read now, as one access, and land at this thread's
/// wait.
///
/// # Safety
/// As [`memcpy_async`] for each element copied; `index` and `element`
/// are multiples of 4 from 16-byte boundaries (the buffers' starts),
/// which the emulator checks.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn memcpy_async_vector(
    tile: SharedArray<f32>,
    index: u32,
    source: Global<f32>,
    element: usize,
    count: u32,
) {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    {
        let from = source.address(if count > 0 { element } else { 0 });
        // SAFETY: as in `memcpy_async`.
        unsafe {
            core::arch::asm!(
                "cp.async.cg.shared.global [{to}], [{from}], 16, {bytes};",
                to = in(reg32) tile.shared_address(index),
                from = in(reg64) from,
                bytes = in(reg32) 4 * count,
                options(nostack),
            );
        }
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    for i in 0..4 {
        // SAFETY: by this function's contract.
        unsafe {
            let value = if i < count {
                source.read(element + i as usize)
            } else {
                0.0
            };
            tile.write(index + i, value);
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let mut bytes = [0u8; 16];
        if count > 0 {
            let values = source.read_span(element, count as usize);
            for (i, value) in values.iter().enumerate() {
                bytes[4 * i..4 * i + 4].copy_from_slice(&value.to_le_bytes());
            }
        }
        let site = core::panic::Location::caller();
        emulator::memcpy_async(tile.address(index).cast(), &bytes, site);
    }
}

/// `cp.async.cg.shared.global [tile + index], [source + element], 16`:
/// starts copying the 16 bytes from `source[element]` on into those from
/// `tile[index]` on, whatever the element type (eight bf16, four f32);
/// or, when `element` is `None`, writing zeros there without reading
/// `source` (a source size of 0 bytes). It bypasses L1 (`.cg`).
///
/// # Safety
/// As [`memcpy_async`] for each byte; `index` and `element` lie on
/// 16-byte boundaries from the allocations' starts, which the emulator
/// checks.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn memcpy_async_line<T: Copy>(
    tile: SharedArray<T>,
    index: u32,
    source: Global<T>,
    element: Option<usize>,
) {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    {
        let (from, bytes) = match element {
            Some(element) => (source.address(element), 16u32),
            None => (source.address(0), 0),
        };
        // SAFETY: by this function's contract.
        unsafe {
            core::arch::asm!(
                "cp.async.cg.shared.global [{to}], [{from}], 16, {bytes};",
                to = in(reg32) tile.shared_address(index),
                from = in(reg64) from,
                bytes = in(reg32) bytes,
                options(nostack),
            );
        }
    }
    #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_80")))]
    {
        // SAFETY: by this function's contract; the buffer starts on a
        // 256-byte boundary.
        let line = element.map_or([0; 4], |element| unsafe {
            source.cast::<u8>().read_line(element * size_of::<T>())
        });
        // SAFETY: by this function's contract.
        unsafe { tile.write_line(index, line) };
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let bytes = element.map_or([0; 16], |element| source.read_line_span(element));
        let site = core::panic::Location::caller();
        emulator::memcpy_async(tile.address(index).cast(), &bytes, site);
    }
}

/// `__pipeline_commit()`: closes the group of copies started since the
/// last commit.
#[inline(always)]
pub fn commit() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    // SAFETY: `cp.async.commit_group` only groups this thread's copies.
    unsafe {
        core::arch::asm!("cp.async.commit_group;", options(nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    emulator::pipeline_commit();
}

/// `__pipeline_wait_prior(N)`: waits until at most this thread's `N`
/// newest committed groups are still in flight. Their destinations are
/// then this thread's to read; other threads' after a barrier.
#[inline(always)]
pub fn wait_prior<const N: u32>() {
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_80"))]
    // SAFETY: waiting has no other effect; the asm is a compiler barrier
    // too, so no read of shared memory moves above it.
    unsafe {
        core::arch::asm!("cp.async.wait_group {n};", n = const N, options(nostack))
    };
    #[cfg(not(target_arch = "nvptx64"))]
    emulator::pipeline_wait(N);
}
