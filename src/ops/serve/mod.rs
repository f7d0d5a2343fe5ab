//! `teamctl serve`: a live page of the team in a browser, and answers from it. A flow: it
//! stands on the observe layer (each team followed as `top` follows it: `live`), the answering
//! service of [`crate::ops::policy`] (a plan approval held until its planner reports idle), the
//! team layer's locked writes ([`act`]) and the one HTTP server ([`crate::host::http_server`]);
//! never on another flow.
//!
//! The rooms: [`access`] (the token, the Host, the Origin), [`hub`] (each team's picture once,
//! the pages' streams), `live` (a team followed), [`picture`] (what a page shows of a team),
//! [`act`] (what the page may do), [`journal`] (what it did, `"via":"web"`), `routes` (the HTTP
//! surface) and `page/` (the page itself: HTML, JS and CSS embedded in the binary).
//!
//! A plan approval held until its planner reports idle lives in the server: when it stops, the
//! request stays open and the hold is journaled only. The next run reads its journal at start
//! and shows each such request as open again, saying it was approved before ([`picture`]).

pub mod access;
pub mod act;
pub mod hub;
pub mod journal;
mod live;
pub mod picture;
mod routes;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use url::Url;

use self::access::Access;
use self::hub::{Hub, event};
use self::journal::{Journal, Record};
use crate::host::http_server::{Limits, Server};
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, TeamName};
use crate::team::config::{Team, list_teams};
use crate::team::records::Records;

/// How the server bounds its clients: a slow or idle one never holds up another (the streams
/// of open pages hold a connection each, so there is room for many).
pub const LIMITS: Limits = Limits {
    connections: 256,
    head: Duration::from_secs(10),
    body: Duration::from_secs(10),
    max_body: 64 * 1024,
    max_head: 16 * 1024,
    keep_alive: true,
};

/// How often a quiet stream gets a keep-alive comment.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// How often `--all-teams` looks for teams that appeared or went.
pub const LIST_EVERY: Duration = Duration::from_secs(2);

/// Where the server reads and writes: the config dir, teamctl's records (the sent log makes
/// each answer once; the data dir holds the journal) and the lock deadline of every write.
#[derive(Debug, Clone)]
pub struct Ground {
    /// The config dir.
    pub layout: Layout,
    /// teamctl's own records.
    pub records: Records,
    /// The lock deadline.
    pub lock: LockOptions,
}

/// Which teams are served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One team.
    One(TeamName),
    /// Every team teamctl leads (every team with `force`), as they come and go.
    All,
}

/// What the server was told to do.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The teams.
    pub scope: Scope,
    /// Show no control, refuse every write.
    pub read_only: bool,
    /// Show teams teamctl does not lead too (read-only).
    pub force: bool,
    /// The address the page is reached at through a tunnel or a proxy.
    pub public: Option<Url>,
    /// The access token.
    pub token: String,
    /// Poll every so often instead of file notifications.
    pub poll: Option<Duration>,
}

/// The clock.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// What the caller is told as the server works: each journaled action.
pub type OnRecord = Box<dyn Fn(&Record) + Send + Sync>;

/// What the followers, the routes and the actions share.
pub struct Shared {
    ground: Ground,
    hub: Hub,
    access: Access,
    read_only: bool,
    force: bool,
    poll: Option<Duration>,
    clock: Clock,
    journal: Option<Journal>,
    /// The holds an earlier run journaled and never wrote ([`journal::unfinished_holds`]).
    earlier_holds: Vec<Record>,
    on_record: OnRecord,
    stopping: AtomicBool,
}

impl Shared {
    /// The teams served now.
    fn teams(&self) -> Vec<String> {
        self.hub.served()
    }

    fn serves(&self, name: &str) -> bool {
        self.teams().iter().any(|t| t == name)
    }

    /// Whether the page may answer in `team`, and why not.
    fn writable(&self, team: &Team) -> (bool, Option<String>) {
        if self.read_only {
            return (false, Some("the server is read-only (--read-only)".into()));
        }
        if team.teamctl_leads() {
            return (true, None);
        }
        let why = if team.led_by_claude_code() {
            "a Claude Code session leads this team, and its teammates act only on their own \
             lead's answers"
        } else {
            "teamctl does not lead this team (it was not made by `teamctl create`): an answer \
             from here would speak for someone else's lead"
        };
        (false, Some(why.into()))
    }

    /// Journals `r` (a journal that cannot be written is said in the record's stead: the
    /// answer stands) and tells the caller.
    fn journal(&self, r: &Record) {
        if let Some(j) = &self.journal
            && let Err(e) = j.append(r)
        {
            let mut said = r.clone();
            said.detail = Some(format!(
                "{} (not journaled: {e:#})",
                r.detail.clone().unwrap_or_default()
            ));
            (self.on_record)(&said);
            return;
        }
        (self.on_record)(r);
    }
}

/// A running server.
pub struct Serving {
    server: Server,
    shared: Arc<Shared>,
    scope: Scope,
}

/// Starts serving as `s` says: binds, opens the team (or lists the teams), starts following
/// each; returns the server and the warnings of the start.
///
/// # Errors
/// The address cannot be listened on; the one team cannot be opened, or teamctl does not lead
/// it and `force` is not given (a usage error).
pub fn start(
    s: Settings,
    ground: Ground,
    clock: Clock,
    on_record: OnRecord,
) -> Result<(Serving, Vec<String>)> {
    if let Scope::One(name) = &s.scope {
        let team = Team::open(&ground.layout, name, &ground.records)?;
        if !s.force && !team.teamctl_leads() {
            return Err(crate::error::usage(format!(
                "refusing to serve team '{name}': teamctl does not lead it (--force shows it, \
                 read-only)"
            )));
        }
    }
    let listener =
        TcpListener::bind(s.listen).with_context(|| format!("could not listen on {}", s.listen))?;
    let addr = listener
        .local_addr()
        .context("could not read the listening address")?;
    let hello = serde_json::json!({"schema_version": 1, "read_only": s.read_only,
        "fleet": s.scope == Scope::All, "version": env!("CARGO_PKG_VERSION")});
    let journal = ground.records.data_dir().map(Journal::in_dir);
    let (earlier_holds, mut warnings) = earlier_holds(journal.as_ref());
    let shared = Arc::new(Shared {
        access: Access::new(&s.token, addr, s.public.as_ref()),
        hub: Hub::new(event("hello", &hello.to_string())),
        ground,
        read_only: s.read_only,
        force: s.force,
        poll: s.poll,
        clock,
        journal,
        earlier_holds,
        on_record,
        stopping: AtomicBool::new(false),
    });
    let handler = routes::handler(shared.clone());
    let server = Server::start("serve-http", listener, LIMITS, handler)?;
    let serving = Serving {
        server,
        shared,
        scope: s.scope,
    };
    warnings.extend(serving.look());
    Ok((serving, warnings))
}

/// The holds an earlier run of the server journaled and never wrote, and what kept the
/// journal from telling.
fn earlier_holds(journal: Option<&Journal>) -> (Vec<Record>, Vec<String>) {
    let Some(j) = journal else {
        return (Vec::new(), Vec::new());
    };
    match j.read() {
        Ok((records, 0)) => (journal::unfinished_holds(&records), Vec::new()),
        Ok((records, bad)) => (
            journal::unfinished_holds(&records),
            vec![format!(
                "{bad} line(s) of {} did not parse (skipped): a plan approval an earlier run \
                 held may not be shown as such",
                j.path().display()
            )],
        ),
        Err(e) => (
            Vec::new(),
            vec![format!(
                "{e:#}: the plan approvals an earlier run held are not shown as such"
            )],
        ),
    }
}

impl Serving {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// How many pages have a stream open.
    pub fn streams(&self) -> usize {
        self.shared.hub.streams()
    }

    /// Serves until `stop` says so (checked at each of its own wake-ups: every
    /// [`LIST_EVERY`] with `--all-teams`, to look for teams that appeared, else every
    /// [`KEEP_ALIVE_EVERY`], to keep quiet streams open); `warn` is told what a look found.
    pub fn run(&self, stop: &dyn Fn() -> bool, warn: &mut dyn FnMut(&str)) {
        let every = match self.scope {
            Scope::All => LIST_EVERY,
            Scope::One(_) => KEEP_ALIVE_EVERY,
        };
        let mut kept = Instant::now();
        while !stop() {
            std::thread::sleep(every);
            if self.scope == Scope::All {
                for w in self.look() {
                    warn(&w);
                }
            }
            if kept.elapsed() >= KEEP_ALIVE_EVERY {
                kept = Instant::now();
                self.shared.hub.keep_alive();
            }
        }
    }

    /// Starts following the teams that appeared, drops the ones gone; warnings.
    fn look(&self) -> Vec<String> {
        let sh = &self.shared;
        let (names, mut warnings) = match &self.scope {
            Scope::One(n) => (vec![n.clone()], Vec::new()),
            Scope::All => match list_teams(&sh.ground.layout) {
                Ok(n) => (n, Vec::new()),
                Err(e) => return vec![format!("{e:#}")],
            },
        };
        let mut served = sh.hub.served();
        served.retain(|t| names.iter().any(|n| n.as_str() == t.as_str()));
        let mut start = Vec::new();
        for name in names {
            if served.iter().any(|t| t == name.as_str()) {
                continue;
            }
            let team = match Team::open(&sh.ground.layout, &name, &sh.ground.records) {
                Ok(t) => t,
                // A listed team not yet whole is looked at again.
                Err(_) if self.scope == Scope::All => continue,
                Err(e) => {
                    warnings.push(format!("{e:#}"));
                    continue;
                }
            };
            if self.scope == Scope::All && !sh.force && !team.teamctl_leads() {
                continue;
            }
            served.push(name.to_string());
            start.push(team);
        }
        sh.hub.serve(served, &|gone| {
            event("gone", &serde_json::json!({"team": gone}).to_string())
        });
        for team in start {
            let name = team.name.to_string();
            let live = live::Live::new(sh.clone(), team, (sh.clock)());
            let _ = std::thread::Builder::new()
                .name(format!("serve-{name}"))
                .spawn(move || live.run());
        }
        warnings
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Relaxed);
    }
}
