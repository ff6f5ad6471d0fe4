//! Every scalar type through buffers, a scalar argument, a static shared
//! array and a constant array, and the two timers: on the emulator always,
//! on the GPU where there is one (`LOCALITY_REQUIRE_GPU=1` makes its
//! absence a failure). `LOCALITY_SEED` replays the random values.

use std::fmt::Debug;

use gpu_host::{Backend, Emulator, Gpu};
use gpu_std::{bf16, f16};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use scalars::*;

/// Runs the kernel of `$module` on `$backend` with random values `$draw`
/// makes from `$rng` and checks every output against them: a macro, as
/// each type's scalar argument is a `Param` of its own.
macro_rules! check {
    ($backend:expr, $module:ident, $rng:expr, $draw:expr) => {{
        let (backend, rng, draw) = ($backend, &mut *$rng, $draw);
        let kernel = &$module::KERNELS[0];
        let n = THREADS as usize;
        let input: Vec<_> = (0..n).map(|_| draw(&mut *rng)).collect();
        let table: Vec<_> = (0..n).map(|_| draw(&mut *rng)).collect();
        let scalar = draw(&mut *rng);
        let run = || -> gpu_host::Result<_> {
            backend.set_constant($module::CONSTANT, &table)?;
            let x = backend.upload("input", &input)?;
            let mut y = backend.alloc("output", 3 * n)?;
            let mut times = backend.alloc::<u64>("times", 2 * n)?;
            // SAFETY: the buffers have the lengths the kernel's contract
            // asks, and the constant array is set.
            unsafe { backend.launch(kernel, &(), (&x, &mut y, scalar, &mut times))? };
            Ok((backend.download(&y)?, backend.download(&times)?))
        };
        match run() {
            Ok((output, times)) => {
                let expected: Vec<_> =
                    (0..n).flat_map(|t| [input[n - 1 - t], table[t], scalar]).collect();
                compare(kernel.name, &output, &expected, &times)
            }
            Err(error) => Err(format!("{}: {error}", kernel.name)),
        }
    }};
}

/// Whether `output` is `expected` and the timers read as they should.
fn compare<T: PartialEq + Debug>(
    name: &str,
    output: &[T],
    expected: &[T],
    times: &[u64],
) -> Result<(), String> {
    if output != expected {
        return Err(format!("{name}: {output:?}, not {expected:?}"));
    }
    let (cycles, stamps): (Vec<u64>, Vec<u64>) = times.chunks(2).map(|t| (t[0], t[1])).unzip();
    let (first, last) = (stamps.iter().min().unwrap(), stamps.iter().max().unwrap());
    if cycles.contains(&0) || *first == 0 || last - first > 1_000_000_000 {
        return Err(format!("{name}: clock64 {cycles:?}, globaltimer {stamps:?}"));
    }
    Ok(())
}

/// Every type's kernel on `backend`.
fn check_every_type<B: Backend>(backend: &B) {
    let seed = std::env::var("LOCALITY_SEED")
        .map_or_else(|_| rand::random(), |value| value.parse().expect("LOCALITY_SEED is a u64"));
    println!("LOCALITY_SEED={seed} replays this test");
    let rng = &mut SmallRng::seed_from_u64(seed);
    let float = |rng: &mut SmallRng| rng.random_range(-1e4f32..1e4);
    let results = [
        check!(backend, roundtrip_i8, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_u8, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_i16, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_u16, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_f16, rng, |r: &mut SmallRng| {
            f16::from_f32(r.random_range(-1e4f32..1e4))
        }),
        check!(backend, roundtrip_bf16, rng, |r: &mut SmallRng| {
            bf16::from_f32(r.random_range(-1e4f32..1e4))
        }),
        check!(backend, roundtrip_i32, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_u32, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_f32, rng, float),
        check!(backend, roundtrip_i64, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_u64, rng, |r: &mut SmallRng| r.random()),
        check!(backend, roundtrip_f64, rng, |r: &mut SmallRng| { r.random_range(-1e300..1e300) }),
    ];
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_scalar_type_on_the_emulator() {
    check_every_type(&Emulator::default());
}

/// Run where there is a GPU (`cargo test --release -p scalars -- --ignored`):
/// without one it fails, rather than pass having checked nothing.
#[test]
#[ignore = "needs a GPU: cargo test --release -p scalars -- --ignored"]
fn every_scalar_type_on_the_gpu() {
    if let Err(reason) = gpu_host::gpu::availability() {
        panic!("no CUDA device: {reason}");
    }
    let gpu = Gpu::new(0, &gpu_host::include_ptx!("scalars")).unwrap();
    check_every_type(&gpu);
}
