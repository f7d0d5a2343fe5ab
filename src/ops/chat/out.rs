//! What the bridge posts: each open request once with a fresh code, each other need once, a
//! retired code's notice (answered elsewhere, expired). A post is journaled only once the chat
//! has taken it ([`Bridge::posted`]): one that failed is looked at again next time.

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::code::Code;
use super::journal::{Record, What};
use super::render::{self, Post};
use super::state::{Bridge, Open, Scope, lead_of};
use crate::observe::human::{REQUEST_AFTER, needs};
use crate::observe::reader::Present;
use crate::ops::policy::reported_idle;
use crate::store::paths::TeamName;
use crate::team::config::Team;
use crate::team::protocol::{Kind, Request};
use crate::time::iso_millis;

/// One message to post, and what it records once posted.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The message.
    pub post: Post,
    /// What the journal keeps once it is posted.
    pub record: Record,
}

impl Bridge {
    /// Reads every team served (as [`Bridge::refresh`] last found them) and returns what to
    /// post, oldest first, with warnings (a team that could not be read).
    pub fn look(&mut self, now: DateTime<Utc>) -> (Vec<Outgoing>, Vec<String>) {
        let mut warnings = Vec::new();
        let mut out = Vec::new();
        let mut pending: Vec<(TeamName, String)> = Vec::new();
        let mut read: Vec<TeamName> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let names: Vec<TeamName> = self.teams.keys().cloned().collect();
        for name in names {
            let Some(reader) = self.teams.get_mut(&name) else {
                continue;
            };
            let present = match reader.read(now) {
                Ok(p) => p,
                Err(e) => {
                    warnings.push(format!("{e:#}"));
                    continue;
                }
            };
            read.push(name.clone());
            // A file that cannot be read (a corrupt inbox) is told once, while it lasts.
            for w in &present.status.warnings {
                if !self.warned.contains(w) {
                    warnings.push(w.clone());
                }
                seen.insert(w.clone());
            }
            let lost = crate::observe::misaddressed::scan(reader.team()).misaddressed;
            let notices: Vec<_> = needs(
                &present,
                reader.team(),
                reader.board(),
                REQUEST_AFTER,
                &lost,
            )
            .into_iter()
            .filter(|n| n.cause != "request" && !n.cleared)
            .collect();
            let team = reader.team().clone();
            out.extend(self.budget_posts(&name, now));
            // A run's requests are its Claude lead's to answer.
            let requests = match self.scope {
                Scope::Run(_) => &[][..],
                _ => &present.requests[..],
            };
            for r in requests {
                pending.push((name.clone(), r.request_id.clone()));
                let posted = self
                    .open
                    .values()
                    .any(|o| o.team == name && o.request_id == r.request_id)
                    || self
                        .dropped
                        .contains(&(name.to_string(), r.request_id.clone()));
                // The same request twice in the inbox is one message.
                let twice = pending[..pending.len() - 1]
                    .iter()
                    .any(|(t, id)| *t == name && *id == r.request_id);
                if posted || twice || !ready(&team, &present, r, now) {
                    continue;
                }
                match Code::random() {
                    Ok(code) => out.push(self.request(&name, r, code, now)),
                    Err(e) => warnings.push(format!("{e:#} (request {} not posted)", r.request_id)),
                }
            }
            for n in notices {
                let key = format!(
                    "{name} {} {} {}",
                    n.cause,
                    n.member.as_deref().unwrap_or(""),
                    n.key
                );
                if self.told.contains(&key) {
                    continue;
                }
                let mut record = self.record(What::Notice, now);
                record.team = Some(name.to_string());
                record.member = n.member.clone();
                record.detail = Some(key);
                out.push(Outgoing {
                    post: render::need(name.as_str(), &n),
                    record,
                });
            }
        }
        self.warned = seen;
        out.extend(self.retire(&pending, &read, now));
        (out, warnings)
    }

    fn request(&self, team: &TeamName, r: &Request, code: Code, now: DateTime<Utc>) -> Outgoing {
        let expires = now + self.s.ttl;
        let mut record = self.record(What::Posted, now);
        record.team = Some(team.to_string());
        record.member = Some(r.from.clone());
        record.request_id = Some(r.request_id.clone());
        record.code = Some(code.to_string());
        record.expires_at = Some(iso_millis(expires));
        Outgoing {
            post: render::request(team.as_str(), r, &code),
            record,
        }
    }

    /// The notices that retire codes: their request was answered elsewhere (seen twice: by the
    /// look and by a read of its own) or its team is no longer served, or the code expired with
    /// its request still open.
    fn retire(
        &self,
        pending: &[(TeamName, String)],
        read: &[TeamName],
        now: DateTime<Utc>,
    ) -> Vec<Outgoing> {
        let mut out = Vec::new();
        for (code, o) in &self.open {
            let still = pending
                .iter()
                .any(|(t, id)| *t == o.team && *id == o.request_id);
            // Not among the open requests read: answered elsewhere, when a read of its own
            // says so (a read that failed lists no requests), or its team is no longer served.
            let served = self.teams.contains_key(&o.team);
            let gone = !still
                && (!served
                    || (read.contains(&o.team)
                        && self.pending_now(&o.team, &o.request_id, now) == Some(false)));
            let (what, post) = match (still, o.expires <= now) {
                (true, true) => (
                    What::Expired,
                    render::expired(o.team.as_str(), &o.request_id, code),
                ),
                (false, _) if gone => (
                    What::Closed,
                    render::closed(o.team.as_str(), &o.request_id, code),
                ),
                _ => continue,
            };
            out.push(Outgoing {
                post,
                record: self.code_record(what, code, o, now),
            });
        }
        out
    }

    /// A record about `code` and its request.
    pub(super) fn code_record(
        &self,
        what: What,
        code: &Code,
        o: &Open,
        now: DateTime<Utc>,
    ) -> Record {
        let mut r = self.record(what, now);
        r.team = Some(o.team.to_string());
        r.member = Some(o.member.clone());
        r.request_id = Some(o.request_id.clone());
        r.code = Some(code.to_string());
        r.expires_at = Some(iso_millis(o.expires));
        r
    }

    /// Records that `out` was posted (its code now answers its request).
    ///
    /// # Errors
    /// The journal could not be written.
    pub fn posted(&mut self, out: &Outgoing) -> Result<()> {
        self.commit(&out.record)
    }

    /// Records that the chat refused `out` for good (`why`: what it said), and returns that
    /// record (`dropped`, journaled): it is never tried again while the bridge runs, and holds
    /// up nothing. A request's post is not posted again (its code was never shown, and answers
    /// nothing); a retired code stays retired; a notice counts as told (a crossed cap still
    /// stops the bridge); a prompt's code answers nothing.
    ///
    /// # Errors
    /// The journal could not be written.
    pub fn dropped(&mut self, out: &Outgoing, why: &str, now: DateTime<Utc>) -> Result<Record> {
        let o = &out.record;
        let code = o.code.as_deref().and_then(Code::parse);
        match (o.event, &o.team, &o.request_id) {
            (What::Posted, Some(team), Some(id)) => {
                self.dropped.insert((team.clone(), id.clone()));
            }
            (What::Posted, _, None) => self.prompt = None,
            (What::Notice, _, _) => {
                self.told.extend(o.detail.clone());
            }
            _ => {}
        }
        if let Some(code) = code {
            self.open.remove(&code);
            self.spent.insert(code.to_string());
        }
        let mut r = o.clone();
        r.event = What::Dropped;
        r.at = iso_millis(now);
        r.detail = Some(why.to_string());
        self.commit(&r)?;
        Ok(r)
    }
}

/// Whether `r` may be posted now: a plan only once its teammate's turn has ended after asking,
/// so that an answer from the chat cannot reach it mid-turn (Claude Code 2.1.332 loses it then:
/// [`crate::ops::policy::answer_pending`]): it reported idle, or, a teammate that never reports
/// idle, its transcript's turn ended at or after the request unreported (`present`'s
/// `idle_unreported_since`, [`crate::observe::unreported::judge`]).
fn ready(team: &Team, present: &Present, r: &Request, now: DateTime<Utc>) -> bool {
    let asked = crate::time::parse_time(&r.at);
    let unreported = present.status.members.iter().any(|m| {
        m.name == r.from
            && m.idle_unreported_since
                .as_deref()
                .and_then(crate::time::parse_time)
                .is_some_and(|e| asked.is_some_and(|a| e >= a))
    });
    r.kind != Kind::PlanApproval
        || unreported
        || lead_of(team).is_ok_and(|lead| reported_idle(team, &lead, r, now).unwrap_or(false))
}
