//! `teamctl serve`: a live page of the team in a browser, and answers from it.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use teamctl::error::usage;
use teamctl::ops::serve::journal::{Record, What};
use teamctl::ops::serve::{self, Ground, Scope, Settings, access};
use url::Url;

use crate::cli::context::Ctx;
use crate::cli::output::{warn, write_json};
use crate::cli::{env, term};

/// Show the team live in a browser, and answer it from there
///
/// A foreground server (no daemon) for a page that shows the team as `top` does, live: the
/// team's state and why a person is needed; each member's state, why it waits, what it is
/// doing, its cost and context; the requests waiting for the lead (the tool and command, or
/// the plan's start, and how long they have waited); the task board; the newest messages; each
/// member's cost over time, from the transcripts (as report.html draws it). Changes are pushed
/// to the page as the team's files change (file notifications, as `watch` and `top`), read
/// once for every open page; an idle team costs a look a second.
///
/// From the page (not with --read-only, which shows no control and refuses every write):
/// Approve, Deny with a reason, and a message to a teammate, each written exactly as `teamctl
/// approve`, `deny` and `send` write it (the inbox's lock, the read-back, the sent log),
/// journaled in teamctl's data dir (serve.jsonl, "via":"web"). An action names the request it
/// answers: a page that is out of date, or a second click, finds it answered and writes
/// nothing. A plan approval is held until 2 s after the planner reports idle (as `approve --policy`
/// holds it: Claude Code loses an earlier one), and the page says so; the hold ends with the
/// server (the next run shows the request open again, approved before). Answers are written
/// only in teams teamctl leads (`teamctl create`); --force shows the others too, read-only.
///
/// It listens on 127.0.0.1 on a free port unless --listen says otherwise, and prints the page's
/// URL on stderr with the access token after `#token=` (a URL's fragment never reaches a
/// server, a proxy or a log). The token is TEAMCTL_SERVE_TOKEN (16 characters at least), else
/// 256 random bits made at start. Every request under /api/ without it is 401; the page sends
/// it in a header (not a cookie another site could ride), the Host header must name this
/// server (no DNS rebinding), a write from another page's Origin is 403, and no CORS header is
/// ever sent. A non-loopback --listen needs --allow-remote: it is plain HTTP. To reach the
/// page from a phone or another machine, keep it on 127.0.0.1 and tunnel to it (ssh -L, or
/// `tailscale serve`, which adds HTTPS), naming the address it is reached at with --public-url
/// (docs/security.md, "The live page").
///
/// With --all-teams: every team teamctl leads (every team with --force), as they come and go,
/// with a fleet view linking each team's page.
///
/// With --json: the first line on stdout is `{"schema_version":1,"event":"listening","url",
/// "listen","public_url","teams","read_only"}` (url carries the token); then one line per
/// action from the page, as journaled: `{"schema_version":1,"event","at","via":"web","team",
/// "member","request_id","detail","id"}` (event approved, denied, held or said).
///
/// Exit codes: 128+n on signal n (Ctrl-C: 130), 1 when it cannot listen or the team cannot be
/// opened, 2 for a bad flag or a team teamctl does not lead without --force.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl serve                                # open the URL it prints
  teamctl serve --team review-42 --read-only   # look, never answer
  teamctl serve --all-teams --listen 127.0.0.1:8765
  url=$(teamctl serve --json | head -1 | jq -r .url)   # for a script

From a phone or another machine:
  ssh -L 8765:127.0.0.1:8765 build-box teamctl serve --listen 127.0.0.1:8765
      # then open the printed URL on the laptop
  teamctl serve --listen 127.0.0.1:8765 --public-url https://box.tail1234.ts.net
  tailscale serve --bg 8765                    # HTTPS on the tailnet, for the phone")]
pub(crate) struct ServeArgs {
    /// Listen on ADDR (IP:PORT) [default: 127.0.0.1 and a free port]
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,

    /// Show no control and refuse every write
    #[arg(long)]
    read_only: bool,

    /// Serve every team teamctl leads, with a fleet view
    #[arg(long)]
    all_teams: bool,

    /// Show teams teamctl does not lead too (read-only)
    #[arg(long)]
    force: bool,

    /// Allow a --listen address other than loopback (plain HTTP)
    #[arg(long)]
    allow_remote: bool,

    /// The address the page is reached at through a tunnel or proxy (its Host and Origin are
    /// accepted too)
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,
}

pub(crate) fn run(ctx: &Ctx, args: ServeArgs) -> Result<()> {
    let listen = args
        .listen
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
    if !listen.ip().is_loopback() && !args.allow_remote {
        return Err(usage(format!(
            "--listen {listen} is not a loopback address: the page is plain HTTP, so anyone on \
             the path sees the token; tunnel to 127.0.0.1 instead (ssh -L, tailscale serve), or \
             pass --allow-remote"
        )));
    }
    if args.poll == Some(0) {
        return Err(usage("--poll must be at least 1 ms"));
    }
    let public = args.public_url.as_deref().map(public_url).transpose()?;
    let token = match std::env::var(env::SERVE_TOKEN) {
        Ok(t) if t.len() >= access::MIN_TOKEN => t,
        Ok(_) => {
            return Err(usage(format!(
                "{} must be at least {} characters (openssl rand -hex 32 is good)",
                env::SERVE_TOKEN,
                access::MIN_TOKEN
            )));
        }
        Err(_) => access::fresh_token()?,
    };
    let scope = if args.all_teams {
        Scope::All
    } else {
        Scope::One(ctx.team_resolved()?)
    };
    let settings = Settings {
        listen,
        scope: scope.clone(),
        read_only: args.read_only,
        force: args.force,
        public: public.clone(),
        token: token.clone(),
        poll: args.poll.map(Duration::from_millis),
    };
    let ground = Ground {
        layout: ctx.layout.clone(),
        records: ctx.records.clone(),
        lock: ctx.lock,
    };
    let json = ctx.out.json;
    let on_record: serve::OnRecord = Box::new(move |r: &Record| said(json, r));
    let (serving, warnings) = serve::start(settings, ground, Arc::new(ctx.clock_fn()), on_record)?;
    for w in &warnings {
        warn(w);
    }
    let base = public.unwrap_or_else(|| {
        Url::parse(&format!("http://{}/", serving.addr())).expect("an address makes a URL")
    });
    let url = format!("{base}#token={token}");
    if !listen.ip().is_loopback() {
        warn(&format!(
            "listening on {} in plain HTTP: anyone on the network path can read the token",
            serving.addr()
        ));
    }
    let teams = match &scope {
        Scope::One(t) => vec![t.to_string()],
        Scope::All => Vec::new(),
    };
    if json {
        ctx.out.json(
            &serde_json::json!({"schema_version": 1, "event": "listening",
            "url": url, "listen": serving.addr().to_string(),
            "public_url": args.public_url, "teams": teams, "read_only": args.read_only}),
        )?;
    }
    let what = match &scope {
        Scope::One(t) => format!("team {}", term::escape_line(t.as_str())),
        Scope::All => "every team teamctl leads".to_string(),
    };
    eprintln!("serving {what} at {url}  (Ctrl-C stops)");
    serving.run(&|| false, &mut |w| warn(w));
    Ok(())
}

/// `--public-url`: http or https, a host, nothing else.
fn public_url(raw: &str) -> Result<Url> {
    let u = Url::parse(raw).map_err(|e| usage(format!("--public-url {raw}: {e}")))?;
    let plain = u.username().is_empty()
        && u.password().is_none()
        && u.query().is_none()
        && u.fragment().is_none();
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() || !plain {
        return Err(usage(format!(
            "--public-url {raw}: give the page's address as http(s)://HOST[:PORT]/, with no user, \
             query or fragment"
        )));
    }
    Ok(u)
}

/// An action from the page, told as it happens: a JSON line, or a line on stdout.
fn said(json: bool, r: &Record) {
    let mut out = std::io::stdout().lock();
    if json {
        let _ = write_json(&mut out, r);
    } else {
        let what = match r.event {
            What::Approved => "approved",
            What::Denied => "denied",
            What::Held => "held",
            What::Said => "said to",
        };
        let about = r
            .request_id
            .as_deref()
            .or(r.member.as_deref())
            .unwrap_or("");
        let _ = writeln!(
            out,
            "{} {what} {} in team {} (web)",
            term::escape_line(&r.at),
            term::escape_line(about),
            term::escape_line(&r.team)
        );
    }
    let _ = out.flush();
}
