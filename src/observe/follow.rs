//! A team followed while a command waits on it (`ask`, `wait`): its watch and file
//! notifications, its reader (the liveness of panes and processes re-probed on a clock, the
//! spend held against a cap), and what the caller learns along the way ([`Observer`]).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::host::tmux::Liveness;
use crate::observe::budget::{Cap, Exceeded, Warner, Warning};
use crate::observe::event::Event;
use crate::observe::human::needs;
use crate::observe::keep::{Acted, Hand, Keeper, Rules};
use crate::observe::need::Need;
use crate::observe::reader::{Options, TeamReader};
use crate::observe::spend::{LOCATE_EVERY, TeamSpend, TurnTimes};
use crate::observe::waiting::Waiting;
use crate::observe::waker::Waker;
use crate::observe::watch::{Changes, Watch};
use crate::store::paths::MemberName;
use crate::team::config::Team;
use crate::team::records::Records;

/// How often the liveness of panes and processes is probed while nothing changes: pane and
/// process deaths leave no trace in the files, and asking tmux costs a process, so a clock
/// (not every change) finds them.
pub const LIVENESS_EVERY: Duration = Duration::from_millis(500);

/// What the caller learns while a command waits: the watch as it starts and after each
/// wake-up, progress notes, warnings and hints. `--policy` answers teammates' requests in
/// [`Observer::changed`].
pub trait Observer {
    /// Called once the watch is set up, before anything is written (`changes` is `None`), and
    /// again after each wake-up (`changes` may be empty).
    ///
    /// # Errors
    /// An error ends the wait with it.
    fn changed(&mut self, watch: &Watch, changes: Option<&Changes>) -> Result<()>;
    /// A progress line (what was seen along the way).
    fn note(&mut self, msg: &str);
    /// A warning.
    fn warn(&mut self, msg: &str);
    /// A hint.
    fn hint(&mut self, msg: &str);
    /// Spend crossed `--warn-at` of a limit (told once per limit): a warning unless the caller
    /// tells it otherwise.
    fn budget_warning(&mut self, w: &Warning) {
        self.warn(&w.to_string());
    }
}

/// What a [`Following`] reads besides the team's files.
#[derive(Debug, Clone, Default)]
pub struct Watching {
    /// The cap the spend is held against (unset: none).
    pub cap: Cap,
    /// What to do about stuck members.
    pub rules: Rules,
    /// Tell each member's waiting reason as it changes (`waiting` events).
    pub reasons: bool,
    /// Tell when a person is needed and when no longer (`needs_human` events), a request
    /// counting once it has waited this long.
    pub needs: Option<Duration>,
    /// Only these members' inboxes (watch `--member`).
    pub only: Option<Vec<MemberName>>,
    /// Read the transcripts for the ends of the members' turns (a teammate that never reports
    /// idle: [`crate::observe::unreported::judge`]).
    pub turns: bool,
}

/// A team followed: the stream of changes to its files ([`Watch`]) and the team as it is now
/// ([`TeamReader`]: which members run, re-probed on a clock; the spend, when a cap is held).
pub struct Following {
    /// The team's files as last seen.
    pub watch: Watch,
    /// Its file notifications (or the polling interval).
    pub waker: Waker,
    /// The team as it is now.
    pub reader: TeamReader,
    /// The cap the spend is held against.
    cap: Cap,
    /// Its `--warn-at` crossings told so far.
    warner: Warner,
    /// What to do about stuck members (`None`: nothing but waiting).
    keeper: Option<Keeper>,
    /// Each member's waiting reason as last told (`None`: not told: no `waiting` events).
    reasons: Option<HashMap<String, Option<Waiting>>>,
    /// The threshold of `needs_human` events and the needs last told.
    needs: Option<(Duration, Vec<Need>)>,
    last_probe: Instant,
    dirs_at: Instant,
}

impl Following {
    /// Starts following `team` (polling every `poll` instead of file notifications when
    /// given), holding its spend against `cap` (read through the transcript index in
    /// `records`' data dir) when one is set and acting on stuck members by `rules`, and returns
    /// the warnings of the first full read.
    pub fn new(
        team: Team,
        poll: Option<Duration>,
        records: Records,
        w: Watching,
        now: DateTime<Utc>,
    ) -> (Following, Vec<String>) {
        let Watching {
            cap,
            rules,
            reasons,
            needs,
            only,
            turns,
        } = w;
        let opts = Options {
            transcripts: cap.is_set() || rules.is_active() || reasons || needs.is_some() || turns,
            stall_after: rules.stall_after,
            no_response_after: rules.no_response_after,
            ..Options::default()
        };
        let reader = TeamReader::of(team.clone(), records, opts);
        let (mut watch, _) = Watch::new(team, only, now);
        let waker = watch.waker(poll);
        let warnings = watch.rescan(now).warnings;
        let mut following = Following {
            watch,
            waker,
            reader,
            cap,
            warner: Warner::default(),
            keeper: rules.is_active().then(|| Keeper::new(rules)),
            reasons: reasons.then(HashMap::new),
            needs: needs.map(|after| (after, Vec::new())),
            last_probe: Instant::now(),
            dirs_at: Instant::now(),
        };
        following.probe();
        (following, warnings)
    }

    /// Which panes and processes run, as last probed.
    pub fn live(&self) -> &Liveness {
        self.reader.live()
    }

    /// When `name`'s newest turn began and ended, as its transcript was last read (nothing
    /// when the transcripts are not read).
    pub fn turn_times(&self, name: &str) -> TurnTimes {
        self.reader
            .spend()
            .and_then(|s| s.spend().members.get(name))
            .map(|m| m.turn.clone())
            .unwrap_or_default()
    }

    /// The members as the watch last saw them tell which panes to probe.
    fn probe(&mut self) {
        let panes = self.watch.members().iter();
        self.reader
            .probe_for(panes.filter_map(|(_, m)| m.get("tmuxPaneId").and_then(Value::as_str)));
        self.last_probe = Instant::now();
    }

    /// Reads the team's files again and probes the panes now, after something outside the
    /// watch changed them (a member started again in a new pane).
    pub fn look_again(&mut self, at: DateTime<Utc>) -> Changes {
        let changes = self.watch.rescan(at);
        self.probe();
        changes
    }

    /// Reads the team's spend, when a cap is held or rules are followed: returns the cap crossed, if the team's spend
    /// so far already crosses it, and what reading the transcripts skipped (later warnings come
    /// with the changes of [`Following::next`]). The folders its transcripts are written in
    /// wake the follower up from here on.
    pub fn start_spend(&mut self) -> (Option<Exceeded>, Vec<String>) {
        let Some(spend) = self.reader.spend_mut() else {
            return (None, Vec::new());
        };

        let over = self.cap.exceeded(spend.read());
        let warnings = spend.new_warnings();
        for d in spend.dirs() {
            self.waker.add(&d);
        }
        (over, warnings)
    }

    /// Reads the team as it is now and acts on the members stuck for a reason the rules set an
    /// action for (nothing without rules); returns what was done.
    ///
    /// # Errors
    /// [`crate::Error::Stuck`] when an action ends the command; the team can no longer be
    /// opened.
    pub fn keep(&mut self, hand: &mut dyn Hand, now: DateTime<Utc>) -> Result<Vec<Acted>> {
        let Some(keeper) = self.keeper.as_mut() else {
            return Ok(Vec::new());
        };
        let present = self.reader.read(now)?;
        keeper.check(&present, self.reader.board(), now, hand)
    }

    /// The `waiting` events since the last call: each member whose waiting reason changed
    /// (nothing unless [`Watching::reasons`]).
    ///
    /// # Errors
    /// The team can no longer be opened.
    pub fn reasons(&mut self, now: DateTime<Utc>) -> Result<Vec<Event>> {
        if self.reasons.is_none() && self.needs.is_none() {
            return Ok(Vec::new());
        }
        let present = self.reader.read(now)?;
        let at = crate::time::iso_millis(now);
        let team = self.reader.team().name.to_string();
        let mut events = Vec::new();
        if let Some((after, told)) = self.needs.as_mut() {
            let opened = self.reader.team();
            let lost = crate::observe::misaddressed::scan(opened).misaddressed;
            let now_needs = needs(&present, opened, self.reader.board(), *after, &lost);
            let same =
                |a: &Need, b: &Need| (a.cause, &a.member, &a.key) == (b.cause, &b.member, &b.key);
            for gone in told
                .iter()
                .filter(|t| !now_needs.iter().any(|n| same(n, t)))
            {
                let cleared = Need {
                    cleared: true,
                    ..gone.clone()
                };
                events.push(Event::needs_human(&team, &at, cleared));
            }
            for new in now_needs
                .iter()
                .filter(|n| !told.iter().any(|t| same(n, t)))
            {
                events.push(Event::needs_human(&team, &at, new.clone()));
            }
            *told = now_needs;
        }
        let Some(last) = self.reasons.as_mut() else {
            return Ok(events);
        };
        for m in &present.status.members {
            if last.get(&m.name) == Some(&m.waiting) {
                continue;
            }
            // The first read tells only who waits.
            if last.contains_key(&m.name) || m.waiting.is_some() {
                let detail = m.waiting_detail.clone();
                events.push(Event::waiting(&team, &at, &m.name, m.waiting, detail));
            }
            last.insert(m.name.clone(), m.waiting);
        }
        Ok(events)
    }

    /// Follows the team until `emit` says stop (returns `true`) or `deadline` passes (returns
    /// `false`), as [`Watch::follow`] does, with the `waiting` events among the changes.
    ///
    /// # Errors
    /// Errors from `emit` (such as a closed pipe).
    pub fn follow(
        &mut self,
        deadline: Option<Instant>,
        now: &dyn Fn() -> DateTime<Utc>,
        emit: &mut dyn FnMut(Changes) -> Result<bool>,
    ) -> Result<bool> {
        loop {
            let wait = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) => left,
                    None => return Ok(false),
                },
                None => LIVENESS_EVERY,
            };
            let mut changes = self.next(wait, now);
            match self.reasons(now()) {
                Ok(events) => changes.events.extend(events),
                Err(e) => changes.warnings.push(format!("{e:#}")),
            }
            if (!changes.events.is_empty() || !changes.warnings.is_empty()) && emit(changes)? {
                return Ok(true);
            }
        }
    }

    /// The cap crossed by the team's spend as last read, if any.
    pub fn over_budget(&self) -> Option<Exceeded> {
        self.cap.exceeded(self.reader.spend()?.spend())
    }

    /// The `--warn-at` crossings of the spend as last read, each told once.
    pub fn budget_warnings(&mut self) -> Vec<Warning> {
        match self.reader.spend() {
            Some(s) => self.warner.check(&self.cap, s.spend()),
            None => Vec::new(),
        }
    }

    /// The spend as last read, if a cap is held (its index saved: a failure to save it only
    /// makes the next read longer).
    pub fn last_spend(&mut self) -> Option<TeamSpend> {
        let spend = self.reader.spend_mut()?;
        let _ = spend.save();
        Some(spend.spend().clone())
    }

    /// Waits up to `max` (at most [`LIVENESS_EVERY`]) for changes, applies them, and probes
    /// liveness again when it is due.
    pub fn next(&mut self, max: Duration, clock: &dyn Fn() -> DateTime<Utc>) -> Changes {
        let mut changes = self
            .watch
            .next(&mut self.waker, max.min(LIVENESS_EVERY), clock);
        if self.last_probe.elapsed() >= LIVENESS_EVERY {
            self.probe();
        }
        if let Some(s) = self.reader.spend_mut() {
            s.read();
            changes.warnings.extend(s.new_warnings());
            // New sessions write in new folders (a subagents folder, a teammate's project).
            if self.dirs_at.elapsed() >= LOCATE_EVERY {
                for d in s.dirs() {
                    self.waker.add(&d);
                }
                self.dirs_at = Instant::now();
            }
        }
        changes
    }
}
