//! A question to one teammate and the wait for its answer, decided from a [`Watch`]'s changes.
//!
//! The rules (also in `teamctl ask --help` and docs/design.md, "What counts as the answer"):
//! - **taken**: the question left the teammate's inbox, or was marked `read: true`;
//! - **answered**: the first plain message (not a protocol frame) from the teammate that lands
//!   in the asker's inbox after the question was written, and not in the turn the teammate was
//!   in when the question arrived. Nothing rests on timestamps: the ids already in that inbox
//!   before the question was written are excluded; and when the teammate was in the middle of
//!   a turn (see [`crate::observe::unreported::mid_turn`]), what it writes until that turn's
//!   `idle_notification` answers something else (say, its brief). The take itself is no
//!   boundary: the real client (2.1.332) submits what it read to the model before its write
//!   that takes it lands, so with a fast model the answer can land first;
//! - **idle**: an `idle_notification` from the teammate that ends the question's turn (not the
//!   turn it was in when asked), the question taken, no answer, and no sign of a new turn (a
//!   message from it, `isActive` turning `true`) for [`IDLE_GRACE`] after both: a teammate
//!   busy with something else ends that turn before it starts on a question it took meanwhile,
//!   and the grace lets that new turn show; or, for a teammate that never reports idle, a turn
//!   begun after the one it was in when asked, ended in its transcript and unreported for
//!   [`crate::observe::unreported::UNREPORTED_AFTER`] ([`Outcome::Unreported`]);
//! - **gone**: as [`crate::observe::members::gone_reason`];
//! - **said** (only when asked for, [`Ask::from_transcript`]): idle as above, and the turn that
//!   took the question ended with text and wrote to nobody else: that text, read from the
//!   teammate's transcript ([`crate::observe::said`]), is the answer.
//!
//! A question sent again with the same idempotency key (nothing written) may have been answered
//! already; there the only record left is time, so an entry from the teammate in the asker's
//! inbox stamped at or after the first question counts as the answer.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::observe::budget::{Cap, Exceeded};
use crate::observe::event::Kind;
use crate::observe::follow::{Following, Observer, Watching};
use crate::observe::members::{
    frame_type, gone_reason, idle_detail, note_shutdown_events, shut_down_in, teammates,
};
use crate::observe::said::{self, Said};
use crate::observe::spend::{TeamSpend, TurnTimes};
use crate::observe::unreported::{TurnEnd, judge, signs_in};
use crate::observe::waker::Waker;
use crate::observe::watch::{Changes, Watch};
use crate::store::lock::LockOptions;
use crate::store::paths::MemberName;
use crate::store::{Entry, id};
use crate::team::config::Team;
use crate::team::mailbox::{self, SendRequest, Text};
use crate::team::model::first_line;
use crate::team::records::Records;

/// How long an `idle_notification` must stand, with no sign of a new turn, before the
/// teammate counts as idle without answering.
pub const IDLE_GRACE: Duration = Duration::from_millis(1500);

/// How a question ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The answer, as it is in the asker's inbox.
    Answered(Entry),
    /// The teammate went idle without answering: its `idle_notification`.
    Idle(Entry),
    /// The teammate went idle without answering and without reporting it: its turn ended at
    /// this time in its transcript, and no `idle_notification` came for
    /// [`crate::observe::unreported::UNREPORTED_AFTER`] (a teammate that never reports idle).
    Unreported(DateTime<Utc>),
    /// The teammate can no longer answer: why.
    Gone(String),
    /// The teammate went idle without a message, and its turn ended with this text (read from
    /// its transcript, or its `idle_notification`'s `result`).
    Said(Said),
}

/// A question as it was put in the teammate's inbox ([`Question::sent`]).
#[derive(Debug, Clone, Copy)]
pub struct Put<'a> {
    /// The question's entry id.
    pub id: &'a str,
    /// Whether it was written now: `false` for a repeated idempotent send of an entry written
    /// before.
    pub written: bool,
    /// That entry's timestamp, when known.
    pub timestamp: Option<&'a str>,
}

/// One question being waited on.
#[derive(Debug, Clone)]
pub struct Question {
    /// The teammate asked.
    pub to: String,
    /// The identity asked as: the answer lands in its inbox.
    pub asker: String,
    /// The question's entry id (set by [`Question::sent`]).
    pub id: String,
    excluded: HashSet<String>,
    since: Option<DateTime<Utc>>,
    /// When teamctl saw the question taken.
    pub taken_at: Option<DateTime<Utc>>,
    taken_instant: Option<Instant>,
    /// When teamctl saw the answer.
    pub answered_at: Option<DateTime<Utc>>,
    idle: Option<(Instant, Entry)>,
    /// The teammate was in a turn when asked, and that turn has not ended yet.
    earlier_turn: bool,
    /// When the question was written (its entry's timestamp), once it was.
    asked_at: Option<DateTime<Utc>>,
    /// When the turn it was in when asked began, as its transcript says (its prompt's time).
    earlier_began: Option<DateTime<Utc>>,
    /// The end, once there is one.
    pub outcome: Option<Outcome>,
    /// What was seen along the way, for progress lines (drained by the caller).
    pub notes: Vec<String>,
}

impl Question {
    /// Starts a question to `to` asked as `asker`, before it is written: every entry now in
    /// the asker's inbox is excluded from being the answer. `turn` is what `to`'s transcript
    /// says of its turn at `now` (a teammate that never reports idle is between turns when it
    /// says so: [`crate::observe::unreported::mid_turn`]).
    pub fn new(
        watch: &Watch,
        to: &str,
        asker: &str,
        turn: &TurnTimes,
        now: DateTime<Utc>,
    ) -> Question {
        Question {
            to: to.to_string(),
            asker: asker.to_string(),
            id: String::new(),
            excluded: watch
                .inbox(asker)
                .unwrap_or_default()
                .iter()
                .map(id::entry_id)
                .collect(),
            since: None,
            taken_at: None,
            taken_instant: None,
            answered_at: None,
            idle: None,
            earlier_turn: crate::observe::unreported::mid_turn(watch, to, turn, now),
            asked_at: None,
            earlier_began: turn.began_at.as_deref().and_then(crate::time::parse_time),
            outcome: None,
            notes: Vec::new(),
        }
    }

    /// Records the question `put` in the teammate's inbox and looks at that inbox as `watch`
    /// now has it.
    pub fn sent(&mut self, watch: &Watch, put: Put, now: DateTime<Utc>, at: Instant) {
        let Put {
            id,
            written,
            timestamp,
        } = put;
        self.id = id.to_string();
        self.asked_at = timestamp.and_then(crate::time::parse_time).or(Some(now));
        if !written {
            self.since = timestamp
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
        }
        self.observe(&Changes::default(), watch, now, at);
        if !written && self.taken_at.is_some() && self.outcome.is_none() {
            let earlier: Vec<Entry> = watch
                .inbox(&self.asker)
                .unwrap_or_default()
                .iter()
                .filter(|e| self.is_candidate(e) && self.stamped_since(e))
                .cloned()
                .collect();
            if let Some(e) = earlier.into_iter().next() {
                self.answered_at = Some(now);
                self.outcome = Some(Outcome::Answered(e));
            }
        }
    }

    fn stamped_since(&self, e: &Entry) -> bool {
        let Some(since) = self.since else {
            return false;
        };
        e.get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .is_some_and(|t| t >= since)
    }

    fn is_candidate(&self, e: &Entry) -> bool {
        e.get("from").and_then(Value::as_str) == Some(self.to.as_str())
            && e.get("text").is_some_and(Value::is_string)
            && frame_type(e).is_none()
    }

    /// Whether the question is still in the teammate's inbox, unread.
    pub fn waiting(&self, watch: &Watch) -> bool {
        watch
            .inbox(&self.to)
            .unwrap_or_default()
            .iter()
            .any(|e| id::entry_id(e) == self.id && e.get("read") != Some(&Value::Bool(true)))
    }

    /// Applies a batch of changes (already applied to `watch`). `now` stamps what is seen;
    /// `at` measures the idle grace.
    pub fn observe(&mut self, changes: &Changes, watch: &Watch, now: DateTime<Utc>, at: Instant) {
        if self.outcome.is_some() {
            return;
        }
        if self.taken_at.is_none() && !self.waiting(watch) {
            self.taken_at = Some(now);
            self.taken_instant = Some(at);
            self.notes.push(format!("{} took the question", self.to));
        }
        for ev in &changes.events {
            let Some(msg) = ev.message.as_ref() else {
                if ev.event == Kind::MemberUpdated
                    && ev.member.as_deref() == Some(self.to.as_str())
                    && ev
                        .changes
                        .as_ref()
                        .and_then(|c| c.get("isActive"))
                        .and_then(|c| c.get("to"))
                        == Some(&Value::Bool(true))
                {
                    self.idle = None;
                }
                continue;
            };
            if ev.event != Kind::Message || ev.from.as_deref() != Some(self.to.as_str()) {
                continue;
            }
            let eid = ev.id.clone().unwrap_or_default();
            let kind = frame_type(msg);
            if ev.to.as_deref() == Some(self.asker.as_str()) && self.is_candidate(msg) {
                if self.excluded.contains(&eid) {
                    continue;
                }
                if self.earlier_turn {
                    self.notes.push(format!(
                        "{} wrote to {} in the turn it was in when asked (not the answer): {}",
                        self.to,
                        self.asker,
                        first_line(msg.get("text").and_then(Value::as_str).unwrap_or(""), 60)
                    ));
                    self.excluded.insert(eid);
                    continue;
                }
                self.answered_at = Some(now);
                self.outcome = Some(Outcome::Answered(msg.clone()));
                return;
            }
            if kind.as_deref() == Some("idle_notification") {
                if self.earlier_turn {
                    self.earlier_turn = false;
                    self.notes.push(format!(
                        "{} finished the turn it was in when asked",
                        self.to
                    ));
                    continue;
                }
                self.notes.push(format!(
                    "{} is idle ({}); waiting {} ms for a new turn",
                    self.to,
                    idle_detail(msg),
                    IDLE_GRACE.as_millis()
                ));
                self.idle = Some((at, msg.clone()));
            } else {
                // Anything else it writes (to anyone) means it is working.
                self.idle = None;
            }
        }
    }

    /// Ends the question as idle once the grace has passed since both the take and the
    /// `idle_notification`.
    pub fn tick(&mut self, at: Instant) {
        if self.outcome.is_none()
            && let Some(end) = self.idle_deadline()
            && at >= end
            && let Some((_, note)) = &self.idle
        {
            self.outcome = Some(Outcome::Idle(note.clone()));
        }
    }

    /// Takes in `end`, the end of the teammate's newest turn (`turn`) in its transcript judged
    /// against its reports ([`crate::observe::unreported::judge`]): a teammate that never reports
    /// idle ends the turn it was in when asked, and then the question's turn, there only. An
    /// unreported end of the turn it was in when asked (begun when that one began) ends that
    /// turn; one of a later turn, the question taken, is the idle outcome
    /// ([`Outcome::Unreported`]).
    pub fn transcript(&mut self, end: Option<TurnEnd>, turn: &TurnTimes) {
        let Some(ended) = end.and_then(TurnEnd::unreported) else {
            return;
        };
        if self.outcome.is_some() || self.asked_at.is_none_or(|a| ended <= a) {
            return;
        }
        let began = turn.began_at.as_deref().and_then(crate::time::parse_time);
        let later = began.is_some_and(|b| self.earlier_began.is_none_or(|e| b > e));
        if self.earlier_turn {
            self.earlier_turn = false;
            self.notes.push(format!(
                "{} finished the turn it was in when asked (its transcript says so; it reported \
                 no idle)",
                self.to
            ));
            if !later {
                return;
            }
        }
        if self.taken_at.is_some() && later {
            self.outcome = Some(Outcome::Unreported(ended));
        }
    }

    /// When the idle grace ends, if the question was taken and an `idle_notification` stands.
    pub fn idle_deadline(&self) -> Option<Instant> {
        let (seen, _) = self.idle.as_ref()?;
        Some((*seen).max(self.taken_instant?) + IDLE_GRACE)
    }

    /// What the `idle_notification` says (reason, summary, last words).
    pub fn idle_text(note: &Entry) -> String {
        idle_detail(note)
    }

    /// What an [`Outcome::Unreported`] says: when the turn ended, and that it reported no idle.
    pub fn unreported_text(ended: DateTime<Utc>) -> String {
        format!(
            "its turn ended at {} in its transcript; it reported no idle (no idle_notification \
             for {} s: a start-up race is one cause, restarting it helps)",
            crate::time::iso_millis(ended),
            crate::observe::unreported::UNREPORTED_AFTER.as_secs()
        )
    }
}

/// What to ask, of whom, as whom, and how long to wait.
pub struct Ask<'a> {
    /// The team, opened.
    pub team: &'a Team,
    /// Who asks: the answer lands in this member's inbox.
    pub asker: &'a MemberName,
    /// The teammate to ask, or `None` for every teammate (every member but the asker).
    pub to: Option<MemberName>,
    /// The question (plain text).
    pub text: &'a Text,
    /// `summary` of the question's entry.
    pub summary: Option<String>,
    /// Makes the question's id deterministic (see [`crate::team::mailbox::SendRequest`]).
    pub idempotency_key: Option<String>,
    /// How long to wait for every answer.
    pub timeout: Duration,
    /// Poll at this interval instead of using file notifications.
    pub poll: Option<Duration>,
    /// The time written into the question's entry.
    pub now: DateTime<Utc>,
    /// How long to wait for the inbox lock.
    pub lock: &'a LockOptions,
    /// teamctl's own records, which every read of the team goes on with (the sent log, the
    /// lead record, the transcript index).
    pub records: &'a Records,
    /// Stop once the team's spend crosses this (unset: no cap).
    pub cap: Cap,
    /// A teammate that goes idle without answering, its turn having ended with text and
    /// written to nobody else, answers with that text ([`Outcome::Said`]).
    pub from_transcript: bool,
}

/// One question's end in an [`Asking`].
pub struct Asked {
    /// The question and its outcome (`None`: timed out).
    pub q: Question,
    /// The entry sent, when it is known.
    pub question: Option<Entry>,
    /// When it ended, in milliseconds since the wait started (`None`: timed out).
    pub ended_ms: Option<u64>,
    /// For a teammate that went idle without answering: what the turn ended with, if its
    /// transcript (or notification) shows it.
    pub said: Option<Said>,
}

/// The result of [`ask`].
pub struct Asking {
    /// Each question, in the order asked.
    pub asked: Vec<Asked>,
    /// The first error writing a question (with every teammate asked, the others still are).
    pub send_error: Option<anyhow::Error>,
    /// Files that could not be read while waiting, each once.
    pub warnings: Vec<String>,
    /// How long the whole wait took.
    pub waited_ms: u64,
    /// The watch as it ended (to tell whether a question still waits in an inbox).
    pub watch: Watch,
    /// Its file notifications, still open: dropping them is the slow part of exiting (see the
    /// binary's quick exit).
    pub waker: Waker,
    /// The cap the team's spend crossed, when that ended the wait.
    pub budget: Option<Exceeded>,
    /// The team's spend as last read, when a cap was given.
    pub spend: Option<TeamSpend>,
}

/// Asks [`Ask::to`] (or every teammate) [`Ask::text`] and waits until each has answered, gone
/// idle without answering, is gone, the team's spend crosses [`Ask::cap`], or the timeout
/// passes. `clock` stamps what is seen.
///
/// # Errors
/// Before anything is sent: a team already over its cap ([`crate::Error::Budget`]), a teammate
/// that is already gone (asking one), a team without teammates (asking all); a failed write
/// asking one; an error from `observer`.
pub fn ask(
    req: &Ask,
    clock: &dyn Fn() -> DateTime<Utc>,
    observer: &mut dyn Observer,
) -> Result<Asking> {
    let started = Instant::now();
    let watching = Watching {
        cap: req.cap,
        turns: true,
        ..Watching::default()
    };
    let (mut f, warnings) = Following::new(
        req.team.clone(),
        req.poll,
        req.records.clone(),
        watching,
        clock(),
    );
    let (over, skipped) = f.start_spend();
    for w in &skipped {
        observer.warn(w);
    }
    if let Some(e) = over {
        return Err(crate::Error::Budget(format!("{e} (nothing was sent)")).into());
    }
    observer.changed(&f.watch, None)?;
    let (recipients, bad_name) = recipients(req, &f.watch, observer)?;
    let mut round = Round {
        req,
        shut: shut_down_in(&f.watch),
        f,
        warnings,
        send_error: bad_name,
        started,
        clock,
        observer,
    };
    let mut asked: Vec<Asked> = Vec::new();
    for to in &recipients {
        if let Some(a) = round.put(to)? {
            asked.push(a);
        }
    }
    round.follow(&mut asked)?;
    let Round {
        mut f,
        mut warnings,
        send_error,
        ..
    } = round;
    for a in asked.iter_mut() {
        if let Err(e) = what_was_said(req, a, clock) {
            warnings.push(format!("could not read what {} said: {e:#}", a.q.to));
        }
    }
    let budget = f.over_budget();
    // The transcripts are read for the turns' ends too: the spend is said only with a cap.
    let spend = f.last_spend().filter(|_| req.cap.is_set());
    Ok(Asking {
        asked,
        send_error,
        warnings: dedup(warnings),
        waited_ms: started.elapsed().as_millis() as u64,
        watch: f.watch,
        waker: f.waker,
        budget: budget.filter(|_| spend.is_some()),
        spend,
    })
}

/// One round of asking: the question, the team followed, and what the round has met so far.
struct Round<'r> {
    req: &'r Ask<'r>,
    f: Following,
    /// The members seen shutting down.
    shut: HashSet<String>,
    warnings: Vec<String>,
    /// Why not everyone was asked (with `--all`, the first failed send).
    send_error: Option<anyhow::Error>,
    started: Instant,
    clock: &'r dyn Fn() -> DateTime<Utc>,
    observer: &'r mut dyn Observer,
}

/// Whom to ask: [`Ask::to`], or every teammate whose name keeps the naming rules (the error
/// for those that do not, said once, comes second).
fn recipients(
    req: &Ask,
    watch: &Watch,
    observer: &mut dyn Observer,
) -> Result<(Vec<MemberName>, Option<anyhow::Error>)> {
    if let Some(to) = &req.to {
        return Ok((vec![to.clone()], None));
    }
    let names = teammates(watch, req.asker.as_str());
    if names.is_empty() {
        bail!("team '{}' has no teammates to ask", req.team.name);
    }
    // A member whose name breaks the naming rules cannot be asked; the others still are, and
    // `send_error` says not everyone was.
    let mut ok = Vec::new();
    let mut bad = None;
    for n in &names {
        match MemberName::parse(n) {
            Ok(m) => ok.push(m),
            Err(_) => {
                let e = anyhow::anyhow!(
                    "could not ask {}: its name in config.json breaks the naming rules",
                    crate::store::paths::quote(n)
                );
                observer.warn(&format!("{e:#}"));
                bad.get_or_insert(e);
            }
        }
    }
    Ok((ok, bad))
}

impl Round<'_> {
    /// Puts the question to `to` (unless it is gone), and returns what is followed for it; with
    /// `--all` a failed send is kept in `send_error` and the others are still asked.
    fn put(&mut self, to: &MemberName) -> Result<Option<Asked>> {
        let (req, clock) = (self.req, self.clock);
        let f = &mut self.f;
        let all = req.to.is_none();
        let turn = f.turn_times(to.as_str());
        let mut q = Question::new(&f.watch, to.as_str(), req.asker.as_str(), &turn, clock());
        if let Some(why) = gone_reason(&f.watch, to.as_str(), &self.shut, f.live()) {
            if !all {
                bail!("cannot ask {to}: {why} (nothing was sent)");
            }
            q.outcome = Some(Outcome::Gone(why));
            return Ok(Some(Asked {
                q,
                question: None,
                ended_ms: Some(0),
                said: None,
            }));
        }
        let send = SendRequest {
            to: to.clone(),
            from: req.asker.clone(),
            text: req.text.clone(),
            summary: req.summary.clone(),
            color: None,
            force: false,
            idempotency_key: req.idempotency_key.clone(),
        };
        let d = match mailbox::send(req.team, &send, req.now, req.lock, req.records.sent_log()) {
            Ok(d) => d,
            Err(e) if all => {
                self.observer.warn(&format!("could not ask {to}: {e:#}"));
                self.send_error.get_or_insert(e);
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        if let Some(e) = &d.log_error {
            self.observer.warn(e);
        }
        if !d.written {
            self.observer.hint(&format!(
                "{to} was already asked this ({}): nothing sent, waiting for its answer",
                d.id
            ));
        }
        // Look at the teammate's inbox as it is after the write before anything else.
        let synced = f.watch.reload_paths(&[d.inbox.to_path_buf()], clock());
        // A repeated question that already left the inbox is known only to the sent log.
        let stamp = d
            .entry
            .as_ref()
            .and_then(|e| e.get("timestamp"))
            .and_then(|t| t.as_str().map(String::from))
            .or_else(|| {
                Some(
                    req.records
                        .sent_log()?
                        .find(req.team.name.as_str(), &d.id)
                        .ok()??
                        .at,
                )
            });
        let put = Put {
            id: &d.id,
            written: d.written,
            timestamp: stamp.as_deref(),
        };
        q.sent(&f.watch, put, clock(), Instant::now());
        q.observe(&synced, &f.watch, clock(), Instant::now());
        Ok(Some(Asked {
            q,
            question: d.entry.clone(),
            ended_ms: None,
            said: None,
        }))
    }

    /// Follows the team until every question has an outcome, the timeout passes or the spend
    /// crosses the cap.
    fn follow(&mut self, asked: &mut [Asked]) -> Result<()> {
        let (clock, started) = (self.clock, self.started);
        let (f, shut) = (&mut self.f, &mut self.shut);
        let deadline = started + self.req.timeout;
        loop {
            let now_i = Instant::now();
            for a in asked.iter_mut().filter(|a| a.ended_ms.is_none()) {
                a.q.tick(now_i);
                let signs = signs_in(&f.watch, &a.q.to);
                let turn = f.turn_times(&a.q.to);
                a.q.transcript(judge(&turn, &signs, clock()), &turn);
                for n in a.q.notes.drain(..) {
                    self.observer.note(&n);
                }
                if a.q.outcome.is_none()
                    && let Some(why) = gone_reason(&f.watch, &a.q.to, shut, f.live())
                {
                    a.q.outcome = Some(Outcome::Gone(why));
                }
                if a.q.outcome.is_some() {
                    a.ended_ms = Some(started.elapsed().as_millis() as u64);
                }
            }
            if asked.iter().all(|a| a.ended_ms.is_some())
                || now_i >= deadline
                || f.over_budget().is_some()
            {
                return Ok(());
            }
            let mut wait = deadline - now_i;
            for d in asked.iter().filter_map(|a| a.q.idle_deadline()) {
                wait = wait.min(d.saturating_duration_since(now_i));
            }
            let changes = f.next(wait, clock);
            self.warnings.extend(changes.warnings.iter().cloned());
            self.observer.changed(&f.watch, Some(&changes))?;
            note_shutdown_events(&changes, shut);
            for a in asked.iter_mut().filter(|a| a.ended_ms.is_none()) {
                a.q.observe(&changes, &f.watch, clock(), Instant::now());
                for n in a.q.notes.drain(..) {
                    self.observer.note(&n);
                }
            }
        }
    }
}

/// For a question that ended idle: what the turn said ([`Asked::said`]), and with
/// [`Ask::from_transcript`] that text as the answer when the turn wrote to nobody else.
fn what_was_said(req: &Ask, a: &mut Asked, clock: &dyn Fn() -> DateTime<Utc>) -> Result<()> {
    let question = (req.asker.as_str(), req.text.as_str());
    let found = match &a.q.outcome {
        Some(Outcome::Idle(note)) => said_by_note(req, a, note, clock)?,
        // Its transcript showed the end already: read once.
        Some(Outcome::Unreported(ended)) => {
            said::turn_ended_at(req.team, &a.q.to, *ended, Some(question))?
        }
        _ => return Ok(()),
    };
    let Some(s) = found else {
        return Ok(());
    };
    if req.from_transcript && s.sent_to.iter().all(|t| t == req.asker.as_str()) {
        a.q.answered_at = Some(clock());
        a.q.outcome = Some(Outcome::Said(s.clone()));
    }
    a.said = Some(s);
    Ok(())
}

/// What the turn that `note` (an `idle_notification`) ended said, waiting for the transcript to
/// agree with it when the text is to be the answer.
fn said_by_note(
    req: &Ask,
    a: &Asked,
    note: &Entry,
    clock: &dyn Fn() -> DateTime<Utc>,
) -> Result<Option<Said>> {
    let question = (req.asker.as_str(), req.text.as_str());
    let patience = if req.from_transcript {
        said::TRANSCRIPT_WAIT
    } else {
        Duration::ZERO
    };
    let looking = said::Looking {
        question: Some(question),
        patience,
    };
    said::turn_ended_by(req.team, &a.q.to, note, looking, clock)
}

fn dedup(v: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    v.into_iter().filter(|w| seen.insert(w.clone())).collect()
}
