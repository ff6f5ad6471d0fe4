//! Every kernel, compiled for the host, on the CPU emulator against the CPU
//! reference: every family's test shapes, then property tests over random
//! sizes. Fresh random inputs, poisoned outputs, every element checked; a
//! barrier, shared- or global-memory bug fails the test with the emulator's
//! diagnostic.

use locality::Emulator;
use locality::families::access::{Access, AccessShape};
use locality::families::banks::{Banks, BanksShape};
use locality::families::blur::{Blur, BlurShape, max_radius};
use locality::families::caches::{Caches, CachesShape};
use locality::families::constant::{Constant, ConstantShape};
use locality::families::gemv::{Gemv, GemvShape};
use locality::families::intensity::{Intensity, IntensityShape};
use locality::families::matmul::{Matmul, MatmulShape};
use locality::families::registers::{Registers, RegistersShape};
use locality::families::width::{Width, WidthShape};
use locality::family::Family;
use locality_tests::{check_every_family, check_family, check_kernel, proptest_config, seed};
use proptest::prelude::*;

#[test]
fn every_kernel_on_its_familys_test_shapes() {
    check_every_family(&Emulator, seed()).unwrap();
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

proptest! {
    #![proptest_config(proptest_config(48))]

    #[test]
    fn matmul_kernels_agree_with_the_reference(m in size(), n in size(), k in size(), seed: u64) {
        check_family::<_, Matmul>(&Emulator, MatmulShape::new(m, n, k), seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn gemv_kernels_agree_with_the_reference(m in size(), n in size(), beta in prop::sample::select(vec![0.0, 0.5]), seed: u64) {
        let shape = GemvShape { alpha: 1.5, beta, ..GemvShape::new(m, n) };
        check_family::<_, Gemv<f32>>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
        check_family::<_, Gemv<f64>>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_access_copy_agrees_with_the_reference(n in size(), stride in 0..=40usize, offset in 0..=40usize, seed: u64) {
        let shape = AccessShape { n, stride, offset };
        check_family::<_, Access>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_width_copies_agree_with_the_reference(bytes in 1..=5000usize, seed: u64) {
        check_family::<_, Width>(&Emulator, WidthShape { bytes }, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_constant_kernels_agree_with_the_reference(n in size(), spread in 0..=300u32, seed: u64) {
        let shape = ConstantShape { n, spread };
        check_family::<_, Constant>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_register_kernels_agree_with_the_reference(n in size(), rotation: u32, seed: u64) {
        let shape = RegistersShape { n, rotation };
        check_family::<_, Registers>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_bank_kernel_agrees_with_the_reference(
        stride in 0..=70u32, blocks in 1..=3usize, rounds in 1..=50usize, seed: u64,
    ) {
        let shape = BanksShape { stride, blocks, rounds };
        check_family::<_, Banks>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_cache_kernel_agrees_with_the_reference(
        set_log2 in 2..=14u32, blocks in 1..=5usize, chunks in 1..=9usize, seed: u64,
    ) {
        let shape = CachesShape { set: 1 << set_log2, blocks, chunks };
        check_family::<_, Caches>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn the_fma_chain_agrees_with_the_reference(n in size(), fmas in 0..=40u32, seed: u64) {
        let shape = IntensityShape { n, fmas };
        check_family::<_, Intensity>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn blur_kernels_agree_with_the_reference(
        width in size(), height in size(), channels in 1..=4usize, radius in 0..=12u32, seed: u64,
    ) {
        let shape = BlurShape::new(width, height, channels, radius);
        check_family::<_, Blur>(&Emulator, shape, seed).map_err(TestCaseError::fail)?;
    }
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
                check_kernel::<_, Blur>(&Emulator, kernel, shape, seed).unwrap();
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
    use locality::case::Case;
    use locality::families::{self, Visitor};
    use locality::family::Family;
    use rand::{SeedableRng, rngs::SmallRng};
    struct Check(SmallRng);
    impl Visitor for Check {
        fn visit<F: Family>(&mut self) -> locality::Result<()> {
            for shape in F::test_shapes() {
                let case = Case::<Emulator, F>::new(&Emulator, shape, &mut self.0)?;
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
    let case = Case::<Emulator, Blur>::new(&Emulator, shape, &mut SmallRng::seed_from_u64(seed()))
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
