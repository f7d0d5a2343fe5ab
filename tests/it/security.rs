//! Hostile text and shared machines. Hostile text in a team's files (escape sequences, OSC 52,
//! bidi, C1, CR, newlines that start CI workflow commands, very long names, invalid UTF-8) goes
//! through every human output and reaches neither stdout nor stderr raw; `--json` keeps it
//! exactly. Replaced files keep their modes, the sent log is private, nobody writes as the lead
//! by accident, and a symlink never redirects a write.

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::common::{NOW, TestEnv, json as parse};

/// Clears the screen, paints, writes the clipboard (OSC 52), reverses the text, sends a C1 CSI,
/// overwrites the line and starts a GitHub workflow command on a new line.
const EVIL: &str = "PWN\u{1b}[2J\u{1b}[31mred\u{1b}]52;c;aGVsbG8=\u{7}\u{202e}txt.exe\u{2066}\u{9b}31m\u{7f}\rOVER\t\u{0}\n::error::PWN\n##[error]PWN\u{2028}x team-lead\u{200b}\u{200d}\u{2060}\u{feff}\u{e0041}\u{ad}";

/// Every string planted in the files starts with a workflow command (`::tag::`), and each of
/// its newlines is followed by `::` or `##`: a line of output that starts (after spaces, which
/// CI runners strip) with one of those began with attacker text.
fn evil(tag: &str) -> String {
    format!("::{tag}::{EVIL}")
}

const REQUEST: &str = "perm-PWN\u{1b}[2J\n::error::PWN";

struct Corpus {
    env: TestEnv,
    data: PathBuf,
    long_name: String,
}

fn entry(from: &str, text: &str, id: &str) -> Value {
    json!({"from": from, "text": text, "timestamp": NOW, "summary": evil("summary"),
           "color": evil("color"), "msgV": 1, "msg_id": id, "type": "message", "read": false})
}

fn corpus() -> Corpus {
    let env = TestEnv::new();
    let team = env.root.join("teams/evil");
    fs::create_dir_all(team.join("inboxes")).unwrap();
    let long_name = format!("::long::{}", "x".repeat(5000));
    let member = |name: &str| {
        json!({"agentId": evil("agent"), "name": name, "agentType": evil("type"),
               "color": evil("color"), "backendType": evil("backend"), "joinedAt": 1,
               "tmuxPaneId": "", "cwd": "/tmp", "subscriptions": []})
    };
    let cfg = json!({
        "name": "evil",
        "description": evil("description"),
        "createdAt": 1764444600000u64,
        "leadAgentId": evil("lead"),
        "leadSessionId": evil("session"),
        "members": [
            {"agentId": "team-lead@evil", "name": "team-lead", "joinedAt": 1, "tmuxPaneId": "",
             "cwd": "/tmp", "subscriptions": []},
            member("worker"),
            member(&evil("member")),
            member(&format!("::error::PWN{EVIL}")),
            member(&long_name),
        ],
        "teamctl": {"leads": true, "version": "0.1.0", "launch": "none", "tmuxSession": null}
    });
    fs::write(
        team.join("config.json"),
        serde_json::to_string_pretty(&cfg).unwrap(),
    )
    .unwrap();

    let perm = json!({"type": "permission_request", "request_id": REQUEST, "agent_id": "worker",
        "tool_name": evil("tool"), "tool_use_id": evil("tooluse"), "description": evil("desc"),
        "input": {"command": evil("input")}, "permission_suggestions": []});
    let perm2 = json!({"type": "permission_request", "request_id": evil("request"),
        "agent_id": evil("agent"), "tool_name": evil("tool"), "tool_use_id": "t",
        "description": evil("desc"), "input": {}, "permission_suggestions": []});
    let plan = json!({"type": "plan_approval_request", "from": "worker", "timestamp": NOW,
        "planFilePath": evil("planfile"), "planContent": evil("plan"),
        "requestId": evil("plan-request")});
    let sandbox = json!({"type": "sandbox_permission_request", "requestId": evil("sandbox"),
        "workerId": "worker@evil", "workerName": "worker", "workerColor": "green",
        "hostPattern": {"host": evil("host")}, "createdAt": 1795946370000u64});
    let rejected = json!({"type": "shutdown_rejected", "requestId": "shutdown-1795946400000@worker",
        "from": "worker", "reason": evil("reason"), "timestamp": NOW});
    let lead = json!([
        entry("worker", &perm.to_string(), &evil("id1")),
        entry(&evil("from"), &perm2.to_string(), &evil("id2")),
        entry("worker", &plan.to_string(), &format!("::error::{EVIL}")),
        entry("worker", &sandbox.to_string(), "id-4"),
        entry(&evil("from"), &evil("text"), "id-5"),
        entry("worker", &rejected.to_string(), "id-6"),
        entry(&long_name, &"long ".repeat(2000), "id-7"),
        {"from": evil("from"), "text": evil("text"), "timestamp": evil("timestamp")},
    ]);
    fs::write(
        team.join("inboxes/team-lead.json"),
        serde_json::to_string_pretty(&lead).unwrap(),
    )
    .unwrap();
    fs::write(team.join("inboxes/worker.json"), "[]").unwrap();
    // A misspelt name's inbox (Claude Code up to 2.1.178 makes one): status, doctor, redeliver.
    let misspelt = json!([entry(&evil("from"), &evil("text"), &evil("id8"))]);
    fs::write(team.join("inboxes/workr.json"), misspelt.to_string()).unwrap();
    // Invalid UTF-8 inside a string: the whole inbox does not parse.
    fs::write(
        team.join("inboxes/broken.json"),
        b"[{\"from\":\"a\",\"text\":\"\xff\xfe\xc2\x9b2J\",\"timestamp\":\"x\"}]",
    )
    .unwrap();

    let tasks = env.root.join("tasks/evil");
    fs::create_dir_all(&tasks).unwrap();
    let task = json!({"id": "1", "subject": evil("subject"), "description": evil("description"),
        "activeForm": evil("active"), "status": "in_progress", "owner": evil("owner"),
        "blocks": ["2"], "blockedBy": [evil("blocker")], "metadata": {"k": evil("metadata")}});
    fs::write(
        tasks.join("1.json"),
        serde_json::to_string_pretty(&task).unwrap(),
    )
    .unwrap();
    let task2 = json!({"id": "2", "subject": evil("subject2"), "description": "d",
        "status": "pending", "blocks": [], "blockedBy": ["1"]});
    fs::write(
        tasks.join("2.json"),
        serde_json::to_string_pretty(&task2).unwrap(),
    )
    .unwrap();
    let task3 = json!({"id": "3", "subject": "s", "description": "d",
        "status": evil("status"), "blocks": [], "blockedBy": []});
    fs::write(tasks.join("3.json"), task3.to_string()).unwrap();
    fs::write(
        tasks.join("4.json"),
        b"{\"id\":\"4\",\"subject\":\"\xff\x1b[2J\",\"status\":\"pending\"}",
    )
    .unwrap();
    // A file name is text from the file system: control characters and a newline in it.
    fs::write(tasks.join("\u{1b}[2J\n::error::PWN\u{9b}.json"), "{").unwrap();

    let data = env.dir.path().join("data");
    fs::create_dir_all(&data).unwrap();
    let sent = json!({"id": evil("sent-id"), "team": "evil", "to": evil("to"),
        "from": evil("from"), "at": evil("at"), "summary": evil("summary"),
        "inbox": evil("inbox"), "idempotency_key": evil("key"), "answers": null});
    fs::write(data.join("sent.jsonl"), format!("{sent}\n")).unwrap();
    // teamctl leads this team (its private record, as `create` writes it).
    env.record_lead_in("evil", &data);
    Corpus {
        env,
        data,
        long_name,
    }
}

/// No control character reaches the terminal, and no line starts with attacker text.
fn assert_clean(what: &str, stream: &str, bytes: &[u8]) {
    let text = assert_no_controls(what, stream, bytes);
    for line in text.lines() {
        let t = line.trim_start();
        assert!(
            !(t.starts_with("::") || t.starts_with("##")),
            "{what}: a {stream} line starts with attacker text: {line}"
        );
    }
}

/// Not one byte of 0x00-0x1f except newlines, 0x7f, or a C1, bidi or separator code point.
fn assert_no_controls(what: &str, stream: &str, bytes: &[u8]) -> String {
    for (i, b) in bytes.iter().enumerate() {
        assert!(
            *b == b'\n' || (*b >= 0x20 && *b != 0x7f),
            "{what}: {stream} byte {i} is 0x{b:02x}: {}",
            String::from_utf8_lossy(bytes)
        );
    }
    let text = String::from_utf8(bytes.to_vec())
        .unwrap_or_else(|_| panic!("{what}: {stream} is not UTF-8"));
    for c in text.chars() {
        // Controls, bidi, separators, and what draws nothing (zero-width, word joiner, BOM,
        // tags, soft hyphen).
        let bad = matches!(c, '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}' | '\u{200b}'..='\u{200f}'
            | '\u{2060}'..='\u{2064}' | '\u{feff}' | '\u{e0000}'..='\u{e007f}' | '\u{ad}');
        assert!(!bad, "{what}: {stream} carries U+{:04X}: {text}", c as u32);
    }
    text
}

fn run(c: &Corpus, args: &[&str]) -> (Option<i32>, String) {
    let out = c
        .env
        .cmd()
        .env("TEAMCTL_DATA_DIR", &c.data)
        .args(args)
        .output()
        .unwrap();
    let what = args.join(" ");
    assert_clean(&what, "stdout", &out.stdout);
    assert_clean(&what, "stderr", &out.stderr);
    assert!(
        !out.stdout.is_empty() || !out.stderr.is_empty(),
        "{what}: printed nothing"
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), all)
}

#[test]
fn every_human_output_is_neutralised() {
    let c = corpus();
    let reads: &[&[&str]] = &[
        &["inbox"],
        &["inbox", "--all"],
        &["inbox", "worker"],
        &["inbox", "--sent"],
        &["tasks"],
        &["tasks", "--all"],
        &["tasks", "show", "1"],
        &["tasks", "show", "2"],
        &["tasks", "show", "3"],
        &["tasks", "show", "4"],
        &["status"],
        &["status", "--all-teams"],
        &["pending"],
        &["watch", "--existing", "--timeout", "10ms"],
        &["watch", "--existing", "--poll", "5", "--timeout", "10ms"],
        &["doctor"],
        &["wait", "--tasks-done", "--timeout", "10ms"],
        &["wait", "--task", "1", "--timeout", "10ms"],
        &["wait", "--idle", "worker", "--timeout", "10ms"],
        &[
            "ask",
            "--join",
            "--from",
            "ops",
            "worker",
            "hi?",
            "--timeout",
            "10ms",
        ],
        &["redeliver", "workr", "--dry-run"],
        &["redeliver", "workr"],
        &["tasks", "claim", "1"],
        &["tasks", "update", "1", "--status", "completed"],
        &["tasks", "done", "2"],
    ];
    for args in reads {
        let (code, all) = run(&c, args);
        assert!(code.is_some(), "{args:?} was killed");
        // The hostile text is shown, made visible, not dropped.
        if args[0] == "inbox" && args.len() == 1 {
            assert!(all.contains("\\e[2J"), "{all}");
        }
    }
    let (_, all) = run(&c, &["tasks", "show", "1"]);
    assert!(
        all.contains("  | ::error::PWN"),
        "the description keeps its lines behind a prefix: {all}"
    );
    assert!(all.contains("\\u{202e}txt.exe"), "{all}");
    let (_, status) = run(&c, &["status"]);
    assert!(status.contains("\"::error::PWN"), "quoted lead: {status}");
    assert!(status.contains(&c.long_name), "long names are shown whole");
}

/// Lines a CI runner reads as commands, after the white space it strips: GitHub Actions'
/// `::cmd::` and `##[cmd]`, Azure Pipelines' `##vso[`. (Markdown's own `## ` headings are
/// teamctl's.)
fn ci_command(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("::") || t.starts_with("##[") || t.to_ascii_lowercase().starts_with("##vso[")
}

/// Markdown output: no control character but a tab (a code block keeps a message's tabs), and
/// no line a CI runner would act on.
fn assert_markdown_clean(what: &str, bytes: &[u8]) -> String {
    let no_tabs: Vec<u8> = bytes.iter().copied().filter(|b| *b != b'\t').collect();
    assert_no_controls(what, "stdout", &no_tabs);
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    for line in text.lines() {
        assert!(!ci_command(line), "{what}: a line is a CI command: {line}");
    }
    text
}

/// A teammate's lines that are workflow commands: one masks a value in the rest of the log,
/// one stops command processing (so that a later `::error::` of the job is lost), one is an
/// annotation, one sets a variable on Azure.
const COMMANDS: &str = "::add-mask::x\n::stop-commands::tok\n  ::error::PWN\n##[error]PWN\n\
                        ##vso[task.setvariable variable=x]y";

/// Printed into a GitHub Actions log (`export --report-only`, `report`, `cat report.md`), or
/// by any other human output, no line begins with text from a teammate that the runner would
/// read as a workflow command: Markdown shows the line with its first character escaped, the
/// terminal behind a prefix.
#[test]
fn no_output_line_is_a_ci_command_from_a_teammate() {
    let c = corpus();
    let inbox = c.env.inbox("evil", "team-lead");
    let mut lead: Vec<Value> = serde_json::from_slice(&fs::read(&inbox).unwrap()).unwrap();
    lead.push(entry("worker", COMMANDS, "id-8"));
    fs::write(&inbox, serde_json::to_string_pretty(&lead).unwrap()).unwrap();
    // The worker's transcript says it too (`log`, `status`'s last activity).
    let said = crate::common::assistant_entry(
        "m1",
        NOW,
        json!([{"type": "text", "text": COMMANDS},
               {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": COMMANDS}}]),
        "tool_use",
        (1, 1),
    );
    let mut said = said;
    said["teamName"] = "evil".into();
    said["agentName"] = "worker".into();
    said["sessionId"] = "s-worker".into();
    let proj = c.env.root.join("projects/-tmp");
    fs::create_dir_all(&proj).unwrap();
    fs::write(proj.join("s-worker.jsonl"), format!("{said}\n")).unwrap();

    let out = c
        .env
        .cmd()
        .env("TEAMCTL_DATA_DIR", &c.data)
        .args(["export", "--report-only"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let md = assert_markdown_clean("export --report-only", &out.stdout);
    assert!(md.contains("\n\\u{3a}:add-mask::x\n"), "{md}");
    assert!(md.contains("\n  \\u{3a}:error::PWN\n"), "{md}");
    assert!(md.contains("\n\\u{23}#vso[task.setvariable"), "{md}");
    assert_clean("export --report-only", "stderr", &out.stderr);

    // The record's report.md, and `report` over the record (with an answer and a reason that
    // say the same).
    let rec = c.env.dir.path().join("rec");
    let out = c
        .env
        .cmd()
        .env("TEAMCTL_DATA_DIR", &c.data)
        .args(["export", "--out", rec.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_markdown_clean("report.md", &fs::read(rec.join("report.md")).unwrap());
    let path = rec.join("summary.json");
    let mut s: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    s["result"] = COMMANDS.into();
    s["run"] = json!({"name": evil("run"), "state": evil("state"), "reason": COMMANDS,
                      "elapsed_ms": 1});
    fs::write(&path, s.to_string()).unwrap();
    let out = c.env.cmd().arg("report").arg(&rec).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let md = assert_markdown_clean("report", &out.stdout);
    assert!(md.contains("\n\\u{3a}:stop-commands::tok\n"), "{md}");
    assert_clean("report", "stderr", &out.stderr);

    // Every other human output: no line begins with a teammate's text at all.
    for args in [
        &["inbox"][..],
        &["inbox", "--all"],
        &["log", "worker"],
        &["status"],
        &["tasks", "show", "1"],
        &["top", "--once"],
    ] {
        // `inbox --all` also meets the inbox that does not parse: exit 1, after the others.
        let (code, all) = run(&c, args);
        assert!(matches!(code, Some(0 | 1)), "{args:?}: {all}");
    }
}

#[test]
fn answers_and_echoes_are_neutralised() {
    let c = corpus();
    let (code, all) = run(&c, &["approve", REQUEST]);
    assert_eq!(code, Some(0), "{all}");
    assert!(
        all.contains("approved perm-PWN\\e[2J\\n::error::PWN from worker"),
        "{all}"
    );
    // Already answered: the error quotes the id, neutralised.
    let (code, _) = run(&c, &["deny", REQUEST, "--reason", "no"]);
    assert_eq!(code, Some(1));
    let (code, all) = run(&c, &["shutdown", "worker", "--wait=1s"]);
    assert_eq!(code, Some(1), "{all}");
    assert!(
        all.contains("worker rejected: ::reason::PWN\\e[2J"),
        "{all}"
    );
    let (code, _) = run(&c, &["send", "worker", "hi"]);
    assert_eq!(code, Some(0));
    // delete names each teammate (one with a newline in its name) and removes the team.
    let (code, all) = run(&c, &["delete", "evil", "--timeout", "10ms"]);
    assert_eq!(code, Some(0), "{all}");
    assert!(all.contains("deleted team evil"), "{all}");
}

#[test]
fn json_keeps_every_byte() {
    let c = corpus();
    // The exact text, and still nothing raw for a terminal: JSON escapes C0, teamctl also
    // writes DEL, C1 and bidi controls as \uXXXX.
    let json = |args: &[&str]| {
        let out = c
            .env
            .cmd()
            .env("TEAMCTL_DATA_DIR", &c.data)
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert_no_controls(&args.join(" "), "stdout", &out.stdout);
        assert_no_controls(&args.join(" "), "stderr", &out.stderr);
        parse(&out.stdout)
    };
    let file: Value =
        serde_json::from_slice(&fs::read(c.env.inbox("evil", "team-lead")).unwrap()).unwrap();
    let v = json(&["inbox"]);
    let messages = v["messages"].as_array().unwrap();
    assert_eq!(messages.len(), file.as_array().unwrap().len());
    for (m, e) in messages.iter().zip(file.as_array().unwrap()) {
        assert_eq!(m["text"], e["text"]);
        assert_eq!(m["from"], e["from"]);
        assert_eq!(
            m["summary"],
            e.get("summary").cloned().unwrap_or(Value::Null)
        );
    }
    let t = json(&["tasks", "show", "1"]);
    assert_eq!(t["task"]["subject"], evil("subject"));
    assert_eq!(t["task"]["description"], evil("description"));
    assert_eq!(t["task"]["owner"], evil("owner"));
    let s = json(&["status"]);
    assert_eq!(s["team"]["description"], evil("description"));
    let p = json(&["pending"]);
    let ids: Vec<&str> = p["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["request_id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&REQUEST), "{ids:?}");
    let sent = json(&["inbox", "--sent"]);
    assert_eq!(sent["sent"][0]["summary"], evil("summary"));
    let t = json(&["tasks"]);
    assert_eq!(t["tasks"][0]["subject"], evil("subject"));
    json(&["doctor"]);
    let out = c
        .env
        .cmd()
        .args(["watch", "--existing", "--timeout", "10ms", "--json"])
        .output()
        .unwrap();
    let text = assert_no_controls("watch --json", "stdout", &out.stdout);
    let events = crate::common::json_lines(text.as_bytes());
    assert!(events.iter().any(|e| e["message"]["text"] == evil("text")));
}

/// A teammate's pane is text from outside too: `create` shows the last lines of a pane that
/// died, and the version `claude --version` printed.
#[test]
fn create_shows_pane_captures_and_versions_neutralised() {
    use std::os::unix::fs::PermissionsExt;
    let Some((env, _server)) = crate::common::tmux_env() else {
        return;
    };
    let bad = env.dir.path().join("evil-claude");
    // printf turns the octal escapes into ESC, BEL, the UTF-8 of U+202E and U+009B.
    fs::write(
        &bad,
        "#!/bin/sh\n\
         [ \"$1\" = --version ] && { printf '1.0 \\033]52;c;aGk=\\007\\342\\200\\256\\n::error::PWN\\n'; exit 0; }\n\
         printf '\\342\\200\\256evil\\302\\233\\n::error::PWN pane\\n##[error]PWN\\n'\n\
         exit 3\n",
    )
    .unwrap();
    fs::set_permissions(&bad, fs::Permissions::from_mode(0o755)).unwrap();
    // tmux 3.3 at times marks a pane that dies this fast dead before it draws what the pane
    // printed (its capture is then tmux's own "Pane is dead" line alone): a few teams are tried
    // for one whose pane kept its text; every attempt's output must be clean.
    let mut err = String::new();
    for attempt in 0..3 {
        let name = format!("bad{attempt}");
        let out = env
            .cmd()
            .args(["create", &name, "--member", "alice:hi", "--timeout", "20s"])
            .env("TEAMCTL_CLAUDE_BIN", &bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_clean("create", "stdout", &out.stdout);
        assert_clean("create", "stderr", &out.stderr);
        err = String::from_utf8_lossy(&out.stderr).into_owned();
        if err.contains("  | ::error::PWN pane") {
            return;
        }
    }
    panic!("no attempt showed the pane's last lines: {err}");
}

fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn chmod(p: &std::path::Path, m: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
}

/// `teamctl ARGS` under `umask`, through sh (a Command cannot set the child's umask).
fn with_umask(env: &TestEnv, umask: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = env.std_cmd();
    let program = cmd.get_program().to_owned();
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(program)
        .args(args);
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        sh.current_dir(d);
    }
    cmd = sh;
    cmd.output().unwrap()
}

#[test]
fn replaced_files_keep_their_modes() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let inbox = env.inbox("alpha", "alice");
    fs::write(&inbox, "[]").unwrap();
    chmod(&inbox, 0o600);
    env.cmd().args(["send", "alice", "hi"]).assert().success();
    assert_eq!(mode(&inbox), 0o600, "a private inbox stays private");
    // Exact bits, not masked by the umask: 0640 stays 0640 under umask 077.
    chmod(&inbox, 0o640);
    let out = with_umask(&env, "077", &["send", "alice", "again"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mode(&inbox), 0o640);
    assert_eq!(crate::common::read_entries(&inbox).len(), 2);

    // config.json, rewritten by --join.
    let cfg = env.root.join("teams/alpha/config.json");
    chmod(&cfg, 0o600);
    env.cmd()
        .args(["send", "--join", "--from", "ops", "alice", "hello"])
        .assert()
        .success();
    assert_eq!(mode(&cfg), 0o600);
    let joined: Value = serde_json::from_slice(&fs::read(&cfg).unwrap()).unwrap();
    assert!(joined["members"].to_string().contains("\"ops\""));

    // A task file, rewritten by update.
    env.cmd()
        .args(["tasks", "add", "Fix it"])
        .assert()
        .success();
    let task = env.root.join("tasks/alpha/1.json");
    chmod(&task, 0o600);
    env.cmd()
        .args(["tasks", "update", "1", "--status", "in_progress"])
        .assert()
        .success();
    assert_eq!(mode(&task), 0o600);
    assert!(fs::read_to_string(&task).unwrap().contains("in_progress"));
}

#[test]
fn new_files_are_created_as_claude_code_creates_them() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let out = with_umask(&env, "027", &["send", "alice", "hi"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mode(&env.inbox("alpha", "alice")), 0o640, "0666 & ~umask");
    let out = with_umask(&env, "022", &["tasks", "add", "Fix it"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mode(&env.root.join("tasks/alpha/1.json")), 0o644);
}

#[test]
fn a_replaced_file_keeps_its_owner_where_permitted() {
    use std::os::unix::fs::MetadataExt;
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let inbox = env.inbox("alpha", "alice");
    fs::write(&inbox, "[]").unwrap();
    if fs::metadata(&inbox).unwrap().uid() != 0 {
        // Only root may give a file away: the EPERM path is the one every other run takes.
        env.cmd().args(["send", "alice", "hi"]).assert().success();
        return;
    }
    std::os::unix::fs::chown(&inbox, Some(4321), Some(4321)).unwrap();
    chmod(&inbox, 0o660);
    env.cmd().args(["send", "alice", "hi"]).assert().success();
    let m = fs::metadata(&inbox).unwrap();
    assert_eq!((m.uid(), m.gid(), mode(&inbox)), (4321, 4321, 0o660));
}

#[test]
fn the_sent_log_is_private() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let data = env.dir.path().join("data/teamctl");
    fs::create_dir_all(&data).unwrap();
    chmod(&data, 0o755);
    let log = data.join("sent.jsonl");
    fs::write(&log, "").unwrap();
    chmod(&log, 0o644);
    env.cmd()
        .env("TEAMCTL_DATA_DIR", &data)
        .args(["send", "alice", "hi"])
        .assert()
        .success();
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&log), 0o600);
    // A fresh one, in the default place (XDG_DATA_HOME/teamctl).
    env.cmd().args(["send", "alice", "hi"]).assert().success();
    let fresh = env.dir.path().join("home/.local/share/teamctl");
    assert_eq!(mode(&fresh), 0o700);
    assert_eq!(mode(&fresh.join("sent.jsonl")), 0o600);
    assert_eq!(mode(&env.dir.path().join("home/.local/share")), 0o755);
}

/// A record is no more readable than what it copies (inboxes, transcripts, the sent log):
/// under a umask of 022 its folders are 0700, its files 0600, an archive 0600 and the files in
/// it mode 0600. An existing `--out` is refused whatever it is, an empty folder too, and left
/// as it was.
#[test]
fn a_record_is_as_private_as_its_sources() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    fs::write(env.inbox("alpha", "alice"), "[]").unwrap();
    let rec = env.dir.path().join("rec");
    let out = with_umask(&env, "022", &["export", "--out", rec.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let mut seen = 0;
    let mut todo = vec![rec.clone()];
    while let Some(dir) = todo.pop() {
        assert_eq!(mode(&dir), 0o700, "{}", dir.display());
        for e in fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                assert_eq!(mode(&p), 0o600, "{}", p.display());
                seen += 1;
            }
        }
    }
    assert!(seen >= 3, "summary.json, report.md and the team's files");
    let tgz = env.dir.path().join("rec.tar.gz");
    let out = with_umask(&env, "022", &["export", "--out", tgz.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(mode(&tgz), 0o600);
    let gz = flate2::read::GzDecoder::new(fs::File::open(&tgz).unwrap());
    for e in tar::Archive::new(gz).entries().unwrap() {
        assert_eq!(e.unwrap().header().mode().unwrap(), 0o600);
    }
    // An existing empty folder is not replaced (it kept its 0700 before; it keeps it now).
    let empty = env.dir.path().join("empty");
    fs::create_dir(&empty).unwrap();
    chmod(&empty, 0o700);
    let out = with_umask(&env, "022", &["export", "--out", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ")
            && err.contains("already exists; give a path that does not exist yet"),
        "{err}"
    );
    assert_eq!(mode(&empty), 0o700);
    assert_eq!(fs::read_dir(&empty).unwrap().count(), 0);
}

#[test]
fn a_symlinked_inbox_is_never_written_through() {
    use predicates::prelude::*;
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let target = env.dir.path().join("precious.json");
    fs::write(&target, "[]").unwrap();
    let inbox = env.inbox("alpha", "alice");
    std::os::unix::fs::symlink(&target, &inbox).unwrap();
    env.cmd()
        .args(["send", "alice", "hi"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: "))
        .stderr(predicate::str::contains("alice.json is a symlink"));
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        "[]",
        "target untouched"
    );
    assert!(
        fs::symlink_metadata(&inbox)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the symlink is left as it is"
    );
}

#[test]
fn writing_as_the_lead_or_claude_code_is_refused_unless_forced() {
    use predicates::prelude::*;
    let env = TestEnv::new();
    // A team teamctl does not lead (no "teamctl" key in its config.json).
    env.team("alpha", &[("alice", Some("blue")), ("bob", None)]);
    let alice = env.inbox("alpha", "alice");
    for args in [
        &["send", "alice", "hi", "--from", "team-lead"][..],
        &["send", "alice", "hi", "--from", "Team-Lead"],
        &["send", "--all", "hi", "--from", "team-lead"],
        &["send", "alice", "hi", "--from", "system"],
        &["send", "--join", "alice", "hi", "--from", "team-lead"],
    ] {
        env.cmd()
            .args(args)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("error: "))
            .stderr(predicate::str::contains("--join --from NAME"));
    }
    env.cmd()
        .args(["send", "alice", "hi"])
        .env("TEAMCTL_FROM", "team-lead")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("teamctl does not lead this team"));
    env.cmd()
        .args(["tasks", "add", "Fix it", "--owner", "alice"])
        .env("TEAMCTL_FROM", "team-lead")
        .assert()
        .code(2);
    assert!(!alice.exists(), "nothing was written");
    assert!(!env.inbox("alpha", "bob").exists());
    assert!(!env.root.join("tasks/alpha/1.json").exists());
    // Answering and shutting down speak as team-lead too.
    env.cmd()
        .args(["shutdown", "alice"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not made by `teamctl create`"));
    env.cmd().args(["approve", "perm-1-x"]).assert().code(2);
    assert!(!alice.exists());

    // `user` (the human at the keyboard, the default identity here) is fine.
    env.cmd().args(["send", "alice", "hi"]).assert().success();
    // --force writes anyway.
    env.cmd()
        .args(["send", "alice", "as lead", "--from", "team-lead", "--force"])
        .assert()
        .success();
    let entries = crate::common::read_entries(&alice);
    let from: Vec<&str> = entries
        .iter()
        .map(|e| e["from"].as_str().unwrap())
        .collect();
    assert_eq!(from, ["user", "team-lead"]);
    env.cmd()
        .args(["tasks", "add", "Fix it", "--owner", "alice", "--force"])
        .env("TEAMCTL_FROM", "team-lead")
        .assert()
        .success();
    // Claiming a task as the lead is taking the lead's name too.
    env.cmd().args(["tasks", "add", "Free"]).assert().success();
    let task = env.root.join("tasks/alpha/2.json");
    let before = fs::read(&task).unwrap();
    env.cmd()
        .args(["tasks", "claim", "2", "--as", "team-lead"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("teamctl does not lead this team"));
    assert_eq!(fs::read(&task).unwrap(), before, "the claim wrote nothing");
    env.cmd()
        .args(["tasks", "claim", "2", "--as", "team-lead", "--force"])
        .assert()
        .success();

    // In a team teamctl leads, team-lead is teamctl itself; `system` never is.
    env.lead_by_teamctl("alpha");
    env.cmd()
        .args(["send", "alice", "hi", "--from", "team-lead"])
        .assert()
        .success();
    env.cmd()
        .args(["send", "alice", "hi", "--from", "system"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("Claude Code itself"));
}

#[test]
fn doctor_reports_symlinks_where_team_files_live() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let out = crate::common::run_json(&env, &["doctor"]);
    let symlink: Vec<&Value> = out["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "symlink")
        .collect();
    assert_eq!(symlink.len(), 1);
    assert_eq!(symlink[0]["level"], "ok");

    let target = env.dir.path().join("elsewhere.json");
    fs::write(&target, "[]").unwrap();
    std::os::unix::fs::symlink(&target, env.inbox("alpha", "alice")).unwrap();
    let shared = env.dir.path().join("shared-tasks");
    fs::create_dir_all(&shared).unwrap();
    std::os::unix::fs::symlink(&shared, env.root.join("tasks")).unwrap();
    let out = env.cmd().args(["doctor"]).output().unwrap();
    // Below the config dir teamctl follows none: the commands that need those files fail.
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("FAIL  ") && text.contains("inboxes/alice.json is a symlink (to "),
        "{text}"
    );
    assert!(text.contains("tasks is a symlink"), "{text}");
    assert!(
        text.contains("fix: replace it with what it points to"),
        "{text}"
    );
    let out = env.cmd().args(["doctor", "--json"]).output().unwrap();
    let v = crate::common::json(&out.stdout);
    let warned: Vec<(&str, &Value)> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "symlink")
        .map(|c| (c["level"].as_str().unwrap(), &c["team"]))
        .collect();
    assert_eq!(
        warned,
        [("fail", &json!("alpha")), ("fail", &Value::Null)],
        "{v}"
    );
}
