//! What the tests of every kind share: the generator of their inputs, a
//! launch of one block, a block of threads around one shared word, and
//! the assertions on a diagnostic.

use gpu_emulator::{Diagnostic, Launch};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};
use locality_tests::seed;
use rand::{SeedableRng, rngs::SmallRng};

/// A generator for a test's inputs, from the seed that replays it.
pub fn rng() -> SmallRng {
    SmallRng::seed_from_u64(seed())
}

/// A grid of `grid` blocks along x, each of `threads` threads along x
/// with `shared_bytes` of launch-sized shared memory.
pub fn blocks(grid: u32, threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        grid: (grid, 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
        cluster: (1, 1, 1),
    }
}

/// One block of `threads` threads along x, with `shared_bytes` of
/// launch-sized shared memory.
pub fn one_block(threads: u32, shared_bytes: u32) -> Launch {
    blocks(1, threads, shared_bytes)
}

/// Runs `body` as kernel `name` on one block of 32 threads over one word
/// of launch-sized shared memory that thread 0 sets to `first` before a
/// barrier.
pub fn on_one_word(
    name: &'static str,
    first: u32,
    body: fn(SharedArray<u32>, u32),
) -> Result<(), Diagnostic> {
    let thread = || {
        let t = thread_idx_x();
        // SAFETY: one word of launch-sized memory.
        unsafe {
            let word = SharedArray::<u32>::launch_sized();
            if t == 0 {
                word.write(0, first);
            }
            sync_threads();
            body(word, t);
        }
    };
    gpu_emulator::run(name, &one_block(32, 4), &thread)
}

/// Asserts that `diagnostic`'s message says `words`.
#[track_caller]
pub fn assert_says(diagnostic: &Diagnostic, words: &str) {
    assert!(diagnostic.to_string().contains(words), "{diagnostic}");
}

/// Asserts that a diagnostic's fault matches the pattern, showing the
/// diagnostic where it does not.
macro_rules! assert_fault {
    ($diagnostic:expr, $fault:pat $(if $guard:expr)?) => {
        assert!(matches!($diagnostic.fault, $fault $(if $guard)?), "{}", $diagnostic)
    };
}
pub(crate) use assert_fault;
