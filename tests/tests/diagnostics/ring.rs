//! What a ring of stages rests on: an mbarrier phase orders what a thread
//! did before its arrival before what a waiter does after its wait, and no
//! more; `wgmma.wait_group 1` retires every group but the newest, whose
//! stage stays out of reach; a tensor copy of bf16 lays its box out as the
//! map says.

use gpu_emulator::{AccessKind, Diagnostic, Fault};
use gpu_std::bf16;
use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::tensor::{Element, Swizzle, TensorMap2d, TiledMap};
use gpu_std::thread::{sync_threads, thread_idx_x};
use gpu_std::wgmma::{Accumulators, MatrixDescriptor, Swizzle as Layout};

use crate::support::{assert_fault, one_block};
use crate::tensor::tensor_copy;

/// When the reader arrives, and whether the writer waits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Handoff {
    /// The reader reads, then arrives; the writer waits, then writes.
    ReadThenArrive,
    /// The reader arrives, then reads: its read is not before the phase.
    ArriveThenRead,
    /// The writer writes without waiting.
    NoWait,
}

/// Thread 33 (another warp than thread 0's) reads word 0 and arrives on a
/// barrier of one arrival; thread 0 waits on its phase and writes word 0.
fn handoff(order: Handoff) -> Result<(), Diagnostic> {
    let body = || {
        let t = thread_idx_x();
        // SAFETY: word 0 and the barrier's word 1 of 16 bytes; the
        // emulator checks the rest.
        unsafe {
            let words = SharedArray::<u64>::launch_sized();
            let barrier = Mbarrier::at(words.after(1));
            if t == 0 {
                words.write(0, 1);
                barrier.init(1);
            }
            sync_threads();
            if t == 33 {
                if order == Handoff::ArriveThenRead {
                    barrier.arrive();
                }
                words.read(0);
                if order != Handoff::ArriveThenRead {
                    barrier.arrive();
                }
            }
            if t == 0 {
                if order != Handoff::NoWait {
                    barrier.wait(0);
                }
                words.write(0, 2);
            }
        }
    };
    gpu_emulator::run("handoff", &one_block(64, 16), &body)
}

#[test]
fn an_arrival_orders_the_arriving_threads_read_before_the_waiters_write() {
    handoff(Handoff::ReadThenArrive).unwrap();
}

#[test]
fn a_write_not_after_the_phase_that_follows_the_read_is_a_race() {
    for order in [Handoff::ArriveThenRead, Handoff::NoWait] {
        let diagnostic = handoff(order).unwrap_err();
        let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
            panic!("{diagnostic}");
        };
        let mut threads = [earlier.thread, later.thread];
        threads.sort();
        assert_eq!(threads, [(0, 0, 0), (33, 0, 0)], "{diagnostic}");
        assert!([earlier.kind, later.kind].contains(&AccessKind::Write));
    }
}

/// Elements of one stage: A 64×16 then B 16×64, core matrices of 16-byte
/// rows (A's chunks along k 128 bytes apart, eight rows 256 on; B's
/// eight k 128 bytes on, eight columns 256).
const STAGE: u32 = 2 * 64 * 16;

/// One warpgroup queues a 64×64×16 `wgmma` on stage 0 and commits it,
/// then one on stage 1 and commits it, and waits for all groups but the
/// newest; after a barrier thread 0 writes stage `rewritten`'s first
/// element, then the warpgroup waits for all.
fn two_groups(rewritten: u32) -> Result<(), Diagnostic> {
    let body = || {
        // SAFETY: two stages of zeros; the emulator checks the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            for index in (thread_idx_x()..2 * STAGE).step_by(128) {
                tile.write(index, bf16::from_f32(0.0));
            }
            fence_proxy_async_shared_cta();
            sync_threads();
            let descriptors = |stage: u32| {
                let first = stage * STAGE;
                (
                    MatrixDescriptor::new(tile, first, Layout::None, 128, 256),
                    MatrixDescriptor::new(tile, first + STAGE / 2, Layout::None, 128, 256),
                )
            };
            let (a, b) = descriptors(0);
            let flight = Accumulators::<32>::ZERO.mma_async::<bf16>(a, b, true);
            let (a, b) = descriptors(1);
            let flight = flight.commit_group().mma_async::<bf16>(a, b, true);
            let flight = flight.commit_group().wait_group::<1>();
            sync_threads();
            if thread_idx_x() == 0 {
                tile.write(rewritten * STAGE, bf16::from_f32(1.0));
            }
            flight.wait();
        }
    };
    gpu_emulator::run("two_groups", &one_block(128, 4 * STAGE), &body)
}

#[test]
fn wait_group_1_retires_the_older_group_so_its_stage_may_be_refilled() {
    two_groups(0).unwrap();
}

#[test]
fn wait_group_1_leaves_the_newest_group_reading_its_stage() {
    let diagnostic = two_groups(1).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaOperandOverwritten {
            offset,
            ..
        } if offset == 2 * STAGE
    );
}

/// A 16×64 box of a 20×128 bf16 array, element (r, c) = r·128 + c,
/// copied 128-byte swizzled from column 64, row 8 (its last 4 rows past
/// the array): each element where `box_index` says, zeros past the edge.
#[test]
fn a_tensor_copy_of_bf16_swizzles_its_128_byte_rows() {
    let (width, height) = (128u32, 20u32);
    let array: Vec<bf16> = (0..width * height)
        .map(|i| bf16::from_f32(i as f32))
        .collect();
    let shape = TiledMap {
        width,
        height,
        box_width: 64,
        box_height: 16,
        swizzle: Swizzle::Bytes128,
        element: Element::Bf16,
    };
    let map = TensorMap2d::new(Global::new("array", &array), shape);
    let mut out = vec![f32::NAN; 1024];
    let out_view = GlobalMut::new("out", &mut out);
    let body = || {
        let t = thread_idx_x();
        // SAFETY: the box's 2 KiB, then the barrier; the emulator checks
        // the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            let barrier = Mbarrier::at(SharedArray::launch_sized().after(256));
            tensor_copy(tile, barrier, (map, shape), (64, 8), (true, true));
            for index in (t..1024).step_by(256) {
                let (row, column) = (index / 64, index % 64);
                let value = tile.read(shape.box_index(row, column)).to_f32();
                out_view.write(index as usize, value);
            }
        }
    };
    gpu_emulator::run("bf16_box", &one_block(256, 2048 + 8), &body).unwrap();
    for (index, &value) in out.iter().enumerate() {
        let (row, column) = (8 + index as u32 / 64, 64 + index as u32 % 64);
        let expected = if row < height {
            bf16::from_f32((row * width + column) as f32).to_f32()
        } else {
            0.0
        };
        assert_eq!(value, expected, "box element {index}");
    }
    // The swizzle moves chunk c of row r to chunk c ^ (r % 8): row 1's
    // first element lies 16 bytes into its row.
    assert_eq!(shape.box_index(1, 0), 64 + 8);
}

/// Warp 1 waits for a bulk copy's phase and arrives on a second barrier;
/// thread 0, which never waits on the first, waits on the second and
/// writes over the copy's bytes: ordered, as a producer refilling a stage
/// its consumers waited for. Without the arrival's wait it is reported.
fn refill(wait: bool) -> Result<(), Diagnostic> {
    let source = vec![1.0f32; 8];
    let source = Global::new("source", &source);
    let body = || {
        let t = thread_idx_x();
        // SAFETY: 32 bytes of tile, then the barriers' words; the
        // emulator checks the rest.
        unsafe {
            let tile = SharedArray::<f32>::launch_sized();
            let words = SharedArray::<u64>::launch_sized();
            let (full, empty) = (Mbarrier::at(words.after(4)), Mbarrier::at(words.after(5)));
            if t == 0 {
                full.init(1);
                empty.init(32);
                fence_proxy_async_shared_cta();
            }
            sync_threads();
            if t == 0 {
                full.arrive_expect_tx(32);
                gpu_std::bulk::memcpy_async_bulk(tile, 0, source, 0, 8, full);
                if wait {
                    empty.wait(0);
                }
                tile.write(0, 2.0);
            } else if t >= 32 {
                full.wait(0);
                tile.read(t % 8);
                empty.arrive();
            }
        }
    };
    gpu_emulator::run("refill", &one_block(64, 48), &body)
}

#[test]
fn a_producer_may_refill_what_its_consumers_waited_for_once_they_arrive() {
    refill(true).unwrap();
    assert!(refill(false).is_err());
}

#[test]
fn setmaxnreg_is_made_by_every_lane() {
    let body = || {
        if thread_idx_x() != 5 {
            // SAFETY: the emulator checks that the warp makes it whole.
            unsafe { gpu_std::wgmma::setmaxnreg_dec::<40>() };
        }
    };
    let diagnostic = gpu_emulator::run("setmaxnreg", &one_block(128, 0), &body).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::BadWarpCall {
            call: gpu_emulator::WarpOp::SetMaxNReg,
            lane: 5,
            ..
        }
    );
}
