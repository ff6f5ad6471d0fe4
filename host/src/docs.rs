//! The figures of README.md and docs/, written from the committed results
//! so that none is typed by hand and none drifts from its run.
//!
//! A generated block is the lines between `<!-- BEGIN what ARGUMENTS -->`
//! and `<!-- END -->`, where `what` names what the block shows and from
//! which file, paths from the repository's root:
//!
//! | block | shows |
//! | --- | --- |
//! | `summary BENCH.json` | each ladder family's best kernel against the roofline, the library and its twin |
//! | `ladder BENCH.json FAMILY [SIZE]` | a family's kernels at one size (its largest by default), with what each teaches |
//! | `fastest BENCH.json FAMILY` | a family's fastest kernel at each case of its largest size |
//! | `results BENCH.json` | the whole of `bench --markdown` |
//! | `picked BENCH.json` | at every size, the kernel each family that picks by shape launches, against the library and the ladder's fastest |
//! | `twins-by-size BENCH.json` | every kernel against its CUDA C++ twin at every size |
//! | `twins BENCH.json` | every kernel against its CUDA C++ twin, and both sides' registers |
//! | `twins-beside BENCH.json... KERNEL...` | the kernels named against their twins in each run, side by side (no plots drawn from these runs) |
//! | `plot BENCH.json NAME` | one of `bench --plots`' SVGs, drawn into the folder named as the JSON |
//! | `lessons LESSONS.json` | each lesson's claim, what the GPU showed and the verdict |
//! | `verdicts LESSONS.json` | each lesson in one line, with its verdict |
//! | `verdicts-by-seed LESSONS.json...` | each lesson's verdict in runs at several seeds, each with its margin and spread |
//! | `lesson-plot LESSONS.json NAME` | one of `lessons --plots`' SVGs, drawn the same way |
//! | `output FILE FIRST-LAST` | those lines of a captured run, as a code block |
//!
//! `tests/tests/docs.rs` regenerates every block and plot and fails where
//! the committed files differ; `LOCALITY_REGENERATE=1` writes them instead.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

use crate::bench::json::Report as BenchReport;
use crate::bench::{markdown, plot};
use crate::error::{Error, Result};
use crate::lessons::Report as LessonsReport;

/// A file as the committed results make it.
#[derive(Debug)]
pub struct Generated {
    /// From the repository's root.
    pub path: PathBuf,
    pub contents: String,
}

/// Every Markdown file of the repository at `root` (README.md and docs/)
/// with its generated blocks written afresh, and every plot they show.
pub fn generate(root: &Path) -> Result<Vec<Generated>> {
    let mut documents = vec![PathBuf::from("README.md")];
    markdown_files(root, Path::new("docs"), &mut documents)?;
    let mut sources = Sources {
        root,
        bench: BTreeMap::new(),
        compared: BTreeMap::new(),
        lessons: BTreeMap::new(),
    };
    let mut generated = Vec::new();
    for path in documents {
        let text = read(root, &path)?;
        let contents = fill(&mut sources, &path, &text).map_err(|message| Error::Docs {
            path: path.clone(),
            message,
        })?;
        generated.push(Generated { path, contents });
    }
    for (json, report) in &sources.bench {
        let plots = plot::all(report)?;
        generated.extend(in_folder_of(json, plots));
    }
    for (json, report) in &sources.lessons {
        generated.extend(in_folder_of(json, report.plots()?));
    }
    Ok(generated)
}

/// The committed results the blocks read, each parsed once.
struct Sources<'a> {
    root: &'a Path,
    bench: BTreeMap<PathBuf, BenchReport>,
    /// Runs only set beside others (`twins-beside`), whose plots are not
    /// drawn: most are experiments kept as evidence.
    compared: BTreeMap<PathBuf, BenchReport>,
    lessons: BTreeMap<PathBuf, LessonsReport>,
}

impl Sources<'_> {
    fn bench(&mut self, json: &Path) -> Result<&BenchReport, String> {
        parsed(self.root, &mut self.bench, json)
    }

    fn compared(&mut self, json: &Path) -> Result<&BenchReport, String> {
        parsed(self.root, &mut self.compared, json)
    }

    fn lessons(&mut self, json: &Path) -> Result<&LessonsReport, String> {
        parsed(self.root, &mut self.lessons, json)
    }
}

/// The report at `json`, parsed the first time it is asked for.
fn parsed<'a, T: serde::de::DeserializeOwned>(
    root: &Path,
    reports: &'a mut BTreeMap<PathBuf, T>,
    json: &Path,
) -> Result<&'a T, String> {
    if !reports.contains_key(json) {
        let text = read(root, json).map_err(|error| error.to_string())?;
        let report =
            serde_json::from_str(&text).map_err(|error| format!("{}: {error}", json.display()))?;
        reports.insert(json.to_path_buf(), report);
    }
    Ok(&reports[json])
}

fn read(root: &Path, path: &Path) -> Result<String> {
    std::fs::read_to_string(root.join(path)).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The Markdown files under `folder`, in name order.
fn markdown_files(root: &Path, folder: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(root.join(folder)).map_err(|source| Error::Read {
        path: folder.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .map(|entry| folder.join(entry.file_name()))
        .collect();
    paths.sort();
    for path in paths {
        if root.join(&path).is_dir() {
            markdown_files(root, &path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "md") {
            files.push(path);
        }
    }
    Ok(())
}

/// Plots drawn from `json`, in the folder named as it without `.json`.
fn in_folder_of(json: &Path, plots: Vec<(String, String)>) -> Vec<Generated> {
    let folder = json.with_extension("");
    plots
        .into_iter()
        .map(|(name, contents)| Generated {
            path: folder.join(name),
            contents,
        })
        .collect()
}

const BEGIN: &str = "<!-- BEGIN ";
const END: &str = "<!-- END -->";

/// `text` of the document at `path` with every block written afresh.
fn fill(sources: &mut Sources<'_>, path: &Path, text: &str) -> Result<String, String> {
    let mut filled = String::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        filled.push_str(line);
        filled.push('\n');
        let Some(spec) = line
            .strip_prefix(BEGIN)
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let block = block(sources, path, spec)
            .map_err(|message| format!("line {}: <!-- BEGIN {spec} -->: {message}", number + 1))?;
        if !lines.any(|(_, line)| line == END) {
            return Err(format!("line {}: no {END} after it", number + 1));
        }
        filled.push('\n');
        filled.push_str(&block);
        if !block.ends_with('\n') {
            filled.push('\n');
        }
        filled.push('\n');
        filled.push_str(END);
        filled.push('\n');
    }
    Ok(filled)
}

/// What the block `spec` shows, in the document at `path`.
fn block(sources: &mut Sources<'_>, path: &Path, spec: &str) -> Result<String, String> {
    let words: Vec<&str> = spec.split_whitespace().collect();
    let (&what, arguments) = words.split_first().ok_or("an empty block")?;
    let [source, rest @ ..] = arguments else {
        return Err(format!("{what} names no file"));
    };
    let source = Path::new(source);
    let link = relative(path, source);
    let family = || {
        rest.first()
            .copied()
            .ok_or(format!("{what} names no family"))
    };
    let missing = |family: &str| format!("{} has no {family} results", source.display());
    // A table of a bench run, under the line that says which run it is.
    let captioned = |report: &BenchReport, table: String| {
        let caption = markdown::measured_on(report);
        format!("{caption} ([JSON]({link})):\n\n{}", table.trim_start())
    };
    match what {
        "summary" => {
            let report = sources.bench(source)?;
            Ok(captioned(report, markdown::summary(report)))
        }
        "ladder" => {
            let family = family()?;
            let size = (rest.len() > 1).then(|| rest[1..].join(" "));
            let report = sources.bench(source)?;
            let table =
                markdown::ladder(report, family, size.as_deref()).ok_or_else(|| missing(family))?;
            Ok(captioned(report, table))
        }
        "fastest" => {
            let family = family()?;
            let report = sources.bench(source)?;
            let rows = report.results.iter().filter(|row| row.family == family);
            let rows = markdown::at_largest_size(rows);
            if rows.is_empty() {
                return Err(missing(family));
            }
            Ok(captioned(report, markdown::fastest(&rows)))
        }
        "results" => Ok(markdown::render(sources.bench(source)?)),
        "picked" => {
            let report = sources.bench(source)?;
            let table = markdown::picked(report);
            if table.is_empty() {
                return Err(format!("no family of {} picks by shape", source.display()));
            }
            Ok(captioned(report, table))
        }
        "twins-by-size" => {
            let report = sources.bench(source)?;
            Ok(captioned(report, markdown::twins_by_size(report)))
        }
        "twins-beside" => {
            let files = arguments.iter().take_while(|word| word.ends_with(".json"));
            let files: Vec<&Path> = files.map(Path::new).collect();
            let kernels = &arguments[files.len()..];
            if files.len() < 2 || kernels.is_empty() {
                return Err(format!("{what} names two runs or more, then kernels"));
            }
            for file in &files {
                sources.compared(file)?;
            }
            let runs: Vec<(String, &BenchReport)> = files
                .iter()
                .map(|&file| {
                    let name = file.file_stem().unwrap_or_default().to_string_lossy();
                    let heading = format!("[{name}]({})", relative(path, file));
                    (heading, &sources.compared[file])
                })
                .collect();
            Ok(format!(
                "Each kernel against its CUDA C++ twin, lowest and highest over each run's \
                 sweep:\n\n{}",
                markdown::twins_beside(&runs, kernels)
            ))
        }
        "twins" => {
            let report = sources.bench(source)?;
            Ok(captioned(report, markdown::twins(report)))
        }
        "plot" => {
            let name = family()?;
            let device = sources.bench(source)?.device.name.clone();
            Ok(image(path, source, name, &device))
        }
        "lessons" => Ok(lessons(sources.lessons(source)?, &link)),
        "verdicts" => {
            let report = sources.lessons(source)?;
            let mut text = format!("On an {} ([JSON]({link})):\n\n", report.device);
            for entry in &report.lessons {
                let _ = writeln!(
                    text,
                    "- {} — **{}**",
                    entry.title,
                    entry.outcome.verdict.describe()
                );
            }
            Ok(text)
        }
        "verdicts-by-seed" => {
            let mut runs = vec![(sources.lessons(source)?.clone(), link)];
            for more in rest {
                let more = Path::new(more);
                runs.push((sources.lessons(more)?.clone(), relative(path, more)));
            }
            Ok(verdicts_by_seed(&runs))
        }
        "lesson-plot" => {
            let name = family()?;
            let device = sources.lessons(source)?.device.clone();
            Ok(image(path, source, name, &device))
        }
        "output" => {
            let range = rest.first().ok_or("output names no lines")?;
            let (first, last) = range
                .split_once('-')
                .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
                .filter(|&(first, last)| 1 <= first && first <= last)
                .ok_or(format!("{range} is not FIRST-LAST, from line 1"))?;
            let text = read(sources.root, source).map_err(|error| error.to_string())?;
            let lines: Vec<&str> = text.lines().collect();
            let taken = lines.get(first - 1..last).ok_or(format!(
                "{} has {} lines",
                source.display(),
                lines.len()
            ))?;
            Ok(format!("```\n{}\n```", taken.join("\n")))
        }
        _ => Err(format!("no block is called {what}")),
    }
}

/// The image `NAME.svg` drawn from `source`, as the document at `path`
/// links it.
fn image(path: &Path, source: &Path, name: &str, device: &str) -> String {
    let svg = source.with_extension("").join(format!("{name}.svg"));
    format!("![{name}, on an {device}]({})", relative(path, &svg))
}

/// Each lesson's verdict in each of `runs` (a report and its link), one
/// column a run, each with its margin and the widest spread of its points;
/// where the runs' verdicts differ, so does the row's first column.
fn verdicts_by_seed(runs: &[(LessonsReport, String)]) -> String {
    let seeds: Vec<String> = runs
        .iter()
        .map(|(report, link)| format!("[{}]({link})", report.seed))
        .collect();
    let mut text = format!(
        "On an {}, {} timed runs a point, seeds {} (margin / spread):\n\n| lesson | verdict |",
        runs[0].0.device,
        runs[0].0.runs,
        seeds.join(", ")
    );
    let mut rule = "\n| --- | --- |".to_string();
    for (report, _) in runs {
        let _ = write!(text, " seed {} |", report.seed);
        rule.push_str(" --- |");
    }
    text.push_str(&rule);
    text.push('\n');
    let percent = |value: Option<f64>| match value {
        Some(value) => format!("{:+.1}%", 100.0 * value),
        None => "counts".to_string(),
    };
    for entry in &runs[0].0.lessons {
        let outcomes: Vec<_> = runs
            .iter()
            .map(|(report, _)| {
                report
                    .lessons
                    .iter()
                    .find(|other| other.name == entry.name)
                    .map(|other| &other.outcome)
            })
            .collect();
        let verdicts: Vec<&str> = outcomes
            .iter()
            .map(|outcome| outcome.map_or("not run", |outcome| outcome.verdict.describe()))
            .collect();
        let verdict = if verdicts.iter().all(|verdict| *verdict == verdicts[0]) {
            verdicts[0].to_string()
        } else {
            format!("**differs**: {}", verdicts.join(" / "))
        };
        let _ = write!(text, "| {} | {verdict} |", entry.name);
        for outcome in outcomes {
            let cell = outcome.map_or(String::new(), |outcome| {
                let spread = outcome
                    .spread
                    .map_or(String::new(), |spread| format!(" / {:.1}%", 100.0 * spread));
                format!("{}{spread}", percent(outcome.margin))
            });
            let _ = write!(text, " {cell} |");
        }
        text.push('\n');
    }
    text
}

/// Each lesson's claim, what the GPU showed, and the verdict.
fn lessons(report: &LessonsReport, link: &str) -> String {
    let mut text = format!(
        "{}, seed {}, {} timed runs a point ([JSON]({link})):\n\n\
         | lesson | the material's claim | what the GPU showed | verdict |\n\
         | --- | --- | --- | --- |\n",
        report.device, report.seed, report.runs
    );
    for entry in &report.lessons {
        let _ = writeln!(
            text,
            "| {} | {} | {} | {} |",
            entry.name,
            entry.claim,
            entry.outcome.finding,
            entry.outcome.verdict.describe()
        );
    }
    text
}

/// `target` as a link from the document at `document`, both from the root.
fn relative(document: &Path, target: &Path) -> String {
    let from: Vec<Component<'_>> = document
        .parent()
        .map_or(Vec::new(), |parent| parent.components().collect());
    let to: Vec<Component<'_>> = target.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut link = PathBuf::new();
    for _ in common..from.len() {
        link.push("..");
    }
    for component in &to[common..] {
        link.push(component);
    }
    link.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill_in(root: &Path, text: &str) -> Result<String, String> {
        let mut sources = Sources {
            root,
            bench: BTreeMap::new(),
            compared: BTreeMap::new(),
            lessons: BTreeMap::new(),
        };
        fill(&mut sources, Path::new("docs/chapter.md"), text)
    }

    #[test]
    fn a_block_is_written_afresh_between_its_markers() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("run.txt"), "one\ntwo\nthree\n").unwrap();
        let text = "before\n<!-- BEGIN output run.txt 2-3 -->\nstale\n<!-- END -->\nafter\n";
        assert_eq!(
            fill_in(root.path(), text).unwrap(),
            "before\n<!-- BEGIN output run.txt 2-3 -->\n\n```\ntwo\nthree\n```\n\n<!-- END -->\nafter\n"
        );
    }

    #[test]
    fn a_block_that_cannot_be_written_is_an_error_that_says_where() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("run.txt"), "one\n").unwrap();
        let error = |text: &str| fill_in(root.path(), text).unwrap_err();
        assert!(error("<!-- BEGIN output run.txt 1-1 -->\n").contains("no <!-- END -->"));
        assert!(error("<!-- BEGIN output run.txt 1-2 -->\n<!-- END -->\n").contains("has 1 lines"));
        assert!(error("x\n<!-- BEGIN chart run.txt -->\n<!-- END -->\n").starts_with("line 2:"));
        assert!(error("<!-- BEGIN summary none.json -->\n<!-- END -->\n").contains("none.json"));
        let beside = |arguments: &str| {
            error(&format!(
                "<!-- BEGIN twins-beside {arguments} -->\n<!-- END -->\n"
            ))
        };
        assert!(beside("a.json k").contains("two runs or more, then kernels"));
        assert!(beside("a.json b.json").contains("two runs or more, then kernels"));
        assert!(beside("a.json b.json k").contains("a.json"));
    }

    #[test]
    fn links_are_relative_to_the_document() {
        let json = Path::new("docs/results/h100/bench.json");
        assert_eq!(
            relative(Path::new("README.md"), json),
            "docs/results/h100/bench.json"
        );
        assert_eq!(
            relative(Path::new("docs/bench.md"), json),
            "results/h100/bench.json"
        );
        assert_eq!(
            relative(Path::new("docs/a/b.md"), json),
            "../results/h100/bench.json"
        );
    }
}
