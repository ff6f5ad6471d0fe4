use core::marker::PhantomData;

use super::{Real, Scalar};

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

/// The launch-sized shared memory every GPU of compute capability 7.5 or
/// newer gives a block without an opt-in attribute.
pub use gpu_core::SHARED_LIMIT_BYTES as LIMIT_BYTES;

/// The shared memory a block of a Hopper GPU may have, launch-sized and
/// static together, once its kernel opts in, which the GPU launcher does
/// for a launch that needs more than [`LIMIT_BYTES`]: 227 KiB.
pub use gpu_core::SHARED_OPT_IN_LIMIT_BYTES as OPT_IN_LIMIT_BYTES;

/// A typed view of part of the block's launch-sized shared memory.
///
/// It is `Copy` and carries no bounds: the host sizes the allocation from
/// the same layout function the kernel uses, so the bounds are a launch
/// contract, stated in each kernel's `# Safety` section.
#[derive(Clone, Copy)]
pub struct SharedArray<T> {
    base: *mut T,
    /// `base` in the shared window (`__cvta_generic_to_shared`), as the
    /// runtime's own instructions take it: converted once, where the
    /// kernel makes the array, not at each use, which an unrolled loop
    /// would repeat.
    #[cfg(target_arch = "nvptx64")]
    window: u32,
    element: PhantomData<T>,
}

impl<T: Copy> SharedArray<T> {
    /// The start of the block's launch-sized shared memory.
    ///
    /// # Safety
    /// Only inside a kernel, and only for a `T` whose alignment the
    /// launch-sized memory satisfies (it is aligned for every type the
    /// kernels here use).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub unsafe fn launch_sized() -> Self {
        // Declared 1024-byte aligned, whatever `T`: 16 bytes for
        // `read_vector`, and 1024 for a tensor copy swizzled in 128-byte
        // rows at its start.
        let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<SwizzleAligned>();
        let window: u32;
        // SAFETY: converting an address reads and writes nothing.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 window; cvta.to.shared.u64 window, {base}; \
                 cvt.u32.u64 {window}, window; }}",
                base = in(reg64) base,
                window = out(reg32) window,
                options(pure, nomem, nostack),
            );
        }
        Self {
            base: base.cast(),
            window,
            element: PhantomData,
        }
    }

    /// The start of the emulated block's launch-sized shared memory.
    ///
    /// # Safety
    /// Only inside an emulated kernel.
    #[cfg(not(target_arch = "nvptx64"))]
    pub unsafe fn launch_sized() -> Self {
        Self {
            base: emulator::shared_base().cast(),
            element: PhantomData,
        }
    }

    /// The array that starts `elements` elements after this one.
    ///
    /// # Safety
    /// The result must still lie inside the launch-sized allocation.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub unsafe fn after(self, elements: u32) -> Self {
        Self {
            // SAFETY: in bounds by this function's contract.
            base: unsafe { self.base.add(elements as usize) },
            window: self.window + elements * size_of::<T>() as u32,
            element: PhantomData,
        }
    }

    /// The array that starts `elements` elements after this one; the
    /// emulator checks the bounds when it is accessed.
    ///
    /// # Safety
    /// None on the host; kept `unsafe` to match the GPU's contract.
    #[cfg(not(target_arch = "nvptx64"))]
    pub unsafe fn after(self, elements: u32) -> Self {
        Self {
            base: self.base.wrapping_add(elements as usize),
            element: PhantomData,
        }
    }

    /// The address of element `index`, for the runtime's own
    /// instructions.
    // Below sm_80 the copies that take it are loads and stores.
    #[cfg_attr(not(target_feature = "sm_80"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn address(self, index: u32) -> *mut T {
        self.base.wrapping_add(index as usize)
    }

    /// The 32-bit shared-window address of element `index`
    /// (`__cvta_generic_to_shared`), as `cp.async` and the atomics take it.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn shared_address(self, index: u32) -> u32 {
        self.window + index * size_of::<T>() as u32
    }

    /// Checks and records an access of `kind` to the `bytes` from element
    /// `index` on, made where the caller's caller was called; their
    /// address.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn access(self, index: u32, bytes: usize, kind: emulator::AccessKind) -> *mut T {
        let address = self.base.wrapping_add(index as usize);
        emulator::shared_access(address.cast(), bytes, kind, core::panic::Location::caller());
        address
    }

    /// Reads element `index`.
    ///
    /// # Safety
    /// `index` must be inside the allocation, and the element must have
    /// been written by this block, with a barrier between a write by
    /// another thread and this read.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, index: u32) -> T {
        #[cfg(not(target_arch = "nvptx64"))]
        self.access(index, size_of::<T>(), emulator::AccessKind::Read);
        // SAFETY: by this function's contract (which the emulator has
        // just checked, on the host).
        unsafe { *self.base.add(index as usize) }
    }

    /// Writes element `index`.
    ///
    /// # Safety
    /// `index` must be inside the allocation, and no other thread may
    /// touch the element between the same two barriers.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, index: u32, value: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        self.access(index, size_of::<T>(), emulator::AccessKind::Write);
        // SAFETY: by this function's contract (which the emulator has
        // just checked, on the host).
        unsafe { *self.base.add(index as usize) = value }
    }
}

impl<T: Copy> SharedArray<T> {
    /// Reads the 16 bytes from element `index` on with one 16-byte load
    /// (`LDS.128`), whatever the element type, four words.
    ///
    /// # Safety
    /// As [`SharedArray::read`] for each of the bytes, which start on a
    /// 16-byte boundary. The emulator checks it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_line(self, index: u32) -> crate::global::Line {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            let address = self.base.wrapping_add(index as usize);
            address.cast::<Aligned<crate::global::Line>>().read().0
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let address = self.access(index, 16, emulator::AccessKind::Read);
            // SAFETY: checked just now, as in `read_vector`.
            unsafe { address.cast::<crate::global::Line>().read_unaligned() }
        }
    }

    /// Writes the 16 bytes from element `index` on with one 16-byte store
    /// (`STS.128`), whatever the element type: a tile of 16-bit elements
    /// is staged eight at a time.
    ///
    /// # Safety
    /// As [`SharedArray::write`] for each of the bytes, which start on a
    /// 16-byte boundary. The emulator checks it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_line(self, index: u32, line: crate::global::Line) {
        let address = self.base.wrapping_add(index as usize);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            address
                .cast::<Aligned<crate::global::Line>>()
                .write(Aligned(line));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            emulator::shared_access(
                address.cast(),
                16,
                emulator::AccessKind::Write,
                core::panic::Location::caller(),
            );
            // SAFETY: checked just now, as in `read_vector`.
            unsafe { address.cast::<crate::global::Line>().write_unaligned(line) }
        }
    }
}

/// A statically sized shared array, `__shared__ T name[N]` in CUDA C++,
/// as [`shared_array!`](crate::shared_array) declares it: its size is
/// part of the kernel, which ptxas and the driver report, and the host
/// asks for nothing at launch.
///
/// On the GPU it is the array's address in the shared window, read and
/// written with `ld.shared`/`st.shared` (`LDS`/`STS`); in the emulator,
/// a region of the block's shared memory with the same race, barrier
/// and initialisation checks as launch-sized memory, and its own bounds.
#[derive(Clone, Copy)]
pub struct StaticArray<T> {
    #[cfg(target_arch = "nvptx64")]
    address: u32,
    #[cfg(not(target_arch = "nvptx64"))]
    base: *mut T,
    #[cfg(not(target_arch = "nvptx64"))]
    name: &'static str,
    len: u32,
    element: PhantomData<T>,
}

impl<T: Scalar> StaticArray<T> {
    fixed_len!();

    /// The array of `len` elements at `address` in the shared window.
    ///
    /// # Safety
    /// `address` is that of a `.shared` array of at least `len`
    /// elements, 16-byte aligned, as [`shared_array!`](crate::shared_array)
    /// declares it.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub unsafe fn at(address: u32, len: u32) -> Self {
        Self {
            address,
            len,
            element: PhantomData,
        }
    }

    /// The emulated block's array `name` of `len` elements: the same
    /// memory for every thread of the block.
    ///
    /// # Safety
    /// None on the host; kept `unsafe` to match the GPU's contract.
    #[cfg(not(target_arch = "nvptx64"))]
    pub unsafe fn at(name: &'static str, len: u32) -> Self {
        let bytes = len * size_of::<T>() as u32;
        Self {
            base: emulator::static_shared(name, bytes).cast(),
            name,
            len,
            element: PhantomData,
        }
    }

    /// Reads element `index`.
    ///
    /// # Safety
    /// As [`SharedArray::read`], `index` below [`StaticArray::len`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, index: u32) -> T {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            T::load_shared(self.address + index * size_of::<T>() as u32)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: checked inside the array just now.
        unsafe {
            self.access(index, emulator::AccessKind::Read).read()
        }
    }

    /// Writes element `index`.
    ///
    /// # Safety
    /// As [`SharedArray::write`], `index` below [`StaticArray::len`].
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, index: u32, value: T) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            T::store_shared(self.address + index * size_of::<T>() as u32, value)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: checked inside the array just now.
        unsafe {
            self.access(index, emulator::AccessKind::Write).write(value)
        }
    }
}

impl<T: Copy> StaticArray<T> {
    /// Checks an access to element `index` and records it.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    fn access(self, index: u32, kind: emulator::AccessKind) -> *mut T {
        if index >= self.len {
            emulator::static_shared_out_of_bounds(self.name, index, self.len, kind);
        }
        let address = self.base.wrapping_add(index as usize);
        emulator::shared_access(
            address.cast(),
            size_of::<T>(),
            kind,
            core::panic::Location::caller(),
        );
        address
    }

    /// The shared-window address of element `index`, for the runtime's
    /// own instructions.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn shared_address(self, index: u32) -> u32 {
        self.address + index * size_of::<T>() as u32
    }

    /// Checks and records an atomic access to element `index`, made where
    /// the caller's caller was called; its address.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub(crate) fn atomic_access(self, index: u32) -> *mut T {
        self.access(index, emulator::AccessKind::Atomic)
    }
}

/// The launch-sized memory's alignment: the repeat of a 128-byte swizzle.
#[cfg(target_arch = "nvptx64")]
#[repr(C, align(1024))]
struct SwizzleAligned([u8; 1024]);

/// A value stored on a 16-byte boundary.
#[cfg(target_arch = "nvptx64")]
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Aligned<V>(V);

impl<T: Real> SharedArray<T> {
    /// Reads the [`Real::VECTOR_LEN`] elements from `index` on with one
    /// 16-byte load (`LDS.128`): a quarter of the instructions of four
    /// loads of one f32 each.
    ///
    /// # Safety
    /// As [`SharedArray::read`] for each element, and `index` is a
    /// multiple of [`Real::VECTOR_LEN`] from a 16-byte boundary: the
    /// launch-sized memory starts on one, and the hardware requires
    /// the alignment. The emulator checks it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_vector(self, index: u32) -> T::Vector {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            let address = self.base.wrapping_add(index as usize);
            address.cast::<Aligned<T::Vector>>().read().0
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let address = self.access(index, size_of::<T::Vector>(), emulator::AccessKind::Read);
            // SAFETY: checked just now; the host's memory is only 8-byte
            // aligned, hence unaligned.
            unsafe { address.cast::<T::Vector>().read_unaligned() }
        }
    }

    /// Writes the [`Real::VECTOR_LEN`] elements from `index` on with one
    /// 16-byte store (`STS.128`).
    ///
    /// # Safety
    /// As [`SharedArray::write`] for each element, and `index` is as
    /// [`SharedArray::read_vector`] asks. The emulator checks it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_vector(self, index: u32, values: T::Vector) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            let address = self.base.wrapping_add(index as usize);
            address.cast::<Aligned<T::Vector>>().write(Aligned(values));
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let address = self.access(index, size_of::<T::Vector>(), emulator::AccessKind::Write);
            // SAFETY: checked just now, as in `read_vector`.
            unsafe { address.cast::<T::Vector>().write_unaligned(values) }
        }
    }
}
