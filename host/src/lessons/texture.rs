//! The lesson of texture memory: one rotation of a picture, its samples
//! read through global loads and through the texture unit, at angles from
//! a row's walk to a column's.

use crate::error::Result;
use crate::families::texture::{Modes, TextureFamily, TextureShape};
use crate::family::Declaration;

use super::lab::{Criterion, Judgement, Lab, Outcome, Point, Verdict, outcome, with_speedups};

/// The angles swept, in degrees: 0° reads along the picture's rows, 90°
/// down its columns.
const ANGLES: [u32; 7] = [0, 15, 30, 45, 60, 75, 90];

/// How much faster the texture path must be to call the claim shown.
const MARGIN: f64 = 1.1;

/// Each kernel at every angle, and where the texture path wins.
pub(super) fn texture(lab: &mut Lab<'_>) -> Result<Outcome> {
    let [width, height] = [TextureFamily::SIZE.on_gpu[0], TextureFamily::SIZE.on_gpu[1]];
    let mut points = Vec::new();
    for kernel in TextureFamily::KERNELS {
        for degrees in ANGLES {
            let shape = TextureShape {
                width,
                height,
                degrees,
                modes: Modes::BorderLinear,
            };
            let y = |ms| (width * height) as f64 / ms / 1e6;
            points.push(lab.point::<TextureFamily>(kernel, shape, f64::from(degrees), y)?);
        }
    }
    let (global, texture) = points.split_at(ANGLES.len());
    let times = |points: &[Point]| points.iter().map(|point| point.ms).collect::<Vec<_>>();
    let (finding, verdict) = judge_texture(&times(global), &times(texture));
    Ok(outcome(
        "rotate_global, rotate_texture",
        points,
        (finding, verdict),
    ))
}

/// The finding and verdict from each kernel's time at every angle of
/// [`ANGLES`], in order: the claim is shown where the texture path is
/// [`MARGIN`] faster at some angle.
fn judge_texture(global_ms: &[f64], texture_ms: &[f64]) -> (String, Judgement) {
    let speedups: Vec<f64> = global_ms
        .iter()
        .zip(texture_ms)
        .map(|(global, texture)| global / texture)
        .collect();
    let angles = ANGLES.map(|degrees| format!("{degrees}°"));
    let at = |keep: fn(f64) -> bool| with_speedups(&angles, &speedups, keep);
    let shown = Criterion::any(
        speedups
            .iter()
            .map(|&speedup| Criterion::at_least(speedup, MARGIN)),
    );
    let finding = format!(
        "texture fetches over global loads, by angle: they win at {}; tie at {}; lose at {}. {}",
        at(|speedup| speedup >= MARGIN),
        at(|speedup| (1.0 / MARGIN..MARGIN).contains(&speedup)),
        at(|speedup| speedup < 1.0 / MARGIN),
        if shown.holds {
            "Where a warp's samples span many rows, the texture cache's 2-D layout serves them \
             from fewer lines than the row-major buffer does."
        } else {
            "On this GPU the L1 serves the global loads' rows as well as the texture cache \
             serves its 2-D blocks, and the texture unit's border and interpolation save no \
             time of their own."
        }
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_texture_verdict_reads_each_angle_in_order() {
        let global = [1.0, 1.0, 1.2, 1.5, 1.8, 2.0, 3.0];
        let texture = [1.2, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let (finding, verdict) = judge_texture(&global, &texture);
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(
            finding.contains("win at 30° (1.20×), 45° (1.50×)"),
            "{finding}"
        );
        assert!(finding.contains("90° (3.00×)"), "{finding}");
        assert!(finding.contains("tie at 15° (1.00×);"), "{finding}");
        assert!(finding.contains("lose at 0° (0.83×)."), "{finding}");
        let (finding, verdict) = judge_texture(&texture, &texture);
        assert_eq!(verdict, Verdict::NotShown);
        assert!(finding.contains("win at none;"), "{finding}");
    }
}
