//! Cache hints for data used once: CUDA's `__ldcs` and `__stcs`; and a
//! load that skips L1 for the L2: `__ldcg`.
//!
//! A plain access leaves its line in L1 and L2 like any other, so a pass
//! over more data than the L2 holds pushes out lines that other accesses
//! would use again. The streaming hint (`.cs`, "cache streaming") marks
//! the line evict-first instead: the caches keep it only until they need
//! the room, and lines without the hint outlive it. The hint changes where
//! a line may stay, never the value an access reads or writes, so the
//! emulator checks these accesses as it checks plain ones.

use crate::global::{Global, GlobalMut};

/// Element `index` of `view`, read with `instruction` (a load with a cache
/// operator) on the GPU; to the emulator, the plain read it is.
///
/// # Safety
/// As [`Global::read`].
macro_rules! hinted_load {
    ($view:expr, $index:expr, $instruction:literal, $ty:ty) => {{
        #[cfg(target_arch = "nvptx64")]
        {
            let value: $ty;
            core::arch::asm!(
                concat!($instruction, " {}, [{}];"),
                out(reg32) value,
                in(reg64) $view.address($index),
                options(pure, readonly, nostack),
            );
            value
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            $view.read($index)
        }
    }};
}

impl Global<f32> {
    /// Reads element `index` as data used once (`ld.global.cs.f32`,
    /// `LDG.E.EF`): CUDA's `__ldcs`, its line evict-first in L1 and L2.
    ///
    /// # Safety
    /// `index` lies inside the buffer, and no other thread writes the
    /// element during the launch.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn ldcs(self, index: usize) -> f32 {
        // SAFETY: by this function's contract.
        unsafe { hinted_load!(self, index, "ld.global.cs.f32", f32) }
    }
}

impl Global<u32> {
    /// Reads element `index` from the L2, not L1 (`ld.global.cg.u32`,
    /// `LDG.E.STRONG.GPU`): CUDA's `__ldcg`, "cache global", which keeps
    /// the line in the L2 only, so that a read the L1 would otherwise
    /// serve goes to the L2 every time.
    ///
    /// # Safety
    /// `index` lies inside the buffer, and no other thread writes the
    /// element during the launch.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn ldcg(self, index: usize) -> u32 {
        // SAFETY: by this function's contract.
        unsafe { hinted_load!(self, index, "ld.global.cg.u32", u32) }
    }
}

impl GlobalMut<f32> {
    /// Writes element `index` as data no kernel reads soon
    /// (`st.global.cs.f32`, `STG.E.EF`): CUDA's `__stcs`, its line
    /// evict-first in L2.
    ///
    /// # Safety
    /// `index` lies inside the buffer, and no other thread reads or
    /// writes the element during the launch.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn stcs(self, index: usize, value: f32) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: by this function's contract.
        unsafe {
            core::arch::asm!(
                "st.global.cs.f32 [{}], {};",
                in(reg64) self.address(index),
                in(reg32) value,
                options(nostack),
            );
        }
        // SAFETY: by this function's contract; the emulator checks the
        // write as the plain one it is to it.
        #[cfg(not(target_arch = "nvptx64"))]
        unsafe {
            self.write(index, value)
        }
    }
}
