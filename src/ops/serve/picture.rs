//! What a page shows of one team (`event: team`): `top`'s view model with the needs of a
//! person, the plan approvals held (by this run, and by an earlier one that stopped before
//! writing them), and the team's cost over time from the members' transcripts, drawn by the
//! rules `report.html` draws by ([`crate::observe::spend::series`]).

use serde::Serialize;

use super::act::held_detail;
use super::hub::Held;
use super::journal::Record;
use crate::observe::need::Need;
use crate::observe::spend::series::{self, Series, SeriesBuilder};
use crate::observe::top::View;

/// The points of the members' cost series a picture carries in all (every picture is sent
/// whole on each change, and the chart is a few hundred pixels wide): a big team's lines share
/// them, as report.html's do, each between [`MIN_POINTS`] and [`MAX_POINTS`].
pub const MEMBERS_POINTS: usize = 480;

/// The fewest points a member's line is given.
pub const MIN_POINTS: usize = 30;

/// The most points a member's line is given.
pub const MAX_POINTS: usize = 120;

/// The most points of the team's cost series a picture carries.
pub const TOTAL_POINTS: usize = 160;

/// A plan approval given on a page and held until its planner reports idle, as the page shows
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeldRow {
    /// The request.
    pub request_id: String,
    /// The planner.
    pub from: String,
    /// When the approval was given.
    pub since: String,
    /// What it waits for, or what became of it, in words.
    pub detail: String,
}

impl HeldRow {
    /// An approval this run holds.
    pub fn of(h: &Held) -> HeldRow {
        HeldRow {
            request_id: h.request.request_id.clone(),
            from: h.request.from.clone(),
            since: h.since.clone(),
            detail: held_detail(&h.request.from),
        }
    }

    /// The holds an earlier run journaled in `team` ([`super::journal::unfinished_holds`])
    /// whose request `view` shows open and that this run does not hold (`held`): the hold
    /// ended with that run, and the request needs a new answer.
    pub fn earlier(
        journaled: &[Record],
        team: &str,
        held: &[HeldRow],
        view: &View,
    ) -> Vec<HeldRow> {
        let open = |id: &str| view.requests.iter().any(|q| q.request_id == id);
        journaled
            .iter()
            .filter(|r| r.team == team)
            .filter_map(|r| Some((r, r.request_id.as_deref()?)))
            .filter(|(_, id)| open(id) && !held.iter().any(|h| h.request_id == *id))
            .map(|(r, id)| {
                let from = r.member.clone().unwrap_or_default();
                HeldRow {
                    request_id: id.to_string(),
                    detail: format!(
                        "approved on a page at {} and held until {from} reported idle, by a \
                         run of teamctl serve that stopped before writing it: a hold ends with \
                         its server. Approve again to answer it.",
                        r.at
                    ),
                    from,
                    since: r.at.clone(),
                }
            })
            .collect()
    }
}

/// One member's cost over time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberCost {
    /// Its name.
    pub name: String,
    /// Its palette colour, when `config.json` gives one.
    pub color: Option<String>,
    /// `[[at, usd], …]`, its last point the member's cost when that is known.
    pub series: Series,
}

/// The team's cost over time, from its members' transcripts (`picture.cost`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CostOverTime {
    /// The team's, `[[at, usd], …]` ([`series::total`]): at each member's point, the sum of
    /// every member's latest value.
    pub total: Series,
    /// Each member whose responses have times, in the view's order.
    pub members: Vec<MemberCost>,
}

impl CostOverTime {
    /// The members of `view` as `responses` priced them, each ending at its cost in `view`.
    pub fn of(responses: &SeriesBuilder, view: &View) -> CostOverTime {
        let drawn = view.members.iter().filter(|m| m.tokens.is_some()).count();
        let points = (MEMBERS_POINTS / drawn.max(1)).clamp(MIN_POINTS, MAX_POINTS);
        let members: Vec<MemberCost> = view
            .members
            .iter()
            .map(|m| MemberCost {
                name: m.name.clone(),
                color: m.color.clone(),
                series: responses.series(&m.name, m.cost_usd, points),
            })
            .filter(|m| !m.series.is_empty())
            .collect();
        let each: Vec<&Series> = members.iter().map(|m| &m.series).collect();
        CostOverTime {
            total: series::total(&each, TOTAL_POINTS),
            members,
        }
    }
}

/// What a page shows of one team (`event: team`).
#[derive(Debug, Clone, Serialize)]
pub struct Picture<'a> {
    /// The team's name.
    pub team: &'a str,
    /// When this was read (the page ages times from it).
    pub at: String,
    /// Whether the page may answer and send (the server is not read-only and teamctl leads
    /// the team).
    pub writable: bool,
    /// Why not, when it may not.
    pub read_only_why: Option<String>,
    /// Why the team could not be read at all (a corrupt or missing `config.json`): shown as
    /// it is, the file left alone.
    pub trouble: Option<String>,
    /// `top`'s view model (`null` with `trouble`).
    pub view: Option<&'a View>,
    /// Why a person is needed now.
    pub needs: &'a [Need],
    /// The plan approvals given here and held until their planner reports idle.
    pub held: Vec<HeldRow>,
    /// The plan approvals an earlier run held and never wrote, whose request is still open.
    pub earlier_holds: Vec<HeldRow>,
    /// The team's cost over time.
    pub cost: &'a CostOverTime,
}

impl<'a> Picture<'a> {
    /// The picture of a team that cannot be read (`why`), its cost as last read.
    pub fn trouble(team: &'a str, at: String, why: String, cost: &'a CostOverTime) -> Picture<'a> {
        Picture {
            team,
            at,
            writable: false,
            read_only_why: Some("the team cannot be read".into()),
            trouble: Some(why),
            view: None,
            needs: &[],
            held: Vec::new(),
            earlier_holds: Vec::new(),
            cost,
        }
    }
}
