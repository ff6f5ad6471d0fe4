//! Signals as a user means them: a run that is cancelled writes nothing.
//!
//! SIGTERM (`kill`, `timeout`) and SIGHUP (a closed terminal) end the
//! process at once, with the status shells give a process killed by them
//! (143, 129), after [`output::cancel`] has removed every temporary file,
//! so that each output is either complete and in place or untouched.
//!
//! Ctrl-C (SIGINT) does the same, with 130, in a run that has nothing to
//! finish ([`FirstInterrupt::EndsTheRun`]: a blur). In a run of many
//! measurements ([`FirstInterrupt::StopsAtTheNextCheck`]) the first one is
//! noted, and the run stops at its next measurement with
//! [`Error::Interrupted`], its outputs cancelled just the same; a second
//! one ends it at once.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::error::{Error, NOTHING_WRITTEN, Result};
use crate::output;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What the first Ctrl-C does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstInterrupt {
    /// Ends the process at once: nothing done so far is worth keeping.
    EndsTheRun,
    /// Noted, for [`check`]: the run stops between two measurements.
    StopsAtTheNextCheck,
}

/// Handles SIGINT, SIGTERM and SIGHUP from now on, on a thread of their
/// own, as the module says.
pub fn watch(first_interrupt: FirstInterrupt) -> Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|error| Error::Signal(error.to_string()))?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let noted = signal == SIGINT
                    && first_interrupt == FirstInterrupt::StopsAtTheNextCheck
                    && !INTERRUPTED.swap(true, Ordering::SeqCst);
                output::cancel();
                if !noted {
                    let name = match signal {
                        SIGINT => "interrupted",
                        SIGTERM => "terminated",
                        _ => "hung up",
                    };
                    let _ = writeln!(std::io::stderr(), "{name}: {NOTHING_WRITTEN}");
                    std::process::exit(128 + signal);
                }
            }
        })
        .map_err(|error| Error::Signal(error.to_string()))?;
    Ok(())
}

/// [`Error::Interrupted`] once Ctrl-C has been pressed.
pub fn check() -> Result<()> {
    if INTERRUPTED.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// The exit status of an interrupted run, as shells report SIGINT.
pub const EXIT_CODE: u8 = 130;
