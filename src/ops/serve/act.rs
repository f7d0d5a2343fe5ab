//! What the page may do: approve or deny a request it names, and send a teammate a message,
//! through the same locked paths as `teamctl approve`, `deny` and `send`
//! ([`protocol::answer_open`], [`mailbox::send`]), each journaled with `"via":"web"`. A request
//! is answered once whoever answers it (the sent log's answer lock): a stale page, or a second
//! click, finds it answered and writes nothing. A plan approval waits for its planner to report
//! idle, as `approve --policy` waits ([`crate::ops::policy::reported_idle`]).

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::hub::Held;
use super::journal::{Record, What};
use super::{Ground, Shared};
use crate::ops::policy::reported_idle;
use crate::store::paths::{MemberName, TeamName};
use crate::team::config::{LEAD, Team};
use crate::team::mailbox::{self, SendRequest, Text};
use crate::team::protocol::{self, Kind, Request, Verdict};
use crate::time::iso_millis;

/// The longest message the page sends.
pub const MAX_MESSAGE: usize = 16 * 1024;

/// What the page asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ask {
    /// Approve the request with this id.
    Approve(String),
    /// Deny the request with this id, for this reason.
    Deny(String, String),
    /// Send this member this text.
    Send(String, String),
}

/// Why an action was not done: its HTTP status and one line for the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// What the page shows.
    pub why: String,
}

fn refuse(status: u16, why: impl Into<String>) -> Refusal {
    Refusal {
        status,
        why: why.into(),
    }
}

/// Does `ask` in team `name` at `now` (see the module docs): the journaled record.
///
/// # Errors
/// A refusal: read-only (403), a team not served or not found (404), a team teamctl does not
/// lead (403), a request not open (409), bad text (400), a write that failed (500).
pub fn act(s: &Shared, name: &str, ask: Ask, now: DateTime<Utc>) -> Result<Record, Refusal> {
    if s.read_only {
        return Err(refuse(403, "read-only: this server answers nothing"));
    }
    let team = open(&s.ground, name, &s.teams())?;
    protocol::check_lead(&team, false).map_err(|e| refuse(403, format!("{e:#}")))?;
    let at = At {
        g: &s.ground,
        team: &team,
        now,
    };
    let record = match ask {
        Ask::Approve(id) => answer(s, &at, &id, None)?,
        Ask::Deny(id, reason) => answer(s, &at, &id, Some(reason))?,
        Ask::Send(to, text) => send(&at, &to, text)?,
    };
    s.journal(&record);
    Ok(record)
}

/// Where and when an action is done: the server's ground, the team, the time.
struct At<'a> {
    g: &'a Ground,
    team: &'a Team,
    now: DateTime<Utc>,
}

impl At<'_> {
    /// A record of `event` about `request`, in this team, now.
    fn record(&self, event: What, request: &Request) -> Record {
        let mut r = Record::new(event, iso_millis(self.now), self.team.name.as_str());
        r.member = Some(request.from.clone());
        r.request_id = Some(request.request_id.clone());
        r
    }
}

/// An approval with nothing more said.
fn approval() -> Verdict {
    Verdict::Approve {
        feedback: None,
        mode: None,
    }
}

/// Team `name`, when it is one of `served`.
fn open(g: &Ground, name: &str, served: &[String]) -> Result<Team, Refusal> {
    let not_served = || refuse(404, format!("no team {name:?} is served here"));
    if !served.iter().any(|t| t == name) {
        return Err(not_served());
    }
    let name = TeamName::parse(name).map_err(|_| not_served())?;
    Team::open(&g.layout, &name, &g.records).map_err(|e| refuse(404, format!("{e:#}")))
}

/// The lead's name as the naming rules take it.
fn lead_of(team: &Team) -> Result<MemberName, Refusal> {
    let cfg = team.config.as_ref();
    MemberName::parse(cfg.and_then(|c| c.lead()).map_or(LEAD, |l| l.name.as_str()))
        .map_err(|e| refuse(409, format!("{e:#}")))
}

/// The open request `id` in the team.
fn open_request(at: &At, id: &str) -> Result<Request, Refusal> {
    let lead = lead_of(at.team)?;
    let sent = crate::team::sentlog::entries(at.g.records.sent_log())
        .map_err(|e| refuse(500, format!("{e:#}")))?;
    let open = protocol::pending(at.team, &lead, &sent, at.now)
        .map_err(|e| refuse(500, format!("{e:#}")))?;
    open.into_iter()
        .find(|r| r.request_id == id)
        .ok_or_else(|| {
            refuse(
                409,
                format!("request {id:?} is not open: answered already, or never asked"),
            )
        })
}

/// Approves (`deny` is `None`) or denies the open request `id`.
fn answer(s: &Shared, at: &At, id: &str, deny: Option<String>) -> Result<Record, Refusal> {
    let request = open_request(at, id)?;
    let mut r = at.record(What::Approved, &request);
    let verdict = match &deny {
        None => approval(),
        Some(reason) => {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(refuse(400, "a denial needs a reason"));
            }
            r.event = What::Denied;
            r.detail = Some(reason.to_string());
            Verdict::Deny {
                reason: reason.to_string(),
            }
        }
    };
    if deny.is_none() && request.kind == Kind::PlanApproval {
        let lead = lead_of(at.team)?;
        let idle = reported_idle(at.team, &lead, &request, at.now)
            .map_err(|e| refuse(500, format!("{e:#}")))?;
        if !idle {
            r.event = What::Held;
            r.detail = Some(held_detail(&request.from));
            s.hub.hold(Held {
                team: at.team.name.to_string(),
                request,
                since: iso_millis(at.now),
            });
            return Ok(r);
        }
    }
    write_answer(at, &request, &verdict, &mut r)?;
    Ok(r)
}

/// What a held approval waits for, in words.
pub fn held_detail(planner: &str) -> String {
    format!(
        "held until {planner} reports idle (Claude Code loses a plan approval that arrives earlier)"
    )
}

/// Writes the answer to `request` (once across processes), its entry's id into `r`.
fn write_answer(
    at: &At,
    request: &Request,
    verdict: &Verdict,
    r: &mut Record,
) -> Result<(), Refusal> {
    let w = mailbox::Writing {
        now: at.now,
        lock: &at.g.lock,
        log: at.g.records.sent_log(),
    };
    match protocol::answer_open(at.team, request, verdict, w) {
        Ok(Some((_, d))) => {
            r.id = Some(d.id);
            Ok(())
        }
        Ok(None) => Err(refuse(
            409,
            format!("request {:?} was answered already", request.request_id),
        )),
        Err(e) => Err(refuse(500, format!("could not answer: {e:#}"))),
    }
}

/// Writes the approvals held in `team` whose planner has reported idle since; returns their
/// records (each journaled).
pub fn release_held(s: &Shared, team: &Team, now: DateTime<Utc>) -> Vec<Record> {
    let mut out = Vec::new();
    let name = team.name.as_str();
    let held = s.hub.held(name);
    let (false, Ok(lead)) = (held.is_empty(), lead_of(team)) else {
        return out;
    };
    let at = At {
        g: &s.ground,
        team,
        now,
    };
    for h in held {
        if !reported_idle(team, &lead, &h.request, now).unwrap_or(false) {
            continue;
        }
        s.hub.release(name, &h.request.request_id);
        let mut r = at.record(What::Approved, &h.request);
        r.detail = Some(format!(
            "held since {}, written once {} reported idle",
            h.since, h.request.from
        ));
        // Answered meanwhile (at a terminal): nothing to write, nothing to journal.
        if write_answer(&at, &h.request, &approval(), &mut r).is_ok() {
            s.journal(&r);
            out.push(r);
        }
    }
    out
}

/// Sends `to` the plain text `text` as the team's lead.
fn send(at: &At, to: &str, text: String) -> Result<Record, Refusal> {
    if text.trim().is_empty() {
        return Err(refuse(400, "the message is empty"));
    }
    if text.len() > MAX_MESSAGE {
        return Err(refuse(
            400,
            format!("the message is over {MAX_MESSAGE} bytes"),
        ));
    }
    let to = MemberName::parse(to).map_err(|e| refuse(400, format!("{e:#}")))?;
    // Plain text only (as the chat's `say`): any text Claude Code would read as a protocol
    // frame, of a known type or not, would speak for Claude Code.
    let checked = Text::plain(text.clone()).map_err(|e| refuse(400, format!("{e:#}")))?;
    let from =
        MemberName::parse(at.team.default_identity()).map_err(|e| refuse(500, format!("{e:#}")))?;
    let req = SendRequest {
        to: to.clone(),
        from,
        text: checked,
        summary: None,
        color: None,
        force: false,
        idempotency_key: None,
    };
    let d =
        mailbox::send(at.team, &req, at.now, &at.g.lock, at.g.records.sent_log()).map_err(|e| {
            let status = match e.downcast_ref::<crate::error::Error>() {
                Some(crate::error::Error::Usage(_)) => 400,
                Some(crate::error::Error::LockTimeout { .. }) => 503,
                _ => 500,
            };
            refuse(status, format!("{e:#}"))
        })?;
    let mut r = Record::new(What::Said, iso_millis(at.now), at.team.name.as_str());
    r.member = Some(to.to_string());
    r.detail = Some(text);
    r.id = Some(d.id);
    Ok(r)
}
