//! Every kernel, compiled for the host, on the CPU emulator against the CPU
//! reference: every family's test shapes, then property tests over random
//! sizes. Fresh random inputs, poisoned outputs, every element checked; a
//! barrier, shared- or global-memory bug fails the test with the emulator's
//! diagnostic.

use gpu_std::Kernel;
use kernels::blur::BAND_ROWS;
use kernels::{gemv, intensity, l2, readonly, texture};
use locality::Emulator;
use locality::families::access::{Access, AccessShape};
use locality::families::banks::{Banks, BanksShape};
use locality::families::blur::{Blur, BlurShape, max_radius};
use locality::families::caches::{Caches, CachesShape};
use locality::families::constant::{Constant, ConstantShape};
use locality::families::gemv::{Gemv, GemvShape};
use locality::families::intensity::{Intensity, IntensityShape};
use locality::families::l2::{L2, L2Shape};
use locality::families::matmul::{Matmul, MatmulShape};
use locality::families::matmul_bf16::MatmulBf16;
use locality::families::readonly::{ReadOnly, ReadOnlyShape};
use locality::families::registers::{Registers, RegistersShape};
use locality::families::tensor::Tensor;
use locality::families::texture::{Modes, TextureFamily, TextureShape};
use locality::families::transpose::{Transpose, TransposeShape};
use locality::families::width::{Width, WidthShape};
use locality::family::{Declaration, Family};
use locality_tests::{check_every_family, check_family, check_kernel, proptest_config, seed};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

#[test]
fn every_kernel_on_its_familys_test_shapes() {
    let seed = seed();
    check_every_family(&Emulator::from_seed(seed), seed).unwrap();
}

#[test]
fn a_kernel_reads_and_writes_buffers_of_every_placement() {
    let seed = seed();
    locality_tests::placements::check_placements(&Emulator::from_seed(seed), seed).unwrap();
}

#[test]
fn two_emulated_gpus_sum_and_chase_through_each_others_memory() {
    let seed = seed();
    let first = Emulator::from_seed(seed);
    let second = first.on_device(1).unwrap();
    locality::peers::check_peers([&first, &second], seed).unwrap();
}

/// Sizes that stress the bounds: 1, primes, one off the tile and block
/// widths, and anything up to a few tiles.
fn size() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(1),
        prop::sample::select(vec![2, 3, 5, 7, 13, 15, 17, 31, 33, 37, 63, 65, 127, 129]),
        1..=100usize,
    ]
}

/// Sizes from just past `block` to about two and a half of it: two or
/// three blocks.
fn blocks_of(block: usize) -> impl Strategy<Value = usize> {
    block + 1..=block * 5 / 2
}

/// Any sizes, or C two tiles tall (the largest tiles are 128 rows), or two
/// wide (256 columns), thin the other way and short along k, so that the
/// emulator runs them quickly.
fn matmul_shapes() -> impl Strategy<Value = MatmulShape> {
    prop_oneof![
        (size(), size(), size()),
        (blocks_of(128), 1..=40usize, 1..=24usize),
        (1..=40usize, blocks_of(256), 1..=24usize),
    ]
    .prop_map(|(m, n, k)| MatmulShape::new(m, n, k))
}

/// The tensor-core matmul's sizes: n and k multiples of 8 (its rows are
/// copied 16 bytes at a time); any m, or two or three of the largest
/// tiles (128 rows, 256 columns) along m and n with k past a slice of
/// 64, so that a pipeline's stages wrap.
fn matmul_bf16_shapes() -> impl Strategy<Value = MatmulShape> {
    let eighths = |most: usize| (1..=most).prop_map(|n| 8 * n);
    prop_oneof![
        (size(), eighths(12), eighths(12)),
        (
            blocks_of(128),
            (33..=80usize).prop_map(|n| 8 * n),
            eighths(4)
        ),
        (1..=40usize, eighths(4), (9..=40usize).prop_map(|k| 8 * k)),
    ]
    .prop_map(|(m, n, k)| MatmulShape::new(m, n, k))
}

/// Any size, or past the 256 threads a block of the one-dimensional
/// families.
fn length() -> impl Strategy<Value = usize> {
    prop_oneof![size(), blocks_of(256)]
}

fn gemv_shapes() -> impl Strategy<Value = GemvShape> {
    let rows = prop_oneof![size(), blocks_of(gemv::BLOCK as usize)];
    (rows, size(), prop::sample::select(vec![0.0, 0.5])).prop_map(|(m, n, beta)| GemvShape {
        alpha: 1.5,
        beta,
        ..GemvShape::new(m, n)
    })
}

fn access_shapes() -> impl Strategy<Value = AccessShape> {
    (length(), 0..=40usize, 0..=40usize).prop_map(|(n, stride, offset)| AccessShape {
        n,
        stride,
        offset,
    })
}

fn width_shapes() -> impl Strategy<Value = WidthShape> {
    (1..=5000usize).prop_map(|bytes| WidthShape { bytes })
}

fn constant_shapes() -> impl Strategy<Value = ConstantShape> {
    (length(), 0..=300u32).prop_map(|(n, spread)| ConstantShape { n, spread })
}

fn registers_shapes() -> impl Strategy<Value = RegistersShape> {
    (length(), any::<u32>()).prop_map(|(n, rotation)| RegistersShape { n, rotation })
}

fn banks_shapes() -> impl Strategy<Value = BanksShape> {
    (0..=70u32, 1..=3usize, 1..=50usize).prop_map(|(stride, blocks, rounds)| BanksShape {
        stride,
        blocks,
        rounds,
    })
}

fn caches_shapes() -> impl Strategy<Value = CachesShape> {
    (2..=14u32, 1..=5usize, 1..=9usize).prop_map(|(set_log2, blocks, chunks)| CachesShape {
        set: 1 << set_log2,
        blocks,
        chunks,
    })
}

fn readonly_shapes() -> impl Strategy<Value = ReadOnlyShape> {
    (length(), 0..=readonly::MAX_RADIUS).prop_map(|(n, radius)| ReadOnlyShape { n, radius })
}

/// Any sides, or past a block both ways; any angle and modes.
fn texture_shapes() -> impl Strategy<Value = TextureShape> {
    let sides = prop_oneof![
        (size(), size()),
        (
            blocks_of(texture::BLOCK_X as usize),
            blocks_of(texture::BLOCK_Y as usize)
        ),
    ];
    let modes = prop::sample::select(Modes::ALL.to_vec());
    (sides, 0..360u32, modes).prop_map(|((width, height), degrees, modes)| TextureShape {
        width,
        height,
        degrees,
        modes,
    })
}

/// Any stream, or past a block; a set of any length, shorter or longer
/// than the stream; a persisting window over it or none.
fn l2_shapes() -> impl Strategy<Value = L2Shape> {
    let n = prop_oneof![size(), blocks_of(l2::BLOCK as usize)];
    let carve_out = prop_oneof![Just(0), 1..=1usize << 20];
    (n, length(), carve_out).prop_map(|(n, m, carve_out)| L2Shape { n, m, carve_out })
}

fn intensity_shapes() -> impl Strategy<Value = IntensityShape> {
    // Four elements a thread: 1024 a block.
    let n = prop_oneof![size(), blocks_of(4 * intensity::BLOCK as usize)];
    (n, 0..=40u32).prop_map(|(n, fmas)| IntensityShape { n, fmas })
}

/// Any sizes, or images a few rows high and wide enough for two or more
/// blocks of every kernel (a block's stretch or warps take up to 1920
/// samples of a row), or a few pixels wide and two or three bands high (64
/// rows a band).
fn blur_shapes() -> impl Strategy<Value = BlurShape> {
    let sides = prop_oneof![
        (size(), size()),
        (1000..=4000usize, 1..=4usize),
        (1..=24usize, blocks_of(BAND_ROWS as usize)),
    ];
    // Half the radii small enough for every kernel, the staged blur's r ≤ 3.
    let radius = prop_oneof![0..=3u32, 0..=12u32];
    (sides, 1..=4usize, radius).prop_map(|((width, height), channels, radius)| {
        BlurShape::new(width, height, channels, radius)
    })
}

fn transpose_shapes() -> impl Strategy<Value = TransposeShape> {
    (size(), size()).prop_map(|(rows, cols)| TransposeShape::new(rows, cols))
}

/// Any rows, or past the tile's 128, and any columns a multiple of 4, as a
/// tensor map's rows must be, past the tile's 32 most often.
fn tensor_shapes() -> impl Strategy<Value = TransposeShape> {
    let rows = prop_oneof![size(), 129..=300usize];
    (rows, 1..=48usize).prop_map(|(rows, chunks)| TransposeShape::new(rows, 4 * chunks))
}

proptest! {
    #![proptest_config(proptest_config(48))]

    #[test]
    fn matmul_kernels_agree_with_the_reference(shape in matmul_shapes(), seed: u64) {
        check_family::<_, Matmul>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn tensor_core_matmul_kernels_agree_with_the_reference(shape in matmul_bf16_shapes(), seed: u64) {
        check_family::<_, MatmulBf16>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn gemv_kernels_agree_with_the_reference(shape in gemv_shapes(), seed: u64) {
        check_family::<_, Gemv<f32>>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
        check_family::<_, Gemv<f64>>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_access_copy_agrees_with_the_reference(shape in access_shapes(), seed: u64) {
        check_family::<_, Access>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_width_copies_agree_with_the_reference(shape in width_shapes(), seed: u64) {
        check_family::<_, Width>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_constant_kernels_agree_with_the_reference(shape in constant_shapes(), seed: u64) {
        check_family::<_, Constant>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_register_kernels_agree_with_the_reference(shape in registers_shapes(), seed: u64) {
        check_family::<_, Registers>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_bank_kernel_agrees_with_the_reference(shape in banks_shapes(), seed: u64) {
        check_family::<_, Banks>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_cache_kernel_agrees_with_the_reference(shape in caches_shapes(), seed: u64) {
        check_family::<_, Caches>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_stencils_agree_with_the_reference(shape in readonly_shapes(), seed: u64) {
        check_family::<_, ReadOnly>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_rotations_agree_with_the_reference(shape in texture_shapes(), seed: u64) {
        check_family::<_, TextureFamily>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_l2_kernels_agree_with_the_reference(shape in l2_shapes(), seed: u64) {
        check_family::<_, L2>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_fma_chain_agrees_with_the_reference(shape in intensity_shapes(), seed: u64) {
        check_family::<_, Intensity>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn blur_kernels_agree_with_the_reference(shape in blur_shapes(), seed: u64) {
        check_family::<_, Blur>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn transpose_kernels_agree_with_the_reference(shape in transpose_shapes(), seed: u64) {
        check_family::<_, Transpose>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn tensor_copy_transposes_agree_with_the_reference(shape in tensor_shapes(), seed: u64) {
        check_family::<_, Tensor>(&Emulator::from_seed(seed), shape, seed).map_err(TestCaseError::fail)?;
    }
}

/// The property tests' shapes cross the seams between blocks: for every
/// kernel, along each axis of its grid that has more than one block at
/// `large`, at least one case in six of 48 drawn (a fixed draw: the runs
/// draw others alike) has two blocks or more.
fn reach_two_blocks<F: Family>(shapes: impl Strategy<Value = F::Shape>, large: F::Shape) {
    let mut runner = TestRunner::deterministic();
    let drawn: Vec<F::Shape> = (0..48)
        .map(|_| shapes.new_tree(&mut runner).unwrap().current())
        .collect();
    let grid = |kernel: &Kernel<F::Args, F::Problem>, shape| {
        let launch = (kernel.launch)(&F::problem(shape).unwrap());
        [launch.grid.0, launch.grid.1, launch.grid.2]
    };
    for kernel in F::KERNELS {
        let made_for = |shape: &F::Shape| F::made_for(kernel, *shape).is_ok();
        let grids: Vec<[u32; 3]> = drawn
            .iter()
            .filter(|shape| made_for(shape))
            .map(|&shape| grid(kernel, shape))
            .collect();
        for (axis, &blocks) in grid(kernel, large).iter().enumerate() {
            let crossing = grids.iter().filter(|grid| grid[axis] >= 2).count();
            assert!(
                blocks < 2 || crossing >= 8,
                "{}: {crossing} of 48 cases have two blocks along axis {axis}",
                kernel.name
            );
        }
    }
}

#[test]
fn the_property_tests_reach_two_blocks_along_every_axis() {
    reach_two_blocks::<Matmul>(matmul_shapes(), MatmulShape::new(1000, 1000, 64));
    reach_two_blocks::<Gemv<f32>>(gemv_shapes(), GemvShape::new(1000, 1000));
    reach_two_blocks::<Gemv<f64>>(gemv_shapes(), GemvShape::new(1000, 1000));
    let access = AccessShape::from((100_000, 3, 1));
    reach_two_blocks::<Access>(access_shapes(), access);
    reach_two_blocks::<Width>(width_shapes(), WidthShape::from((1 << 20,)));
    let constant = ConstantShape::from((100_000, 7));
    reach_two_blocks::<Constant>(constant_shapes(), constant);
    let registers = RegistersShape::from((100_000, 3));
    reach_two_blocks::<Registers>(registers_shapes(), registers);
    let banks = BanksShape::from((4, 2, 3));
    reach_two_blocks::<Banks>(banks_shapes(), banks);
    let caches = CachesShape::from((1 << 10, 4, 2));
    reach_two_blocks::<Caches>(caches_shapes(), caches);
    let readonly = ReadOnlyShape::from((100_000, 4));
    reach_two_blocks::<ReadOnly>(readonly_shapes(), readonly);
    let texture = TextureShape::from((1000, 1000, 30, Modes::BorderLinear));
    reach_two_blocks::<TextureFamily>(texture_shapes(), texture);
    let l2 = L2Shape {
        n: 100_000,
        m: 1000,
        carve_out: 0,
    };
    reach_two_blocks::<L2>(l2_shapes(), l2);
    let intensity = IntensityShape::from((100_000, 3));
    reach_two_blocks::<Intensity>(intensity_shapes(), intensity);
    reach_two_blocks::<Blur>(blur_shapes(), BlurShape::new(4000, 1000, 3, 3));
    reach_two_blocks::<Transpose>(transpose_shapes(), TransposeShape::new(1000, 1000));
    reach_two_blocks::<Tensor>(tensor_shapes(), TransposeShape::new(1000, 1000));
}

/// Every blur kernel at every radius it accepts, from 0 to its maximum, for
/// every channel count, on an image wider than the separable kernels'
/// output at their largest radius, so that blocks meet between the halos.
#[test]
fn blur_kernels_agree_at_every_radius_they_accept() {
    let seed = seed();
    for kernel in Blur::KERNELS {
        for channels in 1..=4 {
            for radius in 0..=max_radius(kernel, channels) {
                let shape = BlurShape::new(23, 11, channels as usize, radius);
                let seed = seed ^ u64::from(radius << 3 | channels);
                check_kernel::<_, Blur>(&Emulator::from_seed(seed), kernel, shape, seed).unwrap();
            }
        }
    }
}

/// The separable kernels' division by the full window's count, by a
/// multiply and a shift, against a division: for every count of a window
/// up to their largest radius (and the largest count it allows), at every
/// rounded sum either side of each multiple of the count.
#[test]
fn the_reciprocal_rounds_as_a_division_does() {
    let mut counts: Vec<u32> = (1..=1017).map(|span| span * span).collect();
    counts.extend([2, 3, 5, 1 << 21, (1 << 22) - 1]);
    for count in counts {
        let reciprocal = kernels::blur::Reciprocal::new(count);
        for quotient in 0..=255u32 {
            for sum in [
                quotient * count,
                (quotient * count).saturating_sub(count / 2 + 1),
            ] {
                for sum in [
                    sum,
                    sum + 1,
                    sum + count / 2,
                    (sum + count).min(255 * count),
                ] {
                    let expected = ((sum + count / 2) / count) as u8;
                    assert_eq!(
                        reciprocal.rounded_mean(sum, count),
                        expected,
                        "{sum} / {count}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_command_line_verifies_every_kernel_on_the_emulator() {
    use clap::Parser;
    let cli = locality::cli::Cli::try_parse_from(["locality", "--emulate", "--matmul", "37x29x41"])
        .unwrap();
    assert_eq!(
        locality::cli::run(&cli).unwrap(),
        locality::cli::Verdict::Correct
    );
}

#[test]
fn the_kernel_list_needs_no_gpu() {
    use clap::Parser;
    let cli = locality::cli::Cli::try_parse_from(["locality", "--list"]).unwrap();
    assert_eq!(
        locality::cli::run(&cli).unwrap(),
        locality::cli::Verdict::Listed
    );
}

#[test]
fn the_command_line_counts_traffic_on_the_emulator() {
    use clap::Parser;
    let cli = locality::cli::Cli::try_parse_from([
        "locality",
        "--emulate",
        "--traffic",
        "--kernel",
        "gemv_col_major_f32",
        "--gemv",
        "64x32",
    ])
    .unwrap();
    assert_eq!(
        locality::cli::run(&cli).unwrap(),
        locality::cli::Verdict::Correct
    );
}

#[test]
fn every_cpu_baseline_agrees_with_the_reference() {
    use gpu_host::Runs;
    use locality::Emulator;
    use locality::case::Case;
    use locality::families::{self, Visitor};
    use locality::family::Family;
    use rand::{SeedableRng, rngs::SmallRng};
    struct Check(SmallRng);
    impl Visitor for Check {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for shape in F::test_shapes() {
                let case = Case::<Emulator, F>::new(&Emulator::default(), shape, &mut self.0)?;
                let cpu = case.cpu(Runs {
                    warmup: 0,
                    timed: 1,
                })?;
                assert!(
                    cpu.comparison.passed(),
                    "{} at {shape:?}: {}",
                    F::CPU,
                    cpu.comparison
                );
            }
            Ok(())
        }
    }
    families::visit(&mut Check(SmallRng::seed_from_u64(seed()))).unwrap();
    // The blur's running sums at the largest radius, where a window holds
    // 4095² samples.
    let shape = BlurShape::new(5, 3, 2, kernels::blur::MAX_RADIUS);
    let case = Case::<Emulator, Blur>::new(
        &Emulator::default(),
        shape,
        &mut SmallRng::seed_from_u64(seed()),
    )
    .unwrap();
    assert!(
        case.cpu(Runs {
            warmup: 0,
            timed: 1
        })
        .unwrap()
        .comparison
        .passed()
    );
}
