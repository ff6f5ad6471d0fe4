//! Texture objects on the CPU: what a fetch through one reads, with the
//! texture unit's addressing and filtering as the H100 does them.
//!
//! A texture holds its own copy of the texels (a CUDA array's, copied
//! from a buffer when the texture is made) and is known by a handle, as a
//! `cudaTextureObject_t` is. Handles count up from 1 and are never reused,
//! so a fetch through 0 (a texture never set) or through the handle of a
//! destroyed texture is told apart from every live one: the GPU returns
//! some value for both without an error, the emulator names the thread.
//!
//! Linear filtering takes the four texels whose centres surround
//! `(x − ½, y − ½)`, weighted as `gpu_core::linear_weights` says the
//! H100 weights them. Their sum of products is the one part left open: the
//! GPU's rounds in an arithmetic of its own, within [`FILTER_ROUNDING`] of
//! the exact sum, which [`sample`] gives.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

use gpu_core::{AddressMode, FilterMode, Sampling, fraction_256, linear_weights};

/// How far a linearly filtered fetch on the GPU may lie from
/// [`Sample::value`], relative to [`Sample::magnitude`]: 2⁻¹⁹. NVIDIA does
/// not document the filter's arithmetic; on an H100 a million fetches came
/// within 6.6 · 2⁻²⁴ of the exact sum and 2 · 67 million (a rotation's,
/// at six angles) within about 16 · 2⁻²⁴, which 7 roundings of f32 (four
/// products, three sums) do not cover. The bound is twice the worst seen,
/// and still thousands of times below what one weight off by a 256th
/// would move a fetch. Point fetches are exact.
pub const FILTER_ROUNDING: f64 = 1.0 / (1u64 << 19) as f64;

/// A texture's texels and how they are read.
#[derive(Clone, Debug, PartialEq)]
pub struct Texture {
    /// Row-major, `width` texels a row.
    pub texels: Vec<f32>,
    /// Texels a row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// The addressing and filter modes.
    pub sampling: Sampling,
}

/// What one fetch reads: its value, exact, and the texels it takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The weighted sum of the texels, exact; the GPU rounds it to f32.
    pub value: f64,
    /// The weighted sum of the texels' magnitudes, which bounds the GPU's
    /// rounding ([`FILTER_ROUNDING`]).
    pub magnitude: f64,
    /// The texels read, by row-major index, distinct: one for a point
    /// fetch, up to four for a linear one (fewer where clamping makes two
    /// the same texel or a border fetch falls outside).
    pub texels: [Option<usize>; 4],
}

/// A coordinate's texel below it and its fraction in 256ths: `x` a
/// coordinate of a texel's centre less ½. A coordinate that is not finite
/// has no fraction: the texel its cast gives, and 0.
fn split(x: f32) -> (i64, u32) {
    let below = x.floor();
    let fraction = x - below;
    if !(0.0..1.0).contains(&fraction) {
        return (below as i64, 0);
    }
    // SAFETY: the fraction lies in [0, 1).
    (below as i64, unsafe { fraction_256(fraction) })
}

/// What a fetch at `(x, y)`, in texel coordinates (texel `(i, j)` covers
/// `[i, i + 1) × [j, j + 1)`), reads from `texture`.
pub fn sample(texture: &Texture, x: f32, y: f32) -> Sample {
    let (width, height) = (i64::from(texture.width), i64::from(texture.height));
    let texel = |i: i64, j: i64| match texture.sampling.address {
        AddressMode::Clamp => Some((i.clamp(0, width - 1), j.clamp(0, height - 1))),
        AddressMode::Border => (0..width)
            .contains(&i)
            .then_some((i, j))
            .filter(|_| (0..height).contains(&j)),
    };
    let (corners, weights) = match texture.sampling.filter {
        FilterMode::Point => {
            let corner = texel(x.floor() as i64, y.floor() as i64);
            ([corner, None, None, None], [256, 0, 0, 0])
        }
        FilterMode::Linear => {
            let ((i, alpha), (j, beta)) = (split(x - 0.5), split(y - 0.5));
            let corners = [(0, 0), (1, 0), (0, 1), (1, 1)].map(|(di, dj)| texel(i + di, j + dj));
            (corners, linear_weights(alpha, beta))
        }
    };
    let mut read = Sample {
        value: 0.0,
        magnitude: 0.0,
        texels: [None; 4],
    };
    for (slot, (corner, weight)) in corners.into_iter().zip(weights).enumerate() {
        let Some((i, j)) = corner else { continue };
        let index = (j * width + i) as usize;
        let value = f64::from(texture.texels[index]) * f64::from(weight) / 256.0;
        read.value += value;
        read.magnitude += value.abs();
        if !read.texels[..slot].contains(&Some(index)) {
            read.texels[slot] = Some(index);
        }
    }
    read
}

/// Where a fetch went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Missing {
    /// Handle 0: no texture was ever set.
    Unset,
    /// A handle whose texture was destroyed, or made on another thread.
    Destroyed,
}

static NEXT_HANDLE: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The live textures by handle, on this OS thread, which runs every
    /// emulated thread of its launches.
    static TEXTURES: RefCell<HashMap<u64, Rc<Texture>>> = RefCell::new(HashMap::new());
}

/// Makes a texture of `texture`'s texels for the launches that follow on
/// this thread, as `cudaCreateTextureObject` does on a GPU, and returns
/// its handle, never 0.
///
/// # Panics
/// If `texture.texels` is not `width × height` texels, either is 0, or
/// there are `u32::MAX` texels or more (the traffic count's indices).
pub fn create_texture(texture: Texture) -> u64 {
    assert!(
        texture.width > 0
            && texture.height > 0
            && texture.texels.len() == texture.width as usize * texture.height as usize
            && texture.texels.len() < u32::MAX as usize,
        "a texture of {} texels is not {} × {}",
        texture.texels.len(),
        texture.width,
        texture.height
    );
    let handle = NEXT_HANDLE.fetch_add(1, Ordering::Relaxed);
    TEXTURES.with_borrow_mut(|textures| textures.insert(handle, Rc::new(texture)));
    handle
}

/// Destroys the texture `handle` (`cudaDestroyTextureObject`): a fetch
/// through it from now on is a diagnostic. Whether it was live.
pub fn destroy_texture(handle: u64) -> bool {
    TEXTURES.with_borrow_mut(|textures| textures.remove(&handle).is_some())
}

/// The live texture `handle`.
pub(crate) fn live(handle: u64) -> Result<Rc<Texture>, Missing> {
    if handle == 0 {
        return Err(Missing::Unset);
    }
    TEXTURES.with_borrow(|textures| textures.get(&handle).cloned().ok_or(Missing::Destroyed))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Weights the H100 gave, fitted over thousands of fetches of one
    /// fraction pair each (α, β and the weights in 256ths).
    #[test]
    fn linear_weights_are_the_h100s() {
        for (alpha, beta, weights) in [
            (129, 128, [64, 64, 63, 65]),
            (129, 129, [63, 64, 64, 65]),
            (130, 130, [62, 64, 64, 66]),
            (130, 192, [32, 32, 94, 98]),
            (192, 192, [16, 48, 48, 144]),
            (128, 0, [128, 128, 0, 0]),
            (256, 192, [0, 64, 0, 192]),
        ] {
            assert_eq!(
                linear_weights(alpha, beta),
                weights,
                "α = {alpha}, β = {beta}"
            );
        }
    }

    #[test]
    fn fractions_round_to_the_nearest_256th_halves_up() {
        assert_eq!(split(13.0 + 128.5 / 256.0), (13, 129));
        assert_eq!(split(19.0 + 129.5 / 256.0), (19, 130));
        assert_eq!(split(2.0000005), (2, 0));
        assert_eq!(split(2.9999995), (2, 256));
        assert_eq!(split(-0.25), (-1, 192));
    }
}
