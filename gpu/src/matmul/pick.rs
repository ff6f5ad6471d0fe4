//! The matmul a library would launch: the tiles that suit the shape of
//! the problem and the number of SMs, as cuBLAS picks among its kernels.

use super::geometry::{Blocking, MID_TILES, Problem, SMALL_TILES, SPLIT_K, WIDE_BLOCKING};

/// The fraction of the wide tiles' rate that
/// [`matmul_small_tiles`](super::matmul_small_tiles) keeps where the grids
/// of both fill every SM: 2.974 against 3.656 ms at 4096³ on the H200
/// (seed 24, `docs/results/h200/matmul-picked.json`).
pub const SMALL_TILES_RATE: f64 = 0.81;

/// The fraction of the wide tiles' rate that
/// [`matmul_mid_tiles`](super::matmul_mid_tiles) keeps where the grids of
/// both fill every wave: 2.229 against 2.301 ms at 1536×8448×4096, where
/// the wide tiles make 3 waves on 132 SMs and these 4, on the H200 (seed
/// 24, `docs/results/h200/matmul-mid-tiles.json`). At 8192³ the wide
/// tiles' 16 waves then take less than these tiles' 21 of three quarters
/// the work (16.25): 23.28 against 23.37 ms in that run.
pub const MID_TILES_RATE: f64 = 0.97;

/// The tiles of C a kernel of the ladder can take, where the ladder's
/// last steps differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiles {
    /// 128×256, one block an SM, taken in bands.
    Wide,
    /// 128×192, one block an SM, taken in bands.
    Mid,
    /// 64×64, four blocks an SM.
    Small,
    /// 64×64 with k split among the [`SPLIT_K`] blocks of a cluster.
    SplitK,
}

/// The tiles to run `problem` with on a GPU of `sms` SMs, which runs
/// clusters of blocks where `clusters` (compute capability 9.0 on): those
/// whose grid takes the least time, counted in elements of C one SM
/// computes at the wide tiles' rate.
///
/// The wide and the three-quarter tiles
/// ([`matmul_rasterised`](super::matmul_rasterised),
/// [`matmul_mid_tiles`](super::matmul_mid_tiles)) run one block an SM: a
/// grid of `blocks` takes `blocks / sms` waves, rounded up, and in its last
/// one the SMs without a block idle. Each wave lasts as long as one of its
/// tiles takes: its elements over its rate ([`MID_TILES_RATE`]). The small tiles
/// ([`matmul_small_tiles`](super::matmul_small_tiles)) run four blocks an
/// SM, of an eighth of the work each and many more of them, so their last
/// wave is a small part of the whole: they take their work spread over
/// every SM, at [`SMALL_TILES_RATE`] of the wide tiles' rate. So the wide
/// tiles win where their waves are full (128 blocks on 132 SMs at 2048³,
/// 512 in 4 waves at 4096³), the three-quarter tiles where the wide tiles'
/// one wave leaves many SMs idle and theirs does not (1000×3000×2000: 96
/// wide blocks and 128 three-quarter ones on 132 SMs), and the small tiles
/// where neither fills a wave (1024³: 32 and 48 blocks; 512³: 8 and 12).
///
/// Where even the small tiles are fewer than the SMs, most of the GPU
/// would idle through the whole of k: splitting it
/// ([`matmul_split_k`](super::matmul_split_k)) makes [`SPLIT_K`] times the
/// blocks, which still run at once, four an SM, each over a quarter of
/// the slices (at least one). In the same run that is 1.27× the small
/// tiles at 512³ (64 tiles on 132 SMs); at 1024³ (256 tiles) the split
/// grid takes two waves and the small tiles are 1.11× faster.
pub fn tiles(problem: &Problem, sms: u32, clusters: bool) -> Tiles {
    let sms = u64::from(sms.max(1));
    let count = |tiles: Blocking| {
        u64::from(problem.m.div_ceil(tiles.rows)) * u64::from(problem.n.div_ceil(tiles.cols))
    };
    let elements = |tiles: Blocking| f64::from(tiles.rows * tiles.cols);
    let in_waves =
        |tiles: Blocking, rate: f64| count(tiles).div_ceil(sms) as f64 * elements(tiles) / rate;
    let wide = in_waves(WIDE_BLOCKING, 1.0);
    let mid = in_waves(MID_TILES, MID_TILES_RATE);
    let small_tiles = count(SMALL_TILES);
    let small = small_tiles as f64 * elements(SMALL_TILES) / sms as f64 / SMALL_TILES_RATE;
    let slices = problem.k.div_ceil(SMALL_TILES.slice);
    if small >= wide.min(mid) {
        if mid < wide { Tiles::Mid } else { Tiles::Wide }
    } else if clusters && small_tiles <= sms && slices >= SPLIT_K {
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
    fn the_tiles_whose_waves_take_least_time_split_where_even_the_small_ones_are_too_few() {
        for (m, n, k, expected) in [
            (512, 512, 512, Tiles::SplitK),
            (1024, 1024, 1024, Tiles::Small),
            (1000, 3000, 2000, Tiles::Mid),
            (2048, 2048, 2048, Tiles::Wide),
            (4095, 4095, 4095, Tiles::Wide),
            (4096, 4096, 4096, Tiles::Wide),
            (8192, 8192, 2048, Tiles::Wide),
            (8192, 8192, 8192, Tiles::Wide),
        ] {
            assert_eq!(picked(m, n, k, 132), expected, "{m}×{n}×{k}");
        }
        // Both one-block-an-SM grids full: 3 waves of wide tiles against 4
        // of three quarters the work, at 0.97 of the rate (as long as 3.09
        // waves of wide tiles).
        assert_eq!(picked(1536, 8448, 4096, 132), Tiles::Wide);
        // On 120 SMs the 128 three-quarter tiles take two waves; the small
        // tiles' 752 blocks (0.97) beat the wide tiles' one wave.
        assert_eq!(picked(1000, 3000, 2000, 120), Tiles::Small);
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
