//! The context every verb gets: the config dir, the team, the clock, the lock deadline, the
//! identity and teamctl's own data dir, decided once from the command line and the environment.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use clap::Args;
use teamctl::store::lock::LockOptions;
use teamctl::store::paths::Layout;
use teamctl::team::config::{self, Team};
use teamctl::team::records::Records;
use teamctl::time;

use crate::cli::env;
use crate::cli::output::Output;

/// Flags every subcommand takes (shown last in each verb's help).
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Print one JSON document (JSON Lines for streams) instead of human output
    #[arg(long, global = true)]
    #[arg(
        help = "Print JSON (JSON Lines for streams) instead of human output",
        long_help
    )]
    pub(crate) json: bool,

    /// Claude Code's config dir [default: ~/.claude]
    #[arg(long, global = true, value_name = "DIR", env = env::CLAUDE_CONFIG_DIR)]
    #[arg(help = "Claude Code's dir [default: ~/.claude]", long_help)]
    pub(crate) claude_dir: Option<PathBuf>,

    /// Team to work on [default: the only team, or the one led from the current directory]
    #[arg(long, global = true, value_name = "NAME", env = env::TEAM)]
    #[arg(help = "Team to work on", long_help)]
    pub(crate) team: Option<String>,

    /// How long to wait for a file's lock before giving up with exit code 3
    #[arg(
        long,
        global = true,
        value_name = "DURATION",
        default_value = "5s",
        env = env::LOCK_TIMEOUT
    )]
    #[arg(help = "Lock wait (then exit 3)", long_help)]
    pub(crate) lock_timeout: String,
}

/// Test only (`TEAMCTL_TEST_FAULTS=top_panic`): the file watcher panics at the first change, to
/// show that a panic on any thread gives the terminal back.
pub(crate) static TEST_PANIC: AtomicBool = AtomicBool::new(false);

/// What the command line and the environment decided, as explicit inputs for the library.
pub(crate) struct Ctx {
    pub(crate) layout: Layout,
    /// Where the config dir's path came from, for `doctor`.
    pub(crate) layout_source: String,
    team: Option<String>,
    pub(crate) out: Output,
    pub(crate) now: DateTime<Utc>,
    pinned: bool,
    pub(crate) lock: LockOptions,
    /// `TEAMCTL_FROM`, when set (see [`Ctx::identity`]).
    from_env: Option<String>,
    /// teamctl's own records (its sent log, its record of the teams it leads, the transcript
    /// index), in its data dir: `$TEAMCTL_DATA_DIR`, else `teamctl` in the user's data
    /// directory (`~/.local/share/teamctl` on Linux).
    pub(crate) records: Records,
    cwd: PathBuf,
}

impl Ctx {
    pub(crate) fn new(g: &GlobalArgs) -> Result<Ctx> {
        // A typed empty value is a mistake, never a request for the default (an empty
        // variable, as shells leave them, still means unset).
        let empty_env = |var: &str| std::env::var_os(var).is_some_and(|v| v.is_empty());
        if g.team.as_deref() == Some("") && !empty_env(env::TEAM) {
            return Err(teamctl::error::usage(
                "--team needs a team name (an empty one names no team)",
            ));
        }
        if g.claude_dir
            .as_ref()
            .is_some_and(|d| d.as_os_str().is_empty())
            && !empty_env(env::CLAUDE_CONFIG_DIR)
        {
            return Err(teamctl::error::usage(
                "--claude-dir needs a folder (an empty one names none)",
            ));
        }
        let (root, layout_source) = match &g.claude_dir {
            Some(d) if !d.as_os_str().is_empty() => {
                // clap fills the flag from the variable too; tell them apart for `doctor`.
                let from_env =
                    std::env::var_os(env::CLAUDE_CONFIG_DIR).is_some_and(|v| v == d.as_os_str());
                let source = if from_env {
                    "from $CLAUDE_CONFIG_DIR"
                } else {
                    "from --claude-dir"
                };
                (d.clone(), source)
            }
            _ => (
                dirs::home_dir()
                    .context("could not find the home directory; pass --claude-dir")?
                    .join(".claude"),
                "the default, ~/.claude",
            ),
        };
        if let Ok(spec) = std::env::var(env::TEST_FAULTS) {
            teamctl::store::set_faults(test_faults(&spec)?);
        }
        let pinned = std::env::var(env::NOW).ok();
        let now = match &pinned {
            Some(s) => DateTime::parse_from_rfc3339(s)
                .with_context(|| format!("invalid {}: {s}", env::NOW))?
                .with_timezone(&Utc),
            None => Utc::now(),
        };
        let data_dir = std::env::var_os(env::DATA_DIR)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| dirs::data_dir().map(|d| d.join("teamctl")));
        Ok(Ctx {
            // Absolute: file notifications name absolute paths (a relative config dir saw no
            // change in `watch`, `wait` and `ask`).
            layout: Layout::new(std::path::absolute(&root).unwrap_or(root)),
            layout_source: layout_source.to_string(),
            team: g.team.clone().filter(|t| !t.is_empty()),
            out: Output { json: g.json },
            now,
            pinned: pinned.is_some(),
            lock: LockOptions::with_timeout(time::parse_duration(&g.lock_timeout)?),
            from_env: std::env::var(env::FROM).ok().filter(|s| !s.is_empty()),
            records: Records::in_dir(data_dir.as_deref()),
            cwd: std::env::current_dir().unwrap_or_default(),
        })
    }

    /// Whether the config dir was chosen (`--claude-dir` or `CLAUDE_CONFIG_DIR`) rather than
    /// the default `~/.claude`.
    pub(crate) fn config_dir_chosen(&self) -> bool {
        !self.layout_source.starts_with("the default")
    }

    /// Claude Code's global config file, as Claude Code finds it: a legacy
    /// `<config dir>/.config.json` when that file exists, else `.claude.json` in the config dir
    /// when one was chosen (Claude Code keeps it there only when `CLAUDE_CONFIG_DIR` is set),
    /// else `~/.claude.json`. Absolute.
    pub(crate) fn claude_json(&self) -> Result<PathBuf> {
        let root = std::path::absolute(self.layout.root())
            .with_context(|| format!("could not resolve {}", self.layout.root().display()))?;
        let legacy = root.join(".config.json");
        if legacy.is_file() {
            return Ok(legacy);
        }
        if self.config_dir_chosen() {
            return Ok(root.join(".claude.json"));
        }
        Ok(dirs::home_dir()
            .context("could not find the home directory; pass --claude-dir")?
            .join(".claude.json"))
    }

    /// The team named with `--team` or `TEAMCTL_TEAM`, if any (not resolved).
    pub(crate) fn team_name(&self) -> Option<&str> {
        self.team.as_deref()
    }

    /// The clock: `TEAMCTL_NOW` when pinned (tests), else the real time.
    pub(crate) fn clock(&self) -> DateTime<Utc> {
        if self.pinned { self.now } else { Utc::now() }
    }

    /// The clock as a function another thread can own.
    pub(crate) fn clock_fn(&self) -> impl Fn() -> DateTime<Utc> + Send + Sync + 'static {
        let (pinned, now) = (self.pinned, self.now);
        move || if pinned { now } else { Utc::now() }
    }

    /// Whether a team was named (`--team` or `TEAMCTL_TEAM`).
    pub(crate) fn team_given(&self) -> bool {
        self.team.is_some()
    }

    /// `TEAMCTL_FROM`, when set.
    pub(crate) fn identity_env(&self) -> Option<&str> {
        self.from_env.as_deref()
    }

    /// Your name in `team`: `TEAMCTL_FROM`, else `team-lead` in a team teamctl leads, else
    /// `user`.
    pub(crate) fn identity(&self, team: &Team) -> String {
        self.from_env
            .clone()
            .unwrap_or_else(|| team.default_identity().to_string())
    }

    /// teamctl's sent log, read; an unreadable log is an error.
    pub(crate) fn sent_entries(&self) -> Result<Vec<teamctl::team::sentlog::Sent>> {
        teamctl::team::sentlog::entries(self.records.sent_log())
    }

    /// Everything teamctl's sent log holds (empty when there is no log or it cannot be read:
    /// it only sharpens judgements, such as which inbox format a team runs).
    pub(crate) fn sent(&self) -> Vec<teamctl::team::sentlog::Sent> {
        self.records
            .sent_log()
            .and_then(|l| l.entries().ok())
            .unwrap_or_default()
    }

    /// How this command writes an entry stamped `now`: with its lock timeout, recorded in
    /// teamctl's sent log.
    pub(crate) fn writing(&self, now: DateTime<Utc>) -> teamctl::team::mailbox::Writing<'_> {
        teamctl::team::mailbox::Writing {
            now,
            lock: &self.lock,
            log: self.records.sent_log(),
        }
    }

    /// The team this command addresses, opened.
    pub(crate) fn team(&self) -> Result<Team> {
        Team::open(&self.layout, &self.team_resolved()?, &self.records)
    }

    /// The name of the team this command addresses (the team folder may be gone).
    pub(crate) fn team_resolved(&self) -> Result<teamctl::store::paths::TeamName> {
        config::resolve(&self.layout, self.team.as_deref(), &self.cwd)
    }
}

/// Parses `TEAMCTL_TEST_FAULTS` (test-only): comma-separated `before_lock=<duration>`,
/// `after_lock=<duration>`, `before_reclaim=<duration>`, `after_mkdir=<duration>`,
/// `before_rename=<duration>`, `before_verify=<duration>`, `fail_write`, `between_moves=<duration>`
/// (a move between its two writes), `trace` (the lock's steps, printed at exit by
/// [`print_test_trace`]) and `top_panic` (top's file watcher panics at the first change).
fn test_faults(spec: &str) -> Result<teamctl::store::Faults> {
    let mut f = teamctl::store::Faults::default();
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        let dur = || time::parse_duration(value);
        match key {
            "before_lock" => f.before_lock = dur()?,
            "after_lock" => f.after_lock = dur()?,
            "before_reclaim" => f.before_reclaim = dur()?,
            "after_mkdir" => f.after_mkdir = dur()?,
            "before_rename" => f.before_rename = dur()?,
            "before_verify" => f.before_verify = dur()?,
            "fail_write" => f.fail_write = true,
            "between_moves" => f.between_moves = dur()?,
            "trace" => f.trace = true,
            "top_panic" => TEST_PANIC.store(true, Ordering::SeqCst),
            _ => anyhow::bail!("invalid {}: unknown fault '{key}'", env::TEST_FAULTS),
        }
    }
    Ok(f)
}

/// Prints the lock's steps recorded under `TEAMCTL_TEST_FAULTS=trace` to stderr, one line
/// each (numbers and fixed words only); nothing otherwise.
pub(crate) fn print_test_trace() {
    for line in teamctl::store::take_trace() {
        eprintln!("teamctl trace: {line}");
    }
}
