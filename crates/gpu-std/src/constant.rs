use core::marker::PhantomData;

#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

use crate::Scalar;

/// A constant array of `T`, as [`constant_array!`](crate::constant_array)
/// declares it.
#[derive(Clone, Copy)]
pub struct ConstantArray<T: Scalar = f32> {
    #[cfg(target_arch = "nvptx64")]
    address: u64,
    #[cfg(not(target_arch = "nvptx64"))]
    name: &'static str,
    len: u32,
    element: PhantomData<T>,
}

impl<T: Scalar> ConstantArray<T> {
    /// The array of `len` elements at `address` in the constant space.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn at(address: u64, len: u32) -> Self {
        Self {
            address,
            len,
            element: PhantomData,
        }
    }

    /// The emulated array `name` of `len` elements.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn at(name: &'static str, len: u32) -> Self {
        Self {
            name,
            len,
            element: PhantomData,
        }
    }

    fixed_len!();

    /// Reads element `index` through the constant cache (`LDC`).
    ///
    /// # Safety
    /// `index` is below [`ConstantArray::len`], and the host has set
    /// the array, with values of `T`. The emulator checks all three.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn read(self, index: u32) -> T {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            T::load_constant(self.address + size_of::<T>() as u64 * u64::from(index))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::constant_read(self.name, self.len, index, core::panic::Location::caller())
    }
}
