//! What each blur kernel can take: the largest radius and the most channels
//! it is compiled or sized for, found by asking the launch checks rather
//! than written down, and the errors that name them.

use std::ops::RangeInclusive;

use gpu_host::backend::checked_launch;
use gpu_std::Kernel;
use kernels::blur::{Args, MAX_RADIUS, Problem};

use crate::error::{Error, Result};

use super::shape::BlurShape;

/// The largest radius `kernel` accepts for images of `channels` channels:
/// the window sum's limit, or less where its shared memory grows with the
/// radius past what a block gets, or where its halos would leave a block
/// nothing to write.
pub fn max_radius(kernel: &Kernel<Args, Problem>, channels: u32) -> u32 {
    last_fit(0..=MAX_RADIUS, |radius| fits(kernel, channels, radius))
}

/// The most channels `kernel` blurs: where a grid layer per channel runs
/// out, or past the channel counts a kernel is compiled for.
pub fn max_channels(kernel: &Kernel<Args, Problem>) -> u32 {
    last_fit(1..=u32::MAX - 1, |channels| fits(kernel, channels, 0))
}

/// Whether `kernel` can be launched on a 1×1 image of `channels` channels
/// at `radius`: the limits that do not depend on the image's size, and
/// the instances a kernel generic over them is compiled for.
fn fits(kernel: &Kernel<Args, Problem>, channels: u32, radius: u32) -> bool {
    let problem = Problem {
        width: 1,
        height: 1,
        channels,
        radius,
    };
    let instance = kernel.entry(|name| match name {
        "channels" => Some(channels),
        "radius" => Some(radius),
        _ => None,
    });
    checked_launch(kernel, &problem).is_ok() && instance.is_some()
}

/// The last value of `range` for which `fits` holds, where it holds up to
/// some value and fails after it (what a kernel needs only grows with the
/// radius and the channels); where it fails at once, the one before the
/// range, or 0.
fn last_fit(range: RangeInclusive<u32>, fits: impl Fn(u32) -> bool) -> u32 {
    let (mut fits_up_to, mut fails_from) = (*range.start(), *range.end() + 1);
    if !fits(fits_up_to) {
        return fits_up_to.saturating_sub(1);
    }
    while fails_from - fits_up_to > 1 {
        let middle = fits_up_to + (fails_from - fits_up_to) / 2;
        if fits(middle) {
            fits_up_to = middle;
        } else {
            fails_from = middle;
        }
    }
    fits_up_to
}

/// Rejects a radius `kernel` cannot take for `shape`'s channels.
pub fn check_radius(kernel: &Kernel<Args, Problem>, shape: BlurShape) -> Result<()> {
    let radius = shape.radius;
    let max = max_radius(kernel, u32::try_from(shape.channels).unwrap_or(u32::MAX));
    if radius > max {
        return Err(Error::RadiusTooLarge {
            kernel: kernel.name,
            channels: shape.channels,
            radius,
            max,
        });
    }
    Ok(())
}

/// Rejects more channels than `kernel` blurs.
pub fn check_channels(kernel: &Kernel<Args, Problem>, shape: BlurShape) -> Result<()> {
    let max = max_channels(kernel);
    if shape.channels > max as usize {
        return Err(Error::TooManyChannels {
            kernel: kernel.name,
            channels: shape.channels,
            max,
        });
    }
    Ok(())
}
