//! The command line: the clap root, the global flags, dispatch to the verbs, the context they
//! get, and what they share (output, terminal safety, env names, signals, the quick exit, the
//! answering helpers). The only place that maps library errors to exit codes ([`exit_code`]).
//! It imports the library (`teamctl`) and nothing imports it.

pub(crate) mod answer;
pub(crate) mod args;
pub(crate) mod bridging;
pub(crate) mod by_policy;
pub(crate) mod cmd;
#[cfg(test)]
mod command_pages;
pub(crate) mod compose;
pub(crate) mod context;
pub(crate) mod env;
pub(crate) mod going;
pub(crate) mod launch;
pub(crate) mod merging;
pub(crate) mod otel;
pub(crate) mod output;
pub(crate) mod quick_exit;
pub(crate) mod record;
pub(crate) mod sandboxed;
pub(crate) mod signals;
pub(crate) mod term;
pub(crate) mod tui;

use anyhow::Result;
use clap::{CommandFactory, Parser, Subcommand};

use crate::cli::cmd::{
    approve, ask, bridge, completions, create, delete, deny, diff, doctor, export, inbox, log, man,
    merge, pending, pr, prepare, redeliver, report, resume, run, send, serve, shutdown, status,
    tasks, top, wait, watch,
};
use crate::cli::context::{Ctx, GlobalArgs};
use crate::cli::output::Output;

const ABOUT: &str = "Work with Claude Code agent teams from a shell, a cron job or CI";

const LONG_ABOUT: &str = "Work with Claude Code agent teams from a shell, a cron job or CI.

teamctl reads and writes the files a running Claude Code team uses, under the config dir \
($CLAUDE_CONFIG_DIR, default ~/.claude): `teams/<team>/config.json` (the members), \
`teams/<team>/inboxes/<member>.json` (each member's mailbox, a JSON array that its Claude Code \
polls once a second) and `tasks/<team>/<id>.json` (the shared task list). It takes Claude Code's \
own lock directories, replaces files atomically and reads every write back, so it never loses or \
corrupts a message Claude Code wrote. Nothing runs in the background: every command reads and \
writes those files and exits.

Names: a team name matches `^[a-z0-9-]+$` (Claude Code stores a team's config and its inboxes \
under two different sanitisers; only such names map to one folder), a member name \
`^[A-Za-z0-9_-]{1,64}$`; anything else is refused before a file is touched (exit 2). No symlinks \
under the config dir: Claude Code builds some lock paths from strings and others from realpath, \
and with a symlink the two disagree; teamctl follows none below the config dir (nor reads a FIFO, \
socket or device there): the command that needs such a file fails, and `teamctl doctor` reports \
them.

Which team: --team (TEAMCTL_TEAM), else the only team that has a config.json, else the one team \
whose lead's cwd is the current directory; otherwise an error lists the teams.

Your identity: TEAMCTL_FROM if set; otherwise team-lead in a team teamctl leads (one made by \
`teamctl create`: teammates report to their lead, so `teamctl inbox` shows their reports and \
idle_notifications, and `teamctl send` speaks as their lead); otherwise user. It is the sender \
of `send` and `ask`, the inbox `inbox` reads by default, the owner `tasks --mine` means, the \
claimant of `tasks claim` and the assignedBy of task assignments.

Durations (--lock-timeout, --timeout, --wait, --since, --idle-after, …): a number with a unit, \
ms, s, m, h, d (also spelled out: min, hours, days, …), combined (`1h 30m`), fractions (`1.5s`), \
or a bare number of seconds (`30`).

What teammates write is untrusted: human output shows control characters (escape sequences, \
bidi overrides, newlines inside a field) as visible escapes such as \\e and \\u{202e}, and \
--json keeps the exact text. A replaced file keeps its permission bits; teamctl's sent log is \
private (0600).";

const AFTER_HELP: &str = "Environment:
  CLAUDE_CONFIG_DIR     Claude Code's config dir (--claude-dir), default $HOME/.claude
  TEAMCTL_TEAM          the team (--team)
  TEAMCTL_FROM          your identity (above); default team-lead in a team teamctl leads, else
                        user
  TEAMCTL_LOCK_TIMEOUT  how long to wait for a lock (--lock-timeout)
  TEAMCTL_CLAUDE_BIN    the claude binary `create` and `run` start (--claude-bin) and `doctor`
                        checks
  CLAUDE_CODE_TEAMMATE_COMMAND  read (never set) when looking for claude: Claude Code's own
                        teammate-binary override
  TEAMCTL_GH_BIN        the gh binary `pr` opens a pull request with, else gh on PATH
  TEAMCTL_BWRAP_BIN     the bubblewrap binary `create --sandbox` and `run --sandbox` confine
                        with, else bwrap on PATH
  PATH, HOME            where claude is looked for; passed to the teammates' panes
  TMUX_TMPDIR, TMUX     which tmux server `create`, `run`, `delete`, `status` and `wait` talk to
  TEAMCTL_TELEGRAM_TOKEN, TEAMCTL_SLACK_TOKEN  the bot token of `bridge telegram`, `bridge
                        slack` (never taken from the command line, never printed)
  TEAMCTL_WEBHOOK_SECRET  the shared HMAC secret of `bridge webhook` (likewise)
  TEAMCTL_SERVE_TOKEN   the access token of `serve`'s page (else one is made at start)
  TEAMCTL_DATA_DIR      where the sent log, `run`'s per-name locks (run/<name>.lock), the
                        index of the transcripts read (transcripts.json), the teammates'
                        worktrees, `merge`'s scratch worktrees (merges/), `bridge`'s journal
                        (bridge.jsonl), `serve`'s (serve.jsonl) and the journal of the restarts and resumes teamctl made
                        (actions.jsonl) live, default the user's data directory
                        (~/.local/share/teamctl)
  ANTHROPIC_API_KEY, IS_SANDBOX  read by `run` to tell whether the lead would stop at the API
                        key approval, or refuse --dangerously-skip-permissions as root; passed
                        to the lead's pane
  CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS  read only by `doctor`, to report whether agent teams
                        are enabled
  NO_COLOR              set and not empty: `top` draws without colour
  TERM                  dumb: `top` does not draw (exit 2)

Exit codes:
  0    success (an empty inbox too; also a retried send that found its message already there)
  1    the command failed: unknown team, recipient, task or request, a teammate that is gone
       (ask), a wait that can no longer succeed, a corrupt file, a foreign lock file, a refused
       claim, a rejected shutdown, I/O; create: the team already exists, another create of it
       is running, claude or tmux not found, or the result is failed; run: failed (a start-up
       dialog, a permission prompt, the lead exited, claude or tmux not found, a run of that
       name already going); delete: a team teamctl does not lead, without --force
  2    usage error, including a team or member name that breaks the naming rules; writing as
       team-lead in a team teamctl does not lead, or as system, without --force (send, tasks
       add/update --owner, approve, deny, shutdown); top without a terminal
  3    the lock was not acquired before --lock-timeout (nothing was written); or watch
       --timeout passed before --count events, or send --wait, shutdown --wait, ask or wait ran
       out; run --timeout passed before the team's work was done
  4    read-back verification failed after a write
  5    ask: the teammate went idle without answering
  6    budget exceeded (wait, ask, run): the team's spend, read from its transcripts, crossed
       --max-cost or --max-tokens (run also ends the team, as at its timeout)
  7    (wait, run) --on-rate-limit exit: a member's API calls were refused (rate_limited,
       overloaded, api_error)
  8    (wait, run) --on-stall exit: a member stalled, its request got no answer or it never
       reports idle; or a restart past --max-restarts
  9    (wait, run) --on-dead exit: a member's pane or process is gone with work waiting; or a
       restart past --max-restarts
  10   merge (and wait, run --merge-into): some members were set aside (a conflict, a failed
       --check, a branch gone) and the others merged
  128+n  ended by signal n (130 for Ctrl-C, 143 for SIGTERM), after releasing its locks (run:
       after ending its lead)

Errors are printed once, as `error: …` on stderr, on one line; an error that carries several (a
failed create shows its panes' last lines) indents the further ones behind `  | `. Text quoted
from a file is neutralised as above. A closed stdout pipe (`teamctl inbox | head -1`) ends the
command quietly with 0.";

/// Work with Claude Code agent teams from a shell. `C` is the verbs: [`Command`] to run one,
/// [`EagerCommand`] to print help (see [`help_command`]).
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
pub(crate) struct Root<C: Subcommand> {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: C,
}

/// The command line as it is run: only the verb named is built.
pub(crate) type Cli = Root<Command>;

/// The verbs, one list for both of their forms.
macro_rules! verbs {
    ($($verb:ident($args:ty)),* $(,)?) => {
        /// Each verb's flags are added only when that verb is read (`defer`): building every
        /// verb's was a third of what a command executed before its own work.
        #[derive(Debug, Subcommand)]
        #[command(defer = true)]
        pub(crate) enum Command {
            $($verb($args)),*
        }

        /// The same verbs built at once, for help, mistakes, completions and pages. Built at
        /// once, a verb has its own flags before the global ones clap adds to it, so its help
        /// lists the global options last; a deferred verb gets them first.
        #[derive(Debug, Subcommand)]
        pub(crate) enum EagerCommand {
            $($verb($args)),*
        }
    };
}

verbs! {
    Create(create::CreateArgs),
    Run(run::RunArgs),
    Prepare(prepare::PrepareArgs),
    Report(report::ReportArgs),
    Delete(delete::DeleteArgs),
    Send(send::SendArgs),
    Inbox(inbox::InboxArgs),
    Tasks(tasks::TasksArgs),
    Status(status::StatusArgs),
    Top(top::TopArgs),
    Watch(watch::WatchArgs),
    Log(log::LogArgs),
    Ask(ask::AskArgs),
    Wait(wait::WaitArgs),
    Pending(pending::PendingArgs),
    Approve(approve::ApproveArgs),
    Deny(deny::DenyArgs),
    Bridge(bridge::BridgeArgs),
    Serve(serve::ServeArgs),
    Shutdown(shutdown::ShutdownArgs),
    Resume(resume::ResumeArgs),
    Redeliver(redeliver::RedeliverArgs),
    Doctor(doctor::DoctorArgs),
    Export(export::ExportArgs),
    Diff(diff::DiffArgs),
    Merge(merge::MergeArgs),
    Pr(pr::PrArgs),
    Completions(completions::CompletionsArgs),
    Man(man::ManArgs),
}

/// The whole command line with every verb built, its global options last in each verb's help.
pub(crate) fn help_command() -> clap::Command {
    Root::<EagerCommand>::command()
}

/// The command line to read `args` with: the root and only the verb they name, when global
/// options and then a verb are all that comes before it; else every verb (deferred). clap gives
/// every verb of the tree its own copy of each global option before it reads a word: for 28
/// verbs, a sixth of what `send` executed. What is read is the same either way, and help or a
/// mistake is read again with [`help_command`].
pub(crate) fn command_for(args: &[std::ffi::OsString]) -> clap::Command {
    match named_verb(args) {
        Some(verb) => Root::<NoVerb>::command().subcommand(verb),
        None => Cli::command(),
    }
}

/// The verb `args` name after the global options (`--team T`, `--json`, `--lock-timeout=5s`),
/// or `None` when anything else comes first (`-h`, `--version`, a mistake).
fn named_verb(args: &[std::ffi::OsString]) -> Option<clap::Command> {
    use clap::Args;
    let globals = GlobalArgs::augment_args(clap::Command::new("teamctl"));
    let mut words = args.iter().skip(1);
    while let Some(word) = words.next() {
        let word = word.to_str()?;
        let Some(long) = word.strip_prefix("--") else {
            if word.starts_with('-') {
                return None;
            }
            let verbs = Command::augment_subcommands(clap::Command::new("teamctl"));
            return verbs.find_subcommand(word).cloned();
        };
        let (name, inline) = long
            .split_once('=')
            .map_or((long, false), |(n, _)| (n, true));
        let global = globals
            .get_arguments()
            .find(|a| a.get_long() == Some(name))?;
        if global.get_action().takes_values() && !inline {
            words.next()?;
        }
    }
    None
}

/// No verb: the root alone, for [`command_for`] to add the one it reads.
#[derive(Debug)]
pub(crate) enum NoVerb {}

impl clap::FromArgMatches for NoVerb {
    fn from_arg_matches(_: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand))
    }

    fn update_from_arg_matches(&mut self, _: &clap::ArgMatches) -> Result<(), clap::Error> {
        match *self {}
    }
}

impl Subcommand for NoVerb {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        cmd
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        cmd
    }

    fn has_subcommand(_: &str) -> bool {
        false
    }
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
        Command::Prepare(args) => prepare::run(&ctx, args),
        Command::Report(args) => report::run(&ctx, args),
        Command::Delete(args) => delete::run(&ctx, args),
        Command::Send(args) => send::run(&ctx, args),
        Command::Inbox(args) => inbox::run(&ctx, args),
        Command::Tasks(args) => tasks::run(&ctx, args),
        Command::Status(args) => status::run(&ctx, args),
        Command::Top(args) => top::run(&ctx, args),
        Command::Watch(args) => watch::run(&ctx, args),
        Command::Log(args) => log::run(&ctx, args),
        Command::Ask(args) => ask::run(&ctx, args),
        Command::Wait(args) => wait::run(&ctx, args),
        Command::Pending(args) => pending::run(&ctx, args),
        Command::Approve(args) => approve::run(&ctx, args),
        Command::Deny(args) => deny::run(&ctx, args),
        Command::Bridge(args) => bridge::run(&ctx, args),
        Command::Serve(args) => serve::run(&ctx, args),
        Command::Shutdown(args) => shutdown::run(&ctx, args),
        Command::Resume(args) => resume::run(&ctx, args),
        Command::Redeliver(args) => redeliver::run(&ctx, args),
        Command::Doctor(args) => doctor::run(&ctx, args),
        Command::Export(args) => export::run(&ctx, args),
        Command::Diff(args) => diff::run(&ctx, args),
        Command::Merge(args) => merge::run(&ctx, args),
        Command::Pr(args) => pr::run(&ctx, args),
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
        Some(Error::Budget(_)) => 6,
        Some(Error::Stuck(why, _)) => why.code(),
        Some(Error::SetAside(_)) => 10,
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use clap::CommandFactory;
    use clap_complete::Shell;

    use super::{Cli, help_command};

    #[test]
    fn verify_cli() {
        Cli::command().debug_assert();
        help_command().debug_assert();
    }

    /// `command_for` builds the verb named and no other, and reads a command line as the whole
    /// tree does; what it cannot read plainly gets the whole tree.
    #[test]
    fn command_for_builds_only_the_verb_named() {
        let lines: [&[&str]; 9] = [
            &["send", "alice", "hi"],
            &["--team", "send", "send", "alice", "hi", "--json"],
            &["--json", "--lock-timeout=2s", "inbox", "--all"],
            &["--claude-dir", "/c", "tasks", "add", "a task"],
            &["--team=t", "wait", "--idle", "--timeout", "1m"],
            &["-h"],
            &["--version"],
            &["bogus"],
            &["--bogus", "send"],
        ];
        for line in lines {
            let args: Vec<std::ffi::OsString> = std::iter::once("teamctl")
                .chain(line.iter().copied())
                .map(Into::into)
                .collect();
            let cmd = super::command_for(&args);
            let verbs = cmd.get_subcommands().count();
            let plain = !line
                .iter()
                .any(|w| ["-h", "--version", "bogus", "--bogus"].contains(w));
            assert_eq!(verbs == 1, plain, "{line:?}: {verbs} verbs");
            let read = |cmd: clap::Command| {
                let parsed = cmd
                    .try_get_matches_from(&args)
                    .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
                format!("{parsed:?}")
            };
            assert_eq!(read(cmd), read(Cli::command()), "{line:?}");
        }
    }

    /// Completions, man pages and the command reference (`docs/commands/`) are generated from
    /// `Cli` and committed; this fails when they are stale. `TEAMCTL_BLESS=1 cargo test generated` rewrites them.
    #[test]
    fn generated_files_are_current() {
        let tmp = tempfile::tempdir().unwrap();
        let completions = tmp.path().join("completions");
        let man = tmp.path().join("man/man1");
        fs::create_dir_all(&completions).unwrap();
        fs::create_dir_all(&man).unwrap();
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            clap_complete::generate_to(shell, &mut help_command(), "teamctl", &completions)
                .unwrap();
        }
        clap_mangen::generate_to(help_command(), &man).unwrap();
        let commands = tmp.path().join("docs/commands");
        fs::create_dir_all(&commands).unwrap();
        for (name, text) in super::command_pages::pages(help_command()) {
            fs::write(commands.join(name), text).unwrap();
        }

        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let bless = std::env::var_os("TEAMCTL_BLESS").is_some();
        let mut stale = Vec::new();
        for dir in ["completions", "man/man1", "docs/commands"] {
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
