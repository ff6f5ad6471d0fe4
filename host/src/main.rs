use std::process::ExitCode;

use clap::Parser;
use locality::cli::{self, Cli};

fn main() -> ExitCode {
    match cli::run(&Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}
