//! `teamctl prepare`: settle Claude Code's start-up dialogs for an unattended session.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::ops::prepare::{self, Change, FileReport, Request};

use crate::cli::context::Ctx;

/// Settle Claude Code's start-up dialogs for sessions nobody watches
///
/// Writes exactly the settings that keep an unattended Claude Code (a lead started by `run`, a
/// teammate started by `create`, a CI job, a container) from stopping at a start-up dialog:
/// onboarding done ("hasCompletedOnboarding"), the API key in ANTHROPIC_API_KEY approved (its
/// last 20 characters in "customApiKeyResponses"."approved", as Claude Code records them; the
/// key is never printed), each --cwd folder trusted ("projects"[<its real path>]
/// ."hasTrustDialogAccepted"), and with --skip-permissions the bypass-permissions prompt
/// accepted ("skipDangerousModePermissionPrompt" in settings.json). The first three go to
/// .claude.json: $CLAUDE_CONFIG_DIR/.claude.json when a config dir is chosen (--claude-dir or
/// CLAUDE_CONFIG_DIR), else ~/.claude.json.
///
/// It changes only those keys: every other key keeps its value and place, the files keep
/// their mode. It writes as Claude Code does, so a Claude Code starting at the same moment
/// loses nothing: .claude.json under its lock (.claude.json.lock, waited for politely up to
/// --lock-timeout), re-read under the lock, a backup in <config dir>/backups (at most one a
/// minute, five kept), replaced atomically and read back; a new .claude.json is made 0600. Then,
/// once the file has been quiet for half a second, it checks that the settings stayed and
/// writes them again if not: a Claude Code 2.1.332 that finds the lock held may answer with a
/// write of its own that skips the lock, made from a copy read before ours landed. Best run
/// before Claude Code starts. Both files are read and checked before either is written: a file
/// that does not parse, or holds a key of the wrong type, is refused (exit 1) and nothing is
/// written. It writes only inside the config dir: a .claude.json, settings.json or backups that
/// is a symlink leading out of it is refused too (a link that stays inside is followed, as
/// Claude Code does). A large .claude.json is parsed only where it changes. Running it again
/// changes nothing and says so. --dry-run says what it would change and writes nothing.
///
/// With --json: {"schema_version":1,"dry_run","changed","changes":[{"dialog","file","key",
/// "value"}],"files":[{"path","existed","action","reformatted","backup","writes"}],"notes":[…]}.
/// "dialog"
/// is onboarding, api_key, trust or bypass (the names `run` reports); "key" is the list of keys
/// from the top of the file; "value" is what was set (null for the API key); "action" is
/// created, replaced or unchanged; "reformatted" means the file was not in Claude Code's own
/// layout, so more bytes than the changed keys were rewritten; "writes" counts the writes (more
/// than one when a Claude Code starting at that moment dropped the settings with a write of its
/// own that skipped the lock, and they were written again).
///
/// Exit codes: 0 done (nothing to change too), 1 a file that does not parse, a symlink out of
/// the config dir or a --cwd that is not a folder (nothing written), 3 the lock stayed held
/// past --lock-timeout, 4 read-back verification failed.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  export ANTHROPIC_API_KEY=…            # the key the sessions will use
  teamctl prepare --cwd ~/src/app --skip-permissions
  teamctl run \"Review the open PRs\" --cwd ~/src/app --dangerously-skip-permissions
  teamctl prepare --cwd \"$GITHUB_WORKSPACE\" --dry-run --json | jq '.changes[].dialog'
  CLAUDE_CONFIG_DIR=/data/claude teamctl prepare --cwd /work   # a container's config volume")]
pub(crate) struct PrepareArgs {
    /// Trust this folder, as Claude Code's trust dialog would (repeatable)
    #[arg(long, value_name = "DIR")]
    cwd: Vec<PathBuf>,

    /// Also accept the bypass-permissions prompt (for --dangerously-skip-permissions)
    #[arg(long, visible_alias = "dangerously-skip-permissions")]
    #[arg(help = "Also accept the bypass prompt", long_help)]
    skip_permissions: bool,

    /// Say what would change; write nothing
    #[arg(long)]
    dry_run: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    dry_run: bool,
    changed: bool,
    changes: &'a [Change],
    files: &'a [FileReport],
    notes: &'a [String],
}

pub(crate) fn run(ctx: &Ctx, args: PrepareArgs) -> Result<()> {
    let root = std::path::absolute(ctx.layout.root())?;
    let req = Request {
        config_dir: root.clone(),
        claude_json: ctx.claude_json()?,
        settings: root.join("settings.json"),
        backups: root.join("backups"),
        api_key: std::env::var("ANTHROPIC_API_KEY").ok(),
        trust: args.cwd,
        skip_permissions: args.skip_permissions,
        lock: ctx.lock,
        settle: Duration::from_millis(500),
        now: SystemTime::now(),
    };
    let mut done = prepare::prepare(&req, !args.dry_run)?;
    if args.skip_permissions && root_without_sandbox() {
        done.notes.push(
            "running as root: Claude Code refuses --dangerously-skip-permissions unless \
             IS_SANDBOX=1 is in its environment"
                .into(),
        );
    }
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            dry_run: done.dry_run,
            changed: !done.changes.is_empty(),
            changes: &done.changes,
            files: &done.files,
            notes: &done.notes,
        });
    }
    for note in &done.notes {
        eprintln!("note: {note}");
    }
    let verb = if done.dry_run { "would set" } else { "set" };
    for c in &done.changes {
        let what = match &c.value {
            Some(v) => format!("{verb} {} = {v}", key_path(&c.key)),
            None => format!(
                "{} the API key in ANTHROPIC_API_KEY to {}",
                if done.dry_run { "would add" } else { "added" },
                key_path(&c.key)
            ),
        };
        ctx.out.line(&format!(
            "{}: {what} in {}",
            c.dialog.as_str(),
            c.file.display()
        ))?;
    }
    for f in done.files.iter().filter(|f| f.reformatted) {
        eprintln!(
            "note: {} was not in Claude Code's own layout; it {} rewritten in it",
            f.path.display(),
            if done.dry_run { "would be" } else { "was" }
        );
    }
    let written: Vec<&FileReport> = done
        .files
        .iter()
        .filter(|f| f.action != "unchanged")
        .collect();
    if done.changes.is_empty() {
        return ctx
            .out
            .line("nothing to change: the settings are already in place");
    }
    if done.dry_run {
        return ctx.out.line(&format!(
            "dry run: {} change(s), nothing written",
            done.changes.len()
        ));
    }
    let backups: Vec<String> = written
        .iter()
        .filter_map(|f| f.backup.as_ref().map(|b| b.display().to_string()))
        .collect();
    ctx.out.line(&format!(
        "prepared: {} change(s) in {} file(s){}",
        done.changes.len(),
        written.len(),
        if backups.is_empty() {
            String::new()
        } else {
            format!(" (backup: {})", backups.join(", "))
        }
    ))
}

/// `projects["/work"].hasTrustDialogAccepted`: plain keys dotted, others quoted.
fn key_path(keys: &[String]) -> String {
    let mut out = String::new();
    for (i, k) in keys.iter().enumerate() {
        let plain = !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        match (plain, i) {
            (true, 0) => out.push_str(k),
            (true, _) => out.push_str(&format!(".{k}")),
            (false, _) => out.push_str(&format!("[{}]", serde_json::Value::from(k.as_str()))),
        }
    }
    out
}

fn root_without_sandbox() -> bool {
    teamctl::host::proc::runs_as_root()
        && std::env::var_os("IS_SANDBOX").is_none_or(|v| v.is_empty())
}
