//! The `status --json` document: what `status` shows of one team, and what a record keeps of
//! it, one type for both.

use serde::Serialize;

use crate::observe::misaddressed::Misaddressed;
use crate::observe::need::Need;
use crate::observe::status::{MemberStatus, TaskCounts, TeamInfo, TeamStatus, Totals};
use crate::team::config::Team;
use crate::team::mailbox;

/// Who reads the status: the name teamctl writes as, and whether teammates can reply to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identity {
    /// The name.
    pub name: String,
    /// Whether teammates can write to it.
    pub reachable: bool,
    /// Why they cannot, when they cannot.
    pub reason: Option<String>,
}

impl Identity {
    /// `name` in `team`, and whether teammates can reply to it.
    pub fn of(team: &Team, name: &str) -> Identity {
        let reason = mailbox::unreachable_reason(team, name);
        Identity {
            name: name.to_string(),
            reachable: reason.is_none(),
            reason,
        }
    }
}

/// The status of one team as `status --json` prints it and a record keeps it
/// (`summary.json`'s `status`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatusDocument {
    /// Always 1.
    pub schema_version: u32,
    /// Who reads it.
    pub identity: Identity,
    /// Team-level facts.
    pub team: TeamInfo,
    /// Members.
    pub members: Vec<MemberStatus>,
    /// Task counts.
    pub tasks: TaskCounts,
    /// The team's tokens and cost from the transcripts.
    pub totals: Totals,
    /// What a person is needed for ([`crate::observe::human`]).
    pub needs_human: Vec<Need>,
    /// Inboxes nobody reads ([`crate::observe::misaddressed`]).
    pub misaddressed: Vec<Misaddressed>,
}

impl StatusDocument {
    /// The document of `status` (its warnings and unlisted folders aside: they go to stderr),
    /// read for `identity`, with what a person is needed for and the misaddressed inboxes.
    pub fn of(
        status: TeamStatus,
        identity: Identity,
        needs_human: Vec<Need>,
        misaddressed: Vec<Misaddressed>,
    ) -> StatusDocument {
        StatusDocument {
            schema_version: 1,
            identity,
            team: status.team,
            members: status.members,
            tasks: status.tasks,
            totals: status.totals,
            needs_human,
            misaddressed,
        }
    }
}
