//! The command line's root: the program's help and the checks on the generated files.

use clap::Parser;

use crate::cmd::{Command, GlobalArgs};

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
