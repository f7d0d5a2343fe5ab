//! The observe layer: reading a team over time, without changing it. It owns a team's state
//! ([`status`]), what its members did and spent ([`spend`], from their transcripts) and each
//! one's story ([`log`]), the stream of changes to its files ([`watch`]), a team followed while
//! a command waits on it ([`follow`]), the conditions a script waits for ([`wait`]), a cap on
//! what the team spends ([`budget`]) and what the live view shows ([`top`]). It imports the
//! team, host and store layers; never ops or cli.

pub mod budget;
pub mod follow;
pub mod log;
pub mod spend;
pub mod status;
pub mod top;
pub mod wait;
pub mod watch;
