#[cfg(not(target_arch = "nvptx64"))]
use gpu_emulator::device as emulator;

/// A 2-D texture of `f32` texels, as a kernel receives it: CUDA's
/// `cudaTextureObject_t`, a 64-bit handle the host made
/// (`cudaCreateTextureObject`) with its addressing and filter modes, passed
/// as a kernel parameter.
#[derive(Clone, Copy)]
#[repr(transparent)]
pub struct Texture2d {
    handle: u64,
}

impl Texture2d {
    /// The texture with handle `handle`, as the host made it; 0 is none.
    pub const fn from_handle(handle: u64) -> Self {
        Self { handle }
    }

    /// Its handle.
    pub const fn handle(self) -> u64 {
        self.handle
    }

    /// The texture at `(x, y)` in texel coordinates, texel `(i, j)`
    /// covering `[i, i + 1) × [j, j + 1)` (`tex2D<float>(texture, x, y)`):
    /// the texture unit applies the addressing mode outside the texels
    /// and, with linear filtering, interpolates between the four whose
    /// centres surround the point, in hardware, with no bounds check in
    /// the kernel. One `tex.2d` instruction through the texture cache.
    ///
    /// # Safety
    /// The handle is a live texture's: on a GPU a fetch through 0 or a
    /// destroyed texture returns an undefined value without an error. The
    /// emulator checks it.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn fetch(self, x: f32, y: f32) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let (value, _g, _b, _a): (f32, f32, f32, f32);
            // SAFETY: by this function's contract; the fetch only reads.
            unsafe {
                core::arch::asm!(
                    "tex.2d.v4.f32.f32 {{{}, {}, {}, {}}}, [{}, {{{}, {}}}];",
                    out(reg32) value, out(reg32) _g, out(reg32) _b, out(reg32) _a,
                    in(reg64) self.handle,
                    in(reg32) x, in(reg32) y,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            value
        }
        #[cfg(not(target_arch = "nvptx64"))]
        emulator::texture_fetch(self.handle, x, y, core::panic::Location::caller())
    }
}
