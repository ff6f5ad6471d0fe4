//! A replaced file keeps its owner, group and permissions, whoever writes
//! it: root replaces it with a file given the old one's owner; an ordinary
//! user who may not give a file another owner, or may not create one in
//! its folder, overwrites it in place, as `cp` does; a file that user may
//! not write is refused before the work. Each case needs root, to make
//! files of other users and run the program as one: without it, the tests
//! say they were skipped.

mod common;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, chown};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{assert_status, folder_with_a_picture, is_png};
use tempfile::TempDir;

/// The owner of the files the tests replace, and the ordinary user (in
/// its group) who runs the program; neither needs to exist.
const OWNER: u32 = 1234;
const GROUP: u32 = 1235;
const WRITER: u32 = 1236;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("skipped: changing users needs root");
    }
    root
}

/// A folder anyone may enter and write, holding the picture and a copy of
/// the program that the ordinary user may run.
fn shared_folder() -> (TempDir, PathBuf, u64) {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
    let program = dir.join("locality");
    fs::copy(env!("CARGO_BIN_EXE_locality"), &program).unwrap();
    fs::set_permissions(&program, fs::Permissions::from_mode(0o755)).unwrap();
    (folder, program, seed)
}

/// `program` blurring `input.png` into `output` in `dir` as user `uid` of
/// group `gid`.
fn blur_as(program: &Path, dir: &Path, output: &Path, (uid, gid): (u32, u32)) -> Output {
    let mut command = Command::new(program);
    command
        .args(["blur", "--emulate", "input.png", "-o"])
        .arg(output)
        .current_dir(dir)
        .env("CUDA_VISIBLE_DEVICES", "")
        .uid(uid)
        .gid(gid);
    // A child another test forks while the copy is open for writing holds
    // it open until it runs its own program: "text file busy", briefly.
    for _ in 0..100 {
        match command.output() {
            Err(error) if error.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            output => return output.unwrap(),
        }
    }
    panic!("{} stayed busy", program.display());
}

/// A file holding "old", of `owner` and `group`, with `mode`.
fn old_file(path: &Path, (owner, group): (u32, u32), mode: u32) {
    fs::write(path, "old").unwrap();
    chown(path, Some(owner), Some(group)).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

fn assert_owned(path: &Path, (owner, group): (u32, u32), mode: u32) {
    let metadata = fs::metadata(path).unwrap();
    assert_eq!(
        (metadata.uid(), metadata.gid(), metadata.mode() & 0o7777),
        (owner, group, mode),
        "{}",
        path.display()
    );
}

/// `writer` blurring onto `old.png`, a file of `owner` with `mode`
/// holding "old", in a shared folder: the run, and the file.
fn blur_onto(owner: (u32, u32), mode: u32, writer: (u32, u32)) -> (TempDir, PathBuf, Output, u64) {
    let (folder, program, seed) = shared_folder();
    let file = folder.path().join("old.png");
    old_file(&file, owner, mode);
    let output = blur_as(&program, folder.path(), &file, writer);
    (folder, file, output, seed)
}

#[test]
fn root_replacing_a_users_file_keeps_its_owner_group_and_mode() {
    if !is_root() {
        return;
    }
    let (_folder, file, output, seed) = blur_onto((OWNER, GROUP), 0o600, (0, 0));
    assert_status(&output, 0, seed);
    assert!(is_png(&fs::read(&file).unwrap()));
    assert_owned(&file, (OWNER, GROUP), 0o600);
}

#[test]
fn a_member_of_the_files_group_writes_it_in_place_keeping_its_owner() {
    if !is_root() {
        return;
    }
    let (_folder, file, output, seed) = blur_onto((OWNER, GROUP), 0o664, (WRITER, GROUP));
    assert_status(&output, 0, seed);
    assert!(is_png(&fs::read(&file).unwrap()));
    assert_owned(&file, (OWNER, GROUP), 0o664);
}

#[test]
fn a_read_only_file_is_refused_before_the_blur() {
    if !is_root() {
        return;
    }
    let (_folder, file, output, seed) = blur_onto((WRITER, GROUP), 0o444, (WRITER, GROUP));
    assert_status(&output, 2, seed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("emulated"));
    assert_eq!(fs::read(&file).unwrap(), b"old");
}

#[test]
fn a_writable_file_in_a_folder_that_is_not_is_written_in_place_and_a_new_one_refused() {
    if !is_root() {
        return;
    }
    let (folder, program, seed) = shared_folder();
    let dir = folder.path();
    let locked = dir.join("locked");
    fs::create_dir(&locked).unwrap();
    let file = locked.join("mine.png");
    old_file(&file, (WRITER, GROUP), 0o644);
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    assert_status(&blur_as(&program, dir, &file, (WRITER, GROUP)), 0, seed);
    assert!(is_png(&fs::read(&file).unwrap()));
    assert_owned(&file, (WRITER, GROUP), 0o644);
    assert_eq!(fs::read_dir(&locked).unwrap().count(), 1);
    // A new file there cannot be made, and the error says where.
    let new = blur_as(&program, dir, &locked.join("new.png"), (WRITER, GROUP));
    assert_status(&new, 2, seed);
    let stderr = String::from_utf8_lossy(&new.stderr);
    assert!(
        stderr.contains("/locked: permission denied") && !stderr.contains(".tmp"),
        "{stderr}"
    );
}
