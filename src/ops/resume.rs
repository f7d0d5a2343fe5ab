//! Bringing a team teamctl leads back after a crash, a reboot or a closed terminal: every pane
//! teammate that is not running is started again on its last session, with its name, agent
//! id, colour and permission mode ([`crate::ops::rescue`]), and told to carry on with the task
//! it owns (a resumed teammate reads its inbox at once, but does not take up its task by
//! itself). What was resumed, and what was skipped and why, is reported.
//!
//! A Claude-led team (`run`) is resumed through its lead: `teamctl run --resume`.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::observe::keep::Stuck;
use crate::observe::reader::tmux_server;
use crate::observe::waiting::Waiting;
use crate::ops::rescue::Rescue;
use crate::team::actions::Kind;
use crate::team::config::Team;
use crate::team::tasks::Board;

/// What happened to one member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resumed {
    /// The member.
    pub name: String,
    /// `resumed`, `running` (left alone), `skipped` or `failed`.
    pub action: &'static str,
    /// Why (skipped, failed), or what was done.
    pub detail: String,
    /// Its new pane, when resumed.
    pub pane: Option<String>,
    /// The session it carries on, when resumed.
    pub session_id: Option<String>,
}

/// Starts every pane teammate of `team` that is not running again (see the module docs).
///
/// # Errors
/// A team teamctl does not lead (a Claude-led team is resumed with `run --resume`).
pub fn resume(team: &Team, rescue: &Rescue) -> Result<Vec<Resumed>> {
    if team.lead.is_none() {
        bail!(
            "teamctl does not lead team '{}': {}",
            team.name,
            if team.led_by_claude_code() {
                "a Claude-led team is resumed through its lead: `teamctl run --resume TEAM`"
            } else {
                "only a team made by `teamctl create` (in this config dir) can be resumed here"
            }
        );
    }
    let cfg = team.config.clone().unwrap_or_default();
    let lead = cfg.lead().map(|l| l.name.clone());
    let panes = cfg.members.iter().filter_map(|m| m.tmux_pane_id.as_deref());
    let live = tmux_server(team).liveness(panes);
    let board = Board::load(&team.layout.tasks_dir(&team.name)).unwrap_or_default();
    let mut out = Vec::new();
    for m in cfg
        .members
        .iter()
        .filter(|m| Some(&m.name) != lead.as_ref())
    {
        let pane = m.tmux_pane_id.as_deref().unwrap_or("");
        let entry = |action, detail: String| Resumed {
            name: m.name.clone(),
            action,
            detail,
            pane: None,
            session_id: None,
        };
        if m.backend_type.as_deref() == Some("in-process") || pane == "in-process" {
            out.push(entry(
                "skipped",
                "an in-process teammate runs inside its lead, which teamctl does not run".into(),
            ));
            continue;
        }
        if live.pane_alive(pane) == Some(true) {
            out.push(entry("running", format!("its pane {pane} runs")));
            continue;
        }
        // config.json may name another pane (a teammate can rewrite it): the pane teamctl
        // started it in, still running, says it runs.
        if let Some(p) = rescue.running_pane(&m.name) {
            out.push(entry("running", format!("its pane {p} runs")));
            continue;
        }
        out.push(match rescue.start_again(&m.name) {
            Ok(started) => {
                let task = board
                    .tasks
                    .iter()
                    .find(|t| t.owner.as_deref() == Some(&m.name) && t.status == "in_progress")
                    .map(|t| (t.id.clone(), t.subject.clone()));
                let stuck = Stuck {
                    member: m.name.clone(),
                    reason: Waiting::Dead,
                    detail: None,
                    task,
                    last_seen: None,
                };
                let mut detail = started.to_string();
                let why = "the team stopped";
                if let Some(warning) = rescue.journal(&started, Kind::Resume, why) {
                    detail.push_str(&format!("; {warning}"));
                }
                match rescue.welcome_back(&stuck, why) {
                    Ok(sent) => detail.push_str(&format!("; {sent}")),
                    Err(e) => detail.push_str(&format!("; the message after it failed: {e:#}")),
                }
                Resumed {
                    pane: Some(started.pane),
                    session_id: started.session_id,
                    ..entry("resumed", detail)
                }
            }
            Err(e) => entry("failed", format!("{e:#}")),
        });
    }
    Ok(out)
}
