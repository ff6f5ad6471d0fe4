//! The shapes the tensor-core matmuls are built of: an `mma`'s tile, a
//! copy's chunk, a block's tile of C and its warps, and the order in which
//! blocks take the tiles, one each or walking many.

use gpu_std::thread::*;

use crate::matmul::{BAND_ROWS, TileOrder, in_bands, tile_position};

/// Elements of a row of A or B copied at once: 16 bytes.
pub const CHUNK: u32 = 8;

/// The warp tile of [`mma_global`](super::mma_global): one `mma.sync` of 16 rows by 8 columns.
pub const MMA_ROWS: u32 = 16;
pub const MMA_COLS: u32 = 8;
/// The k of one `mma.sync`.
pub const MMA_K: u32 = 16;

/// A block's tile of C and its warps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    /// Rows and columns of C a block computes.
    pub rows: u32,
    pub cols: u32,
    /// Elements of k a slice of A and B holds.
    pub slice: u32,
    /// Warps down and across the tile, each a `rows / warps_down` ×
    /// `cols / warps_across` warp tile.
    pub warps_down: u32,
    pub warps_across: u32,
    /// Slices in shared memory at once: one, or a pipeline's stages.
    pub stages: u32,
}

impl Tile {
    pub const fn threads(self) -> u32 {
        32 * self.warps_down * self.warps_across
    }

    pub const fn warp_rows(self) -> u32 {
        self.rows / self.warps_down
    }

    pub const fn warp_cols(self) -> u32 {
        self.cols / self.warps_across
    }

    /// `mma` tiles of 16 rows and of 8 columns in a warp tile.
    pub const fn m_tiles(self) -> usize {
        (self.warp_rows() / 16) as usize
    }

    pub const fn n_tiles(self) -> usize {
        (self.warp_cols() / 8) as usize
    }

    /// Whether a copy step of the block's threads covers whole rows of
    /// A's slice and of B's, and the slices a whole number of steps, as
    /// the staged copies (`each_chunk`) require.
    pub const fn copies_whole_rows(self) -> bool {
        let (a_chunks, b_chunks) = (self.slice / CHUNK, self.cols / CHUNK);
        self.threads().is_multiple_of(a_chunks)
            && self.threads().is_multiple_of(b_chunks)
            && self.rows.is_multiple_of(self.threads() / a_chunks)
            && self.slice.is_multiple_of(self.threads() / b_chunks)
    }
}

/// The first row and column of this block's `tile` of C, the blocks
/// taking the tiles in bands of [`BAND_ROWS`] rows, as the FP32
/// `matmul_rasterised` does.
#[inline(always)]
pub fn tile_in_bands(tile: Tile) -> (u32, u32) {
    let (row, col) = tile_position(TileOrder::Bands { rows: BAND_ROWS });
    (row * tile.rows, col * tile.cols)
}

/// The tiles of C that a block computes one after another, as their
/// first row and column: the tile its index among the grid's blocks
/// names, then every grid's worth of tiles after it, taken in bands of
/// `BAND_ROWS` rows (row by row where it is 1). A grid of one block a tile
/// gives each block its one; a persistent grid, smaller, walks them all.
#[derive(Clone, Copy)]
pub struct Tiles<const BAND_ROWS: u32> {
    tile: Tile,
    /// Tiles across and down C.
    across: u32,
    down: u32,
    next: u32,
    step: u32,
}

impl<const BAND_ROWS: u32> Tiles<BAND_ROWS> {
    /// This block's tiles of an m×n C.
    #[inline(always)]
    pub fn of_block(tile: Tile, (m, n): (u32, u32)) -> Self {
        Self {
            tile,
            across: n.div_ceil(tile.cols),
            down: m.div_ceil(tile.rows),
            next: block_idx_y() * grid_dim_x() + block_idx_x(),
            step: grid_dim_x() * grid_dim_y(),
        }
    }
}

impl<const BAND_ROWS: u32> Iterator for Tiles<BAND_ROWS> {
    type Item = (u32, u32);

    #[inline(always)]
    fn next(&mut self) -> Option<(u32, u32)> {
        if self.next >= self.across * self.down {
            return None;
        }
        // Row by row without `in_bands`: a call of it with one row made
        // LLVM compile it otherwise for the FP32 kernels that share it, in
        // the sm_90a build only, whose code must be the portable build's.
        let (row, col) = if BAND_ROWS == 1 {
            (self.next / self.across, self.next % self.across)
        } else {
            in_bands(BAND_ROWS, self.next, (self.across, self.down))
        };
        self.next += self.step;
        Some((row * self.tile.rows, col * self.tile.cols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tile of `rows`×`cols`, slices of `slice`, one warp.
    const fn tile(rows: u32, cols: u32, slice: u32, warps_down: u32) -> Tile {
        Tile {
            rows,
            cols,
            slice,
            warps_down,
            warps_across: 1,
            stages: 1,
        }
    }

    #[test]
    fn a_tile_copies_whole_rows_only_where_each_of_its_steps_does() {
        assert!(tile(128, 128, 32, 8).copies_whole_rows());
        // 256 threads over A's rows of 3 chunks.
        assert!(!tile(128, 128, 24, 8).copies_whole_rows());
        // 32 threads over B's rows of 7 chunks, all else whole.
        assert!(!tile(32, 56, 8, 1).copies_whole_rows());
        // 96 rows of A, 64 a step.
        assert!(!tile(96, 128, 32, 8).copies_whole_rows());
        // Slices of 16 rows of B, 32 a step.
        assert!(!tile(128, 64, 16, 8).copies_whole_rows());
    }
}
