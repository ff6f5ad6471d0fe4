//! What the tests of `locality blur`'s inputs and outputs share: a folder
//! of their own with a random picture in it, and the program run there on
//! the emulator.

#![allow(dead_code)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use image::RgbImage;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use tempfile::TempDir;

/// A folder of the test's own, holding a random 40×30 RGB `input.png`
/// (from a seed the failures name).
pub fn folder_with_a_picture() -> (TempDir, u64) {
    let dir = TempDir::with_prefix("locality-outputs-").unwrap();
    let seed = rand::random();
    let mut rng = SmallRng::seed_from_u64(seed);
    let samples: Vec<u8> = (0..40 * 30 * 3).map(|_| rng.random()).collect();
    RgbImage::from_raw(40, 30, samples)
        .unwrap()
        .save(dir.path().join("input.png"))
        .unwrap();
    (dir, seed)
}

/// The program, run in `dir`, with no GPU to find.
pub fn locality(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_locality"));
    command.current_dir(dir).env("CUDA_VISIBLE_DEVICES", "");
    command
}

/// `input.png` blurred on the emulator into `output`.
pub fn blur_to(dir: &Path, output: &str) -> Output {
    locality(dir)
        .args(["blur", "--emulate", "input.png", "-o", output])
        .output()
        .unwrap()
}

pub fn assert_status(output: &Output, code: i32, seed: u64) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "seed {seed}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The names in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

pub fn is_png(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x89PNG\r\n\x1a\n")
}

/// Waits until a temporary file appears in `dir`: the run has checked its
/// output and is at work.
pub fn wait_for_a_temporary_file(dir: &Path) {
    for _ in 0..400 {
        if names_in(dir).iter().any(|name| name.ends_with(".tmp")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("no temporary file appeared in {}", dir.display());
}

/// A FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}
