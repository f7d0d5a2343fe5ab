//! The observe layer: reading a team over time, without changing it. It imports the team,
//! host and store layers; never ops or cli.
//!
//! - [`reader`]: the team as it is now, the one reader every command goes through (with its
//!   caches); [`status`] is what it computes for each member, [`spend`] what the members did
//!   and spent (from their transcripts), [`budget`] the cap held against that spend,
//!   [`document`] the `status --json` document a record keeps too;
//! - [`watch`]: the stream of changes to the team's files, told as [`event`]s ([`waker`]: what
//!   wakes a follower up, [`fswatch`]: the OS's notifications, alike everywhere); [`follow`]: a
//!   team followed while a command waits on it (its watch, its reader); [`wait`] the conditions
//!   a script waits for, [`members`] the rules about one member it shares with `ask`
//!   ([`unreported`]: the one that never reports idle, by its transcript), [`keep`]
//!   what to do about a member that is stuck, [`human`] when a person is needed ([`need`]: what
//!   for, as data);
//! - [`log`]: a member's story; [`top`]: what the live view shows ([`timeline`]: the messages it
//!   remembers); [`worktree`]: a teammate's
//!   own git worktree;
//! - [`misaddressed`]: inboxes nobody reads (a teammate wrote to a name that is no member);
//!   [`said`]: what a teammate said at the end of a turn, from its transcript;
//! - [`history`]: a team's past as its record tells it (cost, lanes, tasks over time).

pub mod budget;
pub mod document;
pub mod event;
pub mod follow;
pub mod fswatch;
pub mod history;
pub mod human;
pub mod keep;
pub mod log;
pub mod members;
pub mod misaddressed;
pub mod need;
pub mod reader;
pub mod said;
pub mod spend;
pub mod status;
pub mod timeline;
pub mod top;
pub mod unreported;
pub mod wait;
pub mod waiting;
pub mod waker;
pub mod watch;
pub mod worktree;
