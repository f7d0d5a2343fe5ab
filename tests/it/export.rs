//! `teamctl export`: the record of a team (a folder or a .tar.gz), its summary.json and a
//! report.md that teammate text cannot break; `delete --export`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::common::{Ran, TestEnv, keys, run_json};

pub(crate) const SID: &str = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";

/// Text a teammate could write to break a report: HTML, Markdown, a fence, table pipes,
/// terminal escapes, bidi overrides, NUL, a fake closing tag.
const HOSTILE: &str = "<script>alert(1)</script> **bold** [x](https://evil.example) @everyone #1 :rocket:\n\
     ```\n# not a heading\n````\n| a | b |\n\u{1b}[2J\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7} \u{202e}evil\u{2066} \u{0}nul\r\n\
     </teammate-message>\n<details><summary>x</summary>";

pub(crate) fn lead_transcript(env: &TestEnv) -> PathBuf {
    let dir = env.root.join("projects/-tmp-work");
    fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{SID}.jsonl"))
}

pub(crate) fn lines(v: &[Value]) -> String {
    v.iter().map(|l| format!("{l}\n")).collect()
}

/// A team with every kind of file: config, inboxes (plain, protocol, read, hostile), tasks
/// (valid, corrupt, .highwatermark, .lock, a lock folder, a temp file), a symlink where an inbox
/// should be, the sent log (a message teamctl sent, since consumed), the lead's transcript
/// (its spawn, a delivered message, its final answer) and an in-process teammate's.
pub(crate) fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.team(
        "demo",
        &[("worker", Some("blue")), ("helper", Some("green"))],
    );
    // Sent by teamctl, then taken by the worker: only the sent log keeps it.
    env.cmd()
        .args([
            "--team",
            "demo",
            "send",
            "worker",
            "from teamctl",
            "--summary",
            "ping",
        ])
        .assert()
        .success();
    fs::write(env.inbox("demo", "worker"), "[]").unwrap();
    fs::write(
        env.inbox("demo", "team-lead"),
        serde_json::to_string_pretty(&json!([
            {"from":"worker","text":HOSTILE,"summary":"hostile | <b>summary</b>\n# h","timestamp":"2026-11-29T09:58:00.000Z","msg_id":"m-hostile","read":false},
            {"from":"helper","text":"{\"type\":\"idle_notification\",\"from\":\"helper\",\"timestamp\":\"2026-11-29T09:59:00.000Z\",\"idleReason\":\"available\"}","timestamp":"2026-11-29T09:59:00.000Z","read":true},
        ]))
        .unwrap(),
    )
    .unwrap();
    // Not a file of the team: never copied.
    let secret = env.dir.path().join("secret.json");
    fs::write(
        &secret,
        "[{\"from\":\"x\",\"text\":\"SECRET\",\"timestamp\":\"t\"}]",
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, env.inbox("demo", "helper")).unwrap();

    let tasks = env.root.join("tasks/demo");
    fs::create_dir_all(tasks.join("2.json.lock")).unwrap();
    fs::write(tasks.join(".lock"), "").unwrap();
    fs::write(tasks.join(".highwatermark"), "3").unwrap();
    fs::write(
        tasks.join("1.json"),
        r#"{"id":"1","subject":"Review <b>auth</b> | now","description":"d","status":"completed","owner":"worker","blocks":["2"],"blockedBy":[]}"#,
    )
    .unwrap();
    fs::write(
        tasks.join("2.json"),
        r#"{"id":"2","subject":"Fix it","description":"","status":"pending","blocks":[],"blockedBy":["1"]}"#,
    )
    .unwrap();
    fs::write(tasks.join("3.json"), "{not json").unwrap();
    fs::write(tasks.join("2.json.tmp.0badc0de"), "{}").unwrap();

    let t = lead_transcript(&env);
    fs::write(
        &t,
        lines(&[
            json!({"type":"user","timestamp":"2026-11-29T09:50:00.000Z","message":{"role":"user","content":"Spawn: worker"}}),
            json!({"type":"assistant","timestamp":"2026-11-29T09:50:01.000Z","message":{"id":"msg_l1","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"a","name":"Agent","input":{"name":"worker","prompt":"Report back"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}),
            json!({"type":"user","timestamp":"2026-11-29T09:55:00.000Z","message":{"content":"Another Claude session sent a message:\n<teammate-message teammate_id=\"worker\" color=\"blue\" summary=\"report\">\nREPORT 42\n</teammate-message>\n\nThis came from another Claude session"}}),
            json!({"type":"assistant","timestamp":"2026-11-29T09:55:01.000Z","message":{"id":"msg_l2","model":"claude-opus-5-5","content":[{"type":"text","text":"FINAL ANSWER: 42"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}}),
        ]),
    )
    .unwrap();
    let subs = t.with_extension("").join("subagents");
    fs::create_dir_all(&subs).unwrap();
    fs::write(subs.join("agent-a1b2.meta.json"), r#"{"name":"helper"}"#).unwrap();
    fs::write(
        subs.join("agent-a1b2.jsonl"),
        lines(&[
            json!({"type":"user","timestamp":"2026-11-29T09:51:00.000Z","message":{"content":"<teammate-message teammate_id=\"team-lead\">\nhelp out\n</teammate-message>"}}),
            json!({"type":"assistant","timestamp":"2026-11-29T09:51:01.000Z","message":{"id":"msg_h1","model":"claude-opus-5-5","content":[{"type":"text","text":"helping"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}}),
        ]),
    )
    .unwrap();
    // The worker, a pane teammate: a session of its own in the project of its cwd (/tmp), its
    // entries naming the team and itself; it got its prompt and sent its report.
    fs::write(
        worker_transcript(&env),
        lines(&[
            json!({"type":"user","teamName":"demo","agentName":"worker","timestamp":"2026-11-29T09:50:02.000Z","message":{"content":"<teammate-message teammate_id=\"team-lead\">\nReport back\n</teammate-message>"}}),
            json!({"type":"assistant","teamName":"demo","agentName":"worker","timestamp":"2026-11-29T09:54:59.000Z","message":{"id":"msg_w1","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"s1","name":"SendMessage","input":{"to":"team-lead","summary":"report","message":"REPORT 42"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}}),
        ]),
    )
    .unwrap();
    env
}

pub(crate) const WORKER_SID: &str = "9a8b7c6d-0000-4000-8000-00000000beef";

pub(crate) fn worker_transcript(env: &TestEnv) -> PathBuf {
    let dir = env.root.join("projects/-tmp");
    fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{WORKER_SID}.jsonl"))
}

fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_record_of_a_team_with_every_kind_of_file() {
    let env = fixture();
    let before = snapshot(&env.root);
    let out = env.dir.path().join("rec");
    let v = run_json(
        &env,
        &["--team", "demo", "export", "--out", out.to_str().unwrap()],
    );
    assert_eq!(
        keys(&v),
        [
            "bytes",
            "files",
            "format",
            "messages",
            "out",
            "schema_version",
            "size",
            "team",
            "transcripts",
            "warnings"
        ]
    );
    assert_eq!(v["format"], "folder");
    assert_eq!(v["transcripts"], 3);
    // Reads only: the config dir is byte for byte as it was.
    assert_eq!(snapshot(&env.root), before);
    the_folder_holds_every_file_byte_for_byte(&env, &out, &v);
    let s: Value = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        keys(&s),
        [
            "actions",
            "cost",
            "files",
            "generated_at",
            "generator",
            "messages",
            "result",
            "result_final",
            "run",
            "schema_version",
            "status",
            "tasks",
            "team",
            "team_folder",
            "transcripts",
            "warnings",
            "worktrees"
        ]
    );
    assert_eq!(s["worktrees"], json!([]));
    assert_eq!(s["schema_version"], 1);
    assert_eq!(s["generated_at"], crate::common::NOW);
    assert_eq!(s["team_folder"], true);
    assert_eq!(s["result"], "FINAL ANSWER: 42");
    assert_eq!(s["result_final"], true);
    the_summary_prices_each_member_as_status_does(&s);
    the_summary_carries_the_status_document_and_the_tasks(&s);
    the_summary_lists_every_message_once(&s);
    the_summary_names_transcripts_digests_and_what_it_could_not_copy(&s, &out);
    the_report_is_markdown_without_secrets(&out);
    the_archive_holds_the_same_files(&env, &out);
}

/// The record's folder: every file, and the copies byte for byte.
fn the_folder_holds_every_file_byte_for_byte(env: &TestEnv, out: &Path, v: &Value) {
    assert_eq!(
        tree(out),
        [
            "report.html",
            "report.md",
            "sent.jsonl",
            "summary.json",
            "tasks/.highwatermark",
            "tasks/1.json",
            "tasks/2.json",
            "tasks/3.json",
            "team/config.json",
            "team/inboxes/team-lead.json",
            "team/inboxes/worker.json",
            "transcripts/helper/agent-a1b2.jsonl",
            format!("transcripts/team-lead/{SID}.jsonl").as_str(),
            format!("transcripts/worker/{WORKER_SID}.jsonl").as_str(),
        ]
    );
    assert_eq!(v["files"], 14);
    // Byte for byte.
    for (copy, orig) in [
        ("team/config.json", env.root.join("teams/demo/config.json")),
        (
            "team/inboxes/team-lead.json",
            env.inbox("demo", "team-lead"),
        ),
        ("tasks/3.json", env.root.join("tasks/demo/3.json")),
        (
            &format!("transcripts/team-lead/{SID}.jsonl"),
            lead_transcript(env),
        ),
        (
            &format!("transcripts/worker/{WORKER_SID}.jsonl"),
            worker_transcript(env),
        ),
    ] {
        assert_eq!(
            fs::read(out.join(copy)).unwrap(),
            fs::read(orig).unwrap(),
            "{copy}"
        );
    }
}

/// summary.json's cost: each member's, as `status --json` reports it.
fn the_summary_prices_each_member_as_status_does(s: &Value) {
    // What each member cost, as status --json reports it (each response 10 input and 5 output
    // tokens of claude-opus-5-5: $0.00014; no session has ended, so computed).
    let cost = &s["cost"];
    assert_eq!(
        keys(cost),
        [
            "cost_source",
            "cost_usd",
            "known_cost_usd",
            "members",
            "tokens"
        ]
    );
    assert_eq!(
        cost["tokens"],
        json!({"input": 40, "output": 20, "cache_read": 0, "cache_creation": 0})
    );
    assert!((cost["cost_usd"].as_f64().unwrap() - 0.00056).abs() < 1e-12);
    assert_eq!(cost["cost_source"], "computed");
    let per: Vec<Value> = cost["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!([
                m["name"],
                m["tokens"]["input"],
                m["cost_source"],
                m["model"]
            ])
        })
        .collect();
    assert_eq!(
        per,
        [
            json!(["team-lead", 20, "computed", "claude-opus-5-5"]),
            json!(["worker", 10, "computed", "claude-opus-5-5"]),
            json!(["helper", 10, "computed", "claude-opus-5-5"]),
        ]
    );
    assert_eq!(
        keys(&cost["members"][0]),
        ["cost_source", "cost_usd", "model", "name", "tokens"]
    );
}

/// summary.json's status document and task list.
fn the_summary_carries_the_status_document_and_the_tasks(s: &Value) {
    // The status document is `status --json`'s, as `status` prints it.
    assert_eq!(
        keys(&s["status"]),
        [
            "identity",
            "members",
            "misaddressed",
            "needs_human",
            "schema_version",
            "tasks",
            "team",
            "totals"
        ]
    );
    assert_eq!(s["status"]["totals"]["cost_usd"], s["cost"]["cost_usd"]);
    assert_eq!(s["status"]["totals"]["tokens"], s["cost"]["tokens"]);
    let lead = &s["status"]["members"][0];
    assert_eq!(
        (&lead["name"], &lead["cost_source"]),
        (&json!("team-lead"), &json!("computed"))
    );
    assert_eq!(lead["tokens"]["input"], 20);
    assert_eq!(s["status"]["team"]["lead_session_id"], SID);
    assert_eq!(s["status"]["tasks"]["completed"], 1);
    let tasks: Vec<&str> = s["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, ["1", "2"]);
    assert_eq!(s["tasks"][1]["blocked"], false);
}

/// summary.json's messages: every one, oldest first, each once, from wherever it is known.
fn the_summary_lists_every_message_once(s: &Value) {
    // Every message, oldest first, each once, from wherever it is known.
    let brief: Vec<Value> = s["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            json!([
                m["from"],
                m["to"],
                m["frame_type"],
                m["state"],
                m["sources"]
            ])
        })
        .collect();
    assert_eq!(
        brief,
        [
            json!(["team-lead", "worker", null, "delivered", ["transcript"]]),
            json!(["team-lead", "helper", null, "delivered", ["transcript"]]),
            json!(["worker", "team-lead", null, "delivered", ["transcript"]]),
            json!(["worker", "team-lead", null, "unread", ["inbox"]]),
            json!([
                "helper",
                "team-lead",
                "idle_notification",
                "read",
                ["inbox"]
            ]),
            json!(["user", "worker", null, "consumed", ["sent_log"]]),
        ]
    );
    let m = &s["messages"];
    assert_eq!(m[3]["text"], HOSTILE, "--json keeps the exact text");
    assert_eq!(m[5]["text"], Value::Null);
    assert_eq!(m[5]["summary"], "ping");
    assert_eq!(m[2]["text"], "REPORT 42");
    assert_eq!(m[2]["delivered_at"], "2026-11-29T09:55:00.000Z");
    assert_eq!(
        keys(&m[0]),
        [
            "at",
            "delivered_at",
            "frame_type",
            "from",
            "id",
            "kind",
            "sources",
            "state",
            "summary",
            "text",
            "to"
        ]
    );
}

/// summary.json's transcripts, every file's digest, and the warnings for what was not copied.
fn the_summary_names_transcripts_digests_and_what_it_could_not_copy(s: &Value, out: &Path) {
    let tr = &s["transcripts"];
    assert_eq!(tr[0]["member"], "team-lead");
    assert_eq!(tr[0]["kind"], "lead");
    assert_eq!(tr[0]["lines"], 4);
    assert_eq!(tr[1]["member"], "helper");
    assert_eq!(tr[1]["kind"], "in_process");
    assert_eq!(tr[2]["member"], "worker");
    assert_eq!(tr[2]["kind"], "pane");
    assert_eq!(tr[2]["session_id"], WORKER_SID);
    assert_eq!(tr[2]["lines"], 2);
    // Every file's digest.
    for f in s["files"].as_array().unwrap() {
        let bytes = fs::read(out.join(f["path"].as_str().unwrap())).unwrap();
        assert_eq!(f["sha256"], hex(&Sha256::digest(&bytes)));
        assert_eq!(f["bytes"], bytes.len());
    }
    // What could not be copied is said, and the symlink's target is nowhere.
    let warnings: Vec<&str> = s["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("helper.json is a symlink, which teamctl never follows"),
        "{warnings:?}"
    );
    assert!(
        warnings[1].contains("3.json is not valid JSON"),
        "{warnings:?}"
    );
    let three = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "tasks/3.json")
        .unwrap();
    assert_eq!(three["settled"], false);
    assert!(
        !fs::read_to_string(out.join("summary.json"))
            .unwrap()
            .contains("SECRET")
    );
}

/// report.md: safe Markdown with the result and each member's cost, and no secret.
fn the_report_is_markdown_without_secrets(out: &Path) {
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    check_markdown(&report);
    assert!(report.contains("FINAL ANSWER: 42"));
    assert!(!report.contains("SECRET"));
    // Each member's state and cost, and the team's.
    assert!(
        report.contains("10 / 5 / 0 / 0 | \\$0.0001 (computed) |"),
        "{report}"
    );
    assert!(
        report.contains("Team total: **\\$0.0006 (computed)**, tokens 40 / 20 / 0 / 0"),
        "{report}"
    );
}

/// The same record as an archive: one folder named after it, the same files.
fn the_archive_holds_the_same_files(env: &TestEnv, out: &Path) {
    let tgz = env.dir.path().join("rec.tar.gz");
    env.cmd()
        .args(["--team", "demo", "export", "--out", tgz.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("exported team demo to "));
    let mut names = Vec::new();
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(fs::File::open(&tgz).unwrap()));
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let name = e.path().unwrap().display().to_string();
        let mut bytes = Vec::new();
        e.read_to_end(&mut bytes).unwrap();
        let rel = name.strip_prefix("rec/").unwrap();
        if !["summary.json", "report.md", "report.html"].contains(&rel) {
            assert_eq!(bytes, fs::read(out.join(rel)).unwrap(), "{rel}");
        }
        names.push(rel.to_string());
    }
    names.sort();
    assert_eq!(names, tree(out));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every file under `dir` with its bytes (symlinks as their target).
pub(crate) fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                out.push((p.display().to_string(), Vec::new()));
                walk(&p, out);
            } else if m.file_type().is_symlink() {
                out.push((
                    p.display().to_string(),
                    fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                ));
            } else {
                out.push((p.display().to_string(), fs::read(&p).unwrap()));
            }
        }
    }
    walk(dir, &mut out);
    out.sort();
    out
}

/// The report is Markdown that teammate text did not break: no raw HTML, no control
/// characters, no link or image, only the headings the report makes, every table intact, and
/// each hostile text inside a code block.
pub(crate) fn check_markdown(md: &str) {
    assert!(
        !md.chars().any(|c| (c.is_control() && c != '\n')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
        "a raw control character in the report"
    );
    let mut headings = Vec::new();
    let mut heading: Option<String> = None;
    let mut in_code = false;
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match ev {
            Event::Html(h) | Event::InlineHtml(h) => panic!("raw HTML in the report: {h:?}"),
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                panic!("a link in the report: {dest_url}")
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => headings.push(heading.take().unwrap()),
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
                if !in_code {
                    assert!(!t.contains("not a heading") || t.contains('#'), "{t}");
                }
            }
            _ => {}
        }
    }
    for h in &headings {
        assert!(
            h.starts_with("Team record: ")
                || [
                    "Final answer",
                    "Members",
                    "Branches",
                    "Tasks",
                    "Restarts and resumes",
                    "Conversation",
                    "Transcripts",
                    "Warnings"
                ]
                .contains(&h.as_str())
                || h.starts_with("The lead's last answer"),
            "unexpected heading {h:?}"
        );
    }
}

#[test]
fn hostile_text_stays_inside_the_report() {
    let env = fixture();
    // Hostile names and subjects too, where a table cell or a heading shows them.
    env.edit_config("demo", |cfg| {
        cfg["members"][1]["agentType"] = "<img src=x onerror=alert(1)>|`x`".into();
    });
    let md = env
        .cmd()
        .args(["--team", "demo", "export", "--report-only"])
        .assert()
        .success()
        .stdout_text();
    check_markdown(&md);
    // The hostile text is shown inside a fenced block whose fence it cannot close.
    let blocks: Vec<String> = {
        let mut v = Vec::new();
        let mut cur: Option<String> = None;
        for ev in Parser::new_ext(&md, Options::ENABLE_TABLES) {
            match ev {
                Event::Start(Tag::CodeBlock(_)) => cur = Some(String::new()),
                Event::Text(t) if cur.is_some() => cur.as_mut().unwrap().push_str(&t),
                Event::End(TagEnd::CodeBlock) => v.push(cur.take().unwrap()),
                _ => {}
            }
        }
        v
    };
    let shown = blocks
        .iter()
        .find(|b| b.contains("<script>"))
        .expect("the hostile message in a code block");
    assert!(
        shown.contains("```\n# not a heading\n````\n| a | b |"),
        "{shown}"
    );
    assert!(
        shown.contains("\\u{1b}[2J")
            && shown.contains("\\u{202e}evil")
            && shown.contains("\\u{0}nul\\u{d}")
    );
    assert!(shown.contains("</teammate-message>\n<details>"));
    // Tables keep their columns: every row of the conversation has six cells.
    let rows = md
        .lines()
        .skip_while(|l| !l.starts_with("| # | Time"))
        .take_while(|l| l.starts_with('|'));
    for r in rows {
        let cells = r.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 7, "{r}");
    }
    // --report-only --json is summary.json itself.
    let s = run_json(&env, &["--team", "demo", "export", "--report-only"]);
    assert_eq!(s["schema_version"], 1);
    assert!(
        s["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["text"] == HOSTILE)
    );
    // Nothing was written.
    assert!(
        !fs::read_dir(env.dir.path()).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("record"))
    );
}
