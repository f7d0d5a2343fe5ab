//! What `approve` and `deny` share: the lead check, the answer, the output.

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};
use teamctl::store::paths::MemberName;
use teamctl::team::mailbox::Delivery;
use teamctl::team::protocol::{self, Kind, Verdict};

use crate::cli::context::Ctx;
use crate::cli::term::escape_line as esc;

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    request_id: &'a str,
    kind: Kind,
    to: &'a str,
    inbox: String,
    id: &'a str,
    response: &'a Map<String, Value>,
}

/// Refuses to answer as `team-lead` in a team teamctl does not lead, unless forced (exit 2).
pub(crate) use teamctl::team::protocol::check_lead;

pub(crate) fn run(ctx: &Ctx, id: &str, lead: &str, verdict: Verdict, force: bool) -> Result<()> {
    let lead = MemberName::parse(lead)?;
    let team = ctx.team()?;
    check_lead(&team, force)?;
    let (request, frame, d) = protocol::answer(&team, &lead, id, &verdict, ctx.writing(ctx.now))?;
    if let Some(e) = &d.log_error {
        crate::cli::output::warn(e);
    }
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            request_id: &request.request_id,
            kind: request.kind,
            to: &d.to,
            inbox: d.inbox.display().to_string(),
            id: &d.id,
            response: &frame,
        });
    }
    ctx.out.line(&line(&verdict, &request, &d))
}

/// `approved perm-… from alice: answer written to …` (teammate text escaped).
pub(crate) fn line(verdict: &Verdict, request: &protocol::Request, d: &Delivery) -> String {
    let what = match verdict {
        Verdict::Approve { .. } => "approved",
        Verdict::Deny { .. } => "denied",
    };
    format!(
        "{what} {} from {}: answer written to {}",
        esc(&request.request_id),
        esc(&request.from),
        esc(&d.inbox.display().to_string())
    )
}
