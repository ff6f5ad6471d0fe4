//! Where each element of the slices of A and B lies in shared memory: the
//! one thing the three staged rungs do differently.
//!
//! A's slice is `rows`×`slice` (64-byte rows at a slice of 32); B's is
//! `slice`×`cols`, kept as panels of 64 columns side by side, so that its
//! rows are 128 bytes, the line a 128-byte swizzle (and a TMA box) works
//! in. B's slice follows A's, and each stage of a pipeline the one before.

use super::geometry::Tile;

/// Columns of one of B's panels: 128 bytes of bf16.
const PANEL: u32 = 64;

/// Padding of [`Layout::Padded`]: 16 bytes a row.
const PAD: u32 = 8;

/// Where the elements of a slice lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Rows back to back: `ldmatrix`'s eight rows, 64 or 128 bytes apart,
    /// fall in the same banks.
    Unpadded,
    /// Each row 16 bytes longer than its data.
    Padded,
    /// Rows back to back, each 16-byte chunk of a 128-byte line XORed
    /// with the line's index mod 8: CUTLASS's `Swizzle<3, 4, 3>`, the
    /// TMA's 128-byte swizzle.
    Swizzled,
}

/// The element at `index` of a slice swizzled in 128-byte lines (64
/// elements): bits 3–5 (the 16-byte chunk) XOR bits 6–8 (the line mod 8).
/// Each slice starts on a 1024-byte boundary, where the pattern repeats.
const fn swizzle(index: u32) -> u32 {
    index ^ (((index >> 6) & 7) << 3)
}

impl Layout {
    const fn pad(self) -> u32 {
        match self {
            Self::Padded => PAD,
            Self::Unpadded | Self::Swizzled => 0,
        }
    }

    const fn a_elements(self, tile: Tile) -> u32 {
        tile.rows * (tile.slice + self.pad())
    }

    /// Elements of one stage: A's slice and B's, padding included.
    pub const fn stage_elements(self, tile: Tile) -> u32 {
        self.a_elements(tile) + tile.slice * (tile.cols / PANEL) * (PANEL + self.pad())
    }

    /// Bytes of every stage, the launch-sized shared memory.
    pub const fn shared_bytes(self, tile: Tile) -> u32 {
        2 * tile.stages * self.stage_elements(tile)
    }

    /// Where element (`row`, `col`) of A's slice lies in its stage.
    #[inline(always)]
    pub const fn a(self, tile: Tile, row: u32, col: u32) -> u32 {
        let index = row * (tile.slice + self.pad()) + col;
        match self {
            Self::Swizzled => swizzle(index),
            Self::Unpadded | Self::Padded => index,
        }
    }

    /// Where element (`row`, `col`) of B's slice lies in its stage.
    #[inline(always)]
    pub const fn b(self, tile: Tile, row: u32, col: u32) -> u32 {
        let stride = PANEL + self.pad();
        let index = (col / PANEL) * tile.slice * stride + row * stride + col % PANEL;
        self.a_elements(tile)
            + match self {
                Self::Swizzled => swizzle(index),
                Self::Unpadded | Self::Padded => index,
            }
    }
}
