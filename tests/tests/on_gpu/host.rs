//! The host's side on a GPU: buffers that do not fit, timed copies, and
//! the command line's list and checks.

use clap::Parser;
use gpu_host::{Error as HostError, Placement, runs};
use gpu_std::Kernel;
use libtest_mimic::{Failed, Trial};
use locality::Gpu;
use locality::case::Case;
use locality::cli::{Cli, Verdict};
use locality::families::bulk::{Bulk, BulkShape};
use locality::families::matmul::{Matmul, MatmulShape};
use locality::family::{Declaration, Family, TwoInputs};

use locality::{Backend, Error};
use locality_tests::{kernel, quiet_seed};
use rand::{SeedableRng, rngs::SmallRng};

use crate::devices::{failed, gpu, gpu_sm75, gpu_sm90, run_ending};

/// Errors that need real device buffers.
pub fn error_trials() -> Vec<Trial> {
    vec![
        Trial::test("buffers that do not match the shape are rejected", || {
            let gpu = gpu()?;
            let mut buffers = TwoInputs {
                first: gpu.alloc::<f32>("A", 12).map_err(failed)?,
                second: gpu.alloc::<f32>("B", 25).map_err(failed)?,
                output: gpu.alloc::<f32>("C", 15).map_err(failed)?,
            };
            // A 3×5 · 5×5 product needs 15 elements of A; the buffer has 12.
            let kernel = kernel::<Matmul>("matmul_naive");
            match Matmul::launch(gpu, kernel, MatmulShape::new(3, 5, 5), &mut buffers) {
                Err(Error::ShapeMismatch {
                    what: "A",
                    expected: 15,
                    actual: 12,
                }) => Ok(()),
                other => Err(format!("expected A's length to be flagged, got {other:?}").into()),
            }
        }),
        Trial::test(
            "a kernel reads and writes buffers of every placement",
            || {
                let seed = locality_tests::seed();
                locality_tests::placements::check_placements(gpu()?, seed).map_err(Into::into)
            },
        ),
        Trial::test(
            "managed memory beyond the GPU's free memory is refused before it is allocated",
            || {
                let gpu = gpu()?;
                let free = gpu.free_bytes().map_err(failed)?;
                let elements = free / 4 + 1;
                match gpu.alloc_in::<f32>("too much", elements, Placement::Managed) {
                    Err(HostError::ManagedBeyondFree { bytes, .. }) if bytes == 4 * elements => {}
                    other => {
                        return Err(format!(
                            "expected ManagedBeyondFree, got {:?}",
                            other.map(|_| ())
                        )
                        .into());
                    }
                }
                let after = gpu.free_bytes().map_err(failed)?;
                match after + (64 << 20) >= free {
                    true => Ok(()),
                    false => Err(format!("free memory fell from {free} to {after} bytes").into()),
                }
            },
        ),
        Trial::test(
            "an allocation larger than the GPU is out of memory",
            || match gpu()?.alloc::<f32>("a huge buffer", 1 << 46) {
                Err(HostError::OutOfMemory { bytes, .. }) if bytes == 1 << 48 => Ok(()),
                other => Err(format!("expected OutOfMemory, got {:?}", other.map(|_| ())).into()),
            },
        ),
        Trial::test(
            "copies to and from the GPU are timed from pinned and pageable memory",
            || {
                let gpu = gpu()?;
                let runs = gpu_host::Runs {
                    warmup: 1,
                    timed: 3,
                };
                for to_device in [true, false] {
                    for pinned in [true, false] {
                        let transfer = gpu_host::Transfer { to_device, pinned };
                        match gpu.transfer_ms(1 << 24, transfer, runs).map_err(failed)? {
                            Some(ms) if ms > 0.0 && ms.is_finite() => {}
                            other => return Err(format!("{transfer:?}: {other:?}").into()),
                        }
                    }
                }
                Ok(())
            },
        ),
        Trial::test(
            "a persisting window is checked, one at a time, and undone when dropped",
            || {
                let gpu = gpu()?;
                let limits = gpu
                    .persisting_l2()
                    .map_err(failed)?
                    .ok_or("no persisting L2")?;
                let reused = gpu.alloc::<f32>("reused", 1 << 20).map_err(failed)?;
                let too_much = limits.max_carve_out + 1;
                match gpu.persist(&reused, too_much) {
                    Err(HostError::CarveOut { bytes, limit })
                        if bytes == too_much && limit == limits.max_carve_out => {}
                    other => {
                        return Err(
                            format!("expected CarveOut, got {:?}", other.map(|_| ())).into()
                        );
                    }
                }
                let window = gpu.persist(&reused, 1 << 20).map_err(failed)?;
                if window.hit_ratio != 0.25 {
                    return Err(format!("1 MiB of 4: hit ratio {}", window.hit_ratio).into());
                }
                match gpu.persist(&reused, 1 << 20) {
                    Err(HostError::WindowInUse) => {}
                    other => {
                        return Err(
                            format!("expected WindowInUse, got {:?}", other.map(|_| ())).into()
                        );
                    }
                }
                drop(window);
                match gpu.persisting_carve_out() {
                    Ok(0) => {}
                    other => {
                        return Err(format!("the carve-out was not given back: {other:?}").into());
                    }
                }
                gpu.persist(&reused, 1 << 20).map(drop).map_err(failed)
            },
        ),
        Trial::test(
            "a kernel that needs a newer GPU than its PTX build is refused, not launched",
            || {
                let gpu = gpu_sm75()?;
                let kernel = &Bulk::KERNELS[2];
                let shape = BulkShape { n: 4096 };
                let mut rng = SmallRng::seed_from_u64(quiet_seed());
                let mut case = Case::<Gpu, Bulk>::new(gpu, shape, &mut rng).map_err(failed)?;
                match case.check(gpu, kernel) {
                    Err(Error::Host(HostError::NeedsCapability {
                        kernel: "reverse_bulk",
                        needs: (9, 0),
                        has: (7, 5),
                    })) => Ok(()),
                    other => Err(format!(
                        "expected NeedsCapability, got {:?}",
                        other.map(|comparison| comparison.passed())
                    )
                    .into()),
                }
            },
        ),
        Trial::test(
            "a kernel that needs Hopper's arch-specific build runs from it alone, on 9.0 alone",
            || {
                let kernel = Kernel {
                    arch_specific: true,
                    ..Bulk::KERNELS[2]
                };
                let default = gpu()?;
                let on_9_0 = default.ptx() == locality::gpu::PTX.sm90a;
                match (on_9_0, runs(default, &kernel)) {
                    (true, Ok(())) | (false, Err(HostError::NeedsArchSpecific { .. })) => {}
                    (_, other) => {
                        return Err(format!("the default build (9.0: {on_9_0}): {other:?}").into());
                    }
                }
                match runs(gpu_sm90()?, &kernel) {
                    Err(HostError::NeedsArchSpecific {
                        kernel: "reverse_bulk",
                        needs: (9, 0),
                        has: (9, 0),
                    }) => Ok(()),
                    other => Err(format!("expected NeedsArchSpecific, got {other:?}").into()),
                }
            },
        ),
        Trial::test("the kernel list shows each kernel's resources", || {
            run_ending(&["locality", "--list"], Verdict::Listed)
        }),
        Trial::test(
            "the command line verifies every kernel at small odd sizes",
            || {
                let args = [
                    "locality", "--matmul", "67x45x33", "--gemv", "301x77", "--blur", "53x29",
                    "--runs", "2",
                ];
                let cli = Cli::try_parse_from(args).map_err(|e| Failed::from(e.to_string()))?;
                match locality::cli::run(&cli) {
                    Ok(Verdict::Correct) => Ok(()),
                    Ok(verdict) => Err(format!("the run ended {verdict:?}").into()),
                    Err(error) => Err(failed(error)),
                }
            },
        ),
    ]
}
