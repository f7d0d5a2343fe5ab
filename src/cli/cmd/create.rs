//! `teamctl create`: stand up a team that teamctl leads and start its teammates.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, anyhow};
use clap::{Args, ValueEnum};
use serde::Serialize;
use teamctl::error::usage;
use teamctl::host::claude::{ClaudeInfo, Permission};
use teamctl::ops::create::{
    self, Launch, LaunchEnv, Loaded, MemberOutcome, MemberSpec, Outcome, Overrides, Spec, Step,
};
use teamctl::store::named::{NAMED_FILE_LIMIT, read_named_text};
use teamctl::store::paths::{MemberName, TeamName};
use teamctl::team::config::LEAD;
use teamctl::team::runtime::{Runtime, Vars};
use teamctl::time;

use crate::cli::by_policy::{EventsTo, Runner};
use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::launch::{PermissionArgs, claude_env};
use crate::cli::otel::{self, OtelArgs};
use crate::cli::term::{self, escape_line as esc};

/// Create a team that teamctl leads, brief its teammates and start them
///
/// Stands up a team the way a Claude Code lead does it (Claude Code removed TeamCreate, and
/// `claude -p` no longer forms a team). Teammates come from --member NAME:BRIEF (repeat),
/// --member-file FILE, or --member NAME with --brief-file NAME:FILE; their colours follow that
/// order, from blue (the lead takes red).
///
/// Steps, each printed on stderr as `<state>: …`: validating (the team name; member names valid,
/// unique ignoring case, not main, team-lead, user or system, a brief each; the claude binary and
/// `claude --version`; tmux, and no tmux session teamctl-<team> yet; a team whose folder has a
/// config.json exists already: an error, never overwritten), provisioning (under Claude Code's
/// config lock, taken without waiting, so of two creates of one team exactly one proceeds and the
/// other fails at once: a folder without config.json, what a failed attempt left, is cleared;
/// tasks/<team>/, each teammate's inbox holding only its brief from team-lead (empty, the brief
/// to come, when the teammates are launched), and last config.json in Claude Code's shape with
/// a "teamctl" key saying teamctl leads the team), launching (one window per teammate in the
/// detached tmux session teamctl-<team>, running the command line a Claude Code lead uses;
/// --launch none stops before this step), waiting (each brief is written once every teammate has
/// read its inbox, up to 10 s, and 1 s more: a teammate reading config.json as another's first
/// turn rewrites it never reports idle; a teammate is ready once its brief is gone from its inbox
/// or marked read, or an idle_notification from it is in team-lead's inbox), then ready (provisioned with --launch
/// none) or failed: as soon as a pane exits first, or at --timeout, naming each teammate that did
/// not start with the last lines of its pane. On failure the tmux session is killed and the files
/// stay for inspection (`teamctl delete <team>` removes them). How each step is done:
/// docs/design.md, "How create stands up a team".
///
/// The teammates run unattended only if Claude Code asks nothing at start-up: onboarding done,
/// the API key approved, the --cwd folder trusted, and with --dangerously-skip-permissions the
/// bypass prompt accepted (skipDangerousModePermissionPrompt in settings.json; IS_SANDBOX=1 when
/// running as root); `teamctl prepare --cwd DIR --skip-permissions` writes all of them. Otherwise
/// a teammate waits at that dialog and create fails at the timeout, showing it and naming the
/// `teamctl prepare` that settles it.
///
/// --file FILE reads the team from a team file (TOML, docs/team-file.md): its name ({n} and
/// {date} give one per run), teammates and briefs, and each teammate's model, agent type,
/// permission mode, git worktree and runtime (mcp_config, strict_mcp_config, settings, effort:
/// its own --mcp-config, --settings and --effort, which the client's --help must list; env: its
/// own variables, each a literal or "${NAME}" read from teamctl's environment, given to its
/// process only and never written down); flags given here win over it, --member adds
/// teammates. A mistake in it, an unset NAME or one of teamctl's own secrets is exit 2 (the
/// file's as FILE:LINE:COL), before anything is written. Each teammate starts
/// with its own settings, which config.json (agentType, model as given, cwd) and teamctl's
/// record of the team keep (a restart uses the record). --worktree (or `worktree` in the file)
/// gives a teammate a git worktree of its own in teamctl's data dir, on branch
/// teamctl/<team>/<member> (or the one named) made with `git worktree add` from HEAD, trusted
/// as the working directory is; not a git repository is exit 2. --dry-run prints what would be
/// done and writes nothing; with --json `{"schema_version":1,"dry_run":true,"team","config",
/// "description","cwd","policy","launch","members":[{"name","color","model","agent_type",
/// "permission_mode","skip_permissions","cwd","worktree":{"path","branch","new_branch","base"},
/// "runtime":{"mcp_config","strict_mcp_config","settings","effort","env"},
/// "sandbox":{"network","write","hide"},"brief"}]}` (runtime with only the keys set, env as
/// written).
///
/// --sandbox (or `sandbox = true` in the file) confines each teammate to a sandbox of its own
/// (bubblewrap on Linux, TEAMCTL_BWRAP_BIN; sandbox-exec on macOS; docs/sandbox.md): the
/// machine read-only but its working folder, its team's folder, its task folder and its
/// transcripts; a private /tmp and a private copy of .claude.json; ~/.ssh, ~/.gnupg, ~/.aws,
/// ~/.config/gh, ~/.netrc, ~/.docker and ~/.kube hidden; no Unix socket (the tmux server, the
/// SSH agent, Docker); its own process namespace. With a worktree, a sandboxed teammate gets a
/// clone of its own (the repository's objects borrowed read-only) whose branch diff, merge and
/// delete fetch home. A missing engine, or one the system blocks, is exit 2 naming the cause
/// and the fix, before anything is written.
///
/// In a team teamctl leads, your identity defaults to team-lead: `teamctl inbox` shows the
/// teammates' reports and `teamctl send` speaks as their lead.
///
/// With an OpenTelemetry endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT), its steps and a span per
/// teammate are exported (docs/observability.md, "OpenTelemetry").
///
/// Prints `created team <team> (<state>)`, the config path, the binary, the tmux session and a
/// table of teammates (name, colour, pane, state), then each sandboxed teammate's sandbox. With
/// --json, JSON Lines on stdout: one line per step `{"schema_version":1,"type":"progress",
/// "state","message"}`, then the result `{"schema_version":1,"type":"result","team","state",
/// "reason","lead","lead_session_id","config","members":[{"name","color","pane","state",
/// "sandbox":{"engine","writable","hidden","network"}}],"claude":{"path","found_by","version"},
/// "tmux_session"}` (sandbox null for a teammate that runs unconfined). A progress state is
/// validating, provisioning, launching, waiting or failed;
/// the result's is ready, provisioned (--launch none) or failed (with reason; exit 1). A member's
/// state is provisioned, starting, ready, exited or not_started. claude and tmux_session are null
/// with --launch none. An error before the result (validation, "already exists", a concurrent
/// create) ends the stream with a failed progress line.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl create review-42 --member alice:\"Review the auth changes in PR 42\" \\
      --member bob:\"Review the tests in PR 42\" --dangerously-skip-permissions
  teamctl create nightly --member-file briefs.txt --timeout 5m --json | tail -1 | jq .state
  teamctl create demo --member worker --brief-file worker:brief.md --launch none
  teamctl create --file review.toml --dry-run
  teamctl create --file review.toml --model haiku --dangerously-skip-permissions
  teamctl create fix-7 --member alice:\"Fix issue 7\" --worktree --sandbox \\
      --dangerously-skip-permissions")]
pub(crate) struct CreateArgs {
    /// Team name: lowercase letters, digits and '-'; {n} (the lowest free number) and {date}
    /// (YYYYMMDD) make one per run [default with --file: its name, or --team]
    #[arg(value_name = "TEAM")]
    #[arg(help = "Team name", long_help)]
    name: Option<String>,

    /// A team file (TOML, docs/team-file.md): the team, its teammates and each one's model,
    /// agent type, permission mode and worktree; flags given here override it, --member adds
    /// teammates
    #[arg(long, value_name = "FILE")]
    #[arg(help = "A team file (TOML, docs/team-file.md)", long_help)]
    file: Option<PathBuf>,

    /// Print what would be created (team, each teammate's settings, worktree and brief) and
    /// write nothing
    #[arg(long)]
    #[arg(help = "Print what would be created and write nothing", long_help)]
    dry_run: bool,

    /// A git worktree for every teammate, on its own branch teamctl/<team>/<member>, outside
    /// the checkout (in teamctl's data dir); the teammate runs there
    #[arg(long)]
    #[arg(
        help = "A git worktree for every teammate, on its own branch",
        long_help
    )]
    worktree: bool,

    /// Confine every teammate to a sandbox of its own (bubblewrap on Linux, sandbox-exec on
    /// macOS; docs/sandbox.md): the machine read-only but its work, its team and its
    /// transcripts, the secrets in the home directory hidden, no Unix socket
    #[arg(long)]
    sandbox: bool,

    /// Once the teammates are ready, answer what they asked while starting by this policy file
    /// (docs/policy.md; a team file's `policy`); give `wait --policy` the same file afterwards
    #[arg(long, value_name = "FILE")]
    #[arg(
        help = "Answer the teammates' start-up requests by this policy file",
        long_help
    )]
    policy: Option<PathBuf>,

    /// A teammate and its brief (the first message it gets); repeat for more. Colours follow
    /// the order: --member entries, then --member-file lines
    #[arg(long = "member", value_name = "NAME[:BRIEF]")]
    #[arg(
        help = "A teammate and its brief (its first message); repeatable",
        long_help
    )]
    members: Vec<String>,

    /// Teammates from a file, one `name: brief` per line (blank lines and # comments skipped)
    #[arg(long, value_name = "FILE")]
    #[arg(help = "Teammates from a file, one `name: brief` per line", long_help)]
    member_file: Vec<PathBuf>,

    /// Read a teammate's brief from a file
    #[arg(long, value_name = "NAME:FILE")]
    brief_file: Vec<String>,

    /// The team's description in config.json
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,

    /// The teammates' working directory [default: the current one]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,

    /// Model for every teammate (--model; overrides the team file's)
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,

    /// Agent type for every teammate (--agent-type; overrides the team file's) [default in
    /// config.json: general-purpose]
    #[arg(long, value_name = "TYPE")]
    #[arg(help = "Agent type for every teammate", long_help)]
    agent_type: Option<String>,

    #[command(flatten)]
    permission: PermissionArgs,

    /// Start the teammates in tmux, or only provision the files
    #[arg(long, value_enum, value_name = "HOW", default_value = "tmux")]
    #[arg(
        help = "Start the teammates in tmux, or only provision the files",
        long_help
    )]
    launch: LaunchArg,

    /// How long to wait for every teammate to take its brief
    #[arg(long, value_name = "DURATION", default_value = "2m")]
    #[arg(help = "How long teammates get to take their briefs", long_help)]
    timeout: String,

    /// The claude binary [default: found on PATH and in the usual install places]
    #[arg(long, value_name = "PATH", env = env::CLAUDE_BIN)]
    #[arg(help = "The claude binary", long_help)]
    claude_bin: Option<PathBuf>,

    #[command(flatten)]
    otel: OtelArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LaunchArg {
    Tmux,
    None,
}

#[derive(Serialize)]
struct ProgressJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    state: Step,
    message: &'a str,
}

#[derive(Serialize)]
struct ResultJson<'a> {
    schema_version: u32,
    #[serde(rename = "type")]
    kind: &'static str,
    team: &'a str,
    state: Step,
    reason: Option<&'a str>,
    lead: &'static str,
    lead_session_id: &'a str,
    config: String,
    members: &'a [MemberOutcome],
    claude: Option<&'a ClaudeInfo>,
    tmux_session: Option<&'a str>,
}

pub(crate) fn run(ctx: &Ctx, args: CreateArgs) -> Result<()> {
    otel::start("create", args.otel.otel_content);
    time::parse_duration(&args.timeout)?;
    let file = args.file.as_deref().map(create::load).transpose()?;
    let spec = spec(ctx, &args, file.as_ref())?;
    // Every `${NAME}` of the teammates' env is set here, or nothing starts.
    let vars = Vars::read(create::env_names(&spec.members), &|k| std::env::var(k).ok());
    create::check_env(&spec.members, &vars)?;
    let policy = args
        .policy
        .clone()
        .map(Ok)
        .or_else(|| file.as_ref().and_then(|f| f.policy().transpose()))
        .transpose()?;
    // A bad policy is exit 2 before anything is written.
    let mut runner = policy
        .as_deref()
        .map(|p| Runner::new(ctx, p, LEAD, false, EventsTo::Stderr))
        .transpose()?;
    if args.dry_run {
        return dry_run(ctx, &spec, policy.as_deref());
    }
    let launch = match spec.launch {
        Launch::None => None,
        Launch::Tmux => Some(launch_env(ctx, &args, vars)?),
    };
    let out = ctx.out;
    let mut progress = |state: Step, message: &str| {
        otel::step(state.as_str(), message);
        if out.json {
            // Progress is best effort: a closed stdout shows up at the result.
            let _ = out.json(&ProgressJson {
                schema_version: 1,
                kind: "progress",
                state,
                message,
            });
        } else {
            eprintln!("{}: {}", state.as_str(), term::escape_message(message));
        }
    };
    let leads = ctx.records.leads().context(
        "teamctl keeps a private record of the teams it leads in its data dir, and has none: \
         set TEAMCTL_DATA_DIR",
    )?;
    let creating = create::Creating {
        layout: &ctx.layout,
        spec: &spec,
        launch: launch.as_ref(),
        leads,
        now: ctx.now,
        lock: &ctx.lock,
    };
    let outcome = match create::create(&creating, &mut progress) {
        Ok(o) => o,
        Err(e) => {
            if out.json {
                progress(Step::Failed, &format!("{e:#}"));
            }
            return Err(e);
        }
    };
    if otel::enabled()
        && let Ok(team) = teamctl::team::config::Team::open(&ctx.layout, &spec.team, &ctx.records)
    {
        // Its teammates' spans, from when each joined.
        otel::members(&teamctl::observe::watch::Watch::new(team, None, ctx.clock()).0);
    }
    if let Some(r) = runner.as_mut()
        && outcome.state == Step::Ready
        && let Ok(team) = teamctl::team::config::Team::open(&ctx.layout, &spec.team, &ctx.records)
    {
        // What the teammates asked while they started.
        r.step_reopened(ctx, &team)?;
    }
    print(ctx, &spec, &outcome)?;
    match outcome.state {
        Step::Failed => Err(anyhow!(
            "team '{}' failed: {}; its files are kept for inspection, remove them with \
             `teamctl delete {}`",
            spec.team,
            outcome.reason.as_deref().unwrap_or("unknown reason"),
            spec.team
        )),
        _ => Ok(()),
    }
}

fn print(ctx: &Ctx, spec: &Spec, o: &Outcome) -> Result<()> {
    let team = spec.team.as_str();
    if ctx.out.json {
        return ctx.out.json(&ResultJson {
            schema_version: 1,
            kind: "result",
            team,
            state: o.state,
            reason: o.reason.as_deref(),
            lead: LEAD,
            lead_session_id: &o.lead_session_id,
            config: ctx.layout.config_path(&spec.team).display().to_string(),
            members: &o.members,
            claude: o.claude.as_ref(),
            tmux_session: o.tmux_session.as_deref(),
        });
    }
    // A failure's reason goes to stderr once, with the error.
    ctx.out
        .line(&format!("created team {team} ({})", o.state.as_str()))?;
    ctx.out.line(&format!(
        "config: {}",
        esc(&ctx.layout.config_path(&spec.team).display().to_string())
    ))?;
    ctx.out.line(&format!(
        "lead: {LEAD} (your default identity in this team)"
    ))?;
    if let Some(c) = &o.claude {
        ctx.out.line(&format!(
            "claude: {} (found by {}, version {})",
            esc(&c.path),
            c.found_by.as_str(),
            esc(c.version.as_deref().unwrap_or("unknown"))
        ))?;
    }
    if let Some(s) = &o.tmux_session {
        ctx.out.line(&format!("tmux_session: {}", esc(s)))?;
    }
    let mut rows = vec![vec![
        "NAME".into(),
        "COLOR".into(),
        "PANE".into(),
        "STATE".into(),
    ]];
    for m in &o.members {
        let state = serde_json::to_value(m.state)?;
        rows.push(vec![
            m.name.clone(),
            m.color.clone(),
            m.pane.clone().unwrap_or_else(|| "-".into()),
            state.as_str().unwrap_or("").to_string(),
        ]);
    }
    ctx.out.table(rows)?;
    for m in &o.members {
        if let Some(s) = &m.sandbox {
            ctx.out.line(&format!(
                "sandbox of {}: {}, network {}; writable: {}; hidden: {}",
                m.name,
                s.engine,
                s.network.as_str(),
                esc(&s.writable.join(", ")),
                esc(&s.hidden.join(", "))
            ))?;
        }
    }
    Ok(())
}

fn spec(ctx: &Ctx, args: &CreateArgs, file: Option<&Loaded>) -> Result<Spec> {
    let mut members: Vec<MemberSpec> = file.map(|f| f.members.clone()).unwrap_or_default();
    for (name, brief) in flag_members(args)? {
        members.push(MemberSpec::new(MemberName::parse(&name)?, brief));
    }
    let overrides = Overrides {
        model: args.model.clone(),
        agent_type: args.agent_type.clone(),
        permission: args.permission.given(),
        worktree: args.worktree,
        sandbox: args.sandbox,
    };
    members.iter_mut().for_each(|m| overrides.apply(m));
    create::validate_members(&members)?;
    let free = |t: &TeamName| matches!(ctx.layout.config_path(t).stat(), Ok(None));
    let team = match (args.name.as_deref(), ctx.team_name(), file) {
        (Some(n), ..) | (None, Some(n), _) => create::expand_name(n, ctx.now, &free)?,
        (None, None, Some(f)) => f.name(ctx.now, &free)?.ok_or_else(|| {
            usage(format!(
                "{} names no team: give `name = \"...\"` in it, TEAM or --team",
                f.path.display()
            ))
        })?,
        (None, None, None) => return Err(usage("a team needs a name: TEAM, or --file FILE")),
    };
    let cwd = match (args.cwd.clone(), file.and_then(Loaded::cwd)) {
        (Some(d), _) | (None, Some(d)) => d,
        (None, None) => std::env::current_dir().context("could not read the current directory")?,
    };
    let cwd = fs::canonicalize(&cwd)
        .with_context(|| format!("--cwd {} is not a directory", cwd.display()))?;
    Ok(Spec {
        team,
        description: args
            .description
            .clone()
            .or_else(|| file.and_then(|f| f.file.description.clone())),
        cwd,
        members,
        launch: match args.launch {
            LaunchArg::Tmux => Launch::Tmux,
            LaunchArg::None => Launch::None,
        },
    })
}

/// The teammates of --member, --member-file and --brief-file, with their briefs.
fn flag_members(args: &CreateArgs) -> Result<Vec<(String, String)>> {
    let mut members: Vec<(String, Option<String>)> = Vec::new();
    for m in &args.members {
        match m.split_once(':') {
            Some((n, b)) => members.push((n.trim().to_string(), Some(b.trim().to_string()))),
            None => members.push((m.trim().to_string(), None)),
        }
    }
    for file in &args.member_file {
        let text = read_named_text(file, NAMED_FILE_LIMIT)?;
        let parsed = create::parse_member_lines(&text)
            .with_context(|| format!("in --member-file {}", file.display()))?;
        members.extend(parsed.into_iter().map(|(n, b)| (n, Some(b))));
    }
    for bf in &args.brief_file {
        let (n, f) = bf
            .split_once(':')
            .ok_or_else(|| usage(format!("--brief-file {bf}: expected NAME:FILE")))?;
        let text = read_named_text(Path::new(f), NAMED_FILE_LIMIT)
            .with_context(|| format!("brief file of {n}"))?;
        let text = text.trim_end_matches(['\n', '\r']).to_string();
        match members.iter_mut().find(|(name, _)| name == n) {
            Some((_, brief @ None)) => *brief = Some(text),
            Some(_) => return Err(usage(format!("member '{n}' has two briefs"))),
            None => members.push((n.to_string(), Some(text))),
        }
    }
    members
        .into_iter()
        .map(|(n, b)| {
            MemberName::parse(&n)?;
            let brief = b.ok_or_else(|| {
                usage(format!(
                    "member '{n}' has no brief: use --member {n}:BRIEF or --brief-file {n}:FILE"
                ))
            })?;
            Ok((n, brief))
        })
        .collect()
}

fn launch_env(ctx: &Ctx, args: &CreateArgs, vars: Vars) -> Result<LaunchEnv> {
    let root = std::path::absolute(ctx.layout.root())?;
    Ok(LaunchEnv {
        claude: claude_env(args.claude_bin.clone()),
        timeout: time::parse_duration(&args.timeout)?,
        version_timeout: Duration::from_secs(5),
        vars,
        trust: Some(teamctl::ops::prepare::Request {
            config_dir: root.clone(),
            claude_json: ctx.claude_json()?,
            settings: root.join("settings.json"),
            backups: root.join("backups"),
            api_key: None,
            trust: Vec::new(),
            skip_permissions: false,
            lock: ctx.lock,
            settle: Duration::from_millis(500),
            now: std::time::SystemTime::now(),
        }),
        sandbox_bin: std::env::var_os(env::BWRAP_BIN)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
    })
}

#[derive(Serialize)]
struct DryRunJson<'a> {
    schema_version: u32,
    dry_run: bool,
    team: &'a str,
    config: String,
    description: Option<&'a str>,
    cwd: String,
    policy: Option<String>,
    launch: Launch,
    members: Vec<DryMember<'a>>,
}

#[derive(Serialize)]
struct DryMember<'a> {
    name: &'a str,
    color: &'static str,
    model: Option<&'a str>,
    agent_type: Option<&'a str>,
    permission_mode: Option<&'a str>,
    skip_permissions: bool,
    cwd: String,
    worktree: Option<DryTree<'a>>,
    runtime: &'a Runtime,
    sandbox: Option<DrySandbox>,
    brief: &'a str,
}

#[derive(Serialize)]
struct DrySandbox {
    network: &'static str,
    write: Vec<String>,
    hide: Vec<String>,
}

#[derive(Serialize)]
struct DryTree<'a> {
    path: &'a str,
    branch: &'a str,
    new_branch: bool,
    base: &'a str,
}

/// `--dry-run`: what would be created, each teammate's settings and worktree; nothing written.
fn dry_run(ctx: &Ctx, spec: &Spec, policy: Option<&std::path::Path>) -> Result<()> {
    let leads = ctx
        .records
        .leads()
        .context("teamctl has no data dir for its records: set TEAMCTL_DATA_DIR")?;
    let trees = create::plan_worktrees(&ctx.layout, leads, spec)?;
    let members: Vec<DryMember> = spec
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (mode, skip) = match &m.permission {
                Permission::Default => (None, false),
                Permission::Mode(p) => (Some(p.as_str()), false),
                Permission::Skip => (None, true),
            };
            DryMember {
                name: m.name.as_str(),
                color: create::color_of(i).as_str(),
                model: m.model.as_deref(),
                agent_type: m.agent_type.as_deref(),
                permission_mode: mode,
                skip_permissions: skip,
                cwd: trees.cwd(spec, i).display().to_string(),
                worktree: trees.get(i).map(|p| DryTree {
                    path: &p.tree.path,
                    branch: &p.tree.branch,
                    new_branch: p.new_branch,
                    base: &p.tree.base,
                }),
                runtime: &m.runtime,
                sandbox: m.sandbox.as_ref().map(|w| DrySandbox {
                    network: w.network.as_str(),
                    write: w.write.iter().map(|p| p.display().to_string()).collect(),
                    hide: w.hide.iter().map(|p| p.display().to_string()).collect(),
                }),
                brief: &m.brief,
            }
        })
        .collect();
    let doc = DryRunJson {
        schema_version: 1,
        dry_run: true,
        team: spec.team.as_str(),
        config: ctx.layout.config_path(&spec.team).display().to_string(),
        description: spec.description.as_deref(),
        cwd: spec.cwd.display().to_string(),
        policy: policy.map(|p| p.display().to_string()),
        launch: spec.launch,
        members,
    };
    if ctx.out.json {
        return ctx.out.json(&doc);
    }
    let out = &ctx.out;
    out.line(&format!(
        "would create team {} (dry run: nothing written)",
        doc.team
    ))?;
    out.line(&format!("config: {}", esc(&doc.config)))?;
    out.line(&format!("cwd: {}", esc(&doc.cwd)))?;
    if let Some(p) = &doc.policy {
        out.line(&format!("policy: {}", esc(p)))?;
    }
    let mut rows = vec![
        [
            "NAME",
            "COLOR",
            "MODEL",
            "AGENT TYPE",
            "PERMISSION",
            "WORKTREE",
            "SANDBOX",
            "BRIEF",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for m in &doc.members {
        let permission = match (m.permission_mode, m.skip_permissions) {
            (Some(p), _) => p.to_string(),
            (None, true) => "skip".into(),
            (None, false) => "-".into(),
        };
        let tree = m
            .worktree
            .as_ref()
            .map(|t| format!("{} ({})", t.branch, t.path))
            .unwrap_or_else(|| "-".into());
        rows.push(vec![
            m.name.to_string(),
            m.color.to_string(),
            esc(m.model.unwrap_or("-")).into_owned(),
            esc(m.agent_type.unwrap_or("-")).into_owned(),
            esc(&permission).into_owned(),
            esc(&tree).into_owned(),
            m.sandbox
                .as_ref()
                .map_or("-".into(), |s| format!("network {}", s.network)),
            esc(&teamctl::team::model::first_line(m.brief, 60)).into_owned(),
        ]);
    }
    out.table(rows)
}
