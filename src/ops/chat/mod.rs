//! The chat bridge, a service two flows share: `teamctl bridge` runs it whole, and
//! `run --bridge` (`ops/run/bridge.rs`) plugs its lead's permission prompt and its
//! events into the same loop ([`run`], [`Hooks`]). A team's requests and needs are posted to a
//! chat, and answered from it. A request's message carries a one-time [`code`]; an allowed
//! chat user answers with `approve <code>` or `deny <code> [reason]` (also `say <member>
//! <text>` and `status`: [`command`]), and the answer goes through the same locked paths as
//! `teamctl approve`, `deny` and `send`. Teammate text is kept apart from the bridge's own
//! words ([`render`]), so a transport shows it as code, never as a link, mention or markup.
//!
//! The rooms, from the ground up: `code`, `command`, `render`, `journal` and `http` (the one
//! client every transport posts with) stand on nothing of the bridge's; `state` (the teams
//! served, the codes, rebuilt from the journal) on the journal; `out` (what to post) and
//! `hear` (what a chat message does) on the state; `transport` (what a transport is) on
//! `render` and `hear`; `cycle` (the loop) on those; each transport in its own file
//! (`telegram`, `slack`, `webhook`: its protocol, its default URL, its rule for a user id,
//! which flags it takes, its secret) on `transport`, `render` and `http`, the webhook also on
//! `seen` (its replay cache, which stands on nothing of the bridge's); `registry` (every
//! transport, one line each) on the transports. The folder imports the observe, team, host
//! and store layers and [`crate::ops::policy`] (which plans may be posted yet); never the cli.

mod budget;
pub mod code;
pub mod command;
pub mod cycle;
mod hear;
pub mod http;
pub mod journal;
mod out;
mod prompt;
pub mod registry;
pub mod render;
pub mod seen;
pub mod slack;
mod state;
pub mod telegram;
pub mod transport;
pub mod webhook;

pub use cycle::{Ahead, Hooks, Stop, run};
pub use hear::{Heard, Incoming};
pub use journal::{Journal, Record, What};
pub use out::Outgoing;
pub use registry::{TRANSPORTS, open};
pub use state::{Bridge, Ground, Scope, Settings};
pub use transport::{Chat, Inbound, Options, Transport};
