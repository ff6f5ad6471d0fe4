//! Each crate's modules form layers: no module imports another that
//! imports it back, directly or through others (cargo already refuses a
//! circle between crates). Read from the source, so that a circle fails
//! here before it tangles the code.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Every crate of the workspace that has modules, by its source folder.
const CRATES: [&str; 7] = [
    "host/src",
    "gpu/src",
    "crates/gpu-builder/src",
    "crates/gpu-core/src",
    "crates/gpu-emulator/src",
    "crates/gpu-host/src",
    "crates/gpu-std/src",
];

/// Module path (`bench::json`) → the source of every file of the crate
/// whose sources are in `src`.
fn modules(src: &str) -> BTreeMap<String, String> {
    fn walk(dir: &Path, prefix: &str, modules: &mut BTreeMap<String, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                walk(&path, &format!("{prefix}{stem}::"), modules);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let name = match stem.as_str() {
                    "mod" => prefix.trim_end_matches("::").to_string(),
                    _ => format!("{prefix}{stem}"),
                };
                modules.insert(name, fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut modules = BTreeMap::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(src),
        "",
        &mut modules,
    );
    modules.remove("lib");
    modules.remove("main");
    modules
}

/// The modules `source` (module `name`) uses, outside its tests and
/// comments: `crate::a::b`, `super::a`, `self::a` and its submodules.
fn imports(name: &str, source: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = source
        .split("#[cfg(test)]")
        .next()
        .unwrap()
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let parent = name.rsplit_once("::").map_or("", |(parent, _)| parent);
    let join = |base: &str, rest: &str| match base {
        "" => rest.to_string(),
        base => format!("{base}::{rest}"),
    };
    let mut found = BTreeSet::new();
    for (marker, base) in [("crate::", ""), ("super::", parent), ("self::", name)] {
        for (start, _) in code.match_indices(marker) {
            let path: String = code[start + marker.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut module = join(base, path.trim_end_matches(':'));
            while !known.contains(&module) && module.contains("::") {
                module = module.rsplit_once("::").unwrap().0.to_string();
            }
            if known.contains(&module) && module != name {
                found.insert(module);
            }
        }
    }
    for line in code.lines() {
        if let Some(child) = line
            .trim()
            .strip_prefix("pub mod ")
            .or(line.trim().strip_prefix("mod "))
        {
            let child = join(name, child.trim_end_matches(';'));
            if known.contains(&child) {
                found.insert(child);
            }
        }
    }
    found
}

/// Each module of the crate whose sources are in `src` → the modules it
/// imports.
fn graph(src: &str) -> BTreeMap<String, BTreeSet<String>> {
    let modules = modules(src);
    let known: BTreeSet<String> = modules.keys().cloned().collect();
    modules
        .iter()
        .map(|(name, source)| (name.clone(), imports(name, source, &known)))
        .collect()
}

#[test]
fn the_import_graph_is_read() {
    assert!(graph("host/src")["families"].contains("families::matmul"));
    assert!(graph("crates/gpu-host/src")["gpu"].contains("backend"));
    assert!(graph("gpu/src")["blur::separable"].contains("blur::window"));
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    for src in CRATES {
        no_circle(src, &graph(src));
    }
}

fn no_circle(src: &str, graph: &BTreeMap<String, BTreeSet<String>>) {
    for start in graph.keys() {
        // Every module reachable from `start`; a circle leads back to it.
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&str> = graph[start].iter().map(String::as_str).collect();
        while let Some(module) = stack.pop() {
            assert_ne!(
                module, *start,
                "{src}: {start} imports a module that imports it back"
            );
            if seen.insert(module) {
                stack.extend(graph[module].iter().map(String::as_str));
            }
        }
    }
}
