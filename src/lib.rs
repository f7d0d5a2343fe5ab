//! teamctl's core: Claude Code-compatible access to agent-team files.
//!
//! Guarantees, for every write into a file that Claude Code also writes:
//! - it happens only under the same `mkdir` lock directory Claude Code takes (the npm
//!   `proper-lockfile` protocol, see [`lock`]), never under `flock`;
//! - the file is replaced atomically (temp file in the same folder, fsync, rename, fsync of the
//!   folder), formatted byte for byte as `JSON.stringify(value, null, 2)` (see [`store`]);
//! - it is read back while the lock is still held and the write is reported as failed unless
//!   the file shows exactly what was written;
//! - a file that does not parse, or is not the shape Claude Code expects, is reported and never
//!   rewritten (Claude Code itself would silently replace it with `[]`).
//!
//! The library takes explicit inputs (a config root, a clock value) and never prints or exits;
//! the `teamctl` binary owns the command line, the environment and the output.
#![warn(missing_docs)]

pub mod ask;
pub mod create;
pub mod delete;
pub mod doctor;
pub mod error;
pub mod format;
pub mod generation;
pub mod id;
mod light;
pub mod lock;
pub mod mailbox;
pub mod model;
pub mod paths;
pub mod policy;
pub mod protocol;
pub mod resolve;
pub mod run;
pub mod sentlog;
pub mod status;
pub mod store;
pub mod tasks;
pub mod team;
pub mod time;
pub mod tmux;
pub mod wait;
pub mod watch;

pub use error::Error;
