use std::io::{ErrorKind, Write};
use std::process::ExitCode;

use clap::Parser;
use locality::cli::{self, Cli};
use locality::error::Error;

fn main() -> ExitCode {
    match cli::run(&Cli::parse()) {
        Ok(verdict) => ExitCode::from(verdict.exit_code()),
        // The reader of the output has gone (`locality | head`): nobody is
        // left to tell.
        Err(Error::Stdout(error)) if error.kind() == ErrorKind::BrokenPipe => ExitCode::from(2),
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "error: {error}");
            ExitCode::from(2)
        }
    }
}
