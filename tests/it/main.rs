//! teamctl's only integration-test target (one binary to link): one module per subcommand,
//! plus the store (concurrency), lock and Claude Code interop suites.

mod common;
mod inbox;
mod interop;
mod lock;
mod send;
mod store;
