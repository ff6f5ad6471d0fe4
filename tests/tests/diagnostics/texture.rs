//! Texture fetches: each addressing and filter mode the lessons use, as
//! the emulator reads them (the weights as the H100 gave them), and a
//! fetch through a texture never set or already destroyed, which a GPU
//! answers with some value and no error.

use gpu_emulator::texture::{Texture, create_texture, destroy_texture};
use gpu_emulator::{self, Diagnostic, Fault};
use gpu_std::texture::Texture2d;
use gpu_std::{AddressMode, FilterMode, Sampling};

use crate::support::one_block;

/// One thread's fetch at `(x, y)` through `texture`.
fn fetch(texture: Texture2d, x: f32, y: f32) -> Result<f32, Diagnostic> {
    let launch = one_block(1, 0);
    let fetched = std::cell::Cell::new(f32::NAN);
    // SAFETY: the texture may be dead on purpose: the emulator checks it.
    gpu_emulator::run("fetch", &launch, &|| {
        fetched.set(unsafe { texture.fetch(x, y) })
    })?;
    Ok(fetched.get())
}

/// The 2 × 2 texture 1 2 / 3 4, read with `address` and `filter`.
fn two_by_two(address: AddressMode, filter: FilterMode) -> Texture2d {
    let sampling = Sampling { address, filter };
    let texels = vec![1.0, 2.0, 3.0, 4.0];
    let texture = Texture {
        texels,
        width: 2,
        height: 2,
        sampling,
    };
    Texture2d::from_handle(create_texture(texture))
}

#[test]
fn point_fetches_read_the_texel_the_point_falls_in_clamped_or_zero_outside() {
    let clamp = two_by_two(AddressMode::Clamp, FilterMode::Point);
    let border = two_by_two(AddressMode::Border, FilterMode::Point);
    for ((x, y), clamped, bordered) in [
        ((0.0, 0.0), 1.0, 1.0),
        ((1.999, 0.5), 2.0, 2.0),
        ((1.0, 1.0), 4.0, 4.0),
        ((-5.0, 0.5), 1.0, 0.0),
        ((1.5, 7.0), 4.0, 0.0),
        ((-0.001, -0.001), 1.0, 0.0),
    ] {
        assert_eq!(fetch(clamp, x, y).unwrap(), clamped, "clamp at ({x}, {y})");
        assert_eq!(
            fetch(border, x, y).unwrap(),
            bordered,
            "border at ({x}, {y})"
        );
    }
}

/// The `width × height` texture 1 2 3 … row by row, read with `address`
/// and point filtering.
fn counting(width: u32, height: u32, address: AddressMode) -> Texture2d {
    let sampling = Sampling {
        address,
        filter: FilterMode::Point,
    };
    let texture = Texture {
        texels: (1..=width * height).map(|texel| texel as f32).collect(),
        width,
        height,
        sampling,
    };
    Texture2d::from_handle(create_texture(texture))
}

#[test]
fn a_wide_and_a_tall_texture_each_end_at_their_own_width_and_height() {
    // 3 × 2 (1 2 3 / 4 5 6) and 2 × 3 (1 2 / 3 4 / 5 6): a point past one
    // side and within the other is outside, whichever is the longer.
    let wide = counting(3, 2, AddressMode::Border);
    let tall = counting(2, 3, AddressMode::Border);
    for (texture, (x, y), expected) in [
        (wide, (2.5, 1.5), 6.0),
        (wide, (0.5, 2.5), 0.0),
        (wide, (3.5, 0.5), 0.0),
        (tall, (1.5, 2.5), 6.0),
        (tall, (2.5, 0.5), 0.0),
        (tall, (0.5, 3.5), 0.0),
    ] {
        assert_eq!(
            fetch(texture, x, y).unwrap(),
            expected,
            "border at ({x}, {y})"
        );
    }
    let wide = counting(3, 2, AddressMode::Clamp);
    let tall = counting(2, 3, AddressMode::Clamp);
    for (texture, (x, y), expected) in [
        (wide, (9.0, 9.0), 6.0),
        (wide, (2.5, -1.0), 3.0),
        (tall, (9.0, 9.0), 6.0),
        (tall, (-1.0, 2.5), 5.0),
    ] {
        assert_eq!(
            fetch(texture, x, y).unwrap(),
            expected,
            "clamp at ({x}, {y})"
        );
    }
}

#[test]
fn linear_fetches_interpolate_between_texel_centres_clamped_or_zero_outside() {
    let clamp = two_by_two(AddressMode::Clamp, FilterMode::Linear);
    let border = two_by_two(AddressMode::Border, FilterMode::Linear);
    for ((x, y), clamped, bordered) in [
        // On a texel's centre: that texel.
        ((0.5, 0.5), 1.0, 1.0),
        ((1.5, 1.5), 4.0, 4.0),
        // Between all four centres: their mean.
        ((1.0, 1.0), 2.5, 2.5),
        // Half a texel above the top row: it and the row outside.
        ((0.5, 0.0), 1.0, 0.5),
        // Half a texel right of the right column, between the rows.
        ((2.0, 1.0), 3.0, 1.5),
    ] {
        assert_eq!(fetch(clamp, x, y).unwrap(), clamped, "clamp at ({x}, {y})");
        assert_eq!(
            fetch(border, x, y).unwrap(),
            bordered,
            "border at ({x}, {y})"
        );
    }
}

#[test]
fn linear_fetches_weigh_in_256ths_rounded_halves_up() {
    let ramp = Texture {
        texels: vec![0.0, 256.0],
        width: 2,
        height: 1,
        sampling: Sampling {
            address: AddressMode::Clamp,
            filter: FilterMode::Linear,
        },
    };
    let ramp = Texture2d::from_handle(create_texture(ramp));
    // 128.5/256 of the way is 129/256 on the texture unit; 128.4/256 is 128.
    assert_eq!(fetch(ramp, 0.5 + 128.5 / 256.0, 0.5).unwrap(), 129.0);
    assert_eq!(fetch(ramp, 0.5 + 128.4 / 256.0, 0.5).unwrap(), 128.0);
    // Within half a 256th of the next centre: all of it.
    assert_eq!(fetch(ramp, 1.5 - 0.4 / 256.0, 0.5).unwrap(), 256.0);
}

#[test]
fn a_fetch_through_a_texture_never_set_is_reported() {
    let diagnostic = fetch(Texture2d::from_handle(0), 0.5, 0.5).unwrap_err();
    assert_eq!(diagnostic.fault, Fault::TextureUnset { thread: (0, 0, 0) });
    assert!(
        diagnostic.to_string().ends_with(
            "block (0, 0, 0): thread (0, 0, 0) fetched through texture handle 0, which no \
             texture has: the host never set it"
        ),
        "{diagnostic}"
    );
}

#[test]
fn a_fetch_through_a_destroyed_texture_is_reported() {
    let texture = two_by_two(AddressMode::Clamp, FilterMode::Point);
    assert_eq!(fetch(texture, 0.5, 0.5).unwrap(), 1.0);
    assert!(destroy_texture(texture.handle()));
    let diagnostic = fetch(texture, 0.5, 0.5).unwrap_err();
    let handle = texture.handle();
    assert_eq!(
        diagnostic.fault,
        Fault::TextureDestroyed {
            thread: (0, 0, 0),
            handle
        }
    );
    assert!(
        diagnostic.to_string().ends_with(&format!(
            "fetched through texture {handle}, which was destroyed before the launch"
        )),
        "{diagnostic}"
    );
    assert!(!destroy_texture(handle), "a texture is destroyed once");
}
