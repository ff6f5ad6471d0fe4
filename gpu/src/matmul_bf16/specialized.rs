//! The third Hopper rung: warp specialization. One warpgroup only copies
//! and two only compute, each with the registers its work needs: the
//! producer gives most of its registers back (`setmaxnreg.dec`), and its
//! one thread keeps the ring full, waiting on a stage's empty barrier
//! alone; the consumers take them (`setmaxnreg.inc`) for a 128×256 tile's
//! accumulators and never wait for a copy to be issued.

use gpu_std::bf16;
use gpu_std::global::GlobalMut;
use gpu_std::tensor::TensorMap2d;
use gpu_std::thread::*;
use gpu_std::wgmma::{Accumulators, setmaxnreg_dec, setmaxnreg_inc};

use super::geometry::Tile;
use super::ring::Ring;
use super::warpgroup::store;

/// The block's tile: 128×256 of C, slices of 64, four stages; three
/// warpgroups (the tile's twelve warps), the first the producer.
pub const SPECIALIZED: Tile = Tile {
    rows: 128,
    cols: 256,
    slice: 64,
    warps_down: 3,
    warps_across: 4,
    stages: 4,
};

/// Threads that say they are done with a stage: the consumers'.
const CONSUMERS: u32 = 256;
/// Registers a thread: the producer's after it gives them back, the
/// consumers' after they take them (128 × 40 + 256 × 232 of the SM's
/// 65536).
const PRODUCER_REGISTERS: u32 = 40;
const CONSUMER_REGISTERS: u32 = 232;

/// The block's tile of C, its warpgroups specialized. Thread 0
/// initialises the barriers; then the producer warpgroup lowers its
/// registers and its first thread, for each slice, waits until the
/// consumers have left the slice's stage (from the second pass round the
/// ring on) and copies A's box and B's four panels into it. Each consumer
/// warpgroup raises its registers and, for each slice, waits for its
/// stage's copies, queues its four `wgmma`s of 64×256×16 and waits for all
/// but them, then says it is done with the stage before.
///
/// # Safety
/// As [`super::ring::ring`], `maps` A's and B's, with
/// [`super::ring_tiles`]`(SPECIALIZED)`'s launch.
#[inline(always)]
pub unsafe fn specialized(
    (maps, c): ([TensorMap2d<bf16>; 2], GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    let tile = SPECIALIZED;
    // SAFETY: every thread; the launch gives the ring.
    let ring = unsafe { Ring::new(tile, maps, CONSUMERS) };
    let (origin, slices) = (ring.origin(), ring.slices(k));
    let group = thread_idx_x() / 128;
    if group == 0 {
        // SAFETY: the whole warpgroup, which needs few registers.
        unsafe { setmaxnreg_dec::<PRODUCER_REGISTERS>() };
        if thread_idx_x() != 0 {
            return;
        }
        for slice in 0..slices {
            let (stage, _) = ring.stage(slice);
            // SAFETY: from the second pass round the ring on, the empty
            // barrier's phase says the consumers have waited for the
            // wgmmas that read the stage; the full one keeps them from
            // reading it before the copies land.
            unsafe {
                if slice >= tile.stages {
                    ring.empty(stage).wait(ring.parity(slice - tile.stages));
                }
                ring.load(maps, slice, origin);
            }
        }
        return;
    }
    // SAFETY: the whole warpgroup; the producer gave its registers back.
    unsafe { setmaxnreg_inc::<CONSUMER_REGISTERS>() };
    let consumer = group - 1;
    let mut flight = Accumulators::<128>::ZERO.fence();
    for slice in 0..slices {
        // SAFETY: the whole consumer warpgroup, each slice in order.
        flight = unsafe { ring.consume(flight, slice, consumer) };
    }
    let (row0, col0) = origin;
    let sums = flight.wait().0;
    // Stored as two halves of 128 columns, whose loops the compiler
    // unrolls whole: one of 256 it keeps, and the accumulators, indexed
    // by its counter, would go to local memory.
    let (left, right) = sums.split_at(64);
    let row = row0 + 64 * consumer;
    // SAFETY: each thread stores its own elements, inside C.
    unsafe {
        store(
            &Accumulators::<64>(left.try_into().expect("64")),
            c,
            (row, col0),
            (m, n),
        );
        store(
            &Accumulators::<64>(right.try_into().expect("64")),
            c,
            (row, col0 + 128),
            (m, n),
        );
    }
}
