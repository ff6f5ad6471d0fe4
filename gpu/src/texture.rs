//! Texture memory: a picture rotated about its centre, read through
//! global memory and through the texture unit.
//!
//! Every output pixel samples the picture at a point its rotation maps it
//! to, between four texels. By hand, that is four loads, bounds checks
//! for the points that fall outside (which read zero), and the bilinear
//! interpolation; through a texture it is one fetch, the texture unit
//! doing the border and the interpolation in hardware, from a CUDA array
//! laid out for 2-D locality. A rotated row of output pixels walks the
//! picture diagonally, or down a column at 90°: a warp's loads from a
//! row-major buffer then touch one row each, where the texture cache's
//! 2-D layout keeps neighbours in both directions close. `locality
//! lessons texture` sweeps the angle and sets the two side by side.
//!
//! The two kernels share one parameter list, the picture as a buffer and
//! as a texture made from it, so that the host launches them alike; each
//! reads it one way.

use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::texture::Texture2d;
use gpu_std::{FULL_SM_THREADS, Launch, Real, fraction_256, linear_weights, thread::*};

/// What the kernels' launch contract is a function of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Pixels a row of the picture and of the output.
    pub width: u32,
    /// Rows.
    pub height: u32,
}

/// The kernels' parameters: the picture as a buffer, the same picture as
/// a texture, the output, width, height, and the rotation's cosine and
/// sine.
pub type Args = (Global<f32>, Texture2d, GlobalMut<f32>, u32, u32, f32, f32);

/// Threads of a block along x: a warp spans a row of 32 output pixels.
pub const BLOCK_X: u32 = 32;

/// Threads of a block along y.
pub const BLOCK_Y: u32 = 8;

/// One thread per output pixel, in blocks of [`BLOCK_X`] × [`BLOCK_Y`].
fn pixel_per_thread(problem: &Problem) -> Launch {
    Launch::covering((problem.width, problem.height, 1), (BLOCK_X, BLOCK_Y, 1), 0)
}

/// Where output pixel (x, y)'s centre comes from, in texel coordinates
/// (texel (i, j) covers [i, i + 1) × [j, j + 1)): its centre turned by
/// the rotation about the picture's centre. The host's reference repeats
/// these very operations, so that both sample the same points.
#[inline(always)]
pub fn source(x: u32, y: u32, width: u32, height: u32, cos: f32, sin: f32) -> (f32, f32) {
    let (centre_x, centre_y) = (width as f32 * 0.5, height as f32 * 0.5);
    let (dx, dy) = (x as f32 + 0.5 - centre_x, y as f32 + 0.5 - centre_y);
    (
        Real::mul_add(cos, dx, -(sin * dy)) + centre_x,
        Real::mul_add(sin, dx, cos * dy) + centre_y,
    )
}

/// This thread's output pixel and the point it samples, or `None` for a
/// thread past the picture.
#[inline(always)]
fn pixel(width: u32, height: u32, cos: f32, sin: f32) -> Option<(usize, f32, f32)> {
    let x = block_idx_x() * BLOCK_X + thread_idx_x();
    let y = block_idx_y() * BLOCK_Y + thread_idx_y();
    if x >= width || y >= height {
        return None;
    }
    let (u, v) = source(x, y, width, height, cos, sin);
    // SAFETY: x < width and y < height, so the index is below width ×
    // height, which fits in u32 (the kernels' contract).
    Some((unsafe { row_major(y, x, width) }, u, v))
}

kernels! {
    /// The texture lesson's kernels, in teaching order.
    pub const KERNELS: [Kernel<Args, Problem>];

    /// Rotates the picture through global loads, bounds checks and interpolation by hand.
    ///
    /// Each thread loads the four texels whose centres surround its
    /// sample point through the read-only path (`__ldg`, what nvcc makes
    /// of the twin's `const __restrict__` picture), zero for those outside
    /// the picture, and weighs them
    /// as the texture unit does (`gpu_std::linear_weights`, from the
    /// point's fractions in 256ths), so that both kernels compute the
    /// same pixels and differ in how they read; `texture` is not read.
    ///
    /// Compute-to-global-memory-access ratio: 4 multiplies and 3 adds per
    /// 4 loads and a store, 20 bytes of instructions' traffic; a warp's
    /// loads span one row of the picture at 0° and up to 32 rows at 90°.
    /// Bound by device memory when rows are cached, by the L1's sectors a
    /// request as the angle grows.
    ///
    /// Launch bounds: 256 threads (32 × 8), and every warp an SM holds (8
    /// blocks).
    ///
    /// # Safety
    /// `input` and `output` have width × height pixels, row-major, ≥ 1
    /// and below 2³², and do not overlap; nothing writes the input while
    /// the kernel runs; `cos` and `sin` are a rotation's (cos² + sin² = 1,
    /// so every sample point is finite and within reach of `i32`); blocks are
    /// [`BLOCK_X`] × [`BLOCK_Y`].
    #[launch(pixel_per_thread)]
    #[launch_bounds(BLOCK_X * BLOCK_Y, FULL_SM_THREADS / (BLOCK_X * BLOCK_Y))]
    pub unsafe fn rotate_global(
        input: Global<f32>,
        texture: Texture2d,
        output: GlobalMut<f32>,
        width: u32,
        height: u32,
        cos: f32,
        sin: f32,
    ) {
        let _ = texture;
        let Some((at, u, v)) = pixel(width, height, cos, sin) else { return };
        let (u, v) = (u - 0.5, v - 0.5);
        let (left, top) = (Real::floor(u), Real::floor(v));
        // SAFETY: u and v are finite (the contract), so each less its
        // floor lies in [0, 1), and the floors fit in i32: the point lies
        // within the picture's diagonal of its centre.
        let (weights, i, j) = unsafe {
            let weights = linear_weights(fraction_256(u - left), fraction_256(v - top));
            (weights, left.to_int_unchecked::<i32>(), top.to_int_unchecked::<i32>())
        };
        let texel = |i: i32, j: i32| {
            if (i as u32) < width && (j as u32) < height {
                // SAFETY: (i, j) lies inside the picture, which nothing
                // writes while the kernel runs.
                unsafe { input.ldg(row_major(j as u32, i as u32, width)) }
            } else {
                0.0
            }
        };
        let weighted = |k: usize, i: i32, j: i32| weights[k] as f32 * texel(i, j);
        let sum = weighted(0, i, j) + weighted(1, i + 1, j) + weighted(2, i, j + 1)
            + weighted(3, i + 1, j + 1);
        // SAFETY: one pixel per thread, inside the output.
        unsafe { output.write(at, sum * (1.0 / 256.0)) };
    }

    /// Rotates the picture through one texture fetch, border and interpolation in hardware.
    ///
    /// Each thread fetches its sample point from `texture`, made from
    /// the picture with border addressing and linear filtering for the
    /// lesson (any modes for the tests); the texture unit reads zero
    /// outside and interpolates with 8-bit fractions. `input` is not read.
    ///
    /// Compute-to-global-memory-access ratio: no arithmetic of the
    /// kernel's beyond the sample point; one fetch of four texels and a
    /// store. Bound by the texture unit's fetch rate when its cache
    /// holds the rows, by device memory otherwise.
    ///
    /// Launch bounds: 256 threads (32 × 8), and every warp an SM holds (8
    /// blocks).
    ///
    /// # Safety
    /// `texture` is a live texture of the picture; `output` has width ×
    /// height pixels, ≥ 1 and below 2³²; blocks are
    /// [`BLOCK_X`] × [`BLOCK_Y`].
    #[launch(pixel_per_thread)]
    #[launch_bounds(BLOCK_X * BLOCK_Y, FULL_SM_THREADS / (BLOCK_X * BLOCK_Y))]
    pub unsafe fn rotate_texture(
        input: Global<f32>,
        texture: Texture2d,
        output: GlobalMut<f32>,
        width: u32,
        height: u32,
        cos: f32,
        sin: f32,
    ) {
        let _ = input;
        let Some((at, u, v)) = pixel(width, height, cos, sin) else { return };
        // SAFETY: the texture is live (the contract); one pixel per
        // thread, inside the output.
        unsafe { output.write(at, texture.fetch(u, v)) };
    }
}
