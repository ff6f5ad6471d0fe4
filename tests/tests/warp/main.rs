//! The emulator's warp shuffles and vector loads against CUDA's semantics:
//! what a lane gets back, and every way a shuffle's mask or a vector load's
//! address can be wrong, each reported with the thread, the site and the
//! lane or index; the other warp collectives (votes, matches, reductions,
//! `activemask`) in `collectives`, and `syncwarp`'s ordering of shared
//! memory in `ordering`.

mod collectives;
mod ordering;

use gpu_emulator::{Diagnostic, Fault, LaneProblem, Launch};
use gpu_std::Real;
use gpu_std::global::{Global, GlobalMut};
use gpu_std::thread::{sync_threads, thread_idx_x};
use gpu_std::warp::{ALL_LANES, shfl_down_sync, shfl_xor_sync};
use locality_tests::seed;
use rand::{Rng, SeedableRng, rngs::SmallRng};

/// One block of `threads` along x, with `shared_bytes` of launch-sized
/// shared memory.
fn one_block(threads: u32, shared_bytes: u32) -> Launch {
    Launch {
        grid: (1, 1, 1),
        block: (threads, 1, 1),
        shared_bytes,
        cluster: (1, 1, 1),
    }
}

/// Runs `body` on one block of `threads`, each thread writing what it
/// returns to its own element of the output, poisoned beforehand.
fn per_thread<T: Copy>(
    threads: u32,
    poison: T,
    body: impl Fn(u32) -> T,
) -> Result<Vec<T>, Diagnostic> {
    per_thread_in(&one_block(threads, 0), poison, body)
}

/// [`per_thread`] on the one block of `launch`.
fn per_thread_in<T: Copy>(
    launch: &Launch,
    poison: T,
    body: impl Fn(u32) -> T,
) -> Result<Vec<T>, Diagnostic> {
    let mut out = vec![poison; launch.block.0 as usize];
    let view = GlobalMut::new("out", &mut out);
    gpu_emulator::run("per_thread", launch, &|| {
        let t = thread_idx_x();
        let value = body(t);
        // SAFETY: one element per thread, inside the buffer.
        unsafe { view.write(t as usize, value) };
    })?;
    Ok(out)
}

#[test]
fn a_xor_shuffle_reads_the_lane_across_the_mask_bits() {
    for lane_mask in [1, 2, 5, 16, 31] {
        let got = per_thread(64, u32::MAX, |t| shfl_xor_sync(ALL_LANES, t, lane_mask)).unwrap();
        let expected: Vec<u32> = (0..64)
            .map(|t| t / 32 * 32 + ((t % 32) ^ lane_mask))
            .collect();
        assert_eq!(got, expected, "lane mask {lane_mask}");
    }
    // Past lane 31 a lane keeps its own value (PTX's clamp of 31).
    let got = per_thread(32, u32::MAX, |t| shfl_xor_sync(ALL_LANES, t, 32)).unwrap();
    assert_eq!(got, (0..32).collect::<Vec<_>>());
}

#[test]
fn a_down_shuffle_reads_delta_lanes_up_and_keeps_its_own_past_the_warp() {
    for delta in [0, 1, 3, 16, 31, 32] {
        let got = per_thread(64, u32::MAX, |t| shfl_down_sync(ALL_LANES, t, delta)).unwrap();
        let expected: Vec<u32> = (0..64)
            .map(|t| if t % 32 + delta < 32 { t + delta } else { t })
            .collect();
        assert_eq!(got, expected, "delta {delta}");
    }
}

#[test]
fn sixty_four_bit_values_shuffle_whole() {
    let mut rng = SmallRng::seed_from_u64(seed());
    let values: Vec<f64> = (0..32).map(|_| rng.random::<f64>() - 0.5).collect();
    let got = per_thread(32, f64::NAN, |t| {
        shfl_xor_sync(ALL_LANES, values[t as usize], 7)
    })
    .unwrap();
    let expected: Vec<f64> = (0..32).map(|t| values[t ^ 7]).collect();
    assert_eq!(got, expected);
}

#[test]
fn a_butterfly_leaves_the_warps_sum_in_every_lane_and_down_shuffles_in_lane_0() {
    let mut rng = SmallRng::seed_from_u64(seed());
    let values: Vec<u32> = (0..96).map(|_| rng.random_range(0..1 << 20)).collect();
    let warp_sum = |warp: usize| values[warp * 32..][..32].iter().sum::<u32>();
    // Each lane adds what the shuffle brings it, lane masks (or deltas)
    // 16 down to 1.
    let summed = |shuffle: fn(u32, u32, u32) -> u32| {
        per_thread(96, u32::MAX, |t| {
            let mut value = values[t as usize];
            for lanes_away in [16, 8, 4, 2, 1] {
                value += shuffle(ALL_LANES, value, lanes_away);
            }
            value
        })
        .unwrap()
    };
    let butterfly = summed(shfl_xor_sync);
    let down = summed(shfl_down_sync);
    for (t, &sum) in butterfly.iter().enumerate() {
        assert_eq!(sum, warp_sum(t / 32), "thread {t}");
    }
    for warp in 0..3 {
        assert_eq!(down[warp * 32], warp_sum(warp), "warp {warp}");
    }
}

#[test]
fn two_halves_of_a_warp_may_shuffle_apart_with_their_own_masks() {
    let got = per_thread(32, u32::MAX, |t| {
        if t < 16 {
            shfl_xor_sync(0x0000_ffff, t, 1)
        } else {
            shfl_xor_sync(0xffff_0000, t + 100, 2)
        }
    })
    .unwrap();
    let expected: Vec<u32> = (0..32)
        .map(|t| if t < 16 { t ^ 1 } else { (t ^ 2) + 100 })
        .collect();
    assert_eq!(got, expected);
}

/// The fault of a kernel that should have stopped, and what it reported.
fn fault_of<T: std::fmt::Debug>(result: Result<Vec<T>, Diagnostic>) -> (Fault, String) {
    let diagnostic = result.expect_err("the emulator should have stopped the kernel");
    (diagnostic.fault.clone(), diagnostic.to_string())
}

/// Asserts that `fault` is a bad warp call with the fields given (among
/// `thread`, `lane` and `problem`), showing `message` where it is not.
macro_rules! assert_bad_warp_call {
    ($fault:expr, $message:expr, $($field:ident: $value:pat),+) => {
        assert!(
            matches!($fault, Fault::BadWarpCall { $($field: $value,)+ .. }),
            "{}",
            $message
        )
    };
}

#[test]
fn a_full_mask_in_a_partial_warp_names_lanes_that_are_not_there() {
    let (fault, message) = fault_of(per_thread(48, 0, |t| shfl_xor_sync(ALL_LANES, t, 1)));
    let Fault::BadWarpCall {
        thread,
        mask,
        lane,
        problem,
        ..
    } = fault
    else {
        panic!("{message}");
    };
    assert_eq!((thread, mask, lane), ((32, 0, 0), ALL_LANES, 16));
    assert_eq!(problem, LaneProblem::NotInBlock);
    assert!(message.contains("names lane 16, but its warp has no thread there"));
}

#[test]
fn a_mask_naming_a_returned_lane_is_reported() {
    let (fault, message) = fault_of(per_thread(32, 0, |t| {
        if t == 5 {
            return 0;
        }
        shfl_xor_sync(ALL_LANES, t, 1)
    }));
    assert_bad_warp_call!(fault, message, lane: 5, problem: LaneProblem::Returned);
}

#[test]
fn a_lane_at_a_barrier_instead_of_the_shuffle_is_reported() {
    let (fault, message) = fault_of(per_thread(32, 0, |t| {
        if t < 31 {
            shfl_down_sync(ALL_LANES, t, 1)
        } else {
            sync_threads();
            t
        }
    }));
    assert_bad_warp_call!(fault, message, lane: 31, problem: LaneProblem::AtBarrier(_));
    assert!(
        message.contains("waits at the sync_threads at"),
        "{message}"
    );
}

#[test]
#[allow(clippy::if_same_then_else)] // two shuffles alike but at two sites: the bug
fn lanes_at_two_different_shuffles_are_reported() {
    let (fault, message) = fault_of(per_thread(32, 0, |t| {
        if t % 2 == 0 {
            shfl_xor_sync(ALL_LANES, t, 1)
        } else {
            shfl_xor_sync(ALL_LANES, t, 1)
        }
    }));
    let Fault::BadWarpCall {
        thread,
        site,
        lane,
        problem: LaneProblem::AtWarpCall {
            site: other, mask, ..
        },
        ..
    } = fault
    else {
        panic!("{message}");
    };
    assert_eq!((thread, lane, mask), ((0, 0, 0), 1, ALL_LANES));
    assert_ne!(site, other, "{message}");
}

#[test]
fn a_lane_outside_its_own_mask_is_reported() {
    let (fault, message) = fault_of(per_thread(32, 0, |t| shfl_xor_sync(0xffff_fffe, t, 1)));
    assert_bad_warp_call!(
        fault, message, thread: (0, 0, 0), lane: 0, problem: LaneProblem::CallerNotInMask
    );
}

#[test]
fn reading_a_lane_the_mask_leaves_out_is_reported() {
    // The lower half shuffles among itself, but across bit 4 it reads the
    // upper half, which the mask leaves out.
    let (fault, message) = fault_of(per_thread(32, 0, |t| {
        if t < 16 {
            shfl_xor_sync(0x0000_ffff, t, 16)
        } else {
            shfl_xor_sync(0xffff_0000, t, 16)
        }
    }));
    assert_bad_warp_call!(
        fault, message, thread: (0, 0, 0), lane: 16, problem: LaneProblem::SourceNotInMask
    );
    assert!(message.contains("an undefined value"), "{message}");
}

/// Each thread reads the vector at element `index(t)` of a random buffer
/// of `len` f32, and returns its sum.
fn vector_reads(len: usize, index: impl Fn(u32) -> usize) -> Result<Vec<f32>, Diagnostic> {
    let mut rng = SmallRng::seed_from_u64(seed());
    let data: Vec<f32> = (0..len).map(|_| rng.random_range(0..64) as f32).collect();
    let view = Global::new("data", &data);
    // SAFETY: the emulator checks the bounds and alignment it tests.
    let sums = per_thread(32, f32::NAN, |t| unsafe {
        view.read_vector(index(t)).into_iter().sum()
    })?;
    for (t, &sum) in sums.iter().enumerate() {
        let start = index(t as u32);
        let expected: f32 = data[start..start + f32::VECTOR_LEN as usize].iter().sum();
        assert_eq!(sum, expected, "thread {t}");
    }
    Ok(sums)
}

#[test]
fn a_vector_load_reads_the_four_elements_from_its_index() {
    vector_reads(128, |t| 4 * t as usize).unwrap();
    vector_reads(128, |t| 124 - 4 * t as usize).unwrap();
}

#[test]
fn a_vector_load_off_a_16_byte_boundary_is_a_misaligned_address() {
    let diagnostic = vector_reads(256, |t| 4 * t as usize + usize::from(t == 9)).unwrap_err();
    assert_eq!(
        diagnostic.fault,
        Fault::GlobalMisaligned {
            thread: (9, 0, 0),
            buffer: "data",
            index: 37,
            bytes: 16,
        }
    );
    assert!(diagnostic.to_string().contains("misaligned address"));
}

#[test]
fn a_vector_load_that_runs_past_the_end_names_the_first_element_outside() {
    // The last vector starts inside the buffer of 126 elements but ends
    // two past it.
    let diagnostic = vector_reads(126, |t| 4 * t as usize).unwrap_err();
    assert!(
        matches!(
            diagnostic.fault,
            Fault::GlobalOutOfBounds {
                thread: (31, 0, 0),
                buffer: "data",
                index: 126,
                len: 126,
                ..
            }
        ),
        "{diagnostic}"
    );
}
