//! `shfl_sync` by lane, votes, matches, reductions and `activemask`
//! against a model on the CPU, for random masks and values, and their
//! misuse, each reported with the lane at fault and what is wrong with it.

use std::fmt::Debug;

use gpu_emulator::{Fault, LaneProblem};
use gpu_std::thread::sync_threads;
use gpu_std::warp::{
    ALL_LANES, Shuffle, activemask, all_sync, any_sync, ballot_sync, elect_sync, match_any_sync,
    reduce_add_sync, reduce_and_sync, reduce_max_sync, reduce_min_sync, reduce_or_sync,
    reduce_xor_sync, shfl_sync, syncwarp,
};
use locality_tests::seed;
use rand::distr::{Distribution, StandardUniform};
use rand::{Rng, SeedableRng, rngs::SmallRng};

use super::{fault_of, per_thread};

/// Two warps, the second partial: a partial warp is where masks go wrong.
const THREADS: u32 = 56;

/// A random mask for warp `warp` of [`THREADS`], naming only lanes that
/// exist and at least one; now and then every one.
fn random_mask(rng: &mut SmallRng, warp: u32) -> u32 {
    let lanes = (THREADS - 32 * warp).min(32);
    let present = if lanes == 32 {
        ALL_LANES
    } else {
        (1 << lanes) - 1
    };
    if rng.random_bool(0.2) {
        return present;
    }
    loop {
        let mask = rng.random::<u32>() & present;
        if mask != 0 {
            return mask;
        }
    }
}

/// Runs `body(thread, mask)` in every thread whose lane its warp's random
/// mask names, the others returning at once, and checks each result
/// against `model(thread, mask)`, the poison left where the mask leaves a
/// lane out.
fn in_random_masks<T: Copy + PartialEq + Debug>(
    rng: &mut SmallRng,
    poison: T,
    body: impl Fn(u32, u32) -> T,
    model: impl Fn(usize, u32) -> T,
) {
    let masks = [random_mask(rng, 0), random_mask(rng, 1)];
    let named = |t: usize| masks[t / 32] & 1 << (t % 32) != 0;
    let got = per_thread(THREADS, poison, |t| {
        let mask = masks[t as usize / 32];
        if named(t as usize) {
            body(t, mask)
        } else {
            poison
        }
    })
    .unwrap();
    for (t, &value) in got.iter().enumerate() {
        let mask = masks[t / 32];
        let expected = if named(t) { model(t, mask) } else { poison };
        assert_eq!(value, expected, "thread {t}, mask {mask:#x}");
    }
}

/// The lanes of `mask`.
fn lanes(mask: u32) -> impl Iterator<Item = u32> + Clone {
    (0..32).filter(move |lane| mask & 1 << lane != 0)
}

/// Every thread of a random mask reads a random lane of it by index, the
/// index sometimes past 31, which wraps.
fn shuffles_by_index<T: Shuffle>(rng: &mut SmallRng, poison: T)
where
    StandardUniform: Distribution<T>,
{
    let values: Vec<T> = (0..THREADS).map(|_| rng.random()).collect();
    let draws: Vec<u32> = (0..THREADS).map(|_| rng.random_range(0..128)).collect();
    // A lane of the mask, by the thread's draw, plus a multiple of 32.
    let source = |t: usize, mask: u32| {
        let within: Vec<u32> = lanes(mask).collect();
        let draw = draws[t];
        within[draw as usize % within.len()] + 32 * (draw / 32)
    };
    in_random_masks(
        rng,
        poison.to_bits(),
        |t, mask| shfl_sync(mask, values[t as usize], source(t as usize, mask)).to_bits(),
        |t, mask| values[t / 32 * 32 + source(t, mask) as usize % 32].to_bits(),
    );
}

#[test]
fn a_shuffle_by_index_reads_the_lane_named_modulo_32_in_every_type() {
    let mut rng = SmallRng::seed_from_u64(seed());
    for _ in 0..8 {
        shuffles_by_index::<u32>(&mut rng, u32::MAX);
        shuffles_by_index::<i32>(&mut rng, i32::MIN);
        shuffles_by_index::<f32>(&mut rng, f32::NAN);
        shuffles_by_index::<u64>(&mut rng, u64::MAX);
        shuffles_by_index::<i64>(&mut rng, i64::MIN);
        shuffles_by_index::<f64>(&mut rng, f64::NAN);
    }
}

#[test]
fn votes_and_matches_agree_with_a_model_for_random_masks() {
    let mut rng = SmallRng::seed_from_u64(seed());
    for _ in 0..40 {
        // Predicates from always to never, so that any and all go both ways.
        let odds = rng.random_range(0.0..=1.0);
        let predicates: Vec<bool> = (0..THREADS).map(|_| rng.random_bool(odds)).collect();
        let keys: Vec<u32> = (0..THREADS).map(|_| rng.random_range(0..4)).collect();
        let wide: Vec<i64> = (0..THREADS)
            .map(|_| rng.random_range(0..3) << 40 | 7)
            .collect();
        let where_ = |t: usize, mask: u32, holds: &dyn Fn(usize) -> bool| {
            lanes(mask)
                .filter(|&lane| holds(t / 32 * 32 + lane as usize))
                .fold(0, |bits, lane| bits | 1 << lane)
        };
        in_random_masks(
            &mut rng,
            [u32::MAX; 6],
            |t, mask| {
                let t = t as usize;
                [
                    ballot_sync(mask, predicates[t]),
                    any_sync(mask, predicates[t]).into(),
                    all_sync(mask, predicates[t]).into(),
                    match_any_sync(mask, keys[t]),
                    match_any_sync(mask, wide[t]),
                    elect_sync(mask).into(),
                ]
            },
            |t, mask| {
                let ballot = where_(t, mask, &|other| predicates[other]);
                [
                    ballot,
                    (ballot != 0).into(),
                    (ballot == mask).into(),
                    where_(t, mask, &|other| keys[other] == keys[t]),
                    where_(t, mask, &|other| wide[other] == wide[t]),
                    // The emulator elects the mask's lowest lane.
                    (t as u32 % 32 == mask.trailing_zeros()).into(),
                ]
            },
        );
    }
}

#[test]
fn reductions_agree_with_a_model_for_random_masks() {
    let mut rng = SmallRng::seed_from_u64(seed());
    for _ in 0..40 {
        let values: Vec<u32> = (0..THREADS).map(|_| rng.random()).collect();
        let body = |t: u32, mask| {
            let value = values[t as usize];
            let signed = value as i32;
            [
                reduce_add_sync(mask, value),
                reduce_min_sync(mask, value),
                reduce_max_sync(mask, value),
                reduce_min_sync(mask, signed) as u32,
                reduce_max_sync(mask, signed) as u32,
                reduce_and_sync(mask, value),
                reduce_or_sync(mask, value),
                reduce_xor_sync(mask, value),
            ]
        };
        let model = |t: usize, mask| {
            let of_mask = lanes(mask).map(|lane| values[t / 32 * 32 + lane as usize]);
            let signed = of_mask.clone().map(|value| value as i32);
            [
                of_mask.clone().fold(0, u32::wrapping_add),
                of_mask.clone().min().unwrap(),
                of_mask.clone().max().unwrap(),
                signed.clone().min().unwrap() as u32,
                signed.max().unwrap() as u32,
                of_mask.clone().fold(u32::MAX, |all, value| all & value),
                of_mask.clone().fold(0, |any, value| any | value),
                of_mask.fold(0, |odd, value| odd ^ value),
            ]
        };
        in_random_masks(&mut rng, [u32::MAX; 8], body, model);
    }
}

#[test]
fn activemask_names_the_lanes_that_reach_it_together_on_the_same_pass() {
    // Lane l calls it l % 4 times: on pass i the lanes with l % 4 > i
    // arrive together, and each keeps its last answer. Lanes with
    // l % 4 == 0 never call it, and in the partial warp lanes past 23 do
    // not exist: neither counts.
    let got = per_thread(THREADS, u32::MAX, |t| {
        let mut last = u32::MAX;
        for _ in 0..t % 4 {
            last = activemask();
        }
        last
    })
    .unwrap();
    for (t, &mask) in (0..).zip(&got) {
        let warp = t / 32 * 32;
        let expected = (warp..THREADS.min(warp + 32))
            .filter(|&other| other % 4 >= t % 4)
            .fold(0, |bits, other| bits | 1 << (other - warp));
        let expected = if t % 4 == 0 { u32::MAX } else { expected };
        assert_eq!(mask, expected, "thread {t}");
    }
}

#[test]
fn activemask_reports_no_lane_whatever_the_others_do() {
    // Half the warp asks while the other half returns or waits at a
    // barrier: the answer is the half that asked, and nothing is wrong.
    let got = per_thread(64, u32::MAX, |t| {
        if t % 32 < 16 {
            return activemask();
        }
        if t < 32 {
            return 0;
        }
        sync_threads();
        0
    })
    .unwrap();
    for (t, &mask) in got.iter().enumerate() {
        assert_eq!(mask, if t % 32 < 16 { 0xffff } else { 0 }, "thread {t}");
    }
}

/// The call, lane and problem of a kernel's `BadWarpCall`.
fn bad_call(
    result: Result<Vec<u32>, gpu_emulator::Diagnostic>,
) -> (&'static str, u32, LaneProblem) {
    let (fault, message) = fault_of(result);
    let Fault::BadWarpCall {
        call,
        lane,
        problem,
        ..
    } = fault
    else {
        panic!("{message}");
    };
    let call = call.name();
    assert!(message.contains(&format!("calls {call} at ")), "{message}");
    (call, lane, problem)
}

#[test]
fn a_ballot_naming_a_returned_lane_is_reported() {
    let result = per_thread(32, 0, |t| {
        if t == 9 {
            return 0;
        }
        ballot_sync(ALL_LANES, t % 2 == 0)
    });
    assert_eq!(bad_call(result), ("ballot_sync", 9, LaneProblem::Returned));
}

#[test]
fn an_election_naming_a_returned_lane_is_reported() {
    let result = per_thread(32, 0, |t| {
        if t == 5 {
            return 0;
        }
        elect_sync(ALL_LANES).into()
    });
    assert_eq!(bad_call(result), ("elect_sync", 5, LaneProblem::Returned));
}

#[test]
fn a_syncwarp_naming_lanes_a_partial_warp_lacks_is_reported() {
    let result = per_thread(40, 0, |_| {
        syncwarp(ALL_LANES);
        0
    });
    assert_eq!(bad_call(result), ("syncwarp", 8, LaneProblem::NotInBlock));
}

#[test]
fn a_vote_whose_lane_waits_at_a_barrier_is_reported() {
    let result = per_thread(32, 0, |t| {
        if t == 30 {
            sync_threads();
            return 0;
        }
        any_sync(ALL_LANES, t == 3).into()
    });
    let (call, lane, problem) = bad_call(result);
    assert_eq!((call, lane), ("any_sync", 30));
    assert!(matches!(problem, LaneProblem::AtBarrier(_)), "{problem:?}");
}

#[test]
fn a_match_whose_lane_waits_at_a_syncwarp_is_reported() {
    let result = per_thread(32, 0, |t| {
        if t == 17 {
            syncwarp(ALL_LANES);
            return 0;
        }
        match_any_sync(ALL_LANES, t / 4)
    });
    let (call, lane, problem) = bad_call(result);
    assert_eq!((call, lane), ("match_any_sync", 17));
    let LaneProblem::AtWarpCall {
        call: other,
        mask,
        passed,
        ..
    } = problem
    else {
        panic!("{problem:?}");
    };
    assert_eq!((other.name(), mask, passed), ("syncwarp", ALL_LANES, 0));
}

#[test]
fn a_reduction_that_leaves_out_its_caller_is_reported() {
    let result = per_thread(32, 0, |t| reduce_add_sync(!(1 << 4), t));
    assert_eq!(
        bad_call(result),
        ("reduce_add_sync", 4, LaneProblem::CallerNotInMask)
    );
}

#[test]
fn lanes_at_one_vote_with_different_masks_are_reported() {
    // Each half names the whole warp but for one lane of the other half.
    let result = per_thread(32, 0, |t| {
        let mask = if t < 16 { !(1 << 20) } else { !(1 << 3) };
        all_sync(mask, true).into()
    });
    let (call, lane, problem) = bad_call(result);
    assert_eq!(call, "all_sync");
    let LaneProblem::AtWarpCall { call, mask, .. } = problem else {
        panic!("{problem:?}");
    };
    assert_eq!(call.name(), "all_sync");
    assert_eq!((lane, mask), (16, !(1 << 3)));
}

#[test]
fn a_lane_at_the_same_vote_on_another_pass_is_reported() {
    // On the first pass lane 3 ballots alone; on the second it ballots
    // with all, who are still at their first.
    let result = per_thread(32, 0, |t| {
        let mut bits = 0;
        for pass in 0..2 {
            let mask = if t == 3 && pass == 0 {
                1 << 3
            } else {
                ALL_LANES
            };
            bits = ballot_sync(mask, true);
        }
        bits
    });
    let (call, lane, problem) = bad_call(result);
    assert_eq!((call, lane), ("ballot_sync", 3));
    let LaneProblem::AtWarpCall { passed, .. } = problem else {
        panic!("{problem:?}");
    };
    assert_eq!(passed, 1);
}

#[test]
fn a_collective_waits_for_a_lane_that_passes_another_first() {
    // Lane 3 ballots alone before joining the ballot of all: the others
    // wait for it there, as on the GPU, and nothing is reported.
    let got = per_thread(32, u32::MAX, |t| {
        let alone = if t == 3 { ballot_sync(1 << 3, true) } else { 0 };
        alone | ballot_sync(ALL_LANES, t % 2 == 1)
    })
    .unwrap();
    for (t, &bits) in got.iter().enumerate() {
        let alone = if t == 3 { 1 << 3 } else { 0 };
        assert_eq!(bits, alone | 0xaaaa_aaaa, "thread {t}");
    }
}
