//! The machine around the files: the `claude` binary, agent teams switched on, the start-up
//! dialogs an unattended Claude Code would stop at, tmux.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::finding::{Check, ok, warn};
use super::inputs::{AGENT_TEAMS_VAR, Inputs};
use crate::store::dir::Loc;

/// The `claude` binary, agent teams switched on, the start-up dialogs, tmux.
pub(super) fn machine(inputs: &Inputs) -> Vec<Check> {
    let settings = inputs.layout.root_loc().join("settings.json");
    let mut out = vec![claude(inputs), agent_teams(inputs, &settings)];
    out.extend(start_up_dialogs(inputs, &settings));
    out.push(tmux(inputs.path_var.as_deref()));
    out
}

/// Where `claude` is, found as `create` finds it, and its version.
fn claude(inputs: &Inputs) -> Check {
    match crate::host::resolve::find(&inputs.claude) {
        Ok(found) => {
            let bin = &found.path;
            let by = found.found_by.as_str();
            ok(
                "claude",
                None,
                Some(bin),
                match crate::host::resolve::version(bin, Duration::from_secs(5)) {
                    Some(v) => format!("claude {v} at {} (found by: {by})", bin.display()),
                    None => format!(
                        "claude at {} (found by: {by}; its version could not be read)",
                        bin.display()
                    ),
                },
            )
        }
        Err(e) => {
            // The error's first line says what failed; the rest lists every place searched.
            let text = format!("{e:#}");
            let mut lines = text.lines();
            let mut c = warn(
                "claude",
                None,
                None,
                lines.next().unwrap_or_default().to_string(),
                "install Claude Code (npm install -g @anthropic-ai/claude-code), or set \
                 TEAMCTL_CLAUDE_BIN to its path",
            );
            c.details = lines.map(|l| l.trim().to_string()).collect();
            c
        }
    }
}

/// Agent teams switched on, in the environment or in `settings.json`.
fn agent_teams(inputs: &Inputs, settings: &Loc) -> Check {
    let from_settings = settings
        .read()
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| {
            v.get("env")?.get(AGENT_TEAMS_VAR).map(|x| match x {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        });
    let check = "agent_teams";
    match (&inputs.agent_teams_env, &from_settings) {
        (Some(v), _) if truthy(v) => ok(
            check,
            None,
            None,
            format!("agent teams enabled ({AGENT_TEAMS_VAR}={v} in the environment)"),
        ),
        (_, Some(v)) if truthy(v) => ok(
            check,
            None,
            Some(settings),
            format!(
                "agent teams enabled ({AGENT_TEAMS_VAR}={v} in {})",
                settings.display()
            ),
        ),
        _ => warn(
            check,
            None,
            None,
            format!(
                "agent teams are not enabled ({AGENT_TEAMS_VAR} is not set to 1 in the \
                 environment or in settings.json)"
            ),
            &format!(
                "export {AGENT_TEAMS_VAR}=1, or add \"env\": {{\"{AGENT_TEAMS_VAR}\": \"1\"}} to {}",
                settings.display()
            ),
        ),
    }
}

/// tmux on `PATH`, and its version.
fn tmux(path: Option<&OsStr>) -> Check {
    match find_on_path("tmux", path) {
        Some(bin) => ok(
            "tmux",
            None,
            Some(&bin),
            match version_of(&bin, "-V") {
                Some(v) => format!("{v} at {}", bin.display()),
                None => format!("tmux at {}", bin.display()),
            },
        ),
        None => warn(
            "tmux",
            None,
            None,
            "tmux not found on PATH: teammates in tmux panes cannot start (in-process ones can)"
                .into(),
            "install tmux (apt-get install tmux, brew install tmux)",
        ),
    }
}

/// The start-up dialogs a Claude Code started unattended in the current directory would stop
/// at (as `run` checks them), with `teamctl prepare` as the fix; the bypass prompt is only
/// mentioned, as only --dangerously-skip-permissions needs it.
fn start_up_dialogs(inputs: &Inputs, settings: &Path) -> Vec<Check> {
    use crate::ops::dialogs::{Dialog, blockers};
    let check = "start_up_dialogs";
    let Some(cj_path) = &inputs.claude_json else {
        return Vec::new();
    };
    let read = |p: &Path| {
        fs::read(p)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
    };
    let cj = read(cj_path);
    let settings = vec![(settings.to_path_buf(), read(settings))];
    let cwd = fs::canonicalize(&inputs.cwd).unwrap_or_else(|_| inputs.cwd.clone());
    let all = blockers(
        cj_path,
        cj.as_ref(),
        &settings,
        &cwd,
        inputs.api_key.as_deref(),
        true,
    );
    let bypass = all.iter().any(|b| b.dialog == Dialog::Bypass);
    let blocking: Vec<_> = all.iter().filter(|b| b.dialog != Dialog::Bypass).collect();
    let bypass_note = if bypass {
        "the bypass-permissions prompt: not accepted (only --dangerously-skip-permissions needs \
         it: add --skip-permissions)"
    } else {
        "the bypass-permissions prompt: accepted"
    };
    let prepare = format!(
        "teamctl prepare --cwd {}",
        crate::host::claude::shell_quote(&cwd.to_string_lossy())
    );
    if blocking.is_empty() {
        let mut c = ok(
            check,
            None,
            Some(cj_path),
            format!(
                "an unattended Claude Code in {} would ask nothing at start-up",
                cwd.display()
            ),
        );
        c.details = vec![bypass_note.to_string()];
        return vec![c];
    }
    let names: Vec<&str> = blocking.iter().map(|b| b.dialog.as_str()).collect();
    let mut c = warn(
        check,
        None,
        Some(cj_path),
        format!(
            "an unattended Claude Code (run, create, CI) in {} would stop at: {}",
            cwd.display(),
            names.join(", ")
        ),
        &format!("{prepare} (add --skip-permissions for --dangerously-skip-permissions)"),
    );
    c.details = blocking
        .iter()
        .map(|b| format!("{} ({})", b.dialog.title(), b.dialog.as_str()))
        .chain(std::iter::once(bypass_note.to_string()))
        .collect();
    vec![c]
}

/// The first executable file called `name` in the folders of `path_var` (the `which` crate's
/// search; empty entries, the current directory, are skipped as in [`crate::host::resolve`]).
pub fn find_on_path(name: &str, path_var: Option<&OsStr>) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path_var?)
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    let joined = std::env::join_paths(dirs).ok()?;
    which::which_in_global(name, Some(joined)).ok()?.next()
}

/// The first line `bin <flag>` prints, waiting at most 5 s (see
/// [`crate::host::resolve::first_line`]).
fn version_of(bin: &Path, flag: &str) -> Option<String> {
    let (_, line) = crate::host::resolve::first_line(bin, flag, Duration::from_secs(5))?;
    (!line.is_empty()).then_some(line)
}

/// Claude Code's idea of a true environment value: `1`, `true`, `yes`, `on` (any case).
pub fn truthy(v: &str) -> bool {
    ["1", "true", "yes", "on"]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(v.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truthy_values() {
        for t in ["1", "true", "TRUE", "yes", "on", " 1 "] {
            assert!(truthy(t), "{t}");
        }
        for f in ["", "0", "false", "no", "off", "2"] {
            assert!(!truthy(f), "{f}");
        }
    }

    #[test]
    fn path_lookup_needs_an_executable_file() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(b.join("tool")).unwrap();
        fs::write(a.join("tool"), "").unwrap();
        let path = std::env::join_paths([&b, &a]).unwrap();
        assert_eq!(find_on_path("tool", Some(&path)), None, "not executable");
        fs::set_permissions(a.join("tool"), fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_on_path("tool", Some(&path)), Some(a.join("tool")));
        assert_eq!(find_on_path("tool", None), None);
    }
}
