//! What the suites share, in rooms: the hermetic environment and reading teamctl's output
//! (env), teams and transcripts (teams), tmux (tmux), other writers (peers), files (files), git
//! (git), a record's page in headless Chromium (browser), the sandbox (sandbox) and the central guarantee, each message
//! exactly once and unaltered (guarantee).
//! `use crate::common::{…}` reaches every helper through the re-exports below.

#![allow(dead_code)]

mod browser;
mod env;
mod files;
mod git;
mod guarantee;
mod peers;
mod sandbox;
mod teams;
mod tmux;

pub use browser::*;
pub use env::*;
pub use files::*;
pub use git::*;
pub use guarantee::*;
pub use peers::*;
pub use sandbox::*;
pub use teams::*;
pub use tmux::*;
