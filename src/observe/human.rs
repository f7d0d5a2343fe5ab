//! When a person is needed: one signal per cause, not one per message (`status --json`
//! `needs_human`, `watch --event needs_human`). A cause holds while:
//! - `request`: a permission or plan request has waited for its answer longer than the
//!   threshold (`--after`, default 1m);
//! - `dead`: a member's pane or process is gone with a task in progress or unread mail;
//! - `stalled`: a member inside a turn has written nothing for the stall threshold (its
//!   process runs, so nothing but a person or a rule moves it: a nudge, a restart);
//! - `out_of_retries`: a member's API calls failed until Claude Code gave up (its turn ended
//!   with the error);
//! - `idle_unreported`: a teammate's turns end in its transcript but it reports no idle (no
//!   `idle_notification`, `isActive` still `true`): whatever waits for it to be idle goes by its
//!   transcript, [`crate::observe::unreported::UNREPORTED_AFTER`] late, until it is restarted;
//! - `misaddressed`: an inbox nobody reads holds unread messages (a teammate wrote to a name
//!   that is no member: [`crate::observe::misaddressed`]);
//! - `team_stopped`: tasks are open, every teammate is idle and the lead is not running (a
//!   Claude Code lead whose process ended) or is teamctl's own (the person at the shell leads).
//!
//! Each need says what to do. A follower tells each cause once, when it starts, and again when
//! it clears.

use std::time::Duration;

use crate::host::claude::shell_quote;
use crate::observe::misaddressed::Misaddressed;
use crate::observe::need::Need;
use crate::observe::reader::Present;
use crate::observe::status::State;
use crate::observe::waiting::Waiting;
use crate::team::config::Team;
use crate::team::protocol::Kind;
use crate::team::tasks::Board;

/// How long a request may wait before a person is needed for it.
pub const REQUEST_AFTER: Duration = Duration::from_secs(60);

/// Whether a person is needed for `team` as `present` shows it (`board`: its task board;
/// `lost`: its misaddressed inboxes, [`crate::observe::misaddressed::scan`], read once by the
/// caller, which shows them too).
pub fn needs(
    present: &Present,
    team: &Team,
    board: &Board,
    after: Duration,
    lost: &[Misaddressed],
) -> Vec<Need> {
    let mut out = Vec::new();
    let after = after.as_secs() as i64;
    for r in present.requests.iter().filter(|r| r.age_seconds >= after) {
        let (what, answer) = match r.kind {
            Kind::PlanApproval => ("plan", "teamctl approve ID (or deny ID --reason TEXT)"),
            Kind::Permission => ("permission request", "teamctl approve ID or deny ID"),
            Kind::SandboxPermission => ("sandbox host request", "teamctl approve ID or deny ID"),
        };
        out.push(Need {
            cause: "request",
            member: Some(r.from.clone()),
            key: r.request_id.clone(),
            since: Some(r.at.clone()),
            cleared: false,
            // Every word of a suggested command from a file is one shell word: an id like
            // `perm-1 && curl … | sh` pasted into a shell stays an argument.
            todo: format!(
                "answer {}'s {what} {}: {}",
                r.from,
                r.request_id,
                answer.replace("ID", &shell_quote(&r.request_id))
            ),
        });
    }
    for m in &present.status.members {
        if let Some(since) = &m.idle_unreported_since {
            out.push(Need {
                cause: "idle_unreported",
                member: Some(m.name.clone()),
                key: since.clone(),
                since: Some(since.clone()),
                cleared: false,
                todo: format!(
                    "{}: {}: teamctl wait --on-stall restart (a team teamctl made), or start \
                     its pane again",
                    m.name,
                    crate::observe::status::UNREPORTED_TEXT
                ),
            });
        }
        let (Some(w), detail) = (m.waiting, m.waiting_detail.as_ref()) else {
            continue;
        };
        let since = detail.and_then(|d| d.since.clone());
        let key = since.clone().unwrap_or_default();
        match w {
            Waiting::Dead => out.push(Need {
                cause: "dead",
                member: Some(m.name.clone()),
                key,
                since,
                cleared: false,
                todo: format!(
                    "{} is gone with work waiting: teamctl resume (a team teamctl made), or \
                     wait --on-dead restart",
                    m.name
                ),
            }),
            Waiting::Stalled => out.push(Need {
                cause: "stalled",
                member: Some(m.name.clone()),
                key,
                since,
                cleared: false,
                todo: format!(
                    "{} is inside a turn and has written nothing for a while: send it a message \
                     (teamctl send), or wait --on-stall nudge|restart",
                    m.name
                ),
            }),
            _ if w.needs_hand(detail) => out.push(Need {
                cause: "out_of_retries",
                member: Some(m.name.clone()),
                key,
                since,
                cleared: false,
                todo: format!(
                    "{}'s API calls failed until Claude Code gave up ({w}): check the API key, \
                     the rate limits or the endpoint, then send it a message to try again",
                    m.name
                ),
            }),
            _ => {}
        }
    }
    for m in lost {
        let inbox = shell_quote(&m.inbox);
        let to = match (&m.suggestion, m.certain) {
            (Some(s), true) => format!("teamctl redeliver {inbox} (to {})", shell_quote(s)),
            (Some(s), false) => format!(
                "teamctl redeliver {inbox} --to MEMBER (perhaps {})",
                shell_quote(s)
            ),
            (None, _) => format!("teamctl redeliver {inbox} --to MEMBER"),
        };
        out.push(Need {
            cause: "misaddressed",
            member: m.from.first().cloned(),
            key: m.inbox.clone(),
            since: None,
            todo: format!(
                "{} unread message(s) sit in {}'s inbox, which nobody reads: {to}",
                m.unread, m.inbox
            ),
            cleared: false,
        });
    }
    if let Some(n) = team_stopped(present, team, board) {
        out.push(n);
    }
    out
}

/// Tasks are open, every teammate is idle, and nobody leads: the team has stopped.
fn team_stopped(present: &Present, team: &Team, board: &Board) -> Option<Need> {
    let lead = team.config.as_ref().and_then(|c| c.lead()).map(|l| &l.name);
    let open = board
        .tasks
        .iter()
        .filter(|t| !t.is_internal() && t.status != "completed")
        .count();
    let mates: Vec<_> = present
        .status
        .members
        .iter()
        .filter(|m| Some(&m.name) != lead && m.in_config)
        .collect();
    let idle = !mates.is_empty()
        && mates
            .iter()
            .all(|m| matches!(m.state, State::Idle | State::Terminated));
    let nobody_leads = team.teamctl_leads() || present.status.team.lead_alive == Some(false);
    (open > 0 && idle && nobody_leads).then(|| Need {
        cause: "team_stopped",
        member: None,
        key: present
            .status
            .team
            .last_activity_at
            .clone()
            .unwrap_or_default(),
        since: present.status.team.last_activity_at.clone(),
        cleared: false,
        todo: format!(
            "{open} task(s) are open and every teammate is idle: tell a teammate what to do \
             next (teamctl send), or close the tasks"
        ),
    })
}
