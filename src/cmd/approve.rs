//! `teamctl approve`: answer a teammate's request with yes, as its lead.

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use teamctl::protocol::Verdict;

use crate::cmd::{Ctx, answer};

/// Approve a teammate's request (see `teamctl pending`), as its lead
///
/// Writes the response frame a Claude Code lead writes into the requester's inbox, from
/// team-lead: permission_response (subtype success, bound to the request's tool call by
/// tool_use_id and approved_request with the input digest current Claude Code checks),
/// plan_approval_response (approved, with planDigest = sha256 of the plan) or
/// sandbox_permission_response (allow). Refused (exit 2) in a team teamctl does not lead unless
/// --force: there the answer would speak for someone else's lead (and the teammates of a Claude
/// Code lead ignore answers from anyone else).
///
/// With --json: {"schema_version":1,"team","request_id","kind","to","inbox","id","response"}.
#[derive(Debug, Args)]
pub(crate) struct ApproveArgs {
    /// The request id (`teamctl pending` lists them)
    #[arg(value_name = "REQUEST_ID")]
    request_id: String,

    /// Feedback for the teammate (plan approvals)
    #[arg(long, value_name = "TEXT")]
    feedback: Option<String>,

    /// Permission mode the teammate continues in after an approved plan
    #[arg(long, value_name = "MODE", value_parser = PossibleValuesParser::new(["default", "acceptEdits", "bypassPermissions", "plan"]))]
    mode: Option<String>,

    /// Whose inbox holds the request
    #[arg(long = "as", value_name = "NAME", default_value = "team-lead")]
    lead: String,

    /// Answer as team-lead even in a team teamctl does not lead (one a Claude Code session leads,
    /// or one not made by `teamctl create`)
    #[arg(long)]
    force: bool,
}

pub(crate) fn run(ctx: &Ctx, args: ApproveArgs) -> Result<()> {
    let verdict = Verdict::Approve {
        feedback: args.feedback,
        mode: args.mode,
    };
    answer::run(ctx, &args.request_id, &args.lead, verdict, args.force)
}
