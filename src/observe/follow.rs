//! A team followed while a command waits on it (`ask`, `wait`): its watch and file
//! notifications, the liveness of panes and processes re-probed on a clock, and what the
//! caller learns along the way ([`Observer`]).

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::host::tmux::Liveness;
use crate::observe::budget::{Budget, Exceeded, LOCATE_EVERY};
use crate::observe::watch::{Changes, Waker, Watch};
use crate::team::config::Team;

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
}

/// A watch kept current.
pub struct Following {
    /// The team's files as last seen.
    pub watch: Watch,
    /// Its file notifications (or the polling interval).
    pub waker: Waker,
    /// Which panes and processes run, as last probed.
    pub live: Liveness,
    last_probe: Instant,
    budget: Option<Budget>,
    dirs_at: Instant,
}

impl Following {
    /// Starts following `team` (polling every `poll` instead of file notifications when
    /// given), and returns the warnings of the first full read.
    pub fn new(team: Team, poll: Option<Duration>, now: DateTime<Utc>) -> (Following, Vec<String>) {
        let (mut watch, _) = Watch::new(team, None, now);
        let waker = watch.waker(poll);
        let warnings = watch.rescan(now).warnings;
        let live = liveness(&watch);
        let following = Following {
            watch,
            waker,
            live,
            last_probe: Instant::now(),
            budget: None,
            dirs_at: Instant::now(),
        };
        (following, warnings)
    }

    /// Checks `budget` now and after every wake-up from here on; the folders its transcripts are
    /// written in wake the follower up too. Returns the cap crossed, if the team's spend so far
    /// already crosses it, and what reading the transcripts skipped (later warnings come with
    /// the changes of [`Following::next`]).
    pub fn cap(&mut self, mut budget: Budget) -> (Option<Exceeded>, Vec<String>) {
        let over = budget.check();
        let warnings = budget.new_warnings();
        for d in budget.dirs() {
            self.waker.add(&d);
        }
        self.budget = Some(budget);
        (over, warnings)
    }

    /// The cap crossed by the team's spend as last read, if any.
    pub fn over_budget(&self) -> Option<Exceeded> {
        self.budget.as_ref()?.exceeded()
    }

    /// The budget being checked, if any (its spend, to report; its index, to save).
    pub fn budget(&mut self) -> Option<&mut Budget> {
        self.budget.as_mut()
    }

    /// Waits up to `max` (at most [`LIVENESS_EVERY`]) for changes, applies them, and probes
    /// liveness again when it is due.
    pub fn next(&mut self, max: Duration, clock: &dyn Fn() -> DateTime<Utc>) -> Changes {
        let mut changes = self
            .watch
            .next(&mut self.waker, max.min(LIVENESS_EVERY), clock);
        if self.last_probe.elapsed() >= LIVENESS_EVERY {
            self.live = liveness(&self.watch);
            self.last_probe = Instant::now();
        }
        if let Some(b) = self.budget.as_mut() {
            b.check();
            changes.warnings.extend(b.new_warnings());
            // New sessions write in new folders (a subagents folder, a teammate's project).
            if self.dirs_at.elapsed() >= LOCATE_EVERY {
                for d in b.dirs() {
                    self.waker.add(&d);
                }
                self.dirs_at = Instant::now();
            }
        }
        changes
    }
}

/// What can be checked about the members' processes now: the tmux panes, only when a member
/// has one recorded (asking tmux costs a process).
pub fn liveness(watch: &Watch) -> Liveness {
    if needs_panes(watch) {
        Liveness::probe()
    } else {
        Liveness::default()
    }
}

/// Whether any member's recorded tmux pane needs checking (so [`Liveness::probe`] is worth
/// running).
fn needs_panes(watch: &Watch) -> bool {
    watch.members().iter().any(|(_, m)| {
        m.get("tmuxPaneId")
            .and_then(Value::as_str)
            .is_some_and(|p| p.starts_with('%'))
    })
}
