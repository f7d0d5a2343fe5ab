//! The hermetic environment a test runs teamctl in (`TestEnv`: a temp dir holding HOME, XDG
//! dirs and the Claude config dir, a pinned clock, no inherited TEAMCTL_*), and reading what
//! teamctl printed: JSON documents and lines, children read on threads, polling with a deadline.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;
use tempfile::TempDir;

use super::copy_dir;

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

    /// teamctl's data dir in this environment when `TEAMCTL_DATA_DIR` is not set (the user's
    /// data directory: `XDG_DATA_HOME/teamctl`).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("home/.local/share/teamctl")
    }

    /// The inbox file of `member` in `team`.
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

/// The teamctl binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_teamctl"))
}

/// `out` parsed as one JSON document (else the test fails, showing it).
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

/// The sorted keys of a JSON object.
pub fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
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

/// The test's temp dir, canonical, as a string (what a teammate's `cwd` holds).
pub fn cwd(env: &TestEnv) -> String {
    fs::canonicalize(env.dir.path())
        .unwrap()
        .to_string_lossy()
        .into_owned()
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
