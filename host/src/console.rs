//! Printing that cannot panic: `print!` panics when standard output is a
//! pipe whose reader has gone (`locality | head -1`) or a full disk; these
//! return [`Error::Stdout`] instead, which the program ends on.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// Set once an output file is standard output (`-o -`): from then on the
/// program's own messages go to standard error, out of its way.
static STDOUT_HANDED_OVER: AtomicBool = AtomicBool::new(false);

/// Leaves standard output to an output file; [`print()`] writes to standard
/// error from now on.
pub fn hand_stdout_over() {
    STDOUT_HANDED_OVER.store(true, Ordering::SeqCst);
}

/// Writes `text` to standard output, or to standard error once an output
/// file is standard output.
pub fn print(text: std::fmt::Arguments<'_>) -> Result<()> {
    let written = if STDOUT_HANDED_OVER.load(Ordering::SeqCst) {
        let mut stderr = std::io::stderr().lock();
        stderr.write_fmt(text).and_then(|()| stderr.flush())
    } else {
        let mut stdout = std::io::stdout().lock();
        stdout.write_fmt(text).and_then(|()| stdout.flush())
    };
    written.map_err(Error::Stdout)
}

/// What `result` holds, or `None` after saying on standard output why the
/// run goes on without it.
pub fn or_say_why<T, E>(result: Result<T, E>, why: impl FnOnce(E) -> String) -> Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error) => print(format_args!("{}\n", why(error))).map(|()| None),
    }
}

/// `println!` that returns [`Error::Stdout`] instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::console::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use say;
