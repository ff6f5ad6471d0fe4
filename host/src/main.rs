use std::io::{ErrorKind, Write};
use std::process::ExitCode;

use clap::Parser;
use locality::cli::{self, Cli};
use locality::error::Error;
use locality::interrupt;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match interrupt::watch().and_then(|()| cli::run(&cli)) {
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
