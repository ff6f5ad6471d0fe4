//! Without a GPU the default run says so, verifies the kernels on the
//! emulator instead and ends with status 3; a GPU the user asked for by
//! number is named as unused rather than silently ignored.

use std::process::Command;

/// The default run's output with `args` and no device visible to it,
/// whether or not this machine has a driver and a GPU, once it has ended
/// with status 3.
fn run_without_a_gpu(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_locality"))
        .args(args)
        .args(["--seed", "1"])
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(3), "{stdout}");
    stdout
}

#[test]
fn a_device_that_could_not_be_used_is_named() {
    let stdout = run_without_a_gpu(&["--device", "3", "--kernel", "gemv_row_major_f32"]);
    assert!(stdout.contains(", so GPU 3 was not used."), "{stdout}");
    assert!(stdout.contains("CPU emulator"), "{stdout}");
}

#[test]
fn without_a_gpu_the_sizes_given_for_it_give_way_to_the_emulators() {
    let stdout = run_without_a_gpu(&["--matmul", "2048", "--kernel", "matmul_naive"]);
    assert!(stdout.contains("at its own small sizes"), "{stdout}");
    let line = stdout.lines().find(|line| line.starts_with("matmul "));
    let words: Vec<&str> = line.map_or(Vec::new(), |line| line.split_whitespace().collect());
    assert_eq!(words, ["matmul", "100×75×50", "1", "of", "1"], "{stdout}");
}
