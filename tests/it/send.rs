//! `teamctl send`.

use std::fs;
use std::io::Write;
use std::process::Stdio;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{NOW, Ran, SEND_KEYS, TestEnv, json, keys, read_entries};

#[test]
fn human_happy_path() {
    let env = TestEnv::example();
    env.cmd()
        .args(["send", "researcher", "Do not touch auth.ts"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("sent "))
        .stdout(predicate::str::contains("inboxes/researcher.json"));
    let entries = read_entries(&env.inbox("demo-team", "researcher"));
    assert_eq!(entries.len(), 3);
    let last = &entries[2];
    assert_eq!(last["from"], "user");
    assert_eq!(last["text"], "Do not touch auth.ts");
    assert_eq!(last["timestamp"], NOW);
}

#[test]
fn json_happy_path_exact_keys_and_entry_layout() {
    let env = TestEnv::example();
    let out = env
        .cmd()
        .args([
            "send",
            "tester",
            "Please rerun the login test\nand report",
            "--json",
        ])
        .args(["--from", "researcher"])
        .assert()
        .success()
        .stdout_bytes();
    let v = json(&out);
    assert_eq!(keys(&v), SEND_KEYS);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["team"], "demo-team");
    assert_eq!(v["to"], "tester");
    assert_eq!(v["written"], true);
    let inbox = env.inbox("demo-team", "tester");
    assert_eq!(v["inbox"], inbox.display().to_string());
    let id = v["id"].as_str().unwrap();
    assert_eq!(uuid_version(id), 4);
    // The entry: Claude Code's key order, sender colour from config.json, summary = first line.
    let msg = serde_json::to_string(&v["message"]).unwrap();
    assert_eq!(
        msg,
        format!(
            r#"{{"from":"researcher","text":"Please rerun the login test\nand report","summary":"Please rerun the login test","timestamp":"{NOW}","color":"blue","msgV":1,"msg_id":"{id}","type":"message","read":false}}"#
        )
    );
    // A new inbox is created; the file is exactly JSON.stringify([entry], null, 2).
    let want = format!(
        "[\n  {{\n    \"from\": \"researcher\",\n    \"text\": \"Please rerun the login test\\nand report\",\n    \"summary\": \"Please rerun the login test\",\n    \"timestamp\": \"{NOW}\",\n    \"color\": \"blue\",\n    \"msgV\": 1,\n    \"msg_id\": \"{id}\",\n    \"type\": \"message\",\n    \"read\": false\n  }}\n]"
    );
    assert_eq!(fs::read_to_string(&inbox).unwrap(), want);
}

fn uuid_version(id: &str) -> u32 {
    id.chars().nth(14).unwrap().to_digit(16).unwrap()
}

#[test]
fn byte_layout_matches_json_stringify_and_keeps_unknown_keys() {
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    // An entry with keys and numbers Claude Code may write that teamctl does not know.
    let mut entries = read_entries(&inbox);
    entries.insert(
        0,
        serde_json::from_str(
            r#"{"from":"team-lead","text":"é ✓ \u2028 \"q\" \\ \u0007","timestamp":"2025-11-29T19:30:00.000Z","lead_sig":"abc","extra":{"n":1e+21,"f":0.1,"z":[],"o":{}},"read":true}"#,
        )
        .unwrap(),
    );
    let before = teamctl::store::render(&entries);
    fs::write(&inbox, &before).unwrap();
    env.cmd()
        .args(["send", "researcher", "hello"])
        .assert()
        .success();
    let after = fs::read_to_string(&inbox).unwrap();
    // Everything before our entry is byte-identical.
    assert!(after.starts_with(&before[..before.len() - 2]), "{after}");
    if let Some(ok) = node_roundtrip(&after) {
        assert!(
            ok,
            "JSON.stringify(JSON.parse(file), null, 2) differs from the file"
        );
    }
    assert_eq!(read_entries(&inbox).len(), 4);
}

/// `JSON.stringify(JSON.parse(s), null, 2) === s`, by node (None when node is missing outside CI).
fn node_roundtrip(s: &str) -> Option<bool> {
    let script = "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>process.stdout.write(String(JSON.stringify(JSON.parse(s),null,2)===s)))";
    let child = std::process::Command::new("node")
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        assert!(std::env::var_os("CI").is_none(), "node is needed in CI");
        return None;
    };
    child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    Some(out.stdout == b"true")
}

#[test]
fn stdin_text_and_explicit_options() {
    let env = TestEnv::example();
    env.cmd()
        .args([
            "send",
            "tester",
            "--summary",
            "build log",
            "--color",
            "pink",
            "--json",
        ])
        .write_stdin("line one\nline two\n\n")
        .assert()
        .success();
    let last = read_entries(&env.inbox("demo-team", "tester"))
        .pop()
        .unwrap();
    assert_eq!(last["text"], "line one\nline two");
    assert_eq!(last["summary"], "build log");
    assert_eq!(last["color"], "pink");
    env.cmd()
        .args(["send", "tester", "-"])
        .write_stdin("dash\n")
        .assert()
        .success();
    assert_eq!(
        read_entries(&env.inbox("demo-team", "tester"))
            .pop()
            .unwrap()["text"],
        "dash"
    );
}

#[test]
fn all_sends_to_every_member_but_the_sender() {
    let env = TestEnv::example();
    let out = env
        .cmd()
        .args([
            "send",
            "--all",
            "stand-up in 5",
            "--from",
            "tester",
            "--json",
        ])
        .assert()
        .success()
        .stdout_bytes();
    let v = json(&out);
    assert_eq!(keys(&v), ["deliveries", "schema_version", "team"]);
    let to: Vec<&str> = v["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["to"].as_str().unwrap())
        .collect();
    assert_eq!(to, ["team-lead", "researcher"]);
    for d in v["deliveries"].as_array().unwrap() {
        assert_eq!(
            keys(d),
            ["delivery", "id", "inbox", "message", "to", "written"]
        );
    }
    assert!(!env.inbox("demo-team", "tester").exists());
}

#[test]
fn idempotency_key_gives_the_documented_id_and_writes_once() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    for written in [true, false] {
        let out = env
            .cmd()
            .args([
                "send",
                "alice",
                "nightly failed",
                "--idempotency-key",
                "job-42",
                "--json",
            ])
            .assert()
            .success()
            .stdout_bytes();
        let v = json(&out);
        assert_eq!(v["id"], "731a802a-49af-81e9-970b-02e51dd0f6e5");
        assert_eq!(v["written"], written);
    }
    assert_eq!(read_entries(&env.inbox("alpha", "alice")).len(), 1);
    env.cmd()
        .args(["send", "alice", "again", "--idempotency-key", "job-42"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("already sent 731a802a"));
}

#[test]
fn unknown_recipient_fails_with_a_suggestion_and_writes_nothing() {
    let env = TestEnv::example();
    env.cmd()
        .args(["send", "reseacher", "hi"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"))
        .stderr(predicate::str::contains("did you mean 'researcher'?"));
    assert!(!env.inbox("demo-team", "reseacher").exists());
    // --force writes anyway.
    env.cmd()
        .args(["send", "reseacher", "hi", "--force"])
        .assert()
        .success();
    assert_eq!(read_entries(&env.inbox("demo-team", "reseacher")).len(), 1);
}

#[test]
fn bad_names_are_usage_errors_before_any_file_is_touched() {
    let env = TestEnv::example();
    let snapshot = tree(&env);
    for to in ["..", "a/b", "al ice", "a@b", "", "x\u{1}"] {
        env.cmd()
            .args(["send", to, "hi", "--force"])
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("error: invalid member name"));
    }
    env.cmd()
        .args(["--team", "../x", "send", "researcher", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid team name"));
    env.cmd()
        .args(["send", "researcher", "hi", "--from", "a@b"])
        .assert()
        .code(2);
    assert_eq!(tree(&env), snapshot);
}

/// Every file under the config dir with its bytes.
fn tree(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    fn walk(d: &std::path::Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in fs::read_dir(d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                out.push((e.path().display().to_string(), Vec::new()));
                walk(&e.path(), out);
            } else {
                out.push((e.path().display().to_string(), fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(&env.root, &mut out);
    out.sort();
    out
}

#[test]
fn usage_errors() {
    let env = TestEnv::example();
    env.cmd().args(["send"]).assert().code(2);
    env.cmd()
        .args(["send", "researcher", "   "])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("empty"));
    env.cmd()
        .args(["send", "researcher", "x", "--color", "magenta"])
        .assert()
        .code(2);
    env.cmd()
        .args(["send", "--all", "researcher", "x"])
        .assert()
        .code(2);
    env.cmd()
        .args(["--lock-timeout", "soon", "send", "researcher", "x"])
        .assert()
        .code(2);
    // Frames only Claude Code may write.
    env.cmd()
        .args([
            "send",
            "researcher",
            r#"{"type":"idle_notification","from":"x"}"#,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("idle_notification"));
}

#[test]
fn corrupt_and_non_array_inboxes_are_left_byte_for_byte() {
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    for bad in [
        &b"[{\"from\": \"x\", "[..],
        b"{\"messages\": []}",
        b"[1, 2]",
        b"\xff\xfe",
    ] {
        fs::write(&inbox, bad).unwrap();
        env.cmd()
            .args(["send", "researcher", "hi"])
            .assert()
            .code(1)
            .stderr(predicate::str::starts_with("error:"))
            .stderr(predicate::str::contains("left unchanged"));
        assert_eq!(fs::read(&inbox).unwrap(), bad);
        let leftovers: Vec<_> = fs::read_dir(inbox.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp.") || n.ends_with(".lock"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn missing_team_and_deleted_session_team() {
    let env = TestEnv::example();
    env.cmd()
        .args(["--team", "nope", "send", "researcher", "hi"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("team 'nope' not found"))
        .stderr(predicate::str::contains("demo-team"));
    assert!(!env.root.join("teams/nope").exists());
    // A session team whose config.json is gone counts as deleted: never written to.
    let inboxes = env.root.join("teams/session-1a2b3c4d/inboxes");
    fs::create_dir_all(&inboxes).unwrap();
    env.cmd()
        .args([
            "--team",
            "session-1a2b3c4d",
            "send",
            "worker",
            "hi",
            "--force",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("deleted"));
    assert_eq!(fs::read_dir(&inboxes).unwrap().count(), 0);
}

#[test]
fn team_resolution_needs_a_choice_when_ambiguous() {
    let env = TestEnv::example();
    env.team("other", &[("bob", None)]);
    env.cmd()
        .args(["send", "bob", "hi"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "several teams found (demo-team, other)",
        ));
    env.cmd()
        .env("TEAMCTL_TEAM", "other")
        .args(["send", "bob", "hi"])
        .assert()
        .success();
}

#[test]
fn protocol_frames_get_no_summary() {
    let env = TestEnv::example();
    let frame = r#"{"type":"shutdown_request","requestId":"shutdown-1@tester","from":"ops","timestamp":"2026-11-29T10:00:00.000Z"}"#;
    env.cmd().args(["send", "tester", frame]).assert().success();
    let last = read_entries(&env.inbox("demo-team", "tester"))
        .pop()
        .unwrap();
    assert_eq!(last.get("summary"), None::<&Value>);
    assert_eq!(last["text"], frame);
}

/// Sending as someone the recipient cannot answer (the default `user`, or a non-member) works,
/// and says so on stderr, with the same reason `status` gives; a member gets no hint.
#[test]
fn a_sender_teammates_cannot_answer_gets_a_hint() {
    let env = TestEnv::example();
    let out = env
        .cmd()
        .args(["send", "researcher", "hello"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hint: teammates cannot answer you: 'user' is reserved by Claude Code"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("sent "));

    let out = env
        .cmd()
        .args([
            "--json",
            "send",
            "researcher",
            "hello",
            "--from",
            "outsider",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'outsider' is not a member of config.json"),
        "{err}"
    );
    json(&out.stdout);

    let out = env
        .cmd()
        .args(["send", "researcher", "hello", "--from", "tester"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// `send` refuses the frames only Claude Code may write however a parser reads them: texts
/// serde_json refuses and `JSON.parse` (Claude Code's reader) takes as frames, a lone
/// surrogate in one and one nested 200 deep (issue 45), and one whose `type` is escaped or
/// given twice. Exit 2, the inbox as it was. A frame teamctl's users write on purpose still
/// goes, and as a frame (no summary).
#[test]
fn frames_only_claude_code_writes_are_refused_whatever_parser_reads_them() {
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    let before = fs::read(&inbox).unwrap();
    for (text, kind) in [
        (
            r#"{"type":"idle_notification","from":"x","note":"\ud800"}"#.to_string(),
            "idle_notification",
        ),
        (
            format!(
                r#"{{"type":"task_assignment","taskId":"1","x":{}{}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            ),
            "task_assignment",
        ),
        (
            r#"{"t\u0079pe":"teammate_terminated"}"#.to_string(),
            "teammate_terminated",
        ),
        (
            r#"{"type":"note","type":"shutdown_rejected"}"#.to_string(),
            "shutdown_rejected",
        ),
    ] {
        env.cmd()
            .args(["send", "researcher", &text])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(kind));
        assert_eq!(fs::read(&inbox).unwrap(), before, "{text}");
    }
    let lone_request = r#"{"type":"shutdown_request","requestId":"shutdown-1@researcher","from":"team-lead","reason":"\ud800"}"#;
    env.cmd()
        .args([
            "send",
            "researcher",
            lone_request,
            "--from",
            "ops",
            "--join",
        ])
        .assert()
        .success();
    let last = read_entries(&inbox).pop().unwrap();
    assert_eq!(last["text"], lone_request);
    assert!(last.get("summary").is_none(), "{last}");
}

/// Whether `JSON.parse` (node's) gives an object with a string `type`, and that type (made
/// well formed), for each text; None when node is missing outside CI.
fn node_frame_types(texts: &[String]) -> Option<Vec<Option<String>>> {
    let script = "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{\
        const out=JSON.parse(s).map(t=>{try{const v=JSON.parse(t);\
        return v!==null&&typeof v==='object'&&!Array.isArray(v)&&typeof v.type==='string'\
        ?v.type.toWellFormed():null}catch{return null}});\
        process.stdout.write(JSON.stringify(out))})";
    let child = std::process::Command::new("node")
        .args(["-e", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn();
    let Ok(mut child) = child else {
        assert!(std::env::var_os("CI").is_none(), "node is needed in CI");
        return None;
    };
    let input = serde_json::to_string(texts).unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// teamctl's one rule for "is this text a frame" (`team::model::frame_type`) reads what
/// node's `JSON.parse` reads, on the texts where serde_json parts ways with it (issue 45) and
/// the corners of JSON's grammar around them.
#[test]
fn a_frame_is_what_node_json_parse_reads_as_one() {
    let t = |s: &str| s.to_string();
    let mut texts = vec![
        t(r#"{"type":"permission_response","request_id":"x","note":"\ud800"}"#),
        t(r#"{"type":"\ud800"}"#),
        t(r#"{"type":"x","s":"\udc00\ud800"}"#),
        t(r#"{"\ud800":1,"type":"x"}"#),
        t(r#"{"type":"\ud83d\ude00"}"#),
        t(r#"{"t\u0079pe":"idle_\u006eotification"}"#),
        t(r#"{"type":1,"type":"task_assignment"}"#),
        t(r#"{"type":"task_assignment","type":1}"#),
        t(r#"{"type":"x","n":1e400,"m":-0.5E-7,"b":123456789012345678901234567890}"#),
        t(r#"{"type":"x","n":01}"#),
        t(r#"{"type":"x","n":-}"#),
        t(r#"{"type":"x","n":1.}"#),
        t(" \t\r\n{\"type\" : \"x\"} \n"),
        t("\u{feff}{\"type\":\"x\"}"),
        t("\u{a0}{\"type\":\"x\"}"),
        t("{\"type\":\"x\"}\u{2028}"),
        t("{\"type\":\"x\",\"s\":\"a\u{2028}b\"}"),
        t("{\"type\":\"x\u{1}\"}"),
        t(r#"{"type":"x","s":"\x"}"#),
        t(r#"{"type":"x","s":"\u00"}"#),
        t(r#"{"type":"x",}"#),
        t(r#"{"type":"x"} {}"#),
        t(r#"{"type":"x""#),
        t(r#"{"type":"x","t":true,"f":false,"z":null,"a":{"b":[[],{}]}}"#),
        t(r#"[{"type":"x"}]"#),
        t(r#""{\"type\":\"x\"}""#),
        t(r#"{"type":null}"#),
        t(r#"{"type":{"type":"x"}}"#),
        t(r#"{"kind":"x"}"#),
        t("{not json} \"type\": fine"),
        t("plain words"),
    ];
    for depth in [127, 128, 129, 200, 10_000] {
        texts.push(format!(
            r#"{{"type":"idle_notification","a":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ));
    }
    let Some(node) = node_frame_types(&texts) else {
        return;
    };
    for (text, theirs) in texts.iter().zip(node) {
        let ours = teamctl::team::model::frame_type(text);
        assert_eq!(
            ours,
            theirs,
            "{}",
            text.chars().take(80).collect::<String>()
        );
    }
}
