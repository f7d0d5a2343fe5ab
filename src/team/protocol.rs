//! Answering a team's protocol as its lead: the requests teammates send to `team-lead`
//! (permission, plan approval, sandbox host), the response frames a Claude Code lead writes
//! back, and shutdown requests. Frames are compact JSON in a message's `text`, field names and
//! order exactly as Claude Code writes them (spec §5).
//!
//! Verified against the real Claude Code 2.1.332: a pane teammate started without
//! `--dangerously-skip-permissions` asks for a tool permission by writing `permission_request` to
//! `team-lead.json` and waits; a `permission_response` from `team-lead` whose `tool_use_id` and
//! `approved_request` (`tool_use_id`, `tool_name`, `input_digest`) match the request lets the tool
//! run. `input_digest` = sha256 hex of `tool_name + "\0" + JSON.stringify(input with every
//! object's keys sorted)` ([`input_digest`]).

use std::collections::HashSet;

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::store::paths::MemberName;
use crate::store::{self, Entry};
use crate::team::config::Team;
use crate::team::mailbox::{self, Delivery, Writing};
use crate::team::model::Frame;
use crate::team::sentlog::{Sent, SentLog};
use crate::time::iso_millis;

/// What a teammate asks its lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `permission_request`: may it run a tool.
    Permission,
    /// `plan_approval_request`: may it leave plan mode with this plan.
    PlanApproval,
    /// `sandbox_permission_request`: may its sandbox reach a host.
    SandboxPermission,
}

/// One open request in the lead's inbox.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Request {
    /// Its id (`perm-…`, `plan_approval-…`, `sandbox-…`).
    pub request_id: String,
    /// What it asks.
    pub kind: Kind,
    /// The teammate asking (the message's `from`).
    pub from: String,
    /// When it asked (the message's timestamp).
    pub at: String,
    /// Seconds since then.
    pub age_seconds: i64,
    /// Permission: the tool.
    pub tool_name: Option<String>,
    /// Permission: what the call does.
    pub description: Option<String>,
    /// Permission: the tool input.
    pub input: Option<Value>,
    /// Plan approval: the plan file.
    pub plan_file_path: Option<String>,
    /// Plan approval: the plan.
    pub plan_content: Option<String>,
    /// Sandbox: the host.
    pub host: Option<String>,
    /// The whole frame as sent.
    pub frame: Frame,
}

impl Request {
    fn from_frame(frame: Frame, from: &str, at: &str, now: DateTime<Utc>) -> Option<Request> {
        let f = &frame.fields;
        let s = |k: &str| f.get(k).and_then(Value::as_str).map(String::from);
        let (kind, id) = match frame.frame_type.as_str() {
            "permission_request" => (Kind::Permission, s("request_id")?),
            "plan_approval_request" => (Kind::PlanApproval, s("requestId")?),
            "sandbox_permission_request" => (Kind::SandboxPermission, s("requestId")?),
            _ => return None,
        };
        let age =
            DateTime::parse_from_rfc3339(at).map(|t| (now - t.with_timezone(&Utc)).num_seconds());
        Some(Request {
            request_id: id,
            kind,
            from: from.to_string(),
            at: at.to_string(),
            age_seconds: age.unwrap_or(0).max(0),
            tool_name: s("tool_name"),
            description: s("description"),
            input: f.get("input").cloned(),
            plan_file_path: s("planFilePath"),
            plan_content: s("planContent"),
            host: f
                .get("hostPattern")
                .and_then(|h| h.get("host"))
                .and_then(Value::as_str)
                .map(String::from),
            frame,
        })
    }
}

/// The requests in `lead`'s inbox that have no answer yet: none in `sent` (teamctl's sent log,
/// read: an answer teamctl wrote), none still in the requester's inbox. The one rule for which
/// requests are open: every command that shows or answers them asks here.
///
/// # Errors
/// A corrupt inbox or I/O.
pub fn pending(
    team: &Team,
    lead: &MemberName,
    sent: &[Sent],
    now: DateTime<Utc>,
) -> Result<Vec<Request>> {
    let mut answered: HashSet<String> = sent
        .iter()
        .filter(|s| s.team == team.name.as_str())
        .filter_map(|s| s.answers.clone())
        .collect();
    let entries = store::read_inbox(&team.inbox_path(lead))?.unwrap_or_default();
    let mut requests: Vec<Request> = entries
        .iter()
        .filter_map(|e| {
            let (from, text, at) = (
                str_field(e, "from")?,
                str_field(e, "text")?,
                str_field(e, "timestamp")?,
            );
            Request::from_frame(Frame::decode(text)?, from, at, now)
        })
        .filter(|r| !answered.contains(&r.request_id))
        .collect();
    // Answers in the requesters' inboxes (written by anyone, not yet consumed).
    let mut seen_inboxes: HashSet<String> = HashSet::new();
    for r in &requests {
        if !seen_inboxes.insert(r.from.clone()) {
            continue;
        }
        let Ok(m) = MemberName::parse(&r.from) else {
            continue;
        };
        for e in store::read_inbox(&team.inbox_path(&m))?.unwrap_or_default() {
            if let Some(id) = str_field(&e, "text").and_then(response_to) {
                answered.insert(id);
            }
        }
    }
    requests.retain(|r| !answered.contains(&r.request_id));
    Ok(requests)
}

fn str_field<'a>(e: &'a Entry, k: &str) -> Option<&'a str> {
    e.get(k).and_then(Value::as_str)
}

/// The request id a response frame answers.
fn response_to(text: &str) -> Option<String> {
    let f = Frame::decode(text)?;
    match f.frame_type.as_str() {
        "permission_response" => f.fields.get("request_id")?.as_str().map(String::from),
        "plan_approval_response" | "sandbox_permission_response" => {
            f.fields.get("requestId")?.as_str().map(String::from)
        }
        _ => None,
    }
}

/// Finds the open request `id`.
///
/// # Errors
/// When there is no such request, or it was already answered.
pub fn find(
    team: &Team,
    lead: &MemberName,
    id: &str,
    log: Option<&SentLog>,
    now: DateTime<Utc>,
) -> Result<Request> {
    let sent = crate::team::sentlog::entries(log)?;
    let open = pending(team, lead, &sent, now)?;
    if let Some(r) = open.into_iter().find(|r| r.request_id == id) {
        return Ok(r);
    }
    let everything = store::read_inbox(&team.inbox_path(lead))?.unwrap_or_default();
    let asked = everything.iter().any(|e| {
        str_field(e, "text")
            .and_then(Frame::decode)
            .is_some_and(|f| {
                ["request_id", "requestId"]
                    .iter()
                    .any(|k| f.fields.get(*k).and_then(Value::as_str) == Some(id))
            })
    });
    if asked {
        bail!("request {id} was already answered");
    }
    bail!(
        "no request {id} in {}'s inbox (see `teamctl pending`)",
        lead
    )
}

/// How a lead answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Yes, with optional feedback and (plan approval) a permission mode for the teammate.
    Approve {
        /// Feedback to the teammate (plan approval).
        feedback: Option<String>,
        /// Permission mode to switch to after the plan (plan approval).
        mode: Option<String>,
    },
    /// No, with the reason.
    Deny {
        /// Why.
        reason: String,
    },
}

/// `tool_name + "\0" + JSON.stringify(input with sorted keys)`, sha256 hex: the digest a
/// current teammate checks in `approved_request.input_digest`.
pub fn input_digest(tool_name: &str, input: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            v => v.clone(),
        }
    }
    let canon = serde_json::to_string(&sorted(input)).unwrap_or_default();
    let mut h = Sha256::new();
    h.update(tool_name.as_bytes());
    h.update([0u8]);
    h.update(canon.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The response frame a Claude Code lead writes for `request`.
pub fn response(request: &Request, verdict: &Verdict, now: DateTime<Utc>) -> Map<String, Value> {
    let mut f = Map::new();
    let put = |f: &mut Map<String, Value>, k: &str, v: Value| {
        f.insert(k.to_string(), v);
    };
    let approve = matches!(verdict, Verdict::Approve { .. });
    match request.kind {
        Kind::Permission => {
            put(&mut f, "type", "permission_response".into());
            put(&mut f, "request_id", request.request_id.clone().into());
            put(
                &mut f,
                "subtype",
                if approve { "success" } else { "error" }.into(),
            );
            let tool_use_id = request.frame.fields.get("tool_use_id").cloned();
            if let Some(t) = &tool_use_id {
                put(&mut f, "tool_use_id", t.clone());
            }
            if let (Some(t), Some(name)) = (&tool_use_id, &request.tool_name) {
                let mut bound = Map::new();
                bound.insert("tool_use_id".into(), t.clone());
                bound.insert("tool_name".into(), name.clone().into());
                let input = request.input.clone().unwrap_or(Value::Null);
                bound.insert("input_digest".into(), input_digest(name, &input).into());
                put(&mut f, "approved_request", Value::Object(bound));
            }
            match verdict {
                Verdict::Approve { .. } => put(&mut f, "response", Value::Object(Map::new())),
                Verdict::Deny { reason } => put(&mut f, "error", reason.clone().into()),
            }
        }
        Kind::PlanApproval => {
            put(&mut f, "type", "plan_approval_response".into());
            put(&mut f, "requestId", request.request_id.clone().into());
            put(&mut f, "approved", approve.into());
            match verdict {
                Verdict::Approve {
                    feedback: Some(fb), ..
                } => put(&mut f, "feedback", fb.clone().into()),
                Verdict::Deny { reason } => put(&mut f, "feedback", reason.clone().into()),
                _ => {}
            }
            put(&mut f, "timestamp", iso_millis(now).into());
            if let Verdict::Approve { mode: Some(m), .. } = verdict {
                put(&mut f, "permissionMode", m.clone().into());
            }
            let plan = request.plan_content.clone().unwrap_or_default();
            let digest: String = Sha256::digest(plan.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            put(&mut f, "planDigest", digest.into());
        }
        Kind::SandboxPermission => {
            put(&mut f, "type", "sandbox_permission_response".into());
            put(&mut f, "requestId", request.request_id.clone().into());
            put(
                &mut f,
                "host",
                request.host.clone().unwrap_or_default().into(),
            );
            put(&mut f, "allow", approve.into());
            put(&mut f, "timestamp", iso_millis(now).into());
        }
    }
    f
}

/// Whether a Claude Code session leads this team (a `session-*` team, or one whose
/// `config.json` records the lead's process). Current Claude Code acts on protocol answers only
/// from its own lead, so answers written by anyone else are ignored there.
pub fn led_by_claude_code(team: &Team) -> bool {
    team.led_by_claude_code()
}

/// Refuses to answer as `team-lead` in a team teamctl does not lead, unless forced (a usage
/// error: exit 2): there the answer would speak for someone else's lead. `approve`, `deny`,
/// `top`, `bridge` and `serve` all refuse by this rule.
///
/// # Errors
/// The refusal, saying why and that nothing was written.
pub fn check_lead(team: &Team, force: bool) -> Result<()> {
    if force || team.teamctl_leads() {
        return Ok(());
    }
    let why = if led_by_claude_code(team) {
        "it is led by a Claude Code session, and current Claude Code acts on protocol answers \
         only from its own lead"
    } else {
        "it was not made by `teamctl create`, so its lead is someone else"
    };
    Err(crate::error::usage(format!(
        "refusing to answer as team-lead in team '{}': teamctl does not lead it ({why}); \
         nothing was written (--force writes anyway)",
        team.name
    )))
}

/// Answers the open request `id` in `lead`'s inbox: writes the response frame into the
/// requester's inbox as `team-lead` (recorded in the sent log). Returns the request, the frame
/// and the delivery.
///
/// # Errors
/// An unknown or already answered request, and the errors of a send.
pub fn answer(
    team: &Team,
    lead: &MemberName,
    id: &str,
    verdict: &Verdict,
    w: Writing,
) -> Result<(Request, Map<String, Value>, Delivery)> {
    let _guard = w.log.map(SentLog::lock_answers).transpose()?;
    let request = find(team, lead, id, w.log, w.now)?;
    let (frame, delivery) = write_answer(team, &request, verdict, w)?;
    Ok((request, frame, delivery))
}

/// Answers `request` unless it has been answered meanwhile (by another process): under the
/// sent log's answer lock, checks it is still pending, then writes the response frame. Returns
/// `None` when it was already answered and nothing was written. Without a sent log there is no
/// lock, and only an answer still in the requester's inbox is seen.
///
/// # Errors
/// The errors of a send, and of reading the inboxes and the log.
pub fn answer_open(
    team: &Team,
    request: &Request,
    verdict: &Verdict,
    w: Writing,
) -> Result<Option<(Map<String, Value>, Delivery)>> {
    let _guard = w.log.map(SentLog::lock_answers).transpose()?;
    if is_answered(team, request, w.log)? {
        return Ok(None);
    }
    write_answer(team, request, verdict, w).map(Some)
}

/// Whether `request` has an answer: one teamctl wrote (the sent log), or one still waiting in
/// the requester's inbox.
fn is_answered(team: &Team, request: &Request, log: Option<&SentLog>) -> Result<bool> {
    let id = request.request_id.as_str();
    if let Some(log) = log
        && log
            .entries()?
            .iter()
            .any(|s| s.team == team.name.as_str() && s.answers.as_deref() == Some(id))
    {
        return Ok(true);
    }
    let Ok(m) = MemberName::parse(&request.from) else {
        return Ok(false);
    };
    Ok(store::read_inbox(&team.inbox_path(&m))?
        .unwrap_or_default()
        .iter()
        .any(|e| str_field(e, "text").and_then(response_to).as_deref() == Some(id)))
}

fn write_answer(
    team: &Team,
    request: &Request,
    verdict: &Verdict,
    w: Writing,
) -> Result<(Map<String, Value>, Delivery)> {
    let to = MemberName::parse(&request.from)?;
    let frame = response(request, verdict, w.now);
    let lead_name = MemberName::parse("team-lead")?;
    let delivery = mailbox::send_frame(team, &to, &lead_name, &frame, w)?;
    Ok((frame, delivery))
}

/// A `shutdown_request` for `member` from `team-lead`; its id is `shutdown-<ms>@<member>`.
pub fn shutdown_request(
    member: &str,
    reason: Option<&str>,
    now: DateTime<Utc>,
) -> Map<String, Value> {
    let mut f = Map::new();
    f.insert("type".into(), "shutdown_request".into());
    f.insert(
        "requestId".into(),
        format!("shutdown-{}@{member}", now.timestamp_millis()).into(),
    );
    f.insert("from".into(), "team-lead".into());
    if let Some(r) = reason {
        f.insert("reason".into(), r.into());
    }
    f.insert("timestamp".into(), iso_millis(now).into());
    f
}

/// The answer to a shutdown request, if one is in `lead`'s inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShutdownAnswer {
    /// `shutdown_approved`: the teammate exits.
    Approved,
    /// `shutdown_rejected`, with its reason.
    Rejected(String),
}

/// Looks for the answer to shutdown request `request_id` in `lead`'s inbox.
///
/// # Errors
/// A corrupt inbox or I/O.
pub fn shutdown_answer(
    team: &Team,
    lead: &MemberName,
    request_id: &str,
) -> Result<Option<ShutdownAnswer>> {
    let entries = store::read_inbox(&team.inbox_path(lead))?.unwrap_or_default();
    for e in &entries {
        let Some(f) = str_field(e, "text").and_then(Frame::decode) else {
            continue;
        };
        if f.fields.get("requestId").and_then(Value::as_str) != Some(request_id) {
            continue;
        }
        match f.frame_type.as_str() {
            "shutdown_approved" => return Ok(Some(ShutdownAnswer::Approved)),
            "shutdown_rejected" => {
                let why = f
                    .fields
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                return Ok(Some(ShutdownAnswer::Rejected(why)));
            }
            _ => {}
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    fn request(text: &str) -> Request {
        Request::from_frame(
            Frame::decode(text).unwrap(),
            "worker",
            "2026-11-29T09:59:00.000Z",
            now(),
        )
        .unwrap()
    }

    const PERM: &str = r#"{"type":"permission_request","request_id":"perm-1-abc","agent_id":"worker","tool_name":"Bash","tool_use_id":"toolu_1","description":"Write","input":{"description":"Write","command":"echo hi"},"permission_suggestions":[]}"#;

    #[test]
    fn digest_sorts_keys_like_claude_code() {
        // Checked against Claude Code 2.1.332's own digest of the same call (it ran the tool).
        let input: Value = serde_json::from_str(
            r#"{"command":"echo A-62020cf2 > ran.txt","description":"Write the token to ran.txt"}"#,
        )
        .unwrap();
        let d = input_digest("Bash", &input);
        let mut h = Sha256::new();
        h.update(b"Bash\0{\"command\":\"echo A-62020cf2 > ran.txt\",\"description\":\"Write the token to ran.txt\"}");
        let want: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(d, want);
        let reordered: Value = serde_json::from_str(
            r#"{"description":"Write the token to ran.txt","command":"echo A-62020cf2 > ran.txt"}"#,
        )
        .unwrap();
        assert_eq!(input_digest("Bash", &reordered), d);
    }

    #[test]
    fn permission_frames() {
        let r = request(PERM);
        assert_eq!(
            (r.kind, r.request_id.as_str(), r.age_seconds),
            (Kind::Permission, "perm-1-abc", 60)
        );
        let digest = input_digest("Bash", r.input.as_ref().unwrap());
        let yes = response(
            &r,
            &Verdict::Approve {
                feedback: None,
                mode: None,
            },
            now(),
        );
        assert_eq!(
            serde_json::to_string(&yes).unwrap(),
            format!(
                r#"{{"type":"permission_response","request_id":"perm-1-abc","subtype":"success","tool_use_id":"toolu_1","approved_request":{{"tool_use_id":"toolu_1","tool_name":"Bash","input_digest":"{digest}"}},"response":{{}}}}"#
            )
        );
        let no = response(
            &r,
            &Verdict::Deny {
                reason: "not now".into(),
            },
            now(),
        );
        assert_eq!(
            serde_json::to_string(&no).unwrap(),
            format!(
                r#"{{"type":"permission_response","request_id":"perm-1-abc","subtype":"error","tool_use_id":"toolu_1","approved_request":{{"tool_use_id":"toolu_1","tool_name":"Bash","input_digest":"{digest}"}},"error":"not now"}}"#
            )
        );
    }

    #[test]
    fn plan_and_sandbox_frames() {
        let plan = request(
            r#"{"type":"plan_approval_request","from":"worker","timestamp":"t","planFilePath":"/p.md","planContent":"do it","requestId":"plan_approval-1@worker@t"}"#,
        );
        let yes = response(
            &plan,
            &Verdict::Approve {
                feedback: Some("ok".into()),
                mode: Some("acceptEdits".into()),
            },
            now(),
        );
        let digest: String = Sha256::digest(b"do it")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            serde_json::to_string(&yes).unwrap(),
            format!(
                r#"{{"type":"plan_approval_response","requestId":"plan_approval-1@worker@t","approved":true,"feedback":"ok","timestamp":"2026-11-29T10:00:00.000Z","permissionMode":"acceptEdits","planDigest":"{digest}"}}"#
            )
        );
        let sb = request(
            r#"{"type":"sandbox_permission_request","requestId":"sandbox-1-x","workerId":"worker@t","workerName":"worker","workerColor":"blue","hostPattern":{"host":"example.com"},"createdAt":1}"#,
        );
        assert_eq!(sb.host.as_deref(), Some("example.com"));
        let no = response(
            &sb,
            &Verdict::Deny {
                reason: "no".into(),
            },
            now(),
        );
        assert_eq!(
            serde_json::to_string(&no).unwrap(),
            r#"{"type":"sandbox_permission_response","requestId":"sandbox-1-x","host":"example.com","allow":false,"timestamp":"2026-11-29T10:00:00.000Z"}"#
        );
    }

    #[test]
    fn shutdown_frame() {
        let f = shutdown_request("worker", Some("done"), now());
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"type":"shutdown_request","requestId":"shutdown-1795946400000@worker","from":"team-lead","reason":"done","timestamp":"2026-11-29T10:00:00.000Z"}"#
        );
    }
}
