//! The README and docs/ link only to files and headings that exist: every
//! relative link's file, and every `#anchor`'s heading, as GitHub names it.
//! And every figure in them is what the program writes from the committed
//! results: `LOCALITY_REGENERATE=1 cargo test --release --test docs`
//! writes them afresh.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut found = vec![root().join("README.md")];
    let mut folders = vec![root().join("docs")];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                found.push(path);
            }
        }
    }
    found
}

/// The text of `markdown` outside fenced code blocks and inline code spans,
/// where a bracket is code, not a link.
fn prose(markdown: &str) -> String {
    let mut text = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let spans: Vec<&str> = line.split('`').collect();
            text.extend(spans.iter().step_by(2).copied());
            text.push('\n');
        }
    }
    text
}

/// Every link target of `markdown`: `[text](target)` and `![alt](target)`.
fn links(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let end = rest.find(')')?;
            let target = rest[..end].split_whitespace().next()?;
            Some(target.to_string())
        })
        .collect()
}

/// The anchors GitHub gives the headings of `markdown`: lower case, the
/// punctuation but hyphens and underscores dropped, spaces made hyphens,
/// `-1`, `-2`… after a repeated one.
fn anchors(markdown: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut fenced = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let count = seen.entry(slug.clone()).or_default();
        found.push(match *count {
            0 => slug.clone(),
            n => format!("{slug}-{n}"),
        });
        *count += 1;
    }
    found
}

#[test]
fn every_generated_table_and_plot_is_as_the_committed_results_make_it() {
    let root = root();
    let generated = locality::docs::generate(&root).unwrap();
    assert!(
        generated
            .iter()
            .any(|file| file.path.extension().is_some_and(|ext| ext == "svg")),
        "no plot is generated"
    );
    let regenerate = std::env::var_os("LOCALITY_REGENERATE").is_some_and(|value| value == "1");
    let mut stale = Vec::new();
    for file in generated {
        let path = root.join(&file.path);
        if fs::read_to_string(&path).is_ok_and(|committed| committed == file.contents) {
            continue;
        }
        if regenerate {
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &file.contents).unwrap();
        } else {
            stale.push(file.path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "not as the committed results make them (LOCALITY_REGENERATE=1 cargo test --release \
         --test docs writes them): {stale:?}"
    );
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let mut broken = Vec::new();
    for document in documents() {
        let markdown = fs::read_to_string(&document).unwrap();
        let folder = document.parent().unwrap();
        for target in links(&markdown) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                document.clone()
            } else {
                folder.join(path)
            };
            let name = document.strip_prefix(root()).unwrap_or(&document).display();
            if !file.exists() {
                broken.push(format!("{name}: {target} (no such file)"));
            } else if !anchor.is_empty() {
                let headings = anchors(&fs::read_to_string(&file).unwrap_or_default());
                if !headings.iter().any(|heading| heading == anchor) {
                    broken.push(format!("{name}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The checker itself: a link it must find, one it must not, and GitHub's
/// anchors.
#[test]
fn the_checker_finds_links_and_names_anchors_as_github_does() {
    let markdown = "# The blur ladder\n\nSee [it](#the-blur-ladder) and `[not](a link)`.\n\
                    ```\n[also not](code)\n```\n## CUDA C++ twins\n## `locality bench`\n# The blur ladder\n";
    assert_eq!(links(markdown), ["#the-blur-ladder"]);
    assert_eq!(
        anchors(markdown),
        [
            "the-blur-ladder",
            "cuda-c-twins",
            "locality-bench",
            "the-blur-ladder-1"
        ]
    );
}
