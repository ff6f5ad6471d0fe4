//! Ctrl-C as an error rather than a sudden death: the first interrupt is
//! noted, and the run stops at its next measurement with
//! [`Error::Interrupted`], so that every report still being prepared is
//! dropped with its temporary file and an existing report survives. A
//! second interrupt ends the process at once, removing the temporary files
//! first.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};
use crate::output;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Notes Ctrl-C from now on, for [`check`]; without it, Ctrl-C ends the
/// process as usual.
pub fn watch() -> Result<()> {
    ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            output::remove_temporaries();
            std::process::exit(EXIT_CODE.into());
        }
    })
    .map_err(|error| Error::Signal(error.to_string()))
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
