//! One team followed for the page, on a thread of its own, as `top` follows it: its files
//! watched ([`Watch`], woken by notifications), read through the one [`TeamReader`] into
//! `top`'s view model ([`top::view`]) with the needs of a person ([`needs`]), its transcripts'
//! growth read at most every [`TRANSCRIPT_EVERY`], and once a second the look no file tells
//! about ([`TeamReader::changed_unseen`]). What it read is published to the [`super::hub::Hub`]
//! once, as one event every page gets; an idle team publishes nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Shared;
use super::act::{held_detail, release_held};
use super::hub::event;
use crate::observe::human::{REQUEST_AFTER, needs};
use crate::observe::need::Need;
use crate::observe::reader::{self, TeamReader};
use crate::observe::timeline::{TIMELINE_LEN, Timeline};
use crate::observe::top::{self, View};
use crate::observe::watch::{Outside, Watch};
use crate::team::config::Team;
use crate::time::iso_millis;

/// How often the look no file tells about is made (a pane gone, an age past a threshold), as
/// `top`'s tick.
pub const TICK: Duration = Duration::from_secs(1);

/// A change in the transcripts is read at most this often (they are appended many times a
/// second while a member works), as `top` reads them.
pub const TRANSCRIPT_EVERY: Duration = Duration::from_millis(250);

/// How many messages a picture carries.
pub const MESSAGES: usize = 50;

/// The most points the cost series keeps (every other one is dropped when full).
const SERIES_POINTS: usize = 400;

/// A held plan approval, as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct HeldRow {
    /// The request.
    pub request_id: String,
    /// The planner.
    pub from: String,
    /// When the approval was given.
    pub since: String,
    /// What it waits for, in words.
    pub detail: String,
}

/// What a page shows of one team (`event: team`).
#[derive(Debug, Clone, Serialize)]
pub struct Picture<'a> {
    /// The team's name.
    pub team: &'a str,
    /// When this was read (the page ages times from it).
    pub at: String,
    /// Whether the page may answer and send (the server is not read-only and teamctl leads
    /// the team).
    pub writable: bool,
    /// Why not, when it may not.
    pub read_only_why: Option<String>,
    /// Why the team could not be read at all (a corrupt or missing `config.json`): shown as
    /// it is, the file left alone.
    pub trouble: Option<String>,
    /// `top`'s view model (`null` with `trouble`).
    pub view: Option<&'a View>,
    /// Why a person is needed now.
    pub needs: &'a [Need],
    /// The plan approvals given and held until their planner reports idle.
    pub held: Vec<HeldRow>,
    /// The team's total cost over time since the server started: `[[at, usd], …]`.
    pub cost: &'a [(String, f64)],
}

/// One followed team.
pub struct Live {
    shared: Arc<Shared>,
    watch: Watch,
    waker: crate::observe::waker::Waker,
    reader: TeamReader,
    timeline: Timeline,
    cost: Vec<(String, f64)>,
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
        let reader = TeamReader::of(team.clone(), shared.ground.records.clone(), opts);
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
            cost: Vec::new(),
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
        let mut next_tick = Instant::now() + TICK;
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
                next_tick = Instant::now() + TICK;
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

    /// Notes a transcript change: read at the latest [`TRANSCRIPT_EVERY`] after the last read.
    fn transcripts_soon(&mut self, unknown: bool) {
        let due = (self.transcripts_read + TRANSCRIPT_EVERY).max(Instant::now());
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
        let picture = match self.reader.read(now) {
            Ok(present) => {
                let opened = self.reader.team();
                let view = top::view(
                    &present,
                    opened,
                    self.reader.board(),
                    &self.timeline,
                    MESSAGES,
                );
                let lost = crate::observe::misaddressed::scan(opened).misaddressed;
                let needs = needs(&present, opened, self.reader.board(), REQUEST_AFTER, &lost);
                let (writable, why) = self.shared.writable(opened);
                self.track_cost(view.team.cost_usd, now);
                let json = serde_json::to_string(&Picture {
                    team: &name,
                    at: iso_millis(now),
                    writable,
                    read_only_why: why,
                    trouble: None,
                    view: Some(&view),
                    needs: &needs,
                    held: self.held_rows(&name),
                    cost: &self.cost,
                });
                json.unwrap_or_default()
            }
            Err(e) => serde_json::to_string(&Picture {
                team: &name,
                at: iso_millis(now),
                writable: false,
                read_only_why: Some("the team cannot be read".into()),
                trouble: Some(format!("{e:#}")),
                view: None,
                needs: &[],
                held: Vec::new(),
                cost: &self.cost,
            })
            .unwrap_or_default(),
        };
        self.shared.hub.publish(&name, event("team", &picture));
        self.hand_dirs();
    }

    /// The approvals held in `team`, for the page.
    fn held_rows(&self, team: &str) -> Vec<HeldRow> {
        self.shared
            .hub
            .held(team)
            .into_iter()
            .map(|h| HeldRow {
                detail: held_detail(&h.request.from),
                request_id: h.request.request_id,
                from: h.request.from,
                since: h.since,
            })
            .collect()
    }

    /// Adds a point to the cost series when the cost changed.
    fn track_cost(&mut self, cost: Option<f64>, now: DateTime<Utc>) {
        let Some(usd) = cost else { return };
        if self.cost.last().is_some_and(|(_, last)| *last == usd) {
            return;
        }
        self.cost.push((iso_millis(now), usd));
        if self.cost.len() > SERIES_POINTS {
            // Every other point but the last.
            let last = self.cost.pop();
            let mut i = 0;
            self.cost.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.cost.extend(last);
        }
    }

    /// Hands the transcripts' folders (new ones among them) to the waker.
    fn hand_dirs(&mut self) {
        for d in self.reader.transcript_dirs() {
            if !self.watched.contains(&d) {
                self.waker.add(&d);
                self.watched.push(d);
            }
        }
    }
}
