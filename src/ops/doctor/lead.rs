//! The team's `leadSessionId` against its lead's sessions (`lead_session`): after `claude
//! --resume` or `/clear`, Claude Code can leave the id of a session its lead no longer runs in
//! `config.json` (anthropics/claude-code#90332, #86174), and then whatever looks for the lead by
//! it (Claude Code's own `ListAgents`, teamctl's transcripts of the lead) finds the old one.
//!
//! The lead's session now is, while it runs, the one its `sessions/<pid>.json` names (Claude
//! Code's own record of a running session: `sessionId`, `procStart`); otherwise the newest
//! session in the lead's project folder that holds a message from a teammate of the team
//! ([`crate::team::transcript::locate::lead_sessions`]). A team teamctl leads has no Claude Code
//! lead: not checked.

use serde_json::Value;

use super::finding::{Check, ok, warn};
use super::inputs::Inputs;
use crate::host::proc::pid_alive;
use crate::store::paths::TeamName;
use crate::team::config::{Team, TeamConfig};
use crate::team::transcript::index::Index;
use crate::team::transcript::locate::{find_session, is_session_id, lead_sessions, project_dirs};

/// The `lead_session` check of team `t` (none for a team teamctl leads, or without a
/// `leadSessionId`).
pub(super) fn lead_session_checks(inputs: &Inputs, t: &TeamName, cfg: &TeamConfig) -> Vec<Check> {
    let Ok(team) = Team::open(&inputs.layout, t, &inputs.records) else {
        return Vec::new();
    };
    let Some(named) = cfg.lead_session_id.as_deref() else {
        return Vec::new();
    };
    if team.teamctl_leads() {
        return Vec::new();
    }
    let name = Some(t.as_str());
    let newest = running_session(inputs, cfg)
        .map(|s| {
            (
                s,
                "its running process's sessions/<pid>.json names it".to_string(),
            )
        })
        .or_else(|| newest_transcript(inputs, cfg, named));
    let Some((now, how)) = newest.filter(|(s, _)| s != named) else {
        let message = format!("team '{t}': leadSessionId {named} is its lead's newest session");
        return vec![ok("lead_session", name, None, message)];
    };
    let config = inputs.layout.config_path(t);
    vec![warn(
        "lead_session",
        name,
        Some(&config),
        format!(
            "team '{t}': leadSessionId names session {named}, but its lead's newest session is \
             {now} ({how}): after `claude --resume` or /clear Claude Code can keep the old id \
             (anthropics/claude-code#90332, #86174), and what looks for the lead by it finds \
             the old session"
        ),
        &format!(
            "end the lead and start it without --resume (a fresh session records its own id), \
             or set \"leadSessionId\" in {} to \"{now}\" (the lead may write the old id back \
             when it next changes the team: run `teamctl doctor` again)",
            config.display()
        ),
    )]
}

/// The session the team's lead process runs now, by `sessions/<pid>.json`, when it runs and
/// the file is that process's (its `procStart`).
fn running_session(inputs: &Inputs, cfg: &TeamConfig) -> Option<String> {
    let p = cfg.lead_process.as_ref()?;
    if pid_alive(p.pid, p.proc_start.as_deref()) != Some(true) {
        return None;
    }
    let path = inputs
        .layout
        .root_loc()
        .join("sessions")
        .join(format!("{}.json", p.pid));
    let v: Value = serde_json::from_slice(&path.read().ok()??).ok()?;
    let start = v.get("procStart").and_then(Value::as_str);
    if p.proc_start.is_some() && start.is_some() && start != p.proc_start.as_deref() {
        return None;
    }
    let id = v.get("sessionId")?.as_str()?;
    is_session_id(id).then(|| id.to_string())
}

/// The newest session in the lead's project folder that is the lead's of this team, when it
/// was written after the one `named` (or that one is nowhere), with how it was found.
fn newest_transcript(inputs: &Inputs, cfg: &TeamConfig, named: &str) -> Option<(String, String)> {
    let root = inputs.layout.root_loc();
    let mut warnings = Vec::new();
    let mut index = Index::load(inputs.records.data_dir());
    let (newest, at) = lead_sessions(root, cfg, &mut index, &mut warnings)
        .into_iter()
        .next()?;
    let stem = newest.name()?.to_str()?.strip_suffix(".jsonl")?.to_string();
    let cwd = cfg.lead().and_then(|m| m.cwd.as_deref()).unwrap_or("");
    let hint = project_dirs(root, cwd, &mut warnings);
    let old = find_session(root, named, &hint, &mut warnings);
    let old_at = old.and_then(|l| l.stat().ok().flatten()).map(|i| i.mtime);
    let how = match old_at {
        Some(_) => "the newest transcript in its folder holding its teammates' messages",
        None => "leadSessionId names no transcript; this one holds its teammates' messages",
    };
    old_at
        .is_none_or(|t| at > t)
        .then(|| (stem, how.to_string()))
}
