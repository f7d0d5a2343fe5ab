//! What `wait` and `run` share to keep a team going: the flags (`--on-rate-limit`,
//! `--on-stall`, `--on-dead`, `--max-restarts`), the nudges and restarts done for a stuck member
//! ([`teamctl::ops::rescue`]), and how each action is told (a line on stderr, a JSON Lines
//! event on stderr with `--json`, an OpenTelemetry event).

use std::path::PathBuf;

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::{Args, ValueEnum};
use serde::Serialize;
use teamctl::host::claude::Permission;
use teamctl::host::resolve;
use teamctl::observe::keep::{Acted, OnApi, OnDead, OnStall, Rules};
use teamctl::ops::rescue::{Relaunch, Rescue};
use teamctl::store::paths::MemberName;
use teamctl::team::config::Team;
use teamctl::team::runtime::Vars;

use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::launch::claude_env;
use crate::cli::term::escape_line;

/// `--on-rate-limit`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ApiChoice {
    /// Wait it out: Claude Code retries the call itself
    Wait,
    /// End with exit 7
    Exit,
}

/// `--on-stall`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum StallChoice {
    /// Nothing: wait for the timeout
    Wait,
    /// Send the member a short message naming its task and its silence
    Nudge,
    /// Start the member again on its last session (pane teammates only)
    Restart,
    /// End with exit 8
    Exit,
}

/// `--on-dead`.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DeadChoice {
    /// Nothing: wait for the timeout
    Wait,
    /// Start the member again on its last session (pane teammates only)
    Restart,
    /// End with exit 9
    Exit,
}

/// What to do about a stuck member.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Keeping the team going")]
pub(crate) struct KeepArgs {
    /// When a member's API calls are refused (rate_limited, overloaded, api_error)
    #[arg(long, value_enum, value_name = "ACTION", default_value = "wait")]
    #[arg(help = "When a member's API calls are refused", long_help)]
    on_rate_limit: ApiChoice,

    /// When a member stalls or its request gets no answer (stalled, no_response), or never
    /// reports idle (idle_unreported: restart or exit only)
    #[arg(long, value_enum, value_name = "ACTION", default_value = "wait")]
    #[arg(help = "When a member stalls or its request gets no answer", long_help)]
    on_stall: StallChoice,

    /// When a member's pane or process is gone with work waiting (dead)
    #[arg(long, value_enum, value_name = "ACTION", default_value = "wait")]
    #[arg(help = "When a member's pane or process is gone", long_help)]
    on_dead: DeadChoice,

    /// Restarts per member at most; one more ends the command with the reason's exit code
    #[arg(long, value_name = "N", default_value_t = 2)]
    #[arg(help = "Restarts per member at most", long_help)]
    max_restarts: u32,

    /// A member inside a turn whose transcript has not grown for this long is stalled
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    #[arg(help = "A member silent this long in a turn is stalled", long_help)]
    stall_after: String,

    /// A member whose API request has had no answer for this long is no_response
    #[arg(long, value_name = "DURATION", default_value = "3m")]
    #[arg(help = "A request unanswered this long is no_response", long_help)]
    no_response_after: String,
}

impl KeepArgs {
    /// The rules.
    ///
    /// # Errors
    /// A duration that does not parse (exit 2).
    pub(crate) fn rules(&self) -> Result<Rules> {
        Ok(Rules {
            on_api: match self.on_rate_limit {
                ApiChoice::Wait => OnApi::Wait,
                ApiChoice::Exit => OnApi::Exit,
            },
            on_stall: match self.on_stall {
                StallChoice::Wait => OnStall::Wait,
                StallChoice::Nudge => OnStall::Nudge,
                StallChoice::Restart => OnStall::Restart,
                StallChoice::Exit => OnStall::Exit,
            },
            on_dead: match self.on_dead {
                DeadChoice::Wait => OnDead::Wait,
                DeadChoice::Restart => OnDead::Restart,
                DeadChoice::Exit => OnDead::Exit,
            },
            max_restarts: self.max_restarts,
            stall_after: teamctl::time::parse_duration(&self.stall_after)?,
            no_response_after: teamctl::time::parse_duration(&self.no_response_after)?,
        })
    }
}

/// The nudges and restarts for `team`, as `me`; restarts only for a team teamctl leads (its
/// record says where and how its teammates were started), and only looked into when
/// `restarts` is given (finding `claude` takes a moment), with the binary it names, if any.
pub(crate) fn rescue<'a>(
    ctx: &Ctx,
    team: &Team,
    me: &str,
    restarts: Option<Option<PathBuf>>,
    clock: &'a dyn Fn() -> DateTime<Utc>,
) -> Result<Rescue<'a>> {
    Ok(Rescue {
        layout: ctx.layout.clone(),
        team: team.name.clone(),
        records: ctx.records.clone(),
        from: MemberName::parse(me)?,
        lock: ctx.lock,
        relaunch: restarts.and_then(|bin| relaunch(team, bin)),
        clock,
    })
}

/// How teamctl started `team`'s teammates, from its own record (`None` without one), with
/// `claude_bin` (else `TEAMCTL_CLAUDE_BIN`, else found as `create` finds it).
fn relaunch(team: &Team, claude_bin: Option<PathBuf>) -> Option<Relaunch> {
    let record = team.lead.as_ref()?;
    let bin = claude_bin.or_else(|| std::env::var_os(env::CLAUDE_BIN).map(PathBuf::from));
    let env = claude_env(bin);
    let claude = resolve::find(&env.resolve).ok()?.path;
    let launch = record.launch.clone().unwrap_or_default();
    Some(Relaunch {
        claude,
        passthrough: env.passthrough.clone(),
        pane_env: env.pane_env,
        cwd: record.cwd.clone()?.into(),
        permission: Permission::from_flags(
            launch.permission_mode.as_deref(),
            launch.skip_permissions,
        ),
        tmux_session: record.tmux_session.clone()?,
        vars: Vars::read(
            launch.members.iter().flat_map(|m| m.runtime.env_names()),
            &|k| std::env::var(k).ok(),
        ),
        members: launch.members,
    })
}

#[derive(Serialize)]
struct ActedJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    acted: &'a Acted,
}

/// Tells what a keeper did: a line on stderr, or a JSON Lines event on stderr with `--json`
/// (stdout keeps the command's one document), and an OpenTelemetry event.
pub(crate) fn tell(ctx: &Ctx, a: &Acted) {
    crate::cli::otel::acted(a);
    if ctx.out.json {
        let doc = ActedJson {
            schema_version: 1,
            kind: "action",
            acted: a,
        };
        if let Ok(line) = serde_json::to_string(&doc) {
            eprintln!("{line}");
        }
        return;
    }
    let verb = match a.action {
        teamctl::observe::keep::Action::Nudge => "nudged",
        teamctl::observe::keep::Action::Restart => "restarted",
        teamctl::observe::keep::Action::Exit => "stopped for",
    };
    let what = if a.ok { "" } else { " (failed)" };
    eprintln!(
        "teamctl: {verb} {} ({}){what}: {}",
        escape_line(&a.stuck.member),
        a.stuck.reason,
        escape_line(&a.outcome)
    );
}

#[derive(Serialize)]
struct BudgetJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    warning: &'a teamctl::observe::budget::Warning,
}

/// Tells that spend crossed `--warn-at` of a limit: a line on stderr, or a `budget_warning`
/// JSON Lines event on stderr with `--json`, and an OpenTelemetry event.
pub(crate) fn tell_budget(ctx: &Ctx, w: &teamctl::observe::budget::Warning) {
    crate::cli::otel::budget_warning(w);
    if ctx.out.json {
        let doc = BudgetJson {
            schema_version: 1,
            kind: "budget_warning",
            warning: w,
        };
        if let Ok(line) = serde_json::to_string(&doc) {
            eprintln!("{line}");
        }
        return;
    }
    eprintln!("teamctl: {}", escape_line(&w.to_string()));
}
