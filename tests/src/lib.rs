//! Integration tests of locality; the tests live in `tests/`.
//!
//! - `ptx`: the compiled PTX has every entry point, shared memory and
//!   barriers where the lesson needs them, no local memory, no undefined call.
//! - `errors`: every bad input is a typed error, checked without a GPU.
//! - `on_gpu`: every kernel against the CPU reference on many shapes;
//!   reported as "not run: no CUDA device" (ignored, never passed) without
//!   a GPU.
//! - `emulated`: the same kernels and shapes on the CPU emulator, plus
//!   property tests over random sizes; runs everywhere.
//! - `diagnostics`: deliberately broken kernels, each caught by the emulator
//!   with the right diagnostic.
//!
//! The shapes below are shared by the GPU and the emulated tests: sizes of
//! 1, primes, non-multiples of every tile and block width (16, 32, 128), and
//! rectangular shapes.

use gpu::blur::TILED_MAX_RADIUS;

/// (m, n, k).
pub const MATMUL_SHAPES: [(usize, usize, usize); 13] = [
    (1, 1, 1),
    (1, 1, 7),
    (3, 2, 1),
    (13, 7, 29),
    (16, 16, 16),
    (32, 32, 32),
    (17, 33, 31),
    (31, 47, 65),
    (64, 1, 100),
    (1, 100, 64),
    (97, 131, 61),
    (250, 70, 300),
    (509, 521, 523),
];

/// (m, n).
pub const GEMV_SHAPES: [(usize, usize); 10] = [
    (1, 1),
    (1, 300),
    (300, 1),
    (127, 129),
    (128, 128),
    (129, 127),
    (257, 1000),
    (1000, 257),
    (4099, 3),
    (3, 4099),
];

/// β = 0 (y must not be read; it is poisoned) and β ≠ 0 (y is read).
pub const GEMV_SCALARS: [(f64, f64); 2] = [(1.0, 0.0), (-1.5, 0.75)];

/// (width, height, channels, radius).
pub const BLUR_CASES: [(usize, usize, usize, u32); 10] = [
    (1, 1, 1, 0),
    (1, 1, 1, 1),
    (17, 31, 1, 1),
    (16, 16, 3, 2),
    (33, 16, 3, 3),
    (100, 37, 3, 7),
    (15, 250, 1, 20),
    (40, 41, 1, TILED_MAX_RADIUS),
    (300, 200, 3, 1),
    (1001, 3, 4, 5),
];
