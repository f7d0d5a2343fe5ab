//! teamctl's core: Claude Code-compatible access to agent-team files.
//!
//! Guarantees, for every write into a file that Claude Code also writes:
//! - it happens only under the same `mkdir` lock directory Claude Code takes (the npm
//!   `proper-lockfile` protocol, see [`store::lock`]), never under `flock`;
//! - the file is replaced atomically (temp file in the same folder, fsync, rename, fsync of the
//!   folder), formatted byte for byte as `JSON.stringify(value, null, 2)` (see [`store`]);
//! - it is read back while the lock is still held and the write is reported as failed unless
//!   the file shows exactly what was written;
//! - a file that does not parse, or is not the shape Claude Code expects, is reported and never
//!   rewritten (Claude Code itself would silently replace it with `[]`).
//!
//! The library takes explicit inputs (a config root, a clock value) and never prints or exits;
//! the `teamctl` binary owns the command line, the environment, the output and the exit codes.
//!
//! The layers, each a folder, imports pointing down only:
//! - [`ops`]: what a user asks for that spans the layers (ask, policy, create, run, delete,
//!   doctor, export);
//! - [`observe`]: reading a team over time (status, watch, wait);
//! - [`team`] and [`host`]: the team model on top of the files (config, mailbox, tasks,
//!   protocol, sent log, transcripts' messages) and the machine around them (tmux, processes,
//!   the `claude` binary, hooks);
//! - [`store`]: the files themselves (lock, format, locked read-modify-write, ids, paths);
//! - [`error`], [`time`], [`text`] (untrusted text), [`units`] (numbers for people) and
//!   [`sandbox`] (a teammate's sandbox as data), which every layer may use.
#![warn(missing_docs)]

pub mod error;
pub mod host;
pub mod observe;
pub mod ops;
pub mod sandbox;
pub mod store;
pub mod team;
pub mod text;
pub mod time;
pub mod units;

pub use error::Error;
