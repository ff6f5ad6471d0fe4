//! Every kernel's doc comment says how it must be launched: its launch
//! bounds, and a `# Safety` section with its launch contract. Read from the
//! source, where a kernel is declared once, inside a `kernels!` block of
//! `gpu/src`.

use std::fs;
use std::path::Path;

/// What each kernel's doc comment must hold.
const SECTIONS: [&str; 2] = ["Launch bounds", "# Safety"];

/// Each kernel declared under `dir`: its file, name and doc comment.
fn kernels(dir: &Path) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(kernels(&path));
            continue;
        }
        let source = fs::read_to_string(&path).unwrap();
        if !source.contains("kernels! {") {
            continue;
        }
        let lines: Vec<&str> = source.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim().strip_prefix("pub unsafe fn ") else {
                continue;
            };
            let name = rest.split(['(', '<']).next().unwrap().to_string();
            // The doc comment and the attributes above the declaration, up
            // to the blank line or the end of the item before it.
            let doc: Vec<&str> = lines[..at]
                .iter()
                .rev()
                .take_while(|line| {
                    let line = line.trim();
                    line.starts_with("///")
                        || !(line.is_empty() || line.ends_with('}') || line.ends_with(';'))
                })
                .copied()
                .collect();
            found.push((path.display().to_string(), name, doc.join("\n")));
        }
    }
    found
}

#[test]
fn every_kernel_documents_its_launch_bounds_and_safety() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpu/src");
    let kernels = kernels(&root);
    // The project's families and lessons declare dozens: a scan that found
    // few has stopped reading the declarations.
    assert!(kernels.len() > 50, "only {} kernels found", kernels.len());
    let missing: Vec<String> = kernels
        .iter()
        .flat_map(|(file, name, doc)| {
            SECTIONS
                .iter()
                .filter(|section| !doc.contains(*section))
                .map(move |section| format!("{file}: {name} has no `{section}`"))
        })
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
