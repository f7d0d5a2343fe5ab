//! A team led by Claude itself, headless: an interactive `claude` lead in a detached tmux
//! session of its own, given a prompt, watched until its team's work is done
//! (`validating → spawning → monitoring → running → done`, or `failed` / `timeout` /
//! `budget`).
//!
//! The lead is started with `--session-id <uuid>` chosen here, so its team (Claude Code
//! 2.1.178+: `session-<first 8 hex>`; older: whatever its TeamCreate makes) is the one whose
//! `leadSessionId` is that uuid, and its transcript is `projects/*/<uuid>.jsonl`. Two runs never
//! see each other's teams.
//!
//! **The done rule** ([`Settle`]), checked every [`POLL`]:
//! 1. the lead's turn has ended: the last `user`/`assistant` entry of its transcript is an
//!    `assistant` entry that does not wait for a tool (`stop_reason` other than `tool_use`);
//! 2. no teammate is working: a pane teammate (`backendType: "tmux"`) works while its pane is
//!    alive and `isActive` is not `false` (absent means it has not finished its first turn);
//!    an in-process teammate works until its own transcript
//!    (`projects/*/<uuid>/subagents/agent-*.jsonl`, named in the `.meta.json` beside it) shows
//!    an ended turn; any other member works while `isActive` is `true`;
//! 3. no inbox of the lead or of a running teammate holds an entry that is not `read: true`;
//! 4. all three held at every poll for `--settle`, and nothing moved meanwhile (the lead's
//!    transcript, the members and their `isActive`, the in-process transcripts: a fingerprint).
//!
//! Cleanup (unless kept) ends the lead as a user closing its terminal would: SIGTERM to the
//! lead process (Claude Code then stops its teammates, kills their panes and removes its team
//! folder), then the tmux session is killed. Claude Code leaves `tasks/<team>` and the
//! transcripts behind; so does this. With [`Spec::export`], a record of the team
//! ([`crate::ops::export`]) is written first, whatever the run's end: done, failed, timed out,
//! over budget or interrupted, once the lead was started.

use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::error::usage;
pub use crate::host::claude::Dialog;
use crate::host::claude::approved_key;
use crate::host::claude::{ClaudeEnv, ClaudeInfo, Permission, shell_quote};
use crate::host::proc::{pid_alive, proc_start};
use crate::host::{resolve, tmux};
use crate::observe::budget::Cap;
use crate::observe::spend::SpendReader;
use crate::observe::spend::TeamSpend;
use crate::observe::status::{TaskCounts, task_counts};
use crate::ops::export::{self, Exported, RunInfo};
use crate::store::dir::Loc;
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::config::{LEAD, TeamConfig};
use crate::team::sentlog::SentLog;
use crate::team::tasks::Board;
use crate::team::transcript::locate;

/// How often the files and the pane are looked at.
pub const POLL: Duration = Duration::from_millis(200);

/// A step of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Checking the binary, tmux and the start-up dialogs.
    Validating,
    /// Starting the lead.
    Spawning,
    /// Waiting for the lead's team to appear.
    Monitoring,
    /// The team exists; waiting for its work to be done.
    Running,
    /// The work is done.
    Done,
    /// Something went wrong; see the reason.
    Failed,
    /// `--timeout` ran out.
    Timeout,
    /// The team's spend crossed `--max-cost` or `--max-tokens`.
    Budget,
}

impl State {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Validating => "validating",
            State::Spawning => "spawning",
            State::Monitoring => "monitoring",
            State::Running => "running",
            State::Done => "done",
            State::Failed => "failed",
            State::Timeout => "timeout",
            State::Budget => "budget",
        }
    }
}

/// How the lead spawns its teammates (`--teammate-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TeammateMode {
    /// One tmux pane per teammate, next to the lead's.
    Tmux,
    /// Inside the lead's process.
    InProcess,
}

impl TeammateMode {
    /// The value Claude Code's `--teammate-mode` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            TeammateMode::Tmux => "tmux",
            TeammateMode::InProcess => "in-process",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The run's label (`--name`): one run per label at a time.
    pub name: String,
    /// The lead's first user message.
    pub prompt: String,
    /// The lead's working directory (absolute).
    pub cwd: PathBuf,
    /// `--model`.
    pub model: Option<String>,
    /// Permission flags for the lead (its teammates inherit its mode).
    pub permission: Permission,
    /// `--teammate-mode`, when given.
    pub teammate_mode: Option<TeammateMode>,
    /// Give up after this long (exit 3).
    pub timeout: Duration,
    /// How long the done rule must hold.
    pub settle: Duration,
    /// Leave the lead and its team running at the end.
    pub keep: bool,
    /// Write a record of the team here ([`crate::ops::export`]) at the last moment before the
    /// lead is told to stop (done, failed, timeout, budget or interrupted alike).
    pub export: Option<PathBuf>,
    /// End the run (as at the timeout) once the team's spend crosses this.
    pub cap: Cap,
}

/// What the run needs from the environment, read by the caller.
#[derive(Debug, Clone)]
pub struct RunEnv {
    /// The binary and the variables for the lead's pane (credentials, endpoints, `PATH`,
    /// …): [`ClaudeEnv::pane_env`] and then [`ClaudeEnv::passthrough`].
    pub claude: ClaudeEnv,
    /// Claude Code's global config file (`$CLAUDE_CONFIG_DIR/.claude.json`, else
    /// `~/.claude.json`).
    pub claude_json: PathBuf,
    /// The config dir to give the lead as `CLAUDE_CONFIG_DIR` (only when one was chosen:
    /// setting it to `~/.claude` would move `.claude.json`).
    pub config_dir: Option<PathBuf>,
    /// `ANTHROPIC_API_KEY`, to check it has been approved.
    pub api_key: Option<String>,
    /// Running as root without `IS_SANDBOX`: Claude Code then refuses to skip permissions.
    pub root_without_sandbox: bool,
    /// Where the per-name lock and the prompt file live.
    pub run_dir: PathBuf,
    /// How long `claude --version` may take.
    pub version_timeout: Duration,
    /// teamctl's sent log (for the record's messages), when there is one.
    pub sent_log: Option<SentLog>,
    /// The clock that stamps the record.
    pub clock: fn() -> chrono::DateTime<chrono::Utc>,
    /// teamctl's data dir (the transcript index), if any.
    pub data_dir: Option<PathBuf>,
}

/// A dialog found before starting, with the setting that skips it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocker {
    /// Which dialog.
    pub dialog: Dialog,
    /// The setting that skips it.
    pub fix: String,
}

/// Reads a JSON object file; `None` when missing, not a regular file (a FIFO is never opened
/// for a blocking read) or not an object.
fn read_json(path: &Path) -> Option<Value> {
    let v: Value = serde_json::from_slice(&crate::store::dir::read_regular(path).ok()??).ok()?;
    v.is_object().then_some(v)
}

/// [`read_json`] of a file under the config dir, reached without following a symlink.
fn read_json_loc(path: &Loc) -> Option<Value> {
    let v: Value = serde_json::from_slice(&path.read().ok()??).ok()?;
    v.is_object().then_some(v)
}

/// The start-up dialogs a lead would stop at, from Claude Code's files (2.1.332):
/// onboarding unless `hasCompletedOnboarding`; the API key approval when `api_key` is set and
/// its last 20 characters are not in `customApiKeyResponses.approved`; the trust dialog unless
/// `projects[<cwd or a parent>].hasTrustDialogAccepted`; the bypass prompt, when `bypass`,
/// unless `bypassPermissionsModeAccepted` or a settings file has
/// `skipDangerousModePermissionPrompt`.
pub fn blockers(
    claude_json_path: &Path,
    claude_json: Option<&Value>,
    settings: &[(PathBuf, Option<Value>)],
    cwd: &Path,
    api_key: Option<&str>,
    bypass: bool,
) -> Vec<Blocker> {
    let empty = Value::Null;
    let cj = claude_json.unwrap_or(&empty);
    let at = claude_json_path.display();
    let mut out = Vec::new();
    if cj.get("hasCompletedOnboarding").and_then(Value::as_bool) != Some(true) {
        out.push(Blocker {
            dialog: Dialog::Onboarding,
            fix: format!("`teamctl prepare` sets \"hasCompletedOnboarding\": true in {at}"),
        });
    }
    if let Some(tail) = api_key.and_then(approved_key) {
        let approved = cj
            .pointer("/customApiKeyResponses/approved")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(tail.as_str())));
        if !approved {
            out.push(Blocker {
                dialog: Dialog::ApiKey,
                fix: format!(
                    "`teamctl prepare` (with ANTHROPIC_API_KEY set) adds the key's last 20 \
                     characters to \"customApiKeyResponses\": {{\"approved\": [...]}} in {at}"
                ),
            });
        }
    }
    let projects = cj.get("projects").and_then(Value::as_object);
    let trusted = cwd.ancestors().any(|dir| {
        projects
            .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
            .and_then(|p| p.get("hasTrustDialogAccepted"))
            .and_then(Value::as_bool)
            == Some(true)
    });
    if !trusted {
        out.push(Blocker {
            dialog: Dialog::Trust,
            fix: format!(
                "`teamctl prepare --cwd {}` sets \"projects\": {{\"{}\": \
                 {{\"hasTrustDialogAccepted\": true}}}} in {at}",
                crate::host::claude::shell_quote(&cwd.to_string_lossy()),
                cwd.display()
            ),
        });
    }
    if bypass {
        let accepted = cj
            .get("bypassPermissionsModeAccepted")
            .and_then(Value::as_bool)
            == Some(true);
        let skipped = settings.iter().any(|(_, s)| {
            s.as_ref()
                .and_then(|s| s.get("skipDangerousModePermissionPrompt"))
                .and_then(Value::as_bool)
                == Some(true)
        });
        if !accepted && !skipped {
            let file = settings
                .first()
                .map(|(p, _)| p.display().to_string())
                .unwrap_or_else(|| "settings.json".into());
            out.push(Blocker {
                dialog: Dialog::Bypass,
                fix: format!(
                    "`teamctl prepare --skip-permissions` sets \
                     \"skipDangerousModePermissionPrompt\": true in {file}"
                ),
            });
        }
    }
    out
}

/// The dialog `screen` (a pane's visible text) shows, if any. Only dialogs with their
/// footer count, so a model that merely writes "Do you want to …" is not mistaken for one.
pub fn detect_dialog(screen: &str) -> Option<Dialog> {
    if screen.contains("Choose the text style") || screen.contains("Let's get started") {
        return Some(Dialog::Onboarding);
    }
    let footer = screen.contains("Esc to cancel") || screen.contains("Enter to confirm");
    if !footer {
        return None;
    }
    Some(if screen.contains("Do you want to use this API key") {
        Dialog::ApiKey
    } else if screen.contains("Yes, I trust this folder") || screen.contains("Accessing workspace")
    {
        Dialog::Trust
    } else if screen.contains("Bypass Permissions mode") && screen.contains("Yes, I accept") {
        Dialog::Bypass
    } else if screen.contains("Do you want to") || screen.contains("Would you like to") {
        Dialog::PermissionPrompt
    } else if screen.contains("Background work is running") {
        // The /exit confirmation, only ever shown while cleaning up.
        return None;
    } else {
        Dialog::Other
    })
}

/// One poll's view of the done rule's signals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// Rule 1.
    pub lead_turn_ended: bool,
    /// Rule 2: the teammates still working.
    pub working: Vec<String>,
    /// Rule 3: the inboxes with an undelivered entry.
    pub undelivered: Vec<String>,
    /// Rule 4: changes whenever anything the rule reads moves.
    pub fingerprint: u64,
}

impl Observation {
    /// Whether rules 1–3 hold now.
    pub fn quiet(&self) -> bool {
        self.lead_turn_ended && self.working.is_empty() && self.undelivered.is_empty()
    }

    /// Why the work is not done yet, for people.
    pub fn waiting_for(&self) -> String {
        let mut why = Vec::new();
        if !self.lead_turn_ended {
            why.push("the lead's turn".to_string());
        }
        if !self.working.is_empty() {
            why.push(format!(
                "working: {}",
                crate::store::paths::shown_list(&self.working)
            ));
        }
        if !self.undelivered.is_empty() {
            why.push(format!(
                "undelivered mail for {}",
                crate::store::paths::shown_list(&self.undelivered)
            ));
        }
        why.join("; ")
    }
}

/// Rule 4: the observations must be quiet, with one fingerprint, for the whole settle time.
#[derive(Debug, Clone, Default)]
pub struct Settle {
    since: Option<(Instant, u64)>,
}

impl Settle {
    /// Feeds one observation made at `now`; true once the work is done.
    pub fn update(&mut self, obs: &Observation, now: Instant, settle: Duration) -> bool {
        if !obs.quiet() {
            self.since = None;
            return false;
        }
        match self.since {
            Some((at, fp)) if fp == obs.fingerprint => now.duration_since(at) >= settle,
            _ => {
                self.since = Some((now, obs.fingerprint));
                settle.is_zero()
            }
        }
    }
}

/// A teammate in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Teammate {
    /// Member name.
    pub name: String,
    /// `agentType`.
    pub agent_type: Option<String>,
    /// `backendType` (`tmux`, `in-process`).
    pub backend: Option<String>,
    /// Its tmux pane, for pane teammates.
    pub pane: Option<String>,
    /// `starting`, `working`, `idle` or `exited`.
    pub state: String,
}

/// What happened.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `done`, `failed`, `timeout` or `budget`.
    pub state: State,
    /// Why it failed, timed out or went over budget.
    pub reason: Option<String>,
    /// The dialog that blocked it, if that was the reason.
    pub dialog: Option<Dialog>,
    /// The lead's team, once found.
    pub team: Option<String>,
    /// The lead's session id.
    pub lead_session_id: Option<String>,
    /// The teammates, in `config.json` order.
    pub teammates: Vec<Teammate>,
    /// Task counts of the team's task list.
    pub tasks: TaskCounts,
    /// The lead's final answer.
    pub result: Option<String>,
    /// `transcript` or `pane`: where the result came from.
    pub result_source: Option<&'static str>,
    /// The lead's transcript.
    pub transcript: Option<PathBuf>,
    /// The binary.
    pub claude: Option<ClaudeInfo>,
    /// The tmux session (kept only with `--keep`).
    pub tmux_session: Option<String>,
    /// Whether the lead was left running (`--keep`).
    pub kept: bool,
    /// Milliseconds from start to the end (before cleanup).
    pub elapsed_ms: u64,
    /// The record written with [`Spec::export`] (or why it could not be), once the lead was
    /// started.
    pub export: Option<Result<Exported, String>>,
    /// What the team spent, from its transcripts, read after cleanup (when the sessions have
    /// recorded their own figures).
    pub spend: Option<TeamSpend>,
}

/// A progress event.
#[derive(Debug, Clone)]
pub enum Event<'a> {
    /// A state and one line about it.
    Progress(State, &'a str),
    /// A teammate joined the lead's team.
    Joined(&'a Teammate),
    /// The lead's team formed (its name).
    TeamFormed(&'a TeamName),
    /// The record was written ([`Spec::export`]).
    Exported(&'a Exported),
}

/// The tmux session of the run called `name`.
pub fn session_name(name: &str) -> String {
    format!("teamctl-run-{name}")
}

/// Checks a `--name`: 1–64 of `A-Z a-z 0-9 _ -`.
///
/// # Errors
/// A usage error.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(usage(format!(
            "invalid --name '{name}': use 1-64 letters, digits, '_' or '-'"
        )))
    }
}

/// The lead's command line (shell): `cd <cwd> && exec <claude> --session-id <id> [--model M]
/// [permission] [--teammate-mode X] -- "$(cat <prompt file>)"`. The prompt comes from a file so
/// that any text, however long, reaches the lead as one argument, and never goes through tmux.
pub fn lead_command(spec: &Spec, claude: &Path, session_id: &str, prompt_file: &Path) -> String {
    let q = |s: &str| shell_quote(s);
    let mut parts = vec![
        "cd".to_string(),
        q(&spec.cwd.to_string_lossy()),
        "&&".into(),
        "exec".into(),
        q(&claude.to_string_lossy()),
        "--session-id".into(),
        q(session_id),
    ];
    if let Some(m) = &spec.model {
        parts.extend(["--model".into(), q(m)]);
    }
    parts.extend(spec.permission.args());
    if let Some(t) = spec.teammate_mode {
        parts.extend(["--teammate-mode".into(), t.as_str().into()]);
    }
    parts.push("--".into());
    parts.push(format!("\"$(cat {})\"", q(&prompt_file.to_string_lossy())));
    parts.join(" ")
}

/// In-process teammates' transcripts of a lead session: member name → newest `.jsonl` (found
/// and looked at through handles, never through a symlink: see [`locate::subagents`]).
fn subagent_transcripts(lead_transcript: &Loc) -> HashMap<String, Loc> {
    let mut out: HashMap<String, (std::time::SystemTime, Loc)> = HashMap::new();
    // A run's progress has no place for them; `status` and `log` report what is skipped.
    let mut skipped = Vec::new();
    for (name, _, jsonl) in locate::subagents(lead_transcript, &mut skipped) {
        let Some(name) = name else { continue };
        let Ok(Some(mtime)) = jsonl.stat().map(|i| i.map(|i| i.mtime)) else {
            continue;
        };
        if out.get(&name).is_none_or(|(t, _)| mtime > *t) {
            out.insert(name, (mtime, jsonl));
        }
    }
    out.into_iter().map(|(k, (_, p))| (k, p)).collect()
}

/// The team whose `leadSessionId` is `session_id` (its `session-<8hex>` folder first).
pub fn find_team(layout: &Layout, session_id: &str) -> Option<(TeamName, TeamConfig)> {
    let first = format!("session-{}", session_id.get(..8).unwrap_or(session_id));
    let mut names = vec![first.clone()];
    if let Ok(listed) = layout.teams_dir().open_dir().and_then(|d| d.names()) {
        names.extend(
            listed
                .into_iter()
                .filter_map(|n| n.into_string().ok())
                .filter(|n| *n != first && !n.contains(".deleted-")),
        );
    }
    names.into_iter().find_map(|n| {
        let name = TeamName::parse(&n).ok()?;
        let path = layout.config_path(&name);
        let cfg = TeamConfig::parse(&path.read().ok()??, &path).ok()?;
        (cfg.lead_session_id.as_deref() == Some(session_id)).then_some((name, cfg))
    })
}

/// Unread entries per inbox file of `team` (owner name → count), for the given owners.
fn undelivered(layout: &Layout, team: &TeamName, owners: &[String]) -> Vec<String> {
    owners
        .iter()
        .filter(|o| {
            let Ok(member) = MemberName::parse(o) else {
                return false;
            };
            let Ok(Some(bytes)) = layout.inbox_path(team, &member).read() else {
                return false;
            };
            match serde_json::from_slice::<Vec<Value>>(&bytes) {
                Ok(entries) => entries
                    .iter()
                    .any(|e| e.get("read").and_then(Value::as_bool) != Some(true)),
                // A file being rewritten in place: not known to be empty.
                Err(_) => true,
            }
        })
        .cloned()
        .collect()
}

/// Looks at the team once: the done rule's signals, and each teammate's state. `spend` follows
/// the transcripts from one poll to the next.
fn observe(
    layout: &Layout,
    team: &TeamName,
    cfg: &TeamConfig,
    lead_transcript: Option<&Loc>,
    panes: &HashMap<String, bool>,
    spend: &mut SpendReader,
) -> (Observation, Vec<Teammate>) {
    let mut h = DefaultHasher::new();
    let mut lead_turn_ended = false;
    if let Some(p) = lead_transcript {
        let t = spend.file(p);
        lead_turn_ended = t.turn.ended;
        t.offset.hash(&mut h);
    }
    let subs = lead_transcript
        .map(subagent_transcripts)
        .unwrap_or_default();
    let mut working = Vec::new();
    let mut teammates = Vec::new();
    let mut owners = vec![LEAD.to_string()];
    let lead_name = cfg.lead().map(|l| l.name.clone());
    for m in &cfg.members {
        if Some(&m.name) == lead_name.as_ref() || m.name == LEAD {
            continue;
        }
        (&m.name, m.is_active, &m.tmux_pane_id, &m.backend_type).hash(&mut h);
        let pane = m.tmux_pane_id.clone().filter(|p| tmux::is_pane(p));
        let state = match (m.backend_type.as_deref(), &pane) {
            (Some("tmux"), Some(p)) | (None, Some(p)) => {
                if panes.get(p) != Some(&true) {
                    "exited"
                } else if m.is_active == Some(false) {
                    "idle"
                } else if m.is_active == Some(true) {
                    "working"
                } else {
                    "starting"
                }
            }
            (Some("in-process"), _) => match subs.get(&m.name) {
                None => "starting",
                Some(p) => {
                    let t = spend.file(p);
                    t.offset.hash(&mut h);
                    if t.turn.ended { "idle" } else { "working" }
                }
            },
            (None, None) => "starting",
            _ => {
                if m.is_active == Some(true) {
                    "working"
                } else {
                    "idle"
                }
            }
        };
        if matches!(state, "working" | "starting") {
            working.push(m.name.clone());
        }
        if state != "exited" {
            owners.push(m.name.clone());
        }
        teammates.push(Teammate {
            name: m.name.clone(),
            agent_type: m.agent_type.clone(),
            backend: m.backend_type.clone(),
            pane,
            state: state.to_string(),
        });
    }
    let undelivered = undelivered(layout, team, &owners);
    let obs = Observation {
        lead_turn_ended,
        working,
        undelivered,
        fingerprint: h.finish(),
    };
    (obs, teammates)
}

/// Panes of a session: id → alive.
fn live_panes(session: &str) -> HashMap<String, bool> {
    tmux::panes(session)
        .into_iter()
        .map(|p| (p.id, !p.dead))
        .collect()
}

/// The per-name lock: a file held with an OS lock for the whole run, released on exit.
///
/// # Errors
/// When another run of that name holds it.
pub fn lock_name(run_dir: &Path, name: &str) -> Result<File> {
    let dir = crate::team::sentlog::private_dir(run_dir)
        .with_context(|| format!("could not create {}", run_dir.display()))?;
    let path = run_dir.join(format!("{name}.lock"));
    // Never through a symlink, never a FIFO (see store::dir).
    let mut f = dir
        .open_or_create(format!("{name}.lock"), 0o600)
        .with_context(|| format!("could not open {}", path.display()))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            bail!(
                "a run named '{name}' is already running (pid {}); pick another --name",
                holder.trim()
            );
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("could not lock {}", path.display()));
        }
    }
    f.set_len(0)?;
    write!(f, "{}", std::process::id())?;
    Ok(f)
}

/// Runs the whole thing (see the module docs). `interrupted` is asked at every poll; when it
/// says yes the run cleans up and ends `failed`.
///
/// # Errors
/// Binary or tmux missing, another run of that name, the tmux session already existing, I/O.
/// Blocking dialogs, an early exit of the lead and the timeout are outcomes, not errors.
pub fn run(
    layout: &Layout,
    spec: &Spec,
    env: &RunEnv,
    progress: &mut dyn FnMut(Event),
    interrupted: &dyn Fn() -> bool,
) -> Result<Outcome> {
    let start = Instant::now();
    let mut out = Outcome {
        state: State::Failed,
        reason: None,
        dialog: None,
        team: None,
        lead_session_id: None,
        teammates: Vec::new(),
        tasks: TaskCounts::default(),
        result: None,
        result_source: None,
        transcript: None,
        claude: None,
        tmux_session: None,
        kept: false,
        elapsed_ms: 0,
        export: None,
        spend: None,
    };

    // validating
    progress(Event::Progress(
        State::Validating,
        &format!("run '{}'", spec.name),
    ));
    check_name(&spec.name)?;
    if spec.prompt.trim().is_empty() {
        return Err(usage("the prompt is empty"));
    }
    if !spec.cwd.is_dir() {
        bail!("--cwd {} is not a directory", spec.cwd.display());
    }
    let _lock = lock_name(&env.run_dir, &spec.name)?;
    let found = resolve::find(&env.claude.resolve)?;
    let version = resolve::version(&found.path, env.version_timeout);
    out.claude = Some(ClaudeInfo {
        path: found.path.display().to_string(),
        found_by: found.found_by,
        version: version.clone(),
    });
    let Some(version) = version else {
        out.reason = Some(format!(
            "{} --version did not answer within {} s; is it Claude Code?",
            found.path.display(),
            env.version_timeout.as_secs()
        ));
        return Ok(finish(out, start));
    };
    if !tmux::available() {
        bail!("tmux is not installed (or `tmux -V` fails): `run` starts the lead in tmux");
    }
    let session = session_name(&spec.name);
    if tmux::has_session(&session) {
        bail!(
            "tmux session {session} already exists (an earlier `run --name {}` kept with \
             --keep?); end it with `tmux kill-session -t {session}` or pick another --name",
            spec.name
        );
    }
    let bypass = spec.permission.bypasses();
    if bypass && env.root_without_sandbox {
        out.reason = Some(
            "Claude Code refuses to skip permissions as root: set IS_SANDBOX=1 (in a sandbox) \
             or choose another --permission-mode"
                .into(),
        );
        return Ok(finish(out, start));
    }
    let config_settings = layout.root_loc().join("settings.json");
    let mut settings: Vec<(PathBuf, Option<Value>)> = vec![(
        config_settings.to_path_buf(),
        read_json_loc(&config_settings),
    )];
    settings.extend(
        [
            spec.cwd.join(".claude/settings.json"),
            spec.cwd.join(".claude/settings.local.json"),
        ]
        .into_iter()
        .map(|p| {
            let v = read_json(&p);
            (p, v)
        }),
    );
    let cj = read_json(&env.claude_json);
    let blocked = blockers(
        &env.claude_json,
        cj.as_ref(),
        &settings,
        &spec.cwd,
        env.api_key.as_deref(),
        bypass,
    );
    if let Some(first) = blocked.first() {
        out.dialog = Some(first.dialog);
        let lines: Vec<String> = blocked
            .iter()
            .map(|b| format!("{} ({}): {}", b.dialog.title(), b.dialog.as_str(), b.fix))
            .collect();
        let mut prepare = format!(
            "teamctl prepare --cwd {}",
            shell_quote(&spec.cwd.to_string_lossy())
        );
        if blocked.iter().any(|b| b.dialog == Dialog::Bypass) {
            prepare.push_str(" --skip-permissions");
        }
        out.reason = Some(format!(
            "the lead would stop at a start-up dialog nobody can answer; {}; `{prepare}` \
             settles them all",
            lines.join("; ")
        ));
        return Ok(finish(out, start));
    }

    // spawning
    let session_id = Uuid::new_v4().to_string();
    out.lead_session_id = Some(session_id.clone());
    let prompt_file = env.run_dir.join(format!("{}.prompt", spec.name));
    // Only the user may read the prompt (it leaves the file as soon as the lead has it): a new
    // file, 0600, created exclusively in the private run folder, never through a symlink.
    let written = crate::team::sentlog::private_dir(&env.run_dir).and_then(|dir| {
        let name = format!("{}.prompt", spec.name);
        match dir.unlink(&name) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        dir.create_new(&name, 0o600)?
            .write_all(spec.prompt.as_bytes())
    });
    written.with_context(|| format!("could not write {}", prompt_file.display()))?;
    let pane = match tmux::new_session(&session, "lead") {
        Ok(p) => p,
        Err(e) => {
            let _ = fs::remove_file(&prompt_file);
            return Err(e);
        }
    };
    out.tmux_session = Some(session.clone());
    let cmd = lead_command(spec, &found.path, &session_id, &prompt_file);
    let mut pane_env = env.claude.pane_env.clone();
    pane_env.extend(env.claude.passthrough.iter().cloned());
    pane_env.push(("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS".into(), "1".into()));
    if let Some(d) = &env.config_dir {
        pane_env.push(("CLAUDE_CONFIG_DIR".into(), d.display().to_string()));
    }
    progress(Event::Progress(
        State::Spawning,
        &format!(
            "claude {version} in tmux session {session} (pane {pane}), session id {session_id}"
        ),
    ));
    let mut spend = SpendReader::for_session(
        layout.root_loc(),
        Some(&session_id),
        env.data_dir.as_deref(),
    );
    let watched = tmux::respawn(&pane, &cmd, &pane_env).and_then(|()| {
        watch(
            layout,
            spec,
            &session,
            &pane,
            &session_id,
            &prompt_file,
            &mut out,
            start,
            &mut spend,
            progress,
            interrupted,
        )
    });
    let _ = fs::remove_file(&prompt_file);
    out.elapsed_ms = start.elapsed().as_millis() as u64;
    // The team's members as config.json names them, read now while it still exists (the lead
    // removes it as it ends): without a cap nothing has read it yet, and with one the last
    // look may predate a teammate; either way the totals after cleanup would leave out pane
    // teammates' own sessions.
    spend.relocate();
    spend.read();
    if let Some(path) = &spec.export {
        let failed = watched.as_ref().err().map(|e| format!("{e:#}"));
        let record = record(layout, spec, env, &session_id, &out, failed, path);
        if let Ok(done) = &record {
            progress(Event::Exported(done));
        }
        out.export = Some(record);
    }
    if let Err(e) = watched {
        cleanup(&session, &pane);
        return Err(e);
    }
    if spec.keep {
        out.kept = true;
    } else {
        cleanup(&session, &pane);
        out.tmux_session = None;
    }
    // After cleanup: a session that ended has recorded its own figure by now.
    spend.read();
    // A cache: a failure to save it only makes the next read longer.
    let _ = spend.save();
    out.spend = Some(spend.spend().clone()).filter(|s| !s.is_empty());
    Ok(out)
}

/// Writes the record of the run's team (or of the team it would have had, `session-<8 hex>`,
/// when none formed: the lead's transcript is still worth keeping) to `path`.
fn record(
    layout: &Layout,
    spec: &Spec,
    env: &RunEnv,
    session_id: &str,
    out: &Outcome,
    failed: Option<String>,
    path: &Path,
) -> Result<Exported, String> {
    let team = out
        .team
        .clone()
        .unwrap_or_else(|| format!("session-{}", session_id.get(..8).unwrap_or(session_id)));
    let team = TeamName::parse(&team).map_err(|e| format!("{e:#}"))?;
    let sent = env
        .sent_log
        .as_ref()
        .and_then(|l| l.entries().ok())
        .unwrap_or_default();
    let req = export::Request {
        layout,
        team: &team,
        lead_session_id: Some(session_id),
        sent: &sent,
        now: (env.clock)(),
        run: Some(RunInfo {
            name: spec.name.clone(),
            state: if failed.is_some() {
                State::Failed.as_str()
            } else {
                out.state.as_str()
            }
            .to_string(),
            reason: failed.or_else(|| out.reason.clone()),
            result: out.result.clone(),
            elapsed_ms: out.elapsed_ms,
        }),
        leads: None,
        data_dir: env.data_dir.as_deref(),
    };
    export::export(&req, path)
        .map(|(done, _)| done)
        .map_err(|e| format!("{e:#}"))
}

fn finish(mut out: Outcome, start: Instant) -> Outcome {
    out.elapsed_ms = start.elapsed().as_millis() as u64;
    out
}

/// Ends the lead (SIGTERM: it stops its teammates and removes its team), waits briefly for
/// it, then kills the tmux session and whatever is left in it.
pub fn cleanup(session: &str, pane: &str) {
    if let Some(pid) = tmux::pane_pid(pane) {
        let start = proc_start(pid);
        if tmux::panes(session).iter().any(|p| p.id == pane && !p.dead) {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .output();
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end && pid_alive(pid, start.as_deref()) == Some(true) {
                thread::sleep(Duration::from_millis(50));
            }
        }
    }
    let _ = tmux::kill_session(session);
}

#[allow(clippy::too_many_arguments)]
fn watch(
    layout: &Layout,
    spec: &Spec,
    session: &str,
    pane: &str,
    session_id: &str,
    prompt_file: &Path,
    out: &mut Outcome,
    start: Instant,
    spend: &mut SpendReader,
    progress: &mut dyn FnMut(Event),
    interrupted: &dyn Fn() -> bool,
) -> Result<()> {
    let deadline = start + spec.timeout;
    progress(Event::Progress(
        State::Monitoring,
        &format!("waiting for the team of lead session {session_id}"),
    ));
    let mut team: Option<TeamName> = None;
    let mut transcript: Option<Loc> = None;
    let mut settle = Settle::default();
    let mut joined: BTreeMap<String, Instant> = BTreeMap::new();
    let mut reported: Vec<String> = Vec::new();
    let mut last_cfg: Option<TeamConfig> = None;
    let mut last_screen_check = Instant::now();
    let mut last_wait_note = Instant::now();
    loop {
        if interrupted() {
            out.state = State::Failed;
            out.reason = Some("interrupted by a signal".into());
            break;
        }
        let panes = live_panes(session);
        if transcript.is_none() {
            transcript = locate::find_session(layout.root_loc(), session_id, &[], &mut Vec::new());
            out.transcript = transcript.as_ref().map(|t| t.to_path_buf());
            if transcript.is_some() {
                // The lead has its prompt (its shell read the file before it started).
                let _ = fs::remove_file(prompt_file);
            }
        }
        if team.is_none()
            && let Some((name, cfg)) = find_team(layout, session_id)
        {
            let pid = cfg
                .lead_process
                .as_ref()
                .map(|p| format!(" (lead pid {})", p.pid))
                .unwrap_or_default();
            progress(Event::Progress(
                State::Running,
                &format!("team {name} formed{pid}"),
            ));
            progress(Event::TeamFormed(&name));
            out.team = Some(name.to_string());
            spend.set_team(layout, &name);
            team = Some(name);
        }
        if spec.cap.is_set()
            && let Some(e) = spec.cap.exceeded(spend.read())
        {
            out.state = State::Budget;
            out.reason = Some(format!(
                "{e}; last lines of the lead's pane:\n{}",
                tail_or_empty(pane)
            ));
            break;
        }
        if let Some(name) = &team {
            let path = layout.config_path(name);
            // Claude Code rewrites config.json in place: a torn read keeps the last good one.
            if let Ok(Some(bytes)) = path.read() {
                if let Ok(cfg) = TeamConfig::parse(&bytes, &path) {
                    last_cfg = Some(cfg);
                }
            } else if panes.get(pane) == Some(&true) {
                last_cfg = None;
            }
            if let Some(cfg) = &last_cfg {
                let (obs, mates) = observe(layout, name, cfg, transcript.as_ref(), &panes, spend);
                for m in &mates {
                    let first = *joined.entry(m.name.clone()).or_insert_with(Instant::now);
                    let settled = m.backend.is_some() || first.elapsed() >= Duration::from_secs(10);
                    if settled && !reported.contains(&m.name) {
                        reported.push(m.name.clone());
                        progress(Event::Joined(m));
                    }
                }
                out.teammates = mates;
                if settle.update(&obs, Instant::now(), spec.settle) {
                    out.state = State::Done;
                    break;
                }
                if last_wait_note.elapsed() >= Duration::from_secs(30) {
                    last_wait_note = Instant::now();
                    progress(Event::Progress(
                        State::Running,
                        &format!("waiting for {}", obs.waiting_for()),
                    ));
                }
            }
        }
        if panes.get(pane) != Some(&true) {
            let status = tmux::panes(session)
                .into_iter()
                .find(|p| p.id == pane)
                .and_then(|p| p.status)
                .map(|s| format!(" with status {s}"))
                .unwrap_or_default();
            out.state = State::Failed;
            out.reason = Some(format!(
                "the lead exited{status} before its work was done; last lines of its pane:\n{}",
                tail_or_empty(pane)
            ));
            break;
        }
        if last_screen_check.elapsed() >= Duration::from_millis(500) || team.is_none() {
            last_screen_check = Instant::now();
            if let Some(d) = detect_dialog(&tmux::screen(pane)) {
                out.state = State::Failed;
                out.dialog = Some(d);
                // A start-up dialog the files did not predict (a Claude Code that reads them
                // differently): prepare writes the settings that skip it.
                let hint = match d {
                    Dialog::Onboarding | Dialog::ApiKey | Dialog::Trust | Dialog::Bypass => {
                        format!(
                            "; `teamctl prepare --cwd {}{}` writes the settings that skip it",
                            shell_quote(&spec.cwd.to_string_lossy()),
                            if spec.permission.bypasses() {
                                " --skip-permissions"
                            } else {
                                ""
                            }
                        )
                    }
                    _ => String::new(),
                };
                out.reason = Some(format!(
                    "the lead is stuck at {} ({}); nobody can answer it in a headless run{hint}; \
                     last lines of its pane:\n{}",
                    d.title(),
                    d.as_str(),
                    tail_or_empty(pane)
                ));
                break;
            }
        }
        if Instant::now() >= deadline {
            out.state = State::Timeout;
            let what = match (&team, &last_cfg) {
                (None, _) => "the lead formed no team".to_string(),
                (Some(t), Some(cfg)) => {
                    let (obs, _) = observe(layout, t, cfg, transcript.as_ref(), &panes, spend);
                    format!(
                        "the team's work was not done (waiting for {})",
                        obs.waiting_for()
                    )
                }
                (Some(_), None) => "the team's work was not done".to_string(),
            };
            out.reason = Some(format!(
                "{what} within {} s; last lines of the lead's pane:\n{}",
                spec.timeout.as_secs_f64(),
                tail_or_empty(pane)
            ));
            break;
        }
        thread::sleep(POLL);
    }

    // The result, read before cleanup removes the team.
    let t = transcript.as_ref().map(|p| spend.file(p));
    if let Some(text) = t.and_then(|t| t.turn.last_text) {
        out.result = Some(text);
        out.result_source = Some("transcript");
    } else {
        let tail = tmux::tail(pane, 20);
        if !tail.is_empty() {
            out.result = Some(tail);
            out.result_source = Some("pane");
        }
    }
    if let Some(name) = &team
        && let Ok(board) = Board::load(&layout.tasks_dir(name))
    {
        out.tasks = task_counts(&board);
    }
    Ok(())
}

/// `text` safe to show on a terminal: control characters other than newline and tab are
/// shown escaped (`\u{1b}`), so a model's text cannot drive the terminal.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' && c != '\t' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

fn tail_or_empty(pane: &str) -> String {
    let t = tmux::tail(pane, 15);
    if t.is_empty() { "(empty)".into() } else { t }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obs(ended: bool, working: &[&str], undelivered: &[&str], fp: u64) -> Observation {
        Observation {
            lead_turn_ended: ended,
            working: working.iter().map(|s| s.to_string()).collect(),
            undelivered: undelivered.iter().map(|s| s.to_string()).collect(),
            fingerprint: fp,
        }
    }

    #[test]
    fn done_rule_needs_all_three_for_the_whole_settle_time() {
        let t0 = Instant::now();
        let s = Duration::from_secs(3);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut r = Settle::default();
        assert!(!r.update(&obs(true, &[], &[], 1), at(0), s));
        assert!(!r.update(&obs(true, &[], &[], 1), at(2999), s));
        assert!(r.update(&obs(true, &[], &[], 1), at(3000), s));

        // Any rule failing restarts the clock.
        for bad in [
            obs(false, &[], &[], 1),
            obs(true, &["worker"], &[], 1),
            obs(true, &[], &["team-lead"], 1),
        ] {
            let mut r = Settle::default();
            assert!(!r.update(&obs(true, &[], &[], 1), at(0), s));
            assert!(!r.update(&bad, at(1000), s));
            assert!(!r.update(&obs(true, &[], &[], 1), at(2000), s));
            assert!(!r.update(&obs(true, &[], &[], 1), at(4999), s));
            assert!(r.update(&obs(true, &[], &[], 1), at(5000), s));
        }
        // Something moved between two polls (a short turn): the clock restarts too.
        let mut r = Settle::default();
        assert!(!r.update(&obs(true, &[], &[], 1), at(0), s));
        assert!(!r.update(&obs(true, &[], &[], 2), at(2000), s));
        assert!(!r.update(&obs(true, &[], &[], 2), at(4000), s));
        assert!(r.update(&obs(true, &[], &[], 2), at(5000), s));
        // --settle 0: the first quiet poll.
        assert!(Settle::default().update(&obs(true, &[], &[], 9), at(0), Duration::ZERO));
    }

    #[test]
    fn dialogs_from_the_screen() {
        // Screens as 2.1.332 shows them (trimmed).
        let api = "  Detected a custom API key in your environment\n  ANTHROPIC_API_KEY: sk-ant-...0000\n  Do you want to use this API key?\n    Yes\n  ❯ No (recommended)\n  Enter to confirm · Esc to cancel";
        let trust = " Accessing workspace:\n /tmp/w\n Quick safety check: Is this a project you created or one you trust?\n ❯ No, exit\n   Yes, I trust this folder\n Enter to confirm · Esc to cancel";
        let bypass = "  WARNING: Claude Code running in Bypass Permissions mode\n  ❯ No, exit\n    Yes, I accept\n  Enter to confirm · Esc to cancel";
        let onboarding = " Let's get started.\n Choose the text style that looks best with your terminal\n ❯ ✔ Auto (match terminal)";
        let perm = " Bash command\n Tip: auto mode handles these prompts for you\n Write PERM1 to a file\n echo PERM1 > ran-PERM1.txt\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access to /w from this project\n   4. No\n Esc to cancel · Tab to amend";
        let idle = "❯ Spawn: worker TOK1\n● Do you want to deploy it now?\n❯ \n  ⏵⏵ bypass permissions on (shift+tab to cycle)";
        let exit = "  Background work is running\n  ❯ 1. Exit and stop tasks\n  Enter to confirm · Esc to cancel";
        assert_eq!(detect_dialog(api), Some(Dialog::ApiKey));
        assert_eq!(detect_dialog(trust), Some(Dialog::Trust));
        assert_eq!(detect_dialog(bypass), Some(Dialog::Bypass));
        assert_eq!(detect_dialog(onboarding), Some(Dialog::Onboarding));
        assert_eq!(detect_dialog(perm), Some(Dialog::PermissionPrompt));
        assert_eq!(detect_dialog(idle), None);
        assert_eq!(detect_dialog(exit), None);
        assert_eq!(
            detect_dialog("Pick one\nEnter to confirm"),
            Some(Dialog::Other)
        );
    }

    #[test]
    fn dialogs_from_the_files() {
        let cj = Path::new("/c/.claude.json");
        let cwd = Path::new("/w/repo");
        let key = "sk-ant-mock-000000000000000000000000";
        let tail = &key[key.len() - 20..];
        let names = |b: Vec<Blocker>| b.into_iter().map(|b| b.dialog).collect::<Vec<_>>();
        assert_eq!(
            names(blockers(cj, None, &[], cwd, Some(key), true)),
            [
                Dialog::Onboarding,
                Dialog::ApiKey,
                Dialog::Trust,
                Dialog::Bypass
            ]
        );
        let good = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [tail], "rejected": []},
            "projects": {"/w": {"hasTrustDialogAccepted": true}},
        });
        assert_eq!(
            names(blockers(cj, Some(&good), &[], cwd, Some(key), false)),
            []
        );
        // Bypass: either key skips it.
        assert_eq!(
            names(blockers(cj, Some(&good), &[], cwd, Some(key), true)),
            [Dialog::Bypass]
        );
        let s = vec![(
            PathBuf::from("/c/settings.json"),
            Some(json!({"skipDangerousModePermissionPrompt": true})),
        )];
        assert_eq!(
            names(blockers(cj, Some(&good), &s, cwd, Some(key), true)),
            []
        );
        let mut accepted = good.clone();
        accepted["bypassPermissionsModeAccepted"] = true.into();
        assert_eq!(
            names(blockers(cj, Some(&accepted), &[], cwd, Some(key), true)),
            []
        );
        // Another key, another folder.
        assert_eq!(
            names(blockers(
                cj,
                Some(&good),
                &[],
                Path::new("/x"),
                Some("sk-other-key-1234567890abcdef"),
                false
            )),
            [Dialog::ApiKey, Dialog::Trust]
        );
        // No key in the environment (a login): no approval dialog.
        assert_eq!(names(blockers(cj, Some(&good), &[], cwd, None, false)), []);
        let b = blockers(cj, None, &[], cwd, None, false);
        assert!(
            b[0].fix.contains("hasCompletedOnboarding") && b[0].fix.contains("/c/.claude.json")
        );
        assert!(b[1].fix.contains("\"/w/repo\""));
    }

    #[test]
    fn names_and_command() {
        assert!(check_name("ci-nightly_2").is_ok());
        for bad in ["", "a b", "../x", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let spec = Spec {
            name: "n".into(),
            prompt: "p".into(),
            cwd: PathBuf::from("/w/my repo"),
            model: Some("claude-opus-5-5".into()),
            permission: Permission::Skip,
            teammate_mode: Some(TeammateMode::InProcess),
            timeout: Duration::from_secs(1),
            settle: Duration::from_secs(1),
            keep: false,
            export: None,
            cap: Cap::default(),
        };
        assert_eq!(
            lead_command(
                &spec,
                Path::new("/bin/claude"),
                "0b1c",
                Path::new("/d/n.prompt")
            ),
            "cd '/w/my repo' && exec /bin/claude --session-id 0b1c --model claude-opus-5-5 \
             --dangerously-skip-permissions --teammate-mode in-process -- \"$(cat /d/n.prompt)\""
        );
    }

    #[test]
    fn printable_escapes_control_characters() {
        assert_eq!(printable("a\x1b[2Jb\n\tc\u{7}"), "a\\u{1b}[2Jb\n\tc\\u{7}");
    }

    #[test]
    fn one_run_per_name() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_name(dir.path(), "a").unwrap();
        let err = lock_name(dir.path(), "a").unwrap_err().to_string();
        assert!(
            err.contains("already running") && err.contains(&std::process::id().to_string()),
            "{err}"
        );
        assert!(lock_name(dir.path(), "b").is_ok());
        drop(held);
        assert!(lock_name(dir.path(), "a").is_ok());
    }
}
