//! Waiting for the teammates: each one started once it has read its inbox (its briefs are
//! written only then: [`wait_started`]), ready once it has taken its brief or reported idle, or
//! a failure naming who did not and the last lines of its pane (with the start-up dialog that
//! stopped it, when one did).

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::Value;

use super::outcome::{MemberOutcome, MemberState};
use super::spec::Spec;
use crate::host::claude::shell_quote;
use crate::host::tmux;
use crate::store;
use crate::store::id;
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::config::LEAD;
use crate::team::model::Frame;

/// Whether `member` has taken the brief `brief_id`: it is gone from its inbox or marked read.
pub fn brief_taken(layout: &Layout, team: &TeamName, member: &str, brief_id: &str) -> bool {
    let Ok(name) = MemberName::parse(member) else {
        return false;
    };
    match store::read_inbox(&layout.inbox_path(team, &name)) {
        Ok(Some(entries)) => !entries.iter().any(|e| {
            id::entry_id(e) == brief_id && e.get("read").and_then(Value::as_bool) != Some(true)
        }),
        _ => false,
    }
}

/// The members with an `idle_notification` in the lead's inbox.
pub fn reported(layout: &Layout, team: &TeamName) -> HashSet<String> {
    let lead = MemberName::parse(LEAD).expect("valid name");
    let Ok(Some(entries)) = store::read_inbox(&layout.inbox_path(team, &lead)) else {
        return HashSet::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let f = Frame::decode(e.get("text")?.as_str()?)?;
            (f.frame_type == "idle_notification")
                .then(|| e.get("from")?.as_str().map(String::from))?
        })
        .collect()
}

/// How long after the last teammate read its inbox the briefs are written: Claude Code (2.1.332,
/// its debug log) reads its team's `config.json` at start-up 60–70 ms after its first read of
/// its inbox, and that read must not meet another teammate's first turn rewriting the file in
/// place (docs/research/claude-code-behaviour.md §8).
pub(super) const STARTED_SETTLE: Duration = Duration::from_millis(1000);

/// How long `create` waits for a teammate to read its inbox before it writes the briefs anyway
/// (a start-up dialog holds it, say: waiting for its brief then says so).
pub(super) const START_WAIT: Duration = Duration::from_secs(10);

/// When an inbox was last read: its access time (seconds, nanoseconds).
pub(super) type Read = (i64, i64);

/// When each member's inbox was last read (`None` where that cannot be told: no such file, or
/// a file system that keeps no access times).
pub(super) fn inbox_reads(
    layout: &Layout,
    team: &TeamName,
    members: &[MemberOutcome],
) -> Vec<Option<Read>> {
    members
        .iter()
        .map(|m| {
            let name = MemberName::parse(&m.name).ok()?;
            let inbox = layout.inbox_path(team, &name);
            let noatime = keeps_no_access_times(inbox.path())?;
            // Never followed: only a file of its own counts.
            let meta = std::fs::symlink_metadata(inbox.path()).ok()?;
            (!noatime && meta.is_file()).then(|| (meta.atime(), meta.atime_nsec()))
        })
        .collect()
}

/// Whether the file system holding `path` keeps no access times (mounted `noatime`); `None`
/// when it cannot be asked. Only Linux's `statvfs` says so: elsewhere, access times are trusted.
fn keeps_no_access_times(path: &std::path::Path) -> Option<bool> {
    let flags = rustix::fs::statvfs(path).ok()?.f_flag;
    #[cfg(target_os = "linux")]
    return Some(flags.contains(rustix::fs::StatVfsMountFlags::NOATIME));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = flags;
        Some(false)
    }
}

/// Polls until every teammate has read its inbox since `before` ([`inbox_reads`]: its
/// session is up, and about to read `config.json`) or its pane is gone, for `timeout` at most;
/// then waits [`STARTED_SETTLE`]. Teammates whose reads cannot be told are not waited for,
/// and a lone teammate not at all: no other teammate's first turn can rewrite `config.json`
/// while it starts. Returns the teammates given up on.
pub(super) fn wait_started(
    layout: &Layout,
    team: &TeamName,
    session: &str,
    (members, before): (&[MemberOutcome], &[Option<Read>]),
    timeout: Duration,
) -> Vec<String> {
    if members.len() < 2 {
        return Vec::new();
    }
    let end = Instant::now() + timeout;
    loop {
        let now = inbox_reads(layout, team, members);
        let panes = tmux::Server::env().panes(session);
        let waiting: Vec<String> = members
            .iter()
            .zip(before.iter().zip(&now))
            .filter(|(m, (was, is))| {
                let alive = panes
                    .iter()
                    .any(|p| Some(&p.id) == m.pane.as_ref() && !p.dead);
                alive && was.is_some() && is == was
            })
            .map(|(m, _)| m.name.clone())
            .collect();
        if waiting.is_empty() || Instant::now() >= end {
            thread::sleep(STARTED_SETTLE);
            return waiting;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Polls until every member is ready, one's pane dies, or `timeout`. Returns the failure reason.
pub(super) fn wait_ready(
    layout: &Layout,
    team: &TeamName,
    session: &str,
    members: &mut [MemberOutcome],
    timeout: Duration,
) -> Result<Option<String>> {
    let end = Instant::now() + timeout;
    loop {
        let reported = reported(layout, team);
        let panes = tmux::Server::env().panes(session);
        for m in members.iter_mut() {
            if m.state != MemberState::Starting {
                continue;
            }
            if reported.contains(&m.name) || brief_taken(layout, team, &m.name, &m.brief_id) {
                m.state = MemberState::Ready;
                continue;
            }
            let pane = panes.iter().find(|p| Some(&p.id) == m.pane.as_ref());
            if pane.is_none_or(|p| p.dead) {
                m.state = MemberState::Exited;
            }
        }
        let exited: Vec<&MemberOutcome> = members
            .iter()
            .filter(|m| m.state == MemberState::Exited)
            .collect();
        if !exited.is_empty() {
            // tmux marks a pane dead a moment before it knows the exit status (and, with
            // tmux 3.3 under load, sometimes never reports it: then it is left out).
            let until = Instant::now() + Duration::from_millis(300);
            let mut panes = tmux::Server::env().panes(session);
            while Instant::now() < until
                && exited.iter().any(|m| {
                    panes
                        .iter()
                        .any(|p| Some(&p.id) == m.pane.as_ref() && p.status.is_none())
                })
            {
                thread::sleep(Duration::from_millis(20));
                panes = tmux::Server::env().panes(session);
            }
            return Ok(Some(describe(
                "exited before taking its brief",
                &exited,
                &panes,
            )));
        }
        if members.iter().all(|m| m.state == MemberState::Ready) {
            return Ok(None);
        }
        if Instant::now() >= end {
            let late: Vec<&MemberOutcome> = members
                .iter()
                .filter(|m| m.state != MemberState::Ready)
                .collect();
            let what = format!("did not take its brief within {} s", timeout.as_secs_f64());
            return Ok(Some(describe(&what, &late, &panes)));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// `why`, plus what settles it when a teammate's last lines show a start-up dialog (the
/// onboarding screens, the API key approval, the trust dialog, the bypass prompt).
pub(super) fn with_dialog_hint(why: String, spec: &Spec) -> String {
    use crate::ops::dialogs::{Dialog, detect_dialog};
    let dialogs: Vec<Dialog> = why
        .split("last lines of its pane:")
        .skip(1)
        .filter_map(detect_dialog)
        .filter(|d| {
            matches!(
                d,
                Dialog::Onboarding | Dialog::ApiKey | Dialog::Trust | Dialog::Bypass
            )
        })
        .collect();
    let Some(first) = dialogs.first() else {
        return why;
    };
    let skip = if dialogs.contains(&Dialog::Bypass) || spec.bypasses() {
        " --skip-permissions"
    } else {
        ""
    };
    format!(
        "{why}\nthe teammate waits at {} ({}): `teamctl prepare --cwd {}{skip}` settles \
         Claude Code's start-up dialogs",
        first.title(),
        first.as_str(),
        shell_quote(&spec.cwd.to_string_lossy())
    )
}

fn describe(what: &str, who: &[&MemberOutcome], panes: &[tmux::Pane]) -> String {
    let mut out = Vec::new();
    for m in who {
        let pane = m.pane.as_deref().unwrap_or("");
        let status = panes
            .iter()
            .find(|p| p.id == pane)
            .and_then(|p| p.status)
            .map(|s| format!(", exit status {s}"))
            .unwrap_or_default();
        let tail = tmux::Server::env().tail(pane, 15);
        let tail = if tail.is_empty() {
            "(empty)".to_string()
        } else {
            tail
        };
        out.push(format!(
            "'{}' {what} (pane {pane}{status}); last lines of its pane:\n{tail}",
            m.name
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::create::Launch;
    use std::path::PathBuf;

    #[test]
    fn a_dialog_in_a_pane_names_prepare() {
        let spec = Spec {
            team: TeamName::parse("review-42").unwrap(),
            description: None,
            cwd: PathBuf::from("/work/my repo"),
            members: vec![],
            launch: Launch::Tmux,
        };
        let trust = "'alice' did not take its brief within 30 s (pane %1); last lines of its pane:\n \
                     Accessing workspace:\n /work/my repo\n ❯ 1. Yes, I trust this folder\n \
                     Enter to confirm · Esc to cancel";
        let hinted = with_dialog_hint(trust.into(), &spec);
        assert!(
            hinted.ends_with(
                "the teammate waits at the workspace trust dialog (trust): `teamctl prepare \
                 --cwd '/work/my repo'` settles Claude Code's start-up dialogs"
            ),
            "{hinted}"
        );
        let plain =
            "'alice' exited before taking its brief (pane %1); last lines of its pane:\nbye";
        assert_eq!(with_dialog_hint(plain.into(), &spec), plain);
    }
}
