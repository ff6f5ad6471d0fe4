//! Every bad input is a typed error with a clear message, found before any
//! GPU work: these tests need no GPU.

use clap::Parser;
use gpu::blur::{MAX_RADIUS, TILED_MAX_RADIUS};
use locality::Error;
use locality::cli::Cli;
use locality::kernels::blur::{Blur, ImageShape};
use locality::kernels::gemv::{Gemv, GemvShape};
use locality::kernels::matmul::{Matmul, MatmulShape};

fn message(error: Error) -> String {
    error.to_string()
}

#[test]
fn zero_sizes_are_rejected_by_name() {
    for (shape, name) in [((0, 4, 4), "m "), ((4, 0, 4), "n "), ((4, 4, 0), "k ")] {
        let error = MatmulShape::new(shape.0, shape.1, shape.2)
            .checked_lens()
            .unwrap_err();
        assert!(matches!(error, Error::ZeroSize { .. }), "{error:?}");
        assert!(message(error).starts_with(name));
    }
    assert!(matches!(
        GemvShape::new(0, 3).checked_lens(),
        Err(Error::ZeroSize { .. })
    ));
    assert!(matches!(
        GemvShape::new(3, 0).checked_lens(),
        Err(Error::ZeroSize { .. })
    ));
    for image in [
        ImageShape::new(0, 5, 1),
        ImageShape::new(5, 0, 1),
        ImageShape::new(5, 5, 0),
    ] {
        assert!(
            matches!(image.checked_len(), Err(Error::ZeroSize { .. })),
            "{image:?}"
        );
    }
}

#[test]
fn sizes_whose_indices_overflow_32_bits_are_rejected() {
    let error = MatmulShape::new(65_536, 65_537, 1)
        .checked_lens()
        .unwrap_err();
    assert!(matches!(error, Error::TooLarge { .. }), "{error:?}");
    assert!(message(error).contains("C (m×n)"));
    assert!(matches!(
        MatmulShape::new(1, 1, 1 << 32).checked_lens(),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        GemvShape::new(1 << 16, 1 << 16).checked_lens(),
        Err(Error::TooLarge { .. })
    ));
    assert!(matches!(
        ImageShape::new(1 << 16, 1 << 15, 2).checked_len(),
        Err(Error::TooLarge { .. })
    ));
    // The largest sizes that do fit are accepted.
    assert!(GemvShape::new(65_535, 65_537).checked_lens().is_ok());
    assert!(
        MatmulShape::new(1, 1, u32::MAX as usize)
            .checked_lens()
            .is_ok()
    );
}

#[test]
fn grids_beyond_the_hardware_limits_are_rejected() {
    // 2²¹ rows need 131072 blocks along y; the limit is 65535.
    let error = Matmul::Naive
        .launch_config(MatmulShape::new(1 << 21, 1, 1))
        .unwrap_err();
    assert!(message(error).starts_with("grid rows"));
    let error = Blur::Naive
        .launch_config(ImageShape::new(1, 1 << 21, 1), 1)
        .unwrap_err();
    assert!(message(error).starts_with("grid rows"));
    let error = Blur::Naive
        .launch_config(ImageShape::new(1, 1, 70_000), 1)
        .unwrap_err();
    assert!(message(error).starts_with("channels"));
}

#[test]
fn a_radius_the_kernel_cannot_hold_is_rejected() {
    let image = ImageShape::new(64, 64, 1);
    let error = Blur::Tiled
        .launch_config(image, TILED_MAX_RADIUS + 1)
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::RadiusTooLarge {
                max: TILED_MAX_RADIUS,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(message(error).contains("blur_tiled"));
    assert!(matches!(
        Blur::Naive.launch_config(image, MAX_RADIUS + 1),
        Err(Error::RadiusTooLarge { .. })
    ));
    // The largest radii are accepted, the tiled one within 48 KiB of shared memory.
    assert!(Blur::Naive.launch_config(image, MAX_RADIUS).is_ok());
    let config = Blur::Tiled.launch_config(image, TILED_MAX_RADIUS).unwrap();
    assert!(config.shared_mem_bytes <= 48 * 1024);
}

#[test]
fn launch_configurations_cover_every_output() {
    let shape = MatmulShape::new(33, 17, 5);
    for kernel in Matmul::ALL {
        let config = kernel.launch_config(shape).unwrap();
        assert!(
            config.grid_dim.0 * config.block_dim.0 >= 17
                && config.grid_dim.1 * config.block_dim.1 >= 33
        );
    }
    assert_eq!(
        Matmul::Tiled32
            .launch_config(shape)
            .unwrap()
            .shared_mem_bytes,
        2 * 32 * 32 * 4
    );
    for kernel in Gemv::ALL {
        let config = kernel
            .launch_config::<f64>(GemvShape::new(1000, 3))
            .unwrap();
        assert!(config.grid_dim.0 * config.block_dim.0 >= 1000);
    }
    let config = Blur::Tiled
        .launch_config(ImageShape::new(40, 20, 3), 2)
        .unwrap();
    assert_eq!(
        (config.grid_dim, config.shared_mem_bytes),
        ((3, 2, 3), 20 * 20)
    );
}

#[test]
fn the_command_line_checks_sizes_before_looking_for_a_gpu() {
    let cli = Cli::try_parse_from(["locality", "--matmul", "0x4x4"]).unwrap();
    assert!(matches!(
        locality::cli::run(&cli),
        Err(Error::ZeroSize { .. })
    ));
    let cli =
        Cli::try_parse_from(["locality", "--kernel", "blur_tiled", "--radius", "1000"]).unwrap();
    assert!(matches!(
        locality::cli::run(&cli),
        Err(Error::RadiusTooLarge { .. })
    ));
}

#[test]
fn the_bench_command_checks_sizes_before_looking_for_a_gpu() {
    let cli = Cli::try_parse_from(["locality", "bench", "--gemv-sizes", "64,0x3"]).unwrap();
    assert!(matches!(
        locality::cli::run(&cli),
        Err(Error::ZeroSize { .. })
    ));
}

#[test]
fn the_command_line_rejects_malformed_arguments() {
    for args in [
        &["--matmul", "3x4"][..],
        &["--gemv", "ax3"],
        &["--kernel", "sgemm"],
        &["--runs", "0"],
        &["bench", "--runs", "19"],
        &["bench", "--matmul-sizes", "64,3x4"],
        &["bench", "--kernel", "sgemm"],
        &["--seed", "1", "bench"],
    ] {
        let result = Cli::try_parse_from(["locality"].into_iter().chain(args.iter().copied()));
        assert!(result.is_err(), "{args:?} was accepted");
    }
}
