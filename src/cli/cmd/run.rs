//! `teamctl run`: a team led by Claude itself, headless, until its work is done.

use std::fs;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::{Args, ValueEnum};
use serde::Serialize;
use teamctl::error::{Error, Stuck as StuckKind, usage};
use teamctl::host::claude::ClaudeInfo;
use teamctl::observe::status::TaskCounts;
use teamctl::observe::watch::Watch;
use teamctl::ops::merge::queue::Outcome as MergeOutcome;
use teamctl::ops::run::{
    self, Dialog, Outcome, Resumed, RunEnv, RunEvent, Spec, State, Teammate, TeammateMode,
    printable,
};
use teamctl::store::paths::{Layout, TeamName};
use teamctl::team::config::Team;
use teamctl::team::records::Records;
use teamctl::time;
use teamctl::units::usd;

use crate::cli::args::{CapArgs, TotalsJson};
use crate::cli::bridging::{self, ChatArgs, Transport};
use crate::cli::context::Ctx;
use crate::cli::going::{self, KeepArgs};
use crate::cli::launch::{PermissionArgs, claude_env};
use crate::cli::merging::{self, MergeIntoArgs};
use crate::cli::otel::{self, OtelArgs};
use crate::cli::output::warn;
use crate::cli::record::{RecordJson, summary_line};
use crate::cli::sandboxed;
use crate::cli::{env, signals};

/// Run a team led by Claude itself, headless, until its work is done
///
/// Today only an interactive Claude Code session leads a team (its implicit session-<8hex> team,
/// 2.1.178 and later): `claude -p` forms none and exits while its teammates still work. `run`
/// starts such an interactive lead (agent teams enabled) in a detached tmux session
/// teamctl-run-<name>, gives it PROMPT as its first message, watches the team it forms, and ends
/// it when the work is done. (`create` is the other way round: teamctl is the lead.)
///
/// Steps, each printed on stderr as `<state>: …`: validating (--name; one run per name at a
/// time, held by an OS lock on $TEAMCTL_DATA_DIR/run/<name>.lock, so a second run of that name
/// fails at once naming the first's pid; the claude binary and its version; tmux, and no tmux
/// session teamctl-run-<name> yet; and every start-up dialog that would block a session nobody
/// watches, below, each named with the setting that skips it and the `teamctl prepare` that
/// writes them all: exit 1 at once instead of hanging until the timeout), spawning, monitoring
/// (each teammate is reported as it joins: name, agent type, backend, pane), running, then done,
/// failed, timeout or budget.
///
/// Done means: the lead's turn has ended (its transcript's last message is an assistant message
/// not waiting for a tool), no teammate is working (a pane teammate works while its pane is alive
/// and its isActive is not false; an in-process one until its own transcript shows an ended
/// turn; a helper the lead runs in the background, such as one with `isolation: "worktree"`,
/// until its .meta.json says finished or its transcript shows an ended turn), no inbox of the
/// lead or of a running teammate holds an unread entry, and all of that
/// held, with nothing moving, for --settle (the whole rule: docs/design.md, "The done rule").
/// A lead turn that ended with an API error once Claude Code's retries ran out is not done:
/// when that is all that is left, for --settle, the run ends stuck with exit 7, since nothing
/// would prompt the lead again. Failed: a dialog or permission prompt shows in the lead's pane,
/// or the lead exits first (its last lines are shown). Timeout: at --timeout, with the last
/// lines of the lead's pane.
///
/// With --max-cost USD or --max-tokens N, the run also ends, as at its timeout (the lead and
/// its team ended, nothing left behind), the moment the team's total spend crosses the cap:
/// state budget, exit 6, "budget exceeded: $X of $Y, by team-lead $a, worker $b". The spend
/// is read from the lead's and its teammates' Claude Code transcripts as they grow (see
/// `teamctl status --help`); what the run cost is reported at the end either way.
///
/// The lead's final answer (the text of the last assistant message of its transcript; the pane's
/// last lines when there is none) is printed alone on stdout; the team, its teammates and their
/// state, the task counts and the transcript path go to stderr. Then, unless --keep, the lead is
/// ended (SIGTERM, what a closed terminal does: it stops its teammates and removes its team
/// folder), given up to 5 s, and the tmux session killed; Claude Code leaves tasks/<team>/ and
/// the transcripts behind, and so does run. Ctrl-C, SIGTERM and the timeout clean up the same
/// way before teamctl exits (130, 143, 3); a second signal exits at once. With --keep the lead
/// stays: stderr says `tmux attach -t teamctl-run-<name>` and which team to talk to, and a later
/// run of that name is refused until that session is ended. While a run goes on every other verb
/// works on its team (`teamctl --team session-… status`, `send`, `inbox`, `watch`); runs with
/// different names never see each other's teams.
///
/// With --export PATH, the team's record (as `teamctl export --out PATH`: its files, every
/// member's transcripts, the whole conversation, the tasks, the final answer and what each
/// member cost, with the run's state) is written at the last moment before the lead is told to
/// stop, whatever the end: done, failed, timeout, budget or interrupted, once the lead was started (a lead that formed no team still leaves
/// its transcript). A record that cannot be written is a warning, and exit 1 when the run was
/// done.
///
/// With --bridge telegram|slack|webhook (and the chat's flags of `teamctl bridge`: --chat,
/// --allow, --api, --url, --listen, --ttl; the token or secret from the environment), a chat
/// is told what needs a person while the run goes on: a member gone or out of retries, a cap
/// warning (--warn-at), what --on-stall/--on-dead did, and the run's end with its state and
/// cost; `status` and `say MEMBER TEXT` are answered there. A permission prompt on the lead's
/// own screen is posted (the pane's text, as code) with a one-time code instead of failing the
/// run: `approve CODE` presses Enter on its first choice (Yes), `deny CODE [reason]` presses
/// Escape and types the reason as the lead's next message (Claude Code 2.1.332), only into the
/// pane the run started, while the run's --timeout goes on. Its teammates' requests are their
/// lead's to answer (they accept answers from it only), so they are not posted. The bridge's
/// records go to stderr (with --json: `{"schema_version":1,"type":"bridge","event",…}`, the
/// keys of `bridge --json`).
///
/// With --merge-into BRANCH (--cwd in a git repository), once the run is done the work of the
/// lead's helpers that worked in git worktrees of their own is merged onto BRANCH as `teamctl
/// merge --into BRANCH` merges (--check CMD, --check-timeout and --strategy as there: in a
/// scratch worktree in teamctl's data dir, the checkout and every other branch left as they
/// were; exit 10 when some are set aside). Claude Code (2.1.332) gives a helper such a
/// worktree when the lead starts it with the Agent tool's `isolation: "worktree"` (ask for it in
/// PROMPT): `<repo>/.claude/worktrees/agent-<id>` on branch `worktree-agent-<id>`, made from
/// HEAD; such a helper runs as a background subagent of the lead, not as a member in
/// config.json. Only the
/// worktrees of this run's lead session are merged (git must list one at exactly that folder and
/// the session have its transcript `agent-<id>.jsonl`; its branch worktree-agent-<id> is what
/// is merged), from the commit HEAD named when the run started, each named by its `.meta.json`
/// name, in the order of their ids; none is `nothing merged` on stderr. A run that is not done
/// merges nothing. The merge comes before the record (--export) and before the lead is told to
/// stop, so the record says what was merged (summary.json `run.merge`, report.md's "Merged
/// onto" section). The worktrees and their branches are left as Claude Code leaves them (`git
/// worktree remove`, `git branch -D`). A --cwd outside a git repository, or a BRANCH that is not
/// a branch name or is checked out, is exit 2 before the lead starts.
///
/// --sandbox starts the lead's tmux server in one sandbox (bubblewrap, TEAMCTL_BWRAP_BIN;
/// tmux 3.2 or later; docs/sandbox.md) that the lead and every pane teammate it starts share:
/// the repository of --cwd writable but its .git config, hooks and submodules' repositories;
/// the config dir's teams/, tasks/ and projects/ writable, with a private copy of .claude.json;
/// the rest of the machine read-only, a private /tmp, the secrets in the home directory and the
/// known places of control sockets (XDG_RUNTIME_DIR, the SSH agent's, Docker's, D-Bus's)
/// hidden. The run itself is started again with that server as its tmux server; the record
/// and report show each member's sandbox. A missing engine, or one the system blocks, is exit
/// 2 naming the cause and the fix.
///
/// With an OpenTelemetry endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT), the run's trace (its steps,
/// a span per teammate, the messages and task changes) and metrics (each member's tokens and
/// cost among them) are exported (docs/observability.md, "OpenTelemetry").
///
/// With --json, progress goes to stderr as JSON Lines (`{"schema_version":1,"type":"progress",
/// "state","message"}` and `{"schema_version":1,"type":"teammate_joined","name","agent_type",
/// "backend","pane","state"}`) and one document to stdout: `{"schema_version":1,"type":"result",
/// "name","team","lead_session_id","state","reason","dialog","teammates":[{"name","agent_type",
/// "backend","pane","state"}],"tasks":{"pending","in_progress","completed","blocked","ready"},
/// "result","result_source","transcript","claude":{"path","found_by","version"},"tmux_session",
/// "kept","elapsed_ms","totals":{"tokens":{"input","output","cache_read","cache_creation"},
/// "cost_usd"},"export","resumed","merge"}`; merge is the `merge --json` document but
/// schema_version and team when --merge-into merged, else null (the merge queue's steps are
/// progress lines `{"schema_version":1,"type":"merging","message"}`). state is done, failed
/// (with reason, and dialog when a dialog was the cause: onboarding, api_key, trust, bypass,
/// permission_prompt, other), timeout, budget or stuck (exit 7, 8 or 9, with reason);
/// totals is what the run cost, read from its transcripts after cleanup (null when none was
/// found); export is the record written (`{"out","format","files","bytes","size","messages",
/// "transcripts","warnings","error"}`, error set and the rest null when it could not be
/// written) or null without --export; with --export, also a progress line
/// `{"schema_version":1,"type":"exported",…}` with the same keys. A teammate's
/// state is starting, working, idle or exited; result_source is transcript, pane or null;
/// tmux_session is set only with --keep (kept: true); team and lead_session_id are null when the
/// run failed before they existed. An error before the result (no binary, no tmux, a run of that
/// name already going) ends the progress stream with a failed line and prints no document.
///
/// With --resume TEAM, a run whose lead was killed (a crash, `kill -9`, a machine gone; a lead
/// that ends normally removes its team) is carried on. TEAM is the team (session-<8hex>, as the
/// run named it) or its lead's session id; the lead's last session is started again (`claude
/// --resume <leadSessionId>`) in tmux session teamctl-run-<name>, from --cwd (the folder it ran
/// in: Claude Code resumes a session only from there), with the flags given now (give those the
/// first run had). Its first message says it was interrupted, names the team's open tasks and
/// carries the messages its teammates sent it that it had not read (marked read then; each
/// quoted as untrusted teammate text, every line prefixed `| ` between lines with a boundary
/// drawn for that prompt, so none can pose as teamctl or the user), then PROMPT, if given. A
/// resumed lead never reads what its old teammates send (Claude Code 2.1.332 rewrites
/// config.json with itself alone), so those still running in tmux session teamctl-run-<name>
/// are ended first when the run's record proves that session the interrupted run's (any other
/// session of that name is refused before anything is ended), and any elsewhere are named and
/// left running. A leadSessionId that is not a session id (8-4-4-4-12 hex) is refused. While it
/// runs, the team's leadSessionId is kept at the resumed session (set back under the config
/// lock, with a line on stderr, should Claude Code write another). The rest is a run as above:
/// the done rule on that team, the cap, the timeout, --keep, --export, the keeping flags. A
/// team that does not exist, whose lead still runs, or whose lead session has no transcript in
/// --cwd's project folder is exit 1 with the reason. With --json the result's resumed is
/// `{"team","ended","left_running","messages","open_tasks","lead_session_fixed"}` (null
/// without --resume).
///
/// Exit codes: 0 done, 1 failed (a dialog, an early exit, a missing binary), 2 usage, 3
/// timeout, 6 budget, 7 the API refused (--on-rate-limit exit, or the lead's own retries ran
/// out), 8 and 9 (--on-stall exit, --on-dead exit), 10 done but some helpers set aside by
/// --merge-into, 130 Ctrl-C, 143 SIGTERM.
#[derive(Debug, Args)]
#[command(mut_args(bridging::chat_flag_in_long_help))]
#[command(after_long_help = "Start-up dialogs:
  onboarding  shown unless \"hasCompletedOnboarding\": true in .claude.json
  api_key     shown unless ANTHROPIC_API_KEY is unset, or its last 20 characters are in
              customApiKeyResponses.approved
  trust       shown unless projects[\"<--cwd or a parent>\"].hasTrustDialogAccepted is true
  bypass      with --dangerously-skip-permissions or --permission-mode bypassPermissions: shown
              unless \"bypassPermissionsModeAccepted\": true in .claude.json, or
              \"skipDangerousModePermissionPrompt\": true in settings.json (the config dir's, or
              <cwd>/.claude/settings[.local].json)
Each is read from Claude Code's files (its global config is $CLAUDE_CONFIG_DIR/.claude.json, or
~/.claude.json without that variable); the name is \"dialog\" in --json. `teamctl prepare
--cwd DIR [--skip-permissions]` writes every one of these settings. As root, skipping
permissions also needs IS_SANDBOX=1 (Claude Code refuses otherwise).

Examples:
  teamctl run \"Review PR 42 with a team of two: one for the auth code, one for the tests\" \\
      --cwd ~/src/app --dangerously-skip-permissions --timeout 30m > review.md
  teamctl run --prompt-file plan.md --teammate-mode tmux --name nightly --json | jq -r .result
  teamctl run \"Split the migration into tasks and staff them\" --keep --name migrate
  teamctl run --prompt-file plan.md --max-cost 10 --timeout 1h   # exit 6 past $10
  TEAMCTL_TELEGRAM_TOKEN=… teamctl run --prompt-file plan.md --bridge telegram --chat 42 \\
      --allow 42 --max-cost 10 --warn-at 80%
  teamctl run \"Fix issues 12 and 14, one helper each, each with isolation: worktree\" \\
      --merge-into integration --check 'cargo test' --dangerously-skip-permissions
  tmux attach -t teamctl-run-migrate     # then: teamctl --team session-… status
  teamctl run --resume session-0b1c2d3e --cwd ~/src/app --dangerously-skip-permissions")]
pub(crate) struct RunArgs {
    /// The lead's first message (with --resume: added to what it is told)
    #[arg(
        value_name = "PROMPT",
        required_unless_present_any = ["prompt_file", "resume"],
        conflicts_with = "prompt_file"
    )]
    prompt: Option<String>,

    /// Read the prompt from a file (`-`: standard input)
    #[arg(long, value_name = "FILE")]
    prompt_file: Option<PathBuf>,

    /// The lead's working directory [default: the current one]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// Model for the lead (--model); its teammates get the same one
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,

    #[command(flatten)]
    permission: PermissionArgs,

    /// Where the lead starts its teammates [default: Claude Code's teammateMode setting]
    #[arg(long, value_enum, value_name = "MODE")]
    #[arg(help = "Where teammates run", long_help)]
    teammate_mode: Option<TeammateModeArg>,

    /// Give up after this long (exit code 3)
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    timeout: String,

    /// How long the done rule must hold before the run counts as done
    #[arg(long, value_name = "DURATION", default_value = "3s")]
    #[arg(help = "How long the done rule must hold", long_help)]
    settle: String,

    /// Leave the lead and its team running at the end (prints how to attach)
    #[arg(long)]
    #[arg(help = "Leave the lead and its team running at the end", long_help)]
    keep: bool,

    /// Start the lead's tmux server in one sandbox (bubblewrap; docs/sandbox.md) that the lead
    /// and its teammates share: the repository writable but its .git config and hooks, the rest
    /// of the machine read-only, the secrets in the home directory hidden
    #[arg(long)]
    #[arg(
        help = "Run the lead and its teammates in one sandbox (docs/sandbox.md)",
        long_help
    )]
    sandbox: bool,

    /// The claude binary [default: found on PATH and in the usual install places]
    #[arg(long, value_name = "PATH", env = env::CLAUDE_BIN)]
    #[arg(help = "The claude binary", long_help)]
    claude_bin: Option<PathBuf>,

    /// A label for this run (1 to 64 of A-Za-z0-9_-): one run per label at a time; names the
    /// tmux session
    #[arg(long, value_name = "LABEL", default_value = "default")]
    #[arg(help = "A label: one run per label at a time", long_help)]
    name: String,

    /// Write a record of the team (as `teamctl export --out PATH`: a folder, or a .tar.gz) at
    /// the last moment before the lead is told to stop, whatever the run's end
    #[arg(long, value_name = "PATH")]
    #[arg(
        help = "Write a record of the team before the lead is told to stop",
        long_help
    )]
    export: Option<PathBuf>,

    /// At most N teammates: one the lead starts past that is stopped (its pane ended; tmux
    /// teammates only) and the lead is told to carry on with the ones it has
    #[arg(long, value_name = "N")]
    #[arg(help = "At most N teammates: one past that is stopped", long_help)]
    max_teammates: Option<usize>,

    /// Carry on TEAM (or the lead session id) whose lead was killed: its last session resumed
    #[arg(long, value_name = "TEAM")]
    #[arg(help = "Carry on TEAM whose lead was killed", long_help)]
    resume: Option<String>,

    /// Post what needs a person to a chat (a member gone or out of retries, a cap warning, the
    /// run's end) and answer the lead's permission prompts from it; the chat's flags as for
    /// `teamctl bridge`
    #[arg(long, value_enum, value_name = "TRANSPORT")]
    #[arg(help = "Answer from a chat", long_help)]
    bridge: Option<Transport>,

    #[command(flatten)]
    chat: ChatArgs,

    #[command(flatten)]
    cap: CapArgs,

    #[command(flatten)]
    going: KeepArgs,

    #[command(flatten)]
    otel: OtelArgs,

    #[command(flatten)]
    merge: MergeIntoArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TeammateModeArg {
    Tmux,
    InProcess,
}

#[derive(Serialize)]
struct ProgressJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    state: State,
    message: &'a str,
}

#[derive(Serialize)]
struct JoinedJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    teammate: &'a Teammate,
}

#[derive(Serialize)]
struct ResultJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    team: Option<&'a str>,
    lead_session_id: Option<&'a str>,
    state: State,
    reason: Option<&'a str>,
    dialog: Option<Dialog>,
    teammates: &'a [Teammate],
    tasks: &'a TaskCounts,
    result: Option<&'a str>,
    result_source: Option<&'a str>,
    transcript: Option<String>,
    claude: Option<&'a ClaudeInfo>,
    tmux_session: Option<&'a str>,
    kept: bool,
    elapsed_ms: u64,
    totals: Option<TotalsJson>,
    export: Option<RecordJson>,
    resumed: Option<&'a Resumed>,
    merge: Option<&'a MergeOutcome>,
}

#[derive(Serialize)]
struct ExportedJson {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    export: RecordJson,
}

pub(crate) fn run(ctx: &Ctx, args: RunArgs) -> Result<()> {
    run::check_name(&args.name)?;
    let spec = spec(&args)?;
    if args.sandbox && std::env::var_os(env::RUN_SANDBOX).is_none() {
        // The run started again inside reports and exports; this one only holds the sandbox.
        let claude = claude_env(args.claude_bin.clone());
        let found = teamctl::host::resolve::find(&claude.resolve).ok();
        return sandboxed::run(ctx, &spec, found.as_ref().map(|f| f.path.as_path()));
    }
    otel::start("run", args.otel.otel_content);
    let base = merging::run_base(&args.merge, &spec.cwd)?;
    let mut env = run_env(ctx, &args)?;
    env.desk = bridging::desk(ctx, args.bridge, &args.chat)?;
    let desk = env.desk.clone();
    let json = ctx.out.json;
    let follower = Follower::default();
    let mut progress = |e: RunEvent| {
        match &e {
            RunEvent::Progress(state, message) => otel::step(state.as_str(), message),
            RunEvent::TeamFormed(name) if otel::enabled() => {
                otel::team(name.as_str());
                follower.start(&ctx.layout, &ctx.records, name);
            }
            _ => {}
        }
        if let Some(d) = &desk {
            d.tell(&e);
        }
        // Progress is best effort: a closed stderr must not stop the run.
        let line = event_line(ctx, json, e);
        if let Some(l) = line {
            eprintln!("{l}");
        }
    };
    // Ctrl-C and SIGTERM end the lead before teamctl exits (with 130 / 143).
    signals::defer();
    // --merge-into merges once the run has ended, before its record is taken (which says what
    // was merged) and its lead is ended.
    let mut merged: Result<Option<MergeOutcome>> = Ok(None);
    let mut ended = |o: &run::Outcome| {
        let into = args.merge.merge_into.as_deref()?;
        merged = merging::after_run(ctx, &args.merge, base.as_ref(), o);
        Some(run::helper_worktrees::recorded(into, o.state, &merged))
    };
    let caller = run::Caller {
        progress: &mut progress,
        interrupted: &signals::received,
        ended: &mut ended,
    };
    let outcome = match run::run(&ctx.layout, &spec, &env, caller) {
        Ok(o) => o,
        Err(e) => {
            if let Some(d) = &env.desk {
                let mut o = run::Outcome::failed();
                o.reason = Some(format!("{e:#}"));
                d.finish(&args.name, &o);
            }
            if json {
                progress(RunEvent::Progress(State::Failed, &format!("{e:#}")));
            }
            return Err(e);
        }
    };
    follower.stop();
    if let Some(d) = &env.desk {
        d.finish(&args.name, &outcome);
    }
    progress(RunEvent::Progress(
        outcome.state,
        outcome.reason.as_deref().unwrap_or(match outcome.state {
            State::Done => "the team's work is done",
            _ => "",
        }),
    ));
    if let Some(s) = &outcome.spend {
        otel::spend(s);
    }
    let merge = merged.as_ref().ok().and_then(Option::as_ref);
    print(ctx, &args.name, &outcome, merge)?;
    if args.export.is_some() && outcome.export.is_none() {
        warn("no record was written: the lead was never started");
    }
    let export_error = match &outcome.export {
        Some(Err(e)) => Some(e.as_str()),
        _ => None,
    };
    if let Some(e) = export_error
        && outcome.state != State::Done
    {
        warn(&format!("the run's record could not be written: {e}"));
    }
    conclude(&args, &outcome, export_error)?;
    match merged? {
        None => Ok(()),
        Some(o) => {
            if !ctx.out.json {
                eprintln!("{}", merging::human(&o));
            }
            merging::exit(&o)
        }
    }
}

/// The stderr line for a run's event (`None` for those told otherwise); with `--json`, the
/// event as one JSON object.
fn event_line(ctx: &Ctx, json: bool, e: RunEvent) -> Option<String> {
    match e {
        RunEvent::Progress(state, message) if json => serde_json::to_string(&ProgressJson {
            schema_version: 1,
            kind: "progress",
            state,
            message,
        })
        .ok(),
        RunEvent::Progress(state, message) => {
            Some(format!("{}: {}", state.as_str(), printable(message)))
        }
        RunEvent::Joined(t) if json => serde_json::to_string(&JoinedJson {
            schema_version: 1,
            kind: "teammate_joined",
            teammate: t,
        })
        .ok(),
        RunEvent::Joined(t) => Some(format!(
            "running: teammate {} joined ({}, {}{})",
            printable(&t.name),
            printable(t.agent_type.as_deref().unwrap_or("no agent type")),
            printable(t.backend.as_deref().unwrap_or("unknown backend")),
            t.pane
                .as_deref()
                .map(|p| format!(", pane {p}"))
                .unwrap_or_default()
        )),
        RunEvent::TeamFormed(_) => None,
        RunEvent::Acted(a) => {
            going::tell(ctx, a);
            None
        }
        RunEvent::BudgetWarning(w) => {
            going::tell_budget(ctx, w);
            None
        }
        RunEvent::Exported(d) if json => serde_json::to_string(&ExportedJson {
            schema_version: 1,
            kind: "exported",
            export: RecordJson::of(Ok(d)),
        })
        .ok(),
        RunEvent::Exported(d) => {
            for w in &d.warnings {
                warn(w);
            }
            Some(format!("exported: record written to {}", summary_line(d)))
        }
    }
}

/// The exit the run's end decides: done (unless its record could not be written), or the error
/// that names how it ended.
fn conclude(args: &RunArgs, outcome: &run::Outcome, export_error: Option<&str>) -> Result<()> {
    match outcome.state {
        State::Done => match export_error {
            None => Ok(()),
            Some(e) => Err(anyhow!(
                "run '{}' was done, but its record could not be written: {e}",
                args.name
            )),
        },
        State::Timeout => Err(Error::Timeout(format!(
            "run '{}' timed out after {}",
            args.name, args.timeout
        ))
        .into()),
        State::Budget => Err(Error::Budget(
            outcome
                .reason
                .as_deref()
                .and_then(|r| r.lines().next())
                .map(|r| r.trim_end_matches(';').to_string())
                .unwrap_or_else(|| format!("run '{}' went over budget", args.name)),
        )
        .into()),
        State::Stuck => Err(Error::Stuck(
            outcome.stuck.unwrap_or(StuckKind::Stall),
            outcome
                .reason
                .as_deref()
                .and_then(|r| r.lines().next())
                .map(|r| r.trim_end_matches(';').to_string())
                .unwrap_or_else(|| format!("run '{}' stopped for a stuck member", args.name)),
        )
        .into()),
        _ => Err(anyhow!(
            "run '{}' failed{}",
            args.name,
            outcome
                .dialog
                .map(|d| format!(": {} ({})", d.title(), d.as_str()))
                .unwrap_or_default()
        )),
    }
}

/// With telemetry on, follows the run's team once it forms, so its members and messages reach
/// the trace (`run` itself only polls the files it needs).
#[derive(Default)]
struct Follower {
    stop: Arc<AtomicBool>,
    thread: std::cell::RefCell<Option<thread::JoinHandle<()>>>,
}

impl Follower {
    fn start(&self, layout: &Layout, records: &Records, name: &TeamName) {
        if self.thread.borrow().is_some() {
            return;
        }
        let Ok(team) = Team::open(layout, name, records) else {
            return;
        };
        let stop = self.stop.clone();
        *self.thread.borrow_mut() = Some(thread::spawn(move || {
            let clock = chrono::Utc::now;
            let (mut watch, _) = Watch::new(team, None, clock());
            otel::members(&watch);
            let mut waker = watch.waker(None);
            otel::changes(&watch.rescan(clock()));
            while !stop.load(Ordering::SeqCst) {
                otel::changes(&watch.next(&mut waker, Duration::from_millis(200), &clock));
            }
        }));
    }

    fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.borrow_mut().take() {
            let _ = t.join();
        }
    }
}

fn print(ctx: &Ctx, name: &str, o: &Outcome, merge: Option<&MergeOutcome>) -> Result<()> {
    if ctx.out.json {
        return ctx.out.json(&ResultJson {
            schema_version: 1,
            kind: "result",
            name,
            team: o.team.as_deref(),
            lead_session_id: o.lead_session_id.as_deref(),
            state: o.state,
            reason: o.reason.as_deref(),
            dialog: o.dialog,
            teammates: &o.teammates,
            tasks: &o.tasks,
            result: o.result.as_deref(),
            result_source: o.result_source,
            transcript: o.transcript.as_ref().map(|p| p.display().to_string()),
            claude: o.claude.as_ref(),
            tmux_session: o.tmux_session.as_deref(),
            kept: o.kept,
            elapsed_ms: o.elapsed_ms,
            totals: o.spend.as_ref().map(TotalsJson::of),
            export: o
                .export
                .as_ref()
                .map(|r| RecordJson::of(r.as_ref().map_err(String::as_str))),
            resumed: o.resumed.as_ref(),
            merge,
        });
    }
    // The summary on stderr, the answer alone on stdout (`teamctl run … > answer.txt`).
    eprintln!(
        "team: {} ({} teammate(s); tasks: {} completed, {} in progress, {} pending)",
        o.team.as_deref().unwrap_or("none"),
        o.teammates.len(),
        o.tasks.completed,
        o.tasks.in_progress,
        o.tasks.pending
    );
    for t in &o.teammates {
        eprintln!(
            "  {} ({}, {}): {}",
            printable(&t.name),
            printable(t.agent_type.as_deref().unwrap_or("-")),
            printable(t.backend.as_deref().unwrap_or("-")),
            t.state
        );
    }
    if let Some(p) = &o.transcript {
        eprintln!("transcript: {}", p.display());
    }
    if let Some(s) = &o.spend {
        let t = &s.tokens;
        eprintln!(
            "cost: {} ({} input, {} output, {} cache read, {} cache write tokens)",
            s.cost_usd.map_or("unknown".to_string(), usd),
            t.input,
            t.output,
            t.cache_read,
            t.cache_creation
        );
    }
    if o.kept {
        if let Some(s) = &o.tmux_session {
            eprintln!(
                "kept: attach with `tmux attach -t {s}`; end it with `tmux kill-session -t {s}`"
            );
        }
        if let Some(t) = &o.team {
            eprintln!(
                "kept: talk to the team with `teamctl --team {t} status` (or send, inbox, watch)"
            );
        }
    }
    match (&o.result, o.state, o.result_source) {
        (Some(r), State::Done, _) => ctx.out.line(&printable(r)),
        // On failure the pane's last lines are already in the reason.
        (Some(r), _, Some("transcript")) => {
            eprintln!("last answer of the lead:\n{}", printable(r));
            Ok(())
        }
        _ => Ok(()),
    }
}

fn spec(args: &RunArgs) -> Result<Spec> {
    let prompt = match (&args.prompt, &args.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, None) if args.resume.is_some() => String::new(),
        (None, Some(f)) if f.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("could not read the prompt from standard input")?;
            s
        }
        (None, Some(f)) => fs::read_to_string(f)
            .with_context(|| format!("could not read prompt file {}", f.display()))?,
        (None, None) => return Err(usage("give a PROMPT or --prompt-file FILE")),
    };
    let prompt = prompt.trim_end_matches(['\n', '\r']).to_string();
    if prompt.trim().is_empty() && args.resume.is_none() {
        return Err(usage("the prompt is empty"));
    }
    let cwd = match &args.cwd {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("could not read the current directory")?,
    };
    let cwd = fs::canonicalize(&cwd)
        .ok()
        .filter(|c| c.is_dir())
        .ok_or_else(|| anyhow!("--cwd {} is not a directory", cwd.display()))?;
    let permission = args.permission.permission();
    let timeout = time::parse_duration(&args.timeout)?;
    if timeout.is_zero() {
        return Err(usage("--timeout must be more than 0"));
    }
    Ok(Spec {
        name: args.name.clone(),
        prompt,
        cwd,
        model: args.model.clone(),
        permission,
        teammate_mode: args.teammate_mode.map(|m| match m {
            TeammateModeArg::Tmux => TeammateMode::Tmux,
            TeammateModeArg::InProcess => TeammateMode::InProcess,
        }),
        timeout,
        settle: time::parse_duration(&args.settle)?,
        keep: args.keep,
        export: args.export.clone(),
        cap: args.cap.cap()?,
        rules: args.going.rules()?,
        max_teammates: args.max_teammates,
        resume: args.resume.clone(),
    })
}

fn run_env(ctx: &Ctx, args: &RunArgs) -> Result<RunEnv> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let claude_json = ctx.claude_json()?;
    // Claude Code keeps .claude.json in its config dir only when CLAUDE_CONFIG_DIR is set.
    let config_dir = if ctx.config_dir_chosen() {
        Some(
            std::path::absolute(ctx.layout.root())
                .with_context(|| format!("could not resolve {}", ctx.layout.root().display()))?,
        )
    } else {
        None
    };
    let data = ctx
        .records
        .data_dir()
        .context("could not find a data directory; set TEAMCTL_DATA_DIR")?;
    let is_root = teamctl::host::proc::runs_as_root();
    Ok(RunEnv {
        claude: claude_env(args.claude_bin.clone()),
        claude_json,
        config_dir,
        api_key: var("ANTHROPIC_API_KEY"),
        root_without_sandbox: is_root && var("IS_SANDBOX").is_none(),
        run_dir: data.join("run"),
        version_timeout: Duration::from_secs(10),
        records: ctx.records.clone(),
        clock: chrono::Utc::now,
        desk: None,
        sandbox: sandboxed::rules_given()?,
    })
}
