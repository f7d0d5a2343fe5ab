//! One team's checks, in the order they are printed: its folder, config.json, the inboxes and
//! their format, the tasks, locks and temp files, the members' inboxes, the caller's identity,
//! the lead's session, the inboxes no member reads, the teammates that never report idle.

use super::finding::{Check, fail, ok, warn};
use super::inbox::inboxes;
use super::inputs::Inputs;
use super::lead::lead_session_checks;
use super::litter::team_litter;
use super::members::unreported_checks;
use super::misaddressed::misaddressed_checks;
use crate::store::paths::{Layout, MemberName, TeamName, is_valid_member};
use crate::team::config::{self, TeamConfig, recorded_lead};
use crate::team::tasks::Board;

/// Every check of team `t`.
pub(super) fn team_checks(inputs: &Inputs, t: &TeamName) -> Vec<Check> {
    let layout = &inputs.layout;
    let dir = layout.team_dir(t);
    if dir.open_dir().is_err() {
        return vec![fail(
            "teams",
            Some(t.as_str()),
            Some(&dir),
            format!("team '{t}' not found"),
            "check the name with `teamctl status --all-teams`",
        )];
    }
    let (found, config) = team_config(layout, t);
    let mut out = vec![found];
    let (inbox_checks, inbox_names) = inboxes(inputs, t, config.as_ref());
    out.extend(inbox_checks);
    out.extend(tasks(layout, t));
    out.extend(team_litter(inputs, t));
    if let Some(cfg) = &config {
        out.extend(member_inboxes(layout, t, cfg, &inbox_names));
        out.push(caller(inputs, t, cfg));
        out.extend(lead_session_checks(inputs, t, cfg));
        out.extend(misaddressed_checks(inputs, t));
        out.extend(unreported_checks(inputs, t));
    }
    out
}

/// The team's `config.json`: read, missing (deleted for a session team) or broken.
fn team_config(layout: &Layout, t: &TeamName) -> (Check, Option<TeamConfig>) {
    let name = Some(t.as_str());
    let config_path = layout.config_path(t);
    match config::read_config(&config_path) {
        Ok(Some(c)) => {
            let found = ok(
                "team_config",
                name,
                Some(&config_path),
                format!("team '{t}': {} member(s) in config.json", c.members.len()),
            );
            (found, Some(c))
        }
        Ok(None) if t.is_session_team() => {
            let found = fail(
                "team_config",
                name,
                Some(&config_path),
                format!(
                    "team '{t}' has no config.json: Claude Code treats this session team as \
                     deleted and removes what is written to it"
                ),
                "remove the folder once no session uses it",
            );
            (found, None)
        }
        Ok(None) => {
            let found = warn(
                "team_config",
                name,
                Some(&config_path),
                format!("team '{t}' has no config.json: members cannot be checked"),
                "recreate the team in Claude Code, or remove the leftover folder",
            );
            (found, None)
        }
        Err(e) => {
            let found = fail(
                "team_config",
                name,
                Some(&config_path),
                format!("{e:#}"),
                "repair config.json (Claude Code cannot load the team either)",
            );
            (found, None)
        }
    }
}

/// The team's task files: each one valid.
fn tasks(layout: &Layout, t: &TeamName) -> Vec<Check> {
    let name = Some(t.as_str());
    let tasks_dir = layout.tasks_dir(t);
    let mut out = Vec::new();
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
    out
}

/// A warning for each member of `config.json` without an inbox file.
fn member_inboxes(
    layout: &Layout,
    t: &TeamName,
    cfg: &TeamConfig,
    inbox_names: &[String],
) -> Vec<Check> {
    let inbox_dir = layout.inboxes_dir(t);
    cfg.members
        .iter()
        .filter(|m| is_valid_member(&m.name) && !inbox_names.contains(&m.name))
        .map(|m| {
            warn(
                "member_inbox",
                Some(t.as_str()),
                Some(&inbox_dir.join(format!("{}.json", m.name))),
                format!(
                    "member '{}' of team '{t}' has no inbox file (nobody has written to \
                     it yet, or it was removed)",
                    m.name
                ),
                "nothing to do if the member is new: the first message creates it",
            )
        })
        .collect()
}

/// The caller's identity in team `t`: as given, or the default (`team-lead` in a team teamctl
/// leads, else `user`).
fn caller(inputs: &Inputs, t: &TeamName, cfg: &TeamConfig) -> Check {
    let you_lead = recorded_lead(&inputs.layout, t, Some(cfg), inputs.records.leads())
        .ok()
        .flatten()
        .is_some();
    let (identity, source) = match inputs.identity.as_deref() {
        Some(id) => (id, "from TEAMCTL_FROM"),
        None if you_lead => (
            crate::team::config::LEAD,
            "the default in a team teamctl leads; TEAMCTL_FROM is not set",
        ),
        None => ("user", "the default; TEAMCTL_FROM is not set"),
    };
    identity_check(t, cfg, identity, source, you_lead)
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
