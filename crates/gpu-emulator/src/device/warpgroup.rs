//! Hopper's warpgroup instructions on the CPU: `wgmma.mma_async` and its
//! retirement.

use std::panic::Location;

use crate::warp::meet;
use crate::wgmma::{self, Descriptor, Major};
use crate::{AccessKind, Fault, MmaInput, WarpOp, on_shared, stop, with_current};

/// This thread's part of `wgmma.mma_async.sync.aligned.m64nNk16.f32` with
/// 16-bit `input`s, N = 2·`accumulators.len()`, started at `site`: A (64×16,
/// K-major) and B (16×N, N-major where `b_transposed`) read from shared
/// memory through the descriptors `a` and `b`, D = A·B + D accumulated
/// into `accumulators` (see `wgmma`). Its warp's 32 lanes issue it
/// together. Returns each shared element it read, with its bits, for
/// [`wgmma_retire`] to check at the wait.
pub fn wgmma(
    input: MmaInput,
    (a, b): (u64, u64),
    b_transposed: bool,
    accumulators: &mut [f32],
    site: &'static Location<'static>,
) -> Vec<(u32, u16)> {
    meet(WarpOp::Wgmma, u32::MAX, 0, [0; 10], site);
    let thread = with_current(|current| current.linear % 128);
    let base = with_current(|current| current.memory.borrow().base);
    let mut read = Vec::new();
    let mut element = |address: u32| {
        let pointer = base.wrapping_add(address as usize);
        // Checked as any shared read, but not counted as one: the tensor
        // cores read through the async proxy, not the load/store unit
        // whose wavefronts the traffic report counts.
        on_shared(pointer, |current, memory, offset| {
            let (me, block) = (current.linear, current.launch.block);
            memory.access(me, block, offset, 2, AccessKind::Read)
        });
        // SAFETY: inside the block's shared memory, checked just now; the
        // host's memory is unaligned for it.
        let bits = unsafe { pointer.cast::<u16>().read_unaligned() };
        read.push((address, bits));
        bits
    };
    let b_major = if b_transposed { Major::Mn } else { Major::K };
    let descriptors = (Descriptor::decode(a), Descriptor::decode(b));
    wgmma::accumulate(
        input,
        descriptors,
        b_major,
        thread,
        accumulators,
        &mut element,
    );
    read
}

/// The wait at `waited` that retires a `wgmma` started at `started`:
/// every shared element it `read` must hold the bits it read, or another
/// write landed while the tensor cores could still be reading it.
pub fn wgmma_retire(
    read: &[(u32, u16)],
    started: &'static Location<'static>,
    waited: &'static Location<'static>,
) {
    let base = with_current(|current| current.memory.borrow().base);
    for &(offset, bits) in read {
        // SAFETY: read inside the block's shared memory when the wgmma
        // started; the memory lives as long as the block.
        let now = unsafe {
            base.wrapping_add(offset as usize)
                .cast::<u16>()
                .read_unaligned()
        };
        if now != bits {
            let thread = with_current(|current| current.thread);
            stop(Fault::WgmmaOperandOverwritten {
                thread,
                offset,
                started,
                waited,
            });
        }
    }
}
