//! The lead: how it is started, the run from start to end, its record, and how it is ended.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::error::usage;
pub use crate::host::claude::Dialog;
use crate::host::claude::{ClaudeInfo, shell_quote};
use crate::host::proc::{pid_alive, proc_start};
use crate::host::{resolve, tmux};
use crate::observe::spend::SpendReader;
use crate::ops::export::{self, Exported, RunInfo, RunMerge};
use crate::store::dir::Loc;
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, SessionId, TeamName, shown, shown_list};

use super::interrupted;
use super::monitor::{Keeping, Pane, Resuming, Watched, watch};
use super::outcome::{Caller, Orphans, Outcome, Resumed, RunEvent, State};
use super::preflight::{check_name, lock_name, read_json, read_json_loc};
use super::spec::{RunEnv, Running, Spec};
use crate::ops::dialogs::blockers;
use crate::ops::rescue::Relaunch;

/// The tmux session of the run called `name`.
pub fn session_name(name: &str) -> String {
    format!("teamctl-run-{name}")
}

/// The lead's command line (shell): `cd <cwd> && exec <claude> --session-id <id> [--model M]
/// [permission] [--teammate-mode X] -- "$(cat <prompt file>)"`, with `--resume <id>` instead of
/// `--session-id` for a session carried on ([`Spec::resume`]). The prompt comes from a file so
/// that any text, however long, reaches the lead as one argument, and never goes through tmux.
/// The session is a [`SessionId`]: never an option.
pub fn lead_command(
    spec: &Spec,
    claude: &Path,
    session_id: &SessionId,
    prompt_file: &Path,
) -> String {
    let q = |s: &str| shell_quote(s);
    let session_flag = if spec.resume.is_some() {
        "--resume"
    } else {
        "--session-id"
    };
    let mut parts = vec![
        "cd".to_string(),
        q(&spec.cwd.to_string_lossy()),
        "&&".into(),
        "exec".into(),
        q(&claude.to_string_lossy()),
        session_flag.into(),
        q(session_id.as_str()),
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

/// Runs the whole thing (see the module docs), telling and asking `caller` as it goes
/// ([`Caller`]).
///
/// # Errors
/// Binary or tmux missing, another run of that name, the tmux session already existing, I/O;
/// with [`Spec::resume`], a team or session that cannot be resumed.
/// Blocking dialogs, an early exit of the lead and the timeout are outcomes, not errors.
pub fn run(layout: &Layout, spec: &Spec, env: &RunEnv, caller: Caller) -> Result<Outcome> {
    let Caller {
        progress,
        interrupted,
        ended,
    } = caller;
    let start = Instant::now();
    let running = Running {
        layout,
        spec,
        env,
        start,
    };
    let mut out = Outcome::failed();
    let what = match &spec.resume {
        Some(t) => format!("run '{}', resuming {}", spec.name, shown(t)),
        None => format!("run '{}'", spec.name),
    };
    progress(RunEvent::Progress(State::Validating, &what));
    let found = match &spec.resume {
        Some(what) => Some(interrupted::find(layout, what, &spec.cwd, &env.records)?),
        None => None,
    };
    let Some(ready) = validate(layout, spec, env, found.as_ref(), &mut out)? else {
        return Ok(finish(out, start));
    };
    let (session_id, prompt_file) = match &found {
        None => {
            let id = SessionId::new_random();
            (id, write_prompt(env, spec, &spec.prompt)?)
        }
        Some(found) => brief(running, found, &ready, &mut out, progress)?,
    };
    out.lead_session_id = Some(session_id.to_string());
    let lead = Lead {
        command: lead_command(spec, &ready.claude, &session_id, &prompt_file),
        session_id: session_id.to_string(),
        prompt_file,
        resumed: found.map(|f| (f.team, f.transcript)),
    };
    follow(
        running,
        &ready,
        &lead,
        out,
        Caller {
            progress,
            interrupted,
            ended,
        },
    )
}

/// For a resumed `lead`, notes in teamctl's journal ([`crate::team::actions`]) that it was
/// resumed in `pane`; a warning when it could not be (the lead runs all the same).
fn journal(env: &RunEnv, lead: &Lead, pane: &str) -> Option<String> {
    let (team, _) = lead.resumed.as_ref()?;
    let line = crate::team::actions::Action {
        at: crate::time::iso_millis((env.clock)()),
        team: team.to_string(),
        member: crate::team::config::LEAD.to_string(),
        action: crate::team::actions::Kind::Resume,
        session_id: Some(lead.session_id.clone()),
        pane: pane.to_string(),
        why: "run --resume".to_string(),
    };
    let e = env.records.actions()?.append(&line).err()?;
    Some(format!("warning: the resume was not journaled: {e:#}"))
}

/// The prompt of a resumed lead ([`resume`]), written; what became of the old teammates and
/// what the prompt carries, in `out` and as progress; the unread messages it carries marked
/// read. Returns the session to resume and the prompt file.
fn brief(
    running: Running,
    found: &interrupted::Interrupted,
    ready: &Ready,
    out: &mut Outcome,
    progress: &mut dyn FnMut(RunEvent),
) -> Result<(SessionId, PathBuf)> {
    let Running {
        layout, spec, env, ..
    } = running;
    let orphans = ready.orphans.clone().unwrap_or_default();
    if !orphans.ended.is_empty() {
        progress(RunEvent::Progress(
            State::Validating,
            &format!(
                "ended {} of the interrupted run (tmux session {}): a resumed lead never reads \
                 what its old teammates send",
                shown_list(&orphans.ended),
                ready.session
            ),
        ));
    }
    if !orphans.left_running.is_empty() {
        progress(RunEvent::Progress(
            State::Validating,
            &format!(
                "left running, outside tmux session {}: {}; the resumed lead will not read \
                 what they send",
                ready.session,
                orphans.left_running.join(", ")
            ),
        ));
    }
    let unread = found.unread(layout);
    let prompt = found.prompt(&orphans, &unread, &spec.prompt);
    let file = write_prompt(env, spec, &prompt)?;
    // In the prompt now (or stale frames): marked read, so that nothing delivers them twice.
    found.mark_read(layout, &unread.entries, &LockOptions::default())?;
    let left = match unread.left {
        0 => String::new(),
        n => format!(", {n} more left unread (too long for it)"),
    };
    progress(RunEvent::Progress(
        State::Validating,
        &format!(
            "resuming lead session {} of team {}: {} open task(s), {} unread message(s) to it \
             carried in its prompt{left}",
            found.session_id,
            found.team,
            found.task_count(),
            unread.messages.len()
        ),
    ));
    out.team = Some(found.team.to_string());
    out.resumed = Some(Resumed {
        team: found.team.to_string(),
        orphans,
        messages: unread.messages.len(),
        open_tasks: found.task_count(),
        lead_session_fixed: 0,
    });
    Ok((found.session_id.clone(), file))
}

/// What a run needs once it is known that the lead can start: the binary and its version, the
/// tmux session it will run in, and the run's name held.
struct Ready {
    claude: PathBuf,
    version: String,
    session: String,
    /// With [`Spec::resume`]: the old lead's teammates that were still running.
    orphans: Option<Orphans>,
    _lock: File,
}

/// The lead to start: its command line, its session id, the file its prompt is read from, and
/// the team it carries on when resumed.
struct Lead {
    command: String,
    session_id: String,
    prompt_file: PathBuf,
    resumed: Option<(TeamName, Loc)>,
}

/// Checks what the run needs (its name, prompt and folder; the binary, tmux; no start-up
/// dialog nobody could answer); with `resuming`, refuses a `teamctl-run-<name>` session that is
/// not the interrupted run's own ([`interrupted::Interrupted::own_session`]), then ends what is left
/// of the interrupted run in its own session ([`interrupted::Interrupted::clear`]) once all that
/// holds. `Ok(None)` when the
/// run fails before starting, with the reason in `out`.
fn validate(
    layout: &Layout,
    spec: &Spec,
    env: &RunEnv,
    resuming: Option<&interrupted::Interrupted>,
    out: &mut Outcome,
) -> Result<Option<Ready>> {
    check_name(&spec.name)?;
    if spec.prompt.trim().is_empty() && resuming.is_none() {
        return Err(usage("the prompt is empty"));
    }
    if !spec.cwd.is_dir() {
        bail!("--cwd {} is not a directory", spec.cwd.display());
    }
    let lock = lock_name(&env.run_dir, &spec.name)?;
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
        return Ok(None);
    };
    if !tmux::available() {
        bail!("tmux is not installed (or `tmux -V` fails): `run` starts the lead in tmux");
    }
    if spec.permission.bypasses() && env.root_without_sandbox {
        out.reason = Some(
            "Claude Code refuses to skip permissions as root: set IS_SANDBOX=1 (in a sandbox) \
             or choose another --permission-mode"
                .into(),
        );
        return Ok(None);
    }
    if let Some((dialog, reason)) = start_up_dialogs(layout, spec, env) {
        out.dialog = Some(dialog);
        out.reason = Some(reason);
        return Ok(None);
    }
    let session = session_name(&spec.name);
    // Every refusal before anything is ended: a session of that name where the lead would
    // start is the interrupted run's own (proven by its record) or this run cannot start.
    let server = tmux::Server::env();
    let own = resuming.and_then(|r| r.own_session(layout, &session));
    if let Some(at) = server.locate(&session).filter(|_| resuming.is_some()) {
        let mine = own.as_ref().is_some_and(|o| o.at == at);
        if !mine {
            bail!(
                "tmux session {session} already exists and is not the interrupted run's (its \
                 record names another, or none): nothing was ended; end it with \
                 `tmux kill-session -t {session}` if it is not in use, or pick another --name"
            );
        }
    }
    let orphans = resuming.map(|r| r.clear(own.as_ref(), &session));
    if server.has_session(&session) {
        bail!(
            "tmux session {session} already exists (an earlier `run --name {}` kept with \
             --keep?); end it with `tmux kill-session -t {session}` or pick another --name",
            spec.name
        );
    }
    Ok(Some(Ready {
        claude: found.path,
        version,
        session,
        orphans,
        _lock: lock,
    }))
}

/// The start-up dialogs the lead would stop at, from the files it reads (the first, and the
/// reason naming them all with what settles them).
fn start_up_dialogs(layout: &Layout, spec: &Spec, env: &RunEnv) -> Option<(Dialog, String)> {
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
        spec.permission.bypasses(),
    );
    let first = blocked.first()?;
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
    let reason = format!(
        "the lead would stop at a start-up dialog nobody can answer; {}; `{prepare}` settles \
         them all",
        lines.join("; ")
    );
    Some((first.dialog, reason))
}

/// Writes `prompt` where only the user may read it (it leaves the file as soon as the lead
/// has it): a new file, 0600, created exclusively in the private run folder, never through a
/// symlink.
fn write_prompt(env: &RunEnv, spec: &Spec, prompt: &str) -> Result<PathBuf> {
    let name = format!("{}.prompt", spec.name);
    let prompt_file = env.run_dir.join(&name);
    let written = crate::team::data_dir::private_dir(&env.run_dir).and_then(|dir| {
        match dir.unlink(&name) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        dir.create_new(&name, 0o600)?.write_all(prompt.as_bytes())
    });
    written.with_context(|| format!("could not write {}", prompt_file.display()))?;
    Ok(prompt_file)
}

/// The variables of the lead's pane: the caller's for Claude Code, agent teams on, the config
/// dir when one was chosen.
fn lead_env(env: &RunEnv) -> Vec<(String, String)> {
    let mut pane_env = env.claude.pane_env.clone();
    pane_env.extend(env.claude.passthrough.iter().cloned());
    pane_env.push(("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS".into(), "1".into()));
    if let Some(d) = &env.config_dir {
        pane_env.push(("CLAUDE_CONFIG_DIR".into(), d.display().to_string()));
    }
    pane_env
}

/// Starts `lead` in its tmux session, follows its team until the run ends, asks the caller
/// for what it merged ([`Caller::ended`]), takes the record, ends the lead (unless kept) and
/// reads what the team spent.
fn follow(
    running: Running,
    ready: &Ready,
    lead: &Lead,
    mut out: Outcome,
    caller: Caller,
) -> Result<Outcome> {
    let Running {
        layout,
        spec,
        env,
        start,
    } = running;
    let Caller {
        progress,
        interrupted,
        ended,
    } = caller;
    let session = &ready.session;
    let pane = match tmux::Server::env().new_session(session, "lead") {
        Ok(p) => p,
        Err(e) => {
            let _ = fs::remove_file(&lead.prompt_file);
            return Err(e);
        }
    };
    out.tmux_session = Some(session.clone());
    let pane_env = lead_env(env);
    let session_id = &lead.session_id;
    progress(RunEvent::Progress(
        State::Spawning,
        &format!(
            "claude {} in tmux session {session} (pane {pane}), {} {session_id}",
            ready.version,
            if lead.resumed.is_some() {
                "resuming session"
            } else {
                "session id"
            }
        ),
    ));
    let mut spend =
        SpendReader::for_session(layout.root_loc(), Some(session_id), env.records.data_dir());
    // A resumed lead has its prompt once its transcript holds one more than now.
    let resuming = lead.resumed.as_ref().map(|(team, transcript)| Resuming {
        team: team.clone(),
        prompts_before: spend.file(transcript).turn.prompts,
    });
    let server = env.records.leads().and_then(|leads| {
        let at = tmux::Server::env().locate(session)?;
        Some((leads.clone(), at))
    });
    let at = Pane {
        session,
        pane: &pane,
        session_id,
        prompt_file: &lead.prompt_file,
        resuming,
        record: server,
    };
    let relaunch = Relaunch {
        claude: ready.claude.clone(),
        passthrough: env.claude.passthrough.clone(),
        pane_env: pane_env.clone(),
        cwd: spec.cwd.clone(),
        permission: spec.permission.clone(),
        tmux_session: session.clone(),
        members: Vec::new(),
        vars: Default::default(),
    };
    let keeping = Keeping::new(spec.rules, layout, env, relaunch, &env.clock);
    let watched = tmux::Server::env()
        .respawn(&pane, &lead.command, &pane_env)
        .and_then(|()| {
            if let Some(warning) = journal(env, lead, &pane) {
                progress(RunEvent::Progress(State::Spawning, &warning));
            }
            let run = Watched {
                running,
                lead: &at,
                keeping,
            };
            watch(run, &mut out, &mut spend, progress, interrupted)
        });
    let _ = fs::remove_file(&lead.prompt_file);
    out.elapsed_ms = start.elapsed().as_millis() as u64;
    // The team's members as config.json names them, read now while it still exists (the lead
    // removes it as it ends): without a cap nothing has read it yet, and with one the last
    // look may predate a teammate; either way the totals after cleanup would leave out pane
    // teammates' own sessions.
    spend.relocate();
    spend.read();
    // Merged before the record is taken, so that it says what was merged.
    let merged = match &watched {
        Ok(()) => ended(&out),
        Err(_) => None,
    };
    if let Some(path) = &spec.export {
        let failed = watched.as_ref().err().map(|e| format!("{e:#}"));
        let taken = Taken {
            session_id,
            out: &out,
            failed,
            merged,
        };
        let record = record(layout, spec, env, taken, path);
        if let Ok(done) = &record {
            progress(RunEvent::Exported(done));
        }
        out.export = Some(record);
    }
    if let Err(e) = watched {
        cleanup(session, &pane);
        return Err(e);
    }
    if spec.keep {
        out.kept = true;
    } else {
        cleanup(session, &pane);
        out.tmux_session = None;
    }
    forget_removed_team(layout, &at, &out);
    // After cleanup: a session that ended has recorded its own figure by now.
    spend.read();
    // A cache: a failure to save it only makes the next read longer.
    let _ = spend.save();
    out.spend = Some(spend.spend().clone()).filter(|s| !s.is_empty());
    Ok(out)
}

/// Removes the record of the team's tmux server once its lead has removed the team (as a lead
/// does when it ends); a team left behind keeps it, for `status` and `run --resume`.
fn forget_removed_team(layout: &Layout, lead: &Pane, out: &Outcome) {
    let team = out.team.as_deref().and_then(|t| TeamName::parse(t).ok());
    let (Some((leads, _)), Some(team)) = (&lead.record, team) else {
        return;
    };
    if matches!(layout.team_dir(&team).stat(), Ok(None)) {
        // One left behind (it could not be removed) names a session that ended: it matches no
        // team again.
        let _ = leads.remove_run(layout, &team);
    }
}

/// What a run's record is taken from: the lead's session, what the run came to (and why it
/// failed, when it did), and what `--merge-into` merged.
struct Taken<'a> {
    session_id: &'a str,
    out: &'a Outcome,
    failed: Option<String>,
    merged: Option<RunMerge>,
}

/// Writes the record of the run's team (or of the team it would have had, `session-<8 hex>`,
/// when none formed: the lead's transcript is still worth keeping) to `path`.
fn record(
    layout: &Layout,
    spec: &Spec,
    env: &RunEnv,
    taken: Taken,
    path: &Path,
) -> Result<Exported, String> {
    let Taken {
        session_id,
        out,
        failed,
        merged,
    } = taken;
    let team = out
        .team
        .clone()
        .unwrap_or_else(|| format!("session-{}", session_id.get(..8).unwrap_or(session_id)));
    let team = TeamName::parse(&team).map_err(|e| format!("{e:#}"))?;
    let sent = env
        .records
        .sent_log()
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
            cap: spec.cap.into(),
            merge: merged,
        }),
        records: &env.records,
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
    if let Some(pid) = tmux::Server::env().pane_pid(pane) {
        let start = proc_start(pid);
        if tmux::Server::env()
            .panes(session)
            .iter()
            .any(|p| p.id == pane && !p.dead)
        {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .output();
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end && pid_alive(pid, start.as_deref()) == Some(true) {
                thread::sleep(Duration::from_millis(50));
            }
        }
    }
    let _ = tmux::Server::env().kill_session(session);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::claude::Permission;
    use crate::observe::budget::Cap;
    use crate::ops::run::TeammateMode;

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
            rules: crate::observe::keep::Rules::default(),
            max_teammates: None,
            resume: None,
        };
        assert_eq!(
            lead_command(
                &spec,
                Path::new("/bin/claude"),
                &SessionId::parse("0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d").unwrap(),
                Path::new("/d/n.prompt")
            ),
            "cd '/w/my repo' && exec /bin/claude --session-id 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d --model claude-opus-5-5 \
             --dangerously-skip-permissions --teammate-mode in-process -- \"$(cat /d/n.prompt)\""
        );
        // A resumed lead carries on its session instead of starting one under that id.
        let resumed = Spec {
            resume: Some("session-0b1c2d3e".into()),
            model: None,
            teammate_mode: None,
            ..spec
        };
        assert_eq!(
            lead_command(
                &resumed,
                Path::new("/bin/claude"),
                &SessionId::parse("0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d").unwrap(),
                Path::new("/d/n.prompt")
            ),
            "cd '/w/my repo' && exec /bin/claude --resume 0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d \
             --dangerously-skip-permissions -- \"$(cat /d/n.prompt)\""
        );
    }

    #[test]
    fn printable_escapes_control_characters() {
        assert_eq!(printable("a\x1b[2Jb\n\tc\u{7}"), "a\\u{1b}[2Jb\n\tc\\u{7}");
    }
}
