//! A warpgroup's instructions, `wgmma.mma_async` and `setmaxnreg`: both
//! are `.sync.aligned` over the warpgroup, the four warps of 128
//! consecutive threads from a multiple of 128, which must all issue each
//! one, in the same order.
//!
//! The lanes of a warp meet at one as at a warp collective (see `warp`).
//! The warps of a warpgroup do not wait for each other here: a warp goes
//! on once it has issued a `wgmma`, which runs asynchronously, so a
//! rendezvous of the four would make a kernel wait where the GPU does not.
//! Instead each warp keeps the list of what it issued, and the lists of a
//! warpgroup must agree wherever its warps meet again: at a block barrier,
//! and at the block's end. What they agreed on is forgotten then, so a
//! list holds one barrier interval's instructions.

use std::panic::Location;

use super::fault::{OtherWarp, WarpgroupDivergent};
use super::{Dim3, Fault, WarpOp, coordinates};

/// A warpgroup instruction a warp issued, and where.
type Issued = (WarpOp, &'static Location<'static>);

/// What the warps of a block have issued, by warp index in the block;
/// none until a warp issues one.
#[derive(Default)]
pub(crate) struct Warpgroups {
    warps: Vec<Warp>,
}

#[derive(Clone, Default)]
struct Warp {
    /// Instructions issued before the warpgroup's lists last agreed.
    agreed: u32,
    /// Those issued since, in order.
    since: Vec<Issued>,
}

impl Warpgroups {
    /// Warp `warp` issued `issued`.
    pub(crate) fn issue(&mut self, warp: u32, issued: Issued) {
        let warp = warp as usize;
        if self.warps.len() <= warp {
            self.warps.resize_with(warp + 1, Warp::default);
        }
        self.warps[warp].since.push(issued);
    }

    /// Instructions warp `warp` has issued.
    pub(crate) fn passed(&self, warp: u32) -> u32 {
        self.warps
            .get(warp as usize)
            .map_or(0, |warp| warp.agreed + warp.since.len() as u32)
    }

    /// The first instruction a warp of `block` issued that another of its
    /// warpgroup did not, where its warps meet again; `stopped(warp)` says
    /// what a warp that issued none there did instead. Where all agree,
    /// what they issued is forgotten.
    pub(crate) fn compare(
        &mut self,
        block: Dim3,
        stopped: impl Fn(u32) -> OtherWarp,
    ) -> Result<(), Fault> {
        let issued = |warp: usize, index: usize| {
            let warp = self.warps.get(warp)?;
            warp.since.get(index).copied()
        };
        for first in (0..self.warps.len()).step_by(4) {
            let group = first..first + 4;
            let longest = group.clone().filter_map(|warp| self.warps.get(warp));
            for index in 0..longest.map(|warp| warp.since.len()).max().unwrap_or(0) {
                let mut each = group.clone().map(|warp| (warp, issued(warp, index)));
                let Some((warp, Some((call, site)))) = each.clone().find(|(_, at)| at.is_some())
                else {
                    continue;
                };
                let Some((other, instead)) = each.find(|&(_, at)| at != Some((call, site))) else {
                    continue;
                };
                let (warp, other) = (warp as u32, other as u32);
                return Err(Fault::WarpgroupDivergent(WarpgroupDivergent {
                    thread: coordinates(32 * warp, block),
                    warp,
                    call,
                    site,
                    passed: self.warps[warp as usize].agreed + index as u32,
                    other,
                    instead: instead.map_or_else(
                        || stopped(other),
                        |(call, site)| OtherWarp::Issued(call, site),
                    ),
                }));
            }
        }
        for warp in &mut self.warps {
            warp.agreed += warp.since.len() as u32;
            warp.since.clear();
        }
        Ok(())
    }
}
