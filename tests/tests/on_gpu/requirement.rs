//! `LOCALITY_REQUIRE_GPU`: a run meant to test a GPU fails without one.

use libtest_mimic::{Failed, Trial};

/// The variable that makes a missing GPU fail the GPU tests instead of
/// leaving them ignored: for runs that are meant to test a GPU.
pub const REQUIRE_GPU: &str = "LOCALITY_REQUIRE_GPU";

/// This harness run again with no device visible, on one GPU test, with and
/// without `LOCALITY_REQUIRE_GPU=1`: the test must fail, then be ignored.
pub fn requirement_trial() -> Trial {
    Trial::test(
        "LOCALITY_REQUIRE_GPU=1 turns a missing GPU into failures, not ignored tests",
        || {
            let run = |require: bool| -> Result<(bool, String), Failed> {
                let mut command = std::process::Command::new(
                    std::env::current_exe().map_err(|e| Failed::from(e.to_string()))?,
                );
                command
                    .args([
                        "--exact",
                        "NVRTC compiles every kernel's CUDA C++ twin for this GPU",
                    ])
                    .env("CUDA_VISIBLE_DEVICES", "")
                    .env_remove(REQUIRE_GPU);
                if require {
                    command.env(REQUIRE_GPU, "1");
                }
                let output = command.output().map_err(|e| Failed::from(e.to_string()))?;
                let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
                Ok((output.status.success(), stdout))
            };
            match (run(true)?, run(false)?) {
                ((false, required), (true, optional))
                    if required.contains("1 failed") && optional.contains("1 ignored") =>
                {
                    Ok(())
                }
                ((_, required), (_, optional)) => Err(format!(
                    "with {REQUIRE_GPU}=1:\n{required}\nwithout it:\n{optional}"
                )
                .into()),
            }
        },
    )
}
