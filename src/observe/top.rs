//! What `teamctl top` shows, computed from a team's files and testable without a terminal: the
//! members (the lead first), the task board, the latest messages of the [`Timeline`], the
//! requests waiting for the lead, and the header. A [`View`] is one frame's worth of data; it
//! holds absolute times, so the screen can age them without a reread.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observe::reader::{Present, TeamReader};
use crate::observe::spend::{ContextUse, CostSource};
use crate::observe::status::{self, MemberStatus, State, TaskCounts};
use crate::observe::timeline::{Mail, Timeline};
use crate::observe::waiting::WaitingDetail;
use crate::observe::worktree::WorktreeStatus;
use crate::team::config::Team;
use crate::team::model::first_line;
use crate::team::protocol::{Kind, Request};
use crate::team::tasks::Board;
use crate::team::transcript::entry::input_summary;
use crate::team::transcript::{Activity, Tokens};
use crate::time::{iso_millis, parse_time};

/// A member's row (`top --json` `members[]`): what `status` knows, transcripts included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberRow {
    /// Name.
    pub name: String,
    /// Whether it is the team's lead.
    pub lead: bool,
    /// Its palette colour, when `config.json` gives one.
    pub color: Option<String>,
    /// Active, idle, terminated or unknown (as `status`).
    pub state: State,
    /// Why it is not progressing (as `status`): `permission` (a request of its awaits the lead:
    /// a tool or a sandbox host), `plan` (its plan awaits approval), `blocked` (every open task
    /// it owns is blocked), `stalled` (inside a turn, its transcript quiet for the stall
    /// threshold); `null` otherwise.
    pub waiting: Option<String>,
    /// What more is known about it (`status --json`'s `waiting_detail`).
    pub waiting_detail: Option<WaitingDetail>,
    /// What it is doing, in one line: `Bash: npm test` (a tool call without its result yet),
    /// `text: All done` (the last text it wrote); `null` without a transcript.
    pub doing: Option<String>,
    /// The same, exact (as `status` `activity`).
    pub activity: Option<Activity>,
    /// What it has cost in USD (as `status`: `null` without a transcript, or for a model
    /// without a price).
    pub cost_usd: Option<f64>,
    /// `claude_code` or `computed` (`null` with the cost).
    pub cost_source: Option<CostSource>,
    /// Tokens by kind from its transcripts (`null` without one).
    pub tokens: Option<Tokens>,
    /// Unread entries in its inbox.
    pub unread: usize,
    /// Tasks it owns that are in progress.
    pub tasks_in_progress: usize,
    /// Tasks it owns that are not completed.
    pub tasks_owned: usize,
    /// When its last event happened.
    pub last_event_at: Option<String>,
    /// What that event was (as `status`).
    pub last_event_kind: Option<String>,
    /// Whether its process or pane is alive, where that can be checked.
    pub process_alive: Option<bool>,
    /// Whether it is listed in `config.json`.
    pub in_config: bool,
    /// How full its context is (as `status`).
    pub context: Option<ContextUse>,
    /// Its own git worktree (as `status`).
    pub worktree: Option<WorktreeStatus>,
}

/// A task on the board (`top --json` `tasks.*[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    /// Task id.
    pub id: String,
    /// Subject.
    pub subject: String,
    /// Owner, if any.
    pub owner: Option<String>,
    /// `activeForm`, if any.
    pub active_form: Option<String>,
    /// The open tasks blocking it (empty when it is not blocked).
    pub blocked_by: Vec<String>,
}

/// The task board, by column (internal tasks left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Columns {
    /// Status pending, in id order.
    pub pending: Vec<Card>,
    /// Status in_progress.
    pub in_progress: Vec<Card>,
    /// Status completed.
    pub completed: Vec<Card>,
    /// The counts (as `status`).
    pub counts: TaskCounts,
}

/// A request waiting for the lead (`top --json` `requests[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRow {
    /// Its id.
    pub request_id: String,
    /// permission, plan_approval or sandbox_permission.
    pub kind: Kind,
    /// The teammate asking.
    pub from: String,
    /// When it asked.
    pub at: String,
    /// One line: `Bash: npm test`, the plan file, the host.
    pub summary: String,
    /// The request in full.
    pub request: Request,
}

/// The header (`top --json` `team`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    /// Team name.
    pub name: String,
    /// `description`, if any.
    pub description: Option<String>,
    /// The lead's member name.
    pub lead: Option<String>,
    /// Whether the lead's process runs (`null` when none is recorded).
    pub lead_alive: Option<bool>,
    /// Whether teamctl leads the team (its answers and messages as team-lead count).
    pub teamctl_leads: bool,
    /// `createdAt`, RFC 3339.
    pub created_at: Option<String>,
    /// The team's total cost in USD (as `status` `totals`: `null` without transcripts, or when
    /// one cost is unknown).
    pub cost_usd: Option<f64>,
    /// The team's tokens by kind (`null` without transcripts).
    pub tokens: Option<Tokens>,
    /// The newest of: the last change teamctl saw in the files, the newest event in them.
    pub last_change_at: Option<String>,
}

/// One frame's worth of data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct View {
    /// The header.
    pub team: Header,
    /// The lead first, then the teammates in `config.json` order, then those with only an
    /// inbox.
    pub members: Vec<MemberRow>,
    /// The task board.
    pub tasks: Columns,
    /// The newest messages, oldest first.
    pub messages: Vec<Mail>,
    /// Requests waiting for the lead.
    pub requests: Vec<RequestRow>,
    /// Files that could not be read (reported, left as they are).
    pub warnings: Vec<String>,
}

/// Reads `reader`'s team again at `now` (only what changed is parsed) and computes the view,
/// with at most `messages` of `timeline`'s messages.
///
/// # Errors
/// When the team can no longer be opened; unreadable files, and folders that cannot be listed
/// (the inboxes, the tasks), become warnings, as with `status`.
pub fn read(
    reader: &mut TeamReader,
    timeline: &Timeline,
    now: DateTime<Utc>,
    messages: usize,
) -> Result<View> {
    let present = reader.read(now)?;
    Ok(view(
        &present,
        reader.team(),
        reader.board(),
        timeline,
        messages,
    ))
}

/// The view of what a [`TeamReader`] read (`present`, of `team`, whose task board is `board`),
/// with at most `messages` of `timeline`'s messages.
pub fn view(
    present: &Present,
    team: &Team,
    board: &Board,
    timeline: &Timeline,
    messages: usize,
) -> View {
    let st = &present.status;
    let lead_name = team
        .config
        .as_ref()
        .and_then(|c| c.lead())
        .map(|m| m.name.clone());
    let requests: Vec<RequestRow> = present
        .requests
        .iter()
        .map(|r| RequestRow {
            request_id: r.request_id.clone(),
            kind: r.kind,
            from: r.from.clone(),
            at: r.at.clone(),
            summary: request_summary(r),
            request: r.clone(),
        })
        .collect();
    let mut members: Vec<MemberRow> = st
        .members
        .iter()
        .map(|m| row(m, lead_name.as_deref() == Some(m.name.as_str())))
        .collect();
    // The lead first; the rest keep their order.
    members.sort_by_key(|m| !m.lead);
    let last_change_at = [
        timeline.last_change(),
        st.team.last_activity_at.as_deref().and_then(parse_time),
    ]
    .into_iter()
    .flatten()
    .max()
    .map(iso_millis);
    let all = timeline.messages();
    View {
        team: Header {
            name: st.team.name.clone(),
            description: st.team.description.clone(),
            lead: lead_name,
            lead_alive: st.team.lead_alive,
            teamctl_leads: team.teamctl_leads(),
            created_at: st.team.created_at.clone(),
            cost_usd: st.totals.cost_usd,
            tokens: st.totals.tokens,
            last_change_at,
        },
        members,
        tasks: columns(board),
        messages: all[all.len().saturating_sub(messages)..].to_vec(),
        requests,
        warnings: st.warnings.clone(),
    }
}

/// The task board as three columns with their counts.
fn columns(board: &Board) -> Columns {
    let mut tasks = Columns {
        counts: status::task_counts(board),
        ..Columns::default()
    };
    for t in board.tasks.iter().filter(|t| !t.is_internal()) {
        let v = board.view(t);
        let card = Card {
            id: v.id,
            subject: v.subject,
            owner: v.owner,
            active_form: v.active_form,
            blocked_by: v.open_blockers,
        };
        match t.status.as_str() {
            "pending" => tasks.pending.push(card),
            "in_progress" => tasks.in_progress.push(card),
            _ => tasks.completed.push(card),
        }
    }
    tasks
}

fn row(m: &MemberStatus, lead: bool) -> MemberRow {
    MemberRow {
        name: m.name.clone(),
        lead,
        color: m.color.clone(),
        state: m.state,
        waiting: m.waiting.map(|w| w.to_string()),
        waiting_detail: m.waiting_detail.clone(),
        doing: m.activity.as_ref().map(doing),
        activity: m.activity.clone(),
        cost_usd: m.cost_usd,
        cost_source: m.cost_source,
        tokens: m.tokens,
        unread: m.unread,
        tasks_in_progress: m.tasks_in_progress,
        tasks_owned: m.tasks_owned,
        last_event_at: m.last_event_at.clone(),
        last_event_kind: m.last_event_kind.clone(),
        process_alive: m.process_alive,
        in_config: m.in_config,
        context: m.context,
        worktree: m.worktree.clone(),
    }
}

/// An activity in one line: `Bash: npm test`, `text: All done`.
pub fn doing(a: &Activity) -> String {
    match &a.tool {
        Some(t) => format!("{t}: {}", first_line(&a.summary, 160)),
        None => format!("text: {}", first_line(&a.summary, 160)),
    }
}

/// `Bash: npm test`, `plan ~/.claude/plans/x.md`, `host registry.npmjs.org`.
fn request_summary(r: &Request) -> String {
    match r.kind {
        Kind::Permission => {
            let tool = r.tool_name.as_deref().unwrap_or("?");
            match r
                .input
                .as_ref()
                .and_then(|i| input_summary(tool, i))
                .or(r.description.clone())
            {
                Some(what) => format!("{tool}: {what}"),
                None => tool.to_string(),
            }
        }
        Kind::PlanApproval => format!("plan {}", r.plan_file_path.as_deref().unwrap_or("?")),
        Kind::SandboxPermission => format!("host {}", r.host.as_deref().unwrap_or("?")),
    }
}

impl View {
    /// The row of member `name`.
    pub fn member(&self, name: &str) -> Option<&MemberRow> {
        self.members.iter().find(|m| m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::reader::Options;
    use crate::observe::timeline::TIMELINE_LEN;
    use crate::store::paths::{Layout, TeamName};
    use crate::team::records::Records;

    #[test]
    fn the_example_team_as_a_view() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude");
        let layout = Layout::new(&root);
        let team = Team::open(
            &layout,
            &TeamName::parse("demo-team").unwrap(),
            &crate::team::records::Records::none(),
        )
        .unwrap();
        let now = DateTime::parse_from_rfc3339("2025-11-29T19:36:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let (_, existing) = crate::observe::watch::Watch::new(team.clone(), None, now);
        let mut timeline = Timeline::new(TIMELINE_LEN);
        timeline.load(&existing);
        let opts = Options {
            probe: false,
            ..Options::default()
        };
        let mut reader = TeamReader::of(team, Records::none(), opts);
        let v = read(&mut reader, &timeline, now, 50).unwrap();
        let names: Vec<&str> = v.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["team-lead", "researcher", "tester"]);
        assert!(v.members[0].lead);
        assert_eq!(v.tasks.in_progress[0].owner.as_deref(), Some("researcher"));
        assert_eq!(v.tasks.pending[0].blocked_by, ["1"]);
        assert_eq!(v.messages.len(), 3);
        assert_eq!(
            v.messages[2].preview,
            "[shutdown_request] All tasks are done"
        );
        assert_eq!(v.team.lead.as_deref(), Some("team-lead"));
        assert!(v.requests.is_empty());
    }
}
