//! The matmul a library would launch: the tiles that suit the shape of
//! the problem and the number of SMs, as cuBLAS picks among its kernels.

use super::geometry::{Problem, WIDE_BLOCKING};

/// The fraction of the wide tiles' rate that
/// [`matmul_small_tiles`](super::matmul_small_tiles) keeps where the grids
/// of both fill every SM: 3.122 against 3.660 ms at 4096³ on the H200
/// (seed 24, `docs/results/h200/matmul-tiles.json`).
pub const SMALL_TILES_RATE: f64 = 0.85;

/// The tiles of C a kernel of the ladder can take, where the ladder's
/// last steps differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tiles {
    /// 128×256, one block an SM, taken in bands.
    Wide,
    /// 64×64, four blocks an SM.
    Small,
}

/// The tiles to run `problem` with on a GPU of `sms` SMs.
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
pub fn tiles(problem: &Problem, sms: u32) -> Tiles {
    let blocks = u64::from(problem.m.div_ceil(WIDE_BLOCKING.rows))
        * u64::from(problem.n.div_ceil(WIDE_BLOCKING.cols));
    let sms = u64::from(sms.max(1));
    let busy = blocks as f64 / (blocks.div_ceil(sms) * sms) as f64;
    if busy > SMALL_TILES_RATE {
        Tiles::Wide
    } else {
        Tiles::Small
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picked(m: u32, n: u32, k: u32, sms: u32) -> Tiles {
        tiles(&Problem { m, n, k }, sms)
    }

    #[test]
    fn the_wide_tiles_where_their_waves_are_full_and_the_small_ones_elsewhere() {
        for (m, n, k, expected) in [
            (512, 512, 512, Tiles::Small),
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
        assert_eq!(picked(1, 1, 1, 132), Tiles::Small);
        assert_eq!(picked(u32::MAX, u32::MAX, 1, 132), Tiles::Wide);
    }
}
