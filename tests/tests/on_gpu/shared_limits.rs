//! Launch-sized shared memory past the 48 KiB a block gets without an
//! opt-in: the GPU launcher opts the kernel in up to the device's limit
//! and refuses, before launching, what goes past it.

use gpu_host::Error as HostError;
use gpu_std::shared;
use kernels::blur::{Problem, tiled_shared_bytes};
use libtest_mimic::{Failed, Trial};
use locality::Backend;
use locality::families::blur::Blur;
use locality_tests::{kernel, quiet_seed};
use rand::{Rng, SeedableRng, rngs::SmallRng};

use crate::devices::{failed, gpu};

/// The radius whose tile and halo take 55696 bytes (236²), past 48 KiB
/// and within every opt-in limit from Turing's 64 KiB on.
const RADIUS_PAST_48_KIB: u32 = 110;

pub fn shared_limit_trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "blur_tiled runs with more than 48 KiB of launch-sized shared memory, opted in",
            tiled_past_48_kib,
        ),
        Trial::test(
            "a launch past the device's opt-in shared memory is refused, naming both figures",
            past_the_opt_in_limit,
        ),
    ]
}

/// blur_tiled with 55696 bytes a block, against blur_naive, which needs
/// none, on the same random image.
fn tiled_past_48_kib() -> Result<(), Failed> {
    let gpu = gpu()?;
    let bytes = tiled_shared_bytes(RADIUS_PAST_48_KIB);
    assert!(u64::from(bytes) > shared::LIMIT_BYTES, "{bytes}");
    let seed = quiet_seed();
    let mut rng = SmallRng::seed_from_u64(seed);
    let (width, height) = (rng.random_range(200..400u32), rng.random_range(100..300u32));
    let image: Vec<u8> = (0..width * height).map(|_| rng.random()).collect();
    let problem = Problem {
        width,
        height,
        channels: 1,
        radius: RADIUS_PAST_48_KIB,
    };
    let input = gpu.upload("image", &image).map_err(failed)?;
    let mut outputs = Vec::new();
    for name in ["blur_naive", "blur_tiled"] {
        let kernel = kernel::<Blur>(name);
        let mut output = gpu.alloc::<u8>("blurred", image.len()).map_err(failed)?;
        let args = (&input, &mut output, width, height, 1, RADIUS_PAST_48_KIB);
        // SAFETY: both buffers hold width × height bytes, the radius is
        // within MAX_RADIUS, and the contract gives blur_tiled its bytes.
        unsafe { gpu.launch(kernel, &problem, args) }.map_err(failed)?;
        outputs.push(gpu.download(&output).map_err(failed)?);
    }
    if outputs[0] != outputs[1] {
        return Err(format!("LOCALITY_SEED={seed}: blur_tiled with {bytes} bytes differs").into());
    }
    // The family's own check keeps to the portable 48 KiB.
    let portable = gpu_host::checked_launch(kernel::<Blur>("blur_tiled"), &problem);
    match portable {
        Err(HostError::SharedTooLarge { .. }) => Ok(()),
        other => Err(format!("checked_launch let {bytes} bytes through: {other:?}").into()),
    }
}

/// blur_tiled at the smallest radius whose tile is past the device's
/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
fn past_the_opt_in_limit() -> Result<(), Failed> {
    let gpu = gpu()?;
    let limit = gpu.shared_opt_in_limit().map_err(failed)?;
    let radius = (0..)
        .find(|&radius| u64::from(tiled_shared_bytes(radius)) > limit)
        .expect("a radius past any limit");
    let bytes = tiled_shared_bytes(radius);
    let input = gpu.upload("image", &[0u8; 64]).map_err(failed)?;
    let mut output = gpu.alloc::<u8>("blurred", 64).map_err(failed)?;
    let problem = Problem {
        width: 8,
        height: 8,
        channels: 1,
        radius,
    };
    let args = (&input, &mut output, 8, 8, 1, radius);
    // SAFETY: refused before launching; the buffers are the image's.
    let result = unsafe { gpu.launch(kernel::<Blur>("blur_tiled"), &problem, args) };
    match result {
        Err(error @ HostError::SharedBeyondOptIn { .. }) => {
            let message = error.to_string();
            if message.contains(&bytes.to_string()) && message.contains(&limit.to_string()) {
                Ok(())
            } else {
                Err(format!("{message:?} names not both {bytes} and {limit}").into())
            }
        }
        other => Err(format!("{bytes} bytes past {limit}: {other:?}").into()),
    }
}
