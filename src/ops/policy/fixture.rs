//! Requests and policies the unit tests of the policy's files share.

use serde_json::{Value, json};

use super::decide::Answer;
use super::paths::Anchors;
use super::rules::{Policy, parse};
use crate::team::model::Frame;
use crate::team::protocol::{Kind, Request};

pub(super) fn perm(tool: &str, input: Value) -> Request {
    let frame = json!({"type": "permission_request", "request_id": "perm-1-a",
        "agent_id": "worker", "tool_name": tool, "tool_use_id": "toolu_1",
        "description": "d", "input": input, "permission_suggestions": []});
    let frame = Frame::decode(&frame.to_string()).unwrap();
    Request {
        request_id: "perm-1-a".into(),
        kind: Kind::Permission,
        from: "worker".into(),
        at: "2026-11-29T10:00:00.000Z".into(),
        age_seconds: 0,
        tool_name: Some(tool.into()),
        description: Some("d".into()),
        input: Some(input),
        plan_file_path: None,
        plan_content: None,
        host: None,
        frame,
    }
}

pub(super) fn anchors() -> Anchors {
    Anchors {
        cwd: Some("/w/proj".into()),
        home: Some("/home/u".into()),
    }
}

pub(super) fn policy(allow: &[&str], deny: &[&str]) -> Policy {
    parse(&json!({"permissions": {"allow": allow, "deny": deny}, "unmatched": "leave"}).to_string())
        .unwrap()
}

pub(super) fn bash(p: &Policy, cmd: &str) -> (Answer, String) {
    let d = p.decide(&perm("Bash", json!({"command": cmd})), &anchors());
    (d.answer, d.rule)
}

pub(super) fn path(p: &Policy, tool: &str, file: &str) -> Answer {
    p.decide(&perm(tool, json!({"file_path": file})), &anchors())
        .answer
}
