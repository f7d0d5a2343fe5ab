//! `doctor`'s checks: what on this machine and in a team's files would stop teamctl or Claude
//! Code from working, each with what to do about it. Read-only: no lock is taken, nothing is
//! written, created or removed (`doctor --fix` is [`crate::ops::redeliver::fix`]).
//!
//! Everything that comes from the environment (where the config dir came from, `PATH`, the
//! agent-teams variable, the caller's identity) is an explicit input.

use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::store::dir::{Kind, Loc};
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, MemberName, TeamName, is_valid_member};
use crate::store::{self, STALE_TEMP};
use crate::team::config::{self, TeamConfig};
use crate::team::model::MessageView;
use crate::team::tasks::Board;

/// The variable that turns agent teams on in Claude Code.
pub const AGENT_TEAMS_VAR: &str = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS";

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Fine.
    Ok,
    /// Works, but something is off or missing.
    Warn,
    /// Broken: Claude Code or teamctl will lose data or fail.
    Fail,
}

/// One finding (`doctor --json` `checks[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Which check: `config_dir`, `symlink`, `teams`, `team_config`, `format`, `claude`,
    /// `agent_teams`, `start_up_dialogs`, `tmux`, `lock`, `temp_file`, `inbox`, `task`, `member_inbox`, `identity`,
    /// `misaddressed`.
    pub check: &'static str,
    /// The verdict.
    pub level: Level,
    /// The team it is about, if any.
    pub team: Option<String>,
    /// The file it is about, if any.
    pub path: Option<String>,
    /// What was found, one line.
    pub message: String,
    /// The items behind the message, one per entry (e.g. every place searched for `claude`);
    /// `[]` when there are none.
    pub details: Vec<String>,
    /// What to do, when there is something to do.
    pub fix: Option<String>,
}

/// What the caller knows about the environment.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Where the config dir is.
    pub layout: Layout,
    /// Where its path came from (`--claude-dir`, `$CLAUDE_CONFIG_DIR`, the default).
    pub layout_source: String,
    /// Only this team; `None` checks every team.
    pub team: Option<TeamName>,
    /// The caller's name as given (`TEAMCTL_FROM`); `None` means the default: `team-lead` in a
    /// team teamctl leads, else `user`.
    pub identity: Option<String>,
    /// Where to look for `claude` (the same search `create` uses).
    pub claude: crate::host::resolve::Inputs,
    /// `PATH`, to find `tmux`.
    pub path_var: Option<OsString>,
    /// The value of [`AGENT_TEAMS_VAR`] in the environment, if set.
    pub agent_teams_env: Option<String>,
    /// The current time (file ages are measured from it).
    pub now: SystemTime,
    /// Claude Code's global config file (`.claude.json`), when it could be found.
    pub claude_json: Option<PathBuf>,
    /// `ANTHROPIC_API_KEY`, to check it has been approved.
    pub api_key: Option<String>,
    /// The current directory: the folder whose trust is checked.
    pub cwd: PathBuf,
    /// teamctl's sent log (its entries are no evidence of a team's inbox format).
    pub sent: Vec<crate::team::sentlog::Sent>,
    /// teamctl's private record of the teams it leads.
    pub leads: Option<crate::team::lead::Leads>,
}

/// Runs every check, in the order they are printed.
pub fn run(inputs: &Inputs) -> Vec<Check> {
    let mut out = Vec::new();
    let root = inputs.layout.root();
    let Ok(meta) = fs::metadata(root) else {
        out.push(fail(
            "config_dir",
            None,
            Some(root),
            format!(
                "config dir {} not found ({})",
                root.display(),
                inputs.layout_source
            ),
            "start Claude Code once, or point --claude-dir / CLAUDE_CONFIG_DIR at its config dir",
        ));
        out.extend(machine(inputs));
        return out;
    };
    if !meta.is_dir() {
        out.push(fail(
            "config_dir",
            None,
            Some(root),
            format!("{} is not a directory", root.display()),
            "point --claude-dir / CLAUDE_CONFIG_DIR at Claude Code's config dir",
        ));
        out.extend(machine(inputs));
        return out;
    }
    out.push(ok(
        "config_dir",
        None,
        Some(root),
        format!("config dir {} ({})", root.display(), inputs.layout_source),
    ));
    out.extend(machine(inputs));

    let teams = match &inputs.team {
        Some(t) => vec![t.clone()],
        None => team_dirs(&inputs.layout),
    };
    out.extend(symlinks(&inputs.layout));
    if teams.is_empty() {
        out.push(warn(
            "teams",
            None,
            Some(&inputs.layout.teams_dir()),
            "no teams found".into(),
            "ask Claude Code to create an agent team (with agent teams enabled)",
        ));
    }
    for t in &teams {
        out.extend(team_checks(inputs, t));
    }
    out
}

/// The `claude` binary, agent teams switched on, tmux.
fn machine(inputs: &Inputs) -> Vec<Check> {
    let mut out = Vec::new();
    let path = inputs.path_var.as_deref();
    match crate::host::resolve::find(&inputs.claude) {
        Ok(found) => {
            let bin = &found.path;
            let by = found.found_by.as_str();
            out.push(ok(
                "claude",
                None,
                Some(bin),
                match crate::host::resolve::version(bin, Duration::from_secs(5)) {
                    Some(v) => format!("claude {v} at {} (found by: {by})", bin.display()),
                    None => format!(
                        "claude at {} (found by: {by}; its version could not be read)",
                        bin.display()
                    ),
                },
            ));
        }
        Err(e) => {
            // The error's first line says what failed; the rest lists every place searched.
            let text = format!("{e:#}");
            let mut lines = text.lines();
            let mut c = warn(
                "claude",
                None,
                None,
                lines.next().unwrap_or_default().to_string(),
                "install Claude Code (npm install -g @anthropic-ai/claude-code), or set \
                 TEAMCTL_CLAUDE_BIN to its path",
            );
            c.details = lines.map(|l| l.trim().to_string()).collect();
            out.push(c);
        }
    }

    let settings = inputs.layout.root_loc().join("settings.json");
    let from_settings = settings
        .read()
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.get("env")?.get(AGENT_TEAMS_VAR).map(|x| match x {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        });
    let check = "agent_teams";
    match (&inputs.agent_teams_env, &from_settings) {
        (Some(v), _) if truthy(v) => out.push(ok(
            check,
            None,
            None,
            format!("agent teams enabled ({AGENT_TEAMS_VAR}={v} in the environment)"),
        )),
        (_, Some(v)) if truthy(v) => out.push(ok(
            check,
            None,
            Some(&settings),
            format!(
                "agent teams enabled ({AGENT_TEAMS_VAR}={v} in {})",
                settings.display()
            ),
        )),
        _ => out.push(warn(
            check,
            None,
            None,
            format!(
                "agent teams are not enabled ({AGENT_TEAMS_VAR} is not set to 1 in the \
                 environment or in settings.json)"
            ),
            &format!(
                "export {AGENT_TEAMS_VAR}=1, or add \"env\": {{\"{AGENT_TEAMS_VAR}\": \"1\"}} to {}",
                settings.display()
            ),
        )),
    }

    out.extend(start_up_dialogs(inputs, &settings));

    match find_on_path("tmux", path) {
        Some(bin) => out.push(ok(
            "tmux",
            None,
            Some(&bin),
            match version_of(&bin, "-V") {
                Some(v) => format!("{v} at {}", bin.display()),
                None => format!("tmux at {}", bin.display()),
            },
        )),
        None => out.push(warn(
            "tmux",
            None,
            None,
            "tmux not found on PATH: teammates in tmux panes cannot start (in-process ones can)"
                .into(),
            "install tmux (apt-get install tmux, brew install tmux)",
        )),
    }
    out
}

/// The start-up dialogs a Claude Code started unattended in the current directory would stop
/// at (as `run` checks them), with `teamctl prepare` as the fix; the bypass prompt is only
/// mentioned, as only --dangerously-skip-permissions needs it.
fn start_up_dialogs(inputs: &Inputs, settings: &Path) -> Vec<Check> {
    use crate::ops::run::{Dialog, blockers};
    let check = "start_up_dialogs";
    let Some(cj_path) = &inputs.claude_json else {
        return Vec::new();
    };
    let read = |p: &Path| {
        fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    let cj = read(cj_path);
    let settings = vec![(settings.to_path_buf(), read(settings))];
    let cwd = fs::canonicalize(&inputs.cwd).unwrap_or_else(|_| inputs.cwd.clone());
    let all = blockers(
        cj_path,
        cj.as_ref(),
        &settings,
        &cwd,
        inputs.api_key.as_deref(),
        true,
    );
    let bypass = all.iter().any(|b| b.dialog == Dialog::Bypass);
    let blocking: Vec<_> = all.iter().filter(|b| b.dialog != Dialog::Bypass).collect();
    let bypass_note = if bypass {
        "the bypass-permissions prompt: not accepted (only --dangerously-skip-permissions needs \
         it: add --skip-permissions)"
    } else {
        "the bypass-permissions prompt: accepted"
    };
    let prepare = format!(
        "teamctl prepare --cwd {}",
        crate::host::claude::shell_quote(&cwd.to_string_lossy())
    );
    if blocking.is_empty() {
        let mut c = ok(
            check,
            None,
            Some(cj_path),
            format!(
                "an unattended Claude Code in {} would ask nothing at start-up",
                cwd.display()
            ),
        );
        c.details = vec![bypass_note.to_string()];
        return vec![c];
    }
    let names: Vec<&str> = blocking.iter().map(|b| b.dialog.as_str()).collect();
    let mut c = warn(
        check,
        None,
        Some(cj_path),
        format!(
            "an unattended Claude Code (run, create, CI) in {} would stop at: {}",
            cwd.display(),
            names.join(", ")
        ),
        &format!("{prepare} (add --skip-permissions for --dangerously-skip-permissions)"),
    );
    c.details = blocking
        .iter()
        .map(|b| format!("{} ({})", b.dialog.title(), b.dialog.as_str()))
        .chain(std::iter::once(bypass_note.to_string()))
        .collect();
    vec![c]
}

/// Symlinks where team files live: the config dir itself, `teams/` and `tasks/` and
/// everything under them (never followed). Other parts of the config dir (`settings.json`,
/// `CLAUDE.md`, often linked to a dotfiles repository) are none of teamctl's business.
fn symlinks(layout: &Layout) -> Vec<Check> {
    let root = layout.root();
    let mut found = Vec::new();
    for p in [
        root.to_path_buf(),
        layout.teams_dir().to_path_buf(),
        layout.tasks_root().to_path_buf(),
    ] {
        if fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            found.push(p.clone());
            continue;
        }
        if p != root {
            walk_symlinks(&p, &mut |p| found.push(p));
        }
    }
    if found.is_empty() {
        return vec![ok(
            "symlink",
            None,
            None,
            "no symlinks where team files live".into(),
        )];
    }
    found
        .into_iter()
        .map(|p| {
            let team = p
                .strip_prefix(root)
                .ok()
                .and_then(|rel| rel.iter().nth(1))
                .and_then(|t| t.to_str())
                .map(String::from);
            let to = fs::read_link(&p)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            // The config dir itself is followed (it is the user's choice); below it teamctl
            // follows no symlink, so a command that needs the file fails.
            let level = if p == root { warn } else { fail };
            level(
                "symlink",
                team.as_deref(),
                Some(&p),
                format!("{} is a symlink (to {to})", p.display()),
                "replace it with what it points to (or point --claude-dir / CLAUDE_CONFIG_DIR at \
                 the real path): Claude Code takes some locks on the path as written and others \
                 on its realpath, so through a symlink two writers can miss each other's lock; \
                 below the config dir teamctl refuses to read or write through one",
            )
        })
        .collect()
}

/// Calls `found` for every symlink under `dir`, without following any.
fn walk_symlinks(dir: &Path, found: &mut dyn FnMut(PathBuf)) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        match e.file_type() {
            Ok(t) if t.is_symlink() => found(e.path()),
            Ok(t) if t.is_dir() => walk_symlinks(&e.path(), found),
            _ => {}
        }
    }
}

/// Every folder under `teams/` with a name teamctl accepts (with or without `config.json`).
fn team_dirs(layout: &Layout) -> Vec<TeamName> {
    let Ok(dir) = layout.teams_dir().open_dir() else {
        return Vec::new();
    };
    let mut v: Vec<TeamName> = dir
        .names()
        .unwrap_or_default()
        .iter()
        .filter_map(|n| TeamName::parse(n.to_str()?).ok())
        .filter(|t| {
            dir.stat(t.as_str())
                .is_ok_and(|i| i.is_some_and(|i| i.kind == Kind::Dir))
        })
        .collect();
    v.sort();
    v
}

fn team_checks(inputs: &Inputs, t: &TeamName) -> Vec<Check> {
    let layout = &inputs.layout;
    let mut out = Vec::new();
    let name = Some(t.as_str());
    let dir = layout.team_dir(t);
    if dir.open_dir().is_err() {
        out.push(fail(
            "teams",
            name,
            Some(&dir),
            format!("team '{t}' not found"),
            "check the name with `teamctl status --all-teams`",
        ));
        return out;
    }
    let config_path = layout.config_path(t);
    let config = match config::read_config(&config_path) {
        Ok(Some(c)) => {
            out.push(ok(
                "team_config",
                name,
                Some(&config_path),
                format!("team '{t}': {} member(s) in config.json", c.members.len()),
            ));
            Some(c)
        }
        Ok(None) if t.is_session_team() => {
            out.push(fail(
                "team_config",
                name,
                Some(&config_path),
                format!(
                    "team '{t}' has no config.json: Claude Code treats this session team as \
                     deleted and removes what is written to it"
                ),
                "remove the folder once no session uses it",
            ));
            None
        }
        Ok(None) => {
            out.push(warn(
                "team_config",
                name,
                Some(&config_path),
                format!("team '{t}' has no config.json: members cannot be checked"),
                "recreate the team in Claude Code, or remove the leftover folder",
            ));
            None
        }
        Err(e) => {
            out.push(fail(
                "team_config",
                name,
                Some(&config_path),
                format!("{e:#}"),
                "repair config.json (Claude Code cannot load the team either)",
            ));
            None
        }
    };

    // Inboxes: parse, schema, format generation (judged from what the consumers do).
    let inbox_dir = layout.inboxes_dir(t);
    let ours = crate::team::generation::Ours::new(
        &inputs.sent,
        t.as_str(),
        config.as_ref().and_then(|c| c.created_at),
    );
    let mut generations = (0usize, 0usize);
    let mut inbox_names = Vec::new();
    for path in files_in(&inbox_dir) {
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(member) = file.strip_suffix(".json") else {
            continue;
        };
        if !is_valid_member(member)
            || !path
                .stat()
                .is_ok_and(|i| i.is_some_and(|i| i.kind == Kind::File))
        {
            continue;
        }
        inbox_names.push(member.to_string());
        out.extend(inbox_check(t, &path, member, &ours, &mut generations));
    }
    let (current, legacy) = generations;
    out.push(match (current, legacy) {
        (0, 0) => ok(
            "format",
            name,
            None,
            format!(
                "team '{t}': inbox format not known yet (no message has been consumed, and no \
                 entry but teamctl's own carries msgV)"
            ),
        ),
        (_, 0) => ok(
            "format",
            name,
            None,
            format!(
                "team '{t}': current inbox format (a delivered message is deleted), Claude Code \
                 2.1.160 or later (msgV written from 2.1.196)"
            ),
        ),
        (0, _) => ok(
            "format",
            name,
            None,
            format!(
                "team '{t}': legacy inbox format (a delivered message stays with read: true), \
                 Claude Code 2.1.159 or earlier"
            ),
        ),
        _ => warn(
            "format",
            name,
            None,
            format!(
                "team '{t}': both inbox formats ({current} current, {legacy} legacy inboxes): \
                 members run different Claude Code versions"
            ),
            "run the same Claude Code version for the whole team",
        ),
    });

    // Tasks.
    let tasks_dir = layout.tasks_dir(t);
    match Board::load(&tasks_dir) {
        Ok(board) => {
            for s in &board.skipped {
                out.push(fail(
                    "task",
                    name,
                    Some(&s.path),
                    format!("invalid task {}: {}", s.path.display(), s.reason),
                    "fix the file or move it out of the folder: Claude Code skips or overwrites it",
                ));
            }
            if board.skipped.is_empty() {
                out.push(ok(
                    "task",
                    name,
                    Some(&tasks_dir),
                    format!("team '{t}': {} valid task(s)", board.tasks.len()),
                ));
            }
        }
        Err(e) => out.push(fail(
            "task",
            name,
            Some(&tasks_dir),
            format!("{e:#}"),
            "check the folder's permissions",
        )),
    }

    // Locks and temp files next to every file Claude Code writes.
    let folders = [dir.clone(), inbox_dir.clone(), tasks_dir.clone()];
    let before = out.len();
    for folder in &folders {
        out.extend(litter(inputs, t, folder));
    }
    if out.len() == before {
        out.push(ok(
            "lock",
            name,
            None,
            format!("team '{t}': no stale or foreign locks, no leftover temp files"),
        ));
    }

    // Members, and the caller.
    if let Some(cfg) = &config {
        for m in &cfg.members {
            if !is_valid_member(&m.name) {
                continue;
            }
            if !inbox_names.contains(&m.name) {
                out.push(warn(
                    "member_inbox",
                    name,
                    Some(&inbox_dir.join(format!("{}.json", m.name))),
                    format!(
                        "member '{}' of team '{t}' has no inbox file (nobody has written to \
                         it yet, or it was removed)",
                        m.name
                    ),
                    "nothing to do if the member is new: the first message creates it",
                ));
            }
        }
        let you_lead = inputs
            .leads
            .as_ref()
            .and_then(|l| l.find(layout, t).ok().flatten())
            .is_some_and(|r| cfg.recorded_by(&r));
        let (identity, source) = match inputs.identity.as_deref() {
            Some(id) => (id, "from TEAMCTL_FROM"),
            None if you_lead => (
                crate::team::config::LEAD,
                "the default in a team teamctl leads; TEAMCTL_FROM is not set",
            ),
            None => ("user", "the default; TEAMCTL_FROM is not set"),
        };
        out.push(identity_check(t, cfg, identity, source, you_lead));
    }
    if config.is_some()
        && let Ok(team) = config::Team::open(layout, t, inputs.leads.as_ref())
    {
        out.extend(misaddressed_checks(&team));
    }
    out
}

/// Inboxes no member reads that hold unread messages ([`crate::observe::misaddressed`]); an
/// unreadable one is the `inbox` check's.
fn misaddressed_checks(team: &config::Team) -> Vec<Check> {
    let t = Some(team.name.as_str());
    let found = crate::observe::misaddressed::scan(team).misaddressed;
    if found.is_empty() {
        let message = format!(
            "team '{}': no inbox that no member reads holds messages",
            team.name
        );
        return vec![ok("misaddressed", t, None, message)];
    }
    let fix = |m: &crate::observe::misaddressed::Misaddressed| match (&m.suggestion, m.certain) {
        (Some(s), true) => format!(
            "`teamctl redeliver {}` (to {s}), or `teamctl doctor --fix`",
            m.inbox
        ),
        _ => format!("`teamctl redeliver {} --to MEMBER`", m.inbox),
    };
    found
        .iter()
        .map(|m| {
            warn(
                "misaddressed",
                t,
                Some(Path::new(&m.path)),
                m.summary(),
                &fix(m),
            )
        })
        .collect()
}

fn inbox_check(
    t: &TeamName,
    path: &Loc,
    member: &str,
    ours: &crate::team::generation::Ours,
    generations: &mut (usize, usize),
) -> Vec<Check> {
    let name = Some(t.as_str());
    let entries = match store::read_inbox(path) {
        Ok(Some(e)) => e,
        Ok(None) => return Vec::new(),
        Err(e) => {
            return vec![fail(
                "inbox",
                name,
                Some(path),
                format!("{e:#}"),
                "repair the file or move it aside: Claude Code reads it as empty and its next \
                 write replaces it, losing every message in it",
            )];
        }
    };
    let evidence = ours.weigh(
        member,
        entries.iter().map(|e| {
            (
                e.get("read").and_then(Value::as_bool),
                e.contains_key("msgV"),
                e.get("msg_id").and_then(Value::as_str),
            )
        }),
    );
    match evidence.format() {
        Some(crate::team::generation::Format::Current) => generations.0 += 1,
        Some(crate::team::generation::Format::Legacy) => generations.1 += 1,
        None => {}
    }
    let mut bad = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if let Err(m) = MessageView::from_entry(e, "", member) {
            bad.push(format!("entry {i}: '{}' missing or not a string", m.field));
        }
    }
    if bad.is_empty() {
        return vec![ok(
            "inbox",
            name,
            Some(path),
            format!("inbox of '{member}': {} message(s), valid", entries.len()),
        )];
    }
    vec![fail(
        "inbox",
        name,
        Some(path),
        format!(
            "inbox of '{member}' has {} invalid entr{} ({})",
            bad.len(),
            if bad.len() == 1 { "y" } else { "ies" },
            bad.join("; ")
        ),
        "fix those entries: new Claude Code drops them and rewrites the file without them",
    )]
}

/// Lock paths and temp files in `folder`.
fn litter(inputs: &Inputs, t: &TeamName, folder: &Loc) -> Vec<Check> {
    let name = Some(t.as_str());
    let stale_after = LockOptions::default().stale;
    let mut out = Vec::new();
    for path in files_in(folder) {
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let age = meta
            .modified()
            .ok()
            .and_then(|m| inputs.now.duration_since(m).ok())
            .unwrap_or_default();
        if file.ends_with(".lock") && file != ".lock" {
            if !meta.is_dir() {
                out.push(fail(
                    "lock",
                    name,
                    Some(&path),
                    format!(
                        "{} is a file, not a lock directory: left by another tool, it blocks \
                         Claude Code's own writers of that file",
                        path.display()
                    ),
                    "remove it once no program uses it",
                ));
            } else if age > stale_after {
                out.push(warn(
                    "lock",
                    name,
                    Some(&path),
                    format!(
                        "stale lock {} ({} s old): its holder died",
                        path.display(),
                        age.as_secs()
                    ),
                    "nothing to do: the next writer reclaims it (or remove it: rmdir)",
                ));
            }
        } else if let Some((target, _)) = file.split_once(".tmp.") {
            let own = store::is_own_temp_name(file, target);
            let fix = if own && age > STALE_TEMP {
                "nothing to do: the next teamctl write of that file removes it".to_string()
            } else if own {
                "nothing to do if a writer is at work; teamctl removes it once it is a minute old"
                    .to_string()
            } else {
                "remove it once no program writes that file".to_string()
            };
            out.push(warn(
                "temp_file",
                name,
                Some(&path),
                format!(
                    "leftover temp file {} ({} s old)",
                    path.display(),
                    age.as_secs()
                ),
                &fix,
            ));
        }
    }
    out
}

/// Whether `identity` can be answered in team `t`; `source` says where the name came from.
fn identity_check(
    t: &TeamName,
    cfg: &TeamConfig,
    identity: &str,
    source: &str,
    teamctl_leads: bool,
) -> Check {
    let name = Some(t.as_str());
    // In a team teamctl leads, you are its lead: teammates report to `team-lead`.
    let you_lead = teamctl_leads && identity == crate::team::config::LEAD;
    let reserved = MemberName::parse(identity).is_ok_and(|m| m.is_reserved()) && !you_lead;
    if cfg.member(identity).is_some() && !reserved {
        return ok(
            "identity",
            name,
            None,
            format!(
                "you are '{identity}' ({source}), a member of team '{t}': teammates can reply \
                 to you"
            ),
        );
    }
    let why = if reserved {
        format!(
            "'{identity}' is a name Claude Code reserves: new teammates cannot message it, so \
             replies to you are lost"
        )
    } else {
        format!("'{identity}' is not a member of team '{t}': teammates cannot find you by name")
    };
    warn(
        "identity",
        name,
        None,
        format!("you are '{identity}' ({source}): {why}"),
        "set TEAMCTL_FROM (or --from) to a member name listed in config.json",
    )
}

/// Files and folders directly in `dir`, sorted; none when it cannot be listed.
/// The entries of the folder `dir` (reached without following a symlink), sorted.
fn files_in(dir: &Loc) -> Vec<Loc> {
    let mut v: Vec<Loc> = dir
        .open_dir()
        .and_then(|d| d.names())
        .map(|names| names.into_iter().map(|n| dir.join(n)).collect())
        .unwrap_or_default();
    v.sort_by(|a, b| a.path().cmp(b.path()));
    v
}

/// The first executable file called `name` in the folders of `path_var` (the `which` crate's
/// search; empty entries, the current directory, are skipped as in [`crate::host::resolve`]).
pub fn find_on_path(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path_var?)
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    let joined = std::env::join_paths(dirs).ok()?;
    which::which_in_global(name, Some(joined)).ok()?.next()
}

/// The first line `bin <flag>` prints, waiting at most 5 s (see
/// [`crate::host::resolve::first_line`]).
fn version_of(bin: &Path, flag: &str) -> Option<String> {
    let (_, line) = crate::host::resolve::first_line(bin, flag, Duration::from_secs(5))?;
    (!line.is_empty()).then_some(line)
}

/// Claude Code's idea of a true environment value: `1`, `true`, `yes`, `on` (any case).
pub fn truthy(v: &str) -> bool {
    ["1", "true", "yes", "on"]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(v.trim()))
}

fn check(
    check: &'static str,
    level: Level,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
    fix: Option<&str>,
) -> Check {
    Check {
        check,
        level,
        team: team.map(String::from),
        path: path.map(|p| p.display().to_string()),
        message,
        details: Vec::new(),
        fix: fix.map(String::from),
    }
}

fn ok(c: &'static str, team: Option<&str>, path: Option<&Path>, message: String) -> Check {
    check(c, Level::Ok, team, path, message, None)
}

fn warn(
    c: &'static str,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
    fix: &str,
) -> Check {
    check(c, Level::Warn, team, path, message, Some(fix))
}

fn fail(
    c: &'static str,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
    fix: &str,
) -> Check {
    check(c, Level::Fail, team, path, message, Some(fix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthy_values() {
        for t in ["1", "true", "TRUE", "yes", "on", " 1 "] {
            assert!(truthy(t), "{t}");
        }
        for f in ["", "0", "false", "no", "off", "2"] {
            assert!(!truthy(f), "{f}");
        }
    }

    #[test]
    fn path_lookup_needs_an_executable_file() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(b.join("tool")).unwrap();
        fs::write(a.join("tool"), "").unwrap();
        let path = std::env::join_paths([&b, &a]).unwrap();
        assert_eq!(find_on_path("tool", Some(&path)), None, "not executable");
        fs::set_permissions(a.join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_on_path("tool", Some(&path)), Some(a.join("tool")));
        assert_eq!(find_on_path("tool", None), None);
    }
}
