//! One team followed for the page, on a thread of its own, as `top` follows it: its files
//! watched ([`Watch`], woken by notifications), read through the one [`TeamReader`] into
//! `top`'s view model ([`top::view`]) with the needs of a person ([`needs`]), its transcripts'
//! growth read at most every [`TRANSCRIPTS_EVERY`], and once a second the look no file tells
//! about ([`TeamReader::changed_unseen`]). Its transcripts are read from their start once, for
//! the members' cost over time ([`crate::observe::spend::SpendReader::keep_series`]), then only
//! what they gain. What it read is published to the [`super::hub::Hub`] once, as one event
//! every page gets ([`Picture`]); an idle team publishes nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use chrono::{DateTime, Utc};

use super::Shared;
use super::act::release_held;
use super::hub::event;
use super::picture::{CostOverTime, HeldRow, Picture};
use crate::observe::human::{REQUEST_AFTER, needs};
use crate::observe::reader::{self, LOOK_EVERY, Present, TRANSCRIPTS_EVERY, TeamReader};
use crate::observe::timeline::{TIMELINE_LEN, Timeline};
use crate::observe::top::{self, View};
use crate::observe::watch::{Outside, Watch};
use crate::team::config::Team;
use crate::time::iso_millis;

/// How many messages a picture carries.
pub const MESSAGES: usize = 50;

/// One followed team.
pub struct Live {
    shared: Arc<Shared>,
    watch: Watch,
    waker: crate::observe::waker::Waker,
    reader: TeamReader,
    timeline: Timeline,
    cost: CostOverTime,
    /// What `cost` was made from: the responses fed so far, and each member's cost.
    cost_of: Option<(u64, Vec<Option<f64>>)>,
    /// The transcript folders the waker was given.
    watched: Vec<PathBuf>,
    /// A transcript change waiting for its read, and whether a file nobody owns was among it.
    transcripts_due: Option<(Instant, bool)>,
    transcripts_read: Instant,
}

impl Live {
    /// Starts following `team`.
    pub fn new(shared: Arc<Shared>, team: Team, now: DateTime<Utc>) -> Live {
        let opts = reader::Options::default();
        let mut reader = TeamReader::of(team.clone(), shared.ground.records.clone(), opts);
        if let Some(s) = reader.spend_mut() {
            s.keep_series();
        }
        let (watch, existing) = Watch::new(team.clone(), None, now);
        let waker = watch.waker(shared.poll);
        let mut timeline = Timeline::new(TIMELINE_LEN);
        let sent = shared
            .ground
            .records
            .sent_log()
            .and_then(|l| l.entries().ok());
        timeline.seed_sent(team.name.as_str(), &sent.unwrap_or_default());
        timeline.load(&existing);
        Live {
            shared,
            watch,
            waker,
            reader,
            timeline,
            cost: CostOverTime::default(),
            cost_of: None,
            watched: Vec::new(),
            transcripts_due: None,
            transcripts_read: Instant::now(),
        }
    }

    /// Follows the team until the server stops or (`--all-teams`) the team is gone.
    pub fn run(mut self) {
        let name = self.reader.team().name.to_string();
        let clock = self.shared.clock.clone();
        self.publish(clock());
        let mut next_tick = Instant::now() + LOOK_EVERY;
        while !self.shared.stopping.load(Ordering::Relaxed) {
            let until = self
                .transcripts_due
                .map_or(next_tick, |(t, _)| t.min(next_tick));
            let wait = until.saturating_duration_since(Instant::now());
            let (changes, outside) = self.watch.next_seen(&mut self.waker, wait, &*clock);
            let mut dirty = !changes.events.is_empty() || !changes.warnings.is_empty();
            self.timeline.apply(&changes);
            match outside {
                Outside::None => {}
                Outside::Paths(paths) => {
                    let unknown = paths.iter().any(|p| !self.reader.knows(p));
                    self.transcripts_soon(unknown);
                }
                Outside::Unknown => self.transcripts_soon(true),
            }
            if self
                .transcripts_due
                .is_some_and(|(t, _)| Instant::now() >= t)
            {
                dirty = true;
            }
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + LOOK_EVERY;
                if !self.shared.serves(&name) {
                    break;
                }
                dirty |= self.reader.changed_unseen(clock());
                // A hold given on the page shows within a tick.
                dirty |= !self.shared.hub.held(&name).is_empty();
            }
            if dirty {
                if !self.shared.serves(&name) {
                    break;
                }
                self.publish(clock());
            }
        }
    }

    /// Notes a transcript change: read at the latest [`TRANSCRIPTS_EVERY`] after the last read.
    fn transcripts_soon(&mut self, unknown: bool) {
        let due = (self.transcripts_read + TRANSCRIPTS_EVERY).max(Instant::now());
        let (at, was_unknown) = self.transcripts_due.unwrap_or((due, false));
        self.transcripts_due = Some((at.min(due), was_unknown || unknown));
    }

    /// Reads the team (the approvals held released first) and publishes its picture.
    fn publish(&mut self, now: DateTime<Utc>) {
        if let Some((_, unknown)) = self.transcripts_due.take() {
            if unknown && let Some(s) = self.reader.spend_mut() {
                s.relocate();
            }
            self.transcripts_read = Instant::now();
        }
        let team = self.reader.team().clone();
        release_held(&self.shared, &team, now);
        let name = team.name.to_string();
        let json = match self.reader.read(now) {
            Ok(present) => self.picture(&name, &present, now),
            Err(e) => {
                let p = Picture::trouble(&name, iso_millis(now), format!("{e:#}"), &self.cost);
                serde_json::to_string(&p).unwrap_or_default()
            }
        };
        // Watched before the picture goes out; what was written between the read and the
        // watch is read once more.
        if self.hand_dirs() {
            self.transcripts_soon(false);
        }
        self.shared.hub.publish(&name, event("team", &json));
    }

    /// The picture of what was just read (`present`), as JSON.
    fn picture(&mut self, name: &str, present: &Present, now: DateTime<Utc>) -> String {
        let opened = self.reader.team();
        let board = self.reader.board();
        let view = top::view(present, opened, board, &self.timeline, MESSAGES);
        let lost = crate::observe::misaddressed::scan(opened).misaddressed;
        let needs = needs(present, opened, board, REQUEST_AFTER, &lost);
        let (writable, why) = self.shared.writable(opened);
        let held: Vec<HeldRow> = self.shared.hub.held(name).iter().map(HeldRow::of).collect();
        let earlier_holds = HeldRow::earlier(&self.shared.earlier_holds, name, &held, &view);
        self.track_cost(&view);
        serde_json::to_string(&Picture {
            team: name,
            at: iso_millis(now),
            writable,
            read_only_why: why,
            trouble: None,
            view: Some(&view),
            needs: &needs,
            held,
            earlier_holds,
            cost: &self.cost,
        })
        .unwrap_or_default()
    }

    /// Draws the cost over time again when the transcripts gave responses or a member's cost
    /// changed since it was last drawn.
    fn track_cost(&mut self, view: &View) {
        let Some(series) = self.reader.spend().and_then(|s| s.series()) else {
            return;
        };
        let of = (
            series.fed,
            view.members.iter().map(|m| m.cost_usd).collect(),
        );
        if self.cost_of.as_ref() != Some(&of) {
            self.cost = CostOverTime::of(&series.builder, view);
            self.cost_of = Some(of);
        }
    }

    /// Hands the transcripts' folders (new ones among them) to the waker; whether one was new.
    fn hand_dirs(&mut self) -> bool {
        let mut new = false;
        for d in self.reader.transcript_dirs() {
            if !self.watched.contains(&d) {
                self.waker.add(&d);
                self.watched.push(d);
                new = true;
            }
        }
        new
    }
}
