//! Every kernel, compiled for the host, on the CPU emulator against the CPU
//! reference: the GPU tests' shapes, then property tests over random sizes.
//! Fresh random inputs, poisoned outputs, every element checked; a barrier
//! or shared-memory bug fails the test with the emulator's diagnostic.

use locality::Emulator;
use locality::kernels::blur::{Blur, ImageShape};
use locality::kernels::gemv::{Element, Gemv, GemvShape};
use locality::kernels::matmul::{Matmul, MatmulShape};
use locality::verify::{BlurCase, Comparison, GemvCase, MatmulCase};
use locality_tests::{BLUR_CASES, GEMV_SCALARS, GEMV_SHAPES, MATMUL_SHAPES};
use proptest::prelude::*;
use rand::{SeedableRng, rngs::SmallRng};

fn check_matmul(shape: MatmulShape, seed: u64) -> Result<(), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut case = MatmulCase::new(&Emulator, shape, &mut rng).map_err(|e| e.to_string())?;
    for kernel in Matmul::ALL {
        verdict(
            kernel.entry_point(),
            &shape,
            seed,
            case.check(&Emulator, kernel),
        )?;
    }
    Ok(())
}

fn check_gemv<T: Element>(
    shape: GemvShape,
    (alpha, beta): (f64, f64),
    seed: u64,
) -> Result<(), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
    let mut case = GemvCase::<Emulator, T>::new(&Emulator, shape, alpha, beta, &mut rng)
        .map_err(|e| e.to_string())?;
    for kernel in Gemv::ALL {
        verdict(
            kernel.entry_point::<T>(),
            &shape,
            seed,
            case.check(&Emulator, kernel),
        )?;
    }
    Ok(())
}

fn check_blur(image: ImageShape, radius: u32, seed: u64) -> Result<(), String> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut case = BlurCase::new(&Emulator, image, radius, &mut rng).map_err(|e| e.to_string())?;
    for kernel in Blur::ALL {
        verdict(
            kernel.entry_point(),
            &format!("{image} r={radius}"),
            seed,
            case.check(&Emulator, kernel),
        )?;
    }
    Ok(())
}

fn verdict(
    kernel: &str,
    size: &dyn std::fmt::Display,
    seed: u64,
    outcome: locality::Result<Comparison>,
) -> Result<(), String> {
    match outcome {
        Ok(comparison) if comparison.passed() => Ok(()),
        Ok(comparison) => Err(format!(
            "{kernel} at {size}, inputs from seed {seed}: {comparison}"
        )),
        Err(error) => Err(format!("{kernel} at {size}: {error}")),
    }
}

#[test]
fn matmul_on_the_gpu_tests_shapes() {
    for (m, n, k) in MATMUL_SHAPES {
        check_matmul(MatmulShape::new(m, n, k), rand::random()).unwrap();
    }
}

#[test]
fn gemv_on_the_gpu_tests_shapes() {
    for (m, n) in GEMV_SHAPES {
        for scalars in GEMV_SCALARS {
            check_gemv::<f32>(GemvShape::new(m, n), scalars, rand::random()).unwrap();
            check_gemv::<f64>(GemvShape::new(m, n), scalars, rand::random()).unwrap();
        }
    }
}

#[test]
fn blur_on_the_gpu_tests_shapes() {
    for (width, height, channels, radius) in BLUR_CASES {
        check_blur(
            ImageShape::new(width, height, channels),
            radius,
            rand::random(),
        )
        .unwrap();
    }
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
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn matmul_kernels_agree_with_the_reference(m in size(), n in size(), k in size(), seed: u64) {
        check_matmul(MatmulShape::new(m, n, k), seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn gemv_kernels_agree_with_the_reference(m in size(), n in size(), beta in prop::sample::select(vec![0.0, 0.5]), seed: u64) {
        check_gemv::<f32>(GemvShape::new(m, n), (1.5, beta), seed).map_err(TestCaseError::fail)?;
        check_gemv::<f64>(GemvShape::new(m, n), (1.5, beta), seed).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn blur_kernels_agree_with_the_reference(
        width in size(), height in size(), channels in 1..=4usize, radius in 0..=12u32, seed: u64,
    ) {
        check_blur(ImageShape::new(width, height, channels), radius, seed).map_err(TestCaseError::fail)?;
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
