//! Every bad input is a typed error with a clear message, found before any
//! GPU work: these tests need no GPU.

use clap::Parser;
use gpu_host::Error as HostError;
use gpu_host::checked_launch;
use gpu_std::tensor::{Element, Swizzle, TiledMap};
use gpu_std::{Kernel, LaunchBounds};
use kernels::blur::MAX_RADIUS;
use kernels::matmul::{BLOCKED_2D, COARSE_1D, MID_TILES, SMALL_TILES, WIDE_BLOCKING};
use locality::cli::Cli;
use locality::families::blur::{Blur, BlurShape, max_channels, max_radius};
use locality::families::distributed::{Distributed, DistributedShape};
use locality::families::gemv::{Gemv, GemvShape};
use locality::families::matmul::{Matmul, MatmulShape};
use locality::families::tensor::Tensor;
use locality::families::transpose::TransposeShape;
use locality::family::{Declaration, Family, Target};
use locality::suite::WorkLimit;
use locality::{Backend, Emulator, Error};
use locality_tests::kernel;

fn message(error: impl Into<Error>) -> String {
    error.into().to_string()
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
        BlurShape::new(0, 5, 1, 1),
        BlurShape::new(5, 0, 1, 1),
        BlurShape::new(5, 5, 0, 1),
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
        BlurShape::new(1 << 16, 1 << 15, 2, 1).checked_len(),
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
    let naive = kernel::<Matmul>("matmul_naive");
    let error = Matmul::check(naive, MatmulShape::new(1 << 21, 1, 1)).unwrap_err();
    assert_eq!(
        message(error),
        "matmul_naive would need 131072 blocks along y, more than the limit of 65535"
    );
    let blur = kernel::<Blur>("blur_naive");
    let error = Blur::check(blur, BlurShape::new(1, 1 << 21, 1, 1)).unwrap_err();
    assert!(
        matches!(
            error,
            Error::Host(HostError::GridTooLarge { axis: 'y', .. })
        ),
        "{error:?}"
    );
}

/// A launch of more threads a block than the kernel's launch bounds is
/// refused before it reaches a GPU or the emulator, naming both numbers.
#[test]
fn a_block_beyond_the_launch_bounds_is_rejected() {
    let naive = kernel::<Matmul>("matmul_naive");
    let bounded = Kernel {
        bounds: LaunchBounds::new(128, None),
        ..*naive
    };
    let problem = Matmul::problem(MatmulShape::new(64, 64, 64)).unwrap();
    let error = checked_launch(&bounded, &problem).unwrap_err();
    assert_eq!(
        message(error),
        "matmul_naive would be launched with 256 threads a block, more than the 128 of its \
         launch bounds"
    );
    assert!(checked_launch(naive, &problem).is_ok());
}

/// Clusters must tile the blocks and hold 1 to 8 of them: the family says
/// so by name, and a launch contract that asks for others anyway is
/// refused before it reaches a GPU or the emulator.
#[test]
fn clusters_that_do_not_tile_the_blocks_are_rejected() {
    for (blocks, cluster) in [(6, 4), (8, 0), (16, 16)] {
        let shape = DistributedShape {
            blocks,
            cluster,
            rounds: 1,
        };
        let error = Distributed::problem(shape).unwrap_err();
        assert_eq!(
            message(error),
            format!(
                "clusters of {cluster} blocks must hold 1 to 8 blocks and divide the {blocks} \
                 blocks"
            )
        );
    }
    let neighbour = kernel::<Distributed>("sum_neighbour");
    let problem = kernels::distributed::Problem {
        blocks: 6,
        cluster: 4,
    };
    let error = checked_launch(neighbour, &problem).unwrap_err();
    assert!(
        matches!(
            error,
            HostError::ClusterShape {
                cluster: (4, 1, 1),
                ..
            }
        ),
        "{error:?}"
    );
    let fits = kernels::distributed::Problem {
        blocks: 8,
        cluster: 4,
    };
    assert!(checked_launch(neighbour, &fits).is_ok());
}

/// Data of another length than the buffer it overwrites is refused with
/// both lengths, and the buffer keeps its contents.
#[test]
fn an_overwrite_of_another_length_is_rejected() -> Result<(), HostError> {
    let emulator = Emulator::default();
    let mut buffer = emulator.upload("kept", &[1.0f32; 4])?;
    match emulator.overwrite(&[2.0f32; 3], &mut buffer) {
        Err(HostError::LengthMismatch {
            expected: 3,
            actual: 4,
            ..
        }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert_eq!(emulator.download(&buffer)?, [1.0; 4]);
    Ok(())
}

/// A tensor map's rows are whole 16-byte chunks: the family refuses
/// other widths by name, and the host refuses a map the Tensor Memory
/// Accelerator cannot copy, or of another length than its array, before
/// any GPU work.
#[test]
fn tensor_maps_the_hardware_cannot_copy_are_rejected() -> Result<(), HostError> {
    let error = Tensor::problem(TransposeShape::new(8, 10)).unwrap_err();
    assert_eq!(
        message(error),
        "cols (columns of the input) must be a multiple of 4, not 10: a tensor map's rows are \
         whole 16-byte chunks"
    );
    let map = |width, box_width, box_height, swizzle| TiledMap {
        width,
        height: 8,
        box_width,
        box_height,
        swizzle,
        element: Element::F32,
    };
    let emulator = Emulator::default();
    for (shape, why) in [
        (map(0, 4, 4, Swizzle::None), "the array has no elements"),
        (
            map(6, 4, 4, Swizzle::None),
            "a row of the array must be a multiple of 16 bytes",
        ),
        (map(8, 6, 4, Swizzle::None), "a row of the box must be"),
        (
            map(8, 4, 257, Swizzle::None),
            "each side of the box must be 1 to 256",
        ),
        (map(64, 64, 4, Swizzle::Bytes128), "128 bytes or fewer"),
    ] {
        let source = emulator.alloc::<f32>("source", shape.width as usize * 8)?;
        let error = emulator.tensor_map(source, shape).err().expect("refused");
        assert!(
            matches!(error, HostError::TensorMapShape { .. }),
            "{error:?}"
        );
        assert!(message(error).contains(why), "{shape:?}");
    }
    let bf16_map = TiledMap {
        element: Element::Bf16,
        ..map(8, 8, 8, Swizzle::None)
    };
    let error = emulator
        .tensor_map(emulator.alloc::<f32>("source", 64)?, bf16_map)
        .err()
        .expect("refused");
    assert!(message(error).contains("the map's element type must be the buffer's"));
    let error = emulator
        .tensor_map(
            emulator.alloc::<f32>("source", 40)?,
            map(8, 8, 8, Swizzle::Bytes128),
        )
        .err()
        .expect("refused");
    assert_eq!(
        message(error),
        "a tensor map's array has 40 elements, but 64 are needed"
    );
    assert!(
        emulator
            .tensor_map(
                emulator.alloc::<f32>("source", 256)?,
                map(32, 32, 8, Swizzle::Bytes128)
            )
            .is_ok()
    );
    Ok(())
}

#[test]
fn a_radius_the_kernel_cannot_hold_is_rejected() {
    let (naive, tiled) = (kernel::<Blur>("blur_naive"), kernel::<Blur>("blur_tiled"));
    let tiled_max = max_radius(tiled, 1);
    assert!((1..MAX_RADIUS).contains(&tiled_max), "{tiled_max}");
    let image = |radius| BlurShape::new(64, 64, 1, radius);
    let error = Blur::check(tiled, image(tiled_max + 1)).unwrap_err();
    assert!(
        matches!(error, Error::RadiusTooLarge { max, .. } if max == tiled_max),
        "{error:?}"
    );
    assert!(message(error).contains("blur_tiled"));
    assert_eq!(max_radius(naive, 1), MAX_RADIUS);
    assert!(matches!(
        Blur::check(naive, image(MAX_RADIUS + 1)),
        Err(Error::RadiusTooLarge { .. })
    ));
    // The largest radii are accepted, the tiled one within 48 KiB of shared memory.
    assert!(Blur::check(naive, image(MAX_RADIUS)).is_ok());
    let problem = Blur::problem(image(tiled_max)).unwrap();
    let launch = checked_launch(tiled, &problem).unwrap();
    assert!(launch.shared_bytes <= 48 * 1024);
}

#[test]
fn more_channels_than_a_kernel_blurs_are_rejected_by_name() {
    // The specialised kernel is compiled for 1 to 4, a separable stretch
    // holds at most 256, the naive kernel's grid 65535 layers.
    let cases = [
        ("blur_specialised", 4),
        ("blur_separable", 256),
        ("blur_naive", 65535),
    ];
    for (name, most) in cases {
        let kernel = kernel::<Blur>(name);
        assert_eq!(max_channels(kernel), most, "{name}");
        assert!(Blur::check(kernel, BlurShape::new(8, 8, most as usize, 0)).is_ok());
        let error = Blur::check(kernel, BlurShape::new(8, 8, most as usize + 1, 0)).unwrap_err();
        assert!(
            matches!(error, Error::TooManyChannels { max, .. } if max == most),
            "{error:?}"
        );
        assert!(
            message(error).contains(&format!("{name} blurs images of at most {most} channels"))
        );
    }
}

#[test]
fn launch_contracts_cover_every_output() {
    let problem = Matmul::problem(MatmulShape::new(333, 170, 5)).unwrap();
    for kernel in Matmul::KERNELS {
        let launch = (kernel.launch)(&problem);
        // Blocks of a register-blocked kernel each cover a tile of C; the
        // others, one element a thread.
        let covered = match kernel.name {
            "matmul_coarse_1d" => (COARSE_1D.cols, COARSE_1D.rows),
            "matmul_naive" | "matmul_tiled_16" | "matmul_tiled_32" => {
                (launch.block.0, launch.block.1)
            }
            "matmul_wide" | "matmul_rasterised" => (WIDE_BLOCKING.cols, WIDE_BLOCKING.rows),
            "matmul_mid_tiles" => (MID_TILES.cols, MID_TILES.rows),
            "matmul_small_tiles" | "matmul_split_k" => (SMALL_TILES.cols, SMALL_TILES.rows),
            _ => (BLOCKED_2D.cols, BLOCKED_2D.rows),
        };
        let (cols, rows) = (launch.grid.0 * covered.0, launch.grid.1 * covered.1);
        assert!(cols >= 170 && cols < 170 + covered.0, "{}", kernel.name);
        assert!(rows >= 333 && rows < 333 + covered.1, "{}", kernel.name);
    }
    assert_eq!(
        (kernel::<Matmul>("matmul_tiled_32").launch)(&problem).shared_bytes,
        2 * 32 * 32 * 4
    );
    let problem = Gemv::<f64>::problem(GemvShape::new(1000, 3)).unwrap();
    for kernel in Gemv::<f64>::KERNELS {
        let launch = (kernel.launch)(&problem);
        assert!(launch.grid.0 * launch.block.0 >= 1000);
    }
    let problem = Blur::problem(BlurShape::new(40, 20, 3, 2)).unwrap();
    let launch = (kernel::<Blur>("blur_tiled").launch)(&problem);
    assert_eq!((launch.grid, launch.shared_bytes), ((3, 2, 3), 20 * 20));
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
fn the_bench_command_reads_an_earlier_run_s_ceilings_before_looking_for_a_gpu() {
    let folder = tempfile::tempdir().unwrap();
    let run = |ceilings: &std::path::Path| {
        let cli = Cli::try_parse_from(
            ["locality", "bench", "--ceilings"]
                .map(std::ffi::OsStr::new)
                .into_iter()
                .chain([ceilings.as_os_str()]),
        )
        .unwrap();
        locality::cli::run(&cli).unwrap_err()
    };
    let absent = folder.path().join("absent.json");
    let error = run(&absent);
    assert!(matches!(error, Error::Read { .. }), "{error:?}");
    assert!(message(error).contains("absent.json"));
    let not_a_run = folder.path().join("lessons.json");
    std::fs::write(&not_a_run, "{\"lessons\": []}").unwrap();
    let error = run(&not_a_run);
    assert!(matches!(error, Error::NotABenchRun { .. }), "{error:?}");
    assert!(message(error).contains("is not a bench run's JSON"));
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
        &["--emulate", "--device", "1"],
        &["--runs", "1001"],
        &["--traffic"],
        &["--runs", "4294967295"],
        &["bench", "--runs", "1001"],
    ] {
        let result = Cli::try_parse_from(["locality"].into_iter().chain(args.iter().copied()));
        assert!(result.is_err(), "{args:?} was accepted");
    }
}

#[test]
fn every_gemv_kernel_names_the_layout_of_a_it_reads() {
    // The gemv family stores A for each kernel in the layout its name says.
    let f32_names = Gemv::<f32>::KERNELS.iter().map(|kernel| kernel.name);
    let f64_names = Gemv::<f64>::KERNELS.iter().map(|kernel| kernel.name);
    for name in f32_names.chain(f64_names) {
        assert!(
            name.starts_with("gemv_row_major") || name.starts_with("gemv_col_major"),
            "{name} does not say how A is stored"
        );
    }
}

/// Runs the command line `args`, which must stop at its `dimension`
/// being more than the grid covers, `max` at most; the error.
fn past_the_grid(args: &[&str], dimension: &str, max: usize) -> Error {
    let cli = Cli::try_parse_from(args).unwrap();
    let error = locality::cli::run(&cli).unwrap_err();
    assert!(
        matches!(
            error,
            Error::DimensionTooLarge { dimension: named, max: largest, .. }
                if named == dimension && largest == max
        ),
        "{error:?}"
    );
    error
}

#[test]
fn a_grid_too_large_names_the_largest_size_that_fits() {
    // 16 rows per block and at most 65535 blocks along y: 1048560 rows.
    let error = past_the_grid(&["locality", "--matmul", "1048576x1x1"], "m", 1_048_560);
    assert!(message(error).ends_with("; m is at most 1048560"));
    let cli = Cli::try_parse_from(["locality", "--matmul", "1048560x1x1"]).unwrap();
    cli.plan(Target::Gpu).unwrap();
}

#[test]
fn transpose_sizes_are_rejected_by_name_and_by_grid() {
    for (shape, name) in [((0, 4), "rows "), ((4, 0), "cols ")] {
        let error = TransposeShape::new(shape.0, shape.1)
            .checked_len()
            .unwrap_err();
        assert!(matches!(error, Error::ZeroSize { .. }), "{error:?}");
        assert!(message(error).starts_with(name));
    }
    let error = TransposeShape::new(65_536, 65_536)
        .checked_len()
        .unwrap_err();
    assert!(message(error).contains("the matrix (rows×cols)"));
    // A single column's last tile reaches 31 rows past its end: the rows,
    // rounded up to whole tiles, must fit in u32 too.
    let tallest = u32::MAX as usize - 31;
    assert_eq!(
        TransposeShape::new(tallest, 1).checked_len().unwrap(),
        tallest
    );
    let error = TransposeShape::new(tallest + 1, 1)
        .checked_len()
        .unwrap_err();
    assert!(matches!(error, Error::TooLarge { .. }), "{error:?}");
    assert!(message(error).contains("rounded up to whole 32-row tiles"));
    // 32 columns a tile and at most 65535 tiles along y: 2097120 columns.
    past_the_grid(&["locality", "--transpose", "1x2097121"], "cols", 2_097_120);
}

#[test]
fn the_emulator_running_out_of_memory_says_host_memory() {
    let error = Emulator::default()
        .alloc::<f64>("A", usize::MAX / 8)
        .unwrap_err();
    assert!(
        matches!(error, HostError::OutOfHostMemory { what: "A", .. }),
        "{error:?}"
    );
    assert!(message(error).starts_with("out of host memory"));
}

#[test]
fn work_beyond_what_the_target_can_finish_is_refused_before_it_starts() {
    for (args, limit) in [
        (&["--emulate", "--matmul", "2048"][..], WorkLimit::EMULATED),
        (
            &["--kernel", "blur_naive", "--radius", "2047"],
            WorkLimit::VERIFIED,
        ),
        (
            &["bench", "--matmul-sizes", "65535x65535x16384"],
            WorkLimit::BENCHED,
        ),
    ] {
        let cli =
            Cli::try_parse_from(["locality"].into_iter().chain(args.iter().copied())).unwrap();
        let error = locality::cli::run(&cli).unwrap_err();
        assert!(
            matches!(&error, Error::TooMuchWork { limit: l, .. } if *l == limit.ops),
            "{args:?}: {error:?}"
        );
        assert!(message(error).contains(limit.because), "{args:?}");
    }
}

#[test]
fn inputs_larger_than_the_free_host_memory_are_refused_before_they_are_drawn() {
    // 16384² f64: A alone is 2 GiB, twice over with the emulator's copy.
    let cli = Cli::try_parse_from([
        "locality",
        "--kernel",
        "gemv_row_major_f64",
        "--gemv",
        "16384",
    ])
    .unwrap();
    let plan = cli.plan(Target::Gpu).unwrap();
    let error = plan.check_host_memory(1 << 30).unwrap_err();
    assert!(
        matches!(
            &error,
            Error::NotEnoughHostMemory { bytes, available: 1_073_741_824, .. } if *bytes > 4 << 30
        ),
        "{error:?}"
    );
    assert!(message(error).starts_with("gemv at 16384×16384 needs"));
    plan.check_host_memory(1 << 40).unwrap();
}

#[test]
fn a_persisting_window_is_checked_as_the_gpu_checks_it() {
    let emulator = Emulator::default();
    let limits = emulator.persisting_l2().unwrap().unwrap();
    let reused = emulator.alloc::<f32>("reused", 1 << 20).unwrap();
    for carve_out in [0, limits.max_carve_out + 1] {
        let error = emulator.persist(&reused, carve_out).map(drop).unwrap_err();
        assert!(
            matches!(error, HostError::CarveOut { bytes, limit } if bytes == carve_out && limit == limits.max_carve_out),
            "{error:?}"
        );
    }
    let huge = emulator.alloc::<u8>("huge", limits.max_window + 1).unwrap();
    let error = emulator.persist(&huge, 1 << 20).map(drop).unwrap_err();
    assert!(message(error).starts_with(&format!(
        "an access-policy window of {} bytes",
        limits.max_window + 1
    )));
    let window = emulator.persist(&reused, 1 << 20).unwrap();
    assert_eq!(window.hit_ratio, 0.25, "1 MiB of a 4 MiB set");
    let error = emulator.persist(&reused, 1 << 20).map(drop).unwrap_err();
    assert!(matches!(error, HostError::WindowInUse), "{error:?}");
    drop(window);
    assert_eq!(emulator.persist(&reused, 8 << 20).unwrap().hit_ratio, 1.0);
}
