use std::process::ExitCode;

use clap::Parser;
use locality::cli::{self, Cli};

fn main() -> ExitCode {
    match cli::run(&Cli::parse()) {
        Ok(verdict) => ExitCode::from(verdict.exit_code()),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
