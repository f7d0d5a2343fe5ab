//! Teams and transcripts as the suites need them: a team written as Claude Code writes it, the
//! team teamctl leads (`led_team`), teammates writing and taking messages as Claude Code does
//! (`write_as`, `take`), and session transcripts (`assistant_entry`, `alice_session`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use teamctl::store;
use teamctl::store::lock::LockOptions;
use teamctl::store::paths::{Layout, MemberName, TeamName};
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, Mark, SendRequest};

use super::{TestEnv, read_entries, wait_until};

impl TestEnv {
    /// Writes a team whose config lists `members` (name, colour), with an inbox folder.
    pub fn team(&self, team: &str, members: &[(&str, Option<&str>)]) {
        let dir = self.root.join("teams").join(team);
        fs::create_dir_all(dir.join("inboxes")).unwrap();
        let members: Vec<Value> = std::iter::once(("team-lead", None))
            .chain(members.iter().copied())
            .map(|(name, color)| {
                let mut m = serde_json::json!({
                    "agentId": format!("{name}@{team}"),
                    "name": name,
                    "joinedAt": 1764444600000u64,
                    "tmuxPaneId": "",
                    "cwd": "/tmp",
                    "subscriptions": []
                });
                if let Some(c) = color {
                    m["color"] = c.into();
                }
                m
            })
            .collect();
        let cfg = serde_json::json!({
            "name": team,
            "createdAt": 1764444600000u64,
            "leadAgentId": format!("team-lead@{team}"),
            "leadSessionId": "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d",
            "members": members
        });
        fs::write(
            dir.join("config.json"),
            serde_json::to_string_pretty(&cfg).unwrap(),
        )
        .unwrap();
    }

    /// Rewrites `team`'s config.json through `edit` (no teamctl runs on it at the time).
    pub fn edit_config(&self, team: &str, edit: impl FnOnce(&mut Value)) {
        let path = self.root.join("teams").join(team).join("config.json");
        let mut cfg: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        edit(&mut cfg);
        fs::write(&path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    }

    /// Marks `team` as one teamctl leads, as `teamctl create --launch none` does: teamctl's
    /// private record in the default data dir, and the key in config.json (which decides
    /// nothing on its own).
    pub fn lead_by_teamctl(&self, team: &str) {
        self.lead_by_teamctl_in(team, &self.data_dir());
    }

    /// [`TestEnv::lead_by_teamctl`] with the record in the data dir `data`.
    pub fn lead_by_teamctl_in(&self, team: &str, data: &Path) {
        self.edit_config(team, |cfg| {
            cfg["teamctl"] =
                serde_json::json!({"leads": true, "version": "0.1.0", "launch": "none", "tmuxSession": null});
        });
        self.record_lead_in(team, data);
    }

    /// Writes teamctl's private record that it leads `team` into the data dir `data`, with
    /// the team's current leadSessionId and createdAt, through the library `create` uses.
    pub fn record_lead_in(&self, team: &str, data: &Path) {
        use teamctl::store::paths::{Layout, TeamName};
        let path = self.root.join("teams").join(team).join("config.json");
        let cfg: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let layout = Layout::new(&self.root);
        let name = TeamName::parse(team).unwrap();
        let rec = teamctl::team::lead::new_record(
            &layout,
            &name,
            cfg["leadSessionId"].as_str().unwrap(),
            cfg["createdAt"].as_i64().unwrap(),
            None,
        );
        teamctl::team::lead::Leads::in_dir(data)
            .record(&layout, &name, &rec)
            .unwrap();
    }

    /// Removes teamctl's private record that it leads `team` (from the default data dir).
    pub fn unlead(&self, team: &str) {
        use teamctl::store::paths::{Layout, TeamName};
        teamctl::team::lead::Leads::in_dir(&self.data_dir())
            .remove(&Layout::new(&self.root), &TeamName::parse(team).unwrap())
            .unwrap();
    }

    /// Writes a transcript `projects/<cwd as Claude Code names it>/<session>.jsonl` holding
    /// `entries`, one a line; returns its path.
    pub fn transcript(&self, cwd: &str, session: &str, entries: &[Value]) -> PathBuf {
        let project: String = cwd
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let path = self
            .root
            .join("projects")
            .join(project)
            .join(format!("{session}.jsonl"));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = String::new();
        for e in entries {
            text.push_str(&e.to_string());
            text.push('\n');
        }
        fs::write(&path, text).unwrap();
        path
    }

    /// A response of `member` (10 input and 5 output tokens of claude-opus-5-5: $0.00014) appended
    /// to its transcript in `team`, as a pane teammate's session writes it.
    pub fn spend_as(&self, team: &str, member: &str, id: &str) {
        let e = assistant_entry(
            id,
            "2026-11-29T10:00:00.000Z",
            serde_json::json!([{"type": "text", "text": "working"}]),
            "end_turn",
            (10, 5),
        );
        self.transcript_line_as(team, member, e);
    }

    /// Appends `e` (an entry, given `teamName` and `agentName`) to `member`'s transcript, as
    /// [`TestEnv::spend_as`] does.
    pub fn transcript_line_as(&self, team: &str, member: &str, mut e: Value) {
        let cfg: serde_json::Value = serde_json::from_slice(
            &fs::read(self.root.join("teams").join(team).join("config.json")).unwrap(),
        )
        .unwrap();
        let cwd = cfg["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == member)
            .unwrap()["cwd"]
            .as_str()
            .unwrap()
            .to_string();
        e["teamName"] = team.into();
        e["agentName"] = member.into();
        let project: String = cwd
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let path = self
            .root
            .join("projects")
            .join(project)
            .join(format!("session-of-{member}.jsonl"));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        use std::io::Write;
        writeln!(f, "{e}").unwrap();
    }
}

/// A transcript's `assistant` entry as Claude Code 2.1.332 writes it (trimmed): response `id`,
/// `blocks`, its stop reason and usage.
pub fn assistant_entry(
    id: &str,
    at: &str,
    blocks: Value,
    stop: &str,
    (input, output): (u64, u64),
) -> Value {
    serde_json::json!({"parentUuid": null, "isSidechain": false, "type": "assistant", "timestamp": at,
        "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
            "content": blocks, "stop_reason": stop,
            "usage": {"input_tokens": input, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0, "output_tokens": output}}})
}

// Teams the suites share: a team teamctl leads, teammates written as Claude Code writes.

/// A team teamctl leads (`create --launch none`) with teammates `alice` and `bob`, whose
/// briefs are already taken.
pub fn led_team(env: &TestEnv) {
    env.cmd()
        .args([
            "create",
            "t",
            "--member",
            "alice:brief",
            "--member",
            "bob:brief",
            "--launch",
            "none",
        ])
        .assert()
        .success();
    for m in ["alice", "bob"] {
        fs::write(env.inbox("t", m), "[]").unwrap();
    }
}

/// Team `t` of [`led_team`], opened through the library.
pub fn open_led_team(env: &TestEnv) -> Team {
    Team::open(
        &Layout::new(&env.root),
        &TeamName::parse("t").unwrap(),
        &teamctl::team::records::Records::none(),
    )
    .unwrap()
}

/// `from` writes `text` (a plain message or a frame) into `to`'s inbox, as Claude Code would.
pub fn write_as(env: &TestEnv, from: &str, to: &str, text: &str) {
    write_in(&open_led_team(env), from, to, text);
}

/// As [`write_as`], in `team`.
pub fn write_in(team: &Team, from: &str, to: &str, text: &str) {
    write_stamped(team, from, to, text, chrono::Utc::now());
}

/// As [`write_in`], stamped `now`.
pub fn write_stamped(
    team: &Team,
    from: &str,
    to: &str,
    text: &str,
    now: chrono::DateTime<chrono::Utc>,
) {
    let (to, from) = (
        MemberName::parse(to).unwrap(),
        MemberName::parse(from).unwrap(),
    );
    let opts = LockOptions::with_timeout(Duration::from_secs(5));
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(frame)) => {
            let w = mailbox::Writing {
                now,
                lock: &opts,
                log: None,
            };
            mailbox::send_frame(team, &to, &from, &frame, w).unwrap();
        }
        _ => {
            let req = SendRequest {
                to,
                from,
                text: mailbox::Text::new(text).unwrap(),
                summary: None,
                color: None,
                force: true,
                idempotency_key: None,
            };
            mailbox::send(team, &req, now, &opts, None).unwrap();
        }
    }
}

/// An `idle_notification` frame from `from`.
pub fn idle_frame(from: &str) -> String {
    json!({"type": "idle_notification", "from": from, "timestamp": "2026-11-29T10:00:01.000Z",
           "idleReason": "available", "summary": "looked at it", "result": "nothing to add"})
    .to_string()
}

/// Waits until an unread entry whose text contains `needle` is in `member`'s inbox, then
/// takes it (removes it, as current Claude Code does).
pub fn take(env: &TestEnv, member: &str, needle: &str) -> Value {
    take_in(env, "t", member, needle)
}

/// As [`take`], in team `team`.
pub fn take_in(env: &TestEnv, team: &str, member: &str, needle: &str) -> Value {
    let path = env.inbox(team, member);
    let mut found = None;
    assert!(
        wait_until(Duration::from_secs(20), || {
            found = read_entries(&path)
                .into_iter()
                .find(|e| e["text"].as_str().unwrap_or("").contains(needle));
            found.is_some()
        }),
        "nothing with {needle:?} reached {member}"
    );
    let found = found.unwrap();
    let entry: store::Entry = serde_json::from_value(found.clone()).unwrap();
    let n = mailbox::mark(
        &Team::open(
            &Layout::new(&env.root),
            &TeamName::parse(team).unwrap(),
            &teamctl::team::records::Records::none(),
        )
        .unwrap(),
        &MemberName::parse(member).unwrap(),
        &[entry],
        Mark::Consume,
        &LockOptions::with_timeout(Duration::from_secs(5)),
    )
    .unwrap();
    assert_eq!(n, 1);
    found
}

/// alice's session in team `t`: her brief, a text, a Bash call that fails, a message from
/// bob, all as a 2.1.332 pane teammate writes them (trimmed).
pub fn alice_session(env: &TestEnv) -> std::path::PathBuf {
    let cfg: Value =
        serde_json::from_slice(&fs::read(env.root.join("teams/t/config.json")).unwrap()).unwrap();
    let cwd = cfg["members"][1]["cwd"].as_str().unwrap().to_string();
    let me = |mut e: Value| {
        e["teamName"] = "t".into();
        e["agentName"] = "alice".into();
        e["sessionId"] = "s-alice".into();
        e
    };
    env.transcript(
        &cwd,
        "s-alice",
        &[
            json!({"type":"mode","mode":"normal"}),
            me(json!({"type":"user","timestamp":"2026-11-29T09:00:00.000Z","message":{"role":"user","content":"<teammate-message teammate_id=\"team-lead\" summary=\"your brief\">\nReview the parser\n</teammate-message>"}})),
            me(assistant_entry("m1", "2026-11-29T09:00:01.000Z", json!([{"type":"text","text":"Looking.\u{1b}[31m red"}]), "tool_use", (10, 5))),
            me(assistant_entry("m1", "2026-11-29T09:00:01.000Z", json!([{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"cargo test --lib parser"}}]), "tool_use", (10, 5))),
            me(json!({"type":"user","timestamp":"2026-11-29T09:00:05.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":"error[E0425]: cannot find x\nmore"}]}})),
            me(json!({"type":"user","timestamp":"2026-11-29T09:00:06.000Z","message":{"role":"user","content":"<teammate-message teammate_id=\"bob\">\n{\"type\":\"idle_notification\",\"from\":\"bob\"}\n</teammate-message>"}})),
        ],
    )
}
