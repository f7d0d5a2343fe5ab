//! The `teamctl` binary: parse, dispatch, print the error once, map it to an exit code.

mod cli;

use std::io;
use std::process::ExitCode;

use clap::FromArgMatches;

use crate::cli::{output, quick_exit, signals};

fn main() -> ExitCode {
    // teamctl started again as the reaper of a merge queue's check.
    if let Some(code) = teamctl::host::reap::main(&std::env::args_os().collect::<Vec<_>>()) {
        return ExitCode::from(code);
    }
    let cli = parse();
    if teamctl::host::platform::portable_requested(std::env::var_os(cli::env::PORTABLE).as_deref())
    {
        teamctl::host::platform::force_portable();
    }
    signals::install();
    let code = match cli::dispatch(&cli.global, cli.command, cli::help_command) {
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
    cli::context::print_test_trace();
    cli::otel::finish(code);
    quick_exit::exit_if_armed(code);
    ExitCode::from(code)
}

/// The command line, as `Cli::parse` reads it, but cheaper. Only the verb named is in the tree
/// (`cli::command_for`), and its flags are deferred (`cli::Command`) until clap reads it. Help
/// and mistakes are read again with every verb built at once (`cli::help_command`), so that
/// what clap prints (each verb with its line, a verb's global options last) is as it always
/// was. The command tree is left to the process's exit instead of being freed piece by piece.
fn parse() -> cli::Cli {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut cmd = cli::command_for(&args);
    let matches = match cmd.try_get_matches_from_mut(args.iter()) {
        Ok(m) => m,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => e.exit(),
        Err(_) => {
            cmd = cli::help_command();
            cmd.build();
            cmd.try_get_matches_from_mut(args.iter())
                .unwrap_or_else(|e| e.exit())
        }
    };
    let parsed = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cmd).exit());
    std::mem::forget(matches);
    std::mem::forget(cmd);
    parsed
}
