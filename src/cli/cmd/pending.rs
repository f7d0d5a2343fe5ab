//! `teamctl pending`: what the team's teammates are waiting on their lead for.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::store::paths::MemberName;
use teamctl::team::model::first_line;
use teamctl::team::protocol::{self, Kind, Request};
use teamctl::units;

use crate::cli::context::Ctx;

/// List the requests teammates are waiting on: tool permissions, plan approvals, sandbox hosts
///
/// Reads the lead's inbox (team-lead.json) without changing it and lists every
/// permission_request, plan_approval_request and sandbox_permission_request that has no answer
/// yet (none written by teamctl, per its sent log, and none waiting in the requester's inbox):
/// who asks, the tool and its input, the plan file and text, or the host; the id and the age.
/// Answer them with `teamctl approve ID` or `teamctl deny ID --reason TEXT`, or by rules with
/// `teamctl approve --policy FILE`. A pane teammate started without
/// --dangerously-skip-permissions asks for a tool permission this way and blocks until it is
/// answered (seen with the real Claude Code 2.1.332).
///
/// With --json: `{"schema_version":1,"team","requests":[{"request_id","kind","from","at",
/// "age_seconds","tool_name","description","input","plan_file_path","plan_content","host",
/// "frame"}]}`; "kind" is permission, plan_approval or sandbox_permission; "frame" is the
/// request as sent.
#[derive(Debug, Args)]
pub(crate) struct PendingArgs {
    /// Whose inbox holds the requests
    #[arg(long = "as", value_name = "NAME", default_value = "team-lead")]
    lead: String,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    requests: Vec<Request>,
}

pub(crate) fn run(ctx: &Ctx, args: PendingArgs) -> Result<()> {
    let lead = MemberName::parse(&args.lead)?;
    let team = ctx.team()?;
    let requests = protocol::pending(&team, &lead, &ctx.sent_entries()?, ctx.now)?;
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            requests,
        });
    }
    if requests.is_empty() {
        return ctx.out.line("no pending requests");
    }
    let mut rows = vec![
        ["ID", "KIND", "FROM", "AGE", "REQUEST"]
            .map(String::from)
            .to_vec(),
    ];
    for r in &requests {
        let what = match r.kind {
            Kind::Permission => format!(
                "{}: {}",
                r.tool_name.as_deref().unwrap_or("?"),
                first_line(r.description.as_deref().unwrap_or(""), 60)
            ),
            Kind::PlanApproval => format!("plan {}", r.plan_file_path.as_deref().unwrap_or("?")),
            Kind::SandboxPermission => format!("host {}", r.host.as_deref().unwrap_or("?")),
        };
        let kind = match r.kind {
            Kind::Permission => "permission",
            Kind::PlanApproval => "plan approval",
            Kind::SandboxPermission => "sandbox host",
        };
        rows.push(vec![
            r.request_id.clone(),
            kind.into(),
            r.from.clone(),
            units::age(r.age_seconds),
            what,
        ]);
    }
    ctx.out.table(rows)
}
