//! `teamctl deny`: answer a teammate's request with no, as its lead.

use anyhow::Result;
use clap::Args;
use teamctl::error::usage;
use teamctl::team::protocol::Verdict;

use crate::cli::answer;
use crate::cli::context::Ctx;

/// Deny a teammate's request (see `teamctl pending`), as its lead
///
/// Writes the response frame a Claude Code lead writes into the requester's inbox, from
/// team-lead: permission_response (subtype error, with the reason), plan_approval_response
/// (approved false, the reason as feedback) or sandbox_permission_response (allow false).
/// Refused (exit 2) in a team teamctl does not lead unless --force.
///
/// With --json: `{"schema_version":1,"team","request_id","kind","to","inbox","id","response"}`.
#[derive(Debug, Args)]
pub(crate) struct DenyArgs {
    /// The request id (`teamctl pending` lists them)
    #[arg(value_name = "REQUEST_ID")]
    request_id: String,

    /// Why, for the teammate
    #[arg(long, value_name = "TEXT")]
    reason: String,

    /// Whose inbox holds the request
    #[arg(long = "as", value_name = "NAME", default_value = "team-lead")]
    lead: String,

    /// Answer as team-lead even in a team teamctl does not lead (one a Claude Code session leads,
    /// or one not made by `teamctl create`)
    #[arg(long)]
    #[arg(
        help = "Answer as team-lead even in a team teamctl does not lead",
        long_help
    )]
    force: bool,
}

pub(crate) fn run(ctx: &Ctx, args: DenyArgs) -> Result<()> {
    if args.reason.trim().is_empty() {
        return Err(usage("the reason is empty"));
    }
    answer::run(
        ctx,
        &args.request_id,
        &args.lead,
        Verdict::Deny {
            reason: args.reason,
        },
        args.force,
    )
}
