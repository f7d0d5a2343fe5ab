//! Taking down a team teamctl leads: ask each running teammate to shut down (the lead's
//! `shutdown_request` frame), wait for its `shutdown_approved` or for its pane to end, kill the
//! tmux session, then remove the team and task folders (renamed to `<name>.deleted-<uuid>`
//! first, as new Claude Code does, so no reader sees a half-removed team), and remove the
//! teammates' worktrees that hold no uncommitted changes (the others, and every branch, are
//! kept: [`take_down`]). A record of the team ([`Record`]) can be written just before the folders go.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::host::tmux::session_name;
use crate::host::{git, proc, tmux};
use crate::observe::reader::tmux_server;
use crate::observe::worktree::{at, fetch_home, repo_at};
use crate::ops::export::{self, Exported};
use crate::store::dir::{Kind, Loc};
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::config::{LEAD, Team};
use crate::team::lead::{Leads, MemberLaunch, Worktree};
use crate::team::mailbox::{self, Writing};
use crate::team::protocol::{self, ShutdownAnswer};
use crate::team::records::Records;
use crate::team::sentlog::Sent;

/// How a teammate ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Shutdown {
    /// It answered the request with `shutdown_approved`.
    Approved,
    /// Its pane ended without an answer.
    Exited,
    /// No answer before the timeout (its session was killed).
    Timeout,
    /// It was not running (no live pane), so it was not asked.
    NotRunning,
}

/// One teammate in the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberShutdown {
    /// Name.
    pub name: String,
    /// How it ended.
    pub shutdown: Shutdown,
}

/// What a delete did.
#[derive(Debug, Clone, PartialEq)]
pub struct Deleted {
    /// The teammates and how each ended.
    pub members: Vec<MemberShutdown>,
    /// The tmux session that was killed, if there was one.
    pub tmux_session: Option<String>,
    /// The folders removed.
    pub removed: Vec<PathBuf>,
    /// The record written before they were ([`Record`]).
    pub export: Option<Exported>,
    /// The teammates' worktrees: removed when they had no uncommitted changes, else kept;
    /// their branches are always kept.
    pub worktrees: Vec<TakenDown>,
}

/// A record of the team to write at the last moment before its folders are removed
/// ([`crate::ops::export`]): after the teammates are shut down and their session killed, so
/// their answers are in it.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Where (a folder, or a `.tar.gz`).
    pub out: &'a Path,
    /// teamctl's sent log.
    pub sent: &'a [Sent],
}

/// What a delete is asked: the team, the reason its teammates are given and how long they get
/// to approve, whether to go on without teamctl's record of leading it (`--force`), and the
/// record of the team to write first.
#[derive(Debug, Clone, Copy)]
pub struct Deleting<'a> {
    /// The team.
    pub team: &'a TeamName,
    /// The reason given in the shutdown request.
    pub reason: &'a str,
    /// How long the teammates get to approve the shutdown.
    pub timeout: Duration,
    /// Also remove a team teamctl does not lead, and worktrees with git-ignored files.
    pub force: bool,
    /// The record to write before the folders are removed.
    pub record: Option<Record<'a>>,
}

/// Deletes the team `deleting` names: see the module docs. A folder without `config.json` (a
/// failed create) is simply removed. With [`Deleting::record`], the team's record is written
/// first; when it cannot be, the folders are left in place.
///
/// # Errors
/// When the team does not exist, when teamctl does not lead it and [`Deleting::force`] is not
/// set, when the record cannot be written, lock or I/O errors.
pub fn delete(
    layout: &Layout,
    deleting: Deleting,
    records: &Records,
    now: DateTime<Utc>,
    opts: &LockOptions,
) -> Result<Deleted> {
    let Deleting {
        team: name,
        reason,
        timeout,
        force,
        record,
    } = deleting;
    let team = Team::open(layout, name, records)?;
    if team.config.is_some() && !team.teamctl_leads() && !force {
        bail!("{}", not_ours(name, records.leads()));
    }
    let session = our_session(&team, name);
    let mut asked = ask_to_shut_down(&team, session.as_ref(), reason, now, opts)?;
    asked.wait(&team, session.as_ref(), timeout)?;
    let killed = match &session {
        Some(s) => s.stop()?,
        None => false,
    };
    let export = match record {
        Some(r) => Some(write_record(layout, name, records, now, r)?),
        None => None,
    };
    let mut removed = Vec::new();
    for dir in [layout.team_dir(name), layout.tasks_dir(name)] {
        if remove(&dir)? {
            removed.push(dir.to_path_buf());
        }
    }
    // Only worktrees teamctl's own record names, once their teammates are gone.
    let launch = team.lead.as_ref().and_then(|r| r.launch.as_ref());
    let worktrees = match (records.leads(), launch) {
        (Some(leads), Some(l)) => take_down(&l.members, leads, force),
        _ => Vec::new(),
    };
    if let Some(leads) = records.leads() {
        leads.remove(layout, name)?;
    }
    Ok(Deleted {
        members: asked.members,
        tmux_session: session.map(|s| s.name).filter(|_| killed),
        removed,
        export,
        worktrees,
    })
}

/// Why teamctl will not take down a team it does not lead, and what to do.
fn not_ours(name: &TeamName, leads: Option<&Leads>) -> String {
    let record = match leads {
        Some(l) => format!(
            "there is no record of creating it in teamctl's data dir {}",
            l.data_dir().display()
        ),
        None => "teamctl has no data dir to keep such records in".to_string(),
    };
    format!(
        "teamctl does not lead team '{name}': {record} (a team made by `teamctl create` with \
         another TEAMCTL_DATA_DIR is deleted with that one), and config.json cannot say so since \
         its teammates write it. Pass --force to remove its folders anyway (no tmux session is \
         killed without the record)"
    )
}

/// A tmux session teamctl started, on the server it recorded then.
struct Session {
    server: tmux::Server,
    name: String,
}

/// The tmux session to take down: only the one teamctl itself started, as its private record
/// names it (the team's session name, and the same session by its id, on the server it
/// recorded), never one config.json names; a record without the session's id (a create ended
/// before it made its session, or lost the race for it) proves none.
fn our_session(team: &Team, name: &TeamName) -> Option<Session> {
    let session = session_name(name);
    let server = tmux_server(team);
    team.lead
        .as_ref()
        .filter(|r| r.tmux_session.as_deref() == Some(session.as_str()))
        .is_some_and(
            |r| match (&r.tmux_session_id, server.session_id(&session)) {
                (_, None) => false,
                (Some(recorded), Some(live)) => *recorded == live,
                (None, Some(_)) => false,
            },
        )
        .then_some(Session {
            server,
            name: session,
        })
}

/// The live panes of `session` (none without one).
fn live_panes(session: Option<&Session>) -> Vec<tmux::Pane> {
    session
        .map(|s| s.server.panes(&s.name))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| !p.dead)
        .collect()
}

/// The teammates asked to shut down, and those whose answer is still awaited.
struct Asked {
    /// Every teammate and how it ended so far.
    members: Vec<MemberShutdown>,
    /// Member name → (the request's id, its pane).
    waiting: HashMap<String, (String, String)>,
}

/// Sends each teammate with a live pane the lead's `shutdown_request`. Teammates are the members
/// with a palette colour other than the lead (`send --join` adds none).
fn ask_to_shut_down(
    team: &Team,
    session: Option<&Session>,
    reason: &str,
    now: DateTime<Utc>,
    opts: &LockOptions,
) -> Result<Asked> {
    let panes = live_panes(session);
    let lead = MemberName::parse(LEAD)?;
    let mut asked = Asked {
        members: Vec::new(),
        waiting: HashMap::new(),
    };
    for m in team.config.iter().flat_map(|c| c.members.iter()) {
        if m.name == LEAD || m.color.is_none() {
            continue;
        }
        let pane = m.tmux_pane_id.clone().unwrap_or_default();
        let mut state = Shutdown::NotRunning;
        if panes.iter().any(|p| p.id == pane)
            && let Ok(to) = MemberName::parse(&m.name)
        {
            let frame = protocol::shutdown_request(&m.name, Some(reason), now);
            let request_id = frame["requestId"].as_str().unwrap_or_default().to_string();
            let w = Writing {
                now,
                lock: opts,
                log: None,
            };
            mailbox::send_frame(team, &to, &lead, &frame, w)?;
            asked.waiting.insert(m.name.clone(), (request_id, pane));
            state = Shutdown::Timeout;
        }
        asked.members.push(MemberShutdown {
            name: m.name.clone(),
            shutdown: state,
        });
    }
    Ok(asked)
}

impl Asked {
    /// Waits up to `timeout` for each teammate asked to approve or for its pane to end.
    fn wait(&mut self, team: &Team, session: Option<&Session>, timeout: Duration) -> Result<()> {
        let lead = MemberName::parse(LEAD)?;
        let end = Instant::now() + timeout;
        while !self.waiting.is_empty() {
            // Panes first: a teammate writes its approval before it exits, so an approval from
            // a pane seen dead here is already in the inbox read next.
            let panes = live_panes(session);
            let mut approved = Vec::new();
            for (request_id, _) in self.waiting.values() {
                if protocol::shutdown_answer(team, &lead, request_id)?
                    == Some(ShutdownAnswer::Approved)
                {
                    approved.push(request_id.clone());
                }
            }
            let members = &mut self.members;
            self.waiting.retain(|member, (request_id, pane)| {
                let state = if approved.contains(request_id) {
                    Shutdown::Approved
                } else if !panes.iter().any(|p| &p.id == pane) {
                    Shutdown::Exited
                } else {
                    return true;
                };
                if let Some(m) = members.iter_mut().find(|m| &m.name == member) {
                    m.shutdown = state;
                }
                false
            });
            if self.waiting.is_empty() || Instant::now() >= end {
                break;
            }
            thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Session {
    /// Kills the session and waits up to [`EXIT_GRACE`] for the processes in its panes, with
    /// their children (the pane's shell runs `claude`), to end: a teammate that is still exiting
    /// can write into the team folder (Claude Code's mailbox writer creates `inboxes/` as
    /// needed), so the folders are removed once they are gone. Each process is known with its
    /// start time, so a pid reused meanwhile does not count. Whether the session was there to
    /// kill.
    fn stop(&self) -> Result<bool> {
        let processes: Vec<(u32, Option<String>)> = live_panes(Some(self))
            .iter()
            .filter_map(|p| self.server.pane_pid(&p.id))
            .flat_map(proc::descendants)
            .map(|pid| (pid, proc::proc_start(pid)))
            .collect();
        let killed = self.server.kill_session(&self.name)?;
        let end = Instant::now() + EXIT_GRACE;
        while processes
            .iter()
            .any(|(pid, start)| proc::pid_alive(*pid, start.as_deref()) == Some(true))
            && Instant::now() < end
        {
            thread::sleep(Duration::from_millis(20));
        }
        Ok(killed)
    }
}

/// Writes the team's record, after its teammates stopped and before its folders go.
fn write_record(
    layout: &Layout,
    name: &TeamName,
    records: &Records,
    now: DateTime<Utc>,
    record: Record,
) -> Result<Exported> {
    let req = export::Request {
        layout,
        team: name,
        lead_session_id: None,
        sent: record.sent,
        now,
        run: None,
        records,
    };
    let (done, _) = export::export(&req, record.out).with_context(|| {
        format!(
            "could not write the record of team '{name}', so its folders were left in place \
             (its teammates were stopped)"
        )
    })?;
    Ok(done)
}

/// How long the teammates' processes may take to end after their tmux session is killed
/// before the folders are removed anyway.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Renames `dir` to `<dir>.deleted-<uuid>` and removes that, through a handle on its parent
/// folder and never following a symlink. `Ok(false)` when it was missing.
fn remove(dir: &Loc) -> Result<bool> {
    let Some(file_name) = dir.name() else {
        bail!("refusing to remove {}", dir.display());
    };
    let parent = match dir.parent_dir() {
        Ok(p) => p,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("could not remove {}", dir.display())),
    };
    match parent.stat(file_name)? {
        None => return Ok(false),
        Some(i) if i.kind != Kind::Dir => {
            bail!(
                "could not remove {}: it is {}, not a folder (left as it is)",
                dir.display(),
                i.kind.describe()
            )
        }
        Some(_) => {}
    }
    let mut gone = file_name.to_owned();
    gone.push(format!(".deleted-{}", Uuid::new_v4()));
    match parent.rename(file_name, &gone) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("could not remove {}", dir.display())),
    }
    parent
        .remove_tree(&gone)
        .with_context(|| format!("could not remove {}", parent.path().join(&gone).display()))?;
    Ok(true)
}

/// What `delete` did with a teammate's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TakenDown {
    /// Whose.
    pub member: String,
    /// Its folder.
    pub path: String,
    /// Its branch (always kept).
    pub branch: String,
    /// `removed`, `kept` (it has uncommitted changes, or git would not remove it) or `missing`
    /// (the folder is gone).
    pub action: &'static str,
    /// Why, in words.
    pub reason: String,
}

/// Removes each worktree of `members` that has no uncommitted changes (`git worktree
/// remove`, which refuses one that has) and no git-ignored files (which it would remove
/// without a word) unless `drop_ignored`, and keeps the others, naming why; every branch is
/// kept. A sandboxed teammate's clone has its branch fetched home first, and is kept when that
/// fails. A worktree that `leads`' data dir no longer reaches without a link (a symlink planted
/// at `worktrees` or below) is kept: removing it would remove what the link points to.
pub fn take_down(members: &[MemberLaunch], leads: &Leads, drop_ignored: bool) -> Vec<TakenDown> {
    let mut out = Vec::new();
    for m in members {
        let Some(t) = &m.worktree else { continue };
        let path = Path::new(&t.path);
        if path.symlink_metadata().is_ok() && !leads.reaches_without_links(path) {
            out.push(TakenDown {
                member: m.name.clone(),
                path: t.path.clone(),
                branch: t.branch.clone(),
                action: "kept",
                reason: format!(
                    "{} is reached through a link below teamctl's data dir {} (or is no longer \
                     below it): not removing what the link points to",
                    t.path,
                    leads.data_dir().display()
                ),
            });
            continue;
        }
        let (action, reason) = if !path.is_dir() {
            ("missing", "its folder is gone".to_string())
        } else if let Err(e) = fetch_home(t) {
            ("kept", format!("{e:#}; its work is only in {}", t.path))
        } else {
            match at(t) {
                Err(e) => ("kept", format!("{e:#}")),
                Ok(place) => take_down_one(t, &place, drop_ignored),
            }
        };
        if action == "removed"
            && let Some(parent) = path.parent()
        {
            // The team's folder of worktrees, once empty.
            let _ = std::fs::remove_dir(parent);
        }
        out.push(TakenDown {
            member: m.name.clone(),
            path: t.path.clone(),
            branch: t.branch.clone(),
            action,
            reason,
        });
    }
    out
}

/// What `delete` does with the worktree (or clone) `tree` whose folder is there (`place`):
/// removed when it has no uncommitted changes and no ignored files (unless `drop_ignored`),
/// else kept, with why.
fn take_down_one(tree: &Worktree, place: &git::At, drop_ignored: bool) -> (&'static str, String) {
    let path = &tree.path;
    let ignored = git::ignored(place);
    // How the person removes it once they kept what they need.
    let remove = |force: &str| match tree.clone {
        None => format!("`git worktree remove {force}{path}`"),
        Some(_) => format!("`rm -r {path}` (a clone of its own; its branch is home)"),
    };
    match git::uncommitted(place) {
        Err(e) => ("kept", format!("git could not tell its changes: {e:#}")),
        Ok(c) if !c.is_empty() => (
            "kept",
            format!(
                "{} uncommitted change(s), e.g. {}; commit or remove them, then {}",
                c.len(),
                c[0],
                remove("")
            ),
        ),
        Ok(_) => match ignored {
            Err(e) => (
                "kept",
                format!("git could not tell its ignored files: {e:#}"),
            ),
            Ok(i) if !i.is_empty() && !drop_ignored => (
                "kept",
                format!(
                    "{} git-ignored file(s), e.g. {}, which removing it would lose; keep what \
                     you need, then {} (or `teamctl delete --force`)",
                    i.len(),
                    i[0],
                    remove("--force ")
                ),
            ),
            Ok(i) => {
                let removed = match tree.clone {
                    None => git::worktree_remove(&repo_at(tree), place),
                    // A clone is no worktree of the repository: its folder goes, its branch
                    // was fetched home.
                    Some(_) => std::fs::remove_dir_all(path)
                        .with_context(|| format!("could not remove {path}")),
                };
                match removed {
                    Ok(()) if i.is_empty() => (
                        "removed",
                        format!("no uncommitted changes; branch {} kept", tree.branch),
                    ),
                    Ok(()) => (
                        "removed",
                        format!(
                            "no uncommitted changes, {} git-ignored file(s) dropped (--force); \
                             branch {} kept",
                            i.len(),
                            tree.branch
                        ),
                    ),
                    Err(e) => ("kept", format!("{e:#}")),
                }
            }
        },
    }
}
