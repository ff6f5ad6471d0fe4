//! NPP's box filter, the blurs' baseline, against the CPU blur.

use libtest_mimic::Trial;
use locality::Backend;
use locality::families::blur::{Blur, BlurShape};
use locality::family::{CpuOutput, Family};
use locality::npp::Npp;
use locality_tests::quiet_seed;
use rand::{SeedableRng, rngs::SmallRng};

use crate::devices::{failed, gpu};

/// NPP's box filter, the blurs' baseline, called as the bench calls it:
/// away from the border, where NPP's replicated edge and our clipped
/// window see the same pixels, it agrees with the CPU blur to within one
/// (its rounding is its own), at 1, 3 and 4 channels.
pub fn npp_trial() -> Trial {
    Trial::test(
        "NPP's box filter agrees with the CPU blur away from the border",
        || {
            let gpu = gpu()?;
            let npp = Npp::open(gpu).map_err(failed)?;
            let seed = quiet_seed();
            for (width, height, channels, radius) in
                [(61, 37, 3, 2), (64, 40, 1, 1), (45, 30, 4, 5)]
            {
                let shape = BlurShape::new(width, height, channels, radius);
                let image =
                    Blur::inputs(shape, &mut SmallRng::seed_from_u64(seed)).map_err(failed)?;
                let input = gpu.upload("the image", &image).map_err(failed)?;
                let mut output = gpu
                    .alloc::<u8>("NPP's output", image.len())
                    .map_err(failed)?;
                gpu.poison(&mut output).map_err(failed)?;
                npp.box_filter(&input, &mut output, (width, height, channels), radius)
                    .map_err(failed)?;
                let got = gpu.download(&output).map_err(failed)?;
                let CpuOutput::U8(want) = Blur::cpu(shape, &image) else {
                    return Err("the CPU blur's output is not bytes".into());
                };
                let r = radius as usize;
                for y in r..height - r {
                    for sample in r * channels..(width - r) * channels {
                        let at = y * width * channels + sample;
                        if got[at].abs_diff(want[at]) > 1 {
                            return Err(format!(
                                "{shape:?}, seed {seed}: sample {sample} of row {y} is {} from NPP, {} from the CPU",
                                got[at], want[at]
                            )
                            .into());
                        }
                    }
                }
            }
            Ok(())
        },
    )
}
