//! A warpgroup's instructions: its four warps issue each `wgmma` and
//! `setmaxnreg` together, so a warp that returns instead, goes on to a
//! barrier without it, issues another, or is not in the block is reported;
//! and a `wgmma` descriptor reaching past the shared memory, or swizzled
//! and starting off its pattern's first row, is reported.

use gpu_emulator::{Diagnostic, Fault, OtherWarp, WarpOp};
use gpu_emulator::{WarpgroupDivergent, WgmmaMisaligned, WgmmaOutOfBounds};
use gpu_std::bf16;
use gpu_std::bulk::fence_proxy_async_shared_cta;
use gpu_std::shared::SharedArray;
use gpu_std::thread::{block_dim_x, sync_threads, thread_idx_x};
use gpu_std::wgmma::{Accumulators, MatrixDescriptor, Swizzle, setmaxnreg_dec};

use crate::support::{assert_fault, one_block};

/// A and B of one 64×64×16 `wgmma`, in core matrices of 16-byte rows (A's
/// chunks along k 128 bytes apart, its next eight rows 256 on; B's next
/// eight k 128 bytes on, its next eight columns 256): A's elements from
/// 0, B's from [`B_FIRST`].
pub const B_FIRST: u32 = 1024;
pub const ELEMENTS: u32 = 2 * B_FIRST;
pub const BYTES: u32 = 2 * ELEMENTS;

/// Every thread of the block writes its share of A and B: ones.
///
/// # Safety
/// The launch gives [`BYTES`] of shared memory.
pub unsafe fn stage(tile: SharedArray<bf16>) {
    for index in (thread_idx_x()..ELEMENTS).step_by(block_dim_x() as usize) {
        // SAFETY: by this function's contract.
        unsafe { tile.write(index, bf16::from_f32(1.0)) };
    }
}

/// The warpgroup's `wgmma` of A and B from elements `a_first` and
/// `b_first` (B N-major), swizzled as `swizzle` says, waited for.
///
/// # Safety
/// As [`Accumulators::mma_async`], but for what the emulator checks.
#[track_caller]
pub unsafe fn multiply(tile: SharedArray<bf16>, (a_first, b_first): (u32, u32), swizzle: Swizzle) {
    let a = MatrixDescriptor::new(tile, a_first, swizzle, 128, 256);
    let b = MatrixDescriptor::new(tile, b_first, swizzle, 128, 256);
    // SAFETY: by this function's contract.
    unsafe { Accumulators::<32>::ZERO.mma_async::<bf16>(a, b, true) }.wait();
}

/// What a test's warpgroup does wrong.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// Warp 1 returns instead of issuing the `wgmma`; the others pass the
    /// barrier after it where `then_barrier`.
    Returns {
        then_barrier: bool,
    },
    /// Warp 1 goes on to the barrier after the `wgmma` without it.
    Skips,
    /// Warp 1 issues its `wgmma` from another line.
    OtherSite,
    /// Warp 2 skips the `setmaxnreg` the others make first.
    NoSetMaxNReg,
    /// A and B from these elements, swizzled so.
    Described((u32, u32), Swizzle),
}

/// A block of `threads` stages A and B, fences them, passes a barrier,
/// and issues the `wgmma` (the others' `setmaxnreg` first, where `bug`
/// has it), then passes a barrier again (but where `bug` says not).
fn run(bug: Bug, threads: u32) -> Result<(), Diagnostic> {
    let body = || {
        let warp = thread_idx_x() / 32;
        // SAFETY: the launch gives A and B; the emulator checks the rest.
        unsafe {
            let tile = SharedArray::<bf16>::launch_sized();
            stage(tile);
            fence_proxy_async_shared_cta();
            sync_threads();
            if bug == Bug::NoSetMaxNReg && warp != 2 {
                setmaxnreg_dec::<40>();
            }
            let (places, swizzle) = match bug {
                Bug::Described(places, swizzle) => (places, swizzle),
                _ => ((0, B_FIRST), Swizzle::None),
            };
            match bug {
                Bug::Returns { .. } if warp == 1 => return,
                Bug::Skips if warp == 1 => {}
                Bug::OtherSite if warp == 1 => multiply(tile, places, swizzle),
                _ => multiply(tile, places, swizzle),
            }
            if bug
                != (Bug::Returns {
                    then_barrier: false,
                })
            {
                sync_threads();
            }
        }
    };
    gpu_emulator::run("warpgroup", &one_block(threads, BYTES), &body)
}

/// The divergence `bug` makes in a warpgroup of 128 threads.
fn divergence(bug: Bug) -> WarpgroupDivergent {
    let diagnostic = run(bug, 128).unwrap_err();
    match diagnostic.fault {
        Fault::WarpgroupDivergent(divergence) => divergence,
        _ => panic!("not a divergent warpgroup: {diagnostic}"),
    }
}

#[test]
fn a_warpgroup_that_issues_its_wgmma_whole_passes() {
    run(Bug::None, 128).unwrap();
    run(Bug::None, 256).unwrap();
}

/// Found where the other warps next pass a barrier, or at the block's
/// end.
#[test]
fn a_warp_that_returns_instead_of_issuing_the_wgmma_is_reported() {
    for then_barrier in [true, false] {
        let divergence = divergence(Bug::Returns { then_barrier });
        assert_eq!(
            (divergence.warp, divergence.call, divergence.passed),
            (0, WarpOp::Wgmma, 0)
        );
        assert_eq!(
            (divergence.other, divergence.instead),
            (1, OtherWarp::Returned)
        );
    }
}

#[test]
fn a_warp_that_goes_on_to_the_barrier_without_the_wgmma_is_reported() {
    let divergence = divergence(Bug::Skips);
    assert_eq!(divergence.other, 1);
    let OtherWarp::AtBarrier(barrier) = divergence.instead else {
        panic!("not at the barrier: {:?}", divergence.instead);
    };
    assert!(barrier.line() > divergence.site.line());
}

#[test]
fn a_warp_that_issues_the_wgmma_from_another_line_is_reported() {
    let divergence = divergence(Bug::OtherSite);
    let OtherWarp::Issued(WarpOp::Wgmma, site) = divergence.instead else {
        panic!("not another wgmma: {:?}", divergence.instead);
    };
    assert_eq!((divergence.warp, divergence.other), (0, 1));
    assert_ne!(site, divergence.site);
}

#[test]
fn a_warp_that_skips_setmaxnreg_is_reported() {
    let divergence = divergence(Bug::NoSetMaxNReg);
    assert_eq!((divergence.call, divergence.other), (WarpOp::SetMaxNReg, 2));
    assert!(matches!(
        divergence.instead,
        OtherWarp::Issued(WarpOp::Wgmma, _)
    ));
}

/// A block of 64 threads has half a warpgroup: warps 2 and 3 are missing.
#[test]
fn a_wgmma_of_a_warpgroup_the_block_lacks_warps_of_is_reported() {
    let diagnostic = run(Bug::None, 64).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WarpgroupDivergent(WarpgroupDivergent {
            thread: (0, 0, 0),
            call: WarpOp::Wgmma,
            other: 2,
            instead: OtherWarp::NotInBlock,
            ..
        })
    );
}

/// B's descriptor names the 2 KiB past A's, the launch's last byte being
/// A's and B's 4 KiB's.
#[test]
fn a_descriptor_past_the_shared_memory_is_reported() {
    let bug = Bug::Described((0, ELEMENTS), Swizzle::None);
    let diagnostic = run(bug, 128).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaOutOfBounds(WgmmaOutOfBounds {
            thread: (0, 0, 0),
            operand: 'B',
            start: BYTES,
            offset: BYTES,
            limit: BYTES,
            ..
        })
    );
}

/// A 128-byte-swizzled A from its pattern's second row (byte 128), and a
/// 64-byte-swizzled B from its pattern's second row (64 bytes past a
/// multiple of 512): the tensor cores would swizzle either with its first
/// row's pattern. A start 32, 64 or 96 bytes into the first row, the next
/// 16 k, is fine: the chained 128-byte-swizzled product in `wgmma` starts
/// A's descriptors there.
#[test]
fn a_swizzled_descriptor_off_its_patterns_first_row_is_reported() {
    let diagnostic = run(Bug::Described((64, B_FIRST), Swizzle::B128), 128).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaMisaligned(WgmmaMisaligned {
            operand: 'A',
            start: 128,
            swizzle: 128,
            ..
        })
    );
    let diagnostic = run(Bug::Described((0, B_FIRST + 32), Swizzle::B64), 128).unwrap_err();
    assert_fault!(
        diagnostic,
        Fault::WgmmaMisaligned(WgmmaMisaligned {
            operand: 'B',
            start: 2112,
            swizzle: 64,
            ..
        })
    );
}
