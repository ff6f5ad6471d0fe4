//! Where each element of a staged slice of A and B lies in shared memory:
//! the one thing the three staged rungs do differently.
//!
//! A's slice is [`BLOCK_ROWS`]×[`SLICE`] (64-byte rows); B's is
//! [`SLICE`]×[`BLOCK_COLS`], kept as two panels of 64 columns side by
//! side, so that its rows are 128 bytes, the line a 128-byte swizzle (and
//! a TMA box) works in. B's slice follows A's.

use super::{BLOCK_COLS, BLOCK_ROWS, SLICE};

/// Columns of one of B's panels.
const PANEL: u32 = 64;

/// A layout of the staged slices, in elements of 2 bytes.
pub trait TileLayout {
    /// Elements of A's slice, padding included.
    const A_ELEMENTS: u32;
    /// Elements of B's slice, padding included.
    const B_ELEMENTS: u32;
    /// Where element (`row`, `col`) of A's slice lies.
    fn a(row: u32, col: u32) -> u32;
    /// Where element (`row`, `col`) of B's slice lies, from A's start.
    fn b(row: u32, col: u32) -> u32;
}

/// Rows back to back: `ldmatrix`'s eight rows, 64 or 128 bytes apart,
/// fall in the same banks.
pub struct Unpadded;

/// Each row 8 elements (16 bytes) longer than its data.
pub struct Padded;

/// Rows back to back, each 16-byte chunk of a 128-byte line XORed with
/// the line's index mod 8: CUTLASS's `Swizzle<3, 4, 3>`, the TMA's
/// 128-byte swizzle.
pub struct Swizzled;

/// Element (`row`, `col`) of B's slice counted in its panels, `stride`
/// elements a panel row.
const fn in_panels(row: u32, col: u32, stride: u32) -> u32 {
    (col / PANEL) * SLICE * stride + row * stride + col % PANEL
}

impl TileLayout for Unpadded {
    const A_ELEMENTS: u32 = BLOCK_ROWS * SLICE;
    const B_ELEMENTS: u32 = SLICE * BLOCK_COLS;
    #[inline(always)]
    fn a(row: u32, col: u32) -> u32 {
        row * SLICE + col
    }
    #[inline(always)]
    fn b(row: u32, col: u32) -> u32 {
        Self::A_ELEMENTS + in_panels(row, col, PANEL)
    }
}

/// Padding: 16 bytes a row.
const PAD: u32 = 8;

impl TileLayout for Padded {
    const A_ELEMENTS: u32 = BLOCK_ROWS * (SLICE + PAD);
    const B_ELEMENTS: u32 = SLICE * (BLOCK_COLS / PANEL) * (PANEL + PAD);
    #[inline(always)]
    fn a(row: u32, col: u32) -> u32 {
        row * (SLICE + PAD) + col
    }
    #[inline(always)]
    fn b(row: u32, col: u32) -> u32 {
        Self::A_ELEMENTS + in_panels(row, col, PANEL + PAD)
    }
}

/// The element at `index` of a slice swizzled in 128-byte lines (64
/// elements): bits 3–5 (the 16-byte chunk) XOR bits 6–8 (the line mod 8).
/// The slices start on 1024-byte boundaries, where the pattern repeats.
const fn swizzle(index: u32) -> u32 {
    index ^ (((index >> 6) & 7) << 3)
}

impl TileLayout for Swizzled {
    const A_ELEMENTS: u32 = Unpadded::A_ELEMENTS;
    const B_ELEMENTS: u32 = Unpadded::B_ELEMENTS;
    #[inline(always)]
    fn a(row: u32, col: u32) -> u32 {
        swizzle(Unpadded::a(row, col))
    }
    #[inline(always)]
    fn b(row: u32, col: u32) -> u32 {
        Self::A_ELEMENTS + swizzle(in_panels(row, col, PANEL))
    }
}
