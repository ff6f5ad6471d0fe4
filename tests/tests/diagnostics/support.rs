//! What the tests of every kind share: the generator of their inputs and
//! a launch of one block.

use gpu_emulator::Launch;
use locality_tests::seed;
use rand::{SeedableRng, rngs::SmallRng};

/// A generator for a test's inputs, from the seed that replays it.
pub fn rng() -> SmallRng {
    SmallRng::seed_from_u64(seed())
}

/// One block of `threads` threads along x, with `shared_bytes` of
/// launch-sized shared memory.
pub fn one_block(threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        grid: (1, 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
        cluster: (1, 1, 1),
    }
}
