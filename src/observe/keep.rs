//! Keeping a team going, unattended: what `wait` and `run` do when a member is stuck
//! (`--on-rate-limit`, `--on-stall`, `--on-dead`). A [`Keeper`] looks at each read of the team
//! ([`Present`]), finds the members stuck for a reason an action is set for, and asks its
//! [`Hand`] to act: a nudge (a short message naming the member's task and its silence), a
//! restart (the member started again on its last session), or an exit with the reason's own
//! code ([`crate::Error::Stuck`]). Each occurrence is acted on once; restarts are capped
//! (`--max-restarts`): a member that keeps dying ends the command instead of looping.
//!
//! The reasons (from [`crate::observe::status`]): `rate_limited`, `overloaded` and `api_error`
//! for `--on-rate-limit` (waited out by default: Claude Code retries them itself, up to 10 times
//! over about 3 minutes, so `exit` acts only once it gives up on the call, or when a usage window
//! resets more than [`WINDOW_TOO_FAR`] from now); `stalled` and `no_response` for
//! `--on-stall`, and `idle_unreported` for its `restart` and `exit` (a nudge does not help a
//! teammate that reports no idle); `dead` for `--on-dead`. Doing the actions (writing a
//! message, starting a pane) is the ops layer's: it implements [`Hand`].

use std::collections::HashMap;
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::error::{Error, Stuck as StuckKind};
use crate::observe::reader::Present;
use crate::observe::status::MemberStatus;
use crate::observe::waiting::{Waiting, WaitingDetail};
use crate::team::tasks::Board;

/// A usage window that resets later than this from now is not waited out by `--on-rate-limit
/// exit`.
pub const WINDOW_TOO_FAR: Duration = Duration::from_secs(300);

/// What to do about a member the API refuses (`--on-rate-limit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnApi {
    /// Wait it out (Claude Code retries the call itself).
    #[default]
    Wait,
    /// End with exit 7.
    Exit,
}

/// What to do about a member that stalled or got no answer (`--on-stall`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnStall {
    /// Nothing: wait for the timeout.
    #[default]
    Wait,
    /// Send it a short message naming its task and how long it has been silent.
    Nudge,
    /// Start it again on its last session.
    Restart,
    /// End with exit 8.
    Exit,
}

/// What to do about a member whose pane or process is gone with work waiting (`--on-dead`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OnDead {
    /// Nothing: wait for the timeout.
    #[default]
    Wait,
    /// Start it again on its last session.
    Restart,
    /// End with exit 9.
    Exit,
}

/// The rules a [`Keeper`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// `--on-rate-limit`.
    pub on_api: OnApi,
    /// `--on-stall`.
    pub on_stall: OnStall,
    /// `--on-dead`.
    pub on_dead: OnDead,
    /// `--max-restarts`: restarts per member, at most.
    pub max_restarts: u32,
    /// `--stall-after`: a member inside a turn whose transcript has not grown this long.
    pub stall_after: Duration,
    /// `--no-response-after`: a request without an answer this long.
    pub no_response_after: Duration,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            on_api: OnApi::Wait,
            on_stall: OnStall::Wait,
            on_dead: OnDead::Wait,
            max_restarts: 2,
            stall_after: Duration::from_secs(300),
            no_response_after: crate::observe::reader::NO_RESPONSE_AFTER,
        }
    }
}

impl Rules {
    /// Whether any rule asks for more than waiting (else nothing needs to be read for them).
    pub fn is_active(&self) -> bool {
        self.on_api != OnApi::Wait || self.on_stall != OnStall::Wait || self.on_dead != OnDead::Wait
    }

    /// Whether a rule may restart a member.
    pub fn restarts(&self) -> bool {
        self.on_stall == OnStall::Restart || self.on_dead == OnDead::Restart
    }

    /// What to do about `reason`, if anything.
    fn action(&self, reason: Waiting) -> Option<Action> {
        match reason {
            Waiting::RateLimited | Waiting::Overloaded | Waiting::ApiError => match self.on_api {
                OnApi::Wait => None,
                OnApi::Exit => Some(Action::Exit),
            },
            Waiting::Stalled | Waiting::NoResponse => match self.on_stall {
                OnStall::Wait => None,
                OnStall::Nudge => Some(Action::Nudge),
                OnStall::Restart => Some(Action::Restart),
                OnStall::Exit => Some(Action::Exit),
            },
            Waiting::Dead => match self.on_dead {
                OnDead::Wait => None,
                OnDead::Restart => Some(Action::Restart),
                OnDead::Exit => Some(Action::Exit),
            },
            // Idle already: a nudge would only make it work a turn it again reports nothing of.
            Waiting::IdleUnreported => match self.on_stall {
                OnStall::Wait | OnStall::Nudge => None,
                OnStall::Restart => Some(Action::Restart),
                OnStall::Exit => Some(Action::Exit),
            },
            Waiting::Permission | Waiting::Plan | Waiting::Blocked => None,
        }
    }
}

/// An action taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A message sent to the member.
    Nudge,
    /// The member started again.
    Restart,
    /// The command ended.
    Exit,
}

/// A member stuck for a reason an action is set for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stuck {
    /// The member.
    pub member: String,
    /// Why.
    pub reason: Waiting,
    /// What more is known.
    pub detail: Option<WaitingDetail>,
    /// The task it owns that is in progress (id, subject), if any.
    pub task: Option<(String, String)>,
    /// When it was last seen doing anything (its activity, else its last event).
    pub last_seen: Option<String>,
}

/// What a [`Keeper`] did (`wait`/`run` print one line, or a JSON Lines event, per action).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Acted {
    /// `nudge`, `restart` or `exit`.
    pub action: Action,
    /// Who and why.
    #[serde(flatten)]
    pub stuck: Stuck,
    /// What happened (or why it could not be done).
    pub outcome: String,
    /// Whether it was done.
    pub ok: bool,
}

/// Does the actions a [`Keeper`] decides on: the ops layer's part.
pub trait Hand {
    /// Sends `s.member` a nudge; returns what was sent.
    ///
    /// # Errors
    /// When it could not be sent.
    fn nudge(&mut self, s: &Stuck) -> Result<String>;
    /// Starts `s.member` again on its last session; returns what was started.
    ///
    /// # Errors
    /// When it cannot be restarted (an in-process teammate, no session to resume, …).
    fn restart(&mut self, s: &Stuck) -> Result<String>;
}

/// Follows [`Rules`] over the reads of one team.
#[derive(Debug, Default)]
pub struct Keeper {
    rules: Rules,
    /// The occurrence each member was last acted on for, by reason.
    acted: HashMap<(String, Waiting), String>,
    restarts: HashMap<String, u32>,
}

impl Keeper {
    /// A keeper following `rules`.
    pub fn new(rules: Rules) -> Keeper {
        Keeper {
            rules,
            ..Keeper::default()
        }
    }

    /// The rules.
    pub fn rules(&self) -> Rules {
        self.rules
    }

    /// Acts on what `present` shows (with `board`, the task board of the same read), once per
    /// occurrence. Returns what was done.
    ///
    /// # Errors
    /// [`Error::Stuck`] when an `exit` action (or a restart past the cap) ends the command.
    pub fn check(
        &mut self,
        present: &Present,
        board: &Board,
        now: DateTime<Utc>,
        hand: &mut dyn Hand,
    ) -> Result<Vec<Acted>> {
        let mut done = Vec::new();
        for m in &present.status.members {
            let Some(reason) = m.waiting else { continue };
            let Some(action) = self.rules.action(reason) else {
                continue;
            };
            if kind_of(reason) == StuckKind::Api && !given_up(m.waiting_detail.as_ref(), now) {
                continue;
            }
            let occurrence = occurrence(m);
            let key = (m.name.clone(), reason);
            if self.acted.get(&key) == Some(&occurrence) {
                continue;
            }
            self.acted.insert(key, occurrence);
            let stuck = stuck(m, reason, board);
            done.push(self.act(stuck, action, hand)?);
        }
        Ok(done)
    }

    fn act(&mut self, stuck: Stuck, action: Action, hand: &mut dyn Hand) -> Result<Acted> {
        let kind = kind_of(stuck.reason);
        let done = match action {
            Action::Exit => return Err(Error::Stuck(kind, stopped(&stuck)).into()),
            Action::Nudge => hand.nudge(&stuck),
            Action::Restart => {
                let n = self.restarts.entry(stuck.member.clone()).or_default();
                if *n >= self.rules.max_restarts {
                    let why = format!(
                        "{}; restarted {n} time(s) already (--max-restarts {})",
                        stopped(&stuck),
                        self.rules.max_restarts
                    );
                    return Err(Error::Stuck(kind, why).into());
                }
                *n += 1;
                hand.restart(&stuck)
            }
        };
        let (ok, outcome) = match done {
            Ok(told) => (true, told),
            Err(e) => (false, format!("{e:#}")),
        };
        Ok(Acted {
            action,
            stuck,
            outcome,
            ok,
        })
    }
}

/// Whether Claude Code has given up on a failing call (its retries ran out), or the usage
/// window it waits for resets too far away to wait out.
fn given_up(detail: Option<&WaitingDetail>, now: DateTime<Utc>) -> bool {
    let Some(d) = detail else { return false };
    let far = d
        .resets_at
        .as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .and_then(|t| (t.with_timezone(&Utc) - now).to_std().ok())
        .is_some_and(|left| left > WINDOW_TOO_FAR);
    d.exhausted || far
}

/// Which exit a reason ends with.
fn kind_of(reason: Waiting) -> StuckKind {
    match reason {
        Waiting::Dead => StuckKind::Dead,
        Waiting::Stalled | Waiting::NoResponse | Waiting::IdleUnreported => StuckKind::Stall,
        _ => StuckKind::Api,
    }
}

/// What tells one occurrence of a member's being stuck from the next: when it started, else
/// what the member was last seen doing.
fn occurrence(m: &MemberStatus) -> String {
    let since = m.waiting_detail.as_ref().and_then(|d| d.since.clone());
    let activity = m.activity.as_ref().and_then(|a| a.at.clone());
    since
        .or(activity)
        .or_else(|| m.last_event_at.clone())
        .unwrap_or_default()
}

fn stuck(m: &MemberStatus, reason: Waiting, board: &Board) -> Stuck {
    let task = board
        .tasks
        .iter()
        .find(|t| t.owner.as_deref() == Some(m.name.as_str()) && t.status == "in_progress")
        .map(|t| (t.id.clone(), t.subject.clone()));
    Stuck {
        member: m.name.clone(),
        reason,
        detail: m.waiting_detail.clone(),
        task,
        last_seen: m
            .activity
            .as_ref()
            .and_then(|a| a.at.clone())
            .or_else(|| m.last_event_at.clone()),
    }
}

/// The message of an exit: `alice is rate_limited (429 …, attempt 3 of 10)`.
fn stopped(s: &Stuck) -> String {
    let mut msg = format!("{} is {}", crate::store::paths::quote(&s.member), s.reason);
    if let Some(d) = &s.detail
        && let Some(text) = &d.message
    {
        msg.push_str(&format!(" ({})", crate::team::model::first_line(text, 160)));
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::status::{State, TaskCounts, TeamInfo, TeamStatus, Totals};

    struct Recorder(Vec<String>);

    impl Hand for Recorder {
        fn nudge(&mut self, s: &Stuck) -> Result<String> {
            self.0.push(format!("nudge {}", s.member));
            Ok("sent".into())
        }
        fn restart(&mut self, s: &Stuck) -> Result<String> {
            self.0.push(format!("restart {}", s.member));
            Ok("started".into())
        }
    }

    fn member(name: &str, waiting: Option<Waiting>, since: &str) -> MemberStatus {
        MemberStatus {
            name: name.into(),
            agent_id: None,
            agent_type: None,
            color: None,
            backend: None,
            state: State::Active,
            last_event_at: Some(since.into()),
            last_event_kind: None,
            is_active: None,
            process_alive: None,
            session_status: None,
            unread: 0,
            pending: 0,
            tasks_in_progress: 0,
            tasks_owned: 0,
            in_config: true,
            tokens: None,
            cost_usd: None,
            cost_source: None,
            model: None,
            activity: None,
            waiting,
            waiting_detail: None,
            idle_unreported_since: None,
            transcripts: Vec::new(),
            context: None,
            worktree: None,
            sandbox: None,
        }
    }

    fn present(members: Vec<MemberStatus>) -> Present {
        Present {
            status: TeamStatus {
                team: TeamInfo {
                    name: "t".into(),
                    description: None,
                    created_at: None,
                    lead_agent_id: None,
                    lead_session_id: None,
                    lead_pid: None,
                    lead_alive: None,
                    format: "unknown".into(),
                    last_activity_at: None,
                },
                members,
                tasks: TaskCounts::default(),
                totals: Totals::default(),
                warnings: Vec::new(),
                unlisted: Vec::new(),
            },
            requests: Vec::new(),
        }
    }

    #[test]
    fn each_occurrence_is_acted_on_once_and_restarts_are_capped() {
        let rules = Rules {
            on_stall: OnStall::Nudge,
            on_dead: OnDead::Restart,
            max_restarts: 1,
            ..Rules::default()
        };
        let mut k = Keeper::new(rules);
        let mut hand = Recorder(Vec::new());
        let board = Board::default();
        let p = present(vec![
            member("alice", Some(Waiting::Stalled), "2026-11-29T10:00:00.000Z"),
            member("bob", Some(Waiting::Dead), "2026-11-29T10:00:00.000Z"),
            member(
                "carol",
                Some(Waiting::RateLimited),
                "2026-11-29T10:00:00.000Z",
            ),
        ]);
        let now = "2026-11-29T10:10:00Z".parse().unwrap();
        let done = k.check(&p, &board, now, &mut hand).unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(hand.0, ["nudge alice", "restart bob"]);
        // The same occurrence again: nothing.
        assert!(k.check(&p, &board, now, &mut hand).unwrap().is_empty());
        // bob dies again (a new occurrence): past the cap, the command ends with exit 9.
        let p = present(vec![member(
            "bob",
            Some(Waiting::Dead),
            "2026-11-29T10:05:00.000Z",
        )]);
        let err = k.check(&p, &board, now, &mut hand).unwrap_err();
        let Some(Error::Stuck(kind, msg)) = err.downcast_ref::<Error>() else {
            panic!("{err:#}");
        };
        assert_eq!((*kind, kind.code()), (StuckKind::Dead, 9));
        assert!(
            msg.contains("restarted 1 time(s) already (--max-restarts 1)"),
            "{msg}"
        );
    }
}
