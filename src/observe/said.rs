//! What a teammate said at the end of a turn, read from its transcript: the answer of a
//! teammate that ends its turn with plain text instead of a `SendMessage` (`ask
//! --from-transcript`, `wait --message-from NAME --from-transcript`).
//!
//! The transcript is the ground truth ([`crate::observe::log`] reads it: the member's sessions,
//! oldest first, as a story of prompts, messages, texts and tool calls). A turn begins with the
//! prompts and team messages delivered before the teammate's next output, and lasts until the
//! next prompt or message after that output. Its text is the last text block the teammate wrote
//! in it; the names it sent a message to (`SendMessage` calls) are kept too, so a caller can
//! tell a turn that answered someone else from one that answered nobody.
//!
//! Claude Code 2.1.332 also puts that text in the turn's `idle_notification` as `result`
//! (older versions put nothing there): [`from_idle_notification`] reads it, the second source
//! for when the transcript cannot be found or does not show the turn.

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::error::Error;
use crate::observe::log::{Filter, LogLine, MemberLog};
use crate::store::Entry;
use crate::team::config::Team;
use crate::team::model::Frame;
use crate::team::transcript::story::Kind;

/// How long [`turn_ended_by`] reads a transcript again for a turn that does not show yet.
pub const TRANSCRIPT_WAIT: Duration = Duration::from_secs(2);

/// Where a [`Said`] was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The teammate's transcript.
    Transcript,
    /// The `result` of its `idle_notification` (Claude Code 2.1.332 and later).
    IdleNotification,
}

impl Source {
    /// `transcript` or `idle_notification`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Transcript => "transcript",
            Source::IdleNotification => "idle_notification",
        }
    }
}

/// What a turn ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// The turn's last text, as written.
    pub text: String,
    /// When it was written (the transcript entry's timestamp; the notification's).
    pub at: Option<String>,
    /// The session it is in (transcript only).
    pub session_id: Option<String>,
    /// Where it was read.
    pub source: Source,
    /// Whom the turn sent messages to (`SendMessage` calls, in order; whether they arrived is
    /// not known here).
    pub sent_to: Vec<String>,
}

/// Which turn.
#[derive(Debug, Clone)]
pub enum Anchor<'a> {
    /// The newest turn in which this message was delivered (from `from`, with this text).
    Message {
        /// Its sender.
        from: &'a str,
        /// Its text.
        text: &'a str,
    },
    /// The newest turn that began at or before this time (an `idle_notification`'s timestamp:
    /// the turn it ended).
    EndedBy(DateTime<Utc>),
}

/// One turn as read so far.
#[derive(Debug, Default, Clone)]
struct Turn {
    start: Option<DateTime<Utc>>,
    matched: bool,
    output: bool,
    text: Option<(String, Option<String>, Option<String>)>,
    sent_to: Vec<String>,
}

impl Turn {
    fn said(self) -> Option<Said> {
        let (text, at, session_id) = self.text?;
        Some(Said {
            text,
            at,
            session_id,
            source: Source::Transcript,
            sent_to: self.sent_to,
        })
    }
}

/// The turns of a story, keeping only the one `anchor` names.
struct Turns<'a> {
    anchor: &'a Anchor<'a>,
    current: Turn,
    found: Option<Turn>,
}

impl Turns<'_> {
    fn take(&mut self, l: &LogLine) {
        let at =
            l.at.as_deref()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
        match l.kind {
            Kind::Prompt | Kind::Message => {
                if self.current.output {
                    self.end();
                }
                self.current.start = self.current.start.or(at);
                if let (Anchor::Message { from, text }, Kind::Message) = (self.anchor, l.kind) {
                    let body = l.text.as_deref().unwrap_or("").trim();
                    self.current.matched |=
                        body == text.trim() && l.summary.starts_with(&format!("from {from}:"));
                }
            }
            Kind::Text => {
                self.current.output = true;
                if let Some(t) = &l.text {
                    self.current.text = Some((t.clone(), l.at.clone(), l.session_id.clone()));
                }
            }
            Kind::ToolUse => {
                self.current.output = true;
                if l.tool.as_deref() == Some("SendMessage")
                    && let Some(to) = sent_to(l.text.as_deref())
                {
                    self.current.sent_to.push(to);
                }
            }
            Kind::Error => self.current.output = true,
            Kind::ToolResult => {}
        }
    }

    /// The current turn is over: kept when it is the one wanted (the newest such wins).
    fn end(&mut self) {
        let turn = std::mem::take(&mut self.current);
        let wanted = match self.anchor {
            Anchor::Message { .. } => turn.matched,
            Anchor::EndedBy(t) => turn.start.is_some_and(|s| s <= *t),
        };
        if wanted {
            self.found = Some(turn);
        }
    }
}

/// The `to` of a `SendMessage` call's input (compact JSON).
fn sent_to(input: Option<&str>) -> Option<String> {
    let v: Value = serde_json::from_str(input?).ok()?;
    v.get("to")?.as_str().map(String::from)
}

/// What `member` ended the turn `anchor` names with, read once from its transcripts: `None`
/// when no such turn is there, or it has no text.
///
/// # Errors
/// A member the team does not have.
pub fn read_turn(team: &Team, member: &str, anchor: &Anchor) -> Result<Option<Said>> {
    let mut log = MemberLog::open(team.clone(), member)?;
    let mut turns = Turns {
        anchor,
        current: Turn::default(),
        found: None,
    };
    log.history(Filter::default(), &mut |l| {
        turns.take(l);
        Ok(())
    })?;
    turns.end();
    Ok(turns.found.and_then(Turn::said))
}

/// The text an `idle_notification` entry carries as `result` (Claude Code 2.1.332 and later),
/// with the name its `summary` says the turn sent to (`[to alise] …`), if any.
pub fn from_idle_notification(note: &Entry) -> Option<Said> {
    let frame = Frame::decode(note.get("text")?.as_str()?)?;
    let get = |k: &str| frame.fields.get(k).and_then(Value::as_str);
    let text = get("result").filter(|t| !t.trim().is_empty())?.to_string();
    let sent_to = get("summary")
        .and_then(|s| s.strip_prefix("[to ")?.split_once(']'))
        .map(|(to, _)| vec![to.to_string()])
        .unwrap_or_default();
    Some(Said {
        text,
        at: note
            .get("timestamp")
            .and_then(Value::as_str)
            .map(String::from),
        session_id: None,
        source: Source::IdleNotification,
        sent_to,
    })
}

/// What a turn's text is looked for as: the answer to `question` (`(asker, text)`), when one is
/// given, and how long to wait for the transcript to agree with the notification.
#[derive(Debug, Clone, Copy)]
pub struct Looking<'a> {
    /// The question the turn took, and who asked it.
    pub question: Option<(&'a str, &'a str)>,
    /// How long to read again until the transcript agrees ([`TRANSCRIPT_WAIT`] where the text
    /// is to be the answer; zero for a mere mention).
    pub patience: Duration,
}

/// What the turn that `note` (an `idle_notification` of `member`) ended said: the turn that took
/// the question `looking` names (from its asker) when one is given and found, else the newest
/// turn begun by the notification's time; read from the transcript, else from the
/// notification's `result`.
///
/// Claude Code writes a turn's last transcript entries a moment after its `idle_notification`
/// (seen with 2.1.332: a read 20 ms after the notification still found the turn before), so the
/// transcript is read no earlier than [`SETTLE`] after the notification was written (by
/// `clock`); where the notification carries a `result` (2.1.322 and later), the transcript's
/// text must agree with it, and is read again until it does, for up to `looking.patience`; then
/// the `result` is taken.
///
/// # Errors
/// A member the team does not have.
pub fn turn_ended_by(
    team: &Team,
    member: &str,
    note: &Entry,
    looking: Looking,
    clock: &dyn Fn() -> DateTime<Utc>,
) -> Result<Option<Said>> {
    let Looking { question, patience } = looking;
    let at = note
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc));
    if let Some(wait) = at.and_then(|at| (at + SETTLE - clock()).to_std().ok()) {
        std::thread::sleep(wait.min(SETTLE.to_std().unwrap_or_default()));
    }
    let result = from_idle_notification(note);
    let deadline = Instant::now() + patience;
    loop {
        let mut found = None;
        if let Some((asker, text)) = question {
            found = read_turn(team, member, &Anchor::Message { from: asker, text })?;
        }
        if found.is_none()
            && let Some(at) = at
        {
            found = read_turn(team, member, &Anchor::EndedBy(at))?;
        }
        match (found, &result) {
            (Some(s), Some(r)) if agrees(&s.text, &r.text) => return Ok(Some(s)),
            (Some(s), None) => return Ok(Some(s)),
            (None, None) if Instant::now() >= deadline => return Ok(None),
            (_, Some(_)) if Instant::now() >= deadline => return Ok(result),
            _ => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// What `member` ended the turn that ended at `ended` in its transcript with (a teammate that
/// reported no idle for it: [`crate::observe::unreported::judge`]): the turn that took `question`
/// (`(asker, text)`) when one is given and found, else the newest turn begun by `ended`; read
/// once (the end is in the transcript already).
///
/// # Errors
/// A member the team does not have.
pub fn turn_ended_at(
    team: &Team,
    member: &str,
    ended: DateTime<Utc>,
    question: Option<(&str, &str)>,
) -> Result<Option<Said>> {
    if let Some((from, text)) = question
        && let Some(s) = read_turn(team, member, &Anchor::Message { from, text })?
    {
        return Ok(Some(s));
    }
    read_turn(team, member, &Anchor::EndedBy(ended))
}

/// How long after its `idle_notification` a turn's transcript is first read.
pub const SETTLE: chrono::Duration = chrono::Duration::seconds(1);

/// Whether the transcript's last text of a turn is what the notification's `result` says (the
/// whole last message: its last text block ends it).
fn agrees(transcript: &str, result: &str) -> bool {
    let (t, r) = (transcript.trim(), result.trim());
    !t.is_empty() && r.ends_with(t)
}

/// For `wait --message-from NAME --from-transcript`: when `met` (the entry that met the
/// condition) is an `idle_notification` of `member`, the entry standing for what that turn
/// said instead, `{"from","text","timestamp","source","idle_notification"}` (source
/// `transcript` or `idle_notification`), or `Err` with why there is none (the turn left no text,
/// or wrote to someone other than `me`). Any other entry is returned as it is.
///
/// # Errors
/// A member the team does not have; [`Error::Unanswered`] with the reason as above.
pub fn as_message(
    team: &Team,
    member: &str,
    me: &str,
    met: &Entry,
    clock: &dyn Fn() -> DateTime<Utc>,
) -> Result<Entry> {
    let is_idle = met
        .get("text")
        .and_then(Value::as_str)
        .and_then(Frame::decode)
        .is_some_and(|f| f.frame_type == "idle_notification");
    if !is_idle {
        return Ok(met.clone());
    }
    let detail = crate::observe::members::idle_detail(met);
    let looking = Looking {
        question: None,
        patience: TRANSCRIPT_WAIT,
    };
    let Some(s) = turn_ended_by(team, member, met, looking, clock)? else {
        return Err(Error::Unanswered(format!(
            "{member} went idle without writing to {me} ({detail}), and its transcript shows no \
             text for that turn"
        ))
        .into());
    };
    if let Some(to) = s.sent_to.iter().find(|t| *t != me) {
        return Err(Error::Unanswered(format!(
            "{member} went idle without writing to {me} ({detail}); in that turn it sent a \
             message to {}",
            crate::store::paths::quote(to)
        ))
        .into());
    }
    let mut e = Entry::new();
    e.insert("from".into(), member.into());
    e.insert("text".into(), s.text.into());
    e.insert("timestamp".into(), s.at.map_or(Value::Null, Value::String));
    e.insert("source".into(), s.source.as_str().into());
    e.insert("idle_notification".into(), Value::Object(met.clone()));
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(kind: Kind, at: &str, summary: &str, text: &str, tool: Option<&str>) -> LogLine {
        LogLine {
            schema_version: 1,
            at: Some(at.into()),
            member: "worker".into(),
            session_id: Some("s".into()),
            kind,
            tool: tool.map(String::from),
            summary: summary.into(),
            text: Some(text.into()),
            is_error: None,
        }
    }

    fn story() -> Vec<LogLine> {
        vec![
            line(
                Kind::Prompt,
                "2026-11-29T10:00:00.000Z",
                "brief",
                "You are worker.",
                None,
            ),
            line(Kind::Text, "2026-11-29T10:00:01.000Z", "ok", "ok", None),
            line(
                Kind::Message,
                "2026-11-29T10:01:00.000Z",
                "from team-lead: q",
                "What is 6*7?",
                None,
            ),
            line(
                Kind::Text,
                "2026-11-29T10:01:01.000Z",
                "Thinking",
                "Thinking",
                None,
            ),
            line(
                Kind::ToolUse,
                "2026-11-29T10:01:02.000Z",
                "ls",
                "{\"command\":\"ls\"}",
                Some("Bash"),
            ),
            line(
                Kind::ToolResult,
                "2026-11-29T10:01:03.000Z",
                "a",
                "a",
                Some("Bash"),
            ),
            line(
                Kind::Text,
                "2026-11-29T10:01:04.000Z",
                "42",
                "The answer\nis 42.",
                None,
            ),
            line(
                Kind::Message,
                "2026-11-29T10:02:00.000Z",
                "from bob: hi",
                "Say hi to alice",
                None,
            ),
            line(
                Kind::ToolUse,
                "2026-11-29T10:02:01.000Z",
                "alise",
                "{\"to\":\"alise\",\"message\":\"hi\"}",
                Some("SendMessage"),
            ),
            line(
                Kind::ToolResult,
                "2026-11-29T10:02:02.000Z",
                "ok",
                "ok",
                Some("SendMessage"),
            ),
            line(Kind::Text, "2026-11-29T10:02:03.000Z", "done", "done", None),
        ]
    }

    fn run(anchor: &Anchor) -> Option<Said> {
        let mut t = Turns {
            anchor,
            current: Turn::default(),
            found: None,
        };
        for l in story() {
            t.take(&l);
        }
        t.end();
        t.found.and_then(Turn::said)
    }

    #[test]
    fn the_turn_that_took_the_question_ends_with_its_last_text() {
        let s = run(&Anchor::Message {
            from: "team-lead",
            text: "What is 6*7?\n",
        })
        .unwrap();
        assert_eq!(s.text, "The answer\nis 42.");
        assert_eq!(s.at.as_deref(), Some("2026-11-29T10:01:04.000Z"));
        assert!(s.sent_to.is_empty());
        // Another sender's message with the same text is not the question.
        assert!(
            run(&Anchor::Message {
                from: "bob",
                text: "What is 6*7?"
            })
            .is_none()
        );
    }

    #[test]
    fn the_turn_an_idle_notification_ended_and_whom_it_wrote_to() {
        let at = |t: &str| DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc);
        let s = run(&Anchor::EndedBy(at("2026-11-29T10:01:05.000Z"))).unwrap();
        assert_eq!(s.text, "The answer\nis 42.");
        let s = run(&Anchor::EndedBy(at("2026-11-29T10:03:00.000Z"))).unwrap();
        assert_eq!(
            (s.text.as_str(), s.sent_to.as_slice()),
            ("done", &["alise".to_string()][..])
        );
        assert!(run(&Anchor::EndedBy(at("2026-11-29T09:00:00.000Z"))).is_none());
    }

    #[test]
    fn the_result_of_an_idle_notification() {
        let note: Entry = serde_json::from_value(serde_json::json!({
            "from": "worker", "timestamp": "2026-11-29T10:02:04.000Z",
            "text": "{\"type\":\"idle_notification\",\"from\":\"worker\",\"idleReason\":\"available\",\"summary\":\"[to alise] sendto\",\"result\":\"done\"}"
        }))
        .unwrap();
        let s = from_idle_notification(&note).unwrap();
        assert_eq!(
            (s.text.as_str(), s.source),
            ("done", Source::IdleNotification)
        );
        assert_eq!(s.sent_to, ["alise"]);
        let bare: Entry = serde_json::from_value(serde_json::json!({
            "from": "worker", "timestamp": "t",
            "text": "{\"type\":\"idle_notification\",\"from\":\"worker\",\"idleReason\":\"available\"}"
        }))
        .unwrap();
        assert!(from_idle_notification(&bare).is_none());
    }
}
