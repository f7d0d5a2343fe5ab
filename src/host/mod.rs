//! The host layer: the machine around the files. It owns tmux ([`tmux`]), finding the `claude`
//! binary ([`resolve`]), probes of processes ([`proc`]; [`platform`] picks Linux's or the
//! portable ones), how Claude Code is launched ([`claude`]: its permission flags, the launch
//! environment, shell quoting), commands run for events ([`hook`]), a command run so that
//! nothing it starts outlives it ([`reap`]), the `git` command for teammates' worktrees
//! ([`git`], run as [`git_run`] runs it), GitHub's `gh` for pull requests ([`gh`]), the one
//! HTTP server teamctl runs ([`http_server`]: the webhook's answers, `serve`), what no child
//! process gets from teamctl's environment ([`child_env`]) and the sandbox a teammate can be
//! confined to ([`sandbox`]: bubblewrap, sandbox-exec, a clone of its own). It imports
//! [`crate::store`] (for names), [`crate::error`] and [`crate::time`]; never the team, observe,
//! ops or cli layers.

pub mod child_env;
pub mod claude;
pub mod gh;
pub mod git;
pub mod git_run;
pub mod hook;
pub mod http_server;
pub mod platform;
pub mod proc;
pub mod reap;
pub mod resolve;
pub mod sandbox;
pub mod tmux;
