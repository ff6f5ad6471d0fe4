//! What every lesson is made of: the lab it runs in (the GPU, its
//! hardware, the runs, the inputs), its points and outcome, and the
//! verdicts.

use gpu_emulator::traffic::Traffic;
use gpu_host::Gpu;
use gpu_host::backend::Backend;
use gpu_host::emulator::CountingEmulator;
use gpu_host::timing::{Runs, Timing};
use gpu_std::Kernel;
use rand::{SeedableRng, rngs::SmallRng};
use serde::{Deserialize, Serialize};

use crate::bench::ceilings::Hardware;
use crate::case::Case;
use crate::error::{Error, Result};
use crate::family::Family;

/// What a lesson's run says of its claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The GPU shows what the claim says.
    Confirmed,
    /// The traffic is as the claim says, but the caches hide its cost.
    Hidden,
    /// The GPU does not show what the claim says.
    NotShown,
    /// A kernel computed something wrong: the lesson proves nothing.
    Wrong,
    /// This GPU lacks what the lesson needs: nothing was run.
    Skipped,
}

impl Verdict {
    /// Confirmed where `criterion` holds, `otherwise` where it does not;
    /// with its margin.
    pub fn confirmed_if(criterion: Criterion, otherwise: Self) -> Judgement {
        Judgement {
            verdict: if criterion.holds {
                Self::Confirmed
            } else {
                otherwise
            },
            margin: criterion.margin,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Self::Confirmed => "confirmed",
            Self::Hidden => "true of the traffic, hidden in the time by the caches",
            Self::NotShown => "not shown by this GPU",
            Self::Wrong => "WRONG: a kernel's output did not match the CPU reference",
            Self::Skipped => "skipped: this GPU lacks what the lesson needs",
        }
    }
}

/// What a claim's verdict rests on: a measured quantity against the
/// threshold it must pass, and by how much it passes or misses it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Criterion {
    pub holds: bool,
    /// How far the quantity lies from its threshold, as a fraction of the
    /// threshold: positive where the test holds, negative where it does
    /// not; infinite for a criterion of what the emulator counts, which
    /// no timing moves.
    pub margin: f64,
}

impl Criterion {
    /// `value` under `threshold`.
    pub fn below(value: f64, threshold: f64) -> Self {
        Self {
            holds: value < threshold,
            margin: threshold / value - 1.0,
        }
    }

    /// `value` over `threshold`.
    pub fn above(value: f64, threshold: f64) -> Self {
        Self {
            holds: value > threshold,
            margin: value / threshold - 1.0,
        }
    }

    /// `value` at `threshold` or over it.
    pub fn at_least(value: f64, threshold: f64) -> Self {
        Self {
            holds: value >= threshold,
            ..Self::above(value, threshold)
        }
    }

    /// A criterion of counts, not of times.
    pub fn exact(holds: bool) -> Self {
        Self {
            holds,
            margin: if holds {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            },
        }
    }

    /// Every one of `criteria`: the margin is the narrowest pass, or the
    /// widest miss.
    pub fn all(criteria: impl IntoIterator<Item = Criterion>) -> Self {
        criteria
            .into_iter()
            .fold(Self::exact(true), |all, one| Self {
                holds: all.holds && one.holds,
                margin: all.margin.min(one.margin),
            })
    }

    /// Any of `criteria`: the margin is the widest pass, or the narrowest
    /// miss.
    pub fn any(criteria: impl IntoIterator<Item = Criterion>) -> Self {
        criteria
            .into_iter()
            .fold(Self::exact(false), |any, one| Self {
                holds: any.holds || one.holds,
                margin: any.margin.max(one.margin),
            })
    }

    /// This criterion and `other`.
    pub fn and(self, other: Criterion) -> Self {
        Self::all([self, other])
    }
}

/// A verdict, and the margin of the criterion it rests on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// [`Criterion::margin`].
    pub margin: f64,
}

impl PartialEq<Verdict> for Judgement {
    fn eq(&self, verdict: &Verdict) -> bool {
        self.verdict == *verdict
    }
}

/// One measured point of a sweep.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Point {
    /// The kernel whose line the point is on, where a lesson sweeps
    /// several kernels; `None` for a lesson of one.
    #[serde(default)]
    pub series: Option<String>,
    /// What the point is, where its x alone does not say.
    pub label: Option<String>,
    pub x: f64,
    /// The kernel's median time.
    pub ms: f64,
    /// The lesson's quantity: what its plot shows.
    pub y: f64,
    /// What the emulator counts for the same access pattern (the lesson's
    /// `counted`), where the lesson is about it.
    pub counted: Option<f64>,
    /// Whether every element of the output matched the reference.
    pub correct: bool,
    /// The run-to-run spread of its time: the interquartile range of the
    /// timed runs over their median (0 in a report from before it was
    /// measured).
    #[serde(default)]
    pub spread: f64,
}

impl Point {
    /// The point at `x` of a kernel whose median time is `ms`: `y`, the
    /// lesson's quantity, and whether the output was correct; on no
    /// kernel's line, with no label and nothing counted until said.
    pub(super) fn new(x: f64, ms: f64, y: f64, correct: bool) -> Self {
        Self {
            series: None,
            label: None,
            x,
            ms,
            y,
            counted: None,
            correct,
            spread: 0.0,
        }
    }

    /// The point of a kernel timed as `timing`, otherwise as [`Point::new`].
    pub(super) fn timed(x: f64, timing: Timing, y: f64, correct: bool) -> Self {
        Self {
            spread: timing.spread,
            ..Self::new(x, timing.median_ms, y, correct)
        }
    }

    /// The point, on `series`'s line.
    pub(super) fn on(self, series: &str) -> Self {
        Self {
            series: Some(series.to_string()),
            ..self
        }
    }

    /// The point, labelled.
    pub(super) fn labelled(self, label: String) -> Self {
        Self {
            label: Some(label),
            ..self
        }
    }

    /// The point, with what the emulator counts.
    pub(super) fn counting(self, counted: f64) -> Self {
        Self {
            counted: Some(counted),
            ..self
        }
    }
}

/// A lesson's run: its points, what they show, and the verdict.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    pub kernel: String,
    pub points: Vec<Point>,
    /// A bound the points are set against (the roofline), where there is one.
    pub bound: Option<Vec<(f64, f64)>>,
    pub finding: String,
    pub verdict: Verdict,
    /// The margin of the criterion the verdict rests on
    /// ([`Criterion::margin`]); none for one of counts alone, or a lesson
    /// not run.
    #[serde(default)]
    pub margin: Option<f64>,
    /// The widest run-to-run spread among its points ([`Point::spread`]),
    /// which the margin must exceed for the verdict to stand from run to
    /// run.
    #[serde(default)]
    pub spread: Option<f64>,
}

impl Outcome {
    /// Whether the margin is no wider than the spread: a verdict another
    /// run may not repeat.
    pub fn within_spread(&self) -> bool {
        self.margin
            .zip(self.spread)
            .is_some_and(|(margin, spread)| margin.abs() <= spread)
    }
}

impl Outcome {
    /// A lesson not run on this GPU, and `why`.
    pub(super) fn skipped(kernel: &str, why: &str) -> Self {
        Self {
            kernel: kernel.to_string(),
            points: Vec::new(),
            bound: None,
            finding: format!("skipped: {why}."),
            verdict: Verdict::Skipped,
            margin: None,
            spread: None,
        }
    }
}

/// Where the lessons run: the GPU, what it is, and where the inputs come
/// from.
pub struct Lab<'a> {
    pub(super) gpu: &'a Gpu,
    pub(super) device: usize,
    /// The second GPU the user named for the two-GPU lessons.
    pub(super) peer: Option<usize>,
    /// The second GPU's name, once a lesson has opened it.
    pub(super) peer_name: Option<String>,
    pub(super) hardware: Hardware,
    pub(super) runs: Runs,
    pub(super) rng: SmallRng,
}

impl Lab<'_> {
    /// The two-GPU lessons' second GPU, each GPU able to reach the other's
    /// memory: the one the user named, or the first other than the lab's;
    /// `None` on a host of one GPU, where the user named none. A GPU that
    /// does not exist, the lab's own, or one the driver says is no peer
    /// of it is an error.
    pub(super) fn peer(&mut self) -> Result<Option<Gpu>> {
        let count = gpu_host::gpu::device_count()?;
        let ordinal = match self.peer {
            Some(ordinal) => ordinal,
            None => match (0..count).find(|&other| other != self.device) {
                Some(other) => other,
                None => return Ok(None),
            },
        };
        let peer = crate::gpu::open(ordinal)?;
        self.gpu.enable_peer_access(&peer)?;
        peer.enable_peer_access(self.gpu)?;
        self.peer_name = Some(peer.name().to_string());
        Ok(Some(peer))
    }

    /// Verifies family `F`'s kernel on `shape` (fresh inputs, poisoned
    /// output, every element), then times it.
    pub(super) fn measure<F: Family>(&mut self, shape: F::Shape) -> Result<(Timing, bool)> {
        self.measure_on::<F>(self.gpu, &F::KERNELS[0], shape)
    }

    /// [`Lab::measure`] for `kernel` as `gpu` loaded it, timed as
    /// [`Lab::time`] times.
    pub(super) fn measure_on<F: Family>(
        &mut self,
        gpu: &Gpu,
        kernel: &Kernel<F::Args, F::Problem>,
        shape: F::Shape,
    ) -> Result<(Timing, bool)> {
        let mut case = Case::<Gpu, F>::new(gpu, shape, &mut self.rng)?;
        let correct = case.check(gpu, kernel)?.passed();
        let timing = self.time(gpu, || case.launch(gpu, kernel))?;
        Ok((timing, correct))
    }

    /// The time of `launch` on `gpu`. A launch shorter than [`SAMPLE_MS`]
    /// is timed again in batches of launches back to back, each batch at
    /// least that long, and divided.
    pub(super) fn time(&self, gpu: &Gpu, launch: impl FnMut() -> Result<()>) -> Result<Timing> {
        self.batched(|runs, launch| gpu.timing(runs, launch), launch)
    }

    /// The time of `launch` as `timing` times its runs (on one GPU, or on
    /// several together), in batches as [`Lab::time`] says.
    pub(super) fn batched(
        &self,
        mut timing: impl FnMut(Runs, &mut dyn FnMut() -> Result<()>) -> Result<Timing>,
        mut launch: impl FnMut() -> Result<()>,
    ) -> Result<Timing> {
        let once = timing(self.runs, &mut launch)?;
        if once.median_ms >= SAMPLE_MS {
            return Ok(once);
        }
        let batch = (SAMPLE_MS / once.median_ms.max(1e-6)).ceil() as usize;
        let batched = timing(self.runs, &mut || (0..batch).try_for_each(|_| launch()))?;
        Ok(batched.per_launch(batch))
    }

    /// `kernel` measured at `shape` as the point at `x` on its line, its
    /// quantity `y` of its time.
    pub(super) fn point<F: Family>(
        &mut self,
        kernel: &Kernel<F::Args, F::Problem>,
        shape: F::Shape,
        x: f64,
        y: impl Fn(f64) -> f64,
    ) -> Result<Point> {
        let (timing, correct) = self.measure_on::<F>(self.gpu, kernel, shape)?;
        Ok(Point::timed(x, timing, y(timing.median_ms), correct).on(kernel.name))
    }
}

/// The shortest time a lesson's timed sample may take: a launch of a few
/// microseconds, timed alone, is mostly the events' resolution and the
/// launch's own overhead, which differ from run to run by as much as the
/// differences a lesson looks for.
pub(super) const SAMPLE_MS: f64 = 0.1;

/// What the access lessons count.
pub(super) const FETCHED_PER_USED: &str = "bytes fetched per byte used";

/// The traffic of family `F`'s first kernel at `shape`, as the emulator
/// counts it.
pub(super) fn traffic<F: Family>(shape: F::Shape) -> Result<Traffic> {
    kernel_traffic::<F>(&F::KERNELS[0], shape)
}

/// The traffic of `kernel` at `shape`, as the emulator counts it.
pub(super) fn kernel_traffic<F: Family>(
    kernel: &Kernel<F::Args, F::Problem>,
    shape: F::Shape,
) -> Result<Traffic> {
    let counting = CountingEmulator::default();
    let mut rng = SmallRng::seed_from_u64(0);
    // Checked, not only launched: `prepare` sets what the kernel needs
    // (the constant array), and the count is of a correct run.
    let mut case = Case::<CountingEmulator, F>::new(&counting, shape, &mut rng)?;
    let comparison = case.check(&counting, kernel)?;
    if !comparison.passed() {
        return Err(Error::WrongOnEmulator {
            kernel: kernel.name,
            comparison: comparison.to_string(),
        });
    }
    Ok(counting
        .traffic(kernel.name)
        .expect("the counting emulator counts every launch"))
}

/// Bytes fetched per byte used by the global loads of family `F`'s kernel
/// at `shape`, as the emulator counts them.
pub(super) fn fetched_per_used<F: Family>(shape: F::Shape) -> Result<f64> {
    let loads = traffic::<F>(shape)?.global_load;
    Ok(loads.bytes_fetched() as f64 / loads.bytes_used as f64)
}

/// The copy's elements in the emulator's count of its traffic.
pub(super) const COUNTED_ELEMENTS: usize = 4096;

/// GB/s of the bytes a copy of `n` elements uses, read and written.
pub(super) fn copy_rate(n: usize, ms: f64) -> f64 {
    8.0 * n as f64 / ms / 1e6
}

/// The mean y of the points `keep` keeps; NaN where it keeps none.
pub(super) fn mean_y(points: &[Point], keep: impl Fn(&Point) -> bool) -> f64 {
    let rates: Vec<f64> = points
        .iter()
        .filter(|point| keep(point))
        .map(|point| point.y)
        .collect();
    rates.iter().sum::<f64>() / rates.len() as f64
}

/// Each label whose speedup `keep` keeps, with it: "16 MiB (1.20×), 20
/// MiB (1.09×)", or "none".
pub(super) fn with_speedups(
    labels: &[String],
    speedups: &[f64],
    keep: impl Fn(f64) -> bool,
) -> String {
    let kept: Vec<String> = labels
        .iter()
        .zip(speedups)
        .filter(|&(_, &speedup)| keep(speedup))
        .map(|(label, speedup)| format!("{label} ({speedup:.2}×)"))
        .collect();
    match kept.is_empty() {
        true => "none".to_string(),
        false => kept.join(", "),
    }
}

/// The outcome, WRONG whatever the timings when any output was.
pub(super) fn outcome(
    kernel: &str,
    points: Vec<Point>,
    (finding, judgement): (String, Judgement),
) -> Outcome {
    let verdict = if points.iter().all(|point| point.correct) {
        judgement.verdict
    } else {
        Verdict::Wrong
    };
    let spread = points.iter().map(|point| point.spread).reduce(f64::max);
    Outcome {
        kernel: kernel.to_string(),
        points,
        bound: None,
        finding,
        verdict,
        margin: judgement.margin.is_finite().then_some(judgement.margin),
        spread,
    }
}

/// The items, each as `show` writes it, in a finding's list: "a, b, c".
pub fn listed<T>(items: impl IntoIterator<Item = T>, show: impl Fn(T) -> String) -> String {
    items.into_iter().map(show).collect::<Vec<_>>().join(", ")
}

/// The seeds of the committed H200 runs of every lesson
/// (`docs/results/h200/verdicts/`), each verdict of which must not depend
/// on the seed.
#[cfg(test)]
pub(super) const COMMITTED_SEEDS: [u64; 3] = [24, 25, 26];

/// The points `lesson` measured in the committed H200 run at `seed`.
#[cfg(test)]
pub(super) fn committed_points(lesson: &str, seed: u64) -> Vec<Point> {
    points_in(&format!("h200/verdicts/seed-{seed}.json"), lesson)
}

/// The committed runs of `lesson` run on its own on `machine` (`h200`,
/// or `h200-pair` for the two-GPU lessons), one at each of the
/// [`COMMITTED_SEEDS`] (`MACHINE/LESSON.json` at the first, the others'
/// `MACHINE/LESSON/seed-N.json`, under `docs/results/`): each file's name
/// and the points it holds.
#[cfg(test)]
pub(super) fn own_committed_runs(machine: &str, lesson: &str) -> Vec<(String, Vec<Point>)> {
    let [_, rest @ ..] = COMMITTED_SEEDS;
    let files = std::iter::once(format!("{machine}/{lesson}.json"))
        .chain(rest.map(|seed| format!("{machine}/{lesson}/seed-{seed}.json")));
    files
        .map(|file| {
            let points = points_in(&file, lesson);
            (file, points)
        })
        .collect()
}

/// Asserts that the committed run `file` confirms its claim by a margin
/// wider than the widest spread among its `points`.
#[cfg(test)]
pub(super) fn assert_confirmed_past_spread(
    file: &str,
    points: &[Point],
    (finding, judgement): (String, Judgement),
) {
    assert_eq!(judgement.verdict, Verdict::Confirmed, "{file}: {finding}");
    let spread = points.iter().map(|point| point.spread).fold(0.0, f64::max);
    assert!(judgement.margin > spread, "{file}: {finding}");
}

/// The points `lesson` measured in the committed run `file`, a path under
/// `docs/results/`.
#[cfg(test)]
fn points_in(file: &str, lesson: &str) -> Vec<Point> {
    let path = format!("{}/../docs/results/{file}", env!("CARGO_MANIFEST_DIR"));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the committed run"))
            .expect("JSON");
    let lessons = run["lessons"].as_array().expect("the run's lessons");
    let found = lessons
        .iter()
        .find(|one| one["name"] == lesson)
        .expect("the lesson in the run");
    serde_json::from_value(found["points"].clone()).expect("its points")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_criterion_s_margin_is_its_distance_from_the_threshold_signed_by_whether_it_holds() {
        let passed = Criterion::below(0.4, 0.5);
        assert!(passed.holds && close(passed.margin, 0.25));
        let missed = Criterion::below(0.6, 0.5);
        assert!(!missed.holds && missed.margin < 0.0);
        let at = Criterion::at_least(0.97, 0.97);
        assert!(at.holds && at.margin == 0.0);
        assert!(!Criterion::above(0.97, 0.97).holds);
        // All: the narrowest pass, or the widest miss.
        let all = Criterion::all([Criterion::above(1.3, 1.0), Criterion::above(1.1, 1.0)]);
        assert!(all.holds && close(all.margin, 0.1));
        let all = Criterion::all([Criterion::above(1.3, 1.0), Criterion::above(0.8, 1.0)]);
        assert!(!all.holds && close(all.margin, -0.2));
        // Any: the widest pass, or the narrowest miss.
        let any = Criterion::any([Criterion::above(0.9, 1.0), Criterion::above(1.2, 1.0)]);
        assert!(any.holds && close(any.margin, 0.2));
        let any = Criterion::any([Criterion::above(0.9, 1.0), Criterion::above(0.8, 1.0)]);
        assert!(!any.holds && close(any.margin, -0.1));
        // Counts move no margin but their own failure.
        let counted = Criterion::exact(true).and(Criterion::above(1.2, 1.0));
        assert!(counted.holds && close(counted.margin, 0.2));
        assert_eq!(
            Criterion::exact(false).and(passed).margin,
            f64::NEG_INFINITY
        );
        assert!(!Criterion::any([]).holds && Criterion::all([]).holds);
    }

    #[test]
    fn an_outcome_records_its_margin_and_its_widest_spread() {
        let point = |ms: f64, spread: f64| Point {
            spread,
            ..Point::new(1.0, ms, 1.0, true)
        };
        let judged = Verdict::confirmed_if(Criterion::above(1.02, 1.0), Verdict::NotShown);
        let close_call = outcome(
            "k",
            vec![point(1.0, 0.01), point(2.0, 0.03)],
            (String::new(), judged),
        );
        assert_eq!(close_call.verdict, Verdict::Confirmed);
        assert_eq!(close_call.spread, Some(0.03));
        assert!(close_call.margin.is_some_and(|margin| close(margin, 0.02)));
        assert!(close_call.within_spread());
        let counted = Verdict::confirmed_if(Criterion::exact(true), Verdict::NotShown);
        let exact = outcome("k", vec![point(1.0, 0.5)], (String::new(), counted));
        assert_eq!(exact.margin, None);
        assert!(!exact.within_spread());
        let wrong = outcome(
            "k",
            vec![Point::new(1.0, 1.0, 1.0, false)],
            (String::new(), judged),
        );
        assert_eq!(wrong.verdict, Verdict::Wrong);
    }
}
