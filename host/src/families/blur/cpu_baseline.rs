//! The blur's CPU baseline: no crate does a clipped box blur, so it is
//! ours, written for speed where the reference is written for clarity.

use rayon::prelude::*;

use super::shape::BlurShape;

/// Each row's window sums by a running sum, then each output row as the
/// sum of its window's row sums, rows in parallel.
pub(super) fn blur(shape: BlurShape, input: &[u8]) -> Vec<u8> {
    let BlurShape {
        width,
        height,
        channels,
        ..
    } = shape;
    let radius = shape.radius as usize;
    let stride = width * channels;
    let clip =
        |centre: usize, len: usize| centre.saturating_sub(radius)..(centre + radius + 1).min(len);
    let mut row_sums = vec![0u32; input.len()];
    row_sums
        .par_chunks_mut(stride)
        .zip(input.par_chunks(stride))
        .for_each(|(sums, row)| {
            for channel in 0..channels {
                let sample = |x: usize| u32::from(row[x * channels + channel]);
                let mut sum: u32 = clip(0, width).map(sample).sum();
                for x in 0..width {
                    sums[x * channels + channel] = sum;
                    if x + radius + 1 < width {
                        sum += sample(x + radius + 1);
                    }
                    if x >= radius {
                        sum -= sample(x - radius);
                    }
                }
            }
        });
    let mut output = vec![0u8; input.len()];
    output
        .par_chunks_mut(stride)
        .enumerate()
        .for_each(|(y, out)| {
            let rows = clip(y, height);
            let mut sums = vec![0u32; stride];
            for source in row_sums[rows.start * stride..rows.end * stride].chunks(stride) {
                for (sum, add) in sums.iter_mut().zip(source) {
                    *sum += add;
                }
            }
            for (i, (out, &sum)) in out.iter_mut().zip(&sums).enumerate() {
                let count = (clip(i / channels, width).len() * rows.len()) as u64;
                // Round half up: ⌊sum / count + ½⌋, in u64 since 2·sum
                // may not fit u32 at the largest radius.
                *out = ((2 * u64::from(sum) + count) / (2 * count)) as u8;
            }
        });
    output
}
