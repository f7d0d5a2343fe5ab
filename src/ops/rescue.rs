//! What teamctl does for a stuck member ([`crate::observe::keep`] decides when): a nudge, a
//! short message naming its task and its silence, and a restart, the member's pane started
//! again on its last session (`claude … --resume <session>`), under the same name, agent id
//! and colour, then nudged (a resumed teammate reads its inbox but does not carry on its task
//! by itself: docs/research/claude-code-behaviour.md §2.1).
//!
//! Nothing read from the team's files decides a path or a process here: the working
//! directory (a teammate's worktree), the permission flags, the model, the agent type, its own
//! runtime (MCP servers, settings, effort; its env's `${NAME}`s read again from teamctl's
//! environment) and the tmux session come from teamctl's own record of the team (or the run
//! that started it); a pane is killed only when it is in that session; for a teammate teamctl
//! did not start, the agent type and model of `config.json` are passed on only when they are
//! plain words, the session id only when it is a session id. An in-process teammate cannot be
//! restarted: Claude Code runs it inside its lead and offers no way to start one alone.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::host::claude::{Permission, TeammateLaunch};
use crate::host::sandbox::{self, seccomp};
use crate::host::tmux::{self, Server};
use crate::observe::keep::{Hand, Stuck};
use crate::observe::reader::tmux_server;
use crate::observe::spend::SpendReader;
use crate::observe::waiting::Waiting;
use crate::sandbox::{Rules, below_tmp, binary_dirs};
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, MemberName, SessionId, TeamName};
use crate::team::actions::{self, Action};
use crate::team::config::set_pane;
use crate::team::config::{Member, Team};
use crate::team::lead::MemberLaunch;
use crate::team::mailbox::{self, SendRequest, Text};
use crate::team::model::Color;
use crate::team::records::Records;
use crate::team::runtime::Vars;
use crate::team::transcript::locate::Kind;

/// How teamctl starts a team's teammates again: what it knows of its own, never what a
/// teammate wrote.
#[derive(Debug, Clone)]
pub struct Relaunch {
    /// The `claude` binary.
    pub claude: PathBuf,
    /// The variables passed on in the command line, and those given to the pane.
    pub passthrough: Vec<(String, String)>,
    /// The variables given to the pane.
    pub pane_env: Vec<(String, String)>,
    /// Where the teammates run.
    pub cwd: PathBuf,
    /// Their permission flags.
    pub permission: Permission,
    /// The tmux session teamctl started them in (panes are killed only there).
    pub tmux_session: String,
    /// Each teammate's own settings as `create` recorded them (its model, agent type,
    /// permission flags and folder: its worktree), which win over the team-wide ones above and
    /// over what `config.json` says; empty for a team `run`'s lead made.
    pub members: Vec<MemberLaunch>,
    /// What their own `env` takes from teamctl's environment (`${NAME}`), read again for this
    /// start.
    pub vars: Vars,
}

/// The ops side of [`crate::observe::keep`]: nudges and restarts for one team.
pub struct Rescue<'a> {
    /// Where the team is.
    pub layout: Layout,
    /// The team.
    pub team: TeamName,
    /// teamctl's own records (the team's lead record, where a restart is recorded; the sent
    /// log; the transcript index).
    pub records: Records,
    /// Who the nudges come from.
    pub from: MemberName,
    /// The lock deadline.
    pub lock: LockOptions,
    /// How to start a teammate again (`None`: teamctl did not start them).
    pub relaunch: Option<Relaunch>,
    /// The clock.
    pub clock: &'a dyn Fn() -> DateTime<Utc>,
}

impl Hand for Rescue<'_> {
    fn nudge(&mut self, s: &Stuck) -> Result<String> {
        let text = nudge_text(s, (self.clock)());
        self.send(&s.member, text)
    }

    fn restart(&mut self, s: &Stuck) -> Result<String> {
        let started = self.start_again(&s.member)?;
        let mut done = started.to_string();
        let why = s.reason.to_string();
        if let Some(warning) = self.journal(&started, actions::Kind::Restart, &why) {
            done.push_str(&format!("; {warning}"));
        }
        // Idle when restarted: nothing to carry on, and a message would only start a turn.
        if s.reason == Waiting::IdleUnreported {
            return Ok(done);
        }
        match self.welcome_back(s, &format!("you were {}", s.reason)) {
            Ok(sent) => done.push_str(&format!("; {sent}")),
            Err(e) => done.push_str(&format!("; the nudge after it failed: {e:#}")),
        }
        Ok(done)
    }
}

/// A member started again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Started {
    /// Who.
    pub member: String,
    /// Its new pane.
    pub pane: String,
    /// The session it carries on (`None`: it had none, and starts afresh).
    pub session_id: Option<String>,
}

impl std::fmt::Display for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.session_id {
            Some(s) => write!(
                f,
                "started {} again in pane {} on session {s}",
                self.member, self.pane
            ),
            None => write!(
                f,
                "started {} again in pane {} (no session of it was found: a fresh one)",
                self.member, self.pane
            ),
        }
    }
}

impl Rescue<'_> {
    /// Starts `member` again: ends its pane if it is still there (only in teamctl's own
    /// session), starts its last session again in a new pane, and records the pane.
    ///
    /// # Errors
    /// teamctl did not start this team's teammates; an in-process teammate; a pane outside
    /// teamctl's session; tmux or the config lock failing.
    pub fn start_again(&self, member: &str) -> Result<Started> {
        let team = Team::open(&self.layout, &self.team, &self.records)?;
        let Some(relaunch) = &self.relaunch else {
            bail!(
                "teamctl did not start {}'s teammates, so it does not know how to start {member} \
                 again; restart it by hand, or use --on-stall nudge",
                self.team
            );
        };
        let m = team
            .config
            .as_ref()
            .and_then(|c| c.member(member))
            .with_context(|| format!("{member} is no longer a member of {}", self.team))?;
        let (pane, session_id) = self.relaunch(&team, m, relaunch)?;
        Ok(Started {
            member: member.to_string(),
            pane,
            session_id,
        })
    }

    /// Notes in teamctl's journal ([`crate::team::actions`]) that it started `started` again
    /// (`what`, because of `why`). Returns a warning when it could not: the member was
    /// started all the same.
    pub fn journal(&self, started: &Started, what: actions::Kind, why: &str) -> Option<String> {
        let journal = self.records.actions()?;
        let line = Action {
            at: crate::time::iso_millis((self.clock)()),
            team: self.team.to_string(),
            member: started.member.clone(),
            action: what,
            session_id: started.session_id.clone(),
            pane: started.pane.clone(),
            why: why.to_string(),
        };
        let e = journal.append(&line).err()?;
        Some(format!("not journaled: {e:#}"))
    }

    /// The pane teamctl started `member` in that still runs, in teamctl's own session on the
    /// team's recorded server (whatever `config.json`'s `tmuxPaneId` says), asked now; `None`
    /// when teamctl did not start this team's teammates or none runs.
    pub fn running_pane(&self, member: &str) -> Option<String> {
        let relaunch = self.relaunch.as_ref()?;
        let team = Team::open(&self.layout, &self.team, &self.records).ok()?;
        tmux_server(&team)
            .member_panes(&relaunch.tmux_session, member)
            .into_iter()
            .next()
    }

    /// Sends `member` a message saying it was started again after `why`, naming its task.
    ///
    /// # Errors
    /// When it could not be sent.
    pub fn welcome_back(&self, s: &Stuck, why: &str) -> Result<String> {
        self.send(
            &s.member,
            format!("teamctl restarted you after {why}. {}", carry_on(s)),
        )
    }

    /// Sends `text` to `to` as [`Rescue::from`]; returns what was sent.
    fn send(&self, to: &str, text: String) -> Result<String> {
        let team = Team::open(&self.layout, &self.team, &self.records)?;
        let req = SendRequest {
            to: MemberName::parse(to)?,
            from: self.from.clone(),
            text: Text::new(text)?,
            summary: None,
            color: None,
            force: false,
            idempotency_key: None,
        };
        let now = (self.clock)();
        let d = mailbox::send(&team, &req, now, &self.lock, self.records.sent_log())?;
        Ok(format!("sent {} a nudge ({})", d.to, d.id))
    }

    /// Records the session teamctl just started again in the team's lead record (its id, its
    /// server's socket and which server that is), so that `delete` takes it down and its panes
    /// are asked about there.
    fn record_new_session(&self, team: &Team, server: &Server, session: &str) -> Result<()> {
        let (Some(leads), Some(mut record)) = (self.records.leads(), team.lead.clone()) else {
            return Ok(());
        };
        let at = server.locate(session);
        record.tmux_session_id = at.as_ref().map(|a| a.session_id.clone());
        record.tmux_socket = at.as_ref().map(|a| a.socket.clone());
        record.tmux_server_id = at.map(|a| a.server_id);
        leads.record(&self.layout, &self.team, &record)
    }

    /// Ends `member`'s pane if it is still there (only in teamctl's own session), starts its
    /// last session again in a new pane, and records the pane; returns the pane and the session.
    fn relaunch(
        &self,
        team: &Team,
        member: &Member,
        r: &Relaunch,
    ) -> Result<(String, Option<String>)> {
        let name = member.name.as_str();
        let in_process = member.backend_type.as_deref() == Some("in-process")
            || member.tmux_pane_id.as_deref() == Some("in-process");
        if in_process {
            bail!(
                "{name} is an in-process teammate: Claude Code runs it inside its lead's process \
                 and offers no way to start one alone; restart the lead instead"
            );
        }
        // Its own runtime, its env taken from teamctl's environment again: a variable unset
        // now fails the restart before its pane is touched.
        let own = r.members.iter().find(|m| m.name == name);
        let runtime = own.map(|m| m.runtime.clone()).unwrap_or_default();
        let env = runtime
            .env_values(&r.vars)
            .map_err(|e| anyhow::anyhow!("cannot start {name} again: {e}"))?;
        // The team's panes are where teamctl recorded its server, whatever the environment
        // says now; a new session starts there too while it runs.
        let server = tmux_server(team);
        if let Some(old) = member.tmux_pane_id.as_deref().filter(|p| tmux::is_pane(p)) {
            let ours = server
                .panes(&r.tmux_session)
                .into_iter()
                .any(|p| p.id == old);
            let alive = server.probe().pane_alive(old) == Some(true);
            match (alive, ours) {
                (true, true) => {
                    server.kill_pane(old)?;
                }
                (true, false) => bail!(
                    "{name}'s pane {old} is not in tmux session {}, which teamctl started: \
                     not ending it",
                    r.tmux_session
                ),
                (false, _) => {}
            }
        }
        // Whatever config.json says: a pane teamctl started this teammate in, in its own
        // session on the recorded server, still running, is ended too (asked now, just before
        // the new one starts), so that it never runs twice.
        for pane in server.member_panes(&r.tmux_session, name) {
            server.kill_pane(&pane)?;
        }
        let session = self.last_session(team, name);
        let server = server.or_env_when_gone();
        let pane = if server.has_session(&r.tmux_session) {
            server.new_window(&r.tmux_session, name)?
        } else {
            let pane = server.new_session_hiding(&r.tmux_session, name, &r.vars.names())?;
            self.record_new_session(team, &server, &r.tmux_session)?;
            pane
        };
        let root = std::path::absolute(self.layout.root())
            .with_context(|| format!("could not resolve {}", self.layout.root().display()))?;
        let lead_session_id = team
            .config
            .as_ref()
            .and_then(|c| c.lead_session_id.as_deref())
            .and_then(|s| SessionId::parse(s).ok())
            .with_context(|| format!("{} has no lead session id", self.team))?;
        // teamctl's own record of how it started this teammate, else the team-wide settings
        // and config.json's words (checked) for a teammate someone else started.
        let permission = own.map_or_else(
            || r.permission.clone(),
            |m| Permission::from_flags(m.permission_mode.as_deref(), m.skip_permissions),
        );
        let cwd = own
            .and_then(|m| m.cwd.as_deref())
            .map_or(r.cwd.as_path(), Path::new);
        let (agent_type, model) = match own {
            Some(m) => (m.agent_type.as_deref(), m.model.as_deref()),
            None => (
                member.agent_type.as_deref().filter(|t| plain_word(t)),
                member.model.as_deref().filter(|m| plain_word(m)),
            ),
        };
        let command = TeammateLaunch {
            root: &root,
            cwd,
            claude: &r.claude,
            passthrough: &runtime.passthrough(&r.passthrough),
            team: self.team.as_str(),
            member: name,
            color: palette_color(member.color.as_deref()),
            lead_session_id: lead_session_id.as_str(),
            agent_type,
            model,
            permission: &permission,
            runtime: &runtime.args(),
            resume: session.as_ref(),
        }
        .command();
        // A teammate create confined is confined again, by the rules it recorded.
        let command = match own.and_then(|m| m.sandbox.as_ref()) {
            Some(rules) => confined(rules, &r.claude, &command)?,
            None => command,
        };
        set_pane(&self.layout, &self.team, name, &pane, &self.lock)?;
        // Pane options need tmux 3.0: an older one starts the teammate unmarked.
        let _ = server.tag_member(&pane, name);
        server.respawn_private(&pane, &command, &r.pane_env, &env)?;
        Ok((pane, session.map(|s| s.to_string())))
    }

    /// The id of `member`'s newest pane session, when it has one (a transcript's name that is
    /// not a [`SessionId`] is none).
    fn last_session(&self, team: &Team, member: &str) -> Option<SessionId> {
        let mut spend = SpendReader::new(&team.layout, &team.name, self.records.data_dir());
        spend.read();
        let sessions = spend.sessions().get(member)?;
        let newest = sessions
            .iter()
            .filter(|s| s.kind == Kind::Pane)
            .max_by_key(|s| s.path.stat().ok().flatten().map(|i| i.mtime))?;
        let stem = Path::new(newest.path.path()).file_stem()?.to_str()?;
        SessionId::parse(stem).ok()
    }
}

/// `command` in the sandbox `rules` describe, its seccomp program written again if it is gone;
/// the folders of `claude`, the binary it runs now, stay visible too.
fn confined(rules: &Rules, claude: &Path, command: &str) -> Result<String> {
    if let Some(dir) = rules.filter.as_deref().and_then(|f| Path::new(f).parent()) {
        seccomp::install(dir)?;
    }
    let visible = rules.visible.iter().map(PathBuf::from);
    let rules = Rules {
        visible: below_tmp(visible.chain(binary_dirs(claude))),
        ..rules.clone()
    };
    sandbox::wrap(&rules, command)
}

/// A colour of Claude Code's palette (a teammate's own word for it is checked, not passed on).
fn palette_color(c: Option<&str>) -> &'static str {
    Color::ALL
        .iter()
        .find(|p| Some(p.as_str()) == c)
        .unwrap_or(&Color::Blue)
        .as_str()
}

/// An agent type or a model name: letters, digits and `._:-` only (no path, no flag).
fn plain_word(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
}

/// `You have been silent for 7m (stalled) while task #3 "Fix the race" is in progress. Carry on
/// with it, or say what blocks you.`
fn nudge_text(s: &Stuck, now: DateTime<Utc>) -> String {
    let quiet = s
        .last_seen
        .as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| (now - t.with_timezone(&Utc)).num_seconds().max(0) as u64);
    let how = match s.reason {
        Waiting::NoResponse => "waiting for an answer from the API".to_string(),
        _ => "silent".to_string(),
    };
    let since = quiet
        .map(|q| format!(" for {}", crate::units::duration(q)))
        .unwrap_or_default();
    format!("teamctl: you have been {how}{since}. {}", carry_on(s))
}

/// `Carry on with task #3 "Fix the race", or say what blocks you.`
fn carry_on(s: &Stuck) -> String {
    match &s.task {
        Some((id, subject)) => format!(
            "Carry on with task #{id} \"{}\", or say what blocks you.",
            crate::team::model::first_line(subject, 80)
        ),
        None => "Carry on with your work, or say what blocks you.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stuck(reason: Waiting, task: Option<(&str, &str)>) -> Stuck {
        Stuck {
            member: "alice".into(),
            reason,
            detail: None,
            task: task.map(|(i, s)| (i.to_string(), s.to_string())),
            last_seen: Some("2026-11-29T10:00:00.000Z".into()),
        }
    }

    #[test]
    fn a_nudge_names_the_task_and_the_silence() {
        let now = "2026-11-29T10:07:05Z".parse().unwrap();
        assert_eq!(
            nudge_text(&stuck(Waiting::Stalled, Some(("3", "Fix the race"))), now),
            "teamctl: you have been silent for 7m 05s. Carry on with task #3 \"Fix the race\", \
             or say what blocks you."
        );
        assert_eq!(
            nudge_text(&stuck(Waiting::NoResponse, None), now),
            "teamctl: you have been waiting for an answer from the API for 7m 05s. Carry on \
             with your work, or say what blocks you."
        );
    }

    #[test]
    fn only_plain_words_and_palette_colours_pass() {
        assert!(plain_word("claude-sonnet-4-5"));
        assert!(plain_word("security-reviewer"));
        for bad in [
            "../../x",
            "a b",
            "--dangerously-skip-permissions",
            "",
            "$(id)",
        ] {
            assert!(!plain_word(bad), "{bad}");
        }
        assert_eq!(palette_color(Some("green")), "green");
        assert_eq!(palette_color(Some("x; rm -rf /")), "blue");
        assert_eq!(palette_color(None), "blue");
    }
}
