//! Sending into and reading from a team's inboxes: the rules on top of [`crate::store`]
//! (membership, deleted session teams, summaries, ids, filters, mark-read and consume).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::usage;
use crate::store::dir::Loc;
use crate::store::id;
use crate::store::lock::LockOptions;
use crate::store::paths::{MemberName, RESERVED};
use crate::store::{self, Appended, Entry};
use crate::team::config::Team;
use crate::team::model::{
    Color, FRAME_TYPES, Frame, Kind, MessageView, NewMessage, UNSENDABLE_FRAMES, frame_type,
};
use crate::team::sentlog::{Sent, SentLog};

/// What [`join`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// `name` was already a member; nothing was written.
    AlreadyMember,
    /// A member entry was added to `config.json`.
    Added,
}

/// Why teammates cannot reply to `name` in `team`, or `None` when they can: current Claude Code
/// lets a teammate `SendMessage` only to members of `config.json`, never to `user`, `system`
/// or `main`, and to `team-lead` only as the real lead (in a team teamctl leads, that is you).
pub fn unreachable_reason(team: &Team, name: &str) -> Option<String> {
    let reserved = RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name));
    if name == crate::team::config::LEAD && team.teamctl_leads() {
        return None;
    }
    if name == crate::team::config::LEAD {
        return Some(
            "team-lead is this team's Claude Code lead: replies go to it, not to you; use \
             your own name with `send --join --from NAME`"
                .into(),
        );
    }
    if reserved {
        return Some(format!(
            "'{name}' is reserved by Claude Code and teammates never reply to it; use your \
             own name with `send --join --from NAME`"
        ));
    }
    if !team.is_member(name) {
        return Some(format!(
            "'{name}' is not a member of config.json; add it with `send --join`"
        ));
    }
    None
}

/// Adds `name` to the team's `config.json` as a member (Claude Code's member shape:
/// `agentId`, `name`, `joinedAt`, `tmuxPaneId: ""`, `cwd`, `subscriptions: []`), so that
/// teammates can reply to it, and creates its inbox. Runs under the `config.json.lock`
/// directory (taken on the literal path, as Claude Code's `realpath: false`), re-reads the
/// file there and keeps every other key and member as it was.
///
/// # Errors
/// A usage error for a reserved name (saying what to use instead), a team without
/// `config.json`, lock timeout, a corrupt `config.json`, I/O.
pub fn join(
    team: &Team,
    name: &MemberName,
    cwd: &std::path::Path,
    now: DateTime<Utc>,
    opts: &LockOptions,
) -> Result<Joined> {
    if team.is_member(name.as_str()) {
        return Ok(Joined::AlreadyMember);
    }
    if name.is_reserved() {
        return Err(usage(format!(
            "cannot join team '{}' as '{name}': the name is reserved by Claude Code (main, \
             team-lead, user, system) and teammates never reply to it; pick your own name, \
             e.g. `--from ops` or TEAMCTL_FROM=ops",
            team.name
        )));
    }
    // The inbox's place is checked first, so a refused one leaves config.json as it was.
    store::check_file_place(&team.inbox_path(name))?;
    let path = team.layout.config_path(&team.name);
    if path.stat()?.is_none() {
        bail!(
            "team '{}' has no config.json, so there is no member list to join",
            team.name
        );
    }
    let joined = store::rewrite(
        &path,
        opts,
        |b| store::parse_object(b, &path),
        |doc| {
            let Some(members) = doc.get_mut("members").and_then(Value::as_array_mut) else {
                bail!("{} has no members array (left unchanged)", path.display());
            };
            let present = members
                .iter()
                .any(|m| m.get("name").and_then(Value::as_str) == Some(name.as_str()));
            if present {
                return Ok((false, Joined::AlreadyMember));
            }
            let mut m = Map::new();
            m.insert("agentId".into(), format!("{name}@{}", team.name).into());
            m.insert("name".into(), name.as_str().into());
            m.insert("joinedAt".into(), now.timestamp_millis().into());
            m.insert("tmuxPaneId".into(), "".into());
            m.insert("cwd".into(), cwd.to_string_lossy().as_ref().into());
            m.insert("subscriptions".into(), Value::Array(Vec::new()));
            members.push(Value::Object(m));
            Ok((true, Joined::Added))
        },
    )?;
    store::ensure_inbox(&team.inbox_path(name))?;
    Ok(joined)
}

/// What to send.
#[derive(Debug, Clone)]
pub struct SendRequest {
    /// Recipient.
    pub to: MemberName,
    /// Sender.
    pub from: MemberName,
    /// Body, checked.
    pub text: Text,
    /// Preview; `None` derives it from the first line (none for protocol frames).
    pub summary: Option<String>,
    /// Colour; `None` uses the sender's palette colour from `config.json`, if any.
    pub color: Option<Color>,
    /// Write even when the recipient is not a member.
    pub force: bool,
    /// Makes the `msg_id` deterministic and the send a no-op when it is already there.
    pub idempotency_key: Option<String>,
}

/// What a send did.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Recipient.
    pub to: String,
    /// Its inbox file.
    pub inbox: Loc,
    /// The entry as written, or the entry already there with the same id; `None` when the
    /// sent log says it was sent and it has since left the inbox.
    pub entry: Option<Entry>,
    /// The entry's id.
    pub id: String,
    /// `false` when a message with the same idempotent id was already sent (in the inbox, or
    /// in the sent log).
    pub written: bool,
    /// Why the sent log could not record this message (the message itself was delivered).
    pub log_error: Option<String>,
}

/// A message body that passed [`Text::new`]'s checks, so that a send need not check it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    text: String,
    is_frame: bool,
}

impl Text {
    /// Checks a message body before anything is written: a frame is what Claude Code reads as
    /// one ([`frame_type`]: `JSON.parse`'s reading), whatever serde_json makes of it.
    ///
    /// # Errors
    /// A usage error for an empty body or a frame only Claude Code itself may write.
    pub fn new(text: impl Into<String>) -> Result<Text> {
        let text = text.into();
        if text.trim().is_empty() {
            return Err(usage("the message text is empty"));
        }
        let kind = frame_type(&text);
        if let Some(t) = kind.as_deref()
            && UNSENDABLE_FRAMES.contains(&t)
        {
            return Err(usage(format!(
                "refusing to send a '{t}' frame as a message: Claude Code writes or answers \
                 these itself and ignores or rejects them from anyone else"
            )));
        }
        Ok(Text {
            is_frame: kind.is_some_and(|t| FRAME_TYPES.contains(&t.as_str())),
            text,
        })
    }

    /// [`Text::new`] for words a person means as plain text (the chat's `say`, `ask`): refused
    /// when Claude Code would read it as a frame of any type, known or not ([`frame_type`]).
    ///
    /// # Errors
    /// As [`Text::new`], and a usage error for a frame.
    pub fn plain(text: impl Into<String>) -> Result<Text> {
        let text = Text::new(text)?;
        if let Some(t) = frame_type(&text.text) {
            let t: String = t.chars().take(40).collect();
            return Err(usage(format!(
                "refusing to send this as plain text: Claude Code reads it as a protocol frame \
                 (JSON with \"type\": \"{t}\"); say it in words"
            )));
        }
        Ok(text)
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether it is a protocol frame (JSON with a known `type`).
    pub fn is_frame(&self) -> bool {
        self.is_frame
    }
}

/// Sends one message: checks, builds the entry, and appends it under the inbox lock with
/// read-back verification ([`store::append`]).
///
/// # Errors
/// Usage errors for bad input, an unknown recipient, lock timeout, corrupt inbox, failed
/// verification, I/O.
pub fn send(
    team: &Team,
    req: &SendRequest,
    now: DateTime<Utc>,
    opts: &LockOptions,
    log: Option<&SentLog>,
) -> Result<Delivery> {
    team.check_sender(&req.from, req.force)?;
    team.check_recipient(&req.to, req.force)?;
    deliver(team, req, now, opts, log)
}

/// How teamctl writes an entry: stamped `now`, waiting for the inbox's lock as `lock` says, and
/// recorded in `log`, teamctl's sent log (`None`: not recorded).
#[derive(Debug, Clone, Copy)]
pub struct Writing<'a> {
    /// The entry's timestamp.
    pub now: DateTime<Utc>,
    /// How long to wait for the inbox's lock.
    pub lock: &'a LockOptions,
    /// teamctl's sent log.
    pub log: Option<&'a SentLog>,
}

/// Sends a protocol frame that Claude Code itself writes (such as `task_assignment`) as `from`,
/// compact JSON in `text`, with no summary, as Claude Code does.
///
/// # Errors
/// As [`send`], except that any frame type is allowed.
pub fn send_frame(
    team: &Team,
    to: &MemberName,
    from: &MemberName,
    frame: &Map<String, Value>,
    w: Writing,
) -> Result<Delivery> {
    let req = SendRequest {
        to: to.clone(),
        from: from.clone(),
        text: Text {
            text: serde_json::to_string(frame)?,
            is_frame: true,
        },
        summary: None,
        color: None,
        force: true,
        idempotency_key: None,
    };
    deliver(team, &req, w.now, w.lock, w.log)
}

/// Builds the entry and appends it; with a sent log, a key already logged is not sent again,
/// and what is written is recorded.
fn deliver(
    team: &Team,
    req: &SendRequest,
    now: DateTime<Utc>,
    opts: &LockOptions,
    log: Option<&SentLog>,
) -> Result<Delivery> {
    let summary = match (req.text.is_frame(), &req.summary) {
        (true, _) => None,
        (false, Some(s)) => Some(s.clone()),
        (false, None) => Some(crate::team::model::first_line(req.text.as_str(), 60)),
    };
    let color = req.color.or_else(|| {
        let cfg = team.config.as_ref()?;
        cfg.member(req.from.as_str())?
            .color
            .as_deref()?
            .parse()
            .ok()
    });
    let msg_id = match &req.idempotency_key {
        Some(k) => id::idempotent_msg_id(team.name.as_str(), req.to.as_str(), req.from.as_str(), k),
        None => id::random_msg_id(),
    };
    let msg = NewMessage {
        from: req.from.to_string(),
        text: req.text.as_str().to_string(),
        summary,
        timestamp: now,
        color,
        msg_id: msg_id.to_string(),
    };
    let entry = msg.to_entry();
    let inbox = team.inbox_path(&req.to);
    let mut delivery = Delivery {
        to: req.to.to_string(),
        inbox: inbox.clone(),
        id: msg.msg_id.clone(),
        entry: None,
        written: false,
        log_error: None,
    };
    // The inbox forgets consumed messages; the log remembers what this user sent.
    if req.idempotency_key.is_some()
        && let Some(log) = log
        && log.find(team.name.as_str(), &msg.msg_id)?.is_some()
    {
        delivery.entry = store::read_inbox(&inbox)?
            .and_then(|es| es.into_iter().find(|e| id::entry_id(e) == msg.msg_id));
        return Ok(delivery);
    }
    match store::append(&inbox, &entry, req.idempotency_key.is_some(), opts)? {
        Appended::Written => {
            delivery.written = true;
            if let Some(log) = log {
                let sent = Sent {
                    id: msg.msg_id.clone(),
                    team: team.name.to_string(),
                    to: req.to.to_string(),
                    from: req.from.to_string(),
                    at: crate::time::iso_millis(now),
                    summary: msg.summary.clone(),
                    inbox: inbox.display().to_string(),
                    idempotency_key: req.idempotency_key.clone(),
                    answers: req
                        .text
                        .is_frame()
                        .then(|| answered_request(req.text.as_str()))
                        .flatten(),
                    moving: None,
                };
                delivery.log_error = log.record(&sent).err().map(|e| format!("{e:#}"));
            }
            delivery.entry = Some(entry);
        }
        Appended::AlreadyPresent(existing) => delivery.entry = Some(existing),
    }
    Ok(delivery)
}

/// The request id a `*_response` frame answers.
fn answered_request(text: &str) -> Option<String> {
    let frame = Frame::decode(text)?;
    if !frame.frame_type.ends_with("_response") {
        return None;
    }
    let id = frame
        .fields
        .get("request_id")
        .or_else(|| frame.fields.get("requestId"))?;
    id.as_str().map(String::from)
}

/// Where a sent message is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Still in the inbox, unread.
    Pending,
    /// Still in the inbox with `read: true` (older Claude Code consumed it).
    Read,
    /// Gone from the inbox: its reader took it (current Claude Code).
    Consumed,
}

impl DeliveryState {
    /// The state of message `id` given the inbox's entries (`None`: no inbox file).
    pub fn of(entries: Option<&[Entry]>, id: &str) -> DeliveryState {
        match entries
            .unwrap_or_default()
            .iter()
            .find(|e| id::entry_id(e) == id)
        {
            None => DeliveryState::Consumed,
            Some(e) if e.get("read") == Some(&Value::Bool(true)) => DeliveryState::Read,
            Some(_) => DeliveryState::Pending,
        }
    }

    /// `pending`, `read` or `consumed`.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Read => "read",
            DeliveryState::Consumed => "consumed",
        }
    }
}

/// Waits until message `id` in the inbox at `inbox` is read or consumed, or `deadline` passes,
/// re-reading the file every `every`. Returns the state at the end.
///
/// # Errors
/// A corrupt inbox or I/O.
pub fn wait_delivered(
    inbox: &Loc,
    id: &str,
    deadline: Instant,
    every: Duration,
) -> Result<DeliveryState> {
    loop {
        let entries = store::read_inbox(inbox)?;
        let state = DeliveryState::of(entries.as_deref(), id);
        let now = Instant::now();
        if state != DeliveryState::Pending || now >= deadline {
            return Ok(state);
        }
        std::thread::sleep(every.min(deadline - now));
    }
}

/// Which entries `inbox` shows.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only entries whose `read` is not `true`.
    pub unread: bool,
    /// Only entries from this sender.
    pub from: Option<String>,
    /// Only entries at or after this time (entries with an unreadable timestamp are left out).
    pub since: Option<DateTime<Utc>>,
    /// Only this kind.
    pub kind: Option<TypeFilter>,
    /// Only the newest N (by file order) of what matches.
    pub limit: Option<usize>,
}

/// The `--type` filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeFilter {
    /// Plain messages.
    Message,
    /// Any protocol frame.
    Protocol,
    /// One frame type.
    Frame(String),
    /// A plain message, or an `idle_notification`: a turn that ended without one (`wait
    /// --message-from NAME --from-transcript`, which then reads the turn's text). Not a value
    /// of `--type`.
    MessageOrIdle,
}

impl std::str::FromStr for TypeFilter {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "message" => Ok(TypeFilter::Message),
            "protocol" => Ok(TypeFilter::Protocol),
            f if FRAME_TYPES.contains(&f) => Ok(TypeFilter::Frame(f.to_string())),
            _ => Err(usage(format!(
                "invalid type '{s}': use message, protocol or a frame type ({})",
                FRAME_TYPES.join(", ")
            ))),
        }
    }
}

impl Filter {
    fn matches(&self, v: &MessageView) -> bool {
        if self.unread && v.read {
            return false;
        }
        if self.from.as_ref().is_some_and(|f| *f != v.from) {
            return false;
        }
        if let Some(since) = self.since {
            match DateTime::parse_from_rfc3339(&v.timestamp) {
                Ok(t) if t >= since => {}
                _ => return false,
            }
        }
        match &self.kind {
            None => true,
            Some(TypeFilter::Message) => v.kind == Kind::Message,
            Some(TypeFilter::Protocol) => v.kind == Kind::Protocol,
            Some(TypeFilter::Frame(f)) => v.protocol.as_ref().is_some_and(|p| &p.frame_type == f),
            Some(TypeFilter::MessageOrIdle) => v
                .protocol
                .as_ref()
                .is_none_or(|p| p.frame_type == "idle_notification"),
        }
    }
}

/// An entry that could not be shown, with where it is (it stays in the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The inbox file.
    pub inbox: PathBuf,
    /// Index in the array.
    pub index: usize,
    /// The field that is missing or not a string.
    pub field: &'static str,
}

/// An entry that matched, raw and as shown.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The entry exactly as read, when it was kept (to mark or consume it).
    pub entry: Option<Entry>,
    /// Its view.
    pub view: MessageView,
}

/// The result of reading one inbox.
#[derive(Debug, Clone, Default)]
pub struct InboxRead {
    /// Matching entries in file order.
    pub shown: Vec<Shown>,
    /// Entries left out because they are malformed.
    pub skipped: Vec<Skipped>,
    /// Whether the inbox file exists.
    pub exists: bool,
}

/// Several inboxes' reads as one list, oldest first: by `timestamp` (an unparseable one sorts
/// first), ties kept in the order of `reads` (inbox name) and then file order. With `limit`,
/// only the newest `limit` entries of all of them are kept, and each read's `shown` is cut to
/// match, so a mark or consume touches exactly what is listed. Returns (read index, index into
/// that read's `shown`) in the merged order.
pub fn in_time_order(reads: &mut [InboxRead], limit: Option<usize>) -> Vec<(usize, usize)> {
    let at = |v: &MessageView| DateTime::parse_from_rfc3339(&v.timestamp).ok();
    let mut order: Vec<(usize, usize)> = reads
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.shown.len()).map(move |j| (i, j)))
        .collect();
    // A stable sort keeps the inbox and file order among equal times.
    order.sort_by_key(|&(i, j)| at(&reads[i].shown[j].view));
    if let Some(n) = limit {
        order.drain(..order.len().saturating_sub(n));
    }
    // Cut each read to what is kept, and renumber.
    let mut kept: Vec<Vec<bool>> = reads.iter().map(|r| vec![false; r.shown.len()]).collect();
    for &(i, j) in &order {
        kept[i][j] = true;
    }
    let mut new_index: Vec<Vec<usize>> = Vec::with_capacity(reads.len());
    for (i, r) in reads.iter_mut().enumerate() {
        let mut idx = vec![0; r.shown.len()];
        let mut n = 0;
        for (j, slot) in idx.iter_mut().enumerate() {
            if kept[i][j] {
                *slot = n;
                n += 1;
            }
        }
        let mut j = 0;
        r.shown.retain(|_| {
            j += 1;
            kept[i][j - 1]
        });
        new_index.push(idx);
    }
    order
        .into_iter()
        .map(|(i, j)| (i, new_index[i][j]))
        .collect()
}

/// Reads `member`'s inbox without locking and applies `filter`. With `keep`, each shown
/// entry is kept as read (to mark or consume it); without, only its view is, and entries are
/// turned into views one by one as the file is parsed, so a large inbox needs about the file
/// and what is shown, not several copies of it.
///
/// # Errors
/// A corrupt inbox (left unchanged) or I/O.
pub fn read(team: &Team, member: &MemberName, filter: &Filter, keep: bool) -> Result<InboxRead> {
    let path = team.inbox_path(member);
    let inbox = path.display().to_string();
    let skipped = std::cell::RefCell::new(Vec::new());
    let shown = store::read_inbox_each(&path, |index, entry| {
        if index == 0 {
            // A torn file is read again from its first entry.
            skipped.borrow_mut().clear();
        }
        let view = if keep {
            MessageView::from_entry(&entry, &inbox, member.as_str()).map(|v| (v, Some(entry)))
        } else {
            MessageView::from_owned(entry, &inbox, member.as_str())
                .map(|v| (v, None))
                .map_err(|(m, _)| m)
        };
        match view {
            Ok((view, entry)) if filter.matches(&view) => Some(Shown { entry, view }),
            Ok(_) => None,
            Err(m) => {
                skipped.borrow_mut().push(Skipped {
                    inbox: path.to_path_buf(),
                    index,
                    field: m.field,
                });
                None
            }
        }
    })?;
    let Some(shown) = shown else {
        return Ok(InboxRead::default());
    };
    let mut out = InboxRead {
        shown,
        skipped: skipped.into_inner(),
        exists: true,
    };
    if let Some(n) = filter.limit {
        let drop = out.shown.len().saturating_sub(n);
        out.shown.drain(..drop);
    }
    Ok(out)
}

/// What to do with shown entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Set `read: true` (old Claude Code's way).
    Read,
    /// Remove them (new Claude Code's way).
    Consume,
}

/// Marks or removes exactly `shown` (matched by full content, each at most once) in `member`'s
/// inbox, under its lock. Entries that changed or left since they were read are not touched.
/// Returns how many entries were changed.
///
/// # Errors
/// Lock timeout, a corrupt inbox, failed verification, I/O.
pub fn mark(
    team: &Team,
    member: &MemberName,
    shown: &[Entry],
    how: Mark,
    opts: &LockOptions,
) -> Result<usize> {
    if shown.is_empty() {
        return Ok(0);
    }
    let path = team.inbox_path(member);
    store::update(&path, opts, |entries| {
        let mut pending: Vec<&Entry> = shown.iter().collect();
        let mut hit = vec![false; entries.len()];
        for (i, e) in entries.iter().enumerate() {
            if let Some(p) = pending.iter().position(|s| *s == e) {
                pending.swap_remove(p);
                hit[i] = true;
            }
        }
        let mut changed = 0;
        match how {
            Mark::Read => {
                for (e, h) in entries.iter_mut().zip(&hit) {
                    if *h && e.get("read") != Some(&Value::Bool(true)) {
                        e.insert("read".into(), Value::Bool(true));
                        changed += 1;
                    }
                }
            }
            Mark::Consume => {
                let mut it = hit.iter();
                entries.retain(|_| !*it.next().unwrap_or(&false));
                changed = hit.iter().filter(|h| **h).count();
            }
        }
        (changed > 0, changed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_filter_parse() {
        assert_eq!(
            "protocol".parse::<TypeFilter>().unwrap(),
            TypeFilter::Protocol
        );
        assert!("shutdown_request".parse::<TypeFilter>().is_ok());
        assert!("nope".parse::<TypeFilter>().is_err());
    }

    #[test]
    fn unsendable_frames_refused() {
        assert!(Text::new(r#"{"type":"idle_notification","from":"a"}"#).is_err());
        assert!(Text::new("  ").is_err());
        assert!(
            Text::new(r#"{"type":"shutdown_request","requestId":"x"}"#)
                .unwrap()
                .is_frame()
        );
        assert!(!Text::new("hello").unwrap().is_frame());
    }
}
