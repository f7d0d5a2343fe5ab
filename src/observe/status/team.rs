//! A team's status, computed from its files and what the caller read of its transcripts.

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::host::proc::pid_alive;
use crate::host::tmux::Liveness;
use crate::observe::spend::MemberSpend;
use crate::observe::worktree::WorktreeStatus;
use crate::sandbox::Shown;
use crate::store::paths::RESERVED;
use crate::team::config::{Member, Team};
use crate::team::tasks::Board;

use super::inboxes::{Cache, Seen, read_inboxes};
use super::model::{MemberStatus, State, TaskCounts, TeamInfo, TeamStatus, Totals, Work};
use super::reasons::{Signs, api_reason, waiting};
use crate::observe::unreported::{Signs as TurnSigns, judge};
use crate::observe::waiting::WaitingDetail;

/// What a read of a team's status is judged by: the time, how long without events makes a
/// member idle, which panes and processes run, teamctl's sent log, and (with the transcripts)
/// what they and the open requests say.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judging<'a> {
    /// The time of the read.
    pub(crate) now: DateTime<Utc>,
    /// A member with no event for this long is idle.
    pub(crate) idle_after: Duration,
    /// Which panes and processes run, as probed.
    pub(crate) live: &'a Liveness,
    /// teamctl's sent log, read.
    pub(crate) sent: &'a [crate::team::sentlog::Sent],
    /// What the transcripts and the open requests say, when read.
    pub(crate) work: Option<&'a Work<'a>>,
}

/// Reads everything `status` shows about `team` as `j` judges it, parsing again only the
/// inboxes that changed since the call that filled `cache` (a file of another inode, size or
/// mtime; one that could not be read is read again every time); what it returns is what a
/// fresh cache would give. Only [`crate::observe::reader::TeamReader`] reads it.
///
/// # Errors
/// None of its own today: unreadable files become warnings, and folders that cannot be listed
/// are in [`TeamStatus::unlisted`] (the caller decides whether that fails).
pub(crate) fn team_status(team: &Team, j: &Judging, cache: &mut Cache) -> Result<TeamStatus> {
    let Judging {
        now,
        idle_after,
        live,
        sent,
        work,
    } = *j;
    let mut warnings = Vec::new();
    // Folders that cannot be listed (a symlink, a FIFO, … in their place) are said, and the
    // rest of the team is shown.
    let mut unlisted = Vec::new();
    let mut read = read_inboxes(team, sent, cache, &mut warnings, &mut unlisted);
    let cfg = team.config.clone().unwrap_or_default();
    let lead_alive = cfg
        .lead_process
        .as_ref()
        .and_then(|p| pid_alive(p.pid, p.proc_start.as_deref()));
    cache.board = Board::load(&team.layout.tasks_dir(&team.name)).unwrap_or_else(|e| {
        unlisted.push(format!("{e:#}"));
        Board::default()
    });
    let board = &cache.board;
    for s in &board.skipped {
        warnings.push(format!(
            "skipped {}: {} (left unchanged)",
            s.path.display(),
            s.reason
        ));
    }
    let facts = TeamFacts {
        lead: cfg.lead().map(|l| l.name.clone()),
        lead_alive,
        session_status: cfg
            .lead_process
            .as_ref()
            .and_then(|p| session_status(team, p.pid)),
        board,
        live,
        work,
        now,
        idle: chrono::Duration::from_std(idle_after).unwrap_or(chrono::Duration::MAX),
        trees: crate::observe::worktree::of_team(team),
        sandboxes: sandboxes(team),
    };
    // Inboxes of names no member has: a former member's (it left config.json at its shutdown)
    // is a terminated row; one of a name that never wrote to the team and holds unread entries
    // is a misaddressed inbox (`misaddressed`), not a member.
    let gone = read.owners.iter().filter(|o| {
        let misaddressed = read.pending.get(o.as_str()).is_some_and(|n| *n > 0)
            && !read.seen.contains_key(o.as_str());
        cfg.member(o.as_str()).is_none()
            && !misaddressed
            && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(o.as_str()))
    });
    let rows: Vec<(String, Option<&Member>)> = cfg
        .members
        .iter()
        .map(|m| (m.name.clone(), Some(m)))
        .chain(gone.map(|o| (o.to_string(), None)))
        .collect();
    let members: Vec<MemberStatus> = rows
        .into_iter()
        .map(|(name, m)| {
            let mut seen = read.seen.remove(&name).unwrap_or_default();
            seen.received = read.received.get(&name).copied();
            let pending = read.pending.get(&name).copied().unwrap_or(0);
            member_status(&facts, name, m, seen, pending)
        })
        .collect();
    let totals = match work.map(|w| w.spend).filter(|s| !s.is_empty()) {
        Some(s) => Totals {
            tokens: Some(s.tokens),
            cost_usd: s.cost_usd,
        },
        None => Totals::default(),
    };
    if let Some(w) = work {
        warnings.extend(w.spend.warnings.iter().cloned());
    }
    let last_activity_at = members
        .iter()
        .filter_map(|m| m.last_event_at.clone())
        .chain(
            read.seen
                .values()
                .filter_map(|s| s.last.as_ref().map(|(t, _)| crate::time::iso_millis(*t))),
        )
        .max();
    let team_info = TeamInfo {
        name: team.name.to_string(),
        description: cfg.description.clone(),
        created_at: cfg
            .created_at
            .and_then(DateTime::from_timestamp_millis)
            .map(crate::time::iso_millis),
        lead_agent_id: cfg.lead_agent_id.clone(),
        lead_session_id: cfg.lead_session_id.clone(),
        lead_pid: cfg.lead_process.as_ref().map(|p| p.pid),
        lead_alive,
        format: read.format().to_string(),
        last_activity_at,
    };
    warnings.extend(unlisted.iter().cloned());
    Ok(TeamStatus {
        team: team_info,
        members,
        tasks: task_counts(&cache.board),
        totals,
        warnings,
        unlisted,
    })
}

/// What every member's row is judged against.
struct TeamFacts<'a> {
    lead: Option<String>,
    lead_alive: Option<bool>,
    session_status: Option<String>,
    board: &'a Board,
    live: &'a Liveness,
    work: Option<&'a Work<'a>>,
    now: DateTime<Utc>,
    idle: chrono::Duration,
    trees: std::collections::HashMap<String, WorktreeStatus>,
    sandboxes: std::collections::HashMap<String, Shown>,
}

/// The sandboxes of `team`'s members, by name, as teamctl's records of the team have them
/// (none for a team teamctl neither leads nor ran).
fn sandboxes(team: &Team) -> std::collections::HashMap<String, Shown> {
    // A team a sandboxed run's lead formed: every member shares the lead's sandbox.
    if let (Some(rules), Some(cfg)) = (
        team.run.as_ref().and_then(|r| r.sandbox.as_ref()),
        &team.config,
    ) {
        let shown = rules.shown();
        return cfg
            .members
            .iter()
            .map(|m| (m.name.clone(), shown.clone()))
            .collect();
    }
    let Some(launch) = team.lead.as_ref().and_then(|r| r.launch.as_ref()) else {
        return Default::default();
    };
    launch
        .members
        .iter()
        .filter_map(|m| Some((m.name.clone(), m.sandbox.as_ref()?.shown())))
        .collect()
}

/// One member's row: `m` is its `config.json` entry (`None`: it has only an inbox), `seen` its
/// newest event, `pending` its unread entries.
fn member_status(
    t: &TeamFacts,
    name: String,
    m: Option<&Member>,
    seen: Seen,
    pending: usize,
) -> MemberStatus {
    let is_active = m.and_then(|m| m.is_active);
    let spend = t.work.and_then(|w| w.spend.members.get(&name));
    // A teammate whose turns end in its transcript but who reports no idle: isActive stays
    // true for good, so it is no sign of work.
    let unreported = spend.and_then(|s| {
        let signs = TurnSigns {
            last_idle: seen.idle,
            last_message: seen.said,
            last_received: seen.received,
            unread: pending,
            drained: seen.drained,
            is_active,
        };
        judge(&s.turn, &signs, t.now)?.unreported()
    });
    let (last_at, last_kind) = match (&seen.last, is_active) {
        (Some((at, k)), _) => (Some(*at), Some(k.clone())),
        (None, Some(true)) => (None, Some("is_active".to_string())),
        _ => (None, None),
    };
    let state = if seen.terminated || m.is_none() {
        State::Terminated
    } else if (is_active == Some(true) && unreported.is_none())
        || last_at.is_some_and(|at| t.now - at < t.idle)
    {
        State::Active
    } else if last_at.is_some() {
        State::Idle
    } else {
        State::Unknown
    };
    let is_lead = t.lead.as_deref() == Some(name.as_str());
    let process_alive = if is_lead {
        t.lead_alive
    } else {
        m.and_then(|m| m.tmux_pane_id.as_deref())
            .and_then(|p| t.live.pane_alive(p))
    };
    let owned = t
        .board
        .tasks
        .iter()
        .filter(|task| task.owner.as_deref() == Some(&name));
    let tasks_in_progress = owned.clone().filter(|t| t.status == "in_progress").count();
    let (waiting, waiting_detail) = t
        .work
        .and_then(|w| {
            let gone = state != State::Terminated && process_alive == Some(false);
            let dead = (gone && (tasks_in_progress > 0 || pending > 0)).then(|| WaitingDetail {
                message: Some(if tasks_in_progress > 0 {
                    format!("its process is gone with {tasks_in_progress} task(s) in progress")
                } else {
                    format!("its process is gone with {pending} unread message(s)")
                }),
                ..WaitingDetail::default()
            });
            let alive = state != State::Terminated && process_alive != Some(false);
            let stalled = alive && spend.is_some_and(|s| s.stalled(t.now, w.stall_after));
            let api = spend
                .filter(|_| alive)
                .and_then(|s| api_reason(s, t.now, w));
            let signs = Signs {
                dead,
                api,
                stalled,
                unreported: unreported.filter(|_| alive),
            };
            waiting(w, t.board, &name, owned.clone(), signs)
        })
        .unzip();
    MemberStatus {
        agent_id: m.and_then(|m| m.agent_id.clone()),
        agent_type: m.and_then(|m| m.agent_type.clone()),
        color: m.and_then(|m| m.color.clone()),
        backend: m.and_then(|m| m.backend_type.clone()),
        state,
        last_event_at: last_at.map(crate::time::iso_millis),
        last_event_kind: last_kind,
        is_active,
        process_alive,
        session_status: t.session_status.clone().filter(|_| is_lead),
        unread: pending,
        pending,
        tasks_in_progress,
        tasks_owned: owned.filter(|t| t.status != "completed").count(),
        in_config: m.is_some(),
        tokens: spend.map(|s| s.tokens),
        cost_usd: spend.and_then(|s| s.cost_usd),
        cost_source: spend.and_then(|s| s.cost_source),
        model: spend.and_then(|s| s.model.clone()),
        activity: spend.and_then(|s| s.activity.clone()),
        waiting,
        waiting_detail: waiting_detail.flatten(),
        idle_unreported_since: unreported.map(crate::time::iso_millis),
        transcripts: spend
            .map(|s| {
                s.transcripts
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect()
            })
            .unwrap_or_default(),
        context: spend.and_then(MemberSpend::context),
        worktree: t.trees.get(&name).cloned(),
        sandbox: t.sandboxes.get(&name).cloned(),
        name,
    }
}

/// Counts the tasks of a board by status (internal tasks left out).
pub fn task_counts(board: &Board) -> TaskCounts {
    let mut tasks = TaskCounts::default();
    for t in board.tasks.iter().filter(|t| !t.is_internal()) {
        let v = board.view(t);
        match v.status.as_str() {
            "pending" => tasks.pending += 1,
            "in_progress" => tasks.in_progress += 1,
            _ => tasks.completed += 1,
        }
        tasks.blocked += usize::from(v.blocked);
        tasks.ready += usize::from(v.ready);
    }
    tasks
}

/// `status` of `sessions/<pid>.json` when Claude Code wrote one.
fn session_status(team: &Team, pid: u32) -> Option<String> {
    let path = team
        .layout
        .root_loc()
        .join("sessions")
        .join(format!("{pid}.json"));
    let v: serde_json::Value = serde_json::from_slice(&path.read().ok()??).ok()?;
    v.get("status")?.as_str().map(String::from)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::observe::spend::TeamSpend;
    use crate::observe::waiting::Waiting;
    use crate::store::paths::{Layout, TeamName};
    use crate::team::sentlog::Sent;

    /// Team `t` under `root` with this `config.json`, an empty task list, and its inboxes folder
    /// (returned).
    fn team_t(root: &Path, config: &str) -> std::path::PathBuf {
        let dir = root.join("teams/t/inboxes");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(root.join("tasks/t")).unwrap();
        fs::write(root.join("teams/t/config.json"), config).unwrap();
        dir
    }

    fn inbox(entries: &[(&str, &str, &str, bool)]) -> String {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|(from, text, at, read)| {
                serde_json::json!({"from": from, "text": text, "timestamp": at, "read": read,
                                   "msgV": 1, "msg_id": format!("{from}-{at}")})
            })
            .collect();
        serde_json::to_string_pretty(&v).unwrap()
    }

    /// `team_status` on a kept cache says what it says on a fresh one, and parses only the
    /// inboxes that changed.
    #[track_caller]
    fn check(root: &Path, cache: &mut Cache, sent: &[Sent], parsed: usize) -> TeamStatus {
        let team = Team::open(
            &Layout::new(root),
            &TeamName::parse("t").unwrap(),
            &crate::team::records::Records::none(),
        )
        .unwrap();
        let now = "2026-11-29T10:05:00Z".parse().unwrap();
        let live = Liveness::default();
        let j = Judging {
            now,
            idle_after: Duration::from_secs(300),
            live: &live,
            sent,
            work: None,
        };
        let kept = team_status(&team, &j, cache).unwrap();
        let fresh = team_status(&team, &j, &mut Cache::default()).unwrap();
        assert_eq!(kept, fresh);
        assert_eq!(cache.parsed, parsed, "inboxes parsed");
        kept
    }

    #[test]
    fn a_kept_cache_rereads_only_what_changed_and_says_what_a_fresh_read_says() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dir = team_t(
            root,
            r#"{"name":"t","leadAgentId":"team-lead@t","members":[
                {"agentId":"team-lead@t","name":"team-lead"},
                {"agentId":"alice@t","name":"alice"},{"agentId":"bob@t","name":"bob"}]}"#,
        );
        let shutdown = r#"{"type":"shutdown_approved","requestId":"r","from":"bob"}"#;
        let idle = r#"{"type":"idle_notification","from":"alice","timestamp":"t","idleReason":"available"}"#;
        fs::write(
            dir.join("team-lead.json"),
            inbox(&[
                ("alice", idle, "2026-11-29T10:01:00.000Z", false),
                ("bob", "hello", "2026-11-29T10:02:00.000Z", true),
            ]),
        )
        .unwrap();
        fs::write(
            dir.join("alice.json"),
            inbox(&[("team-lead", "aaaa", "2026-11-29T10:03:00.000Z", false)]),
        )
        .unwrap();
        fs::write(dir.join("bob.json"), "[]").unwrap();
        fs::write(
            dir.join("carol.json"),
            // Read: a former member's inbox (one of a name that never wrote, with unread
            // entries, is a misaddressed inbox, not a row).
            inbox(&[("alice", "hi carol", "2026-11-29T10:00:00.000Z", true)]),
        )
        .unwrap();
        fs::write(
            root.join("tasks/t/1.json"),
            r#"{"id":"1","subject":"s","status":"in_progress","owner":"alice","blocks":[],"blockedBy":[]}"#,
        )
        .unwrap();
        let mut cache = Cache::default();
        let st = check(root, &mut cache, &[], 4);
        assert_eq!(st.members.len(), 4, "carol, with an inbox only, too");
        assert_eq!(st.tasks.in_progress, 1);
        // Nothing changed: nothing parsed.
        check(root, &mut cache, &[], 0);

        // One inbox among several written in place (same inode, another size).
        fs::write(
            dir.join("bob.json"),
            inbox(&[("team-lead", shutdown, "2026-11-29T10:04:00.000Z", false)]),
        )
        .unwrap();
        let st = check(root, &mut cache, &[], 1);
        assert_eq!(st.members[2].unread, 1);

        // Replaced by a rename as Claude Code writes: same size, same mtime, another inode.
        let old = fs::metadata(dir.join("alice.json")).unwrap();
        let tmp_file = dir.join(".alice.json.tmp");
        fs::write(
            &tmp_file,
            inbox(&[("team-lead", "bbbbb", "2026-11-29T10:03:00.000Z", true)]),
        )
        .unwrap();
        fs::File::options()
            .write(true)
            .open(&tmp_file)
            .unwrap()
            .set_modified(old.modified().unwrap())
            .unwrap();
        assert_eq!(fs::metadata(&tmp_file).unwrap().len(), old.len());
        fs::rename(&tmp_file, dir.join("alice.json")).unwrap();
        let st = check(root, &mut cache, &[], 1);
        assert_eq!(st.members[1].unread, 0, "alice's one message is read now");
        // bob's inbox holds a msgV message teamctl did not write: current; the others legacy.
        assert_eq!(st.team.format, "mixed");

        // Deleted: its row goes (carol is not in config.json), nothing to parse.
        fs::remove_file(dir.join("carol.json")).unwrap();
        let st = check(root, &mut cache, &[], 0);
        assert!(!st.members.iter().any(|m| m.name == "carol"));

        // The sent log changed (teamctl wrote bob's message): the inboxes are not parsed again,
        // their format is weighed again.
        let sent = Sent {
            id: "team-lead-2026-11-29T10:04:00.000Z".into(),
            team: "t".into(),
            to: "bob".into(),
            from: "team-lead".into(),
            at: "2026-11-29T10:00:00.000Z".into(),
            summary: None,
            inbox: String::new(),
            idempotency_key: None,
            answers: None,
            moving: None,
        };
        let st = check(root, &mut cache, std::slice::from_ref(&sent), 0);
        assert_eq!(st.team.format, "legacy");

        // A symlink in an inbox's place is not an inbox (never followed, its target not
        // counted), and the file is read again once it is a file again.
        fs::remove_file(dir.join("bob.json")).unwrap();
        std::os::unix::fs::symlink(dir.join("team-lead.json"), dir.join("bob.json")).unwrap();
        let st = check(root, &mut cache, &[], 0);
        assert_eq!(st.members[2].unread, 0);
        fs::remove_file(dir.join("bob.json")).unwrap();
        fs::write(dir.join("bob.json"), "[]").unwrap();
        let st = check(root, &mut cache, &[], 1);
        assert!(st.warnings.is_empty(), "{:?}", st.warnings);

        // A torn (half-written) inbox is a warning and is not kept: read again next time.
        fs::write(dir.join("bob.json"), "[{\"from\":").unwrap();
        check(root, &mut cache, &[], 1);
        check(root, &mut cache, &[], 1);
    }

    /// A member whose pane the running tmux server no longer lists is dead while it owns a task
    /// in progress (or has unread mail); without work waiting it is only gone.
    #[test]
    fn a_member_whose_pane_is_gone_with_work_is_dead() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dir = team_t(
            root,
            r#"{"name":"t","leadAgentId":"team-lead@t","members":[
                {"agentId":"team-lead@t","name":"team-lead"},
                {"agentId":"alice@t","name":"alice","tmuxPaneId":"%5","backendType":"tmux"},
                {"agentId":"bob@t","name":"bob","tmuxPaneId":"%6","backendType":"tmux"}]}"#,
        );
        for m in ["team-lead", "alice", "bob"] {
            fs::write(dir.join(format!("{m}.json")), "[]").unwrap();
        }
        fs::write(
            root.join("tasks/t/1.json"),
            r#"{"id":"1","subject":"s","status":"in_progress","owner":"alice","blocks":[],"blockedBy":[]}"#,
        )
        .unwrap();
        let team = Team::open(
            &Layout::new(root),
            &TeamName::parse("t").unwrap(),
            &crate::team::records::Records::none(),
        )
        .unwrap();
        let now = "2026-11-29T10:05:00Z".parse().unwrap();
        // The server runs and lists another pane only.
        let live = Liveness {
            tmux_panes: Some([("%9".to_string(), true)].into_iter().collect()),
        };
        let spend = TeamSpend::default();
        let work = Work {
            spend: &spend,
            requests: &[],
            stall_after: Duration::from_secs(300),
            no_response_after: Duration::from_secs(180),
        };
        let j = Judging {
            now,
            idle_after: Duration::from_secs(300),
            live: &live,
            sent: &[],
            work: Some(&work),
        };
        let st = team_status(&team, &j, &mut Cache::default()).unwrap();
        let alice = &st.members[1];
        assert_eq!(
            (alice.process_alive, alice.waiting),
            (Some(false), Some(Waiting::Dead))
        );
        let d = alice.waiting_detail.as_ref().unwrap();
        assert_eq!(
            d.message.as_deref(),
            Some("its process is gone with 1 task(s) in progress")
        );
        assert!(Waiting::Dead.needs_hand(Some(d)));
        let bob = &st.members[2];
        assert_eq!((bob.process_alive, bob.waiting), (Some(false), None));
    }
}
