//! The async proxy: `wgmma` reads its operands from shared memory through
//! it, while a thread's stores and `cp.async` copies write through the
//! generic proxy, which it need not see. A write becomes visible to it
//! once its writer has made a `fence.proxy.async.shared::cta` after it,
//! and the fence must be ordered before the `wgmma` as the write itself
//! must: before the barrier (or the mbarrier arrival, or the `syncwarp`)
//! that orders the write before the reader, or in the reader's own program
//! order. TMA and bulk copies write through the async proxy and need none.
//!
//! Each thread keeps its fences in order; a shared byte's shadow keeps how
//! many its writer had made when it wrote, so the writer's next fence is
//! the first that can make the write visible: where that one is not
//! ordered before the `wgmma`, no later one is.

use std::panic::Location;

use super::fault::WgmmaUnfenced;
use super::{BULK, Dim3, Fault, REMOTE, SharedMemory, coordinates, synced};

/// One `fence.proxy.async` of a thread: where, and what may order it
/// before another thread's accesses, as for an access: its barrier
/// interval, its own warp-clock entry and its mbarrier arrivals then.
#[derive(Clone, Copy)]
struct Fence {
    site: &'static Location<'static>,
    epoch: u32,
    tick: u32,
    arrivals: u32,
}

/// Each thread's fences in the block, by linear index.
#[derive(Default)]
pub(crate) struct ProxyFences {
    threads: Vec<Vec<Fence>>,
}

impl ProxyFences {
    /// Fences thread `me` has made in the block.
    pub(crate) fn count(&self, me: u32) -> u32 {
        self.threads
            .get(me as usize)
            .map_or(0, |fences| fences.len() as u32)
    }
}

impl SharedMemory {
    /// `fence.proxy.async.shared::cta` by thread `me` at `site`.
    pub(crate) fn fence_proxy_async(&mut self, me: u32, site: &'static Location<'static>) {
        let fence = Fence {
            site,
            epoch: self.epoch,
            tick: self.own_tick(me),
            arrivals: self.barriers.arrivals(me),
        };
        let threads = &mut self.proxy_fences.threads;
        if threads.len() <= me as usize {
            threads.resize_with(me as usize + 1, Vec::new);
        }
        threads[me as usize].push(fence);
    }

    /// Checks the async-proxy read of `size` bytes at `offset` by thread
    /// `me`'s `wgmma` at `site`: the last write of each byte, where a
    /// thread of the block made it, is fenced by its writer, the fence
    /// ordered before this read.
    pub(crate) fn async_proxy_read(
        &self,
        (me, block): (u32, Dim3),
        offset: u32,
        size: u32,
        site: &'static Location<'static>,
    ) -> Result<(), Fault> {
        for byte in offset..offset + size {
            let shadow = &self.shadow[byte as usize];
            let writer = shadow.writer;
            if shadow.write_epoch < self.block_start || writer == BULK || writer == REMOTE {
                continue;
            }
            let fence = self
                .proxy_fences
                .threads
                .get(writer as usize)
                .and_then(|fences| fences.get(shadow.write_fences as usize));
            let ordered = fence.is_some_and(|fence| {
                writer == me
                    || fence.epoch < self.epoch
                    || synced(
                        (self.warp_clocks.as_slice(), &self.barriers),
                        me,
                        (writer, fence.tick, fence.arrivals),
                    )
            });
            if !ordered {
                return Err(Fault::WgmmaUnfenced(WgmmaUnfenced {
                    thread: coordinates(me, block),
                    site,
                    offset: byte,
                    writer: coordinates(writer, block),
                    fence: fence.map(|fence| fence.site),
                }));
            }
        }
        Ok(())
    }
}
