//! Starting the teammates: the command line a lead sends to a teammate's pane, one tmux window
//! per teammate, each pane recorded in `config.json` before its teammate runs. A teammate's own
//! `env` reaches its pane through tmux's standard input, never a command line
//! ([`tmux::Server::respawn_private`]).

use std::path::Path;

use anyhow::{Context, Result};

use super::outcome::{MemberOutcome, MemberState, Step};
use super::spec::{Creating, Spec, color_of};
use super::worktree::Trees;
use crate::error::usage;
use crate::host::claude::TeammateLaunch;
use crate::host::sandbox;
use crate::host::tmux;
use crate::sandbox::Rules;
use crate::team::config::set_pane;
use crate::team::runtime::Vars;

/// A team as provisioned: its teammates' worktrees, its lead's session id, and the tmux
/// session its teammates start in.
#[derive(Debug, Clone, Copy)]
pub struct Provisioned<'a> {
    /// The teammates' worktrees.
    pub trees: &'a Trees,
    /// The lead's session id (`--parent-session-id`).
    pub lead_session_id: &'a str,
    /// The tmux session.
    pub session: &'a str,
    /// The teammates' sandboxes, in member order (`None`: unconfined; empty: none at all).
    pub rules: &'a [Option<Rules>],
}

/// How teammates are started: the `claude` binary, the variables passed on in its command
/// line, and those given to its pane.
#[derive(Debug, Clone, Copy)]
pub struct Starting<'a> {
    /// The `claude` binary.
    pub claude: &'a Path,
    /// The variables passed on in the command line.
    pub passthrough: &'a [(String, String)],
    /// The variables given to the pane.
    pub pane_env: &'a [(String, String)],
    /// What the teammates' `env` takes from teamctl's environment.
    pub vars: &'a Vars,
}

/// The command line a lead sends to a teammate's pane (spec §8.1), shell-quoted: see
/// [`TeammateLaunch::command`].
/// `i` is the teammate's place in `spec.members`, its colour [`color_of`]`(i)`; it runs in its
/// worktree or the team's working directory, with its own model, agent type and permission
/// flags.
pub fn teammate_command(
    root: &Path,
    spec: &Spec,
    team: &Provisioned,
    i: usize,
    with: &Starting,
) -> String {
    let m = &spec.members[i];
    let runtime = m.runtime.args();
    let passthrough = m.runtime.passthrough(with.passthrough);
    TeammateLaunch {
        root,
        cwd: team.trees.cwd(spec, i),
        claude: with.claude,
        passthrough: &passthrough,
        team: spec.team.as_str(),
        member: m.name.as_str(),
        color: color_of(i).as_str(),
        lead_session_id: team.lead_session_id,
        agent_type: m.agent_type.as_deref(),
        model: m.model.as_deref(),
        permission: &m.permission,
        runtime: &runtime,
        resume: None,
    }
    .command()
}

/// Starts the teammates' panes in a new tmux session `session`. Returns where the session
/// this call made runs (`None` when it made none: one of that name that another create made
/// first is never taken for it), and how starting went.
pub(super) fn start_panes(
    c: &Creating,
    team: &Provisioned,
    with: &Starting,
    members: &mut [MemberOutcome],
    progress: &mut dyn FnMut(Step, &str),
) -> (Option<tmux::Where>, Result<()>) {
    let Creating {
        layout, spec, lock, ..
    } = *c;
    let session = team.session;
    let mut made = None;
    let mut each = || -> Result<()> {
        for (i, (m, out)) in spec.members.iter().zip(members.iter_mut()).enumerate() {
            let pane = if i == 0 {
                // A server it starts has no `${NAME}` of teamctl's environment in its own.
                let hide = with.vars.names();
                let pane =
                    tmux::Server::env().new_session_hiding(session, m.name.as_str(), &hide)?;
                made = tmux::Server::env().locate_pane(&pane);
                pane
            } else {
                tmux::Server::env().new_window(session, m.name.as_str())?
            };
            // The teammate runs elsewhere (`cd <cwd>`): a relative config dir would move.
            let root = std::path::absolute(layout.root())
                .with_context(|| format!("could not resolve {}", layout.root().display()))?;
            let cmd = teammate_command(&root, spec, team, i, with);
            // Its own env, for its process only (never on a command line).
            let env = m
                .runtime
                .env_values(with.vars)
                .map_err(|e| usage(format!("member '{}': {e}", m.name)))?;
            let rules = team.rules.get(i).and_then(Option::as_ref);
            let run = match rules {
                Some(r) => sandbox::wrap(r, &cmd)?,
                None => cmd.clone(),
            };
            // Record the pane before the teammate runs, as a lead does (spec §8.1 step 3).
            set_pane(layout, &spec.team, m.name.as_str(), &pane, lock)?;
            out.pane = Some(pane.clone());
            out.state = MemberState::Starting;
            // Pane options need tmux 3.0: an older one starts the teammate unmarked
            // (docs/security.md says what that leaves to config.json).
            let _ = tmux::Server::env().tag_member(&pane, m.name.as_str());
            // The sandbox wraps the command; the env still reaches it through tmux's standard
            // input, and bubblewrap passes its environment on to what it confines.
            tmux::Server::env().respawn_private(&pane, &run, with.pane_env, &env)?;
            let confined = rules
                .map(|r| format!(" (in its sandbox: {})", r.engine.kind.as_str()))
                .unwrap_or_default();
            progress(
                Step::Launching,
                &format!("{} in pane {pane}: {cmd}{confined}", m.name),
            );
        }
        Ok(())
    };
    let result = each();
    (made, result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::claude::{Permission, shell_quote};
    use crate::ops::create::{Launch, MemberSpec};
    use crate::store::paths::{MemberName, TeamName};
    use crate::team::runtime::Runtime;
    use std::path::PathBuf;

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("worker@demo"), "worker@demo");
        assert_eq!(shell_quote("/a b/c"), "'/a b/c'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn command_line() {
        let alice = MemberSpec {
            model: Some("claude-opus-5-5".into()),
            agent_type: Some("reviewer".into()),
            permission: Permission::Mode("acceptEdits".into()),
            runtime: Runtime {
                mcp_config: vec!["/t/mcp one.json".into()],
                effort: Some("low".into()),
                env: [("TOKEN".to_string(), "${T}".to_string())].into(),
                ..Runtime::default()
            },
            ..MemberSpec::new(MemberName::parse("alice").unwrap(), "b".into())
        };
        // A teammate whose own env sets a variable passed on to every teammate: its value
        // (given to its pane) is not overridden on its command line.
        let own_proxy = MemberSpec {
            runtime: Runtime {
                env: [("ANTHROPIC_BASE_URL".to_string(), "http://proxy".to_string())].into(),
                ..Runtime::default()
            },
            ..MemberSpec::new(MemberName::parse("bob").unwrap(), "b".into())
        };
        let spec = Spec {
            team: TeamName::parse("review-42").unwrap(),
            description: None,
            cwd: PathBuf::from("/work/my repo"),
            members: vec![alice, own_proxy],
            launch: Launch::Tmux,
        };
        let trees = Trees::default();
        let team = Provisioned {
            trees: &trees,
            lead_session_id: "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d",
            session: "teamctl-review-42",
            rules: &[],
        };
        let passthrough = [("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into())];
        let with = Starting {
            claude: Path::new("/bin/claude"),
            passthrough: &passthrough,
            pane_env: &[],
            vars: &Vars::default(),
        };
        let cmd = teammate_command(Path::new("/c"), &spec, &team, 0, &with);
        assert_eq!(
            cmd,
            "cd '/work/my repo' && env CLAUDECODE=1 CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 \
             CLAUDE_CONFIG_DIR=/c ANTHROPIC_BASE_URL=http://127.0.0.1:9 /bin/claude \
             --agent-id alice@review-42 --agent-name alice --team-name review-42 \
             --agent-color blue --parent-session-id 3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d \
             --agent-type reviewer --model claude-opus-5-5 --permission-mode acceptEdits \
             --mcp-config '/t/mcp one.json' --effort low"
        );
        let cmd = teammate_command(Path::new("/c"), &spec, &team, 1, &with);
        assert!(
            cmd.contains("CLAUDE_CONFIG_DIR=/c /bin/claude --agent-id bob@review-42"),
            "{cmd}"
        );
    }
}
