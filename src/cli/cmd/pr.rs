//! `teamctl pr`: a pull request of the team's merged work, opened with `gh`.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::host::gh;
use teamctl::ops::export;
use teamctl::ops::merge::{pr, sources};

use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::term::escape_line as esc;

/// Open a pull request of the team's merged work with gh, its body made from the team's record
///
/// Opens a pull request of BRANCH, the branch `teamctl merge --into BRANCH` merged the
/// teammates' work into, with GitHub's `gh` (TEAMCTL_GH_BIN, else gh on PATH; it must be
/// logged in: `gh auth status`), run in the teammates' repository: `gh pr create
/// --head=BRANCH --title=… --body-file=-` (and --base, --draft when given). BRANCH must be on
/// GitHub already (`git push -u origin BRANCH`): teamctl pushes nothing.
///
/// The body is made from the team's record (as `teamctl export` reads it): what the team was
/// asked (its description), the branch's commits since the team's base and the team's cost,
/// then per teammate with a worktree: its branch with commits, files and lines against the
/// commit it started from, its cost (read from its transcripts; unknown when a model has no
/// price or no transcript was found), its brief (its first message from team-lead), the tasks
/// it completed, and its diffstat. Teammate text is escaped so it forms no Markdown or HTML.
/// --dry-run prints the body and runs nothing.
///
/// With --json: {"schema_version":1,"team","head","base","title","draft","dry_run","body",
/// "url"}; url is what gh printed (null with --dry-run).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl merge --into integration --check 'cargo test' && git push -u origin integration
  teamctl pr --into integration --dry-run                     # the body, nothing opened
  teamctl pr --into integration --title 'Review fixes' --draft
  teamctl pr --into integration --base release --json | jq -r .url")]
pub(crate) struct PrArgs {
    /// The branch with the team's merged work (the pull request's head)
    #[arg(long, value_name = "BRANCH")]
    into: String,

    /// The branch the pull request goes into [default: the repository's default branch]
    #[arg(long, value_name = "BRANCH")]
    #[arg(help = "The branch the pull request goes into", long_help)]
    base: Option<String>,

    /// Its title [default: The work of team <team>]
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,

    /// Open it as a draft
    #[arg(long)]
    draft: bool,

    /// Print the body and open nothing
    #[arg(long)]
    dry_run: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    head: &'a str,
    base: Option<&'a str>,
    title: &'a str,
    draft: bool,
    dry_run: bool,
    body: &'a str,
    url: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: PrArgs) -> Result<()> {
    let team = ctx.team()?;
    let chosen = sources(&team, &[])?;
    let sent = ctx.sent();
    let req = export::Request {
        layout: &ctx.layout,
        team: &team.name,
        lead_session_id: None,
        sent: &sent,
        now: ctx.now,
        run: None,
        records: &ctx.records,
    };
    let made = pr::prepare(&req, &chosen, &args.into, args.title.as_deref())?;
    let url = if args.dry_run {
        None
    } else {
        let explicit = std::env::var_os(env::GH_BIN)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let path = std::env::var_os("PATH");
        let bin = gh::find(explicit.as_deref(), path.as_deref())?;
        eprintln!("opening a pull request of {} with gh", esc(&made.head));
        Some(pr::open(&made, &bin, args.base.as_deref(), args.draft)?)
    };
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            head: &made.head,
            base: args.base.as_deref(),
            title: &made.title,
            draft: args.draft,
            dry_run: args.dry_run,
            body: &made.body,
            url,
        });
    }
    match url {
        // The body is Markdown teamctl made with every teammate text escaped for Markdown; it
        // still goes through the terminal escaper, as every human output does.
        None => ctx.out.line(&made.body),
        Some(u) => ctx.out.line(&esc(&u)),
    }
}
