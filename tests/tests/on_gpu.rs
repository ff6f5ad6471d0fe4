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

use gpu_host::Error as HostError;
use std::sync::OnceLock;

use rand::{SeedableRng, rngs::SmallRng};

use clap::Parser;
use libtest_mimic::{Arguments, Failed, Trial};
use locality::cli::{Cli, Verdict};
use locality::families::blur::{Blur, BlurShape, max_radius};
use locality::families::matmul::{Buffers, Matmul, MatmulShape};
use locality::families::{self, Visitor};
use locality::family::{CpuOutput, Family};
use locality::npp::Npp;
use locality::{Backend, Error, Gpu};
use locality_tests::{check_kernel, kernel, quiet_seed};

fn gpu() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| locality::gpu::open(0).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// The GPU with the kernels built for sm_75, as a Turing GPU loads them.
fn gpu_sm75() -> Result<&'static Gpu, Failed> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(|| {
        Gpu::with_ptx(0, locality::gpu::PTX.sm75)
            .map(|gpu| gpu.with_twins(kernels::CUDA_TWINS))
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| e.clone().into())
}

/// The GPU launching the CUDA C++ twins.
fn twin() -> Result<&'static Gpu, Failed> {
    static TWIN: OnceLock<Result<Gpu, String>> = OnceLock::new();
    TWIN.get_or_init(|| {
        gpu()
            .map_err(|e| format!("{e:?}"))?
            .twin()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| e.clone().into())
}

fn failed(error: impl std::fmt::Display) -> Failed {
    error.to_string().into()
}

/// Every kernel of every family, and its CUDA C++ twin, on each of its
/// family's test shapes it is made for, with a fresh seed that a failure names.
fn kernel_trials() -> Vec<Trial> {
    struct Trials(Vec<Trial>);
    impl Visitor for Trials {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for kernel in F::KERNELS {
                let shapes = F::test_shapes().into_iter();
                for shape in shapes.filter(|&shape| F::made_for(kernel, shape).is_ok()) {
                    self.0.push(Trial::test(
                        format!("{} {shape:?}", kernel.name),
                        move || {
                            check_kernel::<Gpu, F>(gpu()?, kernel, shape, quiet_seed())
                                .map_err(Failed::from)
                        },
                    ));
                    let name = format!("{} (CUDA C++ twin) {shape:?}", kernel.name);
                    self.0.push(Trial::test(name, move || {
                        check_kernel::<Gpu, F>(twin()?, kernel, shape, quiet_seed())
                            .map_err(Failed::from)
                    }));
                    let name = format!("{} (sm_75 PTX) {shape:?}", kernel.name);
                    self.0.push(Trial::test(name, move || {
                        check_kernel::<Gpu, F>(gpu_sm75()?, kernel, shape, quiet_seed())
                            .map_err(Failed::from)
                    }));
                }
            }
            Ok(())
        }
    }
    let mut trials = Trials(Vec::new());
    families::visit(&mut trials).expect("listing trials cannot fail");
    trials.0
}

/// Every blur kernel and twin at every radius it accepts, from 0 to its
/// maximum, for 1 to 4 channels, as the emulated test does.
fn radius_trials() -> Vec<Trial> {
    Blur::KERNELS
        .iter()
        .flat_map(|kernel| {
            [false, true].map(|on_twin| {
                let label = if on_twin { " (CUDA C++ twin)" } else { "" };
                let name = format!("{}{label} at every radius it accepts", kernel.name);
                Trial::test(name, move || {
                    let gpu = if on_twin { twin()? } else { gpu()? };
                    for channels in 1..=4 {
                        for radius in 0..=max_radius(kernel, channels) {
                            let shape = BlurShape::new(23, 11, channels as usize, radius);
                            let seed = quiet_seed() ^ u64::from(radius << 3 | channels);
                            check_kernel::<Gpu, Blur>(gpu, kernel, shape, seed)?;
                        }
                    }
                    Ok(())
                })
            })
        })
        .collect()
}

/// What the driver made of each kernel: the PTX test cannot see spills
/// that ptxas adds when it compiles for this GPU.
fn resource_trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "NVRTC compiles every kernel's CUDA C++ twin for this GPU",
            || twin().map(drop),
        ),
        Trial::test(
            "only the local-memory lesson uses local memory as the driver compiled it for this GPU",
            || {
                let gpu = gpu()?;
                let mut wrong = Vec::new();
                for kernel in families::kernels() {
                    for entry in kernel.entries() {
                        let resources = gpu.resources(&[entry]).map_err(failed)?;
                        if (resources.local_bytes > 0) != kernel.local_memory {
                            wrong.push(format!("{entry}: {} bytes", resources.local_bytes));
                        }
                    }
                }
                match wrong.as_slice() {
                    [] => Ok(()),
                    wrong => {
                        Err(format!("local memory not as declared: {}", wrong.join(", ")).into())
                    }
                }
            },
        ),
    ]
}

/// Errors that need real device buffers.
fn error_trials() -> Vec<Trial> {
    vec![
        Trial::test("buffers that do not match the shape are rejected", || {
            let gpu = gpu()?;
            let mut buffers = Buffers {
                a: gpu.alloc::<f32>("A", 12).map_err(failed)?,
                b: gpu.alloc::<f32>("B", 25).map_err(failed)?,
                c: gpu.alloc::<f32>("C", 15).map_err(failed)?,
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
        Trial::test("the kernel list shows each kernel's resources", || {
            let cli = Cli::try_parse_from(["locality", "--list"])
                .map_err(|e| Failed::from(e.to_string()))?;
            match locality::cli::run(&cli) {
                Ok(Verdict::Listed) => Ok(()),
                Ok(verdict) => Err(format!("the run ended {verdict:?}").into()),
                Err(error) => Err(failed(error)),
            }
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

/// The `locality` binary built with this harness: beside it, or one folder
/// up from cargo's `deps`.
fn locality_binary() -> Result<std::path::PathBuf, Failed> {
    let exe = std::env::current_exe().map_err(|e| Failed::from(e.to_string()))?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("locality"))
        .find(|path| path.is_file())
        .ok_or_else(|| "no locality binary beside the test harness".into())
}

/// The bench interrupted with Ctrl-C during its sweep: the JSON and the
/// plot already there stay as they were, and nothing else is left behind.
fn interrupted_bench_trial() -> Trial {
    Trial::test(
        "an interrupted bench leaves the reports already there as they were",
        || {
            use std::io::{BufRead, BufReader};
            let io = |error: std::io::Error| Failed::from(error.to_string());
            let folder = tempfile::TempDir::with_prefix("locality-interrupt-").map_err(io)?;
            let dir = folder.path();
            let plots = dir.join("plots");
            std::fs::create_dir_all(&plots).map_err(io)?;
            let (json, roofline) = (dir.join("bench.json"), plots.join("roofline.svg"));
            let markdown = dir.join("results.md");
            std::fs::write(&json, "an earlier report\n").map_err(io)?;
            std::fs::write(&markdown, "earlier tables\n").map_err(io)?;
            std::fs::write(&roofline, "an earlier plot\n").map_err(io)?;
            let mut child = std::process::Command::new(locality_binary()?)
                .args(["bench", "--kernel", "matmul", "--json"])
                .arg(&json)
                .arg("--plots")
                .arg(&plots)
                .arg("--markdown")
                .arg(&markdown)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(io)?;
            let stdout = child.stdout.take().ok_or("no standard output")?;
            let mut lines = BufReader::new(stdout).lines();
            // The plan is printed just before the ceilings and the sweep.
            for line in lines.by_ref() {
                if line.map_err(io)?.starts_with("plan:") {
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
            std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .map_err(io)?;
            lines.for_each(drop);
            let output = child.wait_with_output().map_err(io)?;
            let stderr = String::from_utf8_lossy(&output.stderr);
            if output.status.code() != Some(130) || !stderr.contains("interrupted") {
                return Err(format!("ended {:?}: {stderr}", output.status).into());
            }
            let kept = |path: &std::path::Path, text: &str| {
                std::fs::read_to_string(path).is_ok_and(|contents| contents == text)
            };
            if !kept(&json, "an earlier report\n")
                || !kept(&roofline, "an earlier plot\n")
                || !kept(&markdown, "earlier tables\n")
            {
                return Err("an earlier report was changed".into());
            }
            let mut left: Vec<String> = Vec::new();
            for listed in [dir, plots.as_path()] {
                for entry in std::fs::read_dir(listed).map_err(io)? {
                    left.push(
                        entry
                            .map_err(io)?
                            .file_name()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
            left.sort();
            if left != ["bench.json", "plots", "results.md", "roofline.svg"] {
                return Err(format!("left behind: {left:?}").into());
            }
            Ok(())
        },
    )
}

/// Every lesson on the GPU: its kernel verified at every point, its JSON
/// and plot written, and a verdict reached.
fn lessons_trial() -> Trial {
    Trial::test(
        "every lesson runs, verifies its kernel at every point and writes its JSON and plots",
        || {
            let io = |error: std::io::Error| Failed::from(error.to_string());
            let folder = tempfile::TempDir::with_prefix("locality-lessons-").map_err(io)?;
            let dir = folder.path();
            let (json, plots) = (dir.join("lessons.json"), dir.join("plots"));
            let request = locality::lessons::Request {
                lesson: None,
                json: Some(json.clone()),
                plots: Some(plots.clone()),
                runs: gpu_host::Runs {
                    warmup: 1,
                    timed: 5,
                },
                seed: locality_tests::quiet_seed(),
                device: 0,
            };
            if !locality::lessons::run(&request).map_err(failed)? {
                return Err("a lesson's kernel computed a wrong output".into());
            }
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&json).map_err(io)?)
                    .map_err(|e| Failed::from(e.to_string()))?;
            let lessons = report["lessons"]
                .as_array()
                .ok_or("no lessons in the JSON")?;
            for (lesson, expected) in lessons.iter().zip(locality::lessons::LESSONS) {
                let name = expected.name;
                if lesson["name"] != name || lesson["points"].as_array().is_none_or(Vec::is_empty) {
                    return Err(format!("lesson {name} is missing or empty: {lesson}").into());
                }
                if plots.join(format!("{name}.svg")).is_file() != expected.plotted() {
                    return Err(format!("{name}'s plot is not as its lesson says").into());
                }
            }
            if lessons.len() != locality::lessons::LESSONS.len() {
                return Err(format!("{} lessons in the JSON", lessons.len()).into());
            }
            Ok(())
        },
    )
}

fn bench_trials() -> Vec<Trial> {
    vec![
        lessons_trial(),
        interrupted_bench_trial(),
        Trial::test(
            "the bench command runs end to end at small sizes and writes its JSON and plots",
            || {
                let io = |error: std::io::Error| Failed::from(error.to_string());
                let folder = tempfile::TempDir::with_prefix("locality-bench-").map_err(io)?;
                let dir = folder.path();
                let json = dir.join("bench.json");
                let plots = dir.join("plots");
                let markdown = dir.join("results.md");
                let args = [
                    "locality",
                    "bench",
                    "--matmul-sizes",
                    "64,100x60x30",
                    "--gemv-sizes",
                    "300x77,128",
                    "--blur-sizes",
                    "53x29,64",
                    "--transpose-sizes",
                    "37x70,64",
                    "--json",
                    &json.to_string_lossy(),
                    "--plots",
                    &plots.to_string_lossy(),
                    "--seed",
                    "5",
                    "--markdown",
                    &markdown.to_string_lossy(),
                ]
                .map(String::from);
                let cli = Cli::try_parse_from(args).map_err(|e| Failed::from(e.to_string()))?;
                locality::cli::run(&cli).map_err(failed)?;
                let report = std::fs::read_to_string(&json).map_err(io)?;
                for field in [
                    "\"results\"",
                    "blur_tiled",
                    "transpose_padded",
                    "\"registers\"",
                    "\"schema_version\": 2",
                    "\"seed\": 5",
                ] {
                    if !report.contains(field) {
                        return Err(format!("the JSON lacks {field}").into());
                    }
                }
                if Npp::load().is_ok() && !report.contains("\"npp_box_filter\"") {
                    return Err("NPP loads, but the JSON has no row of its box filter".into());
                }
                let key = "\"vs_cuda_cpp\": ";
                let measured = |(at, _): (usize, &str)| {
                    report[at + key.len()..].starts_with(|c: char| c.is_ascii_digit())
                };
                if !report.match_indices(key).any(measured) {
                    return Err("the JSON has no kernel timed against its CUDA C++ twin".into());
                }
                let tables = std::fs::read_to_string(&markdown).map_err(io)?;
                if !tables.contains("| `blur_tiled` | 64×64×3 r=3 |") {
                    return Err(format!("the Markdown lacks blur_tiled at 64²:\n{tables}").into());
                }
                if !tables.contains("| `transpose_padded` | 64×64 |") {
                    return Err(
                        format!("the Markdown lacks transpose_padded at 64²:\n{tables}").into(),
                    );
                }
                for plot in [
                    "roofline.svg",
                    "matmul.svg",
                    "gemv.svg",
                    "blur.svg",
                    "transpose.svg",
                ] {
                    let svg = std::fs::read_to_string(plots.join(plot)).map_err(io)?;
                    if !svg.ends_with("</svg>\n") {
                        return Err(format!("{plot} is not a whole SVG").into());
                    }
                }
                Ok(())
            },
        ),
    ]
}

/// NPP's box filter, the blurs' baseline, called as the bench calls it:
/// away from the border, where NPP's replicated edge and our clipped
/// window see the same pixels, it agrees with the CPU blur to within one
/// (its rounding is its own), at 1, 3 and 4 channels.
fn npp_trial() -> Trial {
    Trial::test(
        "NPP's box filter agrees with the CPU blur away from the border",
        || {
            let gpu = gpu()?;
            let npp = Npp::open(gpu).map_err(failed)?;
            let seed = quiet_seed();
            for (width, height, channels, radius) in
                [(61, 37, 3, 2), (64, 40, 1, 1), (45, 30, 4, 5)]
            {
                let shape = BlurShape::new(width, height, channels, radius);
                let image =
                    Blur::inputs(shape, &mut SmallRng::seed_from_u64(seed)).map_err(failed)?;
                let input = gpu.upload("the image", &image).map_err(failed)?;
                let mut output = gpu
                    .alloc::<u8>("NPP's output", image.len())
                    .map_err(failed)?;
                gpu.poison(&mut output).map_err(failed)?;
                npp.box_filter(&input, &mut output, (width, height, channels), radius)
                    .map_err(failed)?;
                let got = gpu.download(&output).map_err(failed)?;
                let CpuOutput::U8(want) = Blur::cpu(shape, &image) else {
                    return Err("the CPU blur's output is not bytes".into());
                };
                let r = radius as usize;
                for y in r..height - r {
                    for sample in r * channels..(width - r) * channels {
                        let at = y * width * channels + sample;
                        if got[at].abs_diff(want[at]) > 1 {
                            return Err(format!(
                                "{shape:?}, seed {seed}: sample {sample} of row {y} is {} from NPP, {} from the CPU",
                                got[at], want[at]
                            )
                            .into());
                        }
                    }
                }
            }
            Ok(())
        },
    )
}

/// The variable that makes a missing GPU fail the GPU tests instead of
/// leaving them ignored: for runs that are meant to test a GPU.
const REQUIRE_GPU: &str = "LOCALITY_REQUIRE_GPU";

/// This harness run again with no device visible, on one GPU test, with and
/// without `LOCALITY_REQUIRE_GPU=1`: the test must fail, then be ignored.
fn requirement_trial() -> Trial {
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
    let mut trials = kernel_trials();
    trials.extend(radius_trials());
    trials.extend(resource_trials());
    trials.extend(error_trials());
    trials.extend(bench_trials());
    let mut trials: Vec<Trial> = trials
        .into_iter()
        .map(|trial| trial.with_ignored_flag(missing.is_some() && !required))
        .collect();
    // NPP comes with the CUDA toolkit, not the driver: on a GPU without it
    // the bench goes on without NPP, and this test is ignored.
    let npp_missing = missing.is_none() && Npp::load().is_err();
    trials.push(npp_trial().with_ignored_flag(missing.is_some() && !required || npp_missing));
    trials.push(requirement_trial());
    trials.push(
        Trial::test(
            "without a GPU, the lessons verify their kernels on the emulator and say so",
            || {
                let cli = Cli::try_parse_from(["locality", "lessons"])
                    .map_err(|e| Failed::from(e.to_string()))?;
                match locality::cli::run(&cli) {
                    Ok(Verdict::EmulatedOnly) => Ok(()),
                    Ok(verdict) => Err(format!("the lessons ended {verdict:?}").into()),
                    Err(error) => Err(failed(error)),
                }
            },
        )
        .with_ignored_flag(missing.is_none()),
    );
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
