//! What `locality blur` reads and writes, and what it says when a format
//! cannot hold the picture: an alpha channel a format has no room for,
//! colours beyond GIF's palette, frames after an animation's first, and
//! the EXIF orientation a photo is shown in, applied so that the blurred
//! picture comes out the right way up.

mod common;

use std::fs;
use std::path::Path;
use std::process::Output;

use common::{assert_status, folder_with_a_picture, locality};
use image::codecs::gif::GifEncoder;
use image::codecs::jpeg::JpegEncoder;
use image::{
    DynamicImage, ExtendedColorType, Frame, GrayAlphaImage, ImageEncoder, RgbImage, RgbaImage,
};
use rand::{Rng, SeedableRng, rngs::SmallRng};

fn blur(dir: &Path, input: &str, output: &str) -> Output {
    locality(dir)
        .args(["blur", "--emulate", input, "-o", output])
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Random samples of a 40×30 picture with `channels`, from `seed`; the
/// alpha channel, where there is one, far from opaque.
fn samples(seed: u64, channels: usize) -> Vec<u8> {
    let mut rng = SmallRng::seed_from_u64(seed);
    (0..40 * 30 * channels).map(|_| rng.random()).collect()
}

#[test]
fn an_alpha_channel_a_format_cannot_hold_is_noted() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    RgbaImage::from_raw(40, 30, samples(seed, 4))
        .unwrap()
        .save(dir.join("rgba.png"))
        .unwrap();
    GrayAlphaImage::from_raw(40, 30, samples(seed, 2))
        .unwrap()
        .save(dir.join("gray-alpha.png"))
        .unwrap();
    for (input, output) in [
        ("rgba.png", "out.jpg"),
        ("gray-alpha.png", "out.jpg"),
        ("gray-alpha.png", "out.bmp"),
    ] {
        let run = blur(dir, input, output);
        assert_status(&run, 0, seed);
        assert!(
            stdout(&run).contains("cannot hold this picture exactly: the alpha channel is dropped"),
            "{input} into {output}: {}",
            stdout(&run)
        );
    }
    // PNG holds it: nothing to say.
    let run = blur(dir, "rgba.png", "out.png");
    assert!(!stdout(&run).contains("cannot hold"), "{}", stdout(&run));
}

#[test]
fn colours_beyond_a_gifs_palette_are_noted() {
    let (folder, seed) = folder_with_a_picture();
    let run = blur(folder.path(), "input.png", "out.gif");
    assert_status(&run, 0, seed);
    let said = stdout(&run);
    assert!(
        said.contains("Gif cannot hold this picture exactly: its ")
            && said.contains("% of the pixels change"),
        "{said}"
    );
}

#[test]
fn an_animation_is_blurred_at_its_first_frame_with_a_word() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let frames = (0..3)
        .map(|frame| Frame::new(RgbaImage::from_raw(40, 30, samples(seed + frame, 4)).unwrap()));
    GifEncoder::new(fs::File::create(dir.join("animated.gif")).unwrap())
        .encode_frames(frames)
        .unwrap();
    let run = blur(dir, "animated.gif", "out.png");
    assert_status(&run, 0, seed);
    assert!(
        stdout(&run).contains("the picture is animated (3 frames); only the first is blurred"),
        "{}",
        stdout(&run)
    );
}

/// An EXIF block (big-endian TIFF) of one entry: orientation 6, which
/// viewers show turned 90° clockwise.
const ROTATE_90: [u8; 26] = [
    b'M', b'M', 0, 42, 0, 0, 0, 8, // the header; the first directory at 8
    0, 1, // one entry
    0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, // orientation, a short, 6
    0, 0, 0, 0, // no next directory
];

#[test]
fn a_photos_exif_orientation_is_applied() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    let photo = RgbImage::from_raw(40, 30, samples(seed, 3)).unwrap();
    let mut encoder = JpegEncoder::new(fs::File::create(dir.join("photo.jpg")).unwrap());
    encoder.set_exif_metadata(ROTATE_90.to_vec()).unwrap();
    encoder
        .write_image(&photo, 40, 30, ExtendedColorType::Rgb8)
        .unwrap();
    let run = blur(dir, "photo.jpg", "upright.png");
    assert_status(&run, 0, seed);
    assert!(stdout(&run).contains("turned upright"), "{}", stdout(&run));
    let upright = image::open(dir.join("upright.png")).unwrap();
    assert_eq!((upright.width(), upright.height()), (30, 40));
}

#[test]
fn a_jpe_photo_is_written_beside_itself_as_jpg() {
    let (folder, seed) = folder_with_a_picture();
    let dir = folder.path();
    DynamicImage::ImageRgb8(RgbImage::from_raw(40, 30, samples(seed, 3)).unwrap())
        .save_with_format(dir.join("photo.jpe"), image::ImageFormat::Jpeg)
        .unwrap();
    let run = locality(dir)
        .args(["blur", "--emulate", "photo.jpe"])
        .output()
        .unwrap();
    assert_status(&run, 0, seed);
    assert!(
        stdout(&run).contains("wrote photo-blurred.jpg"),
        "{}",
        stdout(&run)
    );
    assert!(dir.join("photo-blurred.jpg").exists());
}
