//! A warp's collectives: shuffles, `__syncwarp`, votes, `__match_any_sync`,
//! `__reduce_*_sync`, `__activemask`, `elect.sync` and the matrix instructions
//! `mma.sync` and `ldmatrix` (whose mask is the whole warp), each a
//! rendezvous of the lanes its mask names.
//!
//! A lane that reaches one waits, like at a barrier, until every live
//! thread of the cluster waits somewhere. Then each collective whose lanes
//! all wait at it (the same call site, the same mask, the same pass: each
//! lane has passed that site as often before) computes every lane's result
//! from their operands, and they go on, while a collective some of whose
//! lanes wait elsewhere waits on for them: those lanes may still come once
//! others have moved. A mask that names a lane that is not there or has
//! returned, that leaves out the caller, or a shuffle that reads a lane
//! outside its mask, is a diagnostic at once; a lane that waits elsewhere
//! is one only when nothing else can move. (CUDA lets a shuffle's mask
//! name a returned lane as long as no lane reads it; the emulator holds
//! kernels to the stricter rule.)
//!
//! `__activemask` has no mask to check: the hardware answers with the lanes
//! that happen to be converged, which the emulator cannot know. It answers
//! with the lanes of the warp that wait at the same `activemask` call on
//! the same pass when the collectives are resolved: those that reach it
//! before any of them moves on. It never reports misuse.
//!
//! `__syncwarp` orders the shared-memory accesses of the lanes of its mask,
//! as CUDA's memory model says: each lane keeps a vector clock over the
//! lanes of its warp, which a `syncwarp` joins (see `SharedMemory::access`).

use std::panic::Location;

pub use gpu_core::Reduction;

use super::matrix::{self, MmaInput, Registers};
use super::{Current, Dim3, Fault, LaneProblem, Wait, Waits, with_current};

/// A lane waiting at a warp collective, with its operand.
#[derive(Clone, Copy)]
pub(crate) struct WarpCall {
    pub(crate) site: &'static Location<'static>,
    pub(crate) mask: u32,
    pub(crate) op: WarpOp,
    /// The lane's value, zero-extended to 64 bits; 0 or 1 for a predicate.
    pub(crate) bits: u64,
    /// The lane's registers for a matrix instruction; zero for the rest.
    pub(crate) registers: Registers,
    /// How often the lane had passed this call site before: lanes meet
    /// only on the same pass, the same iteration of a loop around it.
    pub(crate) pass: u32,
}

/// Waits at the warp collective `op` at `site` until the lanes of `mask`
/// have all reached it and it has been computed.
pub(crate) fn meet(
    op: WarpOp,
    mask: u32,
    bits: u64,
    registers: Registers,
    site: &'static Location<'static>,
) {
    let (yielder, pass) = with_current(|current| {
        let mut passes = current.warp_passes.borrow_mut();
        let pass = match passes.iter_mut().find(|(known, _)| *known == site) {
            Some((_, passed)) => {
                *passed += 1;
                *passed - 1
            }
            None => {
                passes.push((site, 1));
                0
            }
        };
        (current.yielder.get(), pass)
    });
    let call = WarpCall {
        site,
        mask,
        op,
        bits,
        registers,
        pass,
    };
    // SAFETY: the yielder belongs to the coroutine that is running this code.
    unsafe { (*yielder).suspend(Wait::Warp(call)) };
}

/// What a warp collective computes from the operands of its lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpOp {
    /// A shuffle: the operand of the lane `kind` names.
    Shuffle(ShuffleKind),
    /// `__syncwarp`: nothing, but the lanes' shared-memory accesses before
    /// it are ordered before theirs after it.
    Sync,
    /// `__ballot_sync`: bit `i` set where lane `i`'s predicate holds.
    Ballot,
    /// `__any_sync`: whether any lane's predicate holds.
    Any,
    /// `__all_sync`: whether every lane's predicate holds.
    All,
    /// `__match_any_sync`: the lanes whose value equals this lane's.
    MatchAny,
    /// `__reduce_*_sync`: the reduction of every lane's value.
    Reduce(Reduction),
    /// `__activemask`: the lanes that reach the call together.
    ActiveMask,
    /// `mma.sync.m16n8k16` with 16-bit inputs and f32 accumulators: this
    /// lane's part of D = A·B + C.
    Mma(MmaInput),
    /// `ldmatrix.m8n8.x{matrices}`, transposed or not: this lane's part
    /// of each 8×8 matrix whose rows the first lanes read.
    LdMatrix {
        /// 1, 2 or 4.
        matrices: u32,
        /// Each lane gets a column's elements instead of a row's.
        trans: bool,
    },
    /// `wgmma.mma_async`, whose lanes must issue it together, as the
    /// other warps of their warpgroup must (see `warpgroup`): with A from
    /// registers, each lane gets its rows of A from its quad's; the rest
    /// of each thread's part comes from shared memory.
    Wgmma,
    /// `elect.sync`: whether this lane is the one the mask's lanes elect,
    /// the lowest of them.
    Elect,
    /// `setmaxnreg`, which every lane of the warpgroup makes together:
    /// nothing passes between them (the emulator has no register file to
    /// resize).
    SetMaxNReg,
}

/// Which lane a shuffle reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleKind {
    /// `lane ^ lane_mask`.
    Xor(u32),
    /// `lane + delta`.
    Down(u32),
    /// `lane - delta`.
    Up(u32),
    /// The lane given, modulo 32 (`__shfl_sync` over the whole warp).
    Index(u32),
}

impl WarpOp {
    /// The runtime's name of the operation, for a diagnostic.
    pub fn name(self) -> &'static str {
        match self {
            Self::Shuffle(ShuffleKind::Xor(_)) => "shfl_xor_sync",
            Self::Shuffle(ShuffleKind::Down(_)) => "shfl_down_sync",
            Self::Shuffle(ShuffleKind::Up(_)) => "shfl_up_sync",
            Self::Shuffle(ShuffleKind::Index(_)) => "shfl_sync",
            Self::Sync => "syncwarp",
            Self::Ballot => "ballot_sync",
            Self::Any => "any_sync",
            Self::All => "all_sync",
            Self::MatchAny => "match_any_sync",
            Self::Reduce(Reduction::Add) => "reduce_add_sync",
            Self::Reduce(Reduction::Min { .. }) => "reduce_min_sync",
            Self::Reduce(Reduction::Max { .. }) => "reduce_max_sync",
            Self::Reduce(Reduction::And) => "reduce_and_sync",
            Self::Reduce(Reduction::Or) => "reduce_or_sync",
            Self::Reduce(Reduction::Xor) => "reduce_xor_sync",
            Self::ActiveMask => "activemask",
            Self::Mma(_) => "mma_sync",
            Self::Wgmma => "wgmma_mma_async",
            Self::Elect => "elect_sync",
            Self::SetMaxNReg => "setmaxnreg",
            Self::LdMatrix { matrices, trans } => match (matrices, trans) {
                (1, false) => "ldmatrix_x1",
                (2, false) => "ldmatrix_x2",
                (4, false) => "ldmatrix_x4",
                (1, true) => "ldmatrix_x1_trans",
                (2, true) => "ldmatrix_x2_trans",
                _ => "ldmatrix_x4_trans",
            },
        }
    }
}

impl ShuffleKind {
    /// The lane that `lane` reads: its own where the source is past the
    /// warp's last lane (PTX's clamp of 31), except by index, which wraps.
    fn source(self, lane: u32) -> u32 {
        let source = match self {
            Self::Xor(lane_mask) => lane ^ lane_mask,
            Self::Down(delta) => lane.saturating_add(delta),
            Self::Up(delta) => lane.checked_sub(delta).unwrap_or(lane),
            Self::Index(source) => source % 32,
        };
        if source < 32 { source } else { lane }
    }
}

/// The lanes of one warp, where each waits, as `exchange` sees them.
struct Warp<'a> {
    /// The warp's first thread, as an index into the cluster's threads.
    start: usize,
    /// Where each thread of the cluster up to the end of the warp's block
    /// waits: `None` for one that has returned.
    waits: &'a [Option<Wait>],
}

impl Warp<'_> {
    /// The call lane `lane` waits at, if any.
    fn call(&self, lane: u32) -> Option<WarpCall> {
        match self.waits.get(self.start + lane as usize) {
            Some(Some(Wait::Warp(call))) => Some(*call),
            _ => None,
        }
    }

    /// What keeps lane `other` from joining `call`.
    fn problem(&self, call: &WarpCall, other: u32) -> Option<LaneProblem> {
        let Some(wait) = self.waits.get(self.start + other as usize) else {
            return Some(LaneProblem::NotInBlock);
        };
        Some(match wait {
            None => LaneProblem::Returned,
            Some(Wait::Barrier(barrier)) => LaneProblem::AtBarrier(barrier),
            Some(Wait::Mbarrier(site, _)) => LaneProblem::AtMbarrier(site),
            Some(Wait::ClusterBarrier(site)) => LaneProblem::AtClusterBarrier(site),
            Some(Wait::Warp(theirs)) => {
                if theirs.site == call.site && theirs.mask == call.mask && theirs.pass == call.pass
                {
                    return None;
                }
                LaneProblem::AtWarpCall {
                    call: theirs.op,
                    site: theirs.site,
                    mask: theirs.mask,
                    passed: theirs.pass,
                }
            }
        })
    }

    /// The lanes that join `call`: its mask, or for `activemask` the lanes
    /// at the same call on the same pass.
    fn lanes(&self, call: &WarpCall) -> u32 {
        if call.op != WarpOp::ActiveMask {
            return call.mask;
        }
        (0..32)
            .filter(|&lane| {
                self.call(lane).is_some_and(|theirs| {
                    theirs.op == WarpOp::ActiveMask
                        && theirs.site == call.site
                        && theirs.pass == call.pass
                })
            })
            .fold(0, |lanes, lane| lanes | 1 << lane)
    }
}

/// Once every live thread of the cluster waits somewhere (`all`), gives
/// every thread at a warp collective whose lanes have all arrived its
/// result, joins the warp clocks of the lanes of each `syncwarp`, and
/// returns the threads to run on. The others wait on for lanes that may
/// still come; a mask that no lane can ever complete, or nothing
/// completing at all, is a diagnostic.
pub(crate) fn exchange(
    threads: &[Current<'_>],
    all: &Waits<'_>,
) -> Result<Vec<usize>, (Dim3, Fault)> {
    let mut waits = vec![None; threads.len()];
    for &(index, barrier) in all.waiting {
        waits[index] = Some(Wait::Barrier(barrier));
    }
    for &(index, barrier) in all.parked {
        waits[index] = Some(Wait::ClusterBarrier(barrier));
    }
    for &(index, site, offset) in all.spinning {
        waits[index] = Some(Wait::Mbarrier(site, offset));
    }
    for &(index, call) in all.calling {
        waits[index] = Some(Wait::Warp(call));
    }
    let warp_of = |index: usize| {
        let current = &threads[index];
        // The threads of a cluster's blocks follow each other: the warp
        // ends where its block does.
        let (x, y, z) = current.launch.block;
        let block_end = index - current.linear as usize + (x * y * z) as usize;
        Warp {
            start: index - (current.linear % 32) as usize,
            waits: &waits[..block_end],
        }
    };
    // Every call is checked before any result is given, so that a
    // diagnostic never follows a half-made exchange; a lane that waits
    // elsewhere may still come, so its call waits unless nothing moves.
    let mut complete = Vec::new();
    let mut stuck = None;
    for &(index, call) in all.calling {
        match check(threads, &warp_of(index), index, &call)? {
            Readiness::Complete => complete.push((index, call)),
            Readiness::Waiting(fault) => {
                stuck.get_or_insert(fault);
            }
        }
    }
    if complete.is_empty() {
        return Err(stuck.expect("a call that cannot complete waits"));
    }
    for &(index, call) in &complete {
        let warp = warp_of(index);
        let lane = threads[index].linear % 32;
        let lanes = warp.lanes(&call);
        let operand = |lane: u32| warp.call(lane).expect("checked").bits;
        let joined = (0..32).filter(|&other| lanes & 1 << other != 0);
        let ballot = joined
            .clone()
            .filter(|&other| operand(other) != 0)
            .fold(0u32, |bits, other| bits | 1 << other);
        let result = match call.op {
            WarpOp::Shuffle(kind) => operand(kind.source(lane)),
            WarpOp::Sync => {
                if lanes.trailing_zeros() == lane {
                    let first = threads[index].linear - lane;
                    threads[index].memory.borrow_mut().join_clocks(first, lanes);
                }
                0
            }
            WarpOp::Ballot => ballot.into(),
            WarpOp::Any => u64::from(ballot != 0),
            WarpOp::All => u64::from(ballot == lanes),
            WarpOp::MatchAny => joined
                .filter(|&other| operand(other) == call.bits)
                .fold(0u32, |bits, other| bits | 1 << other)
                .into(),
            WarpOp::Reduce(reduction) => joined
                .map(|other| operand(other) as u32)
                .reduce(|one, other| reduction.combine(one, other))
                .expect("the caller is among the lanes")
                .into(),
            WarpOp::ActiveMask => lanes.into(),
            WarpOp::Elect => u64::from(lanes.trailing_zeros() == lane),
            WarpOp::SetMaxNReg => 0,
            WarpOp::Wgmma => {
                let registers = |lane| warp.call(lane).expect("checked").registers;
                threads[index]
                    .wgmma_rows
                    .set(matrix::a_rows(lane, registers));
                0
            }
            WarpOp::Mma(input) => {
                let registers = |lane| warp.call(lane).expect("checked").registers;
                threads[index]
                    .warp_registers
                    .set(matrix::mma(input, lane, registers));
                0
            }
            WarpOp::LdMatrix { matrices, trans } => {
                let registers = |lane| warp.call(lane).expect("checked").registers;
                let fragment = matrix::ldmatrix(matrices, trans, lane, registers);
                threads[index].warp_registers.set(fragment);
                0
            }
        };
        threads[index].warp_result.set(result);
    }
    Ok(complete.into_iter().map(|(index, _)| index).collect())
}

/// Whether a warp collective can complete now.
enum Readiness {
    /// Every lane of its mask waits at it.
    Complete,
    /// A lane of its mask waits elsewhere, and may still come: the fault
    /// to report if nothing else moves.
    Waiting((Dim3, Fault)),
}

/// Checks the call `call` of thread `index` against the lanes of its mask;
/// a fault where it never can complete: a lane of the mask that is not
/// there or has returned, a caller outside its mask, a shuffle reading a
/// lane outside it.
fn check(
    threads: &[Current<'_>],
    warp: &Warp<'_>,
    index: usize,
    call: &WarpCall,
) -> Result<Readiness, (Dim3, Fault)> {
    if call.op == WarpOp::ActiveMask {
        return Ok(Readiness::Complete);
    }
    let current = &threads[index];
    let bad = |lane, problem| {
        let fault = Fault::BadWarpCall {
            thread: current.thread,
            call: call.op,
            site: call.site,
            mask: call.mask,
            lane,
            problem,
        };
        (current.block, fault)
    };
    let lane = current.linear % 32;
    let named = |lane: u32| call.mask & 1 << lane != 0;
    if !named(lane) {
        return Err(bad(lane, LaneProblem::CallerNotInMask));
    }
    if let WarpOp::Shuffle(kind) = call.op {
        let source = kind.source(lane);
        if !named(source) {
            return Err(bad(source, LaneProblem::SourceNotInMask));
        }
    }
    let mut waiting = None;
    for other in (0..32).filter(|&other| named(other)) {
        match warp.problem(call, other) {
            None => {}
            Some(problem @ (LaneProblem::NotInBlock | LaneProblem::Returned)) => {
                return Err(bad(other, problem));
            }
            Some(problem) => {
                waiting.get_or_insert_with(|| bad(other, problem));
            }
        }
    }
    Ok(waiting.map_or(Readiness::Complete, Readiness::Waiting))
}
