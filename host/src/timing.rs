//! Kernel timing with CUDA events: warm-up first, then the median of many
//! runs, each bracketed by events on the GPU's own clock.

use cudarc::driver::sys::CUevent_flags;

use crate::device::Gpu;
use crate::error::{During, Result};

/// How many runs to time, after how many untimed ones.
#[derive(Clone, Copy, Debug)]
pub struct Runs {
    pub warmup: usize,
    pub timed: usize,
}

/// The median of the timed runs, in milliseconds.
pub fn median_ms(gpu: &Gpu, runs: Runs, mut launch: impl FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..runs.warmup {
        launch()?;
    }
    let event = || {
        gpu.context()
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("creating an event")
    };
    let (start, end) = (event()?, event()?);
    let mut times = Vec::with_capacity(runs.timed);
    for _ in 0..runs.timed.max(1) {
        start.record(gpu.stream()).during("recording an event")?;
        launch()?;
        end.record(gpu.stream()).during("recording an event")?;
        end.synchronize().during("running a kernel")?;
        times.push(f64::from(
            start.elapsed_ms(&end).during("reading an event")?,
        ));
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
