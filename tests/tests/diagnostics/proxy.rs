//! The async proxy: a `wgmma` reads shared memory through it, so a
//! thread's stores and `cp.async` copies of its operands need the writer's
//! `fence.proxy.async` ordered before the `wgmma`, and a store with no
//! fence, or with one after the barrier, is reported; an mbarrier arrival
//! after the fence orders it as a barrier does; a tensor copy needs no
//! fence, only its wait; and a store or a tensor copy racing with a
//! `wgmma`'s reads is reported as for any read.

use gpu_emulator::{AccessKind, Diagnostic, Fault, WgmmaUnfenced};
use gpu_std::bf16;
use gpu_std::bulk::{Mbarrier, fence_proxy_async_shared_cta};
use gpu_std::global::Global;
use gpu_std::pipeline::{commit, memcpy_async, wait_prior};
use gpu_std::shared::SharedArray;
use gpu_std::tensor::{Element, Swizzle as MapSwizzle, TensorMap2d, TiledMap};
use gpu_std::thread::{sync_threads, thread_idx_x};
use gpu_std::wgmma::Swizzle;

use crate::support::{assert_fault, one_block};
use crate::tensor::tensor_copy;
use crate::warpgroup::{B_FIRST, BYTES, ELEMENTS, multiply, stage};

/// What thread 5 does with its share of A and B, which thread 0's
/// `wgmma` reads (A's row 0 holds element 5).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Thread5 {
    /// Fences, then passes the barrier, as every thread does.
    Fences,
    /// Never fences.
    NeverFences,
    /// Passes the barrier, then fences.
    FencesAfterTheBarrier,
    /// Writes element 5 again after the barrier, and fences.
    WritesAfterTheBarrier,
}

/// A warpgroup stages A and B, fences and passes a barrier, but for what
/// thread 5 does, then issues the `wgmma`.
fn stores(thread_5: Thread5) -> Result<(), Diagnostic> {
    let body = || {
        let five = thread_idx_x() == 5;
        // SAFETY: the launch gives A and B; the emulator checks the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            stage(tile);
            if !five || thread_5 == Thread5::Fences {
                fence_proxy_async_shared_cta();
            }
            sync_threads();
            if five && thread_5 == Thread5::FencesAfterTheBarrier {
                fence_proxy_async_shared_cta();
            }
            if five && thread_5 == Thread5::WritesAfterTheBarrier {
                tile.write(5, bf16::from_f32(2.0));
                fence_proxy_async_shared_cta();
            }
            multiply(tile, (0, B_FIRST), Swizzle::None);
        }
    };
    gpu_emulator::run("stores", &one_block(128, BYTES), &body)
}

/// The unfenced write of element 5 that thread 0's `wgmma` read.
fn unfenced(thread_5: Thread5) -> WgmmaUnfenced {
    let diagnostic = stores(thread_5).unwrap_err();
    let Fault::WgmmaUnfenced(unfenced) = diagnostic.fault else {
        panic!("not an unfenced write: {diagnostic}");
    };
    assert_eq!(
        (unfenced.thread, unfenced.offset, unfenced.writer),
        ((0, 0, 0), 10, (5, 0, 0)),
        "{diagnostic}"
    );
    unfenced
}

#[test]
fn stores_fenced_before_the_barrier_are_the_wgmmas_to_read() {
    stores(Thread5::Fences).unwrap();
}

#[test]
fn a_store_its_writer_never_fenced_is_reported() {
    assert_eq!(unfenced(Thread5::NeverFences).fence, None);
}

/// The fence comes after the write, but nothing orders it before the
/// other threads' `wgmma`s: the barrier is before it.
#[test]
fn a_fence_after_the_barrier_is_reported() {
    assert!(unfenced(Thread5::FencesAfterTheBarrier).fence.is_some());
}

#[test]
fn a_store_racing_with_a_wgmmas_read_is_reported() {
    let diagnostic = stores(Thread5::WritesAfterTheBarrier).unwrap_err();
    let Fault::SharedRace { earlier, later, .. } = diagnostic.fault else {
        panic!("not a race: {diagnostic}");
    };
    assert_eq!(
        (earlier.thread, earlier.kind, later.thread, later.kind),
        ((5, 0, 0), AccessKind::Write, (0, 0, 0), AccessKind::Read),
        "{diagnostic}"
    );
}

/// Thread 128, of the next warpgroup, stages A and B alone and arrives on
/// a barrier that the first warpgroup waits on before its `wgmma`; it
/// fences before its arrival, or after.
fn handoff(fence_first: bool) -> Result<(), Diagnostic> {
    let body = || {
        let t = thread_idx_x();
        // SAFETY: A and B, then the barrier's word; the emulator checks
        // the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            let barrier = Mbarrier::at(SharedArray::launch_sized().after(BYTES / 8));
            if t == 128 {
                barrier.init(1);
                fence_proxy_async_shared_cta();
            }
            sync_threads();
            if t == 128 {
                (0..ELEMENTS).for_each(|index| tile.write(index, bf16::from_f32(1.0)));
                if fence_first {
                    fence_proxy_async_shared_cta();
                }
                barrier.arrive();
                if !fence_first {
                    fence_proxy_async_shared_cta();
                }
            } else if t < 128 {
                barrier.wait(0);
                multiply(tile, (0, B_FIRST), Swizzle::None);
            }
        }
    };
    gpu_emulator::run("handoff", &one_block(160, BYTES + 8), &body)
}

#[test]
fn a_fence_before_an_arrival_is_ordered_before_the_waiters_wgmma() {
    handoff(true).unwrap();
    let diagnostic = handoff(false).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaUnfenced(WgmmaUnfenced {
            writer: (128, 0, 0),
            fence: Some(_),
            ..
        })
    );
}

/// Every thread copies its share of A and B with `cp.async` and waits
/// for it, fencing after the wait, or before it, when the copies have yet
/// to land: their bytes are written at the wait.
fn copied(fence_after_wait: bool) -> Result<(), Diagnostic> {
    // Two bf16 ones a word.
    let ones = vec![f32::from_bits(0x3f80_3f80); ELEMENTS as usize / 2];
    let source = Global::new("ones", &ones);
    let body = || {
        // SAFETY: the launch gives A and B, as words; the emulator checks
        // the rest.
        unsafe {
            let words = SharedArray::<f32>::launch_sized();
            for index in (thread_idx_x()..ELEMENTS / 2).step_by(128) {
                memcpy_async(words, index, source, Some(index as usize));
            }
            commit();
            if !fence_after_wait {
                fence_proxy_async_shared_cta();
            }
            wait_prior::<0>();
            if fence_after_wait {
                fence_proxy_async_shared_cta();
            }
            sync_threads();
            let tile = SharedArray::<bf16>::launch_sized();
            multiply(tile, (0, B_FIRST), Swizzle::None);
        }
    };
    gpu_emulator::run("copied", &one_block(128, BYTES), &body)
}

#[test]
fn a_cp_async_copy_is_fenced_after_its_wait() {
    copied(true).unwrap();
    let diagnostic = copied(false).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaUnfenced(WgmmaUnfenced {
            thread: (0, 0, 0),
            fence: None,
            ..
        })
    );
}

/// Thread 0 copies A and B with one tensor copy, as a 64×32 box of a
/// 64×32 array, unswizzled; every thread waits for it, or none does.
fn tensor_copied(wait: bool) -> Result<(), Diagnostic> {
    let array = vec![bf16::from_f32(1.0); ELEMENTS as usize];
    let shape = TiledMap {
        width: 64,
        height: 32,
        box_width: 64,
        box_height: 32,
        swizzle: MapSwizzle::None,
        element: Element::Bf16,
    };
    let map = TensorMap2d::new(Global::new("operands", &array), shape);
    let body = || {
        // SAFETY: A and B, then the barrier's word; the emulator checks
        // the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            let barrier = Mbarrier::at(SharedArray::launch_sized().after(BYTES / 8));
            tensor_copy(tile, barrier, (map, shape), (0, 0), (true, wait));
            multiply(tile, (0, B_FIRST), Swizzle::None);
        }
    };
    gpu_emulator::run("tensor_copied", &one_block(128, BYTES + 8), &body)
}

/// The Tensor Memory Accelerator writes through the async proxy: no
/// fence, only the wait; a `wgmma` that does not wait reads bytes still
/// in flight.
#[test]
fn a_tensor_copy_needs_its_wait_but_no_fence() {
    tensor_copied(true).unwrap();
    let diagnostic = tensor_copied(false).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::BulkInFlight {
            offset: 0,
            access: gpu_emulator::Access {
                thread: (0, 0, 0),
                kind: AccessKind::Read
            },
            ..
        }
    );
}
