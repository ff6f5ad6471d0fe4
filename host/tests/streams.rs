//! `locality blur` with its standard streams wired any way a shell can
//! wire them: `/dev/fd/N` of a pipe as the output (`/dev/stdout` is in
//! `outputs.rs`),
//! `<(…)` and a FIFO as the input, a reader of the messages that
//! goes away, and a closed standard output.

mod common;

use std::fs;
use std::process::Command;

use common::{assert_status, folder_with_a_picture, is_png, locality, mkfifo};

/// `script` run by bash in `dir`, with `$0` the program.
fn bash(dir: &std::path::Path, script: &str) -> Command {
    let mut command = Command::new("bash");
    command
        .args(["-c", script, env!("CARGO_BIN_EXE_locality")])
        .current_dir(dir)
        .env("CUDA_VISIBLE_DEVICES", "");
    command
}

#[test]
fn a_descriptor_of_a_pipe_is_written_as_a_stream() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    // What `-o >(…)` names: /dev/fd/N of a pipe.
    let output = bash(
        dir,
        r#"exec 3>&1 1>/dev/null; exec "$0" blur --emulate input.png -o /dev/fd/3"#,
    )
    .output()
    .unwrap();
    assert_status(&output, 0, seed);
    let blurred = image::load_from_memory(&output.stdout).unwrap();
    assert_eq!((blurred.width(), blurred.height()), (40, 30));
}

#[test]
fn a_substitution_and_a_fifo_are_read_like_files() {
    // `/dev/stdin` is in `outputs.rs`, beside `-`.
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let picture = fs::read(dir.join("input.png")).unwrap();
    let output = bash(
        dir,
        r#"exec "$0" blur --emulate <(cat input.png) -o from-substitution.png"#,
    )
    .output()
    .unwrap();
    assert_status(&output, 0, seed);
    assert!(is_png(
        &fs::read(dir.join("from-substitution.png")).unwrap()
    ));

    let fifo = dir.join("fifo.png");
    mkfifo(&fifo);
    let writer = std::thread::spawn(move || fs::write(fifo, picture).unwrap());
    let output = locality(dir)
        .args(["blur", "--emulate", "fifo.png", "-o", "from-fifo.png"])
        .output()
        .unwrap();
    writer.join().unwrap();
    assert_status(&output, 0, seed);
    assert!(is_png(&fs::read(dir.join("from-fifo.png")).unwrap()));
}

#[test]
fn a_reader_of_the_messages_that_goes_away_does_not_stop_the_blur() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    // `locality blur … | head -0`: the reader is gone before the first line.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let output = locality(dir)
        .args(["blur", "--emulate", "input.png", "-o", "out.png"])
        .stdout(writer)
        .output()
        .unwrap();
    assert_status(&output, 0, seed);
    assert!(is_png(&fs::read(dir.join("out.png")).unwrap()));
}

#[test]
fn a_closed_standard_output_is_an_error_before_the_blur() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let output = bash(dir, r#"exec "$0" blur --emulate input.png -o - >&-"#)
        .output()
        .unwrap();
    assert_status(&output, 2, seed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot write -: standard output is closed"),
        "{stderr}"
    );
    assert!(!stderr.contains("emulated"), "{stderr}");
}
