//! The matmul a library would launch: the tiles that suit the shape of
//! the problem and the number of SMs, as cuBLAS picks among its kernels.

use super::geometry::{Problem, SMALL_TILES, SPLIT_K, WIDE_BLOCKING};

/// The fraction of the wide tiles' rate that
/// [`matmul_small_tiles`](super::matmul_small_tiles) keeps where the grids
/// of both fill every SM: 2.974 against 3.656 ms at 4096³ on the H200
/// (seed 24, `docs/results/h200/matmul-picked.json`).
pub const SMALL_TILES_RATE: f64 = 0.81;

/// The tiles of C a kernel of the ladder can take, where the ladder's
/// last steps differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiles {
    /// 128×256, one block an SM, taken in bands.
    Wide,
    /// 64×64, four blocks an SM.
    Small,
    /// 64×64 with k split among the [`SPLIT_K`] blocks of a cluster.
    SplitK,
}

/// The tiles to run `problem` with on a GPU of `sms` SMs, which runs
/// clusters of blocks where `clusters` (compute capability 9.0 on).
///
/// The wide tiles, taken in bands
/// ([`matmul_rasterised`](super::matmul_rasterised)), run one block an
/// SM: a grid of `blocks` takes `blocks / sms` waves, rounded up, and in
/// its last one the SMs without a block idle. The small tiles
/// ([`matmul_small_tiles`](super::matmul_small_tiles)) run four blocks an
/// SM, of an eighth of the work each and many more of them, so their last
/// wave is a small part of the whole, and they keep every SM busy at
/// [`SMALL_TILES_RATE`] of the wide tiles' rate. So the wide tiles win
/// where their blocks fill more than that fraction of their waves' SMs:
/// 128 blocks on 132 SMs at 2048³ (0.97), 512 on 4 waves at 4096³ (0.97);
/// the small tiles win at 1000×3000×2000 (96 on 132, 0.73), at 1024³
/// (32) and at 512³ (8).
///
/// Where even the small tiles are fewer than the SMs, most of the GPU
/// would idle through the whole of k: splitting it
/// ([`matmul_split_k`](super::matmul_split_k)) makes [`SPLIT_K`] times the
/// blocks, which still run at once, four an SM, each over a quarter of
/// the slices (at least one). In the same run that is 1.27× the small
/// tiles at 512³ (64 tiles on 132 SMs); at 1024³ (256 tiles) the split
/// grid takes two waves and the small tiles are 1.11× faster.
pub fn tiles(problem: &Problem, sms: u32, clusters: bool) -> Tiles {
    let count = |rows: u32, cols: u32| {
        u64::from(problem.m.div_ceil(rows)) * u64::from(problem.n.div_ceil(cols))
    };
    let blocks = count(WIDE_BLOCKING.rows, WIDE_BLOCKING.cols);
    let sms = u64::from(sms.max(1));
    let busy = blocks as f64 / (blocks.div_ceil(sms) * sms) as f64;
    let small = count(SMALL_TILES.rows, SMALL_TILES.cols);
    let slices = problem.k.div_ceil(SMALL_TILES.slice);
    if busy > SMALL_TILES_RATE {
        Tiles::Wide
    } else if clusters && small <= sms && slices >= SPLIT_K {
        Tiles::SplitK
    } else {
        Tiles::Small
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picked(m: u32, n: u32, k: u32, sms: u32) -> Tiles {
        tiles(&Problem { m, n, k }, sms, true)
    }

    #[test]
    fn the_wide_tiles_where_their_waves_are_full_the_small_ones_elsewhere_split_where_too_few() {
        for (m, n, k, expected) in [
            (512, 512, 512, Tiles::SplitK),
            (1024, 1024, 1024, Tiles::Small),
            (1000, 3000, 2000, Tiles::Small),
            (2048, 2048, 2048, Tiles::Wide),
            (4095, 4095, 4095, Tiles::Wide),
            (4096, 4096, 4096, Tiles::Wide),
            (8192, 8192, 2048, Tiles::Wide),
            (8192, 8192, 8192, Tiles::Wide),
        ] {
            assert_eq!(picked(m, n, k, 132), expected, "{m}×{n}×{k}");
        }
        // On 256 SMs, 2048³'s 128 wide blocks would leave half of them idle.
        assert_eq!(picked(2048, 2048, 2048, 256), Tiles::Small);
        assert_eq!(picked(2048, 2048, 2048, 0), Tiles::Wide);
        // One small tile, k of one slice: nothing to split.
        assert_eq!(picked(1, 1, 1, 132), Tiles::Small);
        assert_eq!(picked(64, 64, 48, 132), Tiles::Small);
        assert_eq!(picked(64, 64, 49, 132), Tiles::SplitK);
        // 132 small tiles still split; 133 do not.
        assert_eq!(picked(64 * 12, 64 * 11, 512, 132), Tiles::SplitK);
        assert_eq!(picked(64 * 7, 64 * 19, 512, 132), Tiles::Small);
        // Without clusters, the small tiles.
        let square = Problem {
            m: 512,
            n: 512,
            k: 512,
        };
        assert_eq!(tiles(&square, 132, false), Tiles::Small);
        assert_eq!(picked(u32::MAX, u32::MAX, 1, 132), Tiles::Wide);
    }
}
