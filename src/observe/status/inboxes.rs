//! What the inboxes tell a status, parsed again only when a file changed ([`Cache`]).

use std::collections::HashMap;
use std::time::SystemTime;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::store::dir::{Info, Kind, Loc};
use crate::store::light::{LightEntry, LightFrame};
use crate::store::paths::MemberName;
use crate::team::config::Team;
use crate::team::generation::{Format, Ours};
use crate::team::tasks::Board;

#[derive(Debug, Clone, Default)]
pub(super) struct Seen {
    pub(super) last: Option<(DateTime<Utc>, String)>,
    pub(super) terminated: bool,
    /// What a turn's end in its transcript is judged against
    /// ([`crate::observe::unreported::Signs`]): its newest `idle_notification`, its newest plain
    /// message, and when its inbox was drained; and the newest entry in its inbox (set by the
    /// status from [`Inboxes::received`]).
    pub(super) idle: Option<DateTime<Utc>>,
    pub(super) said: Option<DateTime<Utc>>,
    pub(super) drained: Option<DateTime<Utc>>,
    pub(super) received: Option<DateTime<Utc>>,
}

impl Seen {
    fn event(&mut self, at: DateTime<Utc>, kind: &str) {
        if self.last.as_ref().is_none_or(|(t, _)| at >= *t) {
            self.last = Some((at, kind.to_string()));
        }
        let slot = match kind {
            "idle_notification" => &mut self.idle,
            "message" => &mut self.said,
            "inbox_drained" => &mut self.drained,
            _ => return,
        };
        *slot = (*slot).max(Some(at));
    }

    /// Takes in what `other` saw after what this saw (as if its events came next, in order).
    fn take_in(&mut self, other: &Seen) {
        if let Some((at, kind)) = &other.last {
            self.event(*at, kind);
        }
        self.terminated |= other.terminated;
        self.idle = self.idle.max(other.idle);
        self.said = self.said.max(other.said);
        self.drained = self.drained.max(other.drained);
    }
}

/// Which file an inbox was when it was read: a file replaced by a rename (as Claude Code and
/// teamctl write) is another inode; one rewritten in place another size or mtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: SystemTime,
}

impl Stamp {
    fn of(i: &Info) -> Stamp {
        Stamp {
            dev: i.dev,
            ino: i.ino,
            size: i.size,
            mtime: i.mtime,
        }
    }
}

/// What one inbox tells `status`, from its bytes.
#[derive(Debug, Clone)]
struct InboxFacts {
    stamp: Stamp,
    /// Entries not `read: true`.
    unread: usize,
    /// Its newest entry's timestamp.
    newest: Option<DateTime<Utc>>,
    /// Each sender's newest event in this inbox, in the order the senders first appear.
    senders: Vec<(String, Seen)>,
    /// What the inbox's format is weighed on: each entry's `read`, whether it has `msgV`, its id.
    weights: Vec<(Option<bool>, bool, Option<String>)>,
    /// The format weighed last, and on which sent log ([`Ours::print`]).
    format: Option<(u64, Option<Format>)>,
}

/// What a [`crate::observe::reader::TeamReader`] read, kept for its next read: the parsed
/// inboxes by owner with which file each was (device, inode, size, mtime; checked by one `stat`
/// per inbox, through the same folder handles as the read), so that a read after one inbox
/// changed parses that one only; and the task board it loaded last.
#[derive(Debug, Default)]
pub struct Cache {
    inboxes: HashMap<String, InboxFacts>,
    /// The task board read by the last call.
    pub(crate) board: Board,
    /// How many inboxes the last call parsed (the others were as they were).
    pub parsed: usize,
}

/// The facts of the inbox at `path`: `Ok(None)` when it does not exist, `Err` a warning (a read
/// or parse failure, a symlink or FIFO in its place: left as it is).
fn read_inbox(path: &Loc, stamp: Option<Stamp>) -> Result<Option<InboxFacts>, String> {
    let bytes = match path.read() {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "could not read {}: {e} (left unchanged)",
                path.display()
            ));
        }
    };
    let lossy;
    let entries: Vec<LightEntry> = match serde_json::from_slice(&bytes) {
        Ok(e) => e,
        Err(e) => {
            // An escaped lone surrogate is valid to Claude Code: read it as U+FFFD (only
            // after a failed parse, so a healthy inbox is scanned once).
            lossy = crate::store::format::replace_lone_surrogates(&bytes);
            match lossy.as_deref().map(serde_json::from_slice) {
                Some(Ok(e)) => e,
                _ => {
                    return Err(format!(
                        "could not read {}: {e} (left unchanged)",
                        path.display()
                    ));
                }
            }
        }
    };
    let weights = entries
        .iter()
        .map(|e| {
            (
                e.read.as_bool(),
                e.msg_v.is_some(),
                e.msg_id.as_str().map(String::from),
            )
        })
        .collect();
    let mut unread = 0;
    let mut newest = None;
    let mut senders: Vec<(String, Seen)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for e in &entries {
        if e.read.as_bool() != Some(true) {
            unread += 1;
        }
        let (Some(from), Some(ts)) = (e.from.as_str(), e.timestamp.as_str()) else {
            continue;
        };
        let Ok(at) = DateTime::parse_from_rfc3339(ts) else {
            continue;
        };
        let at = at.with_timezone(&Utc);
        newest = newest.max(Some(at));
        let text = e.text.as_str().unwrap_or("");
        let frame = if text.starts_with('{') {
            serde_json::from_str::<LightFrame>(text).ok()
        } else {
            None
        };
        let kind = frame
            .as_ref()
            .and_then(|f| f.kind.as_str())
            .unwrap_or("message");
        let i = *index.entry(from).or_insert_with(|| {
            senders.push((from.to_string(), Seen::default()));
            senders.len() - 1
        });
        let s = &mut senders[i].1;
        s.event(at, kind);
        let approved = kind == "shutdown_approved"
            || (kind == "shutdown_response"
                && frame.as_ref().and_then(|f| f.approve.as_bool()) == Some(true));
        s.terminated |= approved;
    }
    // Without a stamp (the stat found no regular file) it is not kept: read again next time.
    let stamp = stamp.unwrap_or(Stamp {
        dev: u64::MAX,
        ino: u64::MAX,
        size: u64::MAX,
        mtime: SystemTime::UNIX_EPOCH,
    });
    Ok(Some(InboxFacts {
        stamp,
        unread,
        newest,
        senders,
        weights,
        format: None,
    }))
}

/// What the inboxes told: each name's newest event, each owner's unread entries, and how many
/// inboxes were read by each generation of Claude Code.
pub(super) struct Inboxes {
    pub(super) owners: Vec<MemberName>,
    pub(super) seen: HashMap<String, Seen>,
    pub(super) pending: HashMap<String, usize>,
    /// Each owner's newest entry in its inbox.
    pub(super) received: HashMap<String, DateTime<Utc>>,
    pub(super) current: usize,
    pub(super) legacy: usize,
}

impl Inboxes {
    /// The team's inbox format (`status --json` `team.format`).
    pub(super) fn format(&self) -> &'static str {
        match (self.current, self.legacy) {
            (0, 0) => "unknown",
            (_, 0) => "current",
            (0, _) => "legacy",
            _ => "mixed",
        }
    }
}

/// Reads every inbox of `team`, parsing again only those that changed since `cache` saw them.
pub(super) fn read_inboxes(
    team: &Team,
    sent: &[crate::team::sentlog::Sent],
    cache: &mut Cache,
    warnings: &mut Vec<String>,
    unlisted: &mut Vec<String>,
) -> Inboxes {
    let ours = crate::team::generation::Ours::new(
        sent,
        team.name.as_str(),
        team.config.as_ref().and_then(|c| c.created_at),
    );
    let owners = team.inbox_owners().unwrap_or_else(|e| {
        unlisted.push(format!("{e:#}"));
        Vec::new()
    });
    let mut read = Inboxes {
        owners: Vec::new(),
        seen: HashMap::new(),
        pending: HashMap::new(),
        received: HashMap::new(),
        current: 0,
        legacy: 0,
    };
    let mut before = std::mem::take(&mut cache.inboxes);
    cache.parsed = 0;
    for owner in &owners {
        let path = team.inbox_path(owner);
        // Stat first, read after: a file replaced in between is read new under the old stamp,
        // and read again next time (never old bytes under a new stamp).
        let info = path.stat().ok().flatten();
        let stamp = info.filter(|i| i.kind == Kind::File).map(|i| Stamp::of(&i));
        let kept = before
            .remove(owner.as_str())
            .filter(|f| stamp.is_some_and(|s| s == f.stamp));
        let mut facts = match kept {
            Some(f) => f,
            None => {
                cache.parsed += 1;
                match read_inbox(&path, stamp) {
                    Ok(Some(f)) => f,
                    Ok(None) => continue,
                    Err(w) => {
                        warnings.push(w);
                        continue;
                    }
                }
            }
        };
        match facts.format(&ours, owner.as_str()) {
            Some(Format::Legacy) => read.legacy += 1,
            Some(Format::Current) => read.current += 1,
            None => {}
        }
        for (from, s) in &facts.senders {
            read.seen.entry(from.clone()).or_default().take_in(s);
        }
        read.pending.insert(owner.to_string(), facts.unread);
        if let Some(t) = facts.newest {
            read.received.insert(owner.to_string(), t);
        }
        if facts.unread == 0
            && let Some(i) = info
        {
            read.seen
                .entry(owner.to_string())
                .or_default()
                .event(i.mtime.into(), "inbox_drained");
        }
        if stamp.is_some() {
            cache.inboxes.insert(owner.to_string(), facts);
        }
    }
    read.owners = owners;
    read
}

impl InboxFacts {
    /// The inbox's format, weighed again only when the sent log changed ([`Ours::print`]).
    fn format(&mut self, ours: &Ours, owner: &str) -> Option<Format> {
        match self.format {
            Some((print, format)) if print == ours.print() => format,
            _ => {
                let weights = self.weights.iter();
                let format = ours
                    .weigh(
                        owner,
                        weights.map(|(read, msgv, id)| (*read, *msgv, id.as_deref())),
                    )
                    .format();
                self.format = Some((ours.print(), format));
                format
            }
        }
    }
}
