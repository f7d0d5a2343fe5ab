//! teamctl's only integration-test target (one binary to link): one module per subcommand,
//! plus the store (concurrency), lock, proper-lockfile interop and real Claude Code suites.

mod common;
mod crash;
mod create;
mod delete;
mod doctor;
mod inbox;
mod interop;
mod lock;
mod policy;
mod props;
mod protocol;
mod real_claude;
mod send;
mod status;
mod store;
mod tasks;
mod watch;
