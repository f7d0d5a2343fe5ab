//! Answering teammates' requests by rules: a policy file in Claude Code's own permission-rule
//! language, the decision it gives for one request, and the step that answers every pending
//! request of a team by it (once: across processes, the sent log's answer lock and its record
//! of answers decide).
//!
//! Matching follows Claude Code's documentation of permission rules: deny rules first, then
//! ask, then allow (the first list with a match decides; specificity does not); `Tool` matches
//! every use; `Bash(cmd)` exactly that command; `Bash(cmd *)` / `Bash(cmd:*)` a wildcard (`*`
//! matches any text, a single trailing ` *` is optional, so `Bash(ls *)` matches `ls` and
//! `ls -la` but not `lsof`); `Read(…)`/`Edit(…)` gitignore-style paths; `WebFetch(domain:…)`;
//! `mcp__server`, `mcp__server__*`, `mcp__server__tool`. A command made of several
//! (`a && b`, `a | b`, `a; b`) is allowed only when every part is, and denied when any part is.
//!
//! A Bash command is read as bash reads it ([`bash`], fuzzed against bash): an
//! allow rule approves it only when it is certain which simple commands it runs (no
//! substitution, expansion, `$'…'`, here-document or compound command), each matched as its
//! words (shell-quoted, single spaces). Deny and ask rules match more: the whole text, every
//! simple command anywhere in it (inside substitutions too) and a plain split of the text at
//! operators. A `WebFetch` URL's host is read as Claude Code reads it, by the WHATWG URL
//! standard.
//!
//! Path anchoring (Claude Code's four forms, with the working directory `teamctl create`
//! recorded for the teammates as their working directory and project root): `//x` is the
//! absolute path `/x`; `~/x` is under the home directory given; `/x` and `./x` and any
//! pattern with a slash are relative to the teammate's cwd; a pattern with no slash (`*.env`)
//! matches a name at any depth below it.
//! A path rule matches a path when it matches the path or one of its parent directories.
//!
//! The rooms, from the ground up: `bash` (a command line as bash reads it), `hosts` (a URL's
//! host, host patterns) and `paths` (path patterns, their anchors) stand on nothing; `rules` (a
//! policy file, one rule) stands on them; `decide` (the decision for one request) on the rules
//! and `bash`; `answering` (answering a team's pending requests) on the decision. The folder
//! imports the team and store layers below ops; never the cli.

mod answering;
pub mod bash;
mod decide;
#[cfg(test)]
mod fixture;
mod hosts;
mod paths;
mod rules;

pub use answering::{Answering, IDLE_SETTLES, Outcome, answer_pending, reported_idle};
pub use decide::{Answer, Decision, asks};
pub use hosts::url_host;
pub use paths::Anchors;
pub use rules::{Plans, Policy, Rule, Source, Unmatched, load, parse};
