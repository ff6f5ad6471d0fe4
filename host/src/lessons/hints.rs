//! The lesson of cache hints: a stream read and written evict-first
//! (`__ldcs`, `__stcs`) beside a reused set, against the same pass with
//! plain accesses.

use crate::error::Result;
use crate::families::l2::L2;
use crate::family::Declaration;

use super::l2::{MARGIN, sizes_where, speedups, sweep};
use super::lab::{Criterion, Judgement, Lab, Outcome, Verdict, outcome};

/// Both kernels at every set size, and where the hint keeps the set.
pub(super) fn hints(lab: &mut Lab<'_>) -> Result<Outcome> {
    let mut points = Vec::new();
    for kernel in L2::KERNELS {
        points.extend(sweep(lab, kernel, 0, kernel.name.to_string())?);
    }
    let (plain, streaming) = points.split_at(points.len() / 2);
    let (finding, verdict) = judge_hints(&speedups(plain, streaming));
    Ok(outcome(
        "reuse_plain, reuse_streaming",
        points,
        (finding, verdict),
    ))
}

/// The finding and verdict from the hinted kernel's speedup over the
/// plain one at each set size: shown where it is [`MARGIN`] faster at
/// some size.
fn judge_hints(speedups: &[f64]) -> (String, Judgement) {
    let shown = Criterion::any(
        speedups
            .iter()
            .map(|&speedup| Criterion::at_least(speedup, MARGIN)),
    );
    let finding = format!(
        "the evict-first stream over plain accesses, by reused set: faster at {}; the same at \
         {}; slower at {}. {}",
        sizes_where(speedups, |speedup| speedup >= MARGIN),
        sizes_where(speedups, |speedup| (1.0 / MARGIN..MARGIN)
            .contains(&speedup)),
        sizes_where(speedups, |speedup| speedup < 1.0 / MARGIN),
        if shown.holds {
            "Where the set fits the L2 but not beside the stream's lines, the hint gives those \
             lines up first and the set's reads hit; smaller sets stay without it, larger ones \
             fit in no way."
        } else {
            "On this GPU the hint keeps no more of the set than plain accesses do."
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
    fn the_hints_verdict_reads_each_set_size_in_order() {
        let speedups = [1.0, 1.02, 1.1, 1.2, 1.04, 0.98, 1.0, 0.8, 1.0];
        let (finding, verdict) = judge_hints(&speedups);
        assert_eq!(verdict, Verdict::Confirmed);
        assert!(
            finding.contains("faster at 12 MiB (1.10×), 16 MiB (1.20×);"),
            "{finding}"
        );
        assert!(finding.contains("slower at 48 MiB (0.80×)."), "{finding}");
        let (finding, verdict) = judge_hints(&[1.0; 9]);
        assert_eq!(verdict, Verdict::NotShown);
        assert!(finding.contains("faster at none;"), "{finding}");
    }

    #[test]
    fn the_committed_h200_runs_at_three_seeds_give_one_verdict() {
        // 1.10× to 1.11× at 16 MiB: at least 5% past the margin.
        for seed in COMMITTED_SEEDS {
            let points = committed_points("hints", seed);
            let (plain, streaming) = points.split_at(points.len() / 2);
            let (finding, verdict) = judge_hints(&speedups(plain, streaming));
            assert_eq!(verdict, Verdict::Confirmed, "seed {seed}: {finding}");
            assert!(verdict.margin > 0.04, "seed {seed}: {finding}");
        }
    }
}
