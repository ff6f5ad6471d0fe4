use std::io::{ErrorKind, Write};
use std::process::ExitCode;

use clap::Parser;
use locality::cli::{self, Cli, Command};
use locality::console;
use locality::error::Error;
use locality::interrupt::{self, FirstInterrupt};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A blur has nothing to finish: the first Ctrl-C ends it.
    let first_interrupt = match cli.command {
        Some(Command::Blur(_)) => FirstInterrupt::EndsTheRun,
        _ => FirstInterrupt::StopsAtTheNextCheck,
    };
    match interrupt::watch(first_interrupt).and_then(|()| cli::run(&cli)) {
        Ok(verdict) => ExitCode::from(verdict.exit_code()),
        // The reader of the output has gone (`locality | head`): nobody is
        // left to tell.
        Err(Error::Stdout(error)) if error.kind() == ErrorKind::BrokenPipe => ExitCode::from(2),
        Err(Error::Interrupted) => {
            let _ = writeln!(std::io::stderr(), "{}", Error::Interrupted);
            ExitCode::from(interrupt::EXIT_CODE)
        }
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error}");
            ExitCode::from(2)
        }
    }
}

/// Looks before the standard library does: it opens `/dev/null` on a
/// closed standard stream before `main`, after which a write to a closed
/// standard output would look like success.
extern "C" fn look_at_stdout() {
    // SAFETY: F_GETFD reads a descriptor's flags and touches no memory.
    if unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) } == -1 {
        console::note_stdout_was_closed();
    }
}

/// Run by the loader among the program's constructors, before the
/// standard library's start-up code.
#[used]
#[unsafe(link_section = ".init_array")]
static LOOK_AT_STDOUT: extern "C" fn() = look_at_stdout;
