//! Safe launch wrappers, one module per kernel family.
//!
//! Each wrapper checks the shape against every buffer, derives the launch
//! configuration and shared-memory bytes from the `gpu` crate's own
//! constants, and only then launches: a kernel never sees an input its
//! `# Safety` contract does not allow.

pub mod blur;
pub mod gemv;
pub mod matmul;

use crate::error::{Error, Result};

/// The largest grid along y and z (x allows 2³¹ − 1) on every CUDA GPU.
const MAX_GRID_YZ: u32 = 65_535;
const MAX_GRID_X: u32 = i32::MAX as u32;

/// Every entry point in the PTX, in teaching order.
pub fn entry_points() -> impl Iterator<Item = &'static str> {
    let matmul = matmul::Matmul::ALL
        .into_iter()
        .map(matmul::Matmul::entry_point);
    let gemv = gemv::Gemv::ALL
        .into_iter()
        .flat_map(|kernel| [kernel.entry_point::<f32>(), kernel.entry_point::<f64>()]);
    let blur = blur::Blur::ALL.into_iter().map(blur::Blur::entry_point);
    matmul.chain(gemv).chain(blur)
}

/// Rejects a zero dimension.
fn nonzero(what: &'static str, size: usize) -> Result<u32> {
    if size == 0 {
        return Err(Error::ZeroSize { what });
    }
    u32::try_from(size).map_err(|_| Error::TooLarge {
        what,
        size: size as u128,
        limit: u32::MAX.into(),
    })
}

/// Rejects an array whose element indices would not fit the kernels' `u32`
/// index arithmetic.
fn indexable(what: &'static str, dimensions: &[u32]) -> Result<usize> {
    let size = dimensions.iter().map(|&d| u128::from(d)).product::<u128>();
    if size > u128::from(u32::MAX) {
        return Err(Error::TooLarge {
            what,
            size,
            limit: u32::MAX.into(),
        });
    }
    Ok(size as usize)
}

/// Rejects a buffer whose length is not what the shape says.
pub(crate) fn expect_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected != actual {
        return Err(Error::ShapeMismatch {
            what,
            expected,
            actual,
        });
    }
    Ok(())
}

/// Blocks needed to cover `size` with `block` threads, within `limit`.
fn grid(what: &'static str, size: u32, block: u32, limit: u32) -> Result<u32> {
    let blocks = size.div_ceil(block);
    if blocks > limit {
        return Err(Error::TooLarge {
            what,
            size: blocks.into(),
            limit: limit.into(),
        });
    }
    Ok(blocks)
}
