//! teamctl's only integration-test target (one binary to link): one module per subcommand,
//! plus the store (concurrency), lock, proper-lockfile interop, security (hostile text, file
//! modes, impersonation, symlinks) and real Claude Code suites.

mod action;
mod action_merge;
mod action_real;
mod ask;
mod bridge;
mod bridge_services;
mod chat_mock;
mod common;
mod completions;
mod crash;
mod create;
mod delete;
mod docs;
mod doctor;
mod export;
mod fleet;
mod format;
mod fuzz;
mod fuzz_writes;
mod hostile_files;
mod hostile_inputs;
mod hostile_records;
mod hostile_transcripts;
mod inbox;
mod interop;
mod lock;
mod log;
mod man;
mod merge;
#[cfg(feature = "otel")]
mod otel;
mod policy;
mod policy_follow;
mod prepare;
mod props;
mod protocol;
mod real_claude;
mod redeliver;
mod report;
mod report_html;
mod resume;
mod run;
mod run_merge;
mod run_resume;
mod security;
mod send;
mod stale_lock;
mod status;
mod store;
mod tasks;
mod team_file;
mod top;
mod wait;
mod watch;
