//! The host layer: the machine around the files. It owns tmux ([`tmux`]), finding the `claude`
//! binary ([`resolve`]), probes of processes ([`proc`]; [`platform`] picks Linux's or the
//! portable ones), how Claude Code is launched ([`claude`]: its permission flags, the launch
//! environment, shell quoting), commands run for events ([`hook`]) and the `git` command for
//! teammates' worktrees ([`git`]), and GitHub's `gh` for pull requests ([`gh`]); what no child
//! process gets from teamctl's environment ([`child_env`]). It imports
//! [`crate::store`] (for names), [`crate::error`] and [`crate::time`]; never the team, observe,
//! ops or cli layers.

pub mod child_env;
pub mod claude;
pub mod gh;
pub mod git;
pub mod hook;
pub mod platform;
pub mod proc;
pub mod resolve;
pub mod tmux;
