//! Every kernel against the CPU reference, on the GPU, over many shapes:
//! sizes of 1, primes, non-multiples of every tile and block width, and
//! rectangular shapes. Each test draws fresh random inputs, poisons the
//! output and checks every element.
//!
//! Without a CUDA device these tests cannot run: the harness says "not run:
//! no CUDA device" and reports them as ignored, never as passed.

use std::sync::OnceLock;

use clap::Parser;
use libtest_mimic::{Arguments, Failed, Trial};
use locality::cli::{Cli, Verdict};
use locality::kernels::blur::{Blur, ImageShape};
use locality::kernels::gemv::{Element, Gemv, GemvShape};
use locality::kernels::matmul::{Matmul, MatmulShape, matmul};
use locality::verify::{BlurCase, Comparison, GemvCase, MatmulCase};
use locality::{Backend, Error, Gpu};
use locality_tests::{BLUR_CASES, GEMV_SCALARS, GEMV_SHAPES, MATMUL_SHAPES};
use rand::{SeedableRng, rngs::SmallRng};

fn gpu() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| Gpu::new(0).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// A fresh seed, reported with any failure so that it can be replayed.
fn fresh_rng() -> (u64, SmallRng) {
    let seed = rand::random();
    (seed, SmallRng::seed_from_u64(seed))
}

fn verdict(seed: u64, comparison: Comparison) -> Result<(), Failed> {
    if comparison.passed() {
        Ok(())
    } else {
        Err(format!("inputs from seed {seed}: {comparison}").into())
    }
}

fn failed(error: Error) -> Failed {
    error.to_string().into()
}

fn matmul_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for kernel in Matmul::ALL {
        for (m, n, k) in MATMUL_SHAPES {
            let shape = MatmulShape::new(m, n, k);
            trials.push(Trial::test(
                format!("{} {shape}", kernel.entry_point()),
                move || {
                    let gpu = gpu()?;
                    let (seed, mut rng) = fresh_rng();
                    let mut case = MatmulCase::new(gpu, shape, &mut rng).map_err(failed)?;
                    verdict(seed, case.check(gpu, kernel).map_err(failed)?)
                },
            ));
        }
    }
    trials
}

fn gemv_trials<T: Element>() -> Vec<Trial> {
    let mut trials = Vec::new();
    for kernel in Gemv::ALL {
        for (m, n) in GEMV_SHAPES {
            for (alpha, beta) in GEMV_SCALARS {
                let shape = GemvShape::new(m, n);
                let name = format!(
                    "{} {shape} alpha={alpha} beta={beta}",
                    kernel.entry_point::<T>()
                );
                trials.push(Trial::test(name, move || {
                    let gpu = gpu()?;
                    let (seed, mut rng) = fresh_rng();
                    let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
                    let mut case = GemvCase::<Gpu, T>::new(gpu, shape, alpha, beta, &mut rng)
                        .map_err(failed)?;
                    verdict(seed, case.check(gpu, kernel).map_err(failed)?)
                }));
            }
        }
    }
    trials
}

fn blur_trials() -> Vec<Trial> {
    let mut trials = Vec::new();
    for kernel in Blur::ALL {
        for (width, height, channels, radius) in BLUR_CASES {
            let image = ImageShape::new(width, height, channels);
            trials.push(Trial::test(
                format!("{} {image} r={radius}", kernel.entry_point()),
                move || {
                    let gpu = gpu()?;
                    let (seed, mut rng) = fresh_rng();
                    let mut case = BlurCase::new(gpu, image, radius, &mut rng).map_err(failed)?;
                    verdict(seed, case.check(gpu, kernel).map_err(failed)?)
                },
            ));
        }
    }
    trials
}

/// Errors that need real device buffers.
fn error_trials() -> Vec<Trial> {
    vec![
        Trial::test("buffers that do not match the shape are rejected", || {
            let gpu = gpu()?;
            let a = gpu.alloc::<f32>("A", 12).map_err(failed)?;
            let b = gpu.alloc::<f32>("B", 25).map_err(failed)?;
            let mut c = gpu.alloc::<f32>("C", 15).map_err(failed)?;
            // A 3×5 · 5×5 product needs 15 elements of A; the buffer has 12.
            match matmul(
                gpu,
                Matmul::Naive,
                MatmulShape::new(3, 5, 5),
                &a,
                &b,
                &mut c,
            ) {
                Err(Error::ShapeMismatch {
                    what: "A",
                    expected: 15,
                    actual: 12,
                }) => Ok(()),
                other => Err(format!("expected A's length to be flagged, got {other:?}").into()),
            }
        }),
        Trial::test(
            "an allocation larger than the GPU is out of memory",
            || match gpu()?.alloc::<f32>("a huge buffer", 1 << 46) {
                Err(Error::OutOfMemory { bytes, .. }) if bytes == 1 << 48 => Ok(()),
                other => Err(format!("expected OutOfMemory, got {:?}", other.map(|_| ())).into()),
            },
        ),
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

fn bench_trials() -> Vec<Trial> {
    vec![Trial::test(
        "the bench command runs end to end at small sizes and writes its JSON and plots",
        || {
            let io = |error: std::io::Error| Failed::from(error.to_string());
            let dir = std::env::temp_dir().join(format!("locality-bench-{}", std::process::id()));
            let json = dir.join("bench.json");
            let plots = dir.join("plots");
            let args = [
                "locality",
                "bench",
                "--matmul-sizes",
                "64,100x60x30",
                "--gemv-sizes",
                "300x77,128",
                "--blur-sizes",
                "53x29,64",
                "--json",
                &json.to_string_lossy(),
                "--plots",
                &plots.to_string_lossy(),
            ]
            .map(String::from);
            std::fs::create_dir_all(&dir).map_err(io)?;
            let cli = Cli::try_parse_from(args).map_err(|e| Failed::from(e.to_string()))?;
            locality::cli::run(&cli).map_err(failed)?;
            let report = std::fs::read_to_string(&json).map_err(io)?;
            if !report.contains("\"results\"") || !report.contains("blur_tiled") {
                return Err("the JSON lacks results".into());
            }
            for plot in ["roofline.svg", "matmul.svg", "gemv.svg", "blur.svg"] {
                let svg = std::fs::read_to_string(plots.join(plot)).map_err(io)?;
                if !svg.ends_with("</svg>\n") {
                    return Err(format!("{plot} is not a whole SVG").into());
                }
            }
            std::fs::remove_dir_all(&dir).map_err(io)
        },
    )]
}

fn main() {
    let arguments = Arguments::from_args();
    let missing = locality::device::availability().err();
    if let Some(reason) = &missing {
        println!("not run: no CUDA device ({reason}); every GPU test below is reported as ignored");
    }
    let mut trials = matmul_trials();
    trials.extend(gemv_trials::<f32>());
    trials.extend(gemv_trials::<f64>());
    trials.extend(blur_trials());
    trials.extend(error_trials());
    trials.extend(bench_trials());
    let mut trials: Vec<Trial> = trials
        .into_iter()
        .map(|trial| trial.with_ignored_flag(missing.is_some()))
        .collect();
    trials.push(
        Trial::test(
            "without a GPU, the default run verifies on the emulator and says so",
            || {
                let cli =
                    Cli::try_parse_from(["locality"]).map_err(|e| Failed::from(e.to_string()))?;
                match locality::cli::run(&cli) {
                    Ok(Verdict::EmulatedOnly) => Ok(()),
                    Ok(verdict) => Err(format!("the run ended {verdict:?}").into()),
                    Err(error) => Err(failed(error)),
                }
            },
        )
        .with_ignored_flag(missing.is_none()),
    );
    libtest_mimic::run(&arguments, trials).exit();
}
