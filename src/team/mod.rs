//! The team layer: the team model on top of the files. It owns a team's `config.json`
//! ([`config`]: members, who leads), the inbox records ([`model`]), the mailboxes ([`mailbox`]),
//! the shared task list ([`tasks`]), the protocol frames teammates and their lead exchange
//! ([`protocol`]), teamctl's sent log ([`sentlog`]), its journal of the restarts and resumes
//! it makes ([`actions`]), the private JSON-lines journals both of those kinds are
//! ([`journal`]), its private record of the teams it leads
//! ([`lead`]), the two with its data dir as one value ([`records`]), the data dir's private
//! folders ([`data_dir`]), a teammate's own runtime
//! as that record keeps it ([`runtime`]: MCP servers, settings, effort, env), which inbox
//! format a team runs ([`generation`]), read-only, the members' session transcripts
//! ([`transcript`]) and the messages a transcript records ([`conversation`]). It imports
//! [`crate::store`], [`crate::error`] and [`crate::time`]; never the host, observe, ops or cli
//! layers.

pub mod actions;
pub mod config;
pub mod conversation;
pub mod data_dir;
pub mod generation;
pub mod journal;
pub mod lead;
pub mod mailbox;
pub mod model;
pub mod protocol;
pub mod records;
pub mod runtime;
pub mod sentlog;
pub mod tasks;
pub mod transcript;
