//! Hopper's warpgroup instructions on the CPU: `wgmma.mma_async` and its
//! retirement, `setmaxnreg`, and the proxy fence that makes a thread's
//! shared-memory writes visible to the tensor cores.

use std::panic::Location;

use crate::fault::{OtherWarp, WarpgroupDivergent, WgmmaMisaligned, WgmmaOutOfBounds};
use crate::matrix::Registers;
use crate::warp::meet;
use crate::wgmma::{self, Descriptor, Major, OperandA};
use crate::{AccessKind, Fault, MmaInput, WarpOp, on_shared, stop, with_current};

/// This warp's issue of the warpgroup instruction `op` at `site`
/// (`wgmma.mma_async`, `setmaxnreg`): its 32 lanes make it together, as a
/// warp collective, and the other three warps of its warpgroup must issue
/// the same instructions in the same order (see the crate's `warpgroup`
/// module), so the block must have them.
pub fn warpgroup_call(op: WarpOp, site: &'static Location<'static>) {
    warpgroup_meet(op, [0; 10], site);
}

/// [`warpgroup_call`], each lane bringing `registers`.
fn warpgroup_meet(op: WarpOp, registers: Registers, site: &'static Location<'static>) {
    meet(op, u32::MAX, 0, registers, site);
    let missing = with_current(|current| {
        let (x, y, z) = current.launch.block;
        let threads = x * y * z;
        let warp = current.linear / 32;
        let mut memory = current.memory.borrow_mut();
        if (current.linear / 128 + 1) * 128 > threads {
            return Some(Fault::WarpgroupDivergent(WarpgroupDivergent {
                thread: current.thread,
                warp,
                call: op,
                site,
                passed: memory.warpgroups.passed(warp),
                other: threads / 32,
                instead: OtherWarp::NotInBlock,
            }));
        }
        if current.linear % 32 == 0 {
            memory.warpgroups.issue(warp, (op, site));
        }
        None
    });
    if let Some(fault) = missing {
        stop(fault);
    }
}

/// Where a `wgmma`'s A comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgmmaA {
    /// Shared memory, through this descriptor's bits.
    Shared(u64),
    /// This lane's four registers of its warp's 16 rows, laid out as
    /// `mma.m16n8k16`'s A.
    Registers([u32; 4]),
}

/// This thread's part of `wgmma.mma_async.sync.aligned.m64nNk16.f32` with
/// 16-bit `input`s, N = 2·`accumulators.len()`, started at `site`: A (64×16,
/// K-major) from registers or shared memory as `a` says, and B (16×N,
/// N-major where `b_transposed`) read from shared memory through the
/// descriptor `b`, D = A·B + D accumulated into `accumulators` (see
/// `wgmma`). Its warpgroup issues it together ([`warpgroup_call`]).
/// Returns each shared element it read, with its bits, for
/// [`wgmma_retire`] to check at the wait.
pub fn wgmma(
    input: MmaInput,
    (a, b): (WgmmaA, u64),
    b_transposed: bool,
    accumulators: &mut [f32],
    site: &'static Location<'static>,
) -> Vec<(u32, u16)> {
    let lanes = match a {
        WgmmaA::Registers([a0, a1, a2, a3]) => [a0, a1, a2, a3, 0, 0, 0, 0, 0, 0],
        WgmmaA::Shared(_) => [0; 10],
    };
    warpgroup_meet(WarpOp::Wgmma, lanes, site);
    let b = Descriptor::decode(b);
    let a = match a {
        WgmmaA::Shared(bits) => OperandA::Shared(Descriptor::decode(bits)),
        WgmmaA::Registers(_) => {
            OperandA::Registers(with_current(|current| current.wgmma_rows.get()))
        }
    };
    let a_descriptor = match a {
        OperandA::Shared(descriptor) => Some(('A', descriptor)),
        OperandA::Registers(_) => None,
    };
    let misaligned = a_descriptor
        .into_iter()
        .chain([('B', b)])
        .find(|(_, descriptor)| descriptor.starts_off_pattern());
    if let Some((operand, descriptor)) = misaligned {
        stop(Fault::WgmmaMisaligned(WgmmaMisaligned {
            thread: with_current(|current| current.thread),
            site,
            operand,
            start: descriptor.start,
            swizzle: descriptor.swizzle.row_bytes(),
        }));
    }
    let thread = with_current(|current| current.linear % 128);
    let base = with_current(|current| current.memory.borrow().base);
    let mut read = Vec::new();
    let mut element = |operand: char, address: u32| {
        let pointer = base.wrapping_add(address as usize);
        // Checked as any shared read, but not counted as one: the tensor
        // cores read through the async proxy, not the load/store unit
        // whose wavefronts the traffic report counts.
        on_shared(pointer, |current, memory, _| {
            let (me, block) = (current.linear, current.launch.block);
            if address + 2 > memory.limit {
                return Err(Fault::WgmmaOutOfBounds(WgmmaOutOfBounds {
                    thread: current.thread,
                    site,
                    operand,
                    start: match a_descriptor {
                        Some((_, a)) if operand == 'A' => a.start,
                        _ => b.start,
                    },
                    offset: address,
                    limit: memory.limit,
                }));
            }
            memory.access(me, block, address.into(), 2, AccessKind::Read)?;
            memory.async_proxy_read((me, block), address, 2, site)
        });
        // SAFETY: inside the block's shared memory, checked just now; the
        // host's memory is unaligned for it.
        let bits = unsafe { pointer.cast::<u16>().read_unaligned() };
        read.push((address, bits));
        bits
    };
    let b_major = if b_transposed { Major::Mn } else { Major::K };
    wgmma::accumulate(input, (a, b), b_major, thread, accumulators, &mut element);
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

/// `fence.proxy.async.shared::cta` by the running thread at `site`: its
/// shared-memory writes so far become visible to the async proxy, to a
/// `wgmma` the fence is ordered before (see the crate's `proxy` module).
pub fn fence_proxy_async(site: &'static Location<'static>) {
    with_current(|current| {
        let mut memory = current.memory.borrow_mut();
        memory.fence_proxy_async(current.linear, site);
    });
}
