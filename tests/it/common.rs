//! A hermetic environment per test: a temp dir holding HOME, XDG dirs and the Claude config
//! dir, a pinned clock, and no inherited TEAMCTL_* variables; and every fixture the suites
//! share (a team teamctl leads, teammates written as Claude Code writes, a session transcript,
//! tmux, the Node peer, key lists).

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teamctl::store;
use teamctl::store::lock::LockOptions;
use teamctl::store::paths::{Layout, MemberName, TeamName};
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, Mark, SendRequest};
use tempfile::TempDir;

pub const NOW: &str = "2026-11-29T10:00:00.000Z";

pub struct TestEnv {
    pub dir: TempDir,
    pub root: PathBuf,
}

impl TestEnv {
    /// An empty Claude config dir.
    pub fn new() -> TestEnv {
        // This process probes the machine as the teamctl it runs does.
        if teamctl::host::platform::portable_requested(
            std::env::var_os("TEAMCTL_PORTABLE").as_deref(),
        ) {
            teamctl::host::platform::force_portable();
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("claude");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(dir.path().join("home")).unwrap();
        TestEnv { dir, root }
    }

    /// A copy of the example team committed under `examples/claude` (team `demo-team`).
    pub fn example() -> TestEnv {
        let env = TestEnv::new();
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude"),
            &env.root,
        );
        env
    }

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

    /// teamctl's data dir in this environment when `TEAMCTL_DATA_DIR` is not set (the user's
    /// data directory: `XDG_DATA_HOME/teamctl`).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("home/.local/share/teamctl")
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

    pub fn inbox(&self, team: &str, member: &str) -> PathBuf {
        self.root
            .join("teams")
            .join(team)
            .join("inboxes")
            .join(format!("{member}.json"))
    }

    /// `teamctl` with a hermetic environment (no inherited TEAMCTL_*, HOME in the temp dir).
    pub fn cmd(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.std_cmd())
    }

    /// The same, as a plain `std::process::Command` (for concurrent children).
    pub fn std_cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(bin());
        self.hermetic(&mut cmd);
        cmd
    }

    /// `program` (not teamctl: tmux, a shell) with the same hermetic environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        self.hermetic(&mut cmd);
        cmd
    }

    fn hermetic(&self, cmd: &mut std::process::Command) {
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().into_owned();
            // TEAMCTL_PORTABLE is how a whole run asks for the portable probes: kept.
            if (k.starts_with("TEAMCTL_") && k != "TEAMCTL_PORTABLE")
                || k.starts_with("XDG_")
                || k.starts_with("OTEL_")
                || k == "NO_COLOR"
            {
                cmd.env_remove(&k);
            }
        }
        let home = self.dir.path().join("home");
        cmd.env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("CLAUDE_CONFIG_DIR", &self.root)
            .env("TEAMCTL_NOW", NOW)
            // No tmux server of the developer's is ever asked about panes.
            .env("TMUX_TMPDIR", self.dir.path())
            .env_remove("TMUX")
            .current_dir(self.dir.path());
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

/// A child printing JSON Lines on stdout, read on a thread so every wait has a deadline.
pub struct JsonLines {
    pub child: std::process::Child,
    pub lines: std::sync::mpsc::Receiver<Value>,
    /// Every stdout line as printed, and stderr (with [`JsonLines::spawn_with_stderr`]).
    pub raw: std::sync::Arc<std::sync::Mutex<(Vec<String>, Option<String>)>>,
}

impl JsonLines {
    /// Starts `cmd` with its stdout piped (stderr inherited).
    pub fn spawn(mut cmd: std::process::Command) -> JsonLines {
        cmd.stderr(std::process::Stdio::inherit());
        Self::start(cmd)
    }

    /// Starts `cmd` with its stdout and stderr piped ([`JsonLines::stderr`]).
    pub fn spawn_with_stderr(mut cmd: std::process::Command) -> JsonLines {
        cmd.stderr(std::process::Stdio::piped());
        Self::start(cmd)
    }

    fn start(mut cmd: std::process::Command) -> JsonLines {
        use std::io::{BufRead, Read};
        use std::process::Stdio;
        let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let raw = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), None)));
        let (tx, lines) = std::sync::mpsc::channel();
        let keep = raw.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                keep.lock().unwrap().0.push(line.clone());
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    break;
                }
            }
        });
        if let Some(mut err) = child.stderr.take() {
            let keep = raw.clone();
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = err.read_to_string(&mut s);
                keep.lock().unwrap().1 = Some(s);
            });
        }
        JsonLines { child, lines, raw }
    }

    /// Every stdout line so far, as printed.
    pub fn raw_lines(&self) -> Vec<String> {
        self.raw.lock().unwrap().0.clone()
    }

    /// Waits for the child to end and returns its stderr (when piped).
    pub fn stderr(&mut self) -> String {
        let _ = self.child.wait();
        let end = Instant::now() + Duration::from_secs(10);
        // The reader thread takes what is left once the pipe closes.
        while Instant::now() < end && self.raw.lock().unwrap().1.is_none() {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.raw.lock().unwrap().1.clone().unwrap_or_default()
    }

    /// The next line, within 30 s.
    pub fn next(&self) -> Value {
        self.lines
            .recv_timeout(Duration::from_secs(30))
            .expect("an event within 30 s")
    }
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_teamctl"))
}

pub fn json(out: &[u8]) -> Value {
    serde_json::from_slice(out).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(out)
        )
    })
}

/// Every line of `out` parsed as one JSON document (JSON Lines).
pub fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| json(l.as_bytes()))
        .collect()
}

/// Runs `teamctl ARGS --json`, asserts it succeeded and parses its stdout.
pub fn run_json(env: &TestEnv, args: &[&str]) -> Value {
    env.cmd()
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .stdout_json()
}

/// What the tests read off a finished `teamctl` run's stdout.
pub trait Ran {
    /// Its bytes.
    fn stdout_bytes(&self) -> Vec<u8>;
    /// Its text (UTF-8, else the test fails).
    fn stdout_text(&self) -> String {
        String::from_utf8(self.stdout_bytes()).expect("stdout is UTF-8")
    }
    /// One JSON document.
    fn stdout_json(&self) -> Value {
        json(&self.stdout_bytes())
    }
    /// JSON Lines.
    fn stdout_lines(&self) -> Vec<Value> {
        json_lines(&self.stdout_bytes())
    }
}

impl Ran for assert_cmd::assert::Assert {
    fn stdout_bytes(&self) -> Vec<u8> {
        self.get_output().stdout.clone()
    }
}

pub fn read_entries(path: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    v.as_array().unwrap().clone()
}

/// The sorted keys of a JSON object.
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

/// Polls `cond` until it holds or `deadline` passes.
pub fn wait_until(deadline: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + deadline;
    while Instant::now() < end {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    cond()
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// The Node peer `script` (from [`node_peer`]) with `args`, its output piped.
pub fn peer(script: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("node");
    c.arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Whether `node` and the test peer's node_modules are available. In CI (`CI` set) their
/// absence is a failure, not a skip.
pub fn node_peer() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer");
    let ok = dir.join("node_modules/proper-lockfile").is_dir()
        && std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if ok {
        return Some(dir.join("peer.js"));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the Node test peer is not installed: run `npm ci --prefix tests/peer`"
    );
    eprintln!("skipping: the Node test peer is not installed (npm ci --prefix tests/peer)");
    None
}

/// The stand-in `claude` of tests/fixtures: answers `--version` and plays a teammate.
pub fn fake_claude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-claude")
}

/// Whether tmux runs here (in CI its absence is a failure, not a skip).
pub fn tmux_installed() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is not installed (CI needs it)"
        );
        eprintln!("skipping: tmux is not installed");
    }
    ok
}

/// Whether the test's private tmux server (TMUX_TMPDIR is the test's temp dir) has a session
/// with exactly this name.
pub fn tmux_has_session(env: &TestEnv, name: &str) -> bool {
    Command::new("tmux")
        .args(["has-session", "-t", &format!("={name}")])
        .env("TMUX_TMPDIR", env.dir.path())
        .env_remove("TMUX")
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// The member `name` in a document with a `members` array (`config.json`, `status --json`, …).
pub fn member<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap()
}

/// Kills the test's private tmux server (TMUX_TMPDIR is the test's temp dir) when dropped.
pub struct TmuxServer(pub PathBuf);

impl TmuxServer {
    /// Kills the server now (a test of what teamctl does once it is gone), and returns once no
    /// server answers on its socket: `kill-server` returns before the server has handled the
    /// SIGTERM it sends itself, and a client in between finds its panes, or a server exiting
    /// under it ("server exited unexpectedly").
    pub fn kill(&self) {
        assert!(
            self.stop(),
            "the test's tmux server still answers 10 s after kill-server"
        );
    }

    /// Whether a tmux server runs there and answers.
    pub fn answers(&self) -> bool {
        self.tmux("list-sessions")
            .is_ok_and(|out| out.status.success())
    }

    /// Kills the server; whether, within 10 s, tmux says that none runs on its socket (what
    /// teamctl takes for a server that is gone).
    fn stop(&self) -> bool {
        let _ = self.tmux("kill-server");
        wait_until(Duration::from_secs(10), || {
            // No tmux to ask is no server either.
            self.tmux("list-sessions").map_or(true, |out| {
                let said = String::from_utf8_lossy(&out.stderr);
                !out.status.success()
                    && (said.contains("no server running on")
                        || said.contains("error connecting to"))
            })
        })
    }

    fn tmux(&self, command: &str) -> std::io::Result<std::process::Output> {
        Command::new("tmux")
            .arg(command)
            .env("TMUX_TMPDIR", &self.0)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A test env with its private tmux server (killed when the returned guard is dropped, before
/// the env); `None`, to skip the test, where tmux does not run.
pub fn tmux_env() -> Option<(TestEnv, TmuxServer)> {
    if !tmux_installed() {
        return None;
    }
    let env = TestEnv::new();
    let server = TmuxServer(env.dir.path().to_path_buf());
    Some((env, server))
}

/// An executable shell script `name` in the test's temp dir.
pub fn script(env: &TestEnv, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = env.dir.path().join(name);
    fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// The test's temp dir, canonical, as a string (what a teammate's `cwd` holds).
pub fn cwd(env: &TestEnv) -> String {
    fs::canonicalize(env.dir.path())
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Runs `teamctl` from `writers` threads at once, `each` times in a row per thread, with the
/// arguments `args(writer, i)`; every run must exit 0. Returns each run's stdout, writer by
/// writer, in the order each writer ran them.
pub fn concurrent_runs(
    env: &TestEnv,
    writers: usize,
    each: usize,
    args: impl Fn(usize, usize) -> Vec<String> + Sync,
) -> Vec<Vec<Vec<u8>>> {
    let args = &args;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                s.spawn(move || {
                    (0..each)
                        .map(|i| {
                            let out = env.std_cmd().args(args(w, i)).output().unwrap();
                            assert!(
                                out.status.success(),
                                "{}",
                                String::from_utf8_lossy(&out.stderr)
                            );
                            out.stdout
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
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

/// A child's stderr, collected by a thread as it comes.
pub struct Lines(
    std::sync::Arc<std::sync::Mutex<String>>,
    std::thread::JoinHandle<()>,
);

impl Lines {
    pub fn of(r: impl std::io::Read + Send + 'static) -> Lines {
        let buf = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let b = buf.clone();
        let h = std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(r).lines().map_while(Result::ok) {
                let mut b = b.lock().unwrap();
                b.push_str(&line);
                b.push('\n');
            }
        });
        Lines(buf, h)
    }

    pub fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    /// Everything, once the stream has ended.
    pub fn all(self) -> String {
        let Lines(buf, h) = self;
        h.join().unwrap();
        buf.lock().unwrap().clone()
    }
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

/// The keys of `send --json`.
pub const SEND_KEYS: [&str; 8] = [
    "delivery",
    "id",
    "inbox",
    "message",
    "schema_version",
    "team",
    "to",
    "written",
];

/// Makes a FIFO at `path` (POSIX `mkfifo`; rustix has no `mkfifoat` on macOS).
pub fn mkfifo(path: impl AsRef<Path>) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_ref().as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo keeps no pointer.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.as_ref().display());
}

/// How many threads process `pid` has (0 when it cannot be told): one `/proc/<pid>/task` entry
/// each on Linux; elsewhere one line each of `ps -M` (macOS; not run on Linux, whose `ps` has
/// no such option).
pub fn threads(pid: u32) -> usize {
    if cfg!(target_os = "linux") {
        return fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
    }
    Command::new("ps")
        .args(["-M", "-p", &pid.to_string()])
        .output()
        .map_or(0, |o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .count()
                .saturating_sub(1)
        })
}

/// Makes the lock directory `lock` (creating it when missing) look like its holder died
/// `age` ago: its mtime set that far in the past.
pub fn make_stale(lock: &Path, age: Duration) {
    match fs::create_dir(lock) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => panic!("could not make {}: {e}", lock.display()),
    }
    fs::File::open(lock)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - age)
        .unwrap();
}
