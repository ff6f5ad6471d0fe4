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

/// The median of the timed runs of `launch` on `stream`, in milliseconds,
/// each between two events recorded on that stream.
pub fn gpu_median_ms<E: From<Error>>(
    stream: &CudaStream,
    runs: Runs,
    mut launch: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    for _ in 0..runs.warmup {
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
        start.record(stream).during("recording an event")?;
        launch()?;
        end.record(stream).during("recording an event")?;
        end.synchronize().during("running a kernel")?;
        times.push(f64::from(
            start.elapsed_ms(&end).during("reading an event")?,
        ));
    }
    Ok(median(&mut times))
}

/// The median wall-clock time of the timed runs of `launch`, in milliseconds.
pub fn wall_median_ms<E>(runs: Runs, mut launch: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    for _ in 0..runs.warmup {
        launch()?;
    }
    let mut times = Vec::with_capacity(runs.timed);
    for _ in 0..runs.timed.max(1) {
        let start = Instant::now();
        launch()?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(&mut times))
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
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
