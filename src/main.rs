//! The `teamctl` binary: parse, dispatch, print the error once, map it to an exit code.

mod cli;
mod cmd;
mod output;
mod signals;

use std::io;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    signals::install();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`teamctl inbox | head -1`) is how the reader says it has enough.
            let broken_pipe = err.chain().any(|e| {
                e.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {err:#}");
            let code = err
                .chain()
                .find_map(|e| e.downcast_ref::<teamctl::Error>())
                .map_or(1, teamctl::Error::exit_code);
            ExitCode::from(code)
        }
    }
}
