//! Answering a team's pending requests by a policy ([`answer_pending`]), each once across
//! processes, plan approvals held back until the teammate's turn has ended.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::decide::{Answer, Decision};
use super::paths::Anchors;
use super::rules::Policy;
use crate::observe::unreported::TurnEnds;
use crate::store::paths::MemberName;
use crate::team::config::Team;
use crate::team::mailbox::{Delivery, Writing};
use crate::team::protocol::{self, Kind, Request, Verdict};

/// One request the policy step looked at.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The request.
    pub request: Request,
    /// What the policy decided.
    pub decision: Decision,
    /// The response frame written (`None` for leave, dry runs and failures).
    pub response: Option<Map<String, Value>>,
    /// The delivery of that frame.
    pub delivery: Option<Delivery>,
    /// Another process answered it between the listing and the write: nothing was written.
    pub answered_elsewhere: bool,
    /// A plan approval held back until the teammate's turn has ended (see
    /// [`answer_pending`]): nothing was written yet.
    pub deferred: bool,
    /// Why the answer could not be written (it stays pending and is tried again).
    pub error: Option<String>,
}

/// What answers requests: the rules, the home that anchors their `~/` paths, and whether
/// only to say what the rules decide.
#[derive(Debug, Clone, Copy)]
pub struct Answering<'a> {
    /// The rules.
    pub policy: &'a Policy,
    /// What `~/` in a rule stands for.
    pub home: Option<&'a Path>,
    /// Decide without writing.
    pub dry_run: bool,
}

/// Answers every pending request in `lead`'s inbox as `a` says (once: see
/// [`protocol::answer_open`]), writing as `w` says. Relative path rules are anchored at the
/// working directory `teamctl create` gave the teammates (from teamctl's private record; a
/// member's `cwd` in `config.json` only when there is none). Returns what was looked at, in
/// inbox order.
///
/// A plan approval is answered only once the teammate's turn has ended after asking: it
/// reported idle (an `idle_notification` from it, timestamped at or after the request, in
/// `lead`'s inbox) [`IDLE_SETTLES`] ago or more, or, a teammate that never reports idle, its
/// transcript says that turn ended at or after the request and nothing since,
/// [`crate::observe::unreported::UNREPORTED_AFTER`] ago or more (`ends`:
/// [`crate::observe::unreported::judge`]). Observed with the real Claude Code 2.1.332, an
/// answer that reaches a `--plan-mode-required` teammate while its `ExitPlanMode` turn is still
/// running is consumed and never reaches the model, and the teammate waits forever. Until then
/// the outcome is `deferred`.
///
/// # Errors
/// Reading the inboxes or the sent log; a failed write is reported in its [`Outcome`] instead.
pub fn answer_pending(
    team: &Team,
    lead: &MemberName,
    a: &Answering,
    w: Writing,
    ends: &mut TurnEnds,
) -> Result<Vec<Outcome>> {
    let Answering {
        policy,
        home,
        dry_run,
    } = *a;
    let now = w.now;
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let idle = idle_times(&team.inbox_path(lead))?;
    let sent = crate::team::sentlog::entries(w.log)?;
    for request in protocol::pending(team, lead, &sent, now)? {
        if !seen.insert(request.request_id.clone()) {
            continue;
        }
        let decision = policy.decide(&request, &anchors(team, &request, home));
        let mut o = Outcome {
            request,
            decision,
            response: None,
            delivery: None,
            answered_elsewhere: false,
            deferred: false,
            error: None,
        };
        let verdict = match o.decision.answer {
            Answer::Approve => Verdict::Approve {
                feedback: None,
                mode: None,
            },
            Answer::Deny => Verdict::Deny {
                reason: o.decision.reason.clone(),
            },
            Answer::Leave => {
                out.push(o);
                continue;
            }
        };
        if o.request.kind == Kind::PlanApproval
            && !idle_settled(&idle, (&o.request.from, &o.request.at), now)
            && !ended_unreported(ends, team, &o.request, now)?
        {
            o.deferred = true;
            out.push(o);
            continue;
        }
        if !dry_run {
            match protocol::answer_open(team, &o.request, &verdict, w) {
                Ok(Some((frame, d))) => {
                    o.response = Some(frame);
                    o.delivery = Some(d);
                }
                Ok(None) => o.answered_elsewhere = true,
                Err(e) => o.error = Some(format!("{e:#}")),
            }
        }
        out.push(o);
    }
    Ok(out)
}

/// Where relative path rules are anchored for `request`: the working directory teamctl gave its
/// teammates (its private record), not what a teammate wrote into config.json; the member's
/// recorded cwd only when teamctl kept none (a team created before it did).
fn anchors(team: &Team, request: &Request, home: Option<&Path>) -> Anchors {
    let recorded = team.lead.as_ref().and_then(|r| r.cwd.as_ref());
    Anchors {
        cwd: recorded
            .or_else(|| {
                team.config
                    .as_ref()
                    .and_then(|c| c.member(&request.from))
                    .and_then(|m| m.cwd.as_ref())
            })
            .map(PathBuf::from),
        home: home.map(Path::to_path_buf),
    }
}

/// How long after a teammate's `idle_notification` its turn counts as over. Claude Code
/// 2.1.332 writes the notification from its Stop hook, before the turn has quite ended: seen
/// 8 to 57 ms before the transcript's end of the turn in 5 runs of `policy-e2e.js` of 6, and a
/// plan approval the teammate's 1 s poll read within that gap was lost (1 run of 5). Two
/// seconds leave room for a loaded machine.
pub const IDLE_SETTLES: Duration = Duration::from_secs(2);

/// Whether the teammate that asked `request` has reported idle since (an `idle_notification`
/// from it in `lead`'s inbox, timestamped at or after the request), [`IDLE_SETTLES`] before
/// `now` or earlier: a plan approval written earlier is lost by Claude Code 2.1.332 (see
/// [`answer_pending`]).
///
/// # Errors
/// Reading the lead's inbox.
pub fn reported_idle(
    team: &Team,
    lead: &MemberName,
    request: &Request,
    now: DateTime<Utc>,
) -> Result<bool> {
    let idle = idle_times(&team.inbox_path(lead))?;
    Ok(idle_settled(&idle, (&request.from, &request.at), now))
}

/// Whether the teammate that asked `request` ended its turn after asking without reporting
/// idle, [`crate::observe::unreported::UNREPORTED_AFTER`] ago or more.
///
/// # Errors
/// Reading the inboxes.
fn ended_unreported(
    ends: &mut TurnEnds,
    team: &Team,
    request: &Request,
    now: DateTime<Utc>,
) -> Result<bool> {
    let asked = crate::time::parse_time(&request.at);
    let ended = ends.unreported(team, &request.from, now)?;
    Ok(ended.is_some_and(|e| asked.is_some_and(|a| e >= a)))
}

/// Whether `idle` (`(from, timestamp)` of idle notifications) holds one from `asker.0` at or
/// after it asked (`asker.1`), [`IDLE_SETTLES`] before `now` or earlier.
fn idle_settled(idle: &[(String, String)], asker: (&str, &str), now: DateTime<Utc>) -> bool {
    let (who, asked) = asker;
    let settled = now - IDLE_SETTLES;
    idle.iter().any(|(from, at)| {
        from == who
            && at.as_str() >= asked
            && crate::time::parse_time(at).is_some_and(|t| t <= settled)
    })
}

/// `(from, timestamp)` of every `idle_notification` in an inbox.
fn idle_times(inbox: &crate::store::dir::Loc) -> Result<Vec<(String, String)>> {
    let entries = crate::store::read_inbox(inbox)?.unwrap_or_default();
    Ok(entries
        .iter()
        .filter_map(|e| {
            let text = e.get("text")?.as_str()?;
            let f = crate::team::model::Frame::decode(text)?;
            (f.frame_type == "idle_notification").then_some(())?;
            Some((
                e.get("from")?.as_str()?.to_string(),
                e.get("timestamp")?.as_str()?.to_string(),
            ))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An idle notification counts once it is [`IDLE_SETTLES`] old: Claude Code writes it a
    /// moment before its turn has ended.
    #[test]
    fn an_idle_notification_counts_once_it_has_settled() {
        let now: DateTime<Utc> = "2026-11-29T10:00:10Z".parse().unwrap();
        let asked = ("worker", "2026-11-29T10:00:00.000Z");
        let idle = |at: &str| vec![("worker".to_string(), at.to_string())];
        assert!(!idle_settled(&idle("2026-11-29T10:00:09.000Z"), asked, now));
        assert!(idle_settled(&idle("2026-11-29T10:00:08.000Z"), asked, now));
        // Before the request, or another member's: not this turn's end.
        assert!(!idle_settled(&idle("2026-11-29T09:59:59.000Z"), asked, now));
        let other = vec![(
            "planner".to_string(),
            "2026-11-29T10:00:01.000Z".to_string(),
        )];
        assert!(!idle_settled(&other, asked, now));
    }
}
