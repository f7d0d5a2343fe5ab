//! The whole state machine of a create: `validating → provisioning → launching → waiting →
//! ready`, or `failed`, each step reported as it starts.

use std::path::Path;

use anyhow::{Context, Result, bail};
use uuid::Uuid;

use super::confine;
use super::launch::{Provisioned, Starting, start_panes};
use super::outcome::{MemberOutcome, MemberState, Outcome, Step};
use super::provision::{already_exists, launch_record, provision, write_briefs};
use super::ready::{START_WAIT, inbox_reads, wait_ready, wait_started, with_dialog_hint};
use super::runtime;
use super::spec::{Creating, Launch, Spec, color_of, validate_members};
use super::worktree;
use crate::host::claude::ClaudeInfo;
use crate::host::resolve::{self, Found};
use crate::host::tmux::{self, session_name};
use crate::sandbox::Rules;
use crate::team::lead;

/// Runs the whole state machine, reporting each step to `progress` (state, one line of text).
/// Validation problems, an existing team and a create already running are errors; a failure
/// while launching or waiting is an [`Outcome`] with state `failed` (the files stay, for
/// inspection; the tmux session is killed).
///
/// # Errors
/// Usage errors, "already exists", "busy", binary or tmux not found, I/O while provisioning.
pub fn create(c: &Creating, progress: &mut dyn FnMut(Step, &str)) -> Result<Outcome> {
    let Creating {
        layout,
        spec,
        launch,
        leads,
        ..
    } = *c;
    let session = session_name(&spec.team);
    let claude = validate(c, &session, progress)?;
    let engine = confine::engine(c)?;
    let trees = worktree::plan(layout, leads, spec)?;
    if let Some(e) = &engine {
        confine::check(c, &trees)?;
        progress(
            Step::Validating,
            &format!("sandbox: {} ({})", e.kind.as_str(), e.path),
        );
    }

    if trees.any() {
        make_worktrees(c, &trees, progress)?;
    }
    progress(
        Step::Provisioning,
        &layout.config_path(&spec.team).display().to_string(),
    );
    let lead_session_id = Uuid::new_v4().to_string();
    let tmux_session = (spec.launch == Launch::Tmux).then_some(session.as_str());
    let briefs = provision(c, &trees, &lead_session_id, tmux_session)
        .inspect_err(|_| worktree::unmake_all(&trees))?;
    let mut members = provisioned(spec, briefs.clone());
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

    let bin = Path::new(&claude.path);
    let rules = match engine.as_ref().map(|e| confine::rules(c, &trees, e, bin)) {
        None => Vec::new(),
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            outcome.state = Step::Failed;
            outcome.reason = Some(format!("the sandboxes could not be made: {e:#}"));
            outcome.members = members;
            return Ok(outcome);
        }
    };
    for (m, r) in members.iter_mut().zip(&rules) {
        m.sandbox = r.as_ref().map(Rules::shown);
    }
    progress(Step::Launching, &format!("tmux session {session}"));
    let team = Provisioned {
        trees: &trees,
        lead_session_id: &lead_session_id,
        session: &session,
        rules: &rules,
    };
    let with = Starting {
        claude: bin,
        passthrough: &env.claude.passthrough,
        pane_env: &env.claude.pane_env,
        vars: &env.vars,
    };
    let unread = inbox_reads(layout, &spec.team, &members);
    let (made, launched) = start_panes(c, &team, &with, &mut members, progress);
    record_session(c, &team, made.as_ref())?;
    if let Err(e) = launched {
        // Only the session this create made: one of that name another create made first (a
        // race lost on a shared tmux server) is the winner's.
        if let Some(at) = &made {
            tmux::Server::env().kill_session_id(&at.session_id).ok();
        }
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
            "for {} teammate(s) to start, then to take their brief (timeout {} s)",
            members.len(),
            env.timeout.as_secs()
        ),
    );
    // Each brief only once every teammate has started: a teammate's first turn rewrites
    // config.json in place, and one that reads it torn as it starts never reports idle
    // (docs/research/claude-code-behaviour.md §8).
    let waited = (members.as_slice(), unread.as_slice());
    let late = wait_started(layout, &spec.team, &session, waited, START_WAIT);
    if !late.is_empty() {
        progress(
            Step::Waiting,
            &format!(
                "no sign that {} started within {} s: the briefs are written all the same",
                late.join(", "),
                START_WAIT.as_secs()
            ),
        );
    }
    write_briefs(c, &briefs)?;
    let reason = wait_ready(layout, &spec.team, &session, &mut members, env.timeout)?;
    outcome.members = members;
    match reason {
        None => outcome.state = Step::Ready,
        Some(why) => {
            if let Some(at) = &made {
                tmux::Server::env().kill_session_id(&at.session_id).ok();
            }
            outcome.state = Step::Failed;
            outcome.reason = Some(with_dialog_hint(why, spec));
        }
    }
    Ok(outcome)
}

/// Makes the teammates' git worktrees and, when asked, trusts them in `.claude.json` as their
/// folder is, telling `progress` how that went.
fn make_worktrees(
    c: &Creating,
    trees: &worktree::Trees,
    progress: &mut dyn FnMut(Step, &str),
) -> Result<()> {
    let Creating {
        layout,
        spec,
        launch,
        leads,
        ..
    } = *c;
    progress(
        Step::Provisioning,
        &format!(
            "git worktrees in {}",
            leads.worktrees_dir(layout, &spec.team).display()
        ),
    );
    worktree::make(leads, trees)?;
    if let Some(req) = launch.and_then(|l| l.trust.as_ref()) {
        let said = match worktree::trust(req, spec, trees) {
            Ok(true) => "trusted in .claude.json as their folder is".to_string(),
            Ok(false) => format!(
                "{} is not trusted in .claude.json, so neither are the worktrees",
                spec.cwd.display()
            ),
            Err(e) => format!("the worktrees could not be trusted as their folder is: {e:#}"),
        };
        progress(Step::Provisioning, &said);
    }
    Ok(())
}

/// The teammates as provisioned, each with the id of the brief written to its inbox.
fn provisioned(spec: &Spec, briefs: Vec<String>) -> Vec<MemberOutcome> {
    spec.members
        .iter()
        .zip(briefs)
        .enumerate()
        .map(|(i, (m, brief_id))| MemberOutcome {
            name: m.name.to_string(),
            color: color_of(i).as_str().to_string(),
            pane: None,
            state: MemberState::Provisioned,
            brief_id,
            sandbox: None,
        })
        .collect()
}

/// Validating: the teammates, teamctl's private record, the working directory, no team of that
/// name; when launching, `claude` (returned, as found), tmux and no session of that name.
fn validate(
    c: &Creating,
    session: &str,
    progress: &mut dyn FnMut(Step, &str),
) -> Result<Option<ClaudeInfo>> {
    let Creating {
        layout,
        spec,
        launch,
        leads,
        ..
    } = *c;
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
    if spec.launch != Launch::Tmux {
        return Ok(None);
    }
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
    // Each teammate's runtime flags (--mcp-config, --effort, …) must be ones this client takes.
    if spec.members.iter().any(|m| !m.runtime.flags().is_empty()) {
        let help = resolve::help(&path, env.version_timeout);
        runtime::check_client(&spec.members, help.as_deref(), version.as_deref())?;
    }
    let claude = ClaudeInfo {
        path: path.to_string_lossy().into_owned(),
        found_by,
        version,
    };
    if !tmux::available() {
        bail!("tmux is not installed (or not on PATH); install it, or use --launch none");
    }
    if tmux::Server::env().has_session(session) {
        bail!(
            "a tmux session '{session}' already exists (left by an earlier run?); \
             remove it with `tmux kill-session -t {session}` or `teamctl delete {}`",
            spec.team
        );
    }
    Ok(Some(claude))
}

/// The session's id beside its name in the private record: `delete` kills this session and
/// no other, not even a later one of the same name. `made`: where the session this create
/// made runs (none made: none recorded, never one of that name someone else made).
fn record_session(c: &Creating, team: &Provisioned, made: Option<&tmux::Where>) -> Result<()> {
    let Creating {
        layout,
        spec,
        leads,
        now,
        ..
    } = *c;
    let Provisioned {
        trees,
        lead_session_id,
        session,
        rules,
    } = *team;
    let mut record = lead::new_record(
        layout,
        &spec.team,
        lead_session_id,
        now.timestamp_millis(),
        Some(&spec.cwd),
    );
    record.tmux_session = made.map(|_| session.to_string());
    let Some(at) = made.cloned() else {
        // It made none: the record names none, so nothing takes another's for it.
        record.launch = Some(launch_record(spec, trees, rules));
        return leads.record(layout, &spec.team, &record);
    };
    record.tmux_session_id = Some(at.session_id);
    record.tmux_socket = Some(at.socket);
    record.tmux_server_id = Some(at.server_id);
    record.launch = Some(launch_record(spec, trees, rules));
    leads.record(layout, &spec.team, &record)
}
