//! The order in which an emulated launch runs its blocks. CUDA promises
//! none: blocks run in any order, and at once. A result that holds in one
//! order and not in another depends on it, and running launches in several
//! orders, drawn from a test's seed, shows it.

use std::fmt;

use gpu_core::Dim3;

/// The order in which a launch's blocks run, one after another.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BlockOrder {
    /// As the blocks are numbered: x fastest, then y, then z.
    #[default]
    Forward,
    /// The last block first.
    Reverse,
    /// A permutation drawn from the seed: the block numbered
    /// `(a · i + seed) mod blocks` runs i-th, with `a` coprime to the block
    /// count and, where the count allows, neither 1 nor `blocks - 1`, so
    /// that neighbouring blocks run apart.
    Shuffled(u64),
}

impl BlockOrder {
    /// One of the three orders, drawn from `seed`: the seed that replays a
    /// test's inputs replays its blocks' order too.
    pub fn from_seed(seed: u64) -> Self {
        match seed % 3 {
            0 => Self::Forward,
            1 => Self::Reverse,
            _ => Self::Shuffled(seed),
        }
    }

    /// Every block of `grid`, each once, in this order.
    pub fn blocks(self, grid: Dim3) -> impl Iterator<Item = Dim3> {
        let (x, y, z) = (u64::from(grid.0), u64::from(grid.1), u64::from(grid.2));
        let count = x * y * z;
        let (step, start) = match self {
            Self::Forward => (1, 0),
            Self::Reverse => (count - 1, count - 1),
            Self::Shuffled(seed) => (shuffle_step(seed, count), seed),
        };
        (0..count).map(move |i| {
            // Below 2^64 · 2^64 + 2^64: the step is below the count.
            let n =
                ((u128::from(step) * u128::from(i) + u128::from(start)) % u128::from(count)) as u64;
            // Each of the three below its dimension, which is a u32.
            ((n % x) as u32, (n / x % y) as u32, (n / (x * y)) as u32)
        })
    }
}

/// A step coprime to `count`, from `seed`: with any start, a permutation
/// of `0..count`. Not the steps 1 and `count - 1`, which run neighbouring
/// blocks one after the other (forward or reverse from another start),
/// where the count has another: all but 1, 2, 3, 4 and 6.
fn shuffle_step(seed: u64, count: u64) -> u64 {
    let neighbours_only = matches!(count, 1..=4 | 6);
    let mut draw = seed;
    loop {
        draw = mix(draw);
        let step = draw % count;
        let neighbours = step == 1 || step == count - 1;
        if gcd(step, count) == 1 && (neighbours_only || !neighbours) {
            return step;
        }
    }
}

/// SplitMix64's finaliser: a seed's bits spread over every bit.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

impl fmt::Display for BlockOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Forward => write!(f, "blocks in order"),
            Self::Reverse => write!(f, "blocks in reverse order"),
            Self::Shuffled(seed) => write!(f, "blocks shuffled by seed {seed}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every order runs every block of a grid once.
    #[test]
    fn every_order_runs_every_block_once() {
        for grid in [
            (1, 1, 1),
            (2, 1, 1),
            (3, 1, 1),
            (2, 2, 1),
            (6, 1, 1),
            (7, 1, 1),
            (3, 4, 5),
            (12, 1, 6),
            (1, 9, 1),
        ] {
            let mut expected: Vec<Dim3> = BlockOrder::Forward.blocks(grid).collect();
            expected.sort();
            for seed in 0..40 {
                let order = BlockOrder::from_seed(seed);
                let mut blocks: Vec<Dim3> = order.blocks(grid).collect();
                blocks.sort();
                assert_eq!(blocks, expected, "{order} over {grid:?}");
            }
        }
    }

    /// Consecutive seeds pick the three orders in turn, so that the tests'
    /// fresh seeds run all three.
    #[test]
    fn seeds_pick_every_order() {
        assert_eq!(BlockOrder::from_seed(9), BlockOrder::Forward);
        assert_eq!(BlockOrder::from_seed(10), BlockOrder::Reverse);
        assert_eq!(BlockOrder::from_seed(11), BlockOrder::Shuffled(11));
    }

    /// Whatever the seed, a shuffle's step is coprime to the block count,
    /// and neither 1 nor `count - 1` where the count has another such.
    #[test]
    fn every_seed_draws_a_step_that_keeps_neighbours_apart() {
        for count in 1..=64 {
            let others = (2..count.max(2) - 1).any(|step| gcd(step, count) == 1);
            for seed in 0..500 {
                let step = shuffle_step(seed, count);
                assert!(
                    step < count && gcd(step, count) == 1,
                    "{count} blocks, seed {seed}: {step}"
                );
                if others {
                    assert!(
                        step != 1 && step != count - 1,
                        "{count} blocks, seed {seed}: {step}"
                    );
                }
            }
        }
    }

    /// Forward counts x fastest; reverse is forward backwards; a shuffle
    /// of enough blocks is neither.
    #[test]
    fn the_orders_differ() {
        let grid = (4, 3, 2);
        let forward: Vec<Dim3> = BlockOrder::Forward.blocks(grid).collect();
        assert_eq!(forward[..3], [(0, 0, 0), (1, 0, 0), (2, 0, 0)]);
        assert_eq!(forward[4], (0, 1, 0));
        assert_eq!(forward[12], (0, 0, 1));
        let mut reverse: Vec<Dim3> = BlockOrder::Reverse.blocks(grid).collect();
        reverse.reverse();
        assert_eq!(reverse, forward);
        for seed in (2..60).step_by(3) {
            let shuffled: Vec<Dim3> = BlockOrder::Shuffled(seed).blocks(grid).collect();
            // Not forward or reverse from another start either: somewhere,
            // blocks that run one after the other are not neighbours.
            let linear: Vec<u32> = shuffled
                .iter()
                .map(|&(x, y, z)| x + 4 * (y + 3 * z))
                .collect();
            let apart = |step: u32| linear.windows(2).any(|w| (w[1] + 24 - w[0]) % 24 != step);
            assert!(apart(1) && apart(23), "seed {seed}: {linear:?}");
        }
    }
}
