//! The bridge's state: the teams it serves (each through the one [`TeamReader`]), the codes it
//! has posted and not yet retired, the codes it has retired and the notices it has told, all
//! rebuilt from the journal when it starts.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use super::code::Code;
use super::journal::{Journal, Record, What};
use crate::observe::budget::{Cap, Warner};
use crate::observe::follow::LIVENESS_EVERY;
use crate::observe::reader::{Options, TeamReader};
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::config::{LEAD, Team, list_teams};
use crate::team::records::Records;
use crate::time::iso_millis;

/// How often `--all-teams` looks for teams that appeared.
const LIST_EVERY: Duration = Duration::from_secs(2);

/// What the bridge was told to do.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `telegram`, `slack` or `webhook`.
    pub transport: &'static str,
    /// The one chat or channel whose messages count (and where it posts).
    pub chat: String,
    /// The chat user ids that may answer.
    pub allow: Vec<String>,
    /// How long a code works.
    pub ttl: Duration,
    /// When the bridge started: messages sent before are ignored.
    pub started: DateTime<Utc>,
    /// Answer in teams teamctl does not lead too.
    pub force: bool,
}

/// Which teams it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// One team.
    One(TeamName),
    /// Every team teamctl leads (every team with `force`), as they come and go.
    All,
    /// The team of a run's lead (`run --bridge`), once it has formed one ([`Bridge::serve`]):
    /// its needs are posted, never its requests (its teammates take answers only from their
    /// own lead), and its lead's permission prompts ([`Bridge::ask_prompt`]).
    Run(Option<TeamName>),
}

/// Where the bridge reads and writes: the config dir, teamctl's records (its data dir holds
/// the journal; its sent log makes each answer once) and the lock deadline of every write.
#[derive(Debug, Clone)]
pub struct Ground {
    /// The config dir.
    pub layout: Layout,
    /// teamctl's own records.
    pub records: Records,
    /// The lock deadline.
    pub lock: LockOptions,
}

/// A code posted and not yet retired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Open {
    pub(super) team: TeamName,
    pub(super) request_id: String,
    pub(super) member: String,
    pub(super) expires: DateTime<Utc>,
}

/// The bridge between a chat and the teams (see the module docs).
pub struct Bridge {
    pub(super) s: Settings,
    pub(super) ground: Ground,
    pub(super) journal: Journal,
    pub(super) scope: Scope,
    pub(super) teams: BTreeMap<TeamName, TeamReader>,
    listed_at: Option<Instant>,
    /// When the panes and processes were last probed (a member gone leaves no trace in the
    /// files).
    probed_at: Instant,
    /// Teams `--all-teams` leaves alone (teamctl does not lead them), told once.
    skipped: HashSet<TeamName>,
    pub(super) open: BTreeMap<Code, Open>,
    pub(super) spent: HashSet<String>,
    pub(super) told: HashSet<String>,
    /// The requests (team, request id) whose post the chat refused for good: not posted again
    /// while the bridge runs ([`Bridge::dropped`]).
    pub(super) dropped: HashSet<(String, String)>,
    /// What the teams' reads warned about last time (each told once, while it lasts).
    pub(super) warned: HashSet<String>,
    /// The code of the run's lead's permission prompt posted and not yet answered, and when
    /// it expires (`run --bridge`).
    pub(super) prompt: Option<(Code, DateTime<Utc>)>,
    /// The answer to that prompt, until taken ([`Bridge::take_verdict`]).
    pub(super) verdict: Option<crate::team::protocol::Verdict>,
    /// The spending cap held against the teams' spend ([`Bridge::with_cap`]).
    pub(super) budget: Budget,
}

impl Bridge {
    /// A bridge for `scope` as `settings` say, its codes and notices read back from the
    /// journal in the data dir; returns it and what the journal could not give (torn lines).
    ///
    /// # Errors
    /// Without a data dir (the journal is where codes are kept), or when the journal cannot be
    /// read.
    pub fn new(s: Settings, scope: Scope, ground: Ground) -> Result<(Bridge, Vec<String>)> {
        let dir = ground.records.data_dir().map(Path::to_path_buf).context(
            "the bridge keeps its journal in teamctl's data dir, and there is none: set \
             TEAMCTL_DATA_DIR",
        )?;
        let journal = Journal::in_dir(&dir);
        let (records, bad) = journal.read()?;
        let mut warnings = Vec::new();
        if bad > 0 {
            warnings.push(format!(
                "{bad} line(s) of {} could not be read and were skipped",
                journal.path().display()
            ));
        }
        let mut b = Bridge {
            s,
            ground,
            journal,
            scope,
            teams: BTreeMap::new(),
            listed_at: None,
            probed_at: Instant::now(),
            skipped: HashSet::new(),
            open: BTreeMap::new(),
            spent: HashSet::new(),
            told: HashSet::new(),
            dropped: HashSet::new(),
            warned: HashSet::new(),
            prompt: None,
            verdict: None,
            budget: Default::default(),
        };
        for r in records {
            b.replay(&r);
        }
        Ok((b, warnings))
    }

    /// Applies one journal line of this transport and chat.
    fn replay(&mut self, r: &Record) {
        if r.transport != self.s.transport || r.chat != self.s.chat {
            return;
        }
        let code = r.code.as_deref().and_then(Code::parse);
        match (r.event, code) {
            (What::Posted, Some(code)) if !self.spent.contains(code.as_str()) => {
                let open = (|| {
                    Some(Open {
                        team: TeamName::parse(r.team.as_deref()?).ok()?,
                        request_id: r.request_id.clone()?,
                        member: r.member.clone().unwrap_or_default(),
                        expires: DateTime::parse_from_rfc3339(r.expires_at.as_deref()?)
                            .ok()?
                            .with_timezone(&Utc),
                    })
                })();
                if let Some(open) = open {
                    self.open.insert(code, open);
                }
            }
            (What::Approved | What::Denied | What::Closed | What::Expired, Some(code)) => {
                self.open.remove(&code);
                self.spent.insert(code.to_string());
            }
            (What::Notice, _) => {
                if let Some(k) = &r.detail {
                    self.told.insert(k.clone());
                }
            }
            _ => {}
        }
    }

    /// A record of `event` now in this bridge's chat.
    pub(super) fn record(&self, event: What, now: DateTime<Utc>) -> Record {
        Record::new(event, iso_millis(now), self.s.transport, &self.s.chat)
    }

    /// Journals `r` and applies it to the state.
    pub(super) fn commit(&mut self, r: &Record) -> Result<()> {
        self.journal.append(r)?;
        self.replay(r);
        Ok(())
    }

    /// The teams served now (opened as last read).
    pub fn teams(&self) -> impl Iterator<Item = &Team> {
        self.teams.values().map(TeamReader::team)
    }

    /// Whether the one team served is gone (its `config.json` removed); never with
    /// `--all-teams`, nor before a run's lead has formed its team.
    pub fn team_gone(&self) -> bool {
        match &self.scope {
            Scope::One(name) | Scope::Run(Some(name)) => !self
                .ground
                .layout
                .config_path(name)
                .stat()
                .is_ok_and(|i| i.is_some()),
            Scope::All | Scope::Run(None) => false,
        }
    }

    /// Opens the teams that appeared and drops the ones gone, and probes which members run
    /// (every [`LIVENESS_EVERY`]); returns warnings (a team `--all-teams` leaves alone, told
    /// once).
    pub fn refresh(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.probed_at.elapsed() >= LIVENESS_EVERY {
            self.teams.values_mut().for_each(|r| {
                r.probe();
            });
            self.probed_at = Instant::now();
        }
        let names = match &self.scope {
            Scope::One(n) | Scope::Run(Some(n)) => vec![n.clone()],
            Scope::Run(None) => Vec::new(),
            Scope::All => {
                if self.listed_at.is_some_and(|t| t.elapsed() < LIST_EVERY) {
                    return warnings;
                }
                self.listed_at = Some(Instant::now());
                match list_teams(&self.ground.layout) {
                    Ok(n) => n,
                    Err(e) => return vec![format!("{e:#}")],
                }
            }
        };
        self.teams.retain(|n, _| names.contains(n));
        for name in names {
            if self.teams.contains_key(&name) || self.skipped.contains(&name) {
                continue;
            }
            let records = self.ground.records.clone();
            let opts = Options::default();
            match TeamReader::open(&self.ground.layout, &name, records, opts) {
                // A run's team is led by Claude: teamctl only reads it and says to its members.
                Ok(r)
                    if self.s.force
                        || matches!(self.scope, Scope::Run(_))
                        || r.team().teamctl_leads() =>
                {
                    self.teams.insert(name, r);
                }
                Ok(_) => {
                    warnings.push(format!(
                        "team '{name}' is left alone: teamctl does not lead it (--force answers \
                         there too)"
                    ));
                    self.skipped.insert(name);
                }
                // Not there (yet), or half written: tried again on the next look.
                Err(_) => {}
            }
        }
        warnings
    }

    /// Whether `request_id` is still open in team `name` now (`None`: it cannot be told: the
    /// team, its inbox or the sent log cannot be read).
    pub(super) fn pending_now(
        &self,
        name: &TeamName,
        request_id: &str,
        now: DateTime<Utc>,
    ) -> Option<bool> {
        let team = self.open_team(name).ok()?;
        let lead = lead_of(&team).ok()?;
        let sent = crate::team::sentlog::entries(self.ground.records.sent_log()).ok()?;
        let open = crate::team::protocol::pending(&team, &lead, &sent, now).ok()?;
        Some(open.iter().any(|r| r.request_id == request_id))
    }

    /// The team `name`, opened again now.
    pub(super) fn open_team(&self, name: &TeamName) -> Result<Team> {
        Team::open(&self.ground.layout, name, &self.ground.records)
    }
}

/// The name of `team`'s lead: the inbox its requests are in.
pub(super) fn lead_of(team: &Team) -> Result<MemberName> {
    let cfg = team.config.as_ref();
    MemberName::parse(cfg.and_then(|c| c.lead()).map_or(LEAD, |l| l.name.as_str()))
}

/// The cap held, what each team was warned of, and the crossing posted (posted by
/// [`super::budget`]).
#[derive(Debug, Default)]
pub(super) struct Budget {
    pub(super) cap: Cap,
    pub(super) warners: BTreeMap<TeamName, Warner>,
    /// The notice key and text of a crossing found.
    pub(super) crossed: Option<(String, String)>,
}
