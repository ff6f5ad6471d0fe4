//! The lesson of L2 persistence: a reused set kept in a carve-out of the
//! L2 by a persisting access-policy window, against plain accesses, with
//! half the carve-out the GPU allows and with all of it.

use crate::error::Result;
use crate::families::l2::L2;
use crate::family::Declaration;

use super::l2::{MARGIN, SET_MIB, sizes_where, speedups, sweep};
use super::lab::{Criterion, Judgement, Lab, Outcome, Verdict, outcome};

/// The plain kernel without a window and with each carve-out, and what
/// each window gains or costs.
pub(super) fn persistence(lab: &mut Lab<'_>) -> Result<Outcome> {
    let Some(limits) = gpu_host::Backend::persisting_l2(lab.gpu)? else {
        return Ok(Outcome::skipped(
            "reuse_plain",
            "this GPU keeps no persisting lines in its L2 (compute capability 8.0 or newer does)",
        ));
    };
    let kernel = &L2::KERNELS[0];
    let mib = |bytes: usize| bytes as f64 / f64::from(1 << 20);
    let half = limits.max_carve_out / 2;
    let mut points = sweep(lab, kernel, 0, "no window".to_string())?;
    for carve_out in [half, limits.max_carve_out] {
        let series = format!("window, carve-out {:.2} MiB", mib(carve_out));
        points.extend(sweep(lab, kernel, carve_out, series)?);
    }
    let sizes = SET_MIB.len();
    let plain = &points[..sizes];
    let (half_speedups, most_speedups) = (
        speedups(plain, &points[sizes..2 * sizes]),
        speedups(plain, &points[2 * sizes..]),
    );
    let (finding, verdict) = judge_persistence(
        &half_speedups,
        &most_speedups,
        (mib(half), mib(limits.max_carve_out)),
    );
    Ok(outcome("reuse_plain", points, (finding, verdict)))
}

/// The finding and verdict from each window's speedup over no window at
/// each set size, for carve-outs of `mib` (half, most): shown where the
/// window of half the carve-out is [`MARGIN`] faster at some size.
fn judge_persistence(half: &[f64], most: &[f64], mib: (f64, f64)) -> (String, Judgement) {
    let shown = Criterion::any(
        half.iter()
            .map(|&speedup| Criterion::at_least(speedup, MARGIN)),
    );
    let slowest = most.iter().copied().fold(f64::INFINITY, f64::min);
    let finding = format!(
        "a persisting window over the set, against none, by set size: with a carve-out of \
         {:.2} MiB faster at {}, slower at {}; with all {:.2} MiB the GPU allows faster at {}, \
         slower at {} (down to {slowest:.2}×). {}{}",
        mib.0,
        sizes_where(half, |speedup| speedup >= MARGIN),
        sizes_where(half, |speedup| speedup < 1.0 / MARGIN),
        mib.1,
        sizes_where(most, |speedup| speedup >= MARGIN),
        sizes_where(most, |speedup| speedup < 1.0 / MARGIN),
        if shown.holds {
            "The window keeps the set's lines through the stream's passes, where plain \
             accesses let the stream push them out."
        } else {
            "On this GPU the window keeps no more of the set than plain accesses do."
        },
        if slowest < 1.0 / MARGIN {
            " The carve-out is taken from the L2 that every other access shares: at its \
             largest it costs the stream more than it saves the set."
        } else {
            ""
        }
    );
    (finding, Verdict::confirmed_if(shown, Verdict::NotShown))
}

#[cfg(test)]
mod tests {
    use super::super::l2::speedups;
    use super::super::lab::{COMMITTED_SEEDS, committed_points};
    use super::*;

    #[test]
    fn the_persistence_verdict_reads_each_window_and_set_size() {
        let half = [1.0, 1.0, 1.1, 1.25, 1.15, 1.04, 1.0, 1.0, 1.0];
        let most = [0.5, 0.5, 0.55, 0.6, 0.7, 0.8, 1.0, 1.0, 1.0];
        let (finding, verdict) = judge_persistence(&half, &most, (15.625, 31.25));
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(
            finding.contains("15.62 MiB faster at 12 MiB (1.10×), 16 MiB (1.25×), 20 MiB (1.15×), slower at none;"),
            "{finding}"
        );
        assert!(finding.contains("(down to 0.50×)"), "{finding}");
        assert!(
            finding.ends_with("more than it saves the set."),
            "{finding}"
        );
        let (finding, verdict) = judge_persistence(&[1.0; 9], &most, (15.625, 31.25));
        assert_eq!(verdict, Verdict::NotShown);
        assert!(finding.contains("faster at none,"), "{finding}");
    }

    #[test]
    fn the_committed_h200_runs_at_three_seeds_give_one_verdict() {
        // 1.11× to 1.12× at 16 MiB with half the carve-out.
        for seed in COMMITTED_SEEDS {
            let points = committed_points("persistence", seed);
            let sizes = SET_MIB.len();
            let plain = &points[..sizes];
            let half = speedups(plain, &points[sizes..2 * sizes]);
            let most = speedups(plain, &points[2 * sizes..]);
            let (finding, verdict) = judge_persistence(&half, &most, (18.75, 37.5));
            assert_eq!(verdict, Verdict::Confirmed, "seed {seed}: {finding}");
            assert!(verdict.margin > 0.04, "seed {seed}: {finding}");
        }
    }
}
