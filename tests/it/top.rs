//! `teamctl top`: one frame as text (`--once`), its JSON, the refusals without a terminal, and
//! the live view in a real terminal: a pane of a private tmux server (its own socket name, in
//! the test's temp dir) read with `capture-pane`, changed the way Claude Code changes files,
//! typed into with `send-keys`, and given back restored.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::json;
use teamctl::store::lock::LockOptions;
use teamctl::team::tasks::{self, NewTask, Patch};

use crate::common::{
    Ran, TestEnv, alice_session, assistant_entry, keys, led_team, read_entries, tmux_installed,
    wait_until, write_as,
};

const DEADLINE: Duration = Duration::from_secs(20);

#[test]
fn once_prints_one_frame_of_the_example_team() {
    let env = TestEnv::example();
    let text = env
        .cmd()
        .args(["--team", "demo-team", "top", "--once", "--width", "80"])
        .env("TEAMCTL_NOW", "2025-11-29T19:36:00.000Z")
        .assert()
        .success()
        .stdout_text();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(" demo-team  lead team-lead (not running) · up 6m"),
        "{text}"
    );
    assert!(lines.iter().all(|l| l.chars().count() <= 80), "{text}");
    assert!(lines[0].contains("· $0.23 ·"), "the team's total: {text}");
    for want in [
        "› team-lead  active",
        "  researcher active",
        // From the example's transcripts: what each is doing (a path by its end) and its cost.
        "text: Waiting fo… (1m) $0.14",
        "Read: …ession.ts (20s) $0.10",
        "#2 Fix the session refresh #1 Find the cause of the C",
        "   blocked by #1              @researcher",
        "19:34:10 ● researcher → team-lead  [idle_notification] available: [to tester]",
        "19:35:00 ● team-lead → researcher  [shutdown_request] All tasks are done",
        "q quit",
    ] {
        assert!(text.contains(want), "{want:?} missing:\n{text}");
    }
    // --height gives the screen's layout at that height.
    let tall = env
        .cmd()
        .args([
            "--team",
            "demo-team",
            "top",
            "--once",
            "--width",
            "80",
            "--height",
            "24",
        ])
        .assert()
        .success()
        .stdout_text();
    assert_eq!(tall.lines().count(), 24);
}

#[test]
fn json_is_the_frames_data() {
    let env = TestEnv::example();
    let v = env
        .cmd()
        .args(["--team", "demo-team", "top", "--json"])
        .env("TEAMCTL_NOW", "2025-11-29T19:36:00.000Z")
        .assert()
        .success()
        .stdout_json();
    assert_eq!(
        keys(&v),
        [
            "members",
            "messages",
            "misaddressed",
            "requests",
            "schema_version",
            "tasks",
            "team",
            "warnings"
        ]
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(
        keys(&v["team"]),
        [
            "cost_usd",
            "created_at",
            "description",
            "last_change_at",
            "lead",
            "lead_alive",
            "name",
            "teamctl_leads",
            "tokens"
        ]
    );
    assert_eq!(v["team"]["last_change_at"], "2025-11-29T19:35:00.000Z");
    assert_eq!(
        keys(&v["members"][0]),
        [
            "activity",
            "color",
            "context",
            "cost_source",
            "cost_usd",
            "doing",
            "in_config",
            "last_event_at",
            "last_event_kind",
            "lead",
            "name",
            "process_alive",
            "state",
            "tasks_in_progress",
            "tasks_owned",
            "tokens",
            "unread",
            "waiting",
            "waiting_detail",
            "worktree"
        ]
    );
    assert_eq!(v["members"][0]["name"], "team-lead");
    assert_eq!(v["members"][0]["lead"], true);
    assert_eq!(
        keys(&v["tasks"]),
        ["completed", "counts", "in_progress", "pending"]
    );
    assert_eq!(
        keys(&v["tasks"]["pending"][0]),
        ["active_form", "blocked_by", "id", "owner", "subject"]
    );
    assert_eq!(v["tasks"]["pending"][0]["blocked_by"], json!(["1"]));
    assert_eq!(
        keys(&v["messages"][0]),
        [
            "at", "delivery", "frame", "from", "id", "preview", "source", "text", "to"
        ]
    );
    let last = &v["messages"][2];
    assert_eq!(last["frame"], "shutdown_request");
    assert_eq!(last["preview"], "[shutdown_request] All tasks are done");
    assert_eq!(last["delivery"], "unread");
    assert_eq!(v["requests"], json!([]));
}

/// A line appended to a transcript the way Claude Code appends (one write).
fn append(path: &Path, entry: &serde_json::Value) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(format!("{entry}\n").as_bytes()).unwrap();
}

/// alice calls `tool` on `input` (a call without its result yet), in her session.
fn call(id: &str, tool: &str, input: serde_json::Value) -> serde_json::Value {
    let mut e = assistant_entry(
        id,
        "2026-11-29T09:59:55.000Z",
        json!([{"type": "tool_use", "id": format!("tu-{id}"), "name": tool, "input": input}]),
        "tool_use",
        (10, 5),
    );
    e["sessionId"] = "s-alice".into();
    e["teamName"] = "t".into();
    e["agentName"] = "alice".into();
    e
}

#[test]
fn once_and_json_show_doing_cost_and_the_total() {
    let env = TestEnv::new();
    led_team(&env);
    let path = alice_session(&env);
    // Her last text, escaped on screen, exact in JSON.
    let once = |w: &str| {
        env.cmd()
            .args(["--team", "t", "top", "--once", "--width", w])
            .assert()
            .success()
            .stdout_text()
    };
    let text = once("100");
    let row = text
        .lines()
        .find(|l| l.contains("alice"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        row.contains("text: Looking.\\e[31m red (59m)") && row.contains("$0.0001"),
        "{text}"
    );
    assert!(
        text.lines().next().unwrap().contains("· $0.0001 ·"),
        "{text}"
    );
    assert!(text.contains("DOING") && text.contains("COST"), "{text}");
    // A tool call in progress is what she is doing.
    append(
        &path,
        &call("m2", "Read", json!({"file_path": "src/parser.rs"})),
    );
    let text = once("80");
    let row = text.lines().find(|l| l.contains("alice")).unwrap();
    assert!(row.contains("Read: src/parser.rs (5s)"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let v = env
        .cmd()
        .args(["--team", "t", "top", "--json"])
        .assert()
        .success()
        .stdout_json();
    let alice = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "alice")
        .unwrap();
    assert_eq!(alice["doing"], "Read: src/parser.rs");
    assert_eq!(
        alice["activity"],
        json!({"at": "2026-11-29T09:59:55.000Z", "kind": "tool_use", "tool": "Read",
               "summary": "src/parser.rs"})
    );
    assert_eq!(alice["cost_source"], "computed");
    assert!(alice["cost_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(alice["tokens"]["input"], 20);
    // As status says it, the same numbers.
    let st = env
        .cmd()
        .args(["--team", "t", "status", "--json"])
        .assert()
        .success()
        .stdout_json();
    let st_alice = st["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "alice")
        .unwrap();
    assert_eq!(alice["activity"], st_alice["activity"]);
    assert_eq!(alice["cost_usd"], st_alice["cost_usd"]);
    assert_eq!(v["team"]["cost_usd"], st["totals"]["cost_usd"]);
    assert_eq!(v["team"]["tokens"], st["totals"]["tokens"]);
    // bob has no transcript.
    let bob = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "bob")
        .unwrap();
    assert_eq!(
        (&bob["doing"], &bob["cost_usd"], &bob["tokens"]),
        (&json!(null), &json!(null), &json!(null))
    );
}

#[test]
fn without_a_terminal_it_points_to_status_and_watch() {
    let env = TestEnv::example();
    // stdout is a pipe here.
    env.cmd()
        .args(["--team", "demo-team", "top"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::is_match(
            "^error: top needs a terminal \\(stdout is not a terminal\\): use `teamctl status` .*`teamctl watch`.*\n$",
        )
        .unwrap());
    // Usage errors; an unknown team is a failure.
    env.cmd().args(["top", "--width", "80"]).assert().code(2);
    env.cmd()
        .args(["top", "--once", "--width", "5"])
        .assert()
        .code(2);
    env.cmd()
        .args(["--team", "nope", "top", "--once"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"));
}

/// A pane of a private tmux server running a shell command, with the test's environment.
struct Pane {
    env_dir: PathBuf,
    sock: String,
}

impl Pane {
    /// Starts `script` (run by `sh -c`) in a detached session `w`x`h` of a new server.
    fn start(env: &TestEnv, w: u16, h: u16, script: &str) -> Pane {
        let sock = format!("teamctl-top-{}-{}", std::process::id(), uuid_ish());
        let pane = Pane {
            env_dir: env.dir.path().to_path_buf(),
            sock,
        };
        let out = pane
            .tmux(env)
            .args(["new-session", "-d", "-s", "top", "-x", &w.to_string(), "-y", &h.to_string()])
            .arg(script)
            // Real ages on screen: the messages are stamped with the real clock.
            .env_remove("TEAMCTL_NOW")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        pane
    }

    fn tmux(&self, env: &TestEnv) -> Command {
        let mut c = env.command("tmux");
        c.args(["-L", &self.sock, "-f", "/dev/null"]);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.sock, "-f", "/dev/null"])
            .args(args)
            .env("TMUX_TMPDIR", &self.env_dir)
            .env_remove("TMUX")
            .stderr(Stdio::null())
            .output()
            .unwrap()
    }

    /// The screen as text (`-e`: with the escape sequences tmux would send to redraw it).
    fn screen(&self, escapes: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", "top"];
        if escapes {
            args.push("-e");
        }
        String::from_utf8_lossy(&self.run(&args).stdout).into_owned()
    }

    fn display(&self, format: &str) -> String {
        String::from_utf8_lossy(
            &self
                .run(&["display-message", "-p", "-t", "top", format])
                .stdout,
        )
        .trim()
        .to_string()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "top"];
        args.extend(keys);
        assert!(self.run(&args).status.success());
    }

    fn text(&self, text: &str) {
        assert!(
            self.run(&["send-keys", "-t", "top", "-l", text])
                .status
                .success()
        );
    }

    /// Waits until the screen shows `what`.
    fn wait_for(&self, what: &str) -> String {
        let mut last = String::new();
        let ok = wait_until(DEADLINE, || {
            last = self.screen(false);
            last.contains(what)
        });
        assert!(ok, "{what:?} never showed; the screen:\n{last}");
        last
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn uuid_ish() -> String {
    format!("{:08x}", rand_u32())
}

fn rand_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(
        std::time::SystemTime::now()
            .elapsed()
            .map_or(0, |d| d.as_nanos() as u64),
    );
    h.finish() as u32
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// `teamctl top` in the pane, then its exit code and the terminal's settings into files, then
/// a shell that stays (so the pane can be read after top is gone).
fn top_script(env: &TestEnv) -> (String, PathBuf, PathBuf) {
    top_script_with(env, "")
}

/// As [`top_script`], with `vars` (`NAME=value `) before the command.
fn top_script_with(env: &TestEnv, vars: &str) -> (String, PathBuf, PathBuf) {
    let exit = env.dir.path().join("top.exit");
    let stty = env.dir.path().join("top.stty");
    let script = format!(
        "{vars}{} --team t top; echo $? > {}; stty -a > {}; exec sleep 600",
        quote(&crate::common::bin()),
        quote(&exit),
        quote(&stty)
    );
    (script, exit, stty)
}

/// The terminal is as it was: main screen, cursor shown, cooked mode with echo.
fn assert_restored(pane: &Pane, stty: &Path) {
    assert!(wait_until(DEADLINE, || stty.exists()
        && fs::metadata(stty).is_ok_and(|m| m.len() > 0)));
    let settings = fs::read_to_string(stty).unwrap();
    let words: Vec<&str> = settings.split_whitespace().collect();
    for on in ["icanon", "echo", "isig", "icrnl", "opost"] {
        assert!(words.contains(&on), "{on} is off after top:\n{settings}");
    }
    assert!(wait_until(DEADLINE, || pane
        .display("#{alternate_on} #{cursor_flag}")
        == "0 1"));
}

fn lock() -> LockOptions {
    LockOptions::with_timeout(Duration::from_secs(5))
}

#[test]
fn live_in_a_real_terminal_at_100_by_30() {
    if !tmux_installed() {
        return;
    }
    let env = TestEnv::new();
    led_team(&env);
    let evil = "\u{1b}]0;PWNED\u{7}\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{1b}[31m\u{202e}evil";
    write_as(&env, "alice", "team-lead", evil);
    let (script, exit, stty) = top_script(&env);
    let pane = Pane::start(&env, 100, 30, &script);
    pane.wait_for("Members (3)");
    // (Read as drawn: a capture may catch a frame half written.)
    pane.wait_for("q quit");
    // Teammate text, visible and inert.
    let screen = pane.wait_for("\\e]0;PWNED\\x07\\e]52;c;aGk=\\x07\\e[2J\\e[31m\\u{202e}evil");
    assert!(screen.lines().all(|l| l.chars().count() <= 100), "{screen}");
    let raw = pane.screen(true);
    assert!(
        !raw.contains("\u{1b}]"),
        "an OSC reached the screen: {raw:?}"
    );
    assert!(
        !raw.contains("\u{1b}[2J") && !raw.contains('\u{202e}'),
        "{raw:?}"
    );
    assert_ne!(pane.display("#{pane_title}"), "PWNED");

    // A message and a task change, written the way Claude Code writes them (under the locks).
    write_as(&env, "alice", "team-lead", "Token: LIVE-1 from alice");
    pane.wait_for("alice → team-lead  Token: LIVE-1 from alice");
    let dir = teamctl::store::paths::Layout::new(&env.root)
        .tasks_dir(&teamctl::store::paths::TeamName::parse("t").unwrap());
    let t = tasks::create(
        &dir,
        &NewTask {
            subject: "Live task".into(),
            owner: Some("bob".into()),
            ..NewTask::default()
        },
        &lock(),
    )
    .unwrap();
    pane.wait_for("#1 Live task");
    pane.wait_for("@bob");
    let patch = Patch {
        status: Some("in_progress".into()),
        ..Patch::default()
    };
    tasks::update(&dir, &t.id, &patch, &lock()).unwrap();
    pane.wait_for("In progress 1");

    // m, a text, Enter: the message is in alice's inbox, sent as team-lead.
    pane.keys(&["j"]);
    pane.keys(&["m"]);
    pane.text("hello from top");
    pane.wait_for("to alice› hello from top");
    pane.keys(&["Enter"]);
    pane.wait_for("sent ");
    let inbox = env.inbox("t", "alice");
    let sent = read_entries(&inbox)
        .into_iter()
        .find(|e| e["text"] == "hello from top")
        .expect("the message is in alice's inbox");
    assert_eq!(sent["from"], "team-lead");

    // A permission request, approved with a then y.
    let frame = json!({"type": "permission_request", "request_id": "perm-1795946400000-top0001",
        "agent_id": "alice", "tool_name": "Bash", "tool_use_id": "toolu_top",
        "description": "Run the tests", "input": {"command": "npm test"},
        "permission_suggestions": []});
    write_as(&env, "alice", "team-lead", &frame.to_string());
    pane.wait_for("Waiting for the lead (1)");
    pane.wait_for("Bash: npm test");
    pane.keys(&["a"]);
    pane.wait_for("approve perm-1795946400000-top0001 from alice");
    pane.keys(&["y"]);
    pane.wait_for("approved perm-1795946400000-top0001 from alice");
    let answer = read_entries(&inbox)
        .into_iter()
        .find(|e| {
            e["text"]
                .as_str()
                .unwrap_or("")
                .contains("permission_response")
        })
        .expect("the answer is in alice's inbox");
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains("perm-1795946400000-top0001")
    );

    // q: top exits 0 and the terminal is back.
    pane.keys(&["q"]);
    assert!(wait_until(DEADLINE, || exit.exists()));
    assert!(wait_until(DEADLINE, || fs::read_to_string(&exit)
        .is_ok_and(|s| s.trim() == "0")));
    assert_restored(&pane, &stty);
}

#[test]
fn live_doing_follows_the_transcript_and_enter_opens_the_story() {
    if !tmux_installed() {
        return;
    }
    let env = TestEnv::new();
    led_team(&env);
    let path = alice_session(&env);
    let (script, exit, stty) = top_script(&env);
    let pane = Pane::start(&env, 100, 30, &script);
    pane.wait_for("Members (3)");
    pane.wait_for("text: Looking.\\e[31m red");
    // A tool call appended to her transcript is what she is doing, on screen within the
    // deadline (file notifications on her project folder, a coalesced refresh).
    append(
        &path,
        &call("m2", "Read", json!({"file_path": "src/parser.rs"})),
    );
    pane.wait_for("Read: src/parser.rs");
    // Appended many times a second: top keeps up and shows the newest.
    for i in 0..40 {
        append(
            &path,
            &call(
                &format!("m{}", i + 3),
                "Grep",
                json!({"pattern": format!("needle{i}")}),
            ),
        );
        std::thread::sleep(Duration::from_millis(25));
    }
    pane.wait_for("Grep: needle39");
    // Enter on alice: her story, the lines `teamctl log` prints, growing.
    pane.keys(&["j"]);
    pane.keys(&["Enter"]);
    pane.wait_for("Story of alice (46 events, 1 transcript)");
    // g: the oldest; G: the newest again.
    pane.keys(&["g"]);
    pane.wait_for("09:00:01  tool_use     Bash: cargo test --lib parser");
    pane.keys(&["G"]);
    let log = env
        .cmd()
        .args(["--team", "t", "log", "alice", "-n", "3"])
        .assert()
        .success()
        .stdout_text();
    let screen = pane.wait_for("Grep: needle39");
    for line in log.lines() {
        assert!(screen.contains(line), "{line:?} not on screen:\n{screen}");
    }
    let mut result = json!({"type": "user", "timestamp": "2026-11-29T10:00:01.000Z",
        "sessionId": "s-alice", "message": {"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": "tu-m42", "content": "src/parser.rs:3: needle39"}]}});
    result["agentName"] = "alice".into();
    append(&path, &result);
    pane.wait_for("tool_result  Grep ok: src/parser.rs:3: needle39");
    // i: her inbox; l: back to the story; Esc: the team.
    pane.keys(&["i"]);
    pane.wait_for("Inbox of alice");
    pane.keys(&["l"]);
    pane.wait_for("Story of alice");
    pane.keys(&["Escape"]);
    pane.wait_for("Members (3)");
    pane.keys(&["q"]);
    assert!(wait_until(DEADLINE, || fs::read_to_string(&exit)
        .is_ok_and(|s| s.trim() == "0")));
    assert_restored(&pane, &stty);
}

#[test]
fn live_at_80_by_24_resized_then_ended_by_a_signal() {
    if !tmux_installed() {
        return;
    }
    let env = TestEnv::new();
    led_team(&env);
    let (script, exit, stty) = top_script(&env);
    let pane = Pane::start(&env, 80, 24, &script);
    let screen = pane.wait_for("q quit");
    assert!(
        screen.contains("Members (3)") && screen.contains("Messages ("),
        "{screen}"
    );
    assert!(screen.lines().all(|l| l.chars().count() <= 80), "{screen}");
    // A resize is redrawn at once: the panes' rules reach the new width.
    assert!(
        pane.run(&["resize-window", "-t", "top", "-x", "120", "-y", "30"])
            .status
            .success()
    );
    let mut last = String::new();
    assert!(
        wait_until(DEADLINE, || {
            last = pane.screen(false);
            last.lines()
                .any(|l| l.starts_with(" Members (3) ─") && l.chars().count() == 120)
                && last.lines().count() >= 29
        }),
        "not redrawn at 120x30:\n{last}"
    );
    // SIGTERM: top gives the terminal back and exits 128 + 15.
    let shell: u32 = pane.display("#{pane_pid}").trim().parse().unwrap();
    let mut top_pid = String::new();
    assert!(wait_until(DEADLINE, || {
        let below = teamctl::host::proc::descendants(shell);
        top_pid = below.get(1).map(u32::to_string).unwrap_or_default();
        !top_pid.is_empty()
    }));
    let status = Command::new("kill")
        .args(["-TERM", &top_pid])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(wait_until(DEADLINE, || fs::read_to_string(&exit)
        .is_ok_and(|s| s.trim() == "143")));
    assert_restored(&pane, &stty);
}

#[test]
fn a_panic_on_any_thread_gives_the_terminal_back() {
    if !tmux_installed() {
        return;
    }
    let env = TestEnv::new();
    led_team(&env);
    // The file watcher's thread panics at the first change (a test-only fault).
    let (script, exit, stty) = top_script_with(&env, "TEAMCTL_TEST_FAULTS=top_panic ");
    let pane = Pane::start(&env, 100, 30, &script);
    pane.wait_for("Members (3)");
    pane.wait_for("q quit");
    write_as(&env, "alice", "team-lead", "a change");
    assert!(wait_until(DEADLINE, || fs::read_to_string(&exit)
        .is_ok_and(|s| s.trim() == "1")));
    assert_restored(&pane, &stty);
    let screen = pane.wait_for("error: top stopped: the file watcher panicked");
    assert!(screen.contains("TEAMCTL_TEST_FAULTS=top_panic"), "{screen}");
}

#[test]
fn a_dumb_terminal_is_refused() {
    if !tmux_installed() {
        return;
    }
    let env = TestEnv::new();
    led_team(&env);
    let out = env.dir.path().join("dumb.out");
    let script = format!(
        "TERM=dumb {} --team t top 2> {}; echo $? >> {}; exec sleep 600",
        quote(&crate::common::bin()),
        quote(&out),
        quote(&out)
    );
    let _pane = Pane::start(&env, 80, 24, &script);
    let mut text = String::new();
    assert!(wait_until(DEADLINE, || {
        text = fs::read_to_string(&out).unwrap_or_default();
        text.ends_with("2\n")
    }));
    assert!(
        text.starts_with("error: top needs a terminal (TERM is dumb): use `teamctl status`"),
        "{text}"
    );
}

#[test]
fn no_color_in_a_real_terminal() {
    if !tmux_installed() {
        return;
    }
    let env = TestEnv::new();
    led_team(&env);
    let colour = |raw: &str| {
        raw.split('\u{1b}').skip(1).any(|seq| {
            let Some(params) = seq.strip_prefix('[').and_then(|s| s.split_once('m')) else {
                return false;
            };
            params.0.split(';').any(|p| {
                matches!(
                    p.parse::<u16>(),
                    Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
                )
            })
        })
    };
    for (vars, coloured) in [("NO_COLOR=1 ", false), ("", true)] {
        let (script, _, _) = top_script_with(&env, vars);
        let pane = Pane::start(&env, 100, 30, &script);
        pane.wait_for("q quit");
        let raw = pane.screen(true);
        assert_eq!(colour(&raw), coloured, "{vars:?}: {raw:?}");
    }
}
