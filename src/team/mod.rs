//! The team layer: the team model on top of the files. It owns a team's `config.json`
//! ([`config`]: members, who leads), the inbox records ([`model`]), the mailboxes ([`mailbox`]),
//! the shared task list ([`tasks`]), the protocol frames teammates and their lead exchange
//! ([`protocol`]), teamctl's sent log ([`sentlog`]), which inbox format a team runs
//! ([`generation`]) and the messages a transcript records ([`conversation`]). It imports [`crate::store`], [`crate::error`] and [`crate::time`]; never
//! the host, observe, ops or cli layers.

pub mod config;
pub mod conversation;
pub mod generation;
pub mod mailbox;
pub mod model;
pub mod protocol;
pub mod sentlog;
pub mod tasks;
