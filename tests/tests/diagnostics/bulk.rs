//! Shared-memory barriers and the bulk copies that complete on them
//! (`bulk`): a copy lands when its barrier's phase completes, for the
//! threads that waited on it; touching its bytes before, or reading them
//! without waiting, is reported, and so are a phase that can never
//! complete, an arrival too many, a barrier used before it is initialised
//! or without a barrier after its initialisation, and a copy of a size or
//! place the hardware refuses.

use gpu_emulator::{self, AccessKind, BlockOrder, Diagnostic, Fault, Limits, Outstanding};
use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta, memcpy_async_bulk};
use gpu_std::global::{Global, GlobalMut};
use gpu_std::shared::SharedArray;
use gpu_std::thread::{sync_threads, thread_idx_x};

use crate::support::{assert_says, one_block};

/// What is broken in the staged reversal below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum BulkBug {
    None,
    /// The threads read the tile without waiting on the phase.
    NoWait,
    /// Only thread 0 waits; the others read after it.
    OneWaits,
    /// The arrival expects 16 bytes fewer than the copy brings.
    ExpectsTooFew,
    /// The barrier expects two arrivals a phase; one is made.
    ArrivalMissing,
    /// Thread 0 arrives twice.
    ArrivesTwice,
    /// No block barrier between the initialisation and the other
    /// threads' waits.
    NoBarrierAfterInit,
    /// Nobody initialises the barrier.
    NoInit,
    /// The copy moves 12 bytes, not a multiple of 16.
    OddSize,
    /// The copy reads 4 elements past the input.
    PastTheInput,
}

/// The barrier at the start of launch-sized shared memory, and the tile
/// of floats after its 16 bytes.
///
/// # Safety
/// The launch provides the barrier's 16 bytes and the tile's floats.
unsafe fn barrier_and_tile() -> (Mbarrier, SharedArray<f32>) {
    unsafe {
        let barrier = Mbarrier::at(SharedArray::launch_sized());
        (barrier, SharedArray::<f32>::launch_sized().after(4))
    }
}

/// Thread 0 initialises `barrier` for `arrivals` arrivals a phase, and
/// makes the initialisation visible to the bulk copies.
///
/// # Safety
/// As [`Mbarrier::init`].
unsafe fn init_by_thread_0(barrier: Mbarrier, arrivals: u32) {
    if thread_idx_x() == 0 {
        unsafe { barrier.init(arrivals) };
        fence_proxy_async_shared_cta();
    }
}

/// Runs `kernel` as `name` on one block of 32 threads, with the barrier's
/// 16 bytes and 32 floats of shared memory, over `source` and 32 floats
/// of `out`; what it returned, and `out`.
fn stage(
    name: &'static str,
    source: &[f32],
    kernel: impl Fn(Global<f32>, GlobalMut<f32>),
) -> (Result<(), Diagnostic>, Vec<f32>) {
    let mut out = vec![f32::NAN; 32];
    let (source, out_view) = (
        Global::new("source", source),
        GlobalMut::new("out", &mut out),
    );
    let launch = one_block(32, 16 + 32 * 4);
    let result = gpu_emulator::run(name, &launch, &|| kernel(source, out_view));
    (result, out)
}

/// Thread 0 stages `source` (32 floats) in shared memory with one bulk
/// copy completed on a barrier, and every thread writes
/// `out[t] = tile[31 - t]`.
unsafe fn reverse_by_bulk_copy(source: Global<f32>, out: GlobalMut<f32>, bug: BulkBug) {
    let t = thread_idx_x();
    unsafe {
        let (barrier, tile) = barrier_and_tile();
        if bug != BulkBug::NoInit {
            init_by_thread_0(barrier, if bug == BulkBug::ArrivalMissing { 2 } else { 1 });
        }
        if bug != BulkBug::NoBarrierAfterInit {
            sync_threads();
        }
        if t == 0 {
            let count = match bug {
                BulkBug::OddSize => 3,
                BulkBug::PastTheInput => 36,
                _ => 32,
            };
            let expected = if bug == BulkBug::ExpectsTooFew {
                112
            } else {
                4 * count
            };
            barrier.arrive_expect_tx(expected);
            if bug == BulkBug::ArrivesTwice {
                barrier.arrive_expect_tx(0);
            }
            memcpy_async_bulk(tile, 0, source, 0, count, barrier);
        }
        let waits = match bug {
            BulkBug::NoWait => false,
            BulkBug::OneWaits => t == 0,
            _ => true,
        };
        if waits {
            barrier.wait(0);
        }
        out.write(t as usize, tile.read(31 - t));
    }
}

fn reverse(bug: BulkBug) -> (Result<(), Diagnostic>, Vec<f32>) {
    let source: Vec<f32> = (0..32).map(|i| i as f32 + 1.0).collect();
    // SAFETY: 32 floats of `source`; the emulator checks the rest.
    stage("reverse_by_bulk_copy", &source, |source, out| unsafe {
        reverse_by_bulk_copy(source, out, bug)
    })
}

fn fault(bug: BulkBug) -> Fault {
    reverse(bug)
        .0
        .expect_err("the emulator must report the bug")
        .fault
}

#[test]
fn a_bulk_copy_lands_when_its_phase_completes() {
    let (result, out) = reverse(BulkBug::None);
    result.unwrap();
    let expected: Vec<f32> = (0..32).rev().map(|i| i as f32 + 1.0).collect();
    assert_eq!(out, expected);
}

#[test]
fn reading_a_bulk_copy_without_waiting_is_reported() {
    // Thread 0 runs first and reads before any wait: the copy is in flight.
    let Fault::BulkInFlight {
        offset,
        barrier,
        access,
    } = fault(BulkBug::NoWait)
    else {
        panic!("not a bulk copy in flight");
    };
    assert_eq!((offset, barrier), (16 + 31 * 4, 0));
    assert_eq!((access.thread, access.kind), ((0, 0, 0), AccessKind::Read));
    // Thread 0's wait lands the copy; thread 1 reads it without waiting.
    let Fault::BulkUnwaited { access, .. } = fault(BulkBug::OneWaits) else {
        panic!("not an unwaited read");
    };
    assert_eq!(access.thread, (1, 0, 0));
}

#[test]
fn a_phase_that_can_never_complete_is_reported() {
    let diagnostic = reverse(BulkBug::ExpectsTooFew).0.unwrap_err();
    let Fault::MbarrierNeverCompletes { outstanding, .. } = diagnostic.fault else {
        panic!("not a phase that never completes: {diagnostic}");
    };
    let short = Outstanding {
        count: 1,
        pending: 0,
        tx: -16,
        completed: 0,
    };
    assert_eq!(outstanding, short);
    assert_says(&diagnostic, "-16 bytes");
    let Fault::MbarrierNeverCompletes { outstanding, .. } = fault(BulkBug::ArrivalMissing) else {
        panic!("not a phase that never completes");
    };
    assert_eq!((outstanding.count, outstanding.pending), (2, 1));
}

#[test]
fn an_arrival_too_many_is_reported() {
    let Fault::MbarrierOverArrived { thread, count, .. } = fault(BulkBug::ArrivesTwice) else {
        panic!("not an arrival too many");
    };
    assert_eq!((thread, count), ((0, 0, 0), 1));
}

#[test]
fn a_barrier_used_before_it_is_initialised_is_reported() {
    let Fault::MbarrierUninitialized { thread, offset } = fault(BulkBug::NoInit) else {
        panic!("not an uninitialised barrier");
    };
    assert_eq!((thread, offset), ((0, 0, 0), 0));
    // Initialised, but thread 1 reads the barrier with no block barrier
    // after thread 0's initialisation.
    let Fault::SharedRace { offset, later, .. } = fault(BulkBug::NoBarrierAfterInit) else {
        panic!("not a race on the barrier");
    };
    assert_eq!((offset, later.thread), (0, (1, 0, 0)));
}

#[test]
fn a_bulk_copy_the_hardware_refuses_is_reported() {
    let Fault::BulkCopyShape { bytes, offset, .. } = fault(BulkBug::OddSize) else {
        panic!("not a refused bulk copy");
    };
    assert_eq!((bytes, offset), (12, 16));
    let Fault::GlobalOutOfBounds { buffer, len, .. } = fault(BulkBug::PastTheInput) else {
        panic!("not a read past the input");
    };
    assert_eq!((buffer, len), ("source", 32));
}

/// What is broken in the two-phase staging below.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PhaseBug {
    None,
    /// No block barrier between the first tile's reads and the second
    /// copy over it.
    NoBarrierBeforeReuse,
    /// The second wait asks for the first phase's parity again, which
    /// has completed: it returns before the second copy lands.
    StaleParity,
}

/// Thread 0 stages `source[0..32]` and then `source[32..64]` in the same
/// 32 floats of shared memory through one barrier, a phase each; every
/// thread sums its element of both tiles into `out[t]`.
unsafe fn two_phases(source: Global<f32>, out: GlobalMut<f32>, bug: PhaseBug) {
    let t = thread_idx_x();
    unsafe {
        let (barrier, tile) = barrier_and_tile();
        init_by_thread_0(barrier, 1);
        sync_threads();
        let mut sum = 0.0;
        for phase in 0..2 {
            if phase == 1 && bug != PhaseBug::NoBarrierBeforeReuse {
                sync_threads();
            }
            if t == 0 {
                barrier.arrive_expect_tx(128);
                memcpy_async_bulk(tile, 0, source, 32 * phase as usize, 32, barrier);
            }
            let parity = if bug == PhaseBug::StaleParity {
                0
            } else {
                phase
            };
            barrier.wait(parity);
            sum += tile.read(t);
        }
        out.write(t as usize, sum);
    }
}

fn stage_twice(bug: PhaseBug) -> (Result<(), Diagnostic>, Vec<f32>) {
    let source: Vec<f32> = (0..64).map(|i| i as f32).collect();
    // SAFETY: 64 floats of `source`; the emulator checks the rest.
    stage("two_phases", &source, |source, out| unsafe {
        two_phases(source, out, bug)
    })
}

#[test]
fn a_barrier_serves_one_copy_a_phase_by_alternating_parity() {
    let (result, out) = stage_twice(PhaseBug::None);
    result.unwrap();
    let expected: Vec<f32> = (0..32).map(|t| (2 * t + 32) as f32).collect();
    assert_eq!(out, expected);
}

#[test]
fn reusing_a_tile_for_the_next_phase_needs_a_barrier_and_the_next_parity() {
    // Thread 0 stages and reads both tiles before the others wait once:
    // the barrier has completed two phases, and their first wait's parity
    // names a third that never comes. (On the GPU the second copy would
    // overwrite the first tile under their reads.)
    let diagnostic = stage_twice(PhaseBug::NoBarrierBeforeReuse).0.unwrap_err();
    let Fault::MbarrierNeverCompletes {
        thread,
        outstanding,
        seen,
        ..
    } = diagnostic.fault
    else {
        panic!("not a phase that never completes: {diagnostic}");
    };
    assert_eq!((thread, seen, outstanding.completed), ((1, 0, 0), 0, 2));
    assert_says(&diagnostic, "ran a phase ahead");
    // The first phase's parity again: the wait returns at once, and the
    // read finds the second copy in flight.
    let (result, _) = stage_twice(PhaseBug::StaleParity);
    let Fault::BulkInFlight { access, .. } = result.unwrap_err().fault else {
        panic!("not a read of a copy in flight");
    };
    assert_eq!(access.kind, AccessKind::Read);
}

/// Thread 0 stages `source[0..32]` and `source[32..64]` side by side with
/// two copies that complete on one phase; every thread writes the sum of
/// its element of each to `out[t]`.
unsafe fn two_copies_one_phase(source: Global<f32>, out: GlobalMut<f32>) {
    let t = thread_idx_x();
    unsafe {
        let (barrier, tile) = barrier_and_tile();
        init_by_thread_0(barrier, 1);
        sync_threads();
        if t == 0 {
            barrier.arrive_expect_tx(256);
            memcpy_async_bulk(tile, 0, source, 0, 32, barrier);
            memcpy_async_bulk(tile, 32, source, 32, 32, barrier);
        }
        barrier.wait(0);
        out.write(t as usize, tile.read(t) + tile.read(32 + t));
    }
}

#[test]
fn each_bulk_copy_is_one_instruction_however_many_a_thread_issues() {
    let source: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut out = vec![f32::NAN; 32];
    let (source_view, out_view) = (
        Global::new("source", &source),
        GlobalMut::new("out", &mut out),
    );
    // SAFETY: 32 threads; the barrier's 16 bytes and 64 floats of shared
    // memory; 64 floats of `source`, 32 of `out`.
    let launch = one_block(32, 16 + 64 * 4);
    let traffic = gpu_emulator::run_counting(
        "two_copies_one_phase",
        &launch,
        Limits::default(),
        BlockOrder::Forward,
        &|| unsafe { two_copies_one_phase(source_view, out_view) },
    )
    .unwrap();
    let expected: Vec<f32> = (0..32).map(|t| (2 * t + 32) as f32).collect();
    assert_eq!(out, expected);
    // Two instructions of four sectors each, not one of eight, though no
    // barrier lies between them.
    let copies = traffic.bulk_load;
    assert_eq!((copies.requests, copies.sectors), (2, 8));
}
