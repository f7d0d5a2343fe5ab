//! A team followed while a command waits on it (`ask`, `wait`): its watch and file
//! notifications, its reader (the liveness of panes and processes re-probed on a clock, the
//! spend held against a cap), and what the caller learns along the way ([`Observer`]).

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::host::tmux::Liveness;
use crate::observe::budget::{Cap, Exceeded};
use crate::observe::reader::{Options, Records, TeamReader};
use crate::observe::spend::{LOCATE_EVERY, TeamSpend};
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

/// A team followed: the stream of changes to its files ([`Watch`]) and the team as it is now
/// ([`TeamReader`]: which members run, re-probed on a clock; the spend, when a cap is held).
pub struct Following {
    /// The team's files as last seen.
    pub watch: Watch,
    /// Its file notifications (or the polling interval).
    pub waker: Waker,
    /// The team as it is now.
    pub reader: TeamReader,
    /// The cap the spend is held against (unset: the transcripts are not read).
    cap: Cap,
    last_probe: Instant,
    dirs_at: Instant,
}

impl Following {
    /// Starts following `team` (polling every `poll` instead of file notifications when
    /// given), holding its spend against `cap` (read through the transcript index in
    /// `records`' data dir) when one is set, and returns the warnings of the first full read.
    pub fn new(
        team: Team,
        poll: Option<Duration>,
        records: Records,
        cap: Cap,
        now: DateTime<Utc>,
    ) -> (Following, Vec<String>) {
        let opts = Options {
            transcripts: cap.is_set(),
            ..Options::default()
        };
        let reader = TeamReader::of(team.clone(), records, opts);
        let (mut watch, _) = Watch::new(team, None, now);
        let waker = watch.waker(poll);
        let warnings = watch.rescan(now).warnings;
        let mut following = Following {
            watch,
            waker,
            reader,
            cap,
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

    /// The members as the watch last saw them tell which panes to probe.
    fn probe(&mut self) {
        let panes = self.watch.members().iter();
        self.reader
            .probe_for(panes.filter_map(|(_, m)| m.get("tmuxPaneId").and_then(Value::as_str)));
        self.last_probe = Instant::now();
    }

    /// Reads the team's spend, when a cap is held: returns the cap crossed, if the team's spend
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

    /// The cap crossed by the team's spend as last read, if any.
    pub fn over_budget(&self) -> Option<Exceeded> {
        self.cap.exceeded(self.reader.spend()?.spend())
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
