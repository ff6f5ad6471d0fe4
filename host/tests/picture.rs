//! `locality blur` on pictures, on the emulator so that it runs anywhere:
//! the written pictures are the reference blur of their inputs, and every
//! bad input is an error with status 2 that leaves every existing file as
//! it was.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use image::{DynamicImage, ImageFormat, RgbImage, RgbaImage};
use locality::reference;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use tempfile::TempDir;

/// A folder of the test's own, removed when the test ends, passed or not.
fn folder() -> TempDir {
    TempDir::with_prefix("locality-picture-").unwrap()
}

fn blur(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_locality"))
        .arg("blur")
        .args(args)
        .current_dir(dir)
        .env("CUDA_VISIBLE_DEVICES", "")
        .output()
        .unwrap()
}

/// A random picture of `width × height` with `channels` samples per pixel,
/// from a seed the failure names.
fn random_picture(width: u32, height: u32, channels: u8) -> (DynamicImage, u64) {
    let seed = rand::random();
    let mut rng = SmallRng::seed_from_u64(seed);
    let samples: Vec<u8> = (0..width * height * u32::from(channels))
        .map(|_| rng.random())
        .collect();
    let image = match channels {
        3 => DynamicImage::ImageRgb8(RgbImage::from_raw(width, height, samples).unwrap()),
        4 => DynamicImage::ImageRgba8(RgbaImage::from_raw(width, height, samples).unwrap()),
        _ => DynamicImage::ImageLuma8(image::GrayImage::from_raw(width, height, samples).unwrap()),
    };
    (image, seed)
}

fn assert_blurred(output: &Output, input: &DynamicImage, written: &Path, radius: u32, seed: u64) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "seed {seed}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("every sample matches the CPU reference"),
        "{stdout}"
    );
    let blurred = image::open(written).unwrap();
    let (width, height) = (input.width() as usize, input.height() as usize);
    let channels = input.color().channel_count() as usize;
    let expected = reference::blur(input.as_bytes(), [width, height, channels], radius as usize);
    assert_eq!(blurred.color(), input.color());
    assert!(
        blurred.as_bytes() == expected.as_slice(),
        "seed {seed}: the written picture is not the reference blur"
    );
}

#[test]
fn without_a_picture_the_built_in_chart_is_blurred() {
    let folder = folder();
    let dir = folder.path();
    let chart = blur(
        &["--radius", "0", "--size", "96x64", "-o", "chart.png"],
        dir,
    );
    assert_eq!(
        chart.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&chart.stderr)
    );
    let output = blur(&["--size", "96x64", "--radius", "2"], dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("blurring on the CPU emulator instead"),
        "{stdout}"
    );
    let chart = image::open(dir.join("chart.png")).unwrap();
    assert_blurred(&output, &chart, &dir.join("blurred.png"), 2, 0);
}

#[test]
fn a_png_is_blurred_into_a_png_with_every_sample_the_reference() {
    let folder = folder();
    let dir = folder.path();
    for (channels, kernel) in [(1, "blur_naive"), (3, "blur_tiled"), (4, "blur_tiled")] {
        let (picture, seed) = random_picture(37, 23, channels);
        picture.save(dir.join("in.png")).unwrap();
        let output = blur(
            &["in.png", "--radius", "3", "--kernel", kernel, "--emulate"],
            dir,
        );
        assert_blurred(&output, &picture, &dir.join("in-blurred.png"), 3, seed);
    }
}

#[test]
fn a_jpeg_is_blurred_into_a_jpeg() {
    let folder = folder();
    let dir = folder.path();
    let (picture, _) = random_picture(64, 48, 3);
    picture
        .save_with_format(dir.join("photo.jpg"), ImageFormat::Jpeg)
        .unwrap();
    let output = blur(&["photo.jpg", "-o", "soft.jpg", "--emulate"], dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    // The samples were checked before the lossy encoding.
    assert!(
        stdout.contains("every sample matches the CPU reference"),
        "{stdout}"
    );
    let reader = image::ImageReader::open(dir.join("soft.jpg"))
        .unwrap()
        .with_guessed_format()
        .unwrap();
    assert_eq!(reader.format(), Some(ImageFormat::Jpeg));
    assert_eq!(reader.into_dimensions().unwrap(), (64, 48));
}

/// A PNG whose header says `width × height` RGB and holds almost nothing.
fn png_header(width: u32, height: u32) -> Vec<u8> {
    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut crc = !0u32;
        for &byte in kind.iter().chain(data) {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        let mut bytes = (data.len() as u32).to_be_bytes().to_vec();
        bytes.extend(kind);
        bytes.extend(data);
        bytes.extend((!crc).to_be_bytes());
        bytes
    }
    let mut header = width.to_be_bytes().to_vec();
    header.extend(height.to_be_bytes());
    header.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    png.extend(chunk(b"IDAT", &[0x78, 0x9c]));
    png
}

#[test]
fn bad_inputs_are_errors_that_leave_every_file_as_it_was() {
    let folder = folder();
    let dir = folder.path();
    let (picture, _) = random_picture(20, 10, 3);
    picture.save(dir.join("good.png")).unwrap();
    let good = fs::read(dir.join("good.png")).unwrap();
    fs::write(dir.join("text.png"), "not a picture\n").unwrap();
    fs::write(dir.join("truncated.png"), &good[..good.len() / 2]).unwrap();
    fs::write(dir.join("huge.png"), png_header(100_000, 100_000)).unwrap();
    fs::write(dir.join("out.png"), "an earlier result\n").unwrap();
    for (args, message) in [
        (
            &["missing.png", "-o", "out.png"][..],
            "cannot read missing.png",
        ),
        (
            &["text.png", "-o", "out.png"],
            "text.png is not a picture in a format this program reads (PNG, JPEG, BMP, TIFF, WebP or GIF)",
        ),
        (
            &["truncated.png", "-o", "out.png"],
            "cannot read truncated.png",
        ),
        (&["huge.png", "-o", "out.png"], "too large"),
        (&["good.png", "-o", "good.png"], "is the input"),
        (&["good.png", "-o", "./good.png"], "is the input"),
        (
            &["good.png", "-o", "no/such/folder/out.png"],
            "cannot write",
        ),
        (
            &["good.png", "-o", "out.png", "--radius", "5000"],
            "radius 5000 is too large",
        ),
    ] {
        let output = blur(&[args, &["--emulate"]].concat(), dir);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(message),
            "{args:?}: {stderr}"
        );
        assert_eq!(fs::read(dir.join("good.png")).unwrap(), good, "{args:?}");
        assert_eq!(
            fs::read_to_string(dir.join("out.png")).unwrap(),
            "an earlier result\n",
            "{args:?}"
        );
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "good.png",
                "huge.png",
                "out.png",
                "text.png",
                "truncated.png"
            ],
            "{args:?}"
        );
    }
}
