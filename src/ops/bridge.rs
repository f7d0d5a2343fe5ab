//! `teamctl bridge`, a flow: a team's requests and needs posted to a chat and answered from it
//! until a deadline, the team gone or the cap crossed. It is the chat service's loop
//! ([`crate::ops::chat`]) run whole, with the verb's own hooks (its rules first, its records
//! told); `run --bridge` runs the same loop beside a run (`ops/run/bridge.rs`).

use std::time::Instant;

use anyhow::Result;
use chrono::{DateTime, Utc};

use crate::observe::budget::Cap;
use crate::ops::chat::{self, Bridge, Chat, Ground, Hooks, Scope, Settings};

/// What `teamctl bridge` is asked.
#[derive(Debug)]
pub struct Asked {
    /// The chat, who may answer, how long a code works.
    pub settings: Settings,
    /// The team served, or every team.
    pub scope: Scope,
    /// Where it reads and writes.
    pub ground: Ground,
    /// The spending cap (`--max-cost`, …; unset: none).
    pub cap: Cap,
    /// When to stop (`--timeout`).
    pub deadline: Option<Instant>,
}

/// Serves `asked` through the chat `open` starts (once the journal is read), telling `hooks`
/// what it does, with `now` as its clock.
///
/// # Errors
/// The journal cannot be read or written (there is no data dir); the chat cannot start; errors
/// of the hooks; [`crate::Error::Budget`] when the cap was crossed (its post in the chat).
pub fn run(
    asked: Asked,
    open: impl FnOnce() -> Result<Box<dyn Chat + Send>>,
    hooks: &mut dyn Hooks,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<()> {
    let (bridge, warnings) = Bridge::new(asked.settings, asked.scope, asked.ground)?;
    let mut bridge = bridge.with_cap(asked.cap);
    for w in &warnings {
        hooks.warn(w);
    }
    let mut chat = open()?;
    chat::run(&mut bridge, chat.as_mut(), hooks, asked.deadline, now)?;
    match bridge.over_budget() {
        Some(over) => Err(crate::Error::Budget(over.to_string()).into()),
        None => Ok(()),
    }
}
