//! Blocking until something holds in a team's files: tasks done, members idle or gone, a
//! message from someone, a message delivered.
//!
//! A [`Tracker`] is built from a [`Watch`] (the files as they are) and then fed every batch of
//! [`Changes`](crate::observe::watch::Changes) the watch reports, so a condition is checked against the files first and then on
//! every change; the watch is in place before the first check, so nothing between the two is
//! lost. The rules, also in `teamctl wait --help`:
//! - a member is **gone** when it left `config.json`, when a `shutdown_approved` frame from it
//!   was seen, when its recorded tmux pane exists and is dead, or (in-process teammates) when the
//!   lead process recorded in `leadProcess` is dead; a member with nothing recorded to check
//!   counts as alive;
//! - a member is **idle** when nothing waits unread in its inbox and its newest event is the end
//!   of a turn: an `idle_notification` from it, or `isActive` turning `false`. Taking an entry
//!   from its inbox, a new entry in it, a plain message from it or `isActive` turning `true`
//!   make it busy. The newest event decides, not the current `isActive`: Claude Code drops a
//!   config write whose lock it cannot get within 0.65 s, so `isActive: true` can outlive the
//!   turn. At the start, with no history, the newest of its entries (by timestamp), its inbox's
//!   last drain (one within a second of its `idle_notification` is that turn's own take, which
//!   the real client writes after the turn can have ended) and `config.json`'s last write (the
//!   files' mtimes) decide, as `status` does, and
//!   `isActive: false` counts as idle when no `idle_notification` of it is left (a Claude Code
//!   lead consumes them). And by its transcript ([`crate::observe::unreported`]): a member whose
//!   turn ended there with nothing since is idle 5 s after that end, whether it reported it or
//!   not (a teammate that never reports idle; an `isActive: true` Claude Code wrote late).

mod condition;
mod tracker;

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::observe::budget::{Cap, Exceeded};
use crate::observe::follow::{Following, Observer, Watching};
use crate::observe::keep::{Acted, Action, Hand, Rules};
use crate::observe::spend::TeamSpend;
use crate::observe::waker::Waker;
use crate::observe::watch::Watch;
use crate::team::config::Team;
use crate::team::records::Records;

pub use condition::{After, Condition, ConditionState, Spec};
pub use tracker::Tracker;

/// Who hears what while [`wait`] blocks.
pub struct Hooks<'a> {
    /// The watch and its changes, progress, warnings and hints.
    pub observer: &'a mut dyn Observer,
    /// Each condition as it is met (or was already, at the start).
    pub met: &'a mut dyn FnMut(&ConditionState) -> Result<()>,
    /// The open conditions, once the wait starts to block.
    pub blocking: &'a mut dyn FnMut(&[&ConditionState]),
    /// Does what the rules ask for a stuck member (a nudge, a restart).
    pub hand: &'a mut dyn Hand,
    /// Each action done.
    pub acted: &'a mut dyn FnMut(&Acted),
}

/// How a [`wait`] ended.
pub struct Waited {
    /// Every condition's state, in the order given.
    pub states: Vec<ConditionState>,
    /// Whether the wait was met (every condition, or one with `any`).
    pub met: bool,
    /// Why the wait can no longer be met, when that ended it.
    pub impossible: Option<String>,
    /// How long it waited.
    pub waited_ms: u64,
    /// The watch as it ended.
    pub watch: Watch,
    /// Its file notifications, still open: dropping them is the slow part of exiting (see the
    /// binary's quick exit).
    pub waker: Waker,
    /// The cap the team's spend crossed, when that ended the wait.
    pub budget: Option<Exceeded>,
    /// The team's spend as last read, when a cap was given.
    pub spend: Option<TeamSpend>,
    /// Why a stuck member ended the wait (`exit` in the rules): exit 7, 8 or 9.
    pub stuck: Option<anyhow::Error>,
}

/// How long and how a [`wait`] may go on.
#[derive(Debug)]
pub struct Limits {
    /// Give up after this long.
    pub timeout: Duration,
    /// Poll at this interval instead of using file notifications.
    pub poll: Option<Duration>,
    /// Stop when the team's spend crosses this cap (checked at the start too).
    pub cap: Cap,
    /// teamctl's own records, which every read of the team goes on with: the lead and run
    /// records (where the team's panes are asked about), the sent log (which dates messages
    /// that already left an inbox, and says which requests teamctl answered) and the
    /// transcript index the cap reads through.
    pub records: Records,
    /// What to do about stuck members.
    pub rules: Rules,
}

/// Blocks until `spec` is met in `team`, can no longer be met, the team's spend crosses the
/// budget, or the timeout passes: checks the files as they are first, then every change (the
/// watch is in place before the first check). `clock` stamps what is seen; `hooks` hear what
/// happens.
///
/// # Errors
/// An unknown member, task or message id in `spec`; an error from `observer`.
pub fn wait(
    team: Team,
    spec: Spec,
    limits: Limits,
    clock: &dyn Fn() -> DateTime<Utc>,
    mut hooks: Hooks,
) -> Result<Waited> {
    let started = Instant::now();
    let deadline = started + limits.timeout;
    let any = spec.any;
    let watching = Watching {
        cap: limits.cap,
        rules: limits.rules,
        // A teammate that never reports idle is idle by its transcript.
        turns: spec
            .conditions
            .iter()
            .any(|c| matches!(c, Condition::Idle(_))),
        ..Watching::default()
    };
    let (mut f, warnings) =
        Following::new(team, limits.poll, limits.records.clone(), watching, clock());
    for w in warnings {
        hooks.observer.warn(&w);
    }
    let capped = limits.cap.is_set();
    let (mut over, skipped) = f.start_spend();
    for w in skipped {
        hooks.observer.warn(&w);
    }
    for w in f.budget_warnings() {
        hooks.observer.budget_warning(&w);
    }
    hooks.observer.changed(&f.watch, None)?;
    let mut tracker = Tracker::new(&f, spec, limits.records.sent_log(), clock())?;
    for s in tracker.states.iter().filter(|s| s.met) {
        (hooks.met)(s)?;
    }
    let mut stuck = None;
    if !tracker.done(any) && over.is_none() {
        stuck = keep(&mut f, &mut tracker, &mut hooks, clock)?;
    }
    if !tracker.done(any) && over.is_none() && stuck.is_none() {
        let open: Vec<&ConditionState> = tracker.states.iter().filter(|s| !s.met).collect();
        (hooks.blocking)(&open);
    }
    let mut impossible = None;
    while !tracker.done(any) && over.is_none() && stuck.is_none() {
        if let Some(why) = tracker.impossible(any) {
            impossible = Some(why);
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let changes = f.next(deadline - now, clock);
        for w in &changes.warnings {
            hooks.observer.warn(w);
        }
        hooks.observer.changed(&f.watch, Some(&changes))?;
        for i in tracker.observe(&changes, &f, clock()) {
            (hooks.met)(&tracker.states[i])?;
        }
        for w in f.budget_warnings() {
            hooks.observer.budget_warning(&w);
        }
        over = f.over_budget();
        if !tracker.done(any) && over.is_none() {
            stuck = keep(&mut f, &mut tracker, &mut hooks, clock)?;
        }
    }
    let spend = f.last_spend();
    Ok(Waited {
        met: tracker.done(any) && over.is_none() && stuck.is_none(),
        states: tracker.states,
        impossible,
        waited_ms: started.elapsed().as_millis() as u64,
        watch: f.watch,
        waker: f.waker,
        budget: over,
        spend: spend.filter(|_| capped),
        stuck,
    })
}

/// Acts on the stuck members as the rules say; returns the error that ends the wait, if an
/// action does (any other failure to read the team is a warning: the conditions still hold).
/// A member restarted is looked at again at once (its new pane recorded, the panes probed), so
/// that the conditions never judge it by the pane it had: "every teammate is gone" is not
/// true of a team whose one teammate was just started again.
///
/// # Errors
/// From `observer` and `met`.
fn keep(
    f: &mut Following,
    tracker: &mut Tracker,
    hooks: &mut Hooks,
    clock: &dyn Fn() -> DateTime<Utc>,
) -> Result<Option<anyhow::Error>> {
    match f.keep(hooks.hand, clock()) {
        Ok(done) => {
            done.iter().for_each(&mut *hooks.acted);
            if done.iter().any(|a| a.action == Action::Restart && a.ok) {
                let changes = f.look_again(clock());
                hooks.observer.changed(&f.watch, Some(&changes))?;
                for i in tracker.observe(&changes, f, clock()) {
                    (hooks.met)(&tracker.states[i])?;
                }
            }
            Ok(None)
        }
        Err(e) if e.downcast_ref::<crate::Error>().is_some() => Ok(Some(e)),
        Err(e) => {
            hooks.observer.warn(&format!("{e:#}"));
            Ok(None)
        }
    }
}
