//! The `teamctl` binary: parse, dispatch, print the error once, map it to an exit code.

mod cli;

use std::io;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use crate::cli::{output, quick_exit, signals};

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    if teamctl::host::platform::portable_requested(std::env::var_os(cli::env::PORTABLE).as_deref())
    {
        teamctl::host::platform::force_portable();
    }
    signals::install();
    let code = match cli::dispatch(&cli.global, cli.command, cli::Cli::command) {
        Ok(()) => 0,
        // A closed pipe (`teamctl inbox | head -1`) is how the reader says it has enough.
        Err(err)
            if err.chain().any(|e| {
                e.downcast_ref::<io::Error>()
                    .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            }) =>
        {
            0
        }
        Err(err) => {
            output::error(&err);
            cli::exit_code(&err)
        }
    };
    // Interrupted: the locked write in progress was finished (or never started) and every lock
    // released; report the signal, as the signal thread would, whichever thread exits first.
    let code = signals::exit_code().unwrap_or(code);
    cli::otel::finish(code);
    quick_exit::exit_if_armed(code);
    ExitCode::from(code)
}
