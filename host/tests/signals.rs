//! A run that is cancelled writes nothing: Ctrl-C, SIGTERM (`kill`,
//! `timeout`) and SIGHUP (a closed terminal) each stop `locality blur`
//! while it works, leave the file it would have replaced as it was, remove
//! its temporary file, and end with the status a shell gives that signal.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{folder_with_a_picture, locality, names_in, wait_for_a_temporary_file};

/// The built-in chart at a size the emulator takes a minute over.
const LONG_BLUR: [&str; 6] = ["blur", "--emulate", "--size", "3000x3000", "-o", "out.png"];

/// Starts a long blur onto `out.png` (which holds "old"), sends it
/// `signal` once it is at work, and checks what it left: the status
/// `code`, `said` on standard error, the old file, no temporary file.
fn stop_a_blur_with(signal: &str, code: i32, said: &str) {
    let (folder, _) = folder_with_a_picture();
    let dir = folder.path();
    fs::write(dir.join("out.png"), "old").unwrap();
    let child = locality(dir)
        .args(LONG_BLUR)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_a_temporary_file(dir);
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "SIG{signal}: {stderr}");
    assert!(stderr.contains(said), "SIG{signal}: {stderr}");
    assert_left_as_it_was(dir);
}

fn assert_left_as_it_was(dir: &Path) {
    assert_eq!(names_in(dir), ["input.png", "out.png"]);
    assert_eq!(fs::read(dir.join("out.png")).unwrap(), b"old");
}

#[test]
fn one_interrupt_stops_a_blur_and_writes_nothing() {
    stop_a_blur_with("INT", 130, "interrupted: no output was written");
}

#[test]
fn a_terminate_signal_stops_a_blur_and_writes_nothing() {
    stop_a_blur_with("TERM", 143, "terminated: no output was written");
}

#[test]
fn a_closed_terminal_stops_a_blur_and_writes_nothing() {
    stop_a_blur_with("HUP", 129, "hung up: no output was written");
}

#[test]
fn a_timeout_stops_a_blur_and_writes_nothing() {
    let (folder, _) = folder_with_a_picture();
    let dir = folder.path();
    fs::write(dir.join("out.png"), "old").unwrap();
    let status = Command::new("timeout")
        .arg("3")
        .arg(env!("CARGO_BIN_EXE_locality"))
        .args(LONG_BLUR)
        .current_dir(dir)
        .env("CUDA_VISIBLE_DEVICES", "")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(124));
    assert_left_as_it_was(dir);
}
