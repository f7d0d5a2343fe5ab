//! Why a member is not progressing: the first reason that holds, and what more is known.

use chrono::{DateTime, Utc};

use crate::observe::spend::MemberSpend;
use crate::team::protocol::Kind as RequestKind;
use crate::team::tasks::{Board, Task};

use super::model::Work;
use crate::observe::waiting::{Waiting, WaitingDetail};

/// What was found of a member's process and API calls, each a reason it may be waiting.
pub(super) struct Signs {
    /// Its process is gone with work left (what is left).
    pub(super) dead: Option<WaitingDetail>,
    /// What its newest transcript says of its API calls ([`api_reason`]).
    pub(super) api: Option<(Waiting, WaitingDetail)>,
    /// It is inside a turn whose transcript has not grown for the stall threshold.
    pub(super) stalled: bool,
    /// Its turn ended in its transcript at this time, and it reported no idle
    /// ([`crate::observe::unreported::judge`]).
    pub(super) unreported: Option<DateTime<Utc>>,
}

/// What `status` and `doctor` say of a teammate that never reports idle.
pub const UNREPORTED_TEXT: &str = "its turns end but it reports no idle; a start-up race is one \
                                   cause; restarting it helps";

/// Why `name` is not progressing, the first reason that holds (see the module docs), and
/// what more is known about it.
pub(super) fn waiting<'a>(
    w: &Work,
    board: &Board,
    name: &str,
    owned: impl Iterator<Item = &'a Task>,
    signs: Signs,
) -> Option<(Waiting, Option<WaitingDetail>)> {
    let Signs {
        dead,
        api,
        stalled,
        unreported,
    } = signs;
    let asks = |k: &[RequestKind]| {
        w.requests
            .iter()
            .any(|r| r.from == name && k.contains(&r.kind))
    };
    let open: Vec<&Task> = owned
        .filter(|t| t.status != "completed" && !t.is_internal())
        .collect();
    if asks(&[RequestKind::Permission, RequestKind::SandboxPermission]) {
        Some((Waiting::Permission, None))
    } else if asks(&[RequestKind::PlanApproval]) {
        Some((Waiting::Plan, None))
    } else if let Some(d) = dead {
        Some((Waiting::Dead, Some(d)))
    } else if let Some((why, d)) = api {
        Some((why, Some(d)))
    } else if !open.is_empty() && open.iter().all(|t| board.view(t).blocked) {
        Some((Waiting::Blocked, None))
    } else if stalled {
        Some((Waiting::Stalled, None))
    } else if let Some(ended) = unreported {
        let detail = WaitingDetail {
            message: Some(UNREPORTED_TEXT.into()),
            since: Some(crate::time::iso_millis(ended)),
            ..WaitingDetail::default()
        };
        Some((Waiting::IdleUnreported, Some(detail)))
    } else {
        None
    }
}

/// What a member's newest transcript says of its API calls at `now`: failing (and whether the
/// retries ran out), being retried, or sent and unanswered for `w.no_response_after`.
pub(super) fn api_reason(
    s: &MemberSpend,
    now: DateTime<Utc>,
    w: &Work,
) -> Option<(Waiting, WaitingDetail)> {
    let api = &s.api;
    let by_status = |status: Option<u16>, kind: Option<&str>| match (status, kind) {
        (Some(429), _) | (_, Some("rate_limit")) => Waiting::RateLimited,
        (Some(529), _) => Waiting::Overloaded,
        _ => Waiting::ApiError,
    };
    if let Some(f) = &api.failed {
        let detail = WaitingDetail {
            status: f.status,
            exhausted: true,
            message: f.text.clone(),
            since: f.at.clone(),
            ..WaitingDetail::default()
        };
        return Some((by_status(f.status, f.kind.as_deref()), detail));
    }
    if let Some(r) = &api.retry {
        let at = r.at.as_deref().and_then(parse_time);
        let retry_at = at.zip(r.retry_in_ms).map(|(at, ms)| {
            crate::time::iso_millis(at + chrono::Duration::milliseconds(ms as i64))
        });
        let detail = WaitingDetail {
            status: r.status,
            attempt: r.attempt,
            max_retries: r.max_retries,
            retry_at,
            resets_at: r
                .resets_at
                .and_then(|s| DateTime::from_timestamp(s, 0))
                .map(crate::time::iso_millis),
            exhausted: false,
            message: r.text.clone().or_else(|| r.connection.clone()),
            since: api.first_sent.clone(),
        };
        return Some((by_status(r.status, None), detail));
    }
    if api.sends >= 2 {
        // Claude Code 2.1.332 writes no error line for an interactive session: the same request
        // sent again is all that shows.
        let detail = WaitingDetail {
            attempt: Some(api.sends - 1),
            message: Some(
                "the same request was sent again: Claude Code is retrying a failed call".into(),
            ),
            since: api.first_sent.clone(),
            ..WaitingDetail::default()
        };
        return Some((Waiting::ApiError, detail));
    }
    let sent = api.last_sent.as_deref().and_then(parse_time)?;
    let quiet = now.signed_duration_since(sent).to_std().unwrap_or_default();
    (api.waiting_for_answer() && quiet >= w.no_response_after).then(|| {
        let detail = WaitingDetail {
            message: Some(format!(
                "no answer to its request for {}",
                crate::units::duration(quiet.as_secs())
            )),
            since: api.last_sent.clone(),
            ..WaitingDetail::default()
        };
        (Waiting::NoResponse, detail)
    })
}

fn parse_time(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}
