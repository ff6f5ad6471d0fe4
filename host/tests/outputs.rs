//! What each kind of output path becomes: reports are written whole or not
//! at all, an existing file surviving a failure at any point; and, with
//! `locality blur` on the emulator writing a small picture, a regular file
//! is replaced whole with its permissions kept, a symbolic link is written
//! through, a FIFO or device is written to and stays what it was, `-` is
//! standard output, a folder is refused, and nothing planted in the folder
//! is followed.

mod common;

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{assert_status, blur_to, folder_with_a_picture, is_png, locality, mkfifo, names_in};
use image::{DynamicImage, ImageBuffer, ImageFormat, Luma};
use locality::error::Error;
use locality::output::{self, Pending};
use tempfile::TempDir;

/// A folder of this test's own, holding `report.json` = "old".
fn folder_with_a_report() -> (TempDir, PathBuf) {
    let dir = TempDir::with_prefix("locality-outputs-").unwrap();
    let report = dir.path().join("report.json");
    fs::write(&report, "old").unwrap();
    (dir, report)
}

/// `report` holds `contents` and is alone in its folder: no temporary file
/// is left beside it.
fn assert_alone_holding(folder: &TempDir, report: &Path, contents: &str) {
    assert_eq!(fs::read_to_string(report).unwrap(), contents);
    assert_eq!(names_in(folder.path()), ["report.json"]);
}

#[test]
fn a_write_that_fails_halfway_leaves_the_old_file() {
    let (folder, report) = folder_with_a_report();
    let pending = Pending::create(&report).unwrap();
    let result = pending.finish(|writer| {
        writer.write_all(b"{\"half\": ")?;
        Err(std::io::Error::other("the sweep failed"))
    });
    assert!(matches!(result, Err(Error::Write { path, .. }) if path == report));
    assert_alone_holding(&folder, &report, "old");
}

#[test]
fn a_run_stopped_before_writing_leaves_the_old_file() {
    let (folder, report) = folder_with_a_report();
    let pending = Pending::create(&report).unwrap();
    assert_eq!(fs::read_to_string(&report).unwrap(), "old");
    drop(pending);
    assert_alone_holding(&folder, &report, "old");
}

#[test]
fn a_finished_write_replaces_the_file_whole() {
    let (folder, report) = folder_with_a_report();
    output::write(&report, b"new").unwrap();
    assert_alone_holding(&folder, &report, "new");
}

#[test]
fn a_path_that_cannot_be_written_fails_before_any_work() {
    let (_folder, report) = folder_with_a_report();
    let inside_a_file = report.join("plot.svg");
    let Err(Error::Write { path, .. }) = Pending::create(&inside_a_file) else {
        panic!("a file inside a file was created")
    };
    assert_eq!(path, inside_a_file);
}

#[test]
fn a_regular_file_is_replaced_whole_and_keeps_its_permissions() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let old = dir.join("old.png");
    fs::write(&old, "old").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
    assert_status(&blur_to(dir, "old.png"), 0, seed);
    assert!(is_png(&fs::read(&old).unwrap()));
    assert_eq!(
        fs::metadata(&old).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(names_in(dir), ["input.png", "old.png"]);
}

#[test]
fn a_symbolic_link_is_written_through_and_stays_a_link() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    fs::create_dir(dir.join("elsewhere")).unwrap();
    let target = dir.join("elsewhere/target.png");
    fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink("elsewhere/target.png", dir.join("link.png")).unwrap();
    assert_status(&blur_to(dir, "link.png"), 0, seed);
    let link = fs::symlink_metadata(dir.join("link.png")).unwrap();
    assert!(link.file_type().is_symlink());
    assert!(is_png(&fs::read(&target).unwrap()));
    assert_eq!(names_in(&dir.join("elsewhere")), ["target.png"]);
    // A link to nothing yet: the file it names is created.
    std::os::unix::fs::symlink("elsewhere/new.png", dir.join("dangling.png")).unwrap();
    assert_status(&blur_to(dir, "dangling.png"), 0, seed);
    assert!(is_png(&fs::read(dir.join("elsewhere/new.png")).unwrap()));
}

#[test]
fn a_fifo_is_written_to_its_reader_and_stays_a_fifo() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let fifo = dir.join("pipe.png");
    mkfifo(&fifo);
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        fs::File::open(reader_path)
            .unwrap()
            .read_to_end(&mut bytes)
            .unwrap();
        bytes
    });
    assert_status(&blur_to(dir, "pipe.png"), 0, seed);
    assert!(is_png(&reader.join().unwrap()));
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn devices_are_written_to_and_never_replaced() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    assert_status(&blur_to(dir, "/dev/null"), 0, seed);
    assert!(
        fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let full = blur_to(dir, "/dev/full");
    assert_status(&full, 2, seed);
    assert!(
        String::from_utf8_lossy(&full.stderr)
            .contains("cannot write /dev/full: No space left on device"),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    assert!(
        fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    // A device node of the test's own, where the test may make one (root).
    let node = dir.join("null-device");
    let made = Command::new("mknod")
        .arg(&node)
        .args(["c", "1", "3"])
        .stderr(Stdio::null())
        .status()
        .unwrap();
    if made.success() {
        assert_status(&blur_to(dir, "null-device"), 0, seed);
        assert!(
            fs::symlink_metadata(&node)
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    assert!(!names_in(dir).iter().any(|name| name.ends_with(".tmp")));
}

#[test]
fn a_folder_is_refused_before_the_blur_and_left_as_it_was() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    fs::create_dir(dir.join("out.png")).unwrap();
    let output = blur_to(dir, "out.png");
    assert_status(&output, 2, seed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot write out.png: it is a folder"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("emulated"));
    assert!(fs::metadata(dir.join("out.png")).unwrap().is_dir());
    assert_eq!(names_in(dir), ["input.png", "out.png"]);
}

#[test]
fn a_dash_is_standard_output_and_the_messages_go_to_standard_error() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    // Standard output is a pipe here, which /dev/stdout names too.
    for name in ["-", "/dev/stdout"] {
        let output = blur_to(dir, name);
        assert_status(&output, 0, seed);
        assert!(
            is_png(&output.stdout),
            "{name}: the messages went into the picture"
        );
        let blurred = image::load_from_memory(&output.stdout).unwrap();
        assert_eq!((blurred.width(), blurred.height()), (40, 30));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("every sample matches"), "{name}: {stderr}");
        assert!(stderr.contains("wrote standard output"), "{name}: {stderr}");
        assert_eq!(names_in(dir), ["input.png"]);
    }
}

#[test]
fn a_dash_reads_the_picture_from_standard_input() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    // A pipe, which /dev/stdin names too.
    for name in ["-", "/dev/stdin"] {
        let mut child = locality(dir)
            .args(["blur", "--emulate", name, "-o", "from-stdin.png"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let picture = fs::read(dir.join("input.png")).unwrap();
        child.stdin.take().unwrap().write_all(&picture).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_status(&output, 0, seed);
        let blurred = image::open(dir.join("from-stdin.png")).unwrap();
        assert_eq!((blurred.width(), blurred.height()), (40, 30), "{name}");
    }
}

#[test]
fn the_output_format_is_the_one_its_extension_names() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    for (name, format) in [
        ("out.jpg", ImageFormat::Jpeg),
        ("out.jpeg", ImageFormat::Jpeg),
        ("out.bmp", ImageFormat::Bmp),
        ("out.tif", ImageFormat::Tiff),
        ("out.webp", ImageFormat::WebP),
        ("out.gif", ImageFormat::Gif),
        ("out.png", ImageFormat::Png),
    ] {
        let output = blur_to(dir, name);
        assert_status(&output, 0, seed);
        let bytes = fs::read(dir.join(name)).unwrap();
        assert_eq!(image::guess_format(&bytes).unwrap(), format, "{name}");
        let blurred = image::load_from_memory(&bytes).unwrap();
        assert_eq!((blurred.width(), blurred.height()), (40, 30), "{name}");
    }
    let jpeg = blur_to(dir, "quality.jpg");
    assert!(String::from_utf8_lossy(&jpeg.stdout).contains("(JPEG, quality 90)"));
    let unknown = blur_to(dir, "out.xyz");
    assert_status(&unknown, 2, seed);
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("names no format"),
        "{}",
        String::from_utf8_lossy(&unknown.stderr)
    );
    assert!(!String::from_utf8_lossy(&unknown.stdout).contains("emulated"));
    assert!(!dir.join("out.xyz").exists());
}

#[test]
fn a_sixteen_bit_picture_is_reduced_to_eight_bits_with_a_word() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let deep = ImageBuffer::<Luma<u16>, _>::from_fn(20, 10, |x, y| Luma([(x * 3000 + y) as u16]));
    DynamicImage::ImageLuma16(deep)
        .save(dir.join("deep.png"))
        .unwrap();
    let output = locality(dir)
        .args(["blur", "--emulate", "deep.png", "-o", "out.png"])
        .output()
        .unwrap();
    assert_status(&output, 0, seed);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("what lies below 8 bits is lost"),
        "{stdout}"
    );
    assert_eq!(
        image::open(dir.join("out.png")).unwrap().color(),
        image::ColorType::L8
    );
}

#[test]
fn a_link_planted_under_a_temporary_name_is_never_followed() {
    let (folder, report) = folder_with_a_report();
    let victim = folder.path().join("victim.txt");
    fs::write(&victim, "another user's").unwrap();
    // The names a temporary file once had, predictable from the process.
    let planted = folder
        .path()
        .join(format!(".report.json.{}.tmp", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();
    output::write(&report, b"new").unwrap();
    assert_eq!(fs::read_to_string(&victim).unwrap(), "another user's");
    assert!(fs::symlink_metadata(&report).unwrap().is_file());
    assert_eq!(fs::read_to_string(&report).unwrap(), "new");
    assert!(fs::symlink_metadata(&planted).unwrap().is_symlink());
}

#[test]
fn a_name_of_the_longest_length_is_written() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let name = format!("{}.png", "n".repeat(251));
    assert_status(&blur_to(dir, &name), 0, seed);
    assert!(is_png(&fs::read(dir.join(&name)).unwrap()));
    assert_eq!(names_in(dir), ["input.png", name.as_str()]);
}
