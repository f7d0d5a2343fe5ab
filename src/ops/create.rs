//! Standing up a team that teamctl leads, the way a Claude Code lead does it (spec §6, §8):
//! `validating → provisioning → launching → waiting → ready`, or `failed`.
//!
//! Invariants:
//! - A team folder with a `config.json` is never touched ("already exists"). A folder without
//!   one is what a failed earlier attempt left, and is cleared.
//! - Two creates of one team: the `config.json.lock` directory (Claude Code's own config lock)
//!   is held from the check to the write of `config.json`, and taken without waiting, so the
//!   second fails at once; `config.json` itself is published with `link(2)`, which never
//!   replaces a file.
//! - `config.json` is written last in provisioning, so a crash leaves a folder the next create
//!   clears; each inbox is `[]` before its brief is appended under the inbox lock.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::error::{Error, usage};
use crate::host::claude::{ClaudeEnv, ClaudeInfo, Permission, shell_quote};
use crate::host::resolve::{self, Found};
use crate::host::tmux::{self, session_name};
use crate::store::id;
use crate::store::lock::{self, LockOptions};
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::store::{self, Entry};
use crate::team::config::{LEAD, TEAMCTL_KEY};
use crate::team::lead::{self, Leads};
use crate::team::model::{Color, Frame, NewMessage};

/// One teammate to create.
#[derive(Debug, Clone)]
pub struct MemberSpec {
    /// Its name.
    pub name: MemberName,
    /// Its brief: the first message in its inbox, from `team-lead`.
    pub brief: String,
}

/// Whether and how teammates are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Launch {
    /// One window per teammate in a detached tmux session `teamctl-<team>`.
    Tmux,
    /// Stop after provisioning.
    None,
}

/// What to create.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The team.
    pub team: TeamName,
    /// `description` in `config.json`.
    pub description: Option<String>,
    /// The teammates' working directory (absolute).
    pub cwd: PathBuf,
    /// The teammates, in order (colours follow this order).
    pub members: Vec<MemberSpec>,
    /// `--model` for every teammate.
    pub model: Option<String>,
    /// `agentType` / `--agent-type` [default: `general-purpose`].
    pub agent_type: Option<String>,
    /// Permission flags.
    pub permission: Permission,
    /// Whether to start the teammates.
    pub launch: Launch,
}

/// What launching needs beyond the spec: where to find `claude` and the environment to give it.
#[derive(Debug, Clone)]
pub struct LaunchEnv {
    /// The binary and the variables.
    pub claude: ClaudeEnv,
    /// How long to wait for the teammates to start.
    pub timeout: Duration,
    /// How long `claude --version` may take.
    pub version_timeout: Duration,
}

/// A step of the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Checking names, the binary, tmux and what already exists.
    Validating,
    /// Writing `config.json`, the task folder and the inboxes.
    Provisioning,
    /// Starting the teammates.
    Launching,
    /// Waiting for every teammate to take its brief.
    Waiting,
    /// Every teammate took its brief.
    Ready,
    /// Provisioned, not launched (`--launch none`).
    Provisioned,
    /// Something went wrong; see the reason.
    Failed,
}

impl Step {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Validating => "validating",
            Step::Provisioning => "provisioning",
            Step::Launching => "launching",
            Step::Waiting => "waiting",
            Step::Ready => "ready",
            Step::Provisioned => "provisioned",
            Step::Failed => "failed",
        }
    }
}

/// A teammate's state in the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberState {
    /// Provisioned, not started.
    Provisioned,
    /// Started, brief not taken yet.
    Starting,
    /// Took its brief or reported to the lead.
    Ready,
    /// Its process exited before it took its brief.
    Exited,
    /// Its pane could not be started.
    NotStarted,
}

/// One teammate in the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberOutcome {
    /// Name.
    pub name: String,
    /// Palette colour.
    pub color: String,
    /// tmux pane id, when started.
    pub pane: Option<String>,
    /// State.
    pub state: MemberState,
    /// The brief's `msg_id`.
    #[serde(skip)]
    pub brief_id: String,
}

/// The result of a create.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Final state: `ready`, `provisioned` or `failed`.
    pub state: Step,
    /// Why it failed.
    pub reason: Option<String>,
    /// `leadSessionId`.
    pub lead_session_id: String,
    /// The teammates.
    pub members: Vec<MemberOutcome>,
    /// The binary, when launching.
    pub claude: Option<ClaudeInfo>,
    /// The tmux session, when launching.
    pub tmux_session: Option<String>,
}

/// The palette colour of the `i`-th teammate: blue first, as a lead that took red (spec §8.5).
pub fn color_of(i: usize) -> Color {
    Color::ALL[(i + 1) % Color::ALL.len()]
}

/// Checks the teammates: at least one, valid names that Claude Code does not reserve, unique
/// (ignoring case, since inbox files may live on a case-insensitive file system), a brief each.
///
/// # Errors
/// A usage error naming the problem.
pub fn validate_members(members: &[MemberSpec]) -> Result<()> {
    if members.is_empty() {
        return Err(usage(
            "a team needs at least one member: --member NAME:BRIEF or --member-file FILE",
        ));
    }
    let mut seen = HashSet::new();
    for m in members {
        if m.name.is_reserved() {
            return Err(usage(format!(
                "member name '{}' is reserved by Claude Code (main, team-lead, user, system); \
                 pick another",
                m.name
            )));
        }
        if !seen.insert(m.name.as_str().to_ascii_lowercase()) {
            return Err(usage(format!("member '{}' is given twice", m.name)));
        }
        if m.brief.trim().is_empty() {
            return Err(usage(format!("member '{}' has an empty brief", m.name)));
        }
    }
    Ok(())
}

/// Parses a member file: one `name: brief` per line; blank lines and lines starting with `#`
/// are skipped; name and brief are trimmed.
///
/// # Errors
/// A usage error naming the first line without a `:`.
pub fn parse_member_lines(text: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (n, b) = line
            .split_once(':')
            .ok_or_else(|| usage(format!("line {}: expected `name: brief`", i + 1)))?;
        out.push((n.trim().to_string(), b.trim().to_string()));
    }
    Ok(out)
}

/// The command line a lead sends to a teammate's pane (spec §8.1), shell-quoted:
/// `cd <cwd> && env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 CLAUDE_CONFIG_DIR=<root>
/// [passthrough] <claude> --agent-id <name>@<team> --agent-name <name> --team-name <team>
/// --agent-color <color> --parent-session-id <id> [--agent-type T] [--model M] [permission]`.
pub fn teammate_command(
    root: &Path,
    spec: &Spec,
    claude: &Path,
    passthrough: &[(String, String)],
    member: &MemberName,
    color: Color,
    lead_session_id: &str,
) -> String {
    let q = |s: &str| shell_quote(s);
    let mut parts = vec![
        "cd".to_string(),
        q(&spec.cwd.to_string_lossy()),
        "&&".into(),
        "env".into(),
        "CLAUDECODE=1".into(),
        "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1".into(),
        q(&format!("CLAUDE_CONFIG_DIR={}", root.to_string_lossy())),
    ];
    for (k, v) in passthrough {
        if k != "CLAUDE_CONFIG_DIR" {
            parts.push(q(&format!("{k}={v}")));
        }
    }
    parts.push(q(&claude.to_string_lossy()));
    let team = spec.team.as_str();
    for (flag, value) in [
        ("--agent-id", format!("{member}@{team}")),
        ("--agent-name", member.to_string()),
        ("--team-name", team.to_string()),
        ("--agent-color", color.as_str().to_string()),
        ("--parent-session-id", lead_session_id.to_string()),
    ] {
        parts.push(flag.into());
        parts.push(q(&value));
    }
    if let Some(t) = &spec.agent_type {
        parts.extend(["--agent-type".into(), q(t)]);
    }
    if let Some(m) = &spec.model {
        parts.extend(["--model".into(), q(m)]);
    }
    parts.extend(spec.permission.args());
    parts.join(" ")
}

/// `config.json` of a new team in Claude Code's shape (spec §6), members without panes yet.
pub fn config_doc(
    spec: &Spec,
    lead_session_id: &str,
    now: DateTime<Utc>,
    tmux_session: Option<&str>,
) -> Entry {
    let team = spec.team.as_str();
    let ms = now.timestamp_millis();
    let cwd = spec.cwd.to_string_lossy();
    let mut members = vec![json!({
        "agentId": format!("{LEAD}@{team}"),
        "name": LEAD,
        "agentType": "team-lead",
        "joinedAt": ms,
        "tmuxPaneId": "leader",
        "cwd": cwd,
        "subscriptions": [],
        "backendType": "in-process",
    })];
    for (i, m) in spec.members.iter().enumerate() {
        let mut e = Map::new();
        e.insert("agentId".into(), format!("{}@{team}", m.name).into());
        e.insert("name".into(), m.name.as_str().into());
        e.insert(
            "agentType".into(),
            spec.agent_type
                .as_deref()
                .unwrap_or("general-purpose")
                .into(),
        );
        if let Some(model) = &spec.model {
            e.insert("model".into(), model.as_str().into());
        }
        e.insert("color".into(), color_of(i).as_str().into());
        e.insert("planModeRequired".into(), false.into());
        e.insert("joinedAt".into(), ms.into());
        e.insert("tmuxPaneId".into(), "".into());
        e.insert("cwd".into(), cwd.as_ref().into());
        e.insert("subscriptions".into(), json!([]));
        members.push(Value::Object(e));
    }
    let mut doc = Map::new();
    doc.insert("name".into(), team.into());
    if let Some(d) = &spec.description {
        doc.insert("description".into(), d.as_str().into());
    }
    doc.insert("createdAt".into(), ms.into());
    doc.insert("leadAgentId".into(), format!("{LEAD}@{team}").into());
    doc.insert("leadSessionId".into(), lead_session_id.into());
    doc.insert("members".into(), Value::Array(members));
    doc.insert(
        TEAMCTL_KEY.into(),
        json!({
            "leads": true,
            "version": env!("CARGO_PKG_VERSION"),
            "launch": match spec.launch { Launch::Tmux => "tmux", Launch::None => "none" },
            "tmuxSession": tmux_session,
        }),
    );
    doc
}

/// Runs the whole state machine, reporting each step to `progress` (state, one line of text).
/// Validation problems, an existing team and a create already running are errors; a failure
/// while launching or waiting is an [`Outcome`] with state `failed` (the files stay, for
/// inspection; the tmux session is killed).
///
/// # Errors
/// Usage errors, "already exists", "busy", binary or tmux not found, I/O while provisioning.
pub fn create(
    layout: &Layout,
    spec: &Spec,
    launch: Option<&LaunchEnv>,
    leads: &Leads,
    now: DateTime<Utc>,
    opts: &LockOptions,
    progress: &mut dyn FnMut(Step, &str),
) -> Result<Outcome> {
    progress(Step::Validating, &format!("team '{}'", spec.team));
    validate_members(&spec.members)?;
    // Where teamctl records that it leads the team must work before the team is written.
    leads.prepare()?;
    if !spec.cwd.is_dir() {
        bail!("--cwd {} is not a directory", spec.cwd.display());
    }
    if layout.config_path(&spec.team).stat()?.is_some() {
        return Err(already_exists(layout, &spec.team));
    }
    let session = session_name(&spec.team);
    let mut claude = None;
    if spec.launch == Launch::Tmux {
        let env = launch.context("launching needs the claude binary's environment")?;
        let Found { path, found_by } = resolve::find(&env.claude.resolve)?;
        let version = resolve::version(&path, env.version_timeout);
        progress(
            Step::Validating,
            &format!(
                "claude: {} (found by {}, version {})",
                path.display(),
                found_by.as_str(),
                version.as_deref().unwrap_or("unknown")
            ),
        );
        claude = Some(ClaudeInfo {
            path: path.to_string_lossy().into_owned(),
            found_by,
            version,
        });
        if !tmux::available() {
            bail!("tmux is not installed (or not on PATH); install it, or use --launch none");
        }
        if tmux::has_session(&session) {
            bail!(
                "a tmux session '{session}' already exists (left by an earlier run?); \
                 remove it with `tmux kill-session -t {session}` or `teamctl delete {}`",
                spec.team
            );
        }
    }

    progress(
        Step::Provisioning,
        &layout.config_path(&spec.team).display().to_string(),
    );
    let lead_session_id = Uuid::new_v4().to_string();
    let tmux_session = (spec.launch == Launch::Tmux).then_some(session.as_str());
    let briefs = provision(
        layout,
        spec,
        &lead_session_id,
        tmux_session,
        now,
        opts,
        leads,
    )?;
    let mut members: Vec<MemberOutcome> = spec
        .members
        .iter()
        .zip(briefs)
        .enumerate()
        .map(|(i, (m, brief_id))| MemberOutcome {
            name: m.name.to_string(),
            color: color_of(i).as_str().to_string(),
            pane: None,
            state: MemberState::Provisioned,
            brief_id,
        })
        .collect();
    let mut outcome = Outcome {
        state: Step::Provisioned,
        reason: None,
        lead_session_id: lead_session_id.clone(),
        members: Vec::new(),
        claude: claude.clone(),
        tmux_session: tmux_session.map(String::from),
    };
    let (Some(env), Some(claude)) = (launch, &claude) else {
        outcome.members = members;
        return Ok(outcome);
    };

    progress(Step::Launching, &format!("tmux session {session}"));
    let launched = start_panes(
        layout,
        spec,
        env,
        Path::new(&claude.path),
        &lead_session_id,
        &mut members,
        &session,
        opts,
        progress,
    );
    // The session's id beside its name in the private record: `delete` kills this session and
    // no other, not even a later one of the same name.
    if let Some(session_id) = tmux::session_id(&session) {
        let mut record = lead::new_record(
            layout,
            &spec.team,
            &lead_session_id,
            now.timestamp_millis(),
            Some(&session),
            Some(&spec.cwd),
        );
        record.tmux_session_id = Some(session_id);
        leads.record(layout, &spec.team, &record)?;
    }
    if let Err(e) = launched {
        tmux::kill_session(&session).ok();
        for m in members.iter_mut().filter(|m| m.pane.is_none()) {
            m.state = MemberState::NotStarted;
        }
        outcome.state = Step::Failed;
        outcome.reason = Some(format!("launching failed: {e:#}"));
        outcome.members = members;
        return Ok(outcome);
    }

    progress(
        Step::Waiting,
        &format!(
            "for {} teammate(s) to take their brief (timeout {} s)",
            members.len(),
            env.timeout.as_secs()
        ),
    );
    let reason = wait_ready(layout, &spec.team, &session, &mut members, env.timeout)?;
    outcome.members = members;
    match reason {
        None => outcome.state = Step::Ready,
        Some(why) => {
            tmux::kill_session(&session).ok();
            outcome.state = Step::Failed;
            outcome.reason = Some(with_dialog_hint(why, spec));
        }
    }
    Ok(outcome)
}

/// Provisioning: the race-safe check, the cleared folder, task folder, inboxes with briefs, then
/// `config.json`. Returns each brief's `msg_id`, in member order.
///
/// # Errors
/// "already exists", "busy" (another create holds the config lock), I/O.
pub fn provision(
    layout: &Layout,
    spec: &Spec,
    lead_session_id: &str,
    tmux_session: Option<&str>,
    now: DateTime<Utc>,
    opts: &LockOptions,
    leads: &Leads,
) -> Result<Vec<String>> {
    let team = &spec.team;
    let config = layout.config_path(team);
    let exists = || already_exists(layout, team);
    // Anything named config.json (a symlink too) is a team that exists.
    if config.stat()?.is_some() {
        return Err(exists());
    }
    let dir_loc = layout.team_dir(team);
    let dir = dir_loc
        .create_dir_all()
        .with_context(|| format!("could not create {}", dir_loc.display()))?;
    // Claude Code's own config lock, taken without waiting: a second create fails fast.
    let guard = match lock::acquire_in(
        &dir,
        "config.json",
        &LockOptions {
            timeout: Duration::ZERO,
            ..*opts
        },
    ) {
        Ok(g) => g,
        Err(e) if matches!(e.downcast_ref::<Error>(), Some(Error::LockTimeout { .. })) => {
            bail!(
                "team '{team}' is being created or updated by another process right now \
                 ({} is held)",
                lock::lock_dir(&config).display()
            )
        }
        Err(e) => return Err(e),
    };
    if dir.stat("config.json")?.is_some() {
        return Err(exists());
    }
    // What a failed earlier attempt left (never the lock we hold), removed without following
    // a symlink anywhere.
    for name in dir
        .names()
        .with_context(|| format!("could not list {}", dir_loc.display()))?
    {
        if name == "config.json.lock" {
            continue;
        }
        dir.remove_tree(&name)
            .with_context(|| format!("could not clear {}", dir_loc.join(&name).display()))?;
    }
    let tasks_root = layout.tasks_root();
    let tasks = layout.tasks_dir(team);
    tasks_root
        .create_dir_all()
        .and_then(|d| d.remove_tree(team.as_str()))
        .with_context(|| format!("could not clear {}", tasks.display()))?;
    tasks
        .create_dir_all()
        .with_context(|| format!("could not create {}", tasks.display()))?;

    dir.sub_create("inboxes", 0o777)
        .with_context(|| format!("could not create {}", layout.inboxes_dir(team).display()))?;
    let lead = MemberName::parse(LEAD)?;
    store::atomic_write(&layout.inbox_path(team, &lead), b"[]")?;
    let mut ids = Vec::new();
    for m in &spec.members {
        let inbox = layout.inbox_path(team, &m.name);
        store::atomic_write(&inbox, b"[]")?;
        let msg = NewMessage {
            from: LEAD.into(),
            text: m.brief.clone(),
            summary: None,
            timestamp: now,
            color: None,
            msg_id: id::random_msg_id().to_string(),
        };
        store::append(&inbox, &msg.to_entry(), false, opts)?;
        ids.push(msg.msg_id);
    }

    // teamctl's private record that it leads this team, before the team exists: what decides
    // that teamctl speaks as its lead and may take it down (never config.json's own say-so).
    let record = lead::new_record(
        layout,
        team,
        lead_session_id,
        now.timestamp_millis(),
        tmux_session,
        Some(&spec.cwd),
    );
    leads.record(layout, team, &record)?;

    let doc = config_doc(spec, lead_session_id, now, tmux_session);
    let tmp = format!("config.json.tmp.{}", id::temp_suffix());
    store::atomic_write_in(&dir, &tmp, store::render(&doc).as_bytes())?;
    // link(2) publishes the file and fails if one appeared meanwhile: never an overwrite.
    let linked = dir.hard_link(&tmp, "config.json");
    let _ = dir.unlink(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Err(exists()),
        Err(e) => return Err(e).with_context(|| format!("could not create {}", config.display())),
    }
    guard.release()?;
    Ok(ids)
}

fn already_exists(layout: &Layout, team: &TeamName) -> anyhow::Error {
    anyhow::anyhow!(
        "team '{team}' already exists ({}); it is never overwritten: pick another name or \
         remove it with `teamctl delete {team}`",
        layout.config_path(team).display()
    )
}

#[allow(clippy::too_many_arguments)]
fn start_panes(
    layout: &Layout,
    spec: &Spec,
    env: &LaunchEnv,
    claude: &Path,
    lead_session_id: &str,
    members: &mut [MemberOutcome],
    session: &str,
    opts: &LockOptions,
    progress: &mut dyn FnMut(Step, &str),
) -> Result<()> {
    for (i, (m, out)) in spec.members.iter().zip(members.iter_mut()).enumerate() {
        let pane = if i == 0 {
            tmux::new_session(session, m.name.as_str())?
        } else {
            tmux::new_window(session, m.name.as_str())?
        };
        // The teammate runs elsewhere (`cd <cwd>`): a relative config dir would move.
        let root = std::path::absolute(layout.root())
            .with_context(|| format!("could not resolve {}", layout.root().display()))?;
        let cmd = teammate_command(
            &root,
            spec,
            claude,
            &env.claude.passthrough,
            &m.name,
            color_of(i),
            lead_session_id,
        );
        // Record the pane before the teammate runs, as a lead does (spec §8.1 step 3).
        set_pane(layout, &spec.team, m.name.as_str(), &pane, opts)?;
        out.pane = Some(pane.clone());
        out.state = MemberState::Starting;
        tmux::respawn(&pane, &cmd, &env.claude.pane_env)?;
        progress(
            Step::Launching,
            &format!("{} in pane {pane}: {cmd}", m.name),
        );
    }
    Ok(())
}

/// Sets `tmuxPaneId` and `backendType: "tmux"` on a member, under the config lock.
///
/// # Errors
/// Lock timeout, a corrupt `config.json`, I/O.
pub fn set_pane(
    layout: &Layout,
    team: &TeamName,
    member: &str,
    pane: &str,
    opts: &LockOptions,
) -> Result<()> {
    let path = layout.config_path(team);
    store::rewrite(
        &path,
        opts,
        |b| store::parse_object(b, &path),
        |doc| {
            let entry = doc
                .get_mut("members")
                .and_then(Value::as_array_mut)
                .and_then(|ms| {
                    ms.iter_mut()
                        .filter_map(Value::as_object_mut)
                        .find(|m| m.get("name").and_then(Value::as_str) == Some(member))
                });
            let Some(entry) = entry else {
                bail!("member '{member}' disappeared from {}", path.display());
            };
            entry.insert("tmuxPaneId".into(), pane.into());
            entry.insert("backendType".into(), "tmux".into());
            Ok((true, ()))
        },
    )
}

/// Whether `member` has taken the brief `brief_id`: it is gone from its inbox or marked read.
pub fn brief_taken(layout: &Layout, team: &TeamName, member: &str, brief_id: &str) -> bool {
    let Ok(name) = MemberName::parse(member) else {
        return false;
    };
    match store::read_inbox(&layout.inbox_path(team, &name)) {
        Ok(Some(entries)) => !entries.iter().any(|e| {
            id::entry_id(e) == brief_id && e.get("read").and_then(Value::as_bool) != Some(true)
        }),
        _ => false,
    }
}

/// The members with an `idle_notification` in the lead's inbox.
pub fn reported(layout: &Layout, team: &TeamName) -> HashSet<String> {
    let lead = MemberName::parse(LEAD).expect("valid name");
    let Ok(Some(entries)) = store::read_inbox(&layout.inbox_path(team, &lead)) else {
        return HashSet::new();
    };
    entries
        .iter()
        .filter_map(|e| {
            let f = Frame::decode(e.get("text")?.as_str()?)?;
            (f.frame_type == "idle_notification")
                .then(|| e.get("from")?.as_str().map(String::from))?
        })
        .collect()
}

/// Polls until every member is ready, one's pane dies, or `timeout`. Returns the failure reason.
fn wait_ready(
    layout: &Layout,
    team: &TeamName,
    session: &str,
    members: &mut [MemberOutcome],
    timeout: Duration,
) -> Result<Option<String>> {
    let end = Instant::now() + timeout;
    loop {
        let reported = reported(layout, team);
        let panes = tmux::panes(session);
        for m in members.iter_mut() {
            if m.state != MemberState::Starting {
                continue;
            }
            if reported.contains(&m.name) || brief_taken(layout, team, &m.name, &m.brief_id) {
                m.state = MemberState::Ready;
                continue;
            }
            let pane = panes.iter().find(|p| Some(&p.id) == m.pane.as_ref());
            if pane.is_none_or(|p| p.dead) {
                m.state = MemberState::Exited;
            }
        }
        let exited: Vec<&MemberOutcome> = members
            .iter()
            .filter(|m| m.state == MemberState::Exited)
            .collect();
        if !exited.is_empty() {
            // tmux marks a pane dead a moment before it knows the exit status (and, with
            // tmux 3.3 under load, sometimes never reports it: then it is left out).
            let until = Instant::now() + Duration::from_millis(300);
            let mut panes = tmux::panes(session);
            while Instant::now() < until
                && exited.iter().any(|m| {
                    panes
                        .iter()
                        .any(|p| Some(&p.id) == m.pane.as_ref() && p.status.is_none())
                })
            {
                thread::sleep(Duration::from_millis(20));
                panes = tmux::panes(session);
            }
            return Ok(Some(describe(
                "exited before taking its brief",
                &exited,
                &panes,
            )));
        }
        if members.iter().all(|m| m.state == MemberState::Ready) {
            return Ok(None);
        }
        if Instant::now() >= end {
            let late: Vec<&MemberOutcome> = members
                .iter()
                .filter(|m| m.state != MemberState::Ready)
                .collect();
            let what = format!("did not take its brief within {} s", timeout.as_secs_f64());
            return Ok(Some(describe(&what, &late, &panes)));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// `why`, plus what settles it when a teammate's last lines show a start-up dialog (the
/// onboarding screens, the API key approval, the trust dialog, the bypass prompt).
fn with_dialog_hint(why: String, spec: &Spec) -> String {
    use crate::ops::run::{Dialog, detect_dialog};
    let dialogs: Vec<Dialog> = why
        .split("last lines of its pane:")
        .skip(1)
        .filter_map(detect_dialog)
        .filter(|d| {
            matches!(
                d,
                Dialog::Onboarding | Dialog::ApiKey | Dialog::Trust | Dialog::Bypass
            )
        })
        .collect();
    let Some(first) = dialogs.first() else {
        return why;
    };
    let skip = if dialogs.contains(&Dialog::Bypass) || spec.permission.bypasses() {
        " --skip-permissions"
    } else {
        ""
    };
    format!(
        "{why}\nthe teammate waits at {} ({}): `teamctl prepare --cwd {}{skip}` settles \
         Claude Code's start-up dialogs",
        first.title(),
        first.as_str(),
        shell_quote(&spec.cwd.to_string_lossy())
    )
}

fn describe(what: &str, who: &[&MemberOutcome], panes: &[tmux::Pane]) -> String {
    let mut out = Vec::new();
    for m in who {
        let pane = m.pane.as_deref().unwrap_or("");
        let status = panes
            .iter()
            .find(|p| p.id == pane)
            .and_then(|p| p.status)
            .map(|s| format!(", exit status {s}"))
            .unwrap_or_default();
        let tail = tmux::tail(pane, 15);
        let tail = if tail.is_empty() {
            "(empty)".to_string()
        } else {
            tail
        };
        out.push(format!(
            "'{}' {what} (pane {pane}{status}); last lines of its pane:\n{tail}",
            m.name
        ));
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("worker@demo"), "worker@demo");
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn member_lines() {
        let got = parse_member_lines("# c\n\nalice: Review: auth  \n bob :tests\n").unwrap();
        assert_eq!(
            got,
            [
                ("alice".to_string(), "Review: auth".to_string()),
                ("bob".to_string(), "tests".to_string())
            ]
        );
        let err = parse_member_lines("alice: x\nbob\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: expected `name: brief`");
    }

    #[test]
    fn colours_start_at_blue() {
        let c: Vec<&str> = (0..9).map(|i| color_of(i).as_str()).collect();
        assert_eq!(
            c,
            [
                "blue", "green", "yellow", "purple", "orange", "pink", "cyan", "red", "blue"
            ]
        );
    }

    #[test]
    fn command_line() {
        let spec = Spec {
            team: TeamName::parse("review-42").unwrap(),
            description: None,
            cwd: PathBuf::from("/work/my repo"),
            members: vec![],
            model: Some("claude-opus-5-5".into()),
            agent_type: Some("reviewer".into()),
            permission: Permission::Mode("acceptEdits".into()),
            launch: Launch::Tmux,
        };
        let cmd = teammate_command(
            Path::new("/c"),
            &spec,
            Path::new("/bin/claude"),
            &[("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into())],
            &MemberName::parse("alice").unwrap(),
            Color::Blue,
            "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d",
        );
        assert_eq!(
            cmd,
            "cd '/work/my repo' && env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 \
             CLAUDE_CONFIG_DIR=/c ANTHROPIC_BASE_URL=http://127.0.0.1:9 /bin/claude \
             --agent-id alice@review-42 --agent-name alice --team-name review-42 \
             --agent-color blue --parent-session-id 3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d \
             --agent-type reviewer --model claude-opus-5-5 --permission-mode acceptEdits"
        );
    }

    #[test]
    fn a_dialog_in_a_pane_names_prepare() {
        let spec = Spec {
            team: TeamName::parse("review-42").unwrap(),
            description: None,
            cwd: PathBuf::from("/work/my repo"),
            members: vec![],
            model: None,
            agent_type: None,
            permission: Permission::Mode("default".into()),
            launch: Launch::Tmux,
        };
        let trust = "'alice' did not take its brief within 30 s (pane %1); last lines of its pane:\n \
                     Accessing workspace:\n /work/my repo\n ❯ 1. Yes, I trust this folder\n \
                     Enter to confirm · Esc to cancel";
        let hinted = with_dialog_hint(trust.into(), &spec);
        assert!(
            hinted.ends_with(
                "the teammate waits at the workspace trust dialog (trust): `teamctl prepare \
                 --cwd '/work/my repo'` settles Claude Code's start-up dialogs"
            ),
            "{hinted}"
        );
        let plain =
            "'alice' exited before taking its brief (pane %1); last lines of its pane:\nbye";
        assert_eq!(with_dialog_hint(plain.into(), &spec), plain);
    }
}
