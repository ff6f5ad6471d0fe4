//! What the register-blocked matmuls share: staging a slice of A and B in
//! shared memory (through registers or with asynchronous copies), reading
//! a thread's fragments of it, the outer product, and storing a thread's
//! block of C.

use super::geometry::Blocking;
use gpu_std::global::{Global, GlobalMut, row_major};
use gpu_std::{Real, pipeline, shared::SharedArray, thread::*};

/// The order in which a kernel's blocks take the tiles of C, from a grid
/// of one block a tile (n along x, m along y). The GPU starts blocks in
/// the grid's order, x first, so the order decides which tiles run at
/// once, and so how much of the A and B they read the L2 holds for each
/// other.
#[derive(Clone, Copy)]
pub(crate) enum TileOrder {
    /// Block (x, y) takes tile (y, x): the blocks running at once cover
    /// whole rows of tiles, every tile of B's width and few of A's height.
    RowByRow,
    /// Blocks, in the order they start, walk bands of `rows` rows of
    /// tiles, down each column of a band before the next: the blocks
    /// running at once cover a squarer patch of C, which reads fewer
    /// distinct rows of A and columns of B.
    Bands { rows: u32 },
}

/// The first row and column of this block's tile of C, blocked as
/// `blocking` and taken in `order`.
#[inline(always)]
pub(super) fn tile_origin(blocking: Blocking, order: TileOrder) -> (u32, u32) {
    let (tile_row, tile_col) = tile_position(order);
    (tile_row * blocking.rows, tile_col * blocking.cols)
}

/// The row and column, in tiles, of this block's tile of C, taken in
/// `order` (the tensor-core matmuls' tiles too).
#[inline(always)]
pub(crate) fn tile_position(order: TileOrder) -> (u32, u32) {
    match order {
        TileOrder::RowByRow => (block_idx_y(), block_idx_x()),
        TileOrder::Bands { rows } => in_bands(
            rows,
            block_idx_y() * grid_dim_x() + block_idx_x(),
            (grid_dim_x(), grid_dim_y()),
        ),
    }
}

/// The row and column of the tile taken `index`th of a C of
/// `across`×`down` tiles in bands of `rows` rows ([`TileOrder::Bands`];
/// row by row where `rows` is 1).
#[inline(always)]
pub(crate) fn in_bands(rows: u32, index: u32, (across, down): (u32, u32)) -> (u32, u32) {
    let band = rows * across;
    let first_row = index / band * rows;
    // The last band may have fewer rows.
    let band_rows = rows.min(down - first_row);
    let in_band = index % band;
    (first_row + in_band % band_rows, in_band / band_rows)
}

/// The first row and column, in the block's tile of C, of this thread's
/// `thread_rows`×`thread_cols` block, threads laid across the tile row by
/// row.
#[inline(always)]
pub(super) fn thread_block_origin(blocking: Blocking) -> (u32, u32) {
    let threads_per_row = blocking.cols / blocking.thread_cols;
    let t = thread_idx_x();
    (
        t / threads_per_row * blocking.thread_rows,
        t % threads_per_row * blocking.thread_cols,
    )
}

/// A block's tiles of one slice of A and B, blocked as `blocking`, from
/// element `first` of the launch-sized shared memory on: the A tile's
/// k-rows or rows `a_rows` apart (its rows plus any padding), then the B
/// tile.
///
/// # Safety
/// The launch provides [`super::blocked_shared_elements`] f32 from
/// `first` on, with the same padding.
#[inline(always)]
pub(super) unsafe fn slice_tiles(
    blocking: Blocking,
    a_rows: u32,
    first: u32,
) -> (SharedArray<f32>, SharedArray<f32>) {
    // SAFETY: by this function's contract.
    unsafe {
        let a_tile = SharedArray::<f32>::launch_sized().after(first);
        (a_tile, a_tile.after(a_rows * blocking.slice))
    }
}

/// The index of element (`row`, `col`) of a `rows`×`cols` row-major
/// matrix, or `None` outside it.
///
/// # Safety
/// `rows × cols` fits in `u32`.
#[inline(always)]
unsafe fn element_index(row: u32, col: u32, rows: u32, cols: u32) -> Option<usize> {
    // SAFETY: inside the matrix, the index fits in u32.
    (row < rows && col < cols).then(|| unsafe { row_major(row, col, cols) })
}

/// Element (`row`, `col`) of a `rows`×`cols` row-major matrix, or zero
/// outside it: a tile hanging over the matrix's edge is staged with zeros,
/// which add nothing, so that every size works.
///
/// # Safety
/// `rows × cols` elements fit in `matrix` and their indices in `u32`.
#[inline(always)]
pub(super) unsafe fn element_or_zero(
    matrix: Global<f32>,
    row: u32,
    col: u32,
    rows: u32,
    cols: u32,
) -> f32 {
    // SAFETY: by this function's contract.
    unsafe { read_or_zero(matrix, element_index(row, col, rows, cols)) }
}

/// `matrix[element]`, or zero for `None`.
///
/// # Safety
/// The element lies inside `matrix`.
#[inline(always)]
unsafe fn read_or_zero(matrix: Global<f32>, element: Option<usize>) -> f32 {
    match element {
        // SAFETY: by this function's contract.
        Some(element) => unsafe { matrix.read(element) },
        None => 0.0,
    }
}

/// How an element reaches a tile: `tile[index] = matrix[element]`, or zero
/// for `None`; [`load_and_store`] through a register, or
/// [`pipeline::memcpy_async`] straight from global to shared memory, the
/// destination then read only after the copier's wait and, by other
/// threads, a barrier after it.
///
/// # Safety
/// As [`stage_a`]'s, for each element it stages.
pub(super) type Stage = unsafe fn(SharedArray<f32>, u32, Global<f32>, Option<usize>);

/// Through a register: a load, then a store.
///
/// # Safety
/// As [`stage_a`]'s.
#[inline(always)]
pub(super) unsafe fn load_and_store(
    tile: SharedArray<f32>,
    index: u32,
    matrix: Global<f32>,
    element: Option<usize>,
) {
    // SAFETY: by this function's contract.
    unsafe { tile.write(index, read_or_zero(matrix, element)) };
}

/// Elements of a row of A that a warp's staging loads take at once: eight,
/// one 32-byte sector, from each of four rows.
const A_SECTOR: u32 = 8;

/// Stages A's part of one slice of k of a tile blocked as `blocking` with
/// `stage`: the tile transposed (element (row, i) at `i × a_rows + row`,
/// `a_rows` being the tile's rows plus any padding), a warp's loads
/// covering [`A_SECTOR`] elements of four rows; elements outside A are
/// zeros.
///
/// # Safety
/// A is m×k, its indices fit in `u32`; the tile lies in the launch-sized
/// shared memory, and no other thread touches this thread's elements of it
/// until the next barrier; called by every thread of the block.
#[inline(always)]
pub(super) unsafe fn stage_a(
    blocking: Blocking,
    stage: Stage,
    a: Global<f32>,
    a_tile: SharedArray<f32>,
    a_rows: u32,
    (first_row, k0): (u32, u32),
    (m, k): (u32, u32),
) {
    let group = A_SECTOR * blocking.rows;
    let t = thread_idx_x();
    for load in 0..blocking.a_loads_per_thread() {
        let e = t + load * blocking.threads();
        let (row, i) = (e % group / A_SECTOR, e / group * A_SECTOR + e % A_SECTOR);
        // SAFETY: by this function's contract; the index is checked
        // against A.
        unsafe {
            stage(
                a_tile,
                i * a_rows + row,
                a,
                element_index(first_row + row, k0 + i, m, k),
            )
        };
    }
}

/// Stages B's part of one slice of k of a tile blocked as `blocking` with
/// `stage`: the tile as B is laid out, a warp's loads 128 bytes of one row;
/// elements outside B are zeros.
///
/// # Safety
/// As [`stage_a`], for B k×n.
#[inline(always)]
pub(super) unsafe fn stage_b(
    blocking: Blocking,
    stage: Stage,
    b: Global<f32>,
    b_tile: SharedArray<f32>,
    (first_col, k0): (u32, u32),
    (n, k): (u32, u32),
) {
    let t = thread_idx_x();
    for load in 0..blocking.b_loads_per_thread() {
        let e = t + load * blocking.threads();
        let (row, col) = (k0 + e / blocking.cols, first_col + e % blocking.cols);
        // SAFETY: by this function's contract; the index is checked
        // against B.
        unsafe { stage(b_tile, e, b, element_index(row, col, k, n)) };
    }
}

/// Copies B's part of one slice of k of a tile blocked as `blocking` where
/// B's rows start on 16-byte boundaries (n a multiple of 4): 16-byte spans
/// of four elements, a warp's copies 512 bytes of one row. A span lies
/// wholly inside B or wholly outside (then zero-filled): it starts at a
/// multiple of 4, and n is one.
///
/// # Safety
/// As [`stage_b`], with n a multiple of 4; the tile starts on a 16-byte
/// boundary; the copies are waited for before any thread reads the tile.
#[inline(always)]
pub(super) unsafe fn copy_b_spans(
    blocking: Blocking,
    b: Global<f32>,
    b_tile: SharedArray<f32>,
    (first_col, k0): (u32, u32),
    (n, k): (u32, u32),
) {
    let spans_per_row = blocking.cols / 4;
    let t = thread_idx_x();
    for load in 0..blocking.slice * spans_per_row / blocking.threads() {
        let span = t + load * blocking.threads();
        let (row, col) = (
            k0 + span / spans_per_row,
            first_col + span % spans_per_row * 4,
        );
        let count = if row < k && col < n { 4 } else { 0 };
        // SAFETY: by this function's contract; an index is formed only for
        // a span that starts inside B.
        unsafe {
            let element = if count > 0 { row_major(row, col, n) } else { 0 };
            pipeline::memcpy_async_vector(b_tile, span * 4, b, element, count);
        }
    }
}

/// `N` elements of `tile` in 16-byte loads: four adjacent elements from
/// `start`, four from `start + apart`, and so on.
///
/// # Safety
/// As [`SharedArray::read_vector`] for each load.
#[inline(always)]
pub(super) unsafe fn fragment<const N: usize>(
    tile: SharedArray<f32>,
    start: u32,
    apart: u32,
) -> [f32; N] {
    let mut elements = [0.0; N];
    for quad in 0..N / 4 {
        // SAFETY: by this function's contract.
        let loaded = unsafe { tile.read_vector(start + quad as u32 * apart) };
        elements[4 * quad..4 * quad + 4].copy_from_slice(&loaded);
    }
    elements
}

/// `sums += a_column · b_row`, the outer product: every element of A meets
/// every element of B, `R × C` FMAs from `R + C` loaded values.
#[inline(always)]
pub(super) fn add_outer_product<const R: usize, const C: usize>(
    sums: &mut [[f32; C]; R],
    a_column: &[f32; R],
    b_row: &[f32; C],
) {
    for (row, &a_value) in sums.iter_mut().zip(a_column) {
        for (sum, &b_value) in row.iter_mut().zip(b_row) {
            *sum = Real::mul_add(a_value, b_value, *sum);
        }
    }
}

/// Stores a thread's register block of C: `sums[r][j]` is element
/// (`row_of(r)`, `col_of(j)`), stored where it lies inside m×n.
///
/// # Safety
/// `c` is m×n, indices fit in `u32`, and no other thread stores these
/// elements.
#[inline(always)]
pub(super) unsafe fn store_block<const R: usize, const C: usize>(
    c: GlobalMut<f32>,
    sums: &[[f32; C]; R],
    row_of: impl Fn(u32) -> u32,
    col_of: impl Fn(u32) -> u32,
    m: u32,
    n: u32,
) {
    for (r, row_sums) in sums.iter().enumerate() {
        let row = row_of(r as u32);
        for (j, &sum) in row_sums.iter().enumerate() {
            let col = col_of(j as u32);
            if row < m && col < n {
                // SAFETY: inside C, and this thread's own element.
                unsafe { c.write(row_major(row, col, n), sum) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpu_emulator as emulator;
    use gpu_std::Launch;
    use std::sync::Mutex;

    /// The tile of C each block of a `grid` takes in `order`, in the order
    /// the blocks start, in tiles of one element.
    fn tiles_taken(grid: (u32, u32), order: TileOrder) -> Vec<(u32, u32)> {
        let one = Blocking {
            rows: 1,
            cols: 1,
            slice: 1,
            thread_rows: 1,
            thread_cols: 1,
        };
        let launch = Launch {
            grid: (grid.0, grid.1, 1),
            block: (1, 1, 1),
            shared_bytes: 0,
            cluster: (1, 1, 1),
        };
        let taken = Mutex::new(Vec::new());
        let record = || {
            let started = block_idx_y() * grid_dim_x() + block_idx_x();
            let tile = tile_origin(one, order);
            taken.lock().unwrap().push((started, tile));
        };
        emulator::run("tile_origin", &launch, &record).unwrap();
        let mut taken = taken.into_inner().unwrap();
        taken.sort();
        taken.into_iter().map(|(_, tile)| tile).collect()
    }

    #[test]
    fn every_order_takes_each_tile_once() {
        for grid in [(1, 1), (16, 32), (5, 37), (32, 64), (3, 17), (40, 2)] {
            for order in [TileOrder::RowByRow, TileOrder::Bands { rows: 16 }] {
                let mut tiles = tiles_taken(grid, order);
                let rows = match order {
                    TileOrder::RowByRow => 1,
                    TileOrder::Bands { rows } => rows,
                };
                let by_index: Vec<_> = (0..grid.0 * grid.1)
                    .map(|i| in_bands(rows, i, grid))
                    .collect();
                assert_eq!(by_index, tiles, "{grid:?}");
                tiles.sort();
                let every: Vec<_> = (0..grid.1)
                    .flat_map(|row| (0..grid.0).map(move |col| (row, col)))
                    .collect();
                assert_eq!(tiles, every, "{grid:?}");
            }
        }
    }

    #[test]
    fn bands_go_down_a_column_of_a_band_before_the_next() {
        let tiles = tiles_taken((5, 37), TileOrder::Bands { rows: 16 });
        // Two whole bands of 16 rows, then one of 5.
        assert_eq!(
            &tiles[..17],
            [
                (0..16).map(|row| (row, 0)).collect::<Vec<_>>(),
                vec![(0, 1)]
            ]
            .concat()
        );
        assert_eq!(tiles[5 * 16], (16, 0));
        assert_eq!(
            &tiles[5 * 32..5 * 32 + 6],
            [(32, 0), (33, 0), (34, 0), (35, 0), (36, 0), (32, 1)]
        );
        assert_eq!(
            tiles_taken((5, 37), TileOrder::RowByRow)[..6],
            [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0)]
        );
    }
}
