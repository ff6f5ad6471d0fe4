//! Persisting L2 accesses: a part of the L2 set aside for one buffer's
//! lines, which accesses to other data cannot push out
//! (`cudaLimitPersistingL2CacheSize` and an access-policy window on the
//! stream, CUDA's L2 residency control).

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, ThreadId};

use crate::error::{Error, Result};

/// What a GPU's L2 can keep persisting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PersistingL2 {
    /// The most bytes of the L2 that can be set aside for persisting lines
    /// (`persistingL2CacheMaxSize`).
    pub max_carve_out: usize,
    /// The largest access-policy window, in bytes
    /// (`accessPolicyMaxWindowSize`).
    pub max_window: usize,
}

/// The H100's limits, which the emulator takes as its own: 31.25 MiB of
/// its 50 MiB L2, and windows of up to 128 MiB.
pub const EMULATED_PERSISTING_L2: PersistingL2 = PersistingL2 {
    max_carve_out: 32_768_000,
    max_window: 128 << 20,
};

/// Who holds the one persisting window of a stream: the thread whose
/// [`PersistingWindow`] it is, if any, and the signal that it was given
/// back.
#[derive(Default)]
pub(crate) struct WindowHolder {
    holder: Mutex<Option<ThreadId>>,
    released: Condvar,
}

impl WindowHolder {
    /// Takes the window for this thread: waits while another thread holds
    /// it, and refuses where this one does already, since it would wait
    /// for itself.
    fn take(&self) -> Result<()> {
        let me = thread::current().id();
        let mut holder = self.holder.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            match *holder {
                None => break,
                Some(thread) if thread == me => return Err(Error::WindowInUse),
                Some(_) => {
                    holder = self
                        .released
                        .wait(holder)
                        .unwrap_or_else(PoisonError::into_inner)
                }
            }
        }
        *holder = Some(me);
        Ok(())
    }

    fn give_back(&self) {
        *self.holder.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.released.notify_one();
    }
}

/// A buffer kept persisting in the L2 by [`crate::Backend::persist`]:
/// while it lives, a carve-out of the L2 holds the buffer's lines, as
/// many as fit, and every launch on the backend's stream keeps them
/// there. Dropping it clears the window, turns the persisting lines back
/// into normal ones (`cudaCtxResetPersistingL2Cache`) and gives the
/// carve-out back to the rest of the L2. It stays on the thread that
/// made it.
pub struct PersistingWindow {
    /// The fraction of the buffer's accesses marked persisting: the
    /// carve-out over the buffer's bytes, at most 1, so that the lines
    /// marked fit the carve-out.
    pub hit_ratio: f32,
    holder: Arc<WindowHolder>,
    release: Option<Box<dyn FnOnce()>>,
}

impl PersistingWindow {
    /// A window of `hit_ratio` that `release` undoes, once `holder` was
    /// taken for it.
    pub(crate) fn new(
        hit_ratio: f32,
        holder: Arc<WindowHolder>,
        release: impl FnOnce() + 'static,
    ) -> Self {
        Self {
            hit_ratio,
            holder,
            release: Some(Box::new(release)),
        }
    }
}

impl Drop for PersistingWindow {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
        self.holder.give_back();
    }
}

/// Checks a window over `bytes` with a carve-out of `carve_out` against
/// `limits` (`None` on a GPU without persisting accesses) and takes
/// `holder` for it, once any other thread has given it back; the fraction
/// of its accesses to mark persisting.
pub(crate) fn check_window(
    limits: Option<PersistingL2>,
    bytes: usize,
    carve_out: usize,
    holder: &WindowHolder,
) -> Result<f32> {
    let limits = limits.ok_or(Error::NoPersistingL2)?;
    if carve_out == 0 || carve_out > limits.max_carve_out {
        return Err(Error::CarveOut {
            bytes: carve_out,
            limit: limits.max_carve_out,
        });
    }
    if bytes == 0 || bytes > limits.max_window {
        return Err(Error::WindowSize {
            bytes,
            limit: limits.max_window,
        });
    }
    holder.take()?;
    Ok((carve_out as f64 / bytes as f64).min(1.0) as f32)
}
