//! Who is working, idle or gone: a team's state read from its files (no locks), plus the
//! process checks that can be made without guessing.
//!
//! A member's state, from the newest signal the files give (every signal is also reported raw):
//! - `terminated`: a `shutdown_approved` frame from the member is in an inbox of the team (older
//!   builds: `shutdown_response` with `approve: true`), or the member left `config.json` while
//!   its inbox remains (an inbox of a name that never wrote to the team and holds unread
//!   entries is no member's: it is a misaddressed inbox, `crate::observe::misaddressed`);
//! - `active`: its last event is younger than the idle threshold: its newest message (an
//!   `idle_notification` too) in any inbox, its inbox drained (no unread entry, last written
//!   then), or `isActive: true` in `config.json`;
//! - `idle`: the last event is older than that;
//! - `unknown`: no signal at all.
//!
//! With the transcripts read ([`Work`], see [`crate::observe::spend`]), each member also gets its
//! tokens, cost, model and current activity, and the reason it is waiting, the first that holds:
//! - `permission`: a tool or sandbox permission request of its waits unanswered in the lead's
//!   inbox;
//! - `plan`: a plan approval request of its waits there;
//! - `blocked`: it owns open tasks and every one of them is blocked by another open task;
//! - `stalled`: its newest session is inside a turn (its last entry is not an ended assistant
//!   turn) but its transcripts have not grown for the stall threshold (and it is neither
//!   terminated nor known dead);
//! - `idle_unreported`: its newest session's turn ended in its transcript and it reported no
//!   idle for it ([`crate::observe::unreported::judge`]): a teammate that missed Claude Code's
//!   start-up race. Its `isActive: true` then keeps it `active` no longer.
//!
//! The rooms: `model` (what a status says), `inboxes` (what the inboxes tell, with the cache a
//! live reader keeps), `reasons` (why a member waits), `team` (the status of a team).

mod inboxes;
mod model;
mod reasons;
mod team;

pub use inboxes::Cache;
pub use model::{MemberStatus, State, TaskCounts, TeamInfo, TeamStatus, Totals, Work};
pub use reasons::UNREPORTED_TEXT;
pub use team::task_counts;
pub(crate) use team::{Judging, team_status};
