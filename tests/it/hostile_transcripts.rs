//! Transcripts written by a hostile teammate (issue 22's corpus, for issue 18's readers):
//! symlinks where a project folder, a session or a subagents folder belongs, a FIFO session,
//! terminal escapes in a tool call and a text, one line of megabytes, and a `.meta.json`
//! naming someone else. `status`, `log`, `top --once`/`--json` and `wait --max-cost` end,
//! follow nothing, say what they skipped, neutralise what they print and keep `--json` exact.
//! The world, its runs bound by a deadline and its snapshots are hostile_files.rs's.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::hostile_files::{Ran, World, run, snapshot, world};

/// A transcript line of `agent` in team `alpha` (as a pane teammate's session writes it),
/// made from `e`.
fn of(agent: &str, mut e: Value) -> Value {
    e["teamName"] = "alpha".into();
    e["agentName"] = agent.into();
    e["sessionId"] = format!("s-{agent}").into();
    e
}

fn said(agent: &str, id: &str, blocks: Value, usage: (u64, u64)) -> Value {
    of(
        agent,
        crate::common::assistant_entry(id, "2026-11-29T09:59:00.000Z", blocks, "tool_use", usage),
    )
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The characters a terminal acts on (C0 but the line break, DEL, C1, bidi controls).
fn acts(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{9}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{61c}'
        | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Every command that reads transcripts, on `w`: each ends (the deadline of [`run`]), never
/// panics, fails (if it does) with one `error:` line last, and prints no character a terminal
/// would act on in human output; the planted nodes and the canary are unchanged. Returns the
/// runs by name.
fn transcript_commands(w: &World, what: &str, planted: &[&Path]) -> BTreeMap<&'static str, Ran> {
    let node = |p: &Path| {
        snapshot(p.parent().unwrap())
            .get(Path::new(p.file_name().unwrap()))
            .cloned()
    };
    let before: Vec<_> = planted.iter().map(|p| node(p)).collect();
    let canary = snapshot(&w.canary);
    let mut out = BTreeMap::new();
    let runs: [(&str, &[&str]); 7] = [
        ("status", &["status"]),
        ("status_json", &["status", "--json"]),
        ("log", &["log", "alice"]),
        ("log_json", &["log", "alice", "--json"]),
        ("top", &["top", "--once", "--width", "120"]),
        ("top_json", &["top", "--json"]),
        (
            "wait",
            &[
                "wait",
                "--tasks-done",
                "--max-cost",
                "1000",
                "--timeout",
                "1s",
            ],
        ),
    ];
    for (name, args) in runs {
        let r = run(&w.env, args, &[]);
        let ctx = format!(
            "{what}: teamctl {args:?} exited {:?}\nstdout: {}\nstderr: {}",
            r.code, r.stdout, r.stderr
        );
        assert_ne!(r.code, Some(101), "panicked: {ctx}");
        let want = if name == "wait" { Some(3) } else { Some(0) };
        assert_eq!(r.code, want, "{ctx}");
        if !name.ends_with("json") {
            assert!(
                !r.stdout.chars().any(acts),
                "a control reached stdout: {ctx}"
            );
            // A person's screen gets lines cut to size (JSON keeps every byte).
            assert!(
                r.stdout.len() < 200_000,
                "{what}: {name} printed {} bytes",
                r.stdout.len()
            );
        }
        assert!(
            !r.stderr.chars().any(acts),
            "a control reached stderr: {ctx}"
        );
        out.insert(name, r);
    }
    let after: Vec<_> = planted.iter().map(|p| node(p)).collect();
    assert!(before == after, "{what}: a planted node changed");
    assert!(snapshot(&w.canary) == canary, "{what}: wrote outside");
    out
}

/// The member `name` of a `status --json` / `top --json` document.
fn member(doc: &str, name: &str) -> Value {
    let v: Value = serde_json::from_str(doc).unwrap();
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {doc}"))
        .clone()
}

/// alice's "session" in a canary file outside the config dir, its text `SECRET-<tag>`.
fn secret(w: &World, tag: &str) -> PathBuf {
    let p = w.canary.join(format!("secret-{tag}.jsonl"));
    fs::write(
        &p,
        jsonl(&[said(
            "alice",
            "sx",
            json!([{"type": "text", "text": format!("SECRET-{tag}")}]),
            (1_000_000, 0),
        )]),
    )
    .unwrap();
    p
}

/// The project folder of the world's team (cwd /tmp).
fn project(w: &World) -> PathBuf {
    w.env.root.join("projects/-tmp")
}

/// The lead's session id in the world's team.
const LEAD_SESSION: &str = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";

/// No run printed the secret `tag`, and none counted it.
fn no_secret(runs: &BTreeMap<&str, Ran>, tag: &str, what: &str) {
    for (name, r) in runs {
        assert!(
            !r.stdout.contains(&format!("SECRET-{tag}")),
            "{what}: {name} read through the link: {}",
            r.stdout
        );
    }
    // Nothing of it is counted.
    assert_eq!(
        member(&runs["status_json"].stdout, "alice")["tokens"],
        Value::Null,
        "{what}"
    );
}

/// A project folder that is a symlink to a folder outside holding alice's "session".
#[test]
fn hostile_transcripts_a_project_folder_as_a_symlink() {
    let w = world();
    fs::create_dir_all(w.canary.join("proj")).unwrap();
    fs::copy(secret(&w, "A"), w.canary.join("proj/s-alice.jsonl")).unwrap();
    fs::create_dir_all(w.env.root.join("projects")).unwrap();
    symlink(w.canary.join("proj"), project(&w)).unwrap();
    let runs = transcript_commands(&w, "project folder as a symlink", &[&project(&w)]);
    no_secret(&runs, "A", "project folder as a symlink");
    for name in ["status", "log", "top"] {
        assert!(
            runs[name].stderr.contains("projects/-tmp"),
            "{name} says what it skipped: {}",
            runs[name].stderr
        );
    }
}

/// Sessions that are symlinks to a secret file: alice's, and the lead's by its id.
#[test]
fn hostile_transcripts_sessions_as_symlinks() {
    let w = world();
    fs::create_dir_all(project(&w)).unwrap();
    let alice = project(&w).join("s-alice.jsonl");
    let lead = project(&w).join(format!("{LEAD_SESSION}.jsonl"));
    symlink(secret(&w, "B"), &alice).unwrap();
    symlink(secret(&w, "B"), &lead).unwrap();
    let runs = transcript_commands(&w, "sessions as symlinks", &[&alice, &lead]);
    no_secret(&runs, "B", "sessions as symlinks");
    assert!(
        runs["status"].stderr.contains("s-alice.jsonl"),
        "{}",
        runs["status"].stderr
    );
    assert!(
        runs["status"].stderr.contains(LEAD_SESSION),
        "{}",
        runs["status"].stderr
    );
}

/// Sessions that are FIFOs (nobody writes them: opening one to read would block).
#[test]
fn hostile_transcripts_sessions_as_fifos() {
    let w = world();
    fs::create_dir_all(project(&w)).unwrap();
    let fifo = |p: &Path| crate::common::mkfifo(p);
    fifo(&alice_path(&w));
    fifo(&project(&w).join(format!("{LEAD_SESSION}.jsonl")));
    let runs = transcript_commands(
        &w,
        "sessions as FIFOs",
        &[
            &alice_path(&w),
            &project(&w).join(format!("{LEAD_SESSION}.jsonl")),
        ],
    );
    assert!(
        runs["status"].stderr.contains("s-alice.jsonl"),
        "{}",
        runs["status"].stderr
    );
}

/// The lead's subagents folder as a symlink to a folder of "in-process teammates".
#[test]
fn hostile_transcripts_a_subagents_folder_as_a_symlink() {
    let w = world();
    fs::create_dir_all(project(&w).join(LEAD_SESSION)).unwrap();
    fs::write(
        project(&w).join(format!("{LEAD_SESSION}.jsonl")),
        jsonl(&[crate::common::assistant_entry(
            "l1",
            "2026-11-29T09:59:00.000Z",
            json!([{"type": "text", "text": "leading"}]),
            "end_turn",
            (10, 5),
        )]),
    )
    .unwrap();
    fs::create_dir_all(w.canary.join("subs")).unwrap();
    fs::copy(secret(&w, "D"), w.canary.join("subs/agent-x.jsonl")).unwrap();
    fs::write(
        w.canary.join("subs/agent-x.meta.json"),
        r#"{"name":"alice","teamName":"alpha"}"#,
    )
    .unwrap();
    let subs = project(&w).join(LEAD_SESSION).join("subagents");
    symlink(w.canary.join("subs"), &subs).unwrap();
    let runs = transcript_commands(&w, "subagents folder as a symlink", &[&subs]);
    no_secret(&runs, "D", "subagents folder as a symlink");
    let lead = member(&runs["status_json"].stdout, "team-lead");
    assert_eq!(lead["tokens"]["input"], 10, "only the lead's own file");
    assert!(
        runs["status"].stderr.contains("subagents"),
        "{}",
        runs["status"].stderr
    );
}

/// Terminal escapes in a tool call's input and in a text: shown inert, kept exact in JSON.
#[test]
fn hostile_transcripts_terminal_escapes() {
    let w = world();
    let evil = "\u{1b}]52;c;aGk=\u{7}\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{1b}[H\u{1b}[5A\u{9b}31m\u{202e}\u{2066}evil\u{7f}";
    let command = format!("echo {evil}");
    fs::create_dir_all(project(&w)).unwrap();
    fs::write(
        alice_path(&w),
        jsonl(&[
            // A timestamp is the teammate's string too.
            of(
                "alice",
                json!({"type": "user", "timestamp": "2026-11-29T\u{1b}]0;XYZ\u{7}.000Z",
                       "message": {"role": "user", "content": "go on"}}),
            ),
            said(
                "alice",
                "m1",
                json!([{"type": "text", "text": format!("hi {evil}")}]),
                (10, 5),
            ),
            said(
                "alice",
                "m2",
                json!([{"type": "tool_use", "id": "tu1", "name": format!("Bash{evil}"),
                        "input": {"command": command}}]),
                (10, 5),
            ),
        ]),
    )
    .unwrap();
    let runs = transcript_commands(&w, "escapes in a transcript", &[&alice_path(&w)]);
    for name in ["status", "log", "top"] {
        assert!(
            runs[name].stdout.contains("\\e]52;c;aGk=\\x07"),
            "{name} shows the escape as text: {}",
            runs[name].stdout
        );
    }
    for name in ["status_json", "top_json"] {
        let a = member(&runs[name].stdout, "alice");
        assert_eq!(a["activity"]["tool"], format!("Bash{evil}"), "{name} exact");
        assert_eq!(a["activity"]["summary"], command, "{name} exact");
    }
    let log: Vec<Value> = runs["log_json"]
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(log[1]["text"], format!("hi {evil}"));
    assert_eq!(log[2]["text"], json!({"command": command}).to_string());
}

/// One line of 8 MB (a text), then a tool call: read through, printed cut.
#[test]
fn hostile_transcripts_one_line_of_8_mb() {
    let w = world();
    fs::create_dir_all(project(&w)).unwrap();
    let huge = "x".repeat(8 << 20);
    fs::write(
        alice_path(&w),
        jsonl(&[
            said("alice", "m1", json!([{"type": "text", "text": huge}]), (10, 5)),
            said(
                "alice",
                "m2",
                json!([{"type": "tool_use", "id": "tu1", "name": "Read", "input": {"file_path": "a.rs"}}]),
                (10, 5),
            ),
        ]),
    )
    .unwrap();
    let runs = transcript_commands(&w, "a line of 8 MB", &[&alice_path(&w)]);
    assert_eq!(
        member(&runs["top_json"].stdout, "alice")["doing"],
        "Read: a.rs"
    );
    assert!(
        runs["top"].stdout.contains("Read: a.rs"),
        "{}",
        runs["top"].stdout
    );
}

/// `.meta.json` files naming someone else: a subagent of alice's session that says it is
/// bob, one of the lead's that says it is the pane teammate bob, one of another team.
#[test]
fn hostile_transcripts_meta_json_naming_others() {
    let w = world();
    w.env.edit_config("alpha", |c| {
        for m in c["members"].as_array_mut().unwrap() {
            if m["name"] == "bob" {
                m["backendType"] = "tmux".into();
                m["tmuxPaneId"] = "%99".into();
            }
        }
    });
    fs::create_dir_all(project(&w).join("s-alice/subagents")).unwrap();
    fs::create_dir_all(project(&w).join(LEAD_SESSION).join("subagents")).unwrap();
    fs::write(
        alice_path(&w),
        jsonl(&[said(
            "alice",
            "m1",
            json!([{"type": "text", "text": "mine"}]),
            (10, 5),
        )]),
    )
    .unwrap();
    fs::write(
        project(&w).join(format!("{LEAD_SESSION}.jsonl")),
        jsonl(&[crate::common::assistant_entry(
            "l1",
            "2026-11-29T09:59:00.000Z",
            json!([{"type": "text", "text": "leading"}]),
            "end_turn",
            (10, 5),
        )]),
    )
    .unwrap();
    let sub = |dir: PathBuf, name: &str, meta: &str, tokens: u64| {
        fs::write(
            dir.join(format!("{name}.jsonl")),
            jsonl(&[crate::common::assistant_entry(
                name,
                "2026-11-29T09:59:30.000Z",
                json!([{"type": "text", "text": format!("as {name}")}]),
                "end_turn",
                (tokens, 0),
            )]),
        )
        .unwrap();
        fs::write(dir.join(format!("{name}.meta.json")), meta).unwrap();
    };
    sub(
        project(&w).join("s-alice/subagents"),
        "agent-a",
        r#"{"name":"bob","teamName":"alpha"}"#,
        100,
    );
    sub(
        project(&w).join(LEAD_SESSION).join("subagents"),
        "agent-b",
        r#"{"name":"bob","teamName":"alpha"}"#,
        1000,
    );
    sub(
        project(&w).join(LEAD_SESSION).join("subagents"),
        "agent-c",
        r#"{"name":"alice","teamName":"other-team"}"#,
        10_000,
    );
    let runs = transcript_commands(&w, "meta.json naming others", &[&alice_path(&w)]);
    let st = &runs["status_json"].stdout;
    assert_eq!(member(st, "bob")["tokens"], Value::Null, "bob ran nothing");
    assert_eq!(
        member(st, "alice")["tokens"]["input"],
        110,
        "alice and her subagent"
    );
    assert_eq!(
        member(st, "team-lead")["tokens"]["input"],
        11_010,
        "the lead and its subagents"
    );
}

fn alice_path(w: &World) -> PathBuf {
    w.env.root.join("projects/-tmp/s-alice.jsonl")
}
