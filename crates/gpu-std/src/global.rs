use super::Real;
#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device::{self as emulator, AccessKind, GlobalAccess};

/// The way an access reaches global memory, which the emulator checks and
/// counts it by.
#[cfg(not(target_arch = "nvptx64"))]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// Through L1, coherent with the launch's own stores.
    Coherent,
    /// Through the read-only path (`ld.global.nc`).
    ReadOnly,
    /// By a bulk copy of the Tensor Memory Accelerator.
    Bulk,
    /// By an atomic of the scope given.
    Atomic(gpu_core::Scope),
}

macro_rules! view {
    ($(#[$meta:meta])* $name:ident, $pointer:ty) => {
        $(#[$meta])*
        #[cfg(target_arch = "nvptx64")]
        #[derive(Clone, Copy)]
        #[repr(transparent)]
        pub struct $name<T> {
            base: $pointer,
        }

        $(#[$meta])*
        #[cfg(not(target_arch = "nvptx64"))]
        #[derive(Clone, Copy)]
        pub struct $name<T> {
            base: $pointer,
            len: usize,
            buffer: &'static str,
            placement: gpu_core::Placement,
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl<T> $name<T> {
            /// The same view, of a buffer whose bytes live in `placement`,
            /// which the traffic counts by.
            pub fn placed(self, placement: gpu_core::Placement) -> Self {
                Self { placement, ..self }
            }

            /// Checks and records an access to `elements` elements from
            /// `index` on, made where the caller was called, `index`
            /// being a multiple of `alignment`.
            #[track_caller]
            fn access(self, index: usize, elements: usize, alignment: usize, kind: AccessKind) {
                self.access_through(index, elements, alignment, kind, Path::Coherent);
            }

            /// [`Self::access`], along `path`.
            #[track_caller]
            fn access_through(
                self,
                index: usize,
                elements: usize,
                alignment: usize,
                kind: AccessKind,
                path: Path,
            ) {
                let access = GlobalAccess {
                    buffer: self.buffer,
                    base: self.base as usize,
                    len: self.len,
                    index,
                    elements,
                    alignment,
                    element_bytes: size_of::<T>(),
                    piece_bytes: match elements {
                        1 => align_of::<T>().min(size_of::<T>()),
                        _ => (elements * size_of::<T>()).max(1),
                    },
                    kind,
                    non_coherent: path == Path::ReadOnly,
                    bulk: path == Path::Bulk,
                    scope: match path {
                        Path::Atomic(scope) => Some(scope),
                        _ => None,
                    },
                    placement: self.placement,
                };
                emulator::global_access(access, core::panic::Location::caller());
            }
        }

        impl<T: Copy> $name<T> {
            /// Reads element `index`.
            ///
            /// # Safety
            /// `index` lies inside the buffer, and no other thread
            /// writes the element during the launch.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn read(self, index: usize) -> T {
                #[cfg(not(target_arch = "nvptx64"))]
                self.access(index, 1, 1, AccessKind::Read);
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: by this function's contract.
                unsafe {
                    *self.base.add(index)
                }
                // SAFETY: checked inside the buffer just now; a view
                // made by `cast` need not be aligned on the host.
                #[cfg(not(target_arch = "nvptx64"))]
                unsafe {
                    self.base.add(index).read_unaligned()
                }
            }

            /// The same buffer as elements of `U`, as CUDA C++'s
            /// `reinterpret_cast<const U*>` makes it: element i of the
            /// view is the bytes from `i·size_of::<U>()` on. Each access
            /// through it is one access of `size_of::<U>()` bytes.
            ///
            /// # Safety
            /// `U` is plain data, every bit pattern a value, and its
            /// alignment at most 256: the buffer starts on a 256-byte
            /// boundary, as `cudaMalloc`'s do.
            #[inline(always)]
            pub unsafe fn cast<U>(self) -> $name<U> {
                $name {
                    base: self.base.cast(),
                    #[cfg(not(target_arch = "nvptx64"))]
                    len: self.len * size_of::<T>() / size_of::<U>(),
                    #[cfg(not(target_arch = "nvptx64"))]
                    buffer: self.buffer,
                    #[cfg(not(target_arch = "nvptx64"))]
                    placement: self.placement,
                }
            }
        }

        impl<T: Real> $name<T> {
            /// Reads the [`Real::VECTOR_LEN`] elements from `index` on
            /// with one 16-byte load (`LDG.E.128.CONSTANT`), through the
            /// read-only data cache (`ld.global.nc`, CUDA's `__ldg`).
            ///
            /// # Safety
            /// The elements lie inside the buffer, no thread writes them
            /// during the launch, and `index` is a multiple of
            /// [`Real::VECTOR_LEN`]: the buffer starts on a 256-byte
            /// boundary, as `cudaMalloc`'s do, so the load is 16-byte
            /// aligned, which the hardware requires (a misaligned one
            /// stops the kernel). The emulator checks all three.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn read_vector(self, index: usize) -> T::Vector {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: by this function's contract.
                unsafe {
                    T::load_vector(self.base.add(index))
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let elements = T::VECTOR_LEN as usize;
                    self.access_through(index, elements, elements, AccessKind::Read, Path::ReadOnly);
                    // SAFETY: checked in bounds just now; the host's
                    // buffer need not be 16-byte aligned, hence unaligned.
                    unsafe { self.base.add(index).cast::<T::Vector>().read_unaligned() }
                }
            }
        }
    };
}

/// The index of element (`row`, `col`) of a row-major array whose rows
/// are `width` elements long.
///
/// # Safety
/// `row × width + col` fits in `u32`, as every kernel's launch contract
/// promises. The arithmetic may then assume that it does not wrap, as
/// CUDA C++ may assume of `int`: this is what lets the compiler step a
/// pointer along a loop instead of recomputing every address (see
/// docs/rust-as-fast-as-cuda.md). The emulator checks the promise.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub unsafe fn row_major(row: u32, col: u32, width: u32) -> usize {
    // SAFETY: by this function's contract.
    unsafe { row.unchecked_mul(width).unchecked_add(col) as usize }
}

/// The index of element (`row`, `col`) of a row-major array whose rows
/// are `width` elements long; an index beyond `u32` stops the emulated
/// thread with a panic, which the emulator reports.
///
/// # Safety
/// None on the host; kept `unsafe` to match the GPU's contract.
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe fn row_major(row: u32, col: u32, width: u32) -> usize {
    row.checked_mul(width)
        .and_then(|start| start.checked_add(col))
        .unwrap_or_else(|| panic!("index of ({row}, {col}) in rows of {width} overflows u32"))
        as usize
}

view! {
    /// A buffer the kernel only reads (`const T*`).
    Global, *const T
}

view! {
    /// A buffer the kernel writes, and may read (`T*`).
    GlobalMut, *mut T
}

impl<T> GlobalMut<T> {
    /// Checks and records an atomic access of `scope` to element `index`,
    /// made where the caller's caller was called; its address.
    #[cfg(not(target_arch = "nvptx64"))]
    #[track_caller]
    pub(crate) fn atomic_access(self, index: usize, scope: gpu_core::Scope) -> *mut T {
        let address = self.base.wrapping_add(index);
        self.access_through(index, 1, 1, AccessKind::Atomic, Path::Atomic(scope));
        address
    }
}

impl<T: Copy> GlobalMut<T> {
    /// Writes element `index`.
    ///
    /// # Safety
    /// `index` lies inside the buffer, and no other thread touches the
    /// element during the launch.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write(self, index: usize, value: T) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            *self.base.add(index) = value
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.access(index, 1, 1, AccessKind::Write);
            // SAFETY: checked inside the buffer just now; a view made by
            // `cast` need not be aligned on the host.
            unsafe { self.base.add(index).write_unaligned(value) }
        }
    }
}

impl<T: Real> GlobalMut<T> {
    /// Writes the [`Real::VECTOR_LEN`] elements from `index` on with one
    /// 16-byte store (`STG.E.128`).
    ///
    /// # Safety
    /// The elements lie inside the buffer, no other thread touches them
    /// during the launch, and `index` is a multiple of
    /// [`Real::VECTOR_LEN`], so that the store is 16-byte aligned, as
    /// the hardware requires. The emulator checks all three.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_vector(self, index: usize, values: T::Vector) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            T::store_vector(self.base.add(index), values)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.access(
                index,
                T::VECTOR_LEN as usize,
                T::VECTOR_LEN as usize,
                AccessKind::Write,
            );
            // SAFETY: checked in bounds just now; the host's buffer
            // need not be 16-byte aligned, hence unaligned.
            unsafe {
                self.base
                    .add(index)
                    .cast::<T::Vector>()
                    .write_unaligned(values)
            }
        }
    }
}

#[cfg(target_arch = "nvptx64")]
impl<T> Global<T> {
    /// The address of element `index`, which need not lie inside the
    /// buffer: for the runtime's own instructions.
    #[inline(always)]
    pub(crate) fn address(self, index: usize) -> *const T {
        self.base.wrapping_add(index)
    }
}

#[cfg(target_arch = "nvptx64")]
impl<T> GlobalMut<T> {
    /// The address of element `index`, which need not lie inside the
    /// buffer: for the runtime's own instructions.
    #[inline(always)]
    pub(crate) fn address(self, index: usize) -> *mut T {
        self.base.wrapping_add(index)
    }
}

/// A word: four bytes moved by one 4-byte load or store.
pub type Word = [u8; 4];

impl Global<u8> {
    /// Reads the four bytes from `index` on with one 4-byte load
    /// (`LDG.E`), a quarter of the instructions of four byte loads.
    ///
    /// # Safety
    /// The bytes lie inside the buffer, no thread writes them during the
    /// launch, and `index` is a multiple of 4: the buffer starts on a
    /// 256-byte boundary, as `cudaMalloc`'s do, so the load is aligned,
    /// which the hardware requires. The emulator checks all three.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_word(self, index: usize) -> Word {
        let address = self.base.wrapping_add(index).cast::<u32>();
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        let word = unsafe { address.read() };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: checked just now; the host's buffer need not be
        // 4-byte aligned, hence unaligned.
        let word = {
            self.access(index, 4, 4, AccessKind::Read);
            unsafe { address.read_unaligned() }
        };
        word.to_le_bytes()
    }
}

/// `Global::ldg` for 32-bit element types, each through its PTX type.
macro_rules! ldg {
    ($($type:ty => $instruction:literal),*) => {$(
        impl Global<$type> {
            /// Reads element `index` through the read-only data cache
            /// (`ld.global.nc`, `LDG.E.CONSTANT`): CUDA's `__ldg`, and what
            /// nvcc emits for a `const __restrict__` pointer it can prove is
            /// only read. The load is not coherent with the launch's own
            /// writes, hence the contract.
            ///
            /// # Safety
            /// `index` lies inside the buffer, and no thread writes the
            /// element during the launch.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn ldg(self, index: usize) -> $type {
                #[cfg(target_arch = "nvptx64")]
                {
                    let value: $type;
                    // SAFETY: by this function's contract; the load only reads.
                    unsafe {
                        core::arch::asm!(
                            concat!($instruction, " {}, [{}];"),
                            out(reg32) value,
                            in(reg64) self.base.add(index),
                            options(pure, readonly, nostack),
                        );
                    }
                    value
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    self.access_through(index, 1, 1, AccessKind::Read, Path::ReadOnly);
                    // SAFETY: checked inside the buffer just now.
                    unsafe { self.base.add(index).read_unaligned() }
                }
            }
        }
    )*};
}

ldg!(f32 => "ld.global.nc.f32", u32 => "ld.global.nc.u32");

/// `Global::ldg` for the tensor cores' 16-bit inputs.
macro_rules! ldg_half {
    ($($type:ident),*) => {$(
        impl Global<super::scalar::$type> {
            /// Reads element `index`, a tensor core's 16-bit input, through
            /// the read-only data cache (`ld.global.nc.b16`,
            /// `LDG.E.U16.CONSTANT`), as the 32-bit `ldg` does.
            ///
            /// # Safety
            /// As the 32-bit `ldg`: `index` lies inside the buffer, and no
            /// thread writes the element during the launch.
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            pub unsafe fn ldg(self, index: usize) -> super::scalar::$type {
                #[cfg(target_arch = "nvptx64")]
                {
                    let bits: u16;
                    // SAFETY: by this function's contract; the load only reads.
                    unsafe {
                        core::arch::asm!(
                            "ld.global.nc.b16 {}, [{}];",
                            out(reg16) bits,
                            in(reg64) self.base.add(index),
                            options(pure, readonly, nostack),
                        );
                    }
                    super::scalar::$type::from_bits(bits)
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    self.access_through(index, 1, 1, AccessKind::Read, Path::ReadOnly);
                    // SAFETY: checked inside the buffer just now.
                    unsafe { self.base.add(index).read_unaligned() }
                }
            }
        }
    )*};
}

ldg_half!(bf16, f16);

/// A line: sixteen bytes moved by one 16-byte load or store, as four
/// little-endian words, the registers it lands in.
pub type Line = [u32; 4];

/// One 16-byte load through the read-only path
/// (`ld.global.nc.v4.b32`, `LDG.E.128.CONSTANT`). In assembly, because
/// LLVM splits a 16-byte value it is handed into narrower accesses.
///
/// # Safety
/// `address` is 16-byte aligned, in global memory, and nothing writes
/// its bytes while the kernel runs.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn load_v4(address: *const u8) -> [u32; 4] {
    let (a, b, c, d): (u32, u32, u32, u32);
    // SAFETY: by this function's contract; the load only reads.
    unsafe {
        core::arch::asm!(
            "ld.global.nc.v4.b32 {{{}, {}, {}, {}}}, [{}];",
            out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d,
            in(reg64) address,
            options(pure, readonly, nostack),
        );
    }
    [a, b, c, d]
}

/// One 16-byte store (`st.global.v4.b32`, `STG.E.128`).
///
/// # Safety
/// `address` is 16-byte aligned, in global memory, and no other thread
/// touches its bytes.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) unsafe fn store_v4(address: *mut u8, words: [u32; 4]) {
    let [a, b, c, d] = words;
    // SAFETY: by this function's contract.
    unsafe {
        core::arch::asm!(
            "st.global.v4.b32 [{}], {{{}, {}, {}, {}}};",
            in(reg64) address,
            in(reg32) a, in(reg32) b, in(reg32) c, in(reg32) d,
            options(nostack),
        );
    }
}

impl Global<u8> {
    /// Reads the sixteen bytes from `index` on with one 16-byte load
    /// through the read-only path (`load_v4` on the GPU), a sixteenth
    /// of the instructions of byte loads.
    ///
    /// # Safety
    /// As [`Global::read_word`], with `index` a multiple of 16.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read_line(self, index: usize) -> Line {
        let address = self.base.wrapping_add(index);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            load_v4(address)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.access_through(index, 16, 16, AccessKind::Read, Path::ReadOnly);
            // SAFETY: checked just now; unaligned as in `read_word`.
            let bytes = unsafe { address.cast::<[u8; 16]>().read_unaligned() };
            core::array::from_fn(|w| {
                u32::from_le_bytes([
                    bytes[4 * w],
                    bytes[4 * w + 1],
                    bytes[4 * w + 2],
                    bytes[4 * w + 3],
                ])
            })
        }
    }
}

impl GlobalMut<u8> {
    /// Writes the sixteen bytes from `index` on with one 16-byte store
    /// (`STG.E.128`).
    ///
    /// # Safety
    /// As [`Global::read_line`], with no other thread touching the bytes.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_line(self, index: usize, line: Line) {
        let address = self.base.wrapping_add(index);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            store_v4(address, line)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.access(index, 16, 16, AccessKind::Write);
            let bytes: [u8; 16] = core::array::from_fn(|i| (line[i / 4] >> (8 * (i % 4))) as u8);
            // SAFETY: checked just now; unaligned as in `read_word`.
            unsafe { address.cast::<[u8; 16]>().write_unaligned(bytes) }
        }
    }
}

impl GlobalMut<u8> {
    /// Writes the four bytes from `index` on with one 4-byte store
    /// (`STG.E`).
    ///
    /// # Safety
    /// As [`Global::read_word`], with no other thread touching the bytes.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn write_word(self, index: usize, word: Word) {
        let address = self.base.wrapping_add(index).cast::<u32>();
        let word = u32::from_le_bytes(word);
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            address.write(word)
        };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: checked just now; unaligned as in `read_word`.
        {
            self.access(index, 4, 4, AccessKind::Write);
            unsafe { address.write_unaligned(word) }
        }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T: Copy> Global<T> {
    /// The 16 bytes from element `index` on, a 16-byte boundary, checked
    /// and recorded as one access: what a 16-byte `cp.async` of any
    /// element type reads.
    #[track_caller]
    pub(crate) fn read_line_span(self, index: usize) -> [u8; 16] {
        let elements = 16 / size_of::<T>();
        self.access_through(index, elements, elements, AccessKind::Read, Path::Coherent);
        // SAFETY: checked in bounds just now; unaligned on the host.
        unsafe { self.base.add(index).cast::<[u8; 16]>().read_unaligned() }
    }

    /// The `count` elements from `index` on, checked and recorded as one
    /// row of a tensor copy's box, which may start on any element.
    #[track_caller]
    pub(crate) fn read_box_row(self, index: usize, count: usize) -> Vec<T> {
        self.access_through(index, count, 1, AccessKind::Read, Path::Bulk);
        // SAFETY: checked in bounds just now.
        (0..count)
            .map(|i| unsafe { *self.base.add(index + i) })
            .collect()
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T: Real> Global<T> {
    /// The `count` elements from `index` on, the start of a 16-byte
    /// span, checked and recorded as one access: what an asynchronous
    /// 16-byte copy reads.
    #[track_caller]
    pub(crate) fn read_span(self, index: usize, count: usize) -> Vec<T> {
        self.read_along(index, count, Path::Coherent)
    }

    /// The same span, checked and recorded as a bulk copy's read.
    #[track_caller]
    pub(crate) fn read_bulk(self, index: usize, count: usize) -> Vec<T> {
        self.read_along(index, count, Path::Bulk)
    }

    #[track_caller]
    fn read_along(self, index: usize, count: usize, path: Path) -> Vec<T> {
        let alignment = T::VECTOR_LEN as usize;
        self.access_through(index, count, alignment, AccessKind::Read, path);
        // SAFETY: checked in bounds just now.
        (0..count)
            .map(|i| unsafe { *self.base.add(index + i) })
            .collect()
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> Global<T> {
    /// A view of `data`, called `buffer` in diagnostics.
    pub fn new(buffer: &'static str, data: &[T]) -> Self {
        Self {
            base: data.as_ptr(),
            len: data.len(),
            buffer,
            placement: gpu_core::Placement::Device,
        }
    }

    /// The buffer's first byte, which tells buffers apart.
    pub(crate) fn base_address(self) -> usize {
        self.base as usize
    }

    /// The buffer's name in diagnostics.
    pub(crate) fn name(self) -> &'static str {
        self.buffer
    }
}

#[cfg(not(target_arch = "nvptx64"))]
impl<T> GlobalMut<T> {
    /// A view of `data`, called `buffer` in diagnostics.
    pub fn new(buffer: &'static str, data: &mut [T]) -> Self {
        Self {
            base: data.as_mut_ptr(),
            len: data.len(),
            buffer,
            placement: gpu_core::Placement::Device,
        }
    }
}
