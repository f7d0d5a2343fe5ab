//! The command line: the clap root, the global flags, dispatch to the verbs, the context they
//! get, and what they share (output, terminal safety, env names, signals, the quick exit, the
//! answering helpers). The only place that maps library errors to exit codes ([`exit_code`]).
//! It imports the library (`teamctl`) and nothing imports it.

pub(crate) mod answer;
pub(crate) mod args;
pub(crate) mod by_policy;
pub(crate) mod cmd;
pub(crate) mod compose;
pub(crate) mod context;
pub(crate) mod env;
pub(crate) mod launch;
pub(crate) mod output;
pub(crate) mod quick_exit;
pub(crate) mod signals;
pub(crate) mod term;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};

use crate::cli::cmd::{
    approve, ask, completions, create, delete, deny, doctor, export, inbox, man, pending, run,
    send, shutdown, status, tasks, wait, watch,
};
use crate::cli::context::Ctx;
use crate::cli::output::Output;

const ABOUT: &str = "Work with Claude Code agent teams from a shell, a cron job or CI";

const LONG_ABOUT: &str = "Work with Claude Code agent teams from a shell, a cron job or CI.

teamctl reads and writes the files a running Claude Code team uses (under $CLAUDE_CONFIG_DIR, \
default ~/.claude): it takes Claude Code's own lock directories, replaces files atomically and \
reads every write back, so it never loses or corrupts a message Claude Code wrote.

What teammates write is untrusted: human output shows control characters (escape sequences, \
bidi overrides, newlines inside a field) as visible escapes such as \\e and \\u{202e}, and \
--json keeps the exact text. A replaced file keeps its permission bits; teamctl's sent log is \
private (0600).";

const AFTER_HELP: &str = "Exit codes:
  0  success (an empty inbox too)
  1  failure: unknown team or recipient, corrupt file, foreign lock file, I/O, a failed create,
     a teammate that is gone (ask), a wait that can no longer succeed
  2  usage error, including a team or member name that breaks the naming rules, or writing
     as team-lead in a team teamctl does not lead (or as system) without --force
  3  the lock was not acquired before --lock-timeout (nothing was written), or a --timeout or
     --wait ran out
  4  read-back verification failed after a write
  5  ask: the teammate went idle without answering";

/// Work with Claude Code agent teams from a shell
#[derive(Debug, Parser)]
#[command(
    name = "teamctl",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_long_help = AFTER_HELP,
    disable_help_subcommand = true,
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Flags every subcommand takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Print one JSON document (JSON Lines for streams) instead of human output
    #[arg(long, global = true)]
    pub(crate) json: bool,

    /// Claude Code's config dir [default: ~/.claude]
    #[arg(long, global = true, value_name = "DIR", env = env::CLAUDE_CONFIG_DIR)]
    pub(crate) claude_dir: Option<PathBuf>,

    /// Team to work on [default: the only team, or the one led from the current directory]
    #[arg(long, global = true, value_name = "NAME", env = env::TEAM)]
    pub(crate) team: Option<String>,

    /// How long to wait for a file's lock before giving up with exit code 3
    #[arg(
        long,
        global = true,
        value_name = "DURATION",
        default_value = "5s",
        env = env::LOCK_TIMEOUT
    )]
    pub(crate) lock_timeout: String,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Create(create::CreateArgs),
    Run(run::RunArgs),
    Delete(delete::DeleteArgs),
    Send(send::SendArgs),
    Inbox(inbox::InboxArgs),
    Tasks(tasks::TasksArgs),
    Status(status::StatusArgs),
    Watch(watch::WatchArgs),
    Ask(ask::AskArgs),
    Wait(wait::WaitArgs),
    Pending(pending::PendingArgs),
    Approve(approve::ApproveArgs),
    Deny(deny::DenyArgs),
    Shutdown(shutdown::ShutdownArgs),
    Doctor(doctor::DoctorArgs),
    Export(export::ExportArgs),
    Completions(completions::CompletionsArgs),
    Man(man::ManArgs),
}

/// Runs `command`; `cli` builds the whole command line (for `completions` and `man`, which
/// need neither a config dir nor a team).
pub(crate) fn dispatch(
    global: &GlobalArgs,
    command: Command,
    cli: fn() -> clap::Command,
) -> Result<()> {
    let out = Output { json: global.json };
    let command = match command {
        Command::Completions(args) => return completions::run(out, cli(), args),
        Command::Man(args) => return man::run(out, cli(), args),
        other => other,
    };
    let ctx = Ctx::new(global)?;
    match command {
        Command::Create(args) => create::run(&ctx, args),
        Command::Run(args) => run::run(&ctx, args),
        Command::Delete(args) => delete::run(&ctx, args),
        Command::Send(args) => send::run(&ctx, args),
        Command::Inbox(args) => inbox::run(&ctx, args),
        Command::Tasks(args) => tasks::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Watch(args) => watch::run(&ctx, args),
        Command::Ask(args) => ask::run(&ctx, args),
        Command::Wait(args) => wait::run(&ctx, args),
        Command::Pending(args) => pending::run(&ctx, args),
        Command::Approve(args) => approve::run(&ctx, args),
        Command::Deny(args) => deny::run(&ctx, args),
        Command::Shutdown(args) => shutdown::run(&ctx, args),
        Command::Doctor(args) => doctor::run(&ctx, args),
        Command::Export(args) => export::run(&ctx, args),
        Command::Completions(_) | Command::Man(_) => unreachable!("handled above"),
    }
}

/// The exit code for a failure: the code of the first typed library error in its chain, else 1.
pub(crate) fn exit_code(err: &anyhow::Error) -> u8 {
    use teamctl::Error;
    match err.chain().find_map(|e| e.downcast_ref::<Error>()) {
        Some(Error::Usage(_)) => 2,
        Some(Error::LockTimeout { .. } | Error::Timeout(_)) => 3,
        Some(Error::VerifyFailed { .. }) => 4,
        Some(Error::Unanswered(_)) => 5,
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use clap::CommandFactory;
    use clap_complete::Shell;

    use super::Cli;

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
    }

    /// Completions and man pages are generated from `Cli` and committed; this fails when they
    /// are stale. `TEAMCTL_BLESS=1 cargo test generated` rewrites them.
    #[test]
    fn generated_files_are_current() {
        let tmp = tempfile::tempdir().unwrap();
        let completions = tmp.path().join("completions");
        let man = tmp.path().join("man/man1");
        fs::create_dir_all(&completions).unwrap();
        fs::create_dir_all(&man).unwrap();
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            clap_complete::generate_to(shell, &mut Cli::command(), "teamctl", &completions)
                .unwrap();
        }
        clap_mangen::generate_to(Cli::command(), &man).unwrap();

        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let bless = std::env::var_os("TEAMCTL_BLESS").is_some();
        let mut stale = Vec::new();
        for dir in ["completions", "man/man1"] {
            let (fresh, committed) = (tmp.path().join(dir), root.join(dir));
            if bless {
                let _ = fs::remove_dir_all(&committed);
                fs::create_dir_all(&committed).unwrap();
                for f in fs::read_dir(&fresh).unwrap() {
                    let f = f.unwrap();
                    fs::copy(f.path(), committed.join(f.file_name())).unwrap();
                }
                continue;
            }
            let list = |d: &Path| -> Vec<(String, Vec<u8>)> {
                let mut v: Vec<_> = fs::read_dir(d)
                    .map(|rd| {
                        rd.map(|f| {
                            let f = f.unwrap();
                            (
                                f.file_name().to_string_lossy().into_owned(),
                                fs::read(f.path()).unwrap(),
                            )
                        })
                        .collect()
                    })
                    .unwrap_or_default();
                v.sort();
                v
            };
            let (want, have) = (list(&fresh), list(&committed));
            if want != have {
                stale.push(dir);
            }
        }
        assert!(
            stale.is_empty(),
            "generated files are stale in {stale:?}: run `TEAMCTL_BLESS=1 cargo test generated`"
        );
    }
}
