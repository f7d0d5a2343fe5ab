//! The done rule ([`Settle`]): what one look at the team finds ([`observe`]) and how long it
//! must hold.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::host::tmux;
use crate::observe::spend::SpendReader;
use crate::store::dir::Loc;
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::config::{LEAD, TeamConfig};
use crate::team::transcript::locate;

use super::outcome::Teammate;

/// One poll's view of the done rule's signals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// Rule 1.
    pub lead_turn_ended: bool,
    /// The lead's turn ended with an API error once Claude Code's retries ran out (its text):
    /// not a done turn (rule 1 does not hold), and nothing prompts the lead again unless a
    /// teammate still working or mail still undelivered does.
    pub lead_failed: Option<String>,
    /// Rule 2: the teammates still working.
    pub working: Vec<String>,
    /// Rule 3: the inboxes with an undelivered entry.
    pub undelivered: Vec<String>,
    /// Rule 4: changes whenever anything the rule reads moves.
    pub fingerprint: u64,
}

impl Observation {
    /// Whether rules 1–3 hold now.
    pub fn quiet(&self) -> bool {
        self.lead_turn_ended && self.working.is_empty() && self.undelivered.is_empty()
    }

    /// The lead's failed turn, when it is all that keeps rules 1–3 from holding: the team will
    /// not move again by itself.
    pub fn failed_quiet(&self) -> Option<Observation> {
        let text = self.lead_failed.as_ref()?;
        let quiet = Observation {
            lead_turn_ended: true,
            lead_failed: Some(text.clone()),
            ..self.clone()
        };
        quiet.quiet().then_some(quiet)
    }

    /// Why the work is not done yet, for people.
    pub fn waiting_for(&self) -> String {
        let mut why = Vec::new();
        if self.lead_failed.is_some() {
            why.push("the lead, whose turn ended with an API error".to_string());
        } else if !self.lead_turn_ended {
            why.push("the lead's turn".to_string());
        }
        if !self.working.is_empty() {
            why.push(format!(
                "working: {}",
                crate::store::paths::shown_list(&self.working)
            ));
        }
        if !self.undelivered.is_empty() {
            why.push(format!(
                "undelivered mail for {}",
                crate::store::paths::shown_list(&self.undelivered)
            ));
        }
        why.join("; ")
    }
}

/// Rule 4: the observations must be quiet, with one fingerprint, for the whole settle time.
#[derive(Debug, Clone, Default)]
pub struct Settle {
    since: Option<(Instant, u64)>,
}

impl Settle {
    /// Feeds one observation made at `now`; true once the work is done.
    pub fn update(&mut self, obs: &Observation, now: Instant, settle: Duration) -> bool {
        if !obs.quiet() {
            self.since = None;
            return false;
        }
        match self.since {
            Some((at, fp)) if fp == obs.fingerprint => now.duration_since(at) >= settle,
            _ => {
                self.since = Some((now, obs.fingerprint));
                settle.is_zero()
            }
        }
    }
}

/// In-process teammates' transcripts of a lead session: member name → newest `.jsonl` (found
/// and looked at through handles, never through a symlink: see [`locate::subagents`]).
fn subagent_transcripts(lead_transcript: &Loc) -> HashMap<String, Loc> {
    let mut out: HashMap<String, (std::time::SystemTime, Loc)> = HashMap::new();
    // A run's progress has no place for them; `status` and `log` report what is skipped.
    let mut skipped = Vec::new();
    for (name, _, jsonl) in locate::subagents(lead_transcript, &mut skipped) {
        let Some(name) = name else { continue };
        let Ok(Some(mtime)) = jsonl.stat().map(|i| i.map(|i| i.mtime)) else {
            continue;
        };
        if out.get(&name).is_none_or(|(t, _)| mtime > *t) {
            out.insert(name, (mtime, jsonl));
        }
    }
    out.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

/// The lead's background helpers (Claude Code 2.1.332: an Agent call that runs in the
/// background, as one with `isolation: "worktree"` does; its `.meta.json` says `"requestShape":
/// "background"`, and `"finished": true` once it is over): name (else `agent-<id>`), whether
/// its meta says finished, and its transcript when there is one yet (the meta can come first).
/// They are no member of `config.json`, yet the lead's work is not done while one works: its
/// result comes back to the lead later. Read through folder handles, never through a link.
fn background_helpers(lead_transcript: &Loc) -> Vec<(String, bool, Option<Loc>)> {
    let Some(loc) = locate::subagents_dir(lead_transcript) else {
        return Vec::new();
    };
    let Ok(dir) = loc.open_dir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for n in dir.names().unwrap_or_default() {
        let Some(stem) = n.to_str().and_then(|f| f.strip_suffix(".meta.json")) else {
            continue;
        };
        let Some(meta) = dir
            .read(&n)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        else {
            continue;
        };
        if meta.get("requestShape").and_then(Value::as_str) != Some("background") {
            continue;
        }
        let finished = meta.get("finished").and_then(Value::as_bool) == Some(true);
        let name = meta.get("name").and_then(Value::as_str).unwrap_or(stem);
        let jsonl = format!("{stem}.jsonl");
        let transcript = match dir.stat(&jsonl) {
            Ok(Some(i)) if i.kind == crate::store::dir::Kind::File => Some(loc.join(&jsonl)),
            _ => None,
        };
        out.push((name.to_string(), finished, transcript));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The team whose `leadSessionId` is `session_id` (its `session-<8hex>` folder first).
pub fn find_team(layout: &Layout, session_id: &str) -> Option<(TeamName, TeamConfig)> {
    let first = format!("session-{}", session_id.get(..8).unwrap_or(session_id));
    let mut names = vec![first.clone()];
    if let Ok(listed) = layout.teams_dir().open_dir().and_then(|d| d.names()) {
        names.extend(
            listed
                .into_iter()
                .filter_map(|n| n.into_string().ok())
                .filter(|n| *n != first && !n.contains(".deleted-")),
        );
    }
    names.into_iter().find_map(|n| {
        let name = TeamName::parse(&n).ok()?;
        let path = layout.config_path(&name);
        let cfg = TeamConfig::parse(&path.read().ok()??, &path).ok()?;
        (cfg.lead_session_id.as_deref() == Some(session_id)).then_some((name, cfg))
    })
}

/// Unread entries per inbox file of `team` (owner name → count), for the given owners.
fn undelivered(layout: &Layout, team: &TeamName, owners: &[String]) -> Vec<String> {
    owners
        .iter()
        .filter(|o| {
            let Ok(member) = MemberName::parse(o) else {
                return false;
            };
            let Ok(Some(bytes)) = layout.inbox_path(team, &member).read() else {
                return false;
            };
            match serde_json::from_slice::<Vec<Value>>(&bytes) {
                Ok(entries) => entries
                    .iter()
                    .any(|e| e.get("read").and_then(Value::as_bool) != Some(true)),
                // A file being rewritten in place: not known to be empty.
                Err(_) => true,
            }
        })
        .cloned()
        .collect()
}

/// What one look at a team reads: the team, its `config.json` as last read, the lead's
/// transcript once it exists, and which panes of the run's tmux session are alive.
pub(super) struct Look<'a> {
    pub(super) team: &'a TeamName,
    pub(super) cfg: &'a TeamConfig,
    pub(super) lead_transcript: Option<&'a Loc>,
    pub(super) panes: &'a HashMap<String, bool>,
}

/// Looks at the team once: the done rule's signals, and each teammate's state. `spend` follows
/// the transcripts from one poll to the next.
pub(super) fn observe(
    layout: &Layout,
    look: &Look,
    spend: &mut SpendReader,
) -> (Observation, Vec<Teammate>) {
    let Look {
        team,
        cfg,
        lead_transcript,
        panes,
    } = *look;
    let mut h = DefaultHasher::new();
    let mut lead_turn_ended = false;
    let mut lead_failed = None;
    if let Some(p) = lead_transcript {
        let t = spend.file(p);
        // The synthetic entry that ends a turn whose retries ran out is not an answer.
        lead_failed = t
            .api
            .failed
            .map(|f| f.text.unwrap_or_else(|| "an API error".into()));
        lead_turn_ended = t.turn.ended && lead_failed.is_none();
        t.offset.hash(&mut h);
    }
    let subs = lead_transcript
        .map(subagent_transcripts)
        .unwrap_or_default();
    let mut working = Vec::new();
    let mut teammates = Vec::new();
    let mut owners = vec![LEAD.to_string()];
    let lead_name = cfg.lead().map(|l| l.name.clone());
    for m in &cfg.members {
        if Some(&m.name) == lead_name.as_ref() || m.name == LEAD {
            continue;
        }
        (&m.name, m.is_active, &m.tmux_pane_id, &m.backend_type).hash(&mut h);
        let pane = m.tmux_pane_id.clone().filter(|p| tmux::is_pane(p));
        let state = match (m.backend_type.as_deref(), &pane) {
            (Some("tmux"), Some(p)) | (None, Some(p)) => {
                if panes.get(p) != Some(&true) {
                    "exited"
                } else if m.is_active == Some(false) {
                    "idle"
                } else if m.is_active == Some(true) {
                    "working"
                } else {
                    "starting"
                }
            }
            (Some("in-process"), _) => match subs.get(&m.name) {
                None => "starting",
                Some(p) => {
                    let t = spend.file(p);
                    t.offset.hash(&mut h);
                    if t.turn.ended { "idle" } else { "working" }
                }
            },
            (None, None) => "starting",
            _ => {
                if m.is_active == Some(true) {
                    "working"
                } else {
                    "idle"
                }
            }
        };
        if matches!(state, "working" | "starting") {
            working.push(m.name.clone());
        }
        if state != "exited" {
            owners.push(m.name.clone());
        }
        teammates.push(Teammate {
            name: m.name.clone(),
            agent_type: m.agent_type.clone(),
            backend: m.backend_type.clone(),
            pane,
            state: state.to_string(),
        });
    }
    for (name, finished, jsonl) in lead_transcript.map(background_helpers).unwrap_or_default() {
        // No transcript yet: just started.
        let ended = jsonl.is_some_and(|j| {
            let t = spend.file(&j);
            t.offset.hash(&mut h);
            t.turn.ended
        });
        (&name, finished).hash(&mut h);
        if !finished && !ended {
            working.push(name);
        }
    }
    let undelivered = undelivered(layout, team, &owners);
    let obs = Observation {
        lead_turn_ended,
        lead_failed,
        working,
        undelivered,
        fingerprint: h.finish(),
    };
    (obs, teammates)
}

/// Panes of a session: id → alive.
pub(super) fn live_panes(session: &str) -> HashMap<String, bool> {
    tmux::Server::env()
        .panes(session)
        .into_iter()
        .map(|p| (p.id, !p.dead))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(ended: bool, working: &[&str], undelivered: &[&str], fp: u64) -> Observation {
        Observation {
            lead_turn_ended: ended,
            lead_failed: None,
            working: working.iter().map(|s| s.to_string()).collect(),
            undelivered: undelivered.iter().map(|s| s.to_string()).collect(),
            fingerprint: fp,
        }
    }

    #[test]
    fn done_rule_needs_all_three_for_the_whole_settle_time() {
        let t0 = Instant::now();
        let s = Duration::from_secs(3);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut r = Settle::default();
        assert!(!r.update(&obs(true, &[], &[], 1), at(0), s));
        assert!(!r.update(&obs(true, &[], &[], 1), at(2999), s));
        assert!(r.update(&obs(true, &[], &[], 1), at(3000), s));

        // Any rule failing restarts the clock.
        for bad in [
            obs(false, &[], &[], 1),
            obs(true, &["worker"], &[], 1),
            obs(true, &[], &["team-lead"], 1),
        ] {
            let mut r = Settle::default();
            assert!(!r.update(&obs(true, &[], &[], 1), at(0), s));
            assert!(!r.update(&bad, at(1000), s));
            assert!(!r.update(&obs(true, &[], &[], 1), at(2000), s));
            assert!(!r.update(&obs(true, &[], &[], 1), at(4999), s));
            assert!(r.update(&obs(true, &[], &[], 1), at(5000), s));
        }
        // Something moved between two polls (a short turn): the clock restarts too.
        let mut r = Settle::default();
        assert!(!r.update(&obs(true, &[], &[], 1), at(0), s));
        assert!(!r.update(&obs(true, &[], &[], 2), at(2000), s));
        assert!(!r.update(&obs(true, &[], &[], 2), at(4000), s));
        assert!(r.update(&obs(true, &[], &[], 2), at(5000), s));
        // --settle 0: the first quiet poll.
        assert!(Settle::default().update(&obs(true, &[], &[], 9), at(0), Duration::ZERO));
    }

    #[test]
    fn a_lead_whose_turn_failed_is_not_done_and_counts_only_when_all_else_is_quiet() {
        let failed = |working: &[&str], undelivered: &[&str]| Observation {
            lead_failed: Some("API Error: Request rejected (429)".into()),
            ..obs(false, working, undelivered, 1)
        };
        assert!(!failed(&[], &[]).quiet());
        let q = failed(&[], &[]).failed_quiet().unwrap();
        assert!(q.quiet());
        assert!(
            failed(&[], &[])
                .waiting_for()
                .contains("whose turn ended with an API error")
        );
        // A teammate still working, or mail for the lead, may prompt it again.
        assert!(failed(&["worker"], &[]).failed_quiet().is_none());
        assert!(failed(&[], &["team-lead"]).failed_quiet().is_none());
        assert!(obs(true, &[], &[], 1).failed_quiet().is_none());
    }
}
