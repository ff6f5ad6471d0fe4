//! Every kernel of every family against the CPU reference, on the GPU, over
//! its family's test shapes: sizes of 1, primes, non-multiples of every tile
//! and block width, and rectangular shapes. Each test draws fresh random
//! inputs, poisons the output and checks every element; the same for every
//! kernel's CUDA C++ twin, and for every kernel as built for sm_75, which a
//! Turing GPU loads (where copies are loads and stores, not `cp.async`).
//! And what the driver made of each kernel: no local memory.
//!
//! Without a CUDA device these tests cannot run: the harness says "not run:
//! no CUDA device" and reports them as ignored, never as passed; with
//! `LOCALITY_REQUIRE_GPU=1` it reports them as failed.
//!
//! One harness (libtest-mimic) for them all, its trials built in a module
//! each by what they run; a trial's name is its own string, with no module
//! path before it.

mod bench;
mod devices;
mod host;
mod kernels;
mod npp;
mod peers;
mod requirement;
mod shared_limits;

use libtest_mimic::{Arguments, Trial};
use locality::cli::Verdict;
use locality::npp::Npp;

use devices::run_ending;
use requirement::{REQUIRE_GPU, requirement_trial};

fn main() {
    let arguments = Arguments::from_args();
    let missing = gpu_host::gpu::availability().err();
    let required = std::env::var_os(REQUIRE_GPU).is_some_and(|value| value == "1");
    if let Some(reason) = &missing {
        if required {
            println!("no CUDA device ({reason}) but {REQUIRE_GPU}=1: every GPU test below fails");
        } else {
            println!(
                "not run: no CUDA device ({reason}); every GPU test below is reported as ignored \
                 ({REQUIRE_GPU}=1 makes them fail instead)"
            );
        }
    }
    let mut trials = kernels::kernel_trials();
    trials.extend(kernels::radius_trials());
    trials.extend(kernels::resource_trials());
    trials.extend(host::error_trials());
    trials.extend(shared_limits::shared_limit_trials());
    trials.extend(bench::bench_trials());
    let pair = gpu_host::gpu::device_count().unwrap_or(0) >= 2;
    trials.extend(peers::peer_trials(pair));
    let mut trials: Vec<Trial> = trials
        .into_iter()
        .map(|trial| {
            let ignored = trial.has_ignored_flag();
            trial.with_ignored_flag(ignored || missing.is_some() && !required)
        })
        .collect();
    // NPP comes with the CUDA toolkit, not the driver: on a GPU without it
    // the bench goes on without NPP, and this test is ignored.
    let npp_missing = missing.is_none() && Npp::load().is_err();
    trials.push(npp::npp_trial().with_ignored_flag(missing.is_some() && !required || npp_missing));
    trials.push(requirement_trial());
    trials.push(
        Trial::test(
            "without a GPU, the lessons verify their kernels on the emulator and say so",
            || run_ending(&["locality", "lessons"], Verdict::EmulatedOnly),
        )
        .with_ignored_flag(missing.is_none()),
    );
    trials.push(
        Trial::test(
            "without a GPU, the default run verifies on the emulator and says so",
            || run_ending(&["locality"], Verdict::EmulatedOnly),
        )
        .with_ignored_flag(missing.is_none()),
    );
    libtest_mimic::run(&arguments, trials).exit();
}
