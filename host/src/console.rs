//! Printing that cannot panic: `print!` panics when standard output is a
//! pipe whose reader has gone (`locality | head -1`) or a full disk; these
//! return [`Error::Stdout`] instead, which the program ends on, unless the
//! messages are only notes beside the run's real output
//! ([`messages_are_notes`]).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

/// Set once an output file is standard output (`-o -`): from then on the
/// program's own messages go to standard error, out of its way.
static STDOUT_HANDED_OVER: AtomicBool = AtomicBool::new(false);

/// Set once the run's result goes to a file: a reader of its messages
/// that goes away (`locality blur … | head -1`) must not stop it.
static MESSAGES_ARE_NOTES: AtomicBool = AtomicBool::new(false);

/// Set when standard output was closed as the program started (`>&-`),
/// which the standard library hides by opening `/dev/null` in its place.
static STDOUT_WAS_CLOSED: AtomicBool = AtomicBool::new(false);

/// Records that standard output was closed as the program started.
pub fn note_stdout_was_closed() {
    STDOUT_WAS_CLOSED.store(true, Ordering::SeqCst);
}

/// Whether standard output was closed as the program started: nothing
/// written to it reaches anyone.
pub fn stdout_was_closed() -> bool {
    STDOUT_WAS_CLOSED.load(Ordering::SeqCst)
}

/// Makes the messages notes: once their reader has gone, the rest are
/// dropped and the run goes on.
pub fn messages_are_notes() {
    MESSAGES_ARE_NOTES.store(true, Ordering::SeqCst);
}

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
    match written {
        Err(error)
            if error.kind() == std::io::ErrorKind::BrokenPipe
                && MESSAGES_ARE_NOTES.load(Ordering::SeqCst) =>
        {
            Ok(())
        }
        written => written.map_err(Error::Stdout),
    }
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
