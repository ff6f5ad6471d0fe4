//! The bench and the lessons end to end on the GPU: what they write, and
//! what an interrupted bench leaves behind.

use clap::Parser;
use libtest_mimic::{Failed, Trial};
use locality::cli::Cli;
use locality::npp::Npp;

use crate::devices::failed;

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
            in_temp_folder("locality-interrupt-", |dir| {
                let plots = dir.join("plots");
                std::fs::create_dir_all(&plots).map_err(failed)?;
                let (json, roofline) = (dir.join("bench.json"), plots.join("roofline.svg"));
                let markdown = dir.join("results.md");
                std::fs::write(&json, "an earlier report\n").map_err(failed)?;
                std::fs::write(&markdown, "earlier tables\n").map_err(failed)?;
                std::fs::write(&roofline, "an earlier plot\n").map_err(failed)?;
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
                    .map_err(failed)?;
                let stdout = child.stdout.take().ok_or("no standard output")?;
                let mut lines = BufReader::new(stdout).lines();
                // The plan is printed just before the ceilings and the sweep.
                for line in lines.by_ref() {
                    if line.map_err(failed)?.starts_with("plan:") {
                        break;
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(500));
                std::process::Command::new("kill")
                    .args(["-INT", &child.id().to_string()])
                    .status()
                    .map_err(failed)?;
                lines.for_each(drop);
                let output = child.wait_with_output().map_err(failed)?;
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
                    for entry in std::fs::read_dir(listed).map_err(failed)? {
                        left.push(
                            entry
                                .map_err(failed)?
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
            })
        },
    )
}

/// Every lesson on the GPU: its kernel verified at every point, its JSON
/// and plot written, and a verdict reached.
fn lessons_trial() -> Trial {
    Trial::test(
        "every lesson runs, verifies its kernel at every point and writes its JSON and plots",
        || {
            in_temp_folder("locality-lessons-", |dir| {
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
                    peer: None,
                };
                if !locality::lessons::run(&request).map_err(failed)? {
                    return Err("a lesson's kernel computed a wrong output".into());
                }
                let report: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&json).map_err(failed)?)
                        .map_err(|e| Failed::from(e.to_string()))?;
                let lessons = report["lessons"]
                    .as_array()
                    .ok_or("no lessons in the JSON")?;
                for (lesson, expected) in lessons.iter().zip(locality::lessons::LESSONS) {
                    let name = expected.name;
                    // The two-GPU lessons say so on a host of one, and
                    // run nothing.
                    if lesson["name"] == name && lesson["verdict"] == "skipped" {
                        if !plots.join(format!("{name}.svg")).is_file() {
                            continue;
                        }
                        return Err(format!("{name} was skipped, and plotted").into());
                    }
                    if lesson["name"] != name
                        || lesson["points"].as_array().is_none_or(Vec::is_empty)
                    {
                        return Err(format!("lesson {name} is missing or empty: {lesson}").into());
                    }
                    if plots.join(format!("{name}.svg")).is_file() != expected.plotted() {
                        return Err(format!("{name}'s plot is not as its lesson says").into());
                    }
                    // Every point timed records its spread, and the lesson
                    // the widest of them beside its margin.
                    let points = lesson["points"].as_array().into_iter().flatten();
                    if lesson["verdict"] != "skipped"
                        && (!lesson["spread"].is_f64()
                            || lesson.get("margin").is_none()
                            || points.clone().any(|point| !point["spread"].is_f64()))
                    {
                        return Err(
                            format!("lesson {name} records no spread or margin: {lesson}").into(),
                        );
                    }
                }
                if lessons.len() != locality::lessons::LESSONS.len() {
                    return Err(format!("{} lessons in the JSON", lessons.len()).into());
                }
                Ok(())
            })
        },
    )
}

/// Runs `body` on a new folder named from `prefix`, removed after.
fn in_temp_folder(
    prefix: &str,
    body: impl FnOnce(&std::path::Path) -> Result<(), Failed>,
) -> Result<(), Failed> {
    let folder = tempfile::TempDir::with_prefix(prefix).map_err(failed)?;
    body(folder.path())
}

pub fn bench_trials() -> Vec<Trial> {
    vec![
        lessons_trial(),
        interrupted_bench_trial(),
        Trial::test(
            "the bench command runs end to end at small sizes and writes its JSON and plots",
            || {
                in_temp_folder("locality-bench-", |dir| {
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
                    let report = std::fs::read_to_string(&json).map_err(failed)?;
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
                    let tables = std::fs::read_to_string(&markdown).map_err(failed)?;
                    if !tables.contains("| `blur_tiled` | 64×64×3 r=3 |") {
                        return Err(
                            format!("the Markdown lacks blur_tiled at 64²:\n{tables}").into()
                        );
                    }
                    if !tables.contains("| `transpose_padded` | 64×64 |") {
                        return Err(format!(
                            "the Markdown lacks transpose_padded at 64²:\n{tables}"
                        )
                        .into());
                    }
                    for plot in [
                        "roofline.svg",
                        "matmul.svg",
                        "gemv.svg",
                        "blur.svg",
                        "transpose.svg",
                    ] {
                        let svg = std::fs::read_to_string(plots.join(plot)).map_err(failed)?;
                        if !svg.ends_with("</svg>\n") {
                            return Err(format!("{plot} is not a whole SVG").into());
                        }
                    }
                    Ok(())
                })
            },
        ),
    ]
}
