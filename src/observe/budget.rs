//! A spending cap on a team (`--max-cost`, `--max-tokens` of `wait`, `ask` and `run`): the
//! team's total from its transcripts ([`crate::observe::spend`]), everything it spent before
//! the command started included, checked after every change the command sees. The transcripts
//! are read through the index, so a check parses only what was appended since the last one.
//!
//! The cost counted is every session's known cost (a response of a model without a price counts
//! its tokens, not a cost); the tokens are all four kinds together (input, output, cache reads
//! and cache writes). A cap is exceeded when the total is above it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::observe::spend::{self, TeamSpend};
use crate::store::dir::{Kind, Loc};
use crate::store::paths::{Layout, TeamName};
use crate::team::config::TeamConfig;
use crate::team::transcript::index::Index;
use crate::team::transcript::locate::{self, Session};

/// How often the transcripts' owners are looked for again (new sessions, new members).
pub const LOCATE_EVERY: Duration = Duration::from_secs(1);

/// The limits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cap {
    /// `--max-cost`: USD.
    pub max_cost_usd: Option<f64>,
    /// `--max-tokens`: all kinds together.
    pub max_tokens: Option<u64>,
}

impl Cap {
    /// Whether any limit is set.
    pub fn is_set(&self) -> bool {
        self.max_cost_usd.is_some() || self.max_tokens.is_some()
    }
}

/// `$12.34`, `$0.0042`: a cost for people.
pub fn usd(c: f64) -> String {
    if c >= 0.01 || c == 0.0 {
        format!("${c:.2}")
    } else {
        format!("${c:.4}")
    }
}

/// The cap was crossed: by how much and by whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Exceeded {
    /// The cap.
    pub cap: Cap,
    /// Whether the cost (else the tokens) crossed it.
    pub by_cost: bool,
    /// The team's work when it was crossed.
    pub spend: TeamSpend,
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut members: Vec<(&String, f64, u64)> = self
            .spend
            .members
            .iter()
            .map(|(n, m)| (n, m.cost_usd.unwrap_or(0.0), m.tokens.total()))
            .collect();
        if self.by_cost {
            members.sort_by(|a, b| b.1.total_cmp(&a.1));
            let by: Vec<String> = members
                .iter()
                .map(|(n, c, _)| format!("{n} {}", usd(*c)))
                .collect();
            write!(
                f,
                "budget exceeded: {} of {}, by {}",
                usd(self.spend.known_cost_usd),
                usd(self.cap.max_cost_usd.unwrap_or(0.0)),
                by.join(", ")
            )
        } else {
            members.sort_by_key(|m| std::cmp::Reverse(m.2));
            let by: Vec<String> = members.iter().map(|(n, _, t)| format!("{n} {t}")).collect();
            write!(
                f,
                "budget exceeded: {} tokens of {}, by {}",
                self.spend.tokens.total(),
                self.cap.max_tokens.unwrap_or(0),
                by.join(", ")
            )
        }
    }
}

/// A team's spend, followed against a [`Cap`].
#[derive(Debug)]
pub struct Budget {
    cap: Cap,
    root: Loc,
    team: Option<(String, Loc)>,
    cfg: TeamConfig,
    index: Index,
    located: BTreeMap<String, Vec<Session>>,
    located_at: Option<Instant>,
    last: TeamSpend,
    /// What the last look for sessions skipped.
    locate_warnings: Vec<String>,
    /// Warnings already handed out by [`Budget::new_warnings`].
    reported: Vec<String>,
}

impl Budget {
    /// Follows the spend of `team` in the config dir of `layout` against `cap`; `data_dir` holds
    /// the transcript index (none: kept in memory).
    pub fn new(layout: &Layout, team: &TeamName, cap: Cap, data_dir: Option<&Path>) -> Budget {
        let mut b = Budget::for_session(layout.root_loc(), None, cap, data_dir);
        b.set_team(layout, team);
        b
    }

    /// Follows one lead session's spend (`projects/*/<session_id>.jsonl`) until its team is known
    /// ([`Budget::set_team`]); `run` uses it from the moment it starts the lead.
    pub fn for_session(
        root: &Loc,
        session_id: Option<&str>,
        cap: Cap,
        data_dir: Option<&Path>,
    ) -> Budget {
        Budget {
            cap,
            root: root.clone(),
            team: None,
            cfg: TeamConfig {
                name: None,
                lead_agent_id: None,
                members: Vec::new(),
                description: None,
                created_at: None,
                lead_session_id: session_id.map(String::from),
                lead_process: None,
            },
            index: Index::load(data_dir),
            located: BTreeMap::new(),
            located_at: None,
            last: TeamSpend::default(),
            locate_warnings: Vec::new(),
            reported: Vec::new(),
        }
    }

    /// The team whose members to count from now on.
    pub fn set_team(&mut self, layout: &Layout, team: &TeamName) {
        self.team = Some((team.to_string(), layout.config_path(team)));
        self.located_at = None;
    }

    /// Makes the next [`Budget::check`] read `config.json` and look for sessions again, however
    /// recently it did (`run`, before its lead removes the team: the members that joined since
    /// the last look are counted after it too).
    pub fn relocate(&mut self) {
        self.located_at = None;
    }

    /// The cap.
    pub fn cap(&self) -> Cap {
        self.cap
    }

    /// Reads what the transcripts gained (looking for new sessions at most every
    /// [`LOCATE_EVERY`]) and says whether the cap is now exceeded.
    pub fn check(&mut self) -> Option<Exceeded> {
        if self.located_at.is_none_or(|t| t.elapsed() >= LOCATE_EVERY) {
            if let Some((_, path)) = &self.team
                && let Ok(Some(bytes)) = path.read()
                && let Ok(cfg) = TeamConfig::parse(&bytes, path)
            {
                // A torn read keeps the last good config.
                self.cfg = cfg;
            }
            let name = self.team.as_ref().map_or("", |(n, _)| n.as_str());
            let mut warnings = Vec::new();
            self.located =
                locate::locate(&self.root, name, &self.cfg, &mut self.index, &mut warnings);
            self.locate_warnings = warnings;
            self.located_at = Some(Instant::now());
        }
        self.last = spend::read_located(&self.located, &mut self.index);
        for w in &self.locate_warnings {
            locate::note(&mut self.last.warnings, w.clone());
        }
        self.exceeded()
    }

    /// The warnings of the reads so far (transcripts or folders skipped) not handed out
    /// before: each is reported once, however often the budget is checked.
    pub fn new_warnings(&mut self) -> Vec<String> {
        let new: Vec<String> = self
            .last
            .warnings
            .iter()
            .filter(|w| !self.reported.contains(w))
            .cloned()
            .collect();
        self.reported.extend(new.iter().cloned());
        new
    }

    /// Looks for the transcripts' owners again at the next [`Budget::check`], however recent
    /// the last look (a file appeared that is nobody's yet).
    pub fn relocate_soon(&mut self) {
        self.located_at = None;
    }

    /// Whether `path` is one of the transcripts found at the last look.
    pub fn knows(&self, path: &Path) -> bool {
        self.located
            .values()
            .flatten()
            .any(|s| s.files().any(|f| f.path() == path))
    }

    /// The cap crossed by the spend last read, if it is.
    pub fn exceeded(&self) -> Option<Exceeded> {
        let s = &self.last;
        let by_cost = self.cap.max_cost_usd.is_some_and(|m| s.known_cost_usd > m);
        let by_tokens = self.cap.max_tokens.is_some_and(|m| s.tokens.total() > m);
        (by_cost || by_tokens).then(|| Exceeded {
            cap: self.cap,
            by_cost,
            spend: s.clone(),
        })
    }

    /// The spend last read.
    pub fn spend(&self) -> &TeamSpend {
        &self.last
    }

    /// The folders the transcripts are written in (to be woken up by their changes).
    /// Only folders found as folders (no symlink below the config dir) are given; the watch
    /// only wakes the budget up, every read goes through the handles.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        // Reported by the reads already.
        let mut ignored = Vec::new();
        for m in &self.cfg.members {
            if let Some(c) = &m.cwd {
                dirs.extend(
                    locate::project_dirs(&self.root, c, &mut ignored)
                        .into_iter()
                        .map(|l| l.to_path_buf()),
                );
            }
        }
        for s in self.located.values().flatten() {
            dirs.extend(s.path.parent().map(|p| p.to_path_buf()));
            if let Some(subs) = locate::subagents_dir(&s.path)
                && subs
                    .stat()
                    .is_ok_and(|i| i.is_some_and(|i| i.kind == Kind::Dir))
            {
                dirs.push(subs.to_path_buf());
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Saves the transcript index (best effort: a failure only makes the next read longer).
    pub fn save(&mut self) {
        let _ = self.index.save();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::spend::MemberSpend;
    use crate::team::transcript::Tokens;

    #[test]
    fn the_message_names_the_spenders() {
        let mut spend = TeamSpend::default();
        let m = |c: f64, t: u64| MemberSpend {
            cost_usd: Some(c),
            tokens: Tokens {
                input: t,
                ..Tokens::default()
            },
            ..MemberSpend::default()
        };
        spend.members.insert("alice".into(), m(0.004, 100));
        spend.members.insert("bob".into(), m(1.5, 40));
        spend.known_cost_usd = 1.504;
        spend.tokens.input = 140;
        let e = Exceeded {
            cap: Cap {
                max_cost_usd: Some(1.0),
                max_tokens: None,
            },
            by_cost: true,
            spend: spend.clone(),
        };
        assert_eq!(
            e.to_string(),
            "budget exceeded: $1.50 of $1.00, by bob $1.50, alice $0.0040"
        );
        let e = Exceeded {
            cap: Cap {
                max_cost_usd: None,
                max_tokens: Some(100),
            },
            by_cost: false,
            spend,
        };
        assert_eq!(
            e.to_string(),
            "budget exceeded: 140 tokens of 100, by alice 100, bob 40"
        );
    }
}
