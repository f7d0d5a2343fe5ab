//! The observe layer: reading a team over time, without changing it. It owns a team's state
//! ([`status`]), the stream of changes to its files ([`watch`]), a team followed while a command
//! waits on it ([`follow`]) and the conditions a script waits for ([`wait`]). It imports the team, host and store layers; never ops or cli.

pub mod follow;
pub mod status;
pub mod wait;
pub mod watch;
