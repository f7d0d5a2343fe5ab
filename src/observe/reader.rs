//! The team as it is now: the one reader every command that shows or follows a team goes
//! through. `status` and `export` read it once; `top` keeps one and reads it again on every
//! change; `wait` and `ask` keep one inside their [`crate::observe::follow::Following`], `run`
//! once its lead has formed a team.
//!
//! It owns what makes a second read cheap, and the rules every reader shares:
//! - the inboxes as last parsed ([`status::Cache`]: a read parses only the inboxes that
//!   changed) and the task board;
//! - the transcripts ([`SpendReader`], through the index in teamctl's data dir);
//! - teamctl's sent log, read again only when the file changed;
//! - the liveness of panes and processes ([`Server::liveness`]: tmux is asked only when a
//!   member has a pane);
//! - which requests are open ([`protocol::pending`], with the sent log).
//!
//! What it read is a [`Present`]: the status of every member ([`status::TeamStatus`]) and the
//! open requests.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::host::tmux::{Liveness, Server};
use crate::observe::spend::{SpendReader, TeamSpend};
use crate::observe::status::{self, TeamStatus, Work};
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::config::{LEAD, Team};
use crate::team::protocol::{self, Request};
use crate::team::records::Records;
use crate::team::sentlog::{Sent, SentLog};
use crate::team::tasks::Board;

/// How long a request may go unanswered before the member is `no_response`: Claude Code
/// itself gives up on a silent server after 6 minutes (and retries), and one long answer can
/// take minutes to write, so this is well past ordinary answers.
pub const NO_RESPONSE_AFTER: Duration = Duration::from_secs(180);

/// How often a follower of a team (`top`, `serve`) makes the look no file tells about
/// ([`TeamReader::changed_unseen`]): its tick.
pub const LOOK_EVERY: Duration = Duration::from_secs(1);

/// A follower reads a change in the transcripts at most this often (they are appended many
/// times a second while a member works).
pub const TRANSCRIPTS_EVERY: Duration = Duration::from_millis(250);

/// What a [`TeamReader`] reads, and how it judges.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// A member with no event for this long is idle.
    pub idle_after: Duration,
    /// A member inside a turn whose transcript has not grown for this long is stalled.
    pub stall_after: Duration,
    /// A request without an answer for this long is `no_response`.
    pub no_response_after: Duration,
    /// Read the transcripts (what each member is doing, has spent, why it waits).
    pub transcripts: bool,
    /// Ask tmux and the process table which members run (else nothing is checked).
    pub probe: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            idle_after: Duration::from_secs(300),
            stall_after: Duration::from_secs(300),
            no_response_after: NO_RESPONSE_AFTER,
            transcripts: true,
            probe: true,
        }
    }
}

/// What one read found.
#[derive(Debug, Clone, PartialEq)]
pub struct Present {
    /// Every member's state, work and spend, the task counts and the totals.
    pub status: TeamStatus,
    /// The requests waiting for the lead.
    pub requests: Vec<Request>,
}

/// teamctl's sent log, read again only when the file changed (it can hold megabytes).
#[derive(Debug, Default)]
struct SentCache {
    log: Option<SentLog>,
    stamp: Option<(SystemTime, u64)>,
    entries: Vec<Sent>,
}

impl SentCache {
    /// The entries (without a log: the ones given, if any).
    fn get(&mut self) -> &[Sent] {
        if let Some(log) = &self.log {
            let stamp = std::fs::metadata(log.path())
                .ok()
                .and_then(|m| Some((m.modified().ok()?, m.len())));
            if stamp.is_none() || stamp != self.stamp {
                // It only sharpens judgements (which requests teamctl answered, the inbox
                // format): an unreadable log reads as empty.
                self.entries = log.entries().unwrap_or_default();
                self.stamp = stamp;
            }
        }
        &self.entries
    }
}

/// What the last read showed that time alone can change ([`TeamReader::changed_unseen`]).
#[derive(Debug, Default)]
struct Seen {
    /// Whether the lead's process ran.
    lead_alive: Option<bool>,
    /// When the first active member turns idle, its last event older than the idle threshold.
    idle_at: Option<DateTime<Utc>>,
    /// The members that did not wait.
    moving: Vec<String>,
    /// When it was read.
    at: Option<DateTime<Utc>>,
}

impl Seen {
    fn of(st: &TeamStatus, idle_after: Duration, at: DateTime<Utc>) -> Seen {
        let after = chrono::Duration::from_std(idle_after).ok();
        Seen {
            lead_alive: st.team.lead_alive,
            idle_at: st
                .members
                .iter()
                .filter(|m| m.state == status::State::Active)
                .filter_map(|m| {
                    Some(crate::time::parse_time(m.last_event_at.as_deref()?)? + after?)
                })
                .min(),
            moving: st
                .members
                .iter()
                .filter(|m| m.waiting.is_none())
                .map(|m| m.name.clone())
                .collect(),
            at: Some(at),
        }
    }
}

/// A team, read as it is now, again and again (see the module docs).
#[derive(Debug)]
pub struct TeamReader {
    team: Team,
    seen: Seen,
    records: Records,
    opts: Options,
    sent: SentCache,
    live: Liveness,
    spend: Option<SpendReader>,
    files: status::Cache,
}

impl TeamReader {
    /// Opens team `name` in the config dir of `layout`, probing which members run.
    ///
    /// # Errors
    /// As [`Team::open`].
    pub fn open(
        layout: &Layout,
        name: &TeamName,
        records: Records,
        opts: Options,
    ) -> Result<TeamReader> {
        let team = Team::open(layout, name, &records)?;
        Ok(TeamReader::of(team, records, opts))
    }

    /// Reads `team` as it was opened (reading again opens it again: [`TeamReader::read`]).
    pub fn of(team: Team, records: Records, opts: Options) -> TeamReader {
        let spend = opts
            .transcripts
            .then(|| SpendReader::new(&team.layout, &team.name, records.data_dir()));
        let mut reader = TeamReader {
            team,
            sent: SentCache {
                log: records.sent_log().cloned(),
                ..SentCache::default()
            },
            records,
            opts,
            live: Liveness::default(),
            spend,
            files: status::Cache::default(),
            seen: Seen::default(),
        };
        reader.probe();
        reader
    }

    /// Reads with `sent` as teamctl's sent log, already read (`export` records exactly what it
    /// was given).
    pub fn with_sent(mut self, sent: Vec<Sent>) -> TeamReader {
        self.sent = SentCache {
            entries: sent,
            ..SentCache::default()
        };
        self
    }

    /// Counts `session_id` as the lead's session whatever `config.json` says (`run` knows it
    /// before the file exists and after it is gone).
    pub fn with_lead_session(mut self, session_id: Option<&str>) -> TeamReader {
        if let Some(s) = self.spend.as_mut() {
            s.set_lead_session(session_id);
        }
        self
    }

    /// Opens the team again (its `config.json` may have changed) and reads it at `now`.
    ///
    /// # Errors
    /// When the team can no longer be opened; unreadable files are warnings in the status.
    pub fn read(&mut self, now: DateTime<Utc>) -> Result<Present> {
        self.team = Team::open(&self.team.layout, &self.team.name, &self.records)?;
        self.read_opened(now)
    }

    /// Reads the team at `now` as it was last opened (`export` reads the `config.json` it
    /// copied into its record).
    ///
    /// # Errors
    /// None of its own today: unreadable files are warnings in the status.
    pub fn read_opened(&mut self, now: DateTime<Utc>) -> Result<Present> {
        let mut warnings = Vec::new();
        if let Some(s) = self.spend.as_mut() {
            s.read_as(self.team.config.as_ref());
        }
        // A lead whose name breaks the naming rules has no inbox to look in.
        let requests = match self.lead() {
            Ok(lead) => {
                protocol::pending(&self.team, &lead, self.sent.get(), now).unwrap_or_else(|e| {
                    warnings.push(format!("{e:#}"));
                    Vec::new()
                })
            }
            Err(_) => Vec::new(),
        };
        let no_spend = TeamSpend::default();
        let work = Work {
            spend: self.spend.as_ref().map_or(&no_spend, |s| s.spend()),
            requests: &requests,
            stall_after: self.opts.stall_after,
            no_response_after: self.opts.no_response_after,
        };
        let judging = status::Judging {
            now,
            idle_after: self.opts.idle_after,
            live: &self.live,
            sent: self.sent.get(),
            work: self.opts.transcripts.then_some(&work),
        };
        let mut status = status::team_status(&self.team, &judging, &mut self.files)?;
        warnings.append(&mut status.warnings);
        status.warnings = warnings;
        self.seen = Seen::of(&status, self.opts.idle_after, now);
        Ok(Present { status, requests })
    }

    /// The lead's name as the naming rules take it.
    fn lead(&self) -> Result<MemberName> {
        let cfg = self.team.config.as_ref();
        MemberName::parse(cfg.and_then(|c| c.lead()).map_or(LEAD, |l| l.name.as_str()))
    }

    /// Whether anything that no file tells about changed since the last read: a pane died (the
    /// panes are probed now), the lead's process ended, an active member's last event aged past
    /// the idle threshold, a member inside a turn went quiet for the stall threshold, a turn's end
    /// went unreported for [`crate::observe::unreported::UNREPORTED_AFTER`]. The one rule for
    /// reading again on a clock (`top`'s tick).
    pub fn changed_unseen(&mut self, now: DateTime<Utc>) -> bool {
        let panes = self.probe();
        let lead_alive = self
            .team
            .config
            .as_ref()
            .and_then(|c| c.lead_process.as_ref())
            .and_then(|p| crate::host::proc::pid_alive(p.pid, p.proc_start.as_deref()));
        let aged = self.seen.idle_at.is_some_and(|t| now >= t);
        let stall_after = self.opts.stall_after;
        let members = self.spend.as_ref().map(|s| &s.spend().members);
        let stalled = members.into_iter().flatten().any(|(name, m)| {
            m.stalled(now, stall_after) && self.seen.moving.iter().any(|n| n == name)
        });
        let grace = chrono::Duration::from_std(crate::observe::unreported::UNREPORTED_AFTER)
            .unwrap_or_default();
        let unreported = members.into_iter().flatten().any(|(_, m)| {
            let due = m.turn.ended_at.as_deref().and_then(crate::time::parse_time);
            due.map(|e| e + grace)
                .is_some_and(|due| self.seen.at.is_some_and(|at| at < due) && due <= now)
        });
        panes || lead_alive != self.seen.lead_alive || aged || stalled || unreported
    }

    /// Asks again which members run (when probing); returns whether that changed.
    pub fn probe(&mut self) -> bool {
        let members = self.team.config.iter().flat_map(|c| &c.members);
        let panes: Vec<String> = members.filter_map(|m| m.tmux_pane_id.clone()).collect();
        self.probe_for(panes.iter().map(String::as_str))
    }

    /// As [`TeamReader::probe`], for the members whose recorded panes are `panes` (a follower
    /// knows them from its watch, newer than the team as last opened).
    pub fn probe_for<'a>(&mut self, panes: impl IntoIterator<Item = &'a str>) -> bool {
        if !self.opts.probe {
            return false;
        }
        let live = tmux_server(&self.team).liveness(panes);
        let changed = live.tmux_panes != self.live.tmux_panes;
        self.live = live;
        changed
    }

    /// The team as last opened.
    pub fn team(&self) -> &Team {
        &self.team
    }

    /// Which members ran at the last probe.
    pub fn live(&self) -> &Liveness {
        &self.live
    }

    /// The task board of the last read.
    pub fn board(&self) -> &Board {
        &self.files.board
    }

    /// teamctl's sent log, read (again only if it changed).
    pub fn sent(&mut self) -> &[Sent] {
        self.sent.get()
    }

    /// How many inboxes the last read parsed (the others were as they were).
    pub fn parsed(&self) -> usize {
        self.files.parsed
    }

    /// The transcripts' reader (`None` when they are not read).
    pub fn spend(&self) -> Option<&SpendReader> {
        self.spend.as_ref()
    }

    /// The transcripts' reader, to read them between two reads of the team.
    pub fn spend_mut(&mut self) -> Option<&mut SpendReader> {
        self.spend.as_mut()
    }

    /// The folders whose changes should wake a follower besides the team's own: the
    /// transcripts' as last found, and `projects/` itself (a new project folder).
    pub fn transcript_dirs(&self) -> Vec<PathBuf> {
        let Some(s) = &self.spend else {
            return Vec::new();
        };
        let mut dirs = s.dirs();
        let projects = self.team.layout.root_loc().join("projects");
        if projects
            .stat()
            .is_ok_and(|i| i.is_some_and(|i| i.kind == crate::store::dir::Kind::Dir))
        {
            dirs.push(projects.to_path_buf());
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Saves the transcript index.
    ///
    /// # Errors
    /// When it could not be written: that only makes the next read longer.
    pub fn save(&mut self) -> Result<()> {
        self.spend.as_mut().map_or(Ok(()), SpendReader::save)
    }

    /// Whether `path` is a transcript the reader knows.
    pub fn knows(&self, path: &Path) -> bool {
        self.spend.as_ref().is_some_and(|s| s.knows(path))
    }
}

/// The tmux server a team's panes are asked about and acted on: for a team teamctl created, the
/// one its own record names (the socket, which server that was, and the session in it), whatever
/// `TMUX` and `TMUX_TMPDIR` select now; for a team a lead formed under `teamctl run`, the server
/// the run started that lead on (any session there: the lead starts its teammates where it
/// likes); for any other team, the one they select.
pub fn tmux_server(team: &Team) -> Server {
    let created = team.lead.as_ref().and_then(|lead| {
        Some(Server::recorded(
            lead.tmux_socket.as_deref()?,
            lead.tmux_server_id.as_deref(),
            lead.tmux_session.as_deref(),
        ))
    });
    let run = || {
        let r = team.run.as_ref()?;
        Some(Server::recorded(
            &r.tmux_socket,
            Some(&r.tmux_server_id),
            None,
        ))
    };
    created.or_else(run).unwrap_or_else(Server::env)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::observe::waiting::Waiting;

    /// A turn's end that goes unreported for the grace is a change no file shows: `top` reads
    /// again then, once.
    #[test]
    fn an_unreported_turn_end_past_its_grace_is_a_change() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("teams/t/inboxes")).unwrap();
        fs::write(
            root.join("teams/t/config.json"),
            r#"{"name":"t","leadAgentId":"team-lead@t","members":[
                {"agentId":"team-lead@t","name":"team-lead"},
                {"agentId":"alice@t","name":"alice","cwd":"/w","backendType":"tmux"}]}"#,
        )
        .unwrap();
        fs::create_dir_all(root.join("projects/-w")).unwrap();
        fs::write(
            root.join("projects/-w/s.jsonl"),
            concat!(
                r#"{"type":"user","timestamp":"2026-12-04T10:00:00.000Z","teamName":"t","agentName":"alice","message":{"role":"user","content":"go"}}"#,
                "\n",
                r#"{"type":"system","subtype":"turn_duration","timestamp":"2026-12-04T10:00:01.000Z","teamName":"t","agentName":"alice"}"#,
                "\n"
            ),
        )
        .unwrap();
        let opts = Options {
            probe: false,
            ..Options::default()
        };
        let at = |t: &str| crate::time::parse_time(t).unwrap();
        let mut r = TeamReader::open(
            &Layout::new(root),
            &TeamName::parse("t").unwrap(),
            Records::none(),
            opts,
        )
        .unwrap();
        let p = r.read(at("2026-12-04T10:00:05.900Z")).unwrap();
        assert_eq!(p.status.members[1].idle_unreported_since, None);
        assert!(!r.changed_unseen(at("2026-12-04T10:00:05.950Z")));
        assert!(r.changed_unseen(at("2026-12-04T10:00:06.000Z")));
        let p = r.read(at("2026-12-04T10:00:06.000Z")).unwrap();
        assert_eq!(
            p.status.members[1].idle_unreported_since.as_deref(),
            Some("2026-12-04T10:00:01.000Z")
        );
        assert_eq!(p.status.members[1].waiting, Some(Waiting::IdleUnreported));
        assert!(!r.changed_unseen(at("2026-12-04T10:00:07.000Z")));
    }
}
