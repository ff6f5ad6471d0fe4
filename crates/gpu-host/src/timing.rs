//! Timing: warm-up first, then the median of many runs. On the GPU each run
//! is bracketed by CUDA events on the GPU's own clock; on the emulator the
//! wall clock says how long the emulation took, nothing about a GPU.

use std::time::Instant;

use cudarc::driver::CudaStream;
use cudarc::driver::sys::CUevent_flags;

use crate::error::{During, Error, Result};

/// How many runs to time, after how many untimed ones.
#[derive(Clone, Copy, Debug)]
pub struct Runs {
    /// Untimed runs first: caches, clocks and lazy loading settle.
    pub warmup: usize,
    /// Runs timed, of which the median counts.
    pub timed: usize,
}

/// What the timed runs of a launch took: the median, and how far apart
/// the middle half of them lie.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// The median run's time, in milliseconds.
    pub median_ms: f64,
    /// The interquartile range over the median: the run-to-run spread a
    /// difference between two timings must exceed to mean anything.
    pub spread: f64,
}

impl Timing {
    /// The timing of runs that took `times` milliseconds each.
    pub fn of(times: &mut [f64]) -> Self {
        times.sort_by(f64::total_cmp);
        let median_ms = quantile(times, 0.5);
        let spread = match median_ms > 0.0 {
            true => (quantile(times, 0.75) - quantile(times, 0.25)) / median_ms,
            false => 0.0,
        };
        Self { median_ms, spread }
    }

    /// The timing of one of `count` launches timed together.
    pub fn per_launch(self, count: usize) -> Self {
        Self {
            median_ms: self.median_ms / count.max(1) as f64,
            ..self
        }
    }
}

/// The `q` quantile of the sorted `values`, between the two nearest.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let Some(last) = sorted.len().checked_sub(1) else {
        return f64::NAN;
    };
    let at = q * last as f64;
    let (below, above) = (at.floor() as usize, at.ceil() as usize);
    sorted[below] + (sorted[above] - sorted[below]) * (at - below as f64)
}

/// The median of the timed runs of `launch` on `stream`, in milliseconds,
/// each between two events recorded on that stream.
pub fn gpu_median_ms<E: From<Error>>(
    stream: &CudaStream,
    runs: Runs,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    gpu_timing(stream, runs, launch).map(|timing| timing.median_ms)
}

/// [`gpu_median_ms`] with the runs' spread.
pub fn gpu_timing<E: From<Error>>(
    stream: &CudaStream,
    runs: Runs,
    launch: impl FnMut() -> Result<(), E>,
) -> Result<Timing, E> {
    gpu_timing_after(stream, runs, || Ok(()), launch)
}

/// [`gpu_timing`], with `setup` enqueued before each run, outside the
/// events that time it: what puts the state a run must start from back
/// (a managed buffer's pages on the host, say).
pub fn gpu_timing_after<E: From<Error>>(
    stream: &CudaStream,
    runs: Runs,
    mut setup: impl FnMut() -> Result<(), E>,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<Timing, E> {
    for _ in 0..runs.warmup {
        setup()?;
        launch()?;
    }
    let event = || {
        stream
            .context()
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating an event")
    };
    let (start, end) = (event()?, event()?);
    let mut times = Vec::with_capacity(runs.timed);
    for _ in 0..runs.timed.max(1) {
        setup()?;
        start.record(stream).during("recording an event")?;
        launch()?;
        end.record(stream).during("recording an event")?;
        end.synchronize().during("running a kernel")?;
        times.push(f64::from(
            start.elapsed_ms(&end).during("reading an event")?,
        ));
    }
    Ok(Timing::of(&mut times))
}

/// The median wall-clock time of the timed runs of `launch`, in milliseconds.
pub fn wall_median_ms<E>(runs: Runs, launch: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    wall_timing(runs, launch).map(|timing| timing.median_ms)
}

/// [`wall_median_ms`] with the runs' spread.
pub fn wall_timing<E>(runs: Runs, launch: impl FnMut() -> Result<(), E>) -> Result<Timing, E> {
    wall_timing_after(runs, || Ok(()), launch)
}

/// [`wall_timing`], with `setup` run before each run, outside its time.
pub fn wall_timing_after<E>(
    runs: Runs,
    mut setup: impl FnMut() -> Result<(), E>,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<Timing, E> {
    for _ in 0..runs.warmup {
        setup()?;
        launch()?;
    }
    let mut times = Vec::with_capacity(runs.timed);
    for _ in 0..runs.timed.max(1) {
        setup()?;
        let start = Instant::now();
        launch()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(Timing::of(&mut times))
}

/// The median, by the middle element (the mean of the middle two for an
/// even count).
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    }
}

#[cfg(test)]
mod tests {
    use super::{Timing, median};

    #[test]
    fn the_spread_is_the_middle_half_over_the_median() {
        let timing = Timing::of(&mut [5.0, 1.0, 2.0, 4.0, 3.0]);
        assert_eq!(
            timing,
            Timing {
                median_ms: 3.0,
                spread: 2.0 / 3.0
            }
        );
        let alike = Timing::of(&mut [2.0; 20]);
        assert_eq!(
            alike,
            Timing {
                median_ms: 2.0,
                spread: 0.0
            }
        );
        assert_eq!(Timing::of(&mut [0.0]).spread, 0.0);
        assert_eq!(
            alike.per_launch(4),
            Timing {
                median_ms: 0.5,
                spread: 0.0
            }
        );
    }

    #[test]
    fn setup_runs_before_every_run_and_outside_its_time() {
        let runs = super::Runs {
            warmup: 2,
            timed: 5,
        };
        // What ran, in order: S for a setup, L for a launch.
        let order = std::cell::RefCell::new(String::new());
        let timing = super::wall_timing_after::<()>(
            runs,
            || {
                order.borrow_mut().push('S');
                std::thread::sleep(std::time::Duration::from_millis(20));
                Ok(())
            },
            || {
                order.borrow_mut().push('L');
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(order.into_inner(), "SL".repeat(7));
        assert!(timing.median_ms < 10.0, "{timing:?}");
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
