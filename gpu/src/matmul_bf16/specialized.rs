//! The third Hopper rung: warp specialization. One warpgroup only copies
//! and two only compute, each with the registers its work needs: the
//! producer gives most of its registers back (`setmaxnreg.dec`), and its
//! one thread keeps the ring full, waiting on a stage's empty barrier
//! alone; the consumers take them (`setmaxnreg.inc`) for a 128×256 tile's
//! accumulators and never wait for a copy to be issued.
//!
//! The fourth rung is the same body on a persistent grid: one block an SM,
//! each walking many tiles, so that the ring runs on from one tile's
//! slices into the next's, and the copies of the next tile land while the
//! consumers store this one.

use gpu_std::bf16;
use gpu_std::global::GlobalMut;
use gpu_std::tensor::TensorMap2d;
use gpu_std::thread::*;
use gpu_std::warp;
use gpu_std::wgmma::{Accumulators, setmaxnreg_dec, setmaxnreg_inc};

use super::geometry::{Tile, Tiles};
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

/// The block's tiles of C ([`Tiles`] in bands of `BAND_ROWS` rows), its
/// warpgroups specialized. Thread 0 initialises the barriers; then the
/// producer warpgroup lowers its registers and one lane of its first warp,
/// elected by `elect.sync` as CUTLASS's producers are, for each
/// slice of each tile, waits until the consumers have left the slice's
/// stage (from the second pass round the ring on) and copies A's box and
/// B's four panels into it. Each consumer warpgroup raises its registers
/// and, for each slice, waits for its stage's copies, queues its four
/// `wgmma`s of 64×256×16 and waits for all but them, then says it is done
/// with the stage before; at a tile's end it waits for the last and says so
/// at once, so that the producer fills the ring with the next tile's slices
/// while it stores this one's.
///
/// # Safety
/// As [`super::ring::ring`], `maps` A's and B's, with
/// [`super::ring_tiles`]`(SPECIALIZED)`'s shared memory and block, and a
/// grid of one or more blocks.
#[inline(always)]
pub unsafe fn specialized<const BAND_ROWS: u32>(
    (maps, c): ([TensorMap2d<bf16>; 2], GlobalMut<f32>),
    (m, n, k): (u32, u32, u32),
) {
    let tile = SPECIALIZED;
    // SAFETY: every thread; the launch gives the ring.
    let ring = unsafe { Ring::new(tile, maps, CONSUMERS) };
    let slices = ring.slices(k);
    let tiles = Tiles::<BAND_ROWS>::of_block(tile, (m, n));
    let group = thread_idx_x() / 128;
    if group == 0 {
        // SAFETY: the whole warpgroup, which needs few registers.
        unsafe { setmaxnreg_dec::<PRODUCER_REGISTERS>() };
        if thread_idx_x() >= warp::SIZE || !warp::elect_sync(warp::ALL_LANES) {
            return;
        }
        let mut position = 0;
        for origin in tiles {
            for slice in 0..slices {
                let (stage, _) = ring.stage(position);
                // SAFETY: from the second pass round the ring on, the
                // empty barrier's phase says the consumers have waited for
                // the wgmmas that read the stage; the full one keeps them
                // from reading it before the copies land.
                unsafe {
                    if position >= tile.stages {
                        ring.empty(stage).wait(ring.parity(position - tile.stages));
                    }
                    ring.load(maps, (position, slice), origin);
                }
                position += 1;
            }
        }
        return;
    }
    // SAFETY: the whole warpgroup; the producer gave its registers back.
    unsafe { setmaxnreg_inc::<CONSUMER_REGISTERS>() };
    let consumer = group - 1;
    let mut first = 0;
    for (row0, col0) in tiles {
        let mut flight = Accumulators::<128>::ZERO.fence();
        for position in first..first + slices {
            // SAFETY: the whole consumer warpgroup, each position in
            // order; the wgmmas of the one before are retired.
            unsafe {
                flight = ring.consume(flight, position, consumer);
                if position > first {
                    ring.release(position - 1);
                }
            }
        }
        first += slices;
        let sums = flight.wait().0;
        if let Some(last) = first.checked_sub(1) {
            // SAFETY: every wgmma is retired.
            unsafe { ring.release(last) };
        }
        // Stored as two halves of 128 columns, whose loops the compiler
        // unrolls whole: one of 256 it keeps, and the accumulators,
        // indexed by its counter, would go to local memory.
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
}
