//! Every message on record, collated across the inboxes, the sent log and the transcripts
//! ([`conversation`]).

use std::collections::{HashMap, VecDeque};

use chrono::DateTime;

use super::summary::{Message, MessageState, Source};
use crate::store::{self, id};
use crate::team::conversation::{Said, Seen};
use crate::team::model::{Frame, Kind, MessageView};
use crate::team::sentlog::Sent;

/// The conversation: every message on record, collated across the inboxes, the sent log and the
/// transcripts, oldest first.
///
/// A message is one record when: its id is the same (an inbox entry, a `SendMessage` result, a
/// sent log line); or, for a delivery seen in a transcript, it has the same sender, recipient
/// and text as a message not yet matched (the earliest), or the same sender, recipient and
/// summary as a sent log line (which keeps no text).
pub fn conversation(
    inboxes: &[(String, Vec<store::Entry>)],
    sent: &[&Sent],
    said: Vec<Said>,
    team_folder: bool,
) -> Vec<Message> {
    let mut c = Collated::default();
    for (owner, entries) in inboxes {
        c.inbox(owner, entries);
    }
    c.finish(sent, said, team_folder)
}

/// The messages gathered so far, and where each id is: [`conversation`] an inbox at a time
/// ([`Collated::inbox`], so that only one inbox's entries are parsed at once), then the rest
/// ([`Collated::finish`]).
#[derive(Default)]
pub(super) struct Collated {
    out: Vec<Message>,
    by_id: HashMap<String, usize>,
}

fn message(at: Option<String>, from: &str, to: &str, text: Option<String>) -> Message {
    let frame = text.as_deref().and_then(Frame::decode);
    Message {
        at,
        from: from.to_string(),
        to: to.to_string(),
        kind: if frame.is_some() {
            Kind::Protocol
        } else {
            Kind::Message
        },
        frame_type: frame.map(|f| f.frame_type),
        summary: None,
        text,
        id: None,
        state: MessageState::Sent,
        delivered_at: None,
        sources: Vec::new(),
    }
}

/// What the messages are matched on: a hash of (sender, recipient, text or summary).
type Queues = HashMap<u64, VecDeque<usize>>;

impl Collated {
    /// Every entry of `owner`'s inbox, read or not (the inboxes in [`conversation`]'s order).
    pub(super) fn inbox(&mut self, owner: &str, entries: &[store::Entry]) {
        for e in entries {
            let Ok(v) = MessageView::from_entry(e, "", owner) else {
                continue;
            };
            let mut m = message(Some(v.timestamp.clone()), &v.from, owner, Some(v.text));
            m.summary = v.summary;
            m.state = if v.read {
                MessageState::Read
            } else {
                MessageState::Unread
            };
            m.sources.push(Source::Inbox);
            let eid = id::entry_id(e);
            m.id = Some(eid.clone());
            self.by_id.insert(eid, self.out.len());
            self.out.push(m);
        }
    }

    /// The inboxes given, the rest of the conversation: what the transcripts say was sent and
    /// delivered, and the sent log; every message once, oldest first.
    pub(super) fn finish(
        mut self,
        sent: &[&Sent],
        said: Vec<Said>,
        team_folder: bool,
    ) -> Vec<Message> {
        let (sends, deliveries): (Vec<Said>, Vec<Said>) =
            said.into_iter().partition(|s| s.seen != Seen::Delivered);
        self.sends(sends);
        self.sent_log(sent, team_folder);
        self.deliveries(deliveries);
        self.in_time_order()
    }

    /// What the transcripts say was sent (the same message, by id, once).
    fn sends(&mut self, sends: Vec<Said>) {
        for s in sends {
            if let Some(&i) = s.msg_id.as_ref().and_then(|id| self.by_id.get(id)) {
                self.out[i].sources.push(Source::Transcript);
                continue;
            }
            let mut m = message(s.at, &s.from, &s.to, Some(s.text));
            m.summary = s.summary;
            m.sources.push(Source::Transcript);
            if let Some(id) = s.msg_id {
                m.id = Some(id.clone());
                self.by_id.insert(id, self.out.len());
            }
            self.out.push(m);
        }
    }

    /// What teamctl's sent log holds: a message gone from its inbox was consumed (while the
    /// team folder is there to say so).
    fn sent_log(&mut self, sent: &[&Sent], team_folder: bool) {
        for s in sent {
            if let Some(&i) = self.by_id.get(&s.id) {
                self.out[i].sources.push(Source::SentLog);
                continue;
            }
            let mut m = message(Some(s.at.clone()), &s.from, &s.to, None);
            m.summary = s.summary.clone();
            m.id = Some(s.id.clone());
            m.state = if team_folder {
                MessageState::Consumed
            } else {
                MessageState::Sent
            };
            m.sources.push(Source::SentLog);
            self.by_id.insert(s.id.clone(), self.out.len());
            self.out.push(m);
        }
    }

    /// The messages by (sender, recipient, text) and by (sender, recipient, summary), earliest
    /// first; no text is copied, a match is checked field by field.
    fn queues(&self) -> (Queues, Queues) {
        let times: Vec<(bool, i64)> = self.out.iter().map(|m| time_key(m.at.as_deref())).collect();
        let (mut by_text, mut by_summary) = (Queues::new(), Queues::new());
        let mut idx: Vec<usize> = (0..self.out.len()).collect();
        idx.sort_by_key(|&i| (times[i], i));
        for &i in &idx {
            let m = &self.out[i];
            match (&m.text, &m.summary) {
                (Some(t), _) => by_text
                    .entry(key3(&m.from, &m.to, t))
                    .or_default()
                    .push_back(i),
                (None, Some(sum)) => by_summary
                    .entry(key3(&m.from, &m.to, sum))
                    .or_default()
                    .push_back(i),
                (None, None) => {}
            }
        }
        (by_text, by_summary)
    }

    /// Deliveries the transcripts saw: each matched to what was sent, earliest first, else
    /// recorded on its own.
    fn deliveries(&mut self, deliveries: Vec<Said>) {
        if deliveries.is_empty() {
            return;
        }
        let (mut by_text, mut by_summary) = self.queues();
        for d in deliveries {
            match self.sent_as(&d, &mut by_text, &mut by_summary) {
                Some(i) => {
                    let m = &mut self.out[i];
                    if m.text.is_none() {
                        m.text = Some(d.text);
                    }
                    m.delivered_at = d.at;
                    if m.to != "*" {
                        m.state = MessageState::Delivered;
                    }
                    if !m.sources.contains(&Source::Transcript) {
                        m.sources.push(Source::Transcript);
                    }
                }
                None => {
                    let mut m = message(d.at.clone(), &d.from, &d.to, Some(d.text));
                    m.summary = d.summary;
                    m.delivered_at = d.at;
                    m.state = MessageState::Delivered;
                    m.sources.push(Source::Transcript);
                    self.out.push(m);
                }
            }
        }
    }

    /// The message `d` delivers: the same text to the same member, else the same summary, else
    /// a broadcast of the same text (which stays for its other recipients).
    fn sent_as(&self, d: &Said, by_text: &mut Queues, by_summary: &mut Queues) -> Option<usize> {
        let out = &self.out;
        let same_text = |m: &Message, to: &str| {
            m.from == d.from && m.to == to && m.text.as_deref() == Some(d.text.as_str())
        };
        first(
            by_text.get_mut(&key3(&d.from, &d.to, &d.text)),
            out,
            |m| same_text(m, &d.to),
            true,
        )
        .or_else(|| {
            let sum = d.summary.as_deref()?;
            first(
                by_summary.get_mut(&key3(&d.from, &d.to, sum)),
                out,
                |m| m.from == d.from && m.to == d.to && m.summary.as_deref() == Some(sum),
                true,
            )
        })
        .or_else(|| {
            first(
                by_text.get_mut(&key3(&d.from, "*", &d.text)),
                out,
                |m| same_text(m, "*"),
                false,
            )
        })
    }

    /// Every message once, its sources in order, in time order.
    fn in_time_order(self) -> Vec<Message> {
        let mut out = self.out;
        for m in &mut out {
            m.sources.sort_by_key(|s| *s as u8);
            m.sources.dedup();
        }
        // In place (a stable sort: messages of one time keep their order).
        out.sort_by_cached_key(|m| time_key(m.at.as_deref()));
        out
    }
}

/// The first index in `q` whose message `is` (taken out when `take`).
fn first(
    q: Option<&mut VecDeque<usize>>,
    out: &[Message],
    is: impl Fn(&Message) -> bool,
    take: bool,
) -> Option<usize> {
    let q = q?;
    let pos = q.iter().position(|&i| is(&out[i]))?;
    if take { q.remove(pos) } else { Some(q[pos]) }
}

fn key3(a: &str, b: &str, c: &str) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    (a, b, c).hash(&mut h);
    h.finish()
}

fn time_key(t: Option<&str>) -> (bool, i64) {
    match t.and_then(|t| DateTime::parse_from_rfc3339(t).ok()) {
        Some(d) => (false, d.timestamp_micros()),
        None => (true, 0),
    }
}
