//! Each member's state over time, rebuilt from what a record keeps: its transcripts (a prompt or
//! a message starts a turn, a response without a tool call ends it, an `api_error` line is a
//! failed call Claude Code retries, a repeated `requestDigest` a retry it wrote no cause for, a
//! synthetic `isApiErrorMessage` entry a call it gave up on), its `idle_notification` frames,
//! and its permission and plan requests (from the request to the answer). A turn whose
//! transcript stayed silent for the stall threshold is `stalled` from then on, as `status` would
//! have said. What the record cannot tell is said by [`LIMITS`]: a lane is a reading of the
//! record, never more certain than it.
//!
//! A member's sessions are marked where each begins: the first is its start, any later one a
//! restart or a resume into a new session. A lane has at most [`Context::max_spans`] spans
//! ([`MAX_SPANS`] by default): a longer one is resampled onto that many equal slices, each showing the waiting state it held (if any),
//! else the state it held longest, so a wait is never smoothed away.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::ser::{SerializeTuple, Serializer};

use crate::observe::waiting::Waiting;
use crate::team::actions::{Action, Kind};
use crate::team::transcript::entry::{Content, Line};
use crate::time::{iso_millis, parse_time};

/// The most spans a lane keeps by default ([`Context::max_spans`]).
pub const MAX_SPANS: usize = 240;

/// What a lane cannot know, for a page's legend.
pub const LIMITS: &str = "A lane is read from the record: turns from the transcripts, idle \
notifications, and permission and plan requests until their answer. It cannot know a member's \
state before its first transcript line, nor whether a process or pane died except at the \
record's time (a member dead then is drawn dead from its last line). An interactive session \
writes no cause for a retried call (shown as an API error), a restart or resume into the same \
session is marked only when teamctl made it (its journal says so; one made by hand or by \
another tool shows only as a gap), and a member without a transcript has no lane.";

/// A member's state over a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaneState {
    /// Idle: between turns.
    Idle,
    /// Inside a turn.
    Working,
    /// A turn whose transcript stayed silent for the stall threshold.
    Stalled,
    /// Its calls were refused for their rate (429) or a usage window.
    RateLimited,
    /// The API was overloaded (529).
    Overloaded,
    /// Another API failure, or a retry whose cause Claude Code did not write.
    ApiError,
    /// A plan of its waited for approval.
    Plan,
    /// A permission request of its waited for an answer.
    Permission,
    /// Its process or pane was gone with work waiting (known at the record's time only).
    Dead,
}

impl LaneState {
    /// Every state, in the legend's order.
    pub const ALL: [LaneState; 9] = [
        LaneState::Working,
        LaneState::Idle,
        LaneState::Stalled,
        LaneState::RateLimited,
        LaneState::Overloaded,
        LaneState::ApiError,
        LaneState::Permission,
        LaneState::Plan,
        LaneState::Dead,
    ];

    /// Its name, as the embedded JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LaneState::Idle => "idle",
            LaneState::Working => "working",
            LaneState::Stalled => "stalled",
            LaneState::RateLimited => "rate_limited",
            LaneState::Overloaded => "overloaded",
            LaneState::ApiError => "api_error",
            LaneState::Plan => "plan",
            LaneState::Permission => "permission",
            LaneState::Dead => "dead",
        }
    }

    /// Whether it is a reason to wait (not working, not idle).
    pub fn waits(self) -> bool {
        !matches!(self, LaneState::Idle | LaneState::Working)
    }

    /// The lane state of an API failure: by its HTTP status, else its kind.
    fn of_api(status: Option<u16>, kind: Option<&str>) -> LaneState {
        match (status, kind) {
            (Some(429), _) | (_, Some("rate_limit")) => LaneState::RateLimited,
            (Some(529), _) | (_, Some("overloaded")) => LaneState::Overloaded,
            _ => LaneState::ApiError,
        }
    }
}

/// What a session marks on a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    /// Its first session began.
    Started,
    /// Another session began: a restart, or a resume into a new session.
    NewSession,
    /// teamctl started the member again after it was stuck (its journal says so).
    Restart,
    /// teamctl resumed the member after the team stopped (its journal says so).
    Resume,
}

/// One span of a lane: `[from, to, state]` in JSON.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Its start.
    pub from: DateTime<Utc>,
    /// Its end.
    pub to: DateTime<Utc>,
    /// The state.
    pub state: LaneState,
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(3)?;
        t.serialize_element(&iso_millis(self.from))?;
        t.serialize_element(&iso_millis(self.to))?;
        t.serialize_element(&self.state)?;
        t.end()
    }
}

/// A mark on a lane: `[at, mark]` in JSON, `[at, mark, why]` for one from teamctl's journal.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkAt {
    /// When.
    pub at: DateTime<Utc>,
    /// What.
    pub mark: Mark,
    /// Why, for a restart or a resume teamctl made (its journal's words).
    pub why: Option<String>,
}

impl Serialize for MarkAt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut t = s.serialize_tuple(2 + usize::from(self.why.is_some()))?;
        t.serialize_element(&iso_millis(self.at))?;
        t.serialize_element(&self.mark)?;
        if let Some(why) = &self.why {
            t.serialize_element(why)?;
        }
        t.end()
    }
}

/// A member's lane.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Lane {
    /// Its spans, oldest first, back to back.
    pub spans: Vec<Span>,
    /// Where its sessions began.
    pub marks: Vec<MarkAt>,
    /// Whether it had more than [`Context::max_spans`] spans and was resampled.
    pub resampled: bool,
}

/// A protocol frame between members, as the record's messages have it.
#[derive(Debug, Clone, Copy)]
pub struct FrameAt<'a> {
    /// When it was sent.
    pub at: DateTime<Utc>,
    /// Sender.
    pub from: &'a str,
    /// Recipient.
    pub to: &'a str,
    /// Its type (`idle_notification`, `permission_request`, …).
    pub kind: &'a str,
}

/// What a lane is drawn against besides the member's transcripts.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The record's time: the lanes end there.
    pub end: DateTime<Utc>,
    /// A turn silent this long is stalled.
    pub stall_after: Duration,
    /// Every frame of the record, in any order.
    pub frames: &'a [FrameAt<'a>],
    /// Why the member waited at the record's time (`status`), if it did.
    pub waiting_at_end: Option<Waiting>,
    /// The most spans the lane keeps (more are resampled onto this many slices).
    pub max_spans: usize,
}

/// What one transcript line says of its member's state.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ev {
    /// A prompt or message: a turn starts.
    Prompt,
    /// Another line (a tool's result, …): the member is there.
    Activity,
    /// A response: `true` when it ends the turn.
    Answer(bool),
    /// A failed call being retried.
    Retry(LaneState),
    /// The retries ran out: the turn ended on this failure.
    GaveUp(LaneState),
    /// A request (its digest's hash): the same one again is a retry.
    Request(u64),
}

#[derive(Debug, Default)]
struct Member {
    events: Vec<(DateTime<Utc>, Ev)>,
    sessions: Vec<(String, DateTime<Utc>)>,
    /// The restarts and resumes teamctl's journal says it made.
    actions: Vec<MarkAt>,
}

/// Collects each member's transcript lines that tell its state.
#[derive(Debug, Default)]
pub struct LaneBuilder {
    members: BTreeMap<String, Member>,
}

impl LaneBuilder {
    /// Takes one parsed line of one of `member`'s own sessions.
    pub fn feed(&mut self, member: &str, l: &Line) {
        let Some(at) = l.timestamp.as_deref().and_then(parse_time) else {
            return;
        };
        let Some(ev) = event(l) else { return };
        if !self.members.contains_key(member) {
            self.members.insert(member.to_string(), Member::default());
        }
        let Some(m) = self.members.get_mut(member) else {
            return;
        };
        if let Some(sid) = l.session_id.as_deref() {
            match m.sessions.iter_mut().find(|(s, _)| s == sid) {
                Some((_, first)) => *first = (*first).min(at),
                None => m.sessions.push((sid.to_string(), at)),
            }
        }
        push(&mut m.events, at, ev);
    }

    /// Takes one line of teamctl's journal of its restarts and resumes (one without a time is
    /// left out). It marks the member's lane when the member has a line with a time.
    pub fn note_action(&mut self, a: &Action) {
        let Some(at) = parse_time(&a.at) else { return };
        let mark = match a.action {
            Kind::Restart => Mark::Restart,
            Kind::Resume => Mark::Resume,
        };
        let m = self.members.entry(a.member.clone()).or_default();
        m.actions.push(MarkAt {
            at,
            mark,
            why: Some(a.why.clone()),
        });
    }

    /// Whether `member` has a line with a time.
    pub fn has(&self, member: &str) -> bool {
        self.members
            .get(member)
            .is_some_and(|m| !m.events.is_empty())
    }

    /// The first and the last time of any member's lines, the last stretched to the restarts
    /// and resumes teamctl made to a member with lines (`LaneBuilder::actions_of`), so that
    /// none falls off the lanes (`None`: no line with a time).
    pub fn extent(&self) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
        let first = self.first_line()?;
        let lines = self
            .members
            .values()
            .flat_map(|m| m.events.iter().map(|e| e.0));
        let actions = self.members.keys().flat_map(|n| self.actions_of(n, first));
        Some((first, lines.chain(actions.map(|a| a.at)).max()?))
    }

    /// The first time of any member's lines.
    fn first_line(&self) -> Option<DateTime<Utc>> {
        self.members
            .values()
            .flat_map(|m| m.events.iter().map(|e| e.0))
            .min()
    }

    /// The restarts and resumes of `member` (one with lines) teamctl's journal holds from the
    /// team's `first` line on: the journal is kept by team name, and a line older than the
    /// team's transcripts is taken for one of an earlier team of the same name.
    fn actions_of(&self, member: &str, first: DateTime<Utc>) -> impl Iterator<Item = &MarkAt> {
        let m = self.members.get(member).filter(|m| !m.events.is_empty());
        m.into_iter()
            .flat_map(|m| m.actions.iter())
            .filter(move |a| a.at >= first)
    }

    /// `member`'s lane, read against `cx`.
    pub fn lane(&self, member: &str, cx: &Context) -> Lane {
        let Some(m) = self.members.get(member).filter(|m| !m.events.is_empty()) else {
            return Lane::default();
        };
        let mut events = m.events.clone();
        events.sort_by_key(|e| e.0);
        let mut w = Walk::new(cx.stall_after);
        let mut notes: Vec<DateTime<Utc>> = cx
            .frames
            .iter()
            .filter(|f| f.from == member && f.kind == "idle_notification")
            .map(|f| f.at)
            .collect();
        notes.sort();
        let mut notes = notes.into_iter().peekable();
        for (at, ev) in events {
            while let Some(n) = notes.next_if(|n| *n <= at) {
                w.idle_note(n);
            }
            w.step(at, ev);
        }
        for n in notes.filter(|n| *n <= cx.end) {
            w.idle_note(n);
        }
        let mut spans = w.finish(cx.end, cx.waiting_at_end == Some(Waiting::Dead));
        for (from, to, state) in requests(member, cx) {
            overlay(&mut spans, from, to, state);
        }
        let mut marks: Vec<MarkAt> = m
            .sessions
            .iter()
            .map(|(_, at)| MarkAt {
                at: *at,
                mark: Mark::NewSession,
                why: None,
            })
            .collect();
        marks.sort_by_key(|k| k.at);
        if let Some(first) = marks.first_mut() {
            first.mark = Mark::Started;
        }
        if let Some(first) = self.first_line() {
            let actions = self.actions_of(member, first).filter(|a| a.at <= cx.end);
            marks.extend(actions.cloned());
        }
        marks.sort_by_key(|k| k.at);
        let resampled = spans.len() > cx.max_spans;
        if resampled {
            spans = resample(&spans, cx.max_spans.max(1));
        }
        Lane {
            spans,
            marks,
            resampled,
        }
    }
}

/// How close together lines of a tool loop are kept as one ([`push`]): far below any stall
/// threshold, so no silence is hidden.
const RUN: chrono::Duration = chrono::Duration::seconds(60);

/// Adds `ev` at `at`, dropping the event before it when it changes nothing: a tool loop (a
/// response calling a tool, its result, …) keeps about two events a minute, not one per line.
/// The dropped event is an `Activity` (or a response after a response) between two events of
/// the loop less than [`RUN`] apart, in order: the walk reads the same states from what is
/// left.
fn push(events: &mut Vec<(DateTime<Utc>, Ev)>, at: DateTime<Utc>, ev: Ev) {
    let flow = |e: Ev| matches!(e, Ev::Activity | Ev::Answer(false));
    if let [.., (tp, p), (tx, x)] = events.as_slice() {
        let droppable = *x == Ev::Activity || (*x == Ev::Answer(false) && *p == Ev::Answer(false));
        if flow(*p) && flow(ev) && droppable && tp <= tx && *tx <= at && at - *tp <= RUN {
            let n = events.len();
            events[n - 1] = (at, ev);
            return;
        }
    }
    events.push((at, ev));
}

/// What `l` says, if anything.
fn event(l: &Line) -> Option<Ev> {
    let by = |l: &Line| {
        let kind = l
            .error
            .and_then(|e| serde_json::from_str::<String>(e.get()).ok());
        LaneState::of_api(l.api_error_status, kind.as_deref())
    };
    Some(match l.kind.as_ref() {
        "user" if l.is_meta == Some(true) => Ev::Activity,
        "user" => match l.message.as_ref().map(|m| &m.content) {
            Some(Content::Blocks(b)) if b.iter().all(|b| b.kind == "tool_result") => Ev::Activity,
            _ => Ev::Prompt,
        },
        "assistant" if l.api_error == Some(true) => Ev::GaveUp(by(l)),
        "assistant" => {
            let m = l.message.as_ref();
            if m.and_then(|m| m.model.as_deref()) == Some("<synthetic>") {
                return Some(Ev::Activity);
            }
            let stop = m.and_then(|m| m.stop_reason.as_deref());
            Ev::Answer(stop.is_some_and(|s| s != "tool_use"))
        }
        "system" if l.subtype.as_deref() == Some("api_error") => {
            #[derive(serde::Deserialize)]
            struct Body {
                #[serde(default)]
                status: Option<u16>,
            }
            let status = l
                .error
                .and_then(|e| serde_json::from_str::<Body>(e.get()).ok())
                .and_then(|b| b.status);
            Ev::Retry(LaneState::of_api(status, None))
        }
        "api-request" => {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            l.request_digest.as_deref()?.hash(&mut h);
            Ev::Request(h.finish())
        }
        "cost-state" => return None,
        _ => Ev::Activity,
    })
}

/// The walk through one member's events, building its spans.
struct Walk {
    stall: chrono::Duration,
    spans: Vec<Span>,
    state: Option<(LaneState, DateTime<Utc>)>,
    in_turn: bool,
    /// A failure holding the member back (a retry, or retries run out).
    api: Option<LaneState>,
    last: Option<DateTime<Utc>>,
    digest: Option<u64>,
}

impl Walk {
    fn new(stall: Duration) -> Walk {
        Walk {
            stall: chrono::Duration::from_std(stall).unwrap_or(chrono::Duration::MAX),
            spans: Vec::new(),
            state: None,
            in_turn: false,
            api: None,
            last: None,
            digest: None,
        }
    }

    fn set(&mut self, at: DateTime<Utc>, state: LaneState) {
        match self.state {
            Some((s, _)) if s == state => {}
            Some((s, from)) => {
                if at > from {
                    self.spans.push(Span {
                        from,
                        to: at,
                        state: s,
                    });
                }
                self.state = Some((state, at.max(from)));
            }
            None => self.state = Some((state, at)),
        }
    }

    /// A working member silent past the threshold was stalled from then until `at`.
    fn silence(&mut self, at: DateTime<Utc>) {
        if let (Some(last), Some((LaneState::Working, _))) = (self.last, self.state)
            && self.in_turn
            && self.api.is_none()
            && at - last > self.stall
        {
            self.set(last + self.stall, LaneState::Stalled);
        }
    }

    fn step(&mut self, at: DateTime<Utc>, ev: Ev) {
        self.silence(at);
        match ev {
            Ev::Prompt => {
                self.api = None;
                self.in_turn = true;
                self.set(at, LaneState::Working);
            }
            Ev::Activity if self.api.is_none() && self.in_turn => self.set(at, LaneState::Working),
            Ev::Activity if self.state.is_none() => self.set(at, LaneState::Idle),
            Ev::Activity => {}
            Ev::Answer(ends) => {
                self.api = None;
                self.digest = None;
                self.in_turn = !ends;
                let s = if ends {
                    LaneState::Idle
                } else {
                    LaneState::Working
                };
                self.set(at, s);
            }
            Ev::Retry(s) => {
                self.api = Some(s);
                self.in_turn = true;
                self.set(at, s);
            }
            Ev::GaveUp(s) => {
                self.api = Some(s);
                self.in_turn = false;
                self.digest = None;
                self.set(at, s);
            }
            Ev::Request(d) if self.digest == Some(d) && self.api.is_none() => {
                self.api = Some(LaneState::ApiError);
                self.set(at, LaneState::ApiError);
            }
            Ev::Request(d) => {
                self.digest = Some(d);
                self.in_turn = true;
                if self.api.is_none() {
                    self.set(at, LaneState::Working);
                }
            }
        }
        self.last = Some(at);
    }

    /// An `idle_notification` sent at `at`: the turn had ended.
    fn idle_note(&mut self, at: DateTime<Utc>) {
        if self.state.is_none() {
            return;
        }
        self.silence(at);
        self.in_turn = false;
        if self.api.is_none() {
            self.set(at, LaneState::Idle);
        }
        self.last = Some(at);
    }

    /// The spans up to `end`; a member dead at the record's time is dead from its last line.
    fn finish(mut self, end: DateTime<Utc>, dead: bool) -> Vec<Span> {
        if self.state.is_none() {
            return Vec::new();
        }
        self.silence(end);
        if dead && let Some(last) = self.last {
            self.set(last, LaneState::Dead);
        }
        if let Some((s, from)) = self.state
            && end > from
        {
            self.spans.push(Span {
                from,
                to: end,
                state: s,
            });
        }
        self.spans
    }
}

/// The member's permission and plan requests, each from its time to the first answer sent to
/// the member after it (else the record's end).
fn requests(member: &str, cx: &Context) -> Vec<(DateTime<Utc>, DateTime<Utc>, LaneState)> {
    let answered = |kind: &str, after: DateTime<Utc>| {
        cx.frames
            .iter()
            .filter(|f| f.to == member && f.kind == kind && f.at >= after)
            .map(|f| f.at)
            .min()
            .unwrap_or(cx.end)
    };
    cx.frames
        .iter()
        .filter(|f| f.from == member)
        .filter_map(|f| {
            let (answer, state) = match f.kind {
                "permission_request" => ("permission_response", LaneState::Permission),
                "sandbox_permission_request" => {
                    ("sandbox_permission_response", LaneState::Permission)
                }
                "plan_approval_request" => ("plan_approval_response", LaneState::Plan),
                _ => return None,
            };
            Some((f.at, answered(answer, f.at), state))
        })
        .collect()
}

/// Puts `state` over `spans` from `from` to `to` (within the lane's own extent).
fn overlay(spans: &mut Vec<Span>, from: DateTime<Utc>, to: DateTime<Utc>, state: LaneState) {
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
        return;
    };
    let (from, to) = (from.max(first.from), to.min(last.to));
    if to <= from {
        return;
    }
    let mut out = Vec::with_capacity(spans.len() + 2);
    let mut placed = false;
    for s in spans.drain(..) {
        if s.to <= from || s.from >= to {
            if s.from >= to && !placed {
                out.push(Span { from, to, state });
                placed = true;
            }
            out.push(s);
            continue;
        }
        if s.from < from {
            out.push(Span { to: from, ..s });
        }
        if !placed {
            out.push(Span { from, to, state });
            placed = true;
        }
        if s.to > to {
            out.push(Span { from: to, ..s });
        }
    }
    if !placed {
        out.push(Span { from, to, state });
    }
    *spans = out;
}

/// `spans` on `n` equal slices of their extent: each slice the waiting state it holds (the
/// highest, if several), else the state it holds longest; equal neighbours joined.
fn resample(spans: &[Span], n: usize) -> Vec<Span> {
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
        return Vec::new();
    };
    let (t0, total) = (first.from, (last.to - first.from).num_milliseconds().max(1));
    let at = |i: usize| t0 + chrono::Duration::milliseconds(total * i as i64 / n as i64);
    let mut out: Vec<Span> = Vec::with_capacity(n);
    let mut k = 0;
    for i in 0..n {
        let (from, to) = (at(i), at(i + 1));
        let mut held: BTreeMap<LaneState, i64> = BTreeMap::new();
        while k < spans.len() && spans[k].to <= from {
            k += 1;
        }
        let mut j = k;
        while j < spans.len() && spans[j].from < to {
            let s = &spans[j];
            let ms = (s.to.min(to) - s.from.max(from)).num_milliseconds().max(1);
            *held.entry(s.state).or_default() += ms;
            j += 1;
        }
        let state = held
            .keys()
            .rev()
            .find(|s| s.waits())
            .copied()
            .or_else(|| held.iter().max_by_key(|(_, ms)| **ms).map(|(s, _)| *s));
        let Some(state) = state else { continue };
        match out.last_mut() {
            Some(p) if p.state == state && p.to == from => p.to = to,
            _ => out.push(Span { from, to, state }),
        }
    }
    out
}

#[cfg(test)]
#[path = "lanes_tests.rs"]
mod tests;
