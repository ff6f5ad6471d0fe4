//! Reports are written whole or not at all: an existing file survives a
//! failure at any point, and no temporary file is left behind.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use locality::error::Error;
use locality::output::{self, Pending};

/// An empty folder of this test's own, holding `report.json` = "old".
fn folder_with_a_report(test: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("locality-atomic-{}-{test}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let report = dir.join("report.json");
    fs::write(&report, "old").unwrap();
    (dir, report)
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn a_write_that_fails_halfway_leaves_the_old_file() {
    let (dir, report) = folder_with_a_report("halfway");
    let pending = Pending::create(&report).unwrap();
    let result = pending.finish(|writer| {
        writer.write_all(b"{\"half\": ")?;
        Err(std::io::Error::other("the sweep failed"))
    });
    assert!(matches!(result, Err(Error::Write { path, .. }) if path == report));
    assert_eq!(fs::read_to_string(&report).unwrap(), "old");
    assert_eq!(files_in(&dir), ["report.json"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_run_stopped_before_writing_leaves_the_old_file() {
    let (dir, report) = folder_with_a_report("stopped");
    let pending = Pending::create(&report).unwrap();
    assert_eq!(fs::read_to_string(&report).unwrap(), "old");
    drop(pending);
    assert_eq!(fs::read_to_string(&report).unwrap(), "old");
    assert_eq!(files_in(&dir), ["report.json"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_finished_write_replaces_the_file_whole() {
    let (dir, report) = folder_with_a_report("finished");
    output::write(&report, b"new").unwrap();
    assert_eq!(fs::read_to_string(&report).unwrap(), "new");
    assert_eq!(files_in(&dir), ["report.json"]);
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_path_that_cannot_be_written_fails_before_any_work() {
    let (dir, _) = folder_with_a_report("unwritable");
    let inside_a_file = dir.join("report.json").join("plot.svg");
    let Err(Error::Write { path, .. }) = Pending::create(&inside_a_file) else {
        panic!("a file inside a file was created")
    };
    assert_eq!(path, inside_a_file);
    fs::remove_dir_all(dir).unwrap();
}
