//! A standard output that cannot be written ends the program with status 2
//! and no panic: a pipe whose reader has gone quietly, a full disk with a
//! message on standard error.

use std::fs::File;
use std::process::Command;

fn locality() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_locality"));
    command.args(["--emulate", "--kernel", "matmul_naive", "--seed", "1"]);
    command
}

#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = locality().stdout(writer).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_an_error_not_a_panic() {
    let output = locality()
        .stdout(File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("error: cannot write to standard output"),
        "{stderr}"
    );
}

#[test]
fn a_readable_output_gets_the_whole_report() {
    let output = locality().output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find(|line| line.starts_with("matmul "));
    let words: Vec<&str> = line.map_or(Vec::new(), |line| line.split_whitespace().collect());
    assert_eq!(words, ["matmul", "100×75×50", "1", "of", "1"], "{stdout}");
    assert!(stdout.contains("All correct (1 run)"), "{stdout}");
}

#[cfg(unix)]
#[test]
fn an_interrupt_ends_the_run_with_130_and_says_so() {
    use std::process::Stdio;
    // Three emulated matmuls at 512³ take seconds; Ctrl-C comes during the
    // first ones, and the run stops before the next kernel.
    let child = Command::new(env!("CARGO_BIN_EXE_locality"))
        .args([
            "--emulate",
            "--kernel",
            "matmul",
            "--matmul",
            "512",
            "--seed",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.starts_with("interrupted"), "{stderr}");
    // No table: the run did not get to the end.
    assert!(!String::from_utf8_lossy(&output.stdout).contains("512×512×512"));
}
