#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

/// A constant array of `f32`, as [`constant_array!`](crate::constant_array)
/// declares it.
#[derive(Clone, Copy)]
pub struct ConstantArray {
    #[cfg(target_arch = "nvptx64")]
    address: u64,
    #[cfg(not(target_arch = "nvptx64"))]
    name: &'static str,
    len: u32,
}

impl ConstantArray {
    /// The array of `len` elements at `address` in the constant space.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn at(address: u64, len: u32) -> Self {
        Self { address, len }
    }

    /// The emulated array `name` of `len` elements.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn at(name: &'static str, len: u32) -> Self {
        Self { name, len }
    }

    /// Its elements.
    pub const fn len(self) -> u32 {
        self.len
    }

    /// Whether it has none.
    pub const fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Reads element `index` through the constant cache (`LDC`).
    ///
    /// # Safety
    /// `index` is below [`ConstantArray::len`], and the host has set
    /// the array. The emulator checks both.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, index: u32) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let bits: u32;
            // SAFETY: by this function's contract; the load only reads.
            unsafe {
                core::arch::asm!(
                    "ld.const.b32 {}, [{}];",
                    out(reg32) bits,
                    in(reg64) self.address + 4 * u64::from(index),
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            f32::from_bits(bits)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::constant_read(self.name, self.len, index, core::panic::Location::caller())
    }
}
