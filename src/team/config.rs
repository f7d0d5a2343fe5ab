//! A team's `config.json` (read-only here) and which team a command addresses.

use std::fs;
use std::io;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::error::usage;
use crate::store;
use crate::store::dir::{Kind, Loc};
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, MemberName, TeamName, is_valid_member, quote, shown_list};
use crate::team::lead::{LeadRecord, Leads, RunRecord};
use crate::team::records::Records;

/// The lead's member name in a team teamctl leads.
pub const LEAD: &str = "team-lead";

/// The top-level key `teamctl create` writes into `config.json` (Claude Code keeps keys it does
/// not know), for people reading the file. It decides nothing: teammates can write it too, so
/// whether teamctl leads a team is decided by its private record ([`crate::team::lead`]).
pub const TEAMCTL_KEY: &str = "teamctl";

/// One entry of `members` in `config.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// `name`.
    pub name: String,
    /// `agentId` (`<name>@<team>`).
    pub agent_id: Option<String>,
    /// `color`, if set.
    pub color: Option<String>,
    /// `cwd`, if set.
    pub cwd: Option<String>,
    /// `agentType`, if set.
    pub agent_type: Option<String>,
    /// `model`, if set (the alias or id its lead gave it).
    pub model: Option<String>,
    /// `backendType` (`tmux`, `iterm2`, `in-process`), if set.
    pub backend_type: Option<String>,
    /// `tmuxPaneId`: a tmux pane id like `%12`, `in-process`, `leader`, or empty.
    pub tmux_pane_id: Option<String>,
    /// `isActive`: true while a turn runs; `None` when never reported.
    pub is_active: Option<bool>,
}

/// `leadProcess` (new Claude Code): the lead's process.
#[derive(Debug, Clone, PartialEq)]
pub struct LeadProcess {
    /// Its pid.
    pub pid: u32,
    /// Its start time as `/proc/<pid>/stat` field 22 (Linux), to tell a reused pid.
    pub proc_start: Option<String>,
}

/// The parts of `config.json` teamctl reads; unknown keys are ignored here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TeamConfig {
    /// `name` (the raw team name).
    pub name: Option<String>,
    /// `leadAgentId`.
    pub lead_agent_id: Option<String>,
    /// Members with a string `name` (others are ignored, as new Claude Code does).
    pub members: Vec<Member>,
    /// `description` (old Claude Code).
    pub description: Option<String>,
    /// `createdAt`, milliseconds since the epoch.
    pub created_at: Option<i64>,
    /// `leadSessionId`.
    pub lead_session_id: Option<String>,
    /// `leadProcess`.
    pub lead_process: Option<LeadProcess>,
}

impl TeamConfig {
    /// Whether `record` (teamctl's private lead record) is the one for this `config.json`: the
    /// same lead session and creation time.
    pub fn recorded_by(&self, record: &LeadRecord) -> bool {
        self.lead_session_id.as_deref() == Some(record.lead_session_id.as_str())
            && self.created_at == Some(record.created_at)
    }

    /// Parses the JSON of a `config.json`.
    ///
    /// # Errors
    /// When it is not a JSON object.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<TeamConfig> {
        let value: Value = serde_json::from_slice(bytes)
            .with_context(|| format!("{} is not valid JSON", path.display()))?;
        let Value::Object(map) = value else {
            bail!("{} is not a JSON object", path.display());
        };
        let s =
            |m: &Map<String, Value>, k: &str| m.get(k).and_then(Value::as_str).map(String::from);
        let members = map
            .get("members")
            .and_then(Value::as_array)
            .map(|a| a.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_object)
            .filter_map(|m| {
                Some(Member {
                    name: s(m, "name")?,
                    agent_id: s(m, "agentId"),
                    color: s(m, "color"),
                    cwd: s(m, "cwd"),
                    agent_type: s(m, "agentType"),
                    model: s(m, "model"),
                    backend_type: s(m, "backendType"),
                    tmux_pane_id: s(m, "tmuxPaneId"),
                    is_active: m.get("isActive").and_then(Value::as_bool),
                })
            })
            .collect();
        let lead_process = map
            .get("leadProcess")
            .and_then(Value::as_object)
            .and_then(|p| {
                Some(LeadProcess {
                    pid: u32::try_from(p.get("pid")?.as_u64()?).ok()?,
                    proc_start: s(p, "procStart"),
                })
            });
        Ok(TeamConfig {
            name: s(&map, "name"),
            lead_agent_id: s(&map, "leadAgentId"),
            members,
            description: s(&map, "description"),
            created_at: map.get("createdAt").and_then(Value::as_i64),
            lead_session_id: s(&map, "leadSessionId"),
            lead_process,
        })
    }

    /// The member called `name`, if any.
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }

    /// The lead's member entry: the one whose `agentId` is `leadAgentId`, else `team-lead`.
    pub fn lead(&self) -> Option<&Member> {
        self.members
            .iter()
            .find(|m| m.agent_id.is_some() && m.agent_id == self.lead_agent_id)
            .or_else(|| self.member("team-lead"))
    }
}

/// Reads `config.json` without a lock, as Claude Code's readers do. `Ok(None)` when missing.
/// New Claude Code rewrites it in place, so a parse failure is retried a few times.
///
/// # Errors
/// I/O errors, or a file that still does not parse after the retries.
pub fn read_config(path: &Loc) -> Result<Option<TeamConfig>> {
    store::read_unlocked(path, |bytes| TeamConfig::parse(bytes, path))
}

/// The teams under `teams/` that have a `config.json` and a name teamctl accepts, sorted.
///
/// # Errors
/// When `teams/` exists but cannot be listed.
pub fn list_teams(layout: &Layout) -> Result<Vec<TeamName>> {
    let loc = layout.teams_dir();
    let dir = match loc.open_dir() {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", loc.display())),
    };
    let names = dir
        .names()
        .with_context(|| format!("could not list {}", loc.display()))?;
    let mut teams: Vec<TeamName> = names
        .iter()
        .filter_map(|n| TeamName::parse(n.to_str()?).ok())
        .filter(|t| {
            layout
                .config_path(t)
                .stat()
                .is_ok_and(|i| i.is_some_and(|i| i.kind == Kind::File))
        })
        .collect();
    teams.sort();
    Ok(teams)
}

/// Picks the team a command addresses: `explicit` if given; else the only team with a
/// `config.json`; else the one team whose lead's `cwd` is `cwd`.
///
/// # Errors
/// A usage error for an invalid explicit name; otherwise an error listing the teams found.
pub fn resolve(layout: &Layout, explicit: Option<&str>, cwd: &Path) -> Result<TeamName> {
    if let Some(name) = explicit {
        return TeamName::parse(name);
    }
    let teams = list_teams(layout)?;
    match teams.as_slice() {
        [] => bail!(
            "no team found in {} (pass --team NAME or set TEAMCTL_TEAM)",
            layout.teams_dir().display()
        ),
        [one] => return Ok(one.clone()),
        _ => {}
    }
    // The lead's `cwd` is compared as text, never looked up: it is written by the team, and a
    // path from a file must not make teamctl touch the file system (an automount, a FIFO).
    let here = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut led_here = teams.iter().filter(|t| {
        let lead_cwd = read_config(&layout.config_path(t))
            .ok()
            .flatten()
            .and_then(|c| c.lead().and_then(|l| l.cwd.clone()));
        lead_cwd.is_some_and(|c| {
            let c = Path::new(&c);
            c == cwd || c == here
        })
    });
    match (led_here.next(), led_here.next()) {
        (Some(t), None) => Ok(t.clone()),
        _ => {
            let names: Vec<&str> = teams.iter().map(TeamName::as_str).collect();
            bail!(
                "several teams found ({}); pass --team NAME or set TEAMCTL_TEAM",
                names.join(", ")
            )
        }
    }
}

/// A team opened for mailbox work: its name, layout and `config.json` (if it has one), and
/// teamctl's private record of leading it (if it does).
#[derive(Debug, Clone)]
pub struct Team {
    /// Where its files are.
    pub layout: Layout,
    /// Its name.
    pub name: TeamName,
    /// `config.json`, or `None` when the team folder has none.
    pub config: Option<TeamConfig>,
    /// teamctl's record of creating this team, when it exists and matches `config.json`
    /// ([`crate::team::lead`]): the only evidence that teamctl leads it.
    pub lead: Option<LeadRecord>,
    /// For a team a Claude Code lead formed under `teamctl run`: the record of the tmux server
    /// its lead runs on, while it names the team's `leadSessionId` ([`RunRecord`]).
    pub run: Option<RunRecord>,
}

impl Team {
    /// Opens the team `name` under `layout`, with teamctl's own `records` (its record of the
    /// teams it leads and of its runs' teams: [`Records::none`], teamctl leads none here).
    ///
    /// # Errors
    /// When the team folder does not exist (listing the teams that do), when a `session-*`
    /// team's `config.json` is gone (Claude Code treats the team as deleted and removes inboxes
    /// written into it), or when `config.json` does not parse.
    pub fn open(layout: &Layout, name: &TeamName, records: &Records) -> Result<Team> {
        let leads = records.leads();
        let dir = layout.team_dir(name);
        match dir.open_dir() {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let known: Vec<String> =
                    list_teams(layout)?.iter().map(|t| t.to_string()).collect();
                let known = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                bail!(
                    "team '{name}' not found in {} (teams: {known})",
                    layout.teams_dir().display()
                );
            }
            Err(e) => return Err(e).with_context(|| format!("could not open team '{name}'")),
        }
        let config = read_config(&layout.config_path(name))?;
        if config.is_none() && name.is_session_team() {
            bail!(
                "team '{name}' has no config.json: Claude Code treats a session team without one \
                 as deleted and would remove anything written to it"
            );
        }
        let lead = recorded_lead(layout, name, config.as_ref(), leads)?;
        let run = match lead {
            None => recorded_run(layout, name, config.as_ref(), leads)?,
            Some(_) => None,
        };
        Ok(Team {
            layout: layout.clone(),
            name: name.clone(),
            config,
            lead,
            run,
        })
    }

    /// The inbox file of `member`.
    pub fn inbox_path(&self, member: &MemberName) -> Loc {
        self.layout.inbox_path(&self.name, member)
    }

    /// Whether teamctl leads this team: it was made by `teamctl create` with this data dir,
    /// as teamctl's private record says ([`crate::team::lead`]); nothing in the team's own
    /// files can make this true.
    pub fn teamctl_leads(&self) -> bool {
        self.lead.is_some()
    }

    /// Whether a Claude Code session leads this team: a `session-*` team, or one whose
    /// `config.json` records a `leadProcess`.
    pub fn led_by_claude_code(&self) -> bool {
        self.name.is_session_team()
            || self
                .config
                .as_ref()
                .is_some_and(|c| c.lead_process.is_some())
    }

    /// Refuses to write as someone teamctl is not: `team-lead` in a team teamctl does not lead
    /// (that is its Claude Code lead, or whoever made the team), and `system` anywhere (Claude
    /// Code itself). `user` is allowed: it names the human at the keyboard, which is who runs
    /// teamctl, and it is teamctl's default identity outside the teams it leads. `force` allows
    /// everything.
    ///
    /// # Errors
    /// [`crate::Error::Usage`] (exit 2) saying why, and what to use instead.
    pub fn check_sender(&self, from: &MemberName, force: bool) -> Result<()> {
        if force {
            return Ok(());
        }
        let name = from.as_str();
        if name.eq_ignore_ascii_case("system") {
            return Err(usage(format!(
                "refusing to write as '{name}': that name is Claude Code itself, and teamctl is \
                 not; send under your own name (`teamctl send --join --from NAME …`), or pass \
                 --force to write as '{name}' anyway"
            )));
        }
        if name.eq_ignore_ascii_case(LEAD) && !self.teamctl_leads() {
            let who = if self.led_by_claude_code() {
                "a Claude Code session leads it, and current teammates mark what others write as \
                 its lead as forged"
            } else {
                "it was not made by `teamctl create`, so its lead is someone else"
            };
            return Err(usage(format!(
                "refusing to write as '{name}' into team '{}': teamctl does not lead this team \
                 ({who}); send under your own name (`teamctl send --join --from NAME …`), or \
                 pass --force to write as '{name}' anyway",
                self.name
            )));
        }
        Ok(())
    }

    /// The identity to use when none is given: `team-lead` in a team teamctl leads (teammates
    /// report to their lead), otherwise `user`.
    pub fn default_identity(&self) -> &'static str {
        if self.teamctl_leads() { LEAD } else { "user" }
    }

    /// Whether `name` is a member in `config.json`.
    pub fn is_member(&self, name: &str) -> bool {
        self.config
            .as_ref()
            .is_some_and(|c| c.member(name).is_some())
    }

    /// Member names from `config.json`, in file order.
    pub fn member_names(&self) -> Vec<String> {
        self.config
            .iter()
            .flat_map(|c| c.members.iter().map(|m| m.name.clone()))
            .collect()
    }

    /// Checks that `to` can be written to: a member in `config.json`, or anything with `force`.
    ///
    /// # Errors
    /// An error with a "did you mean" suggestion for an unknown recipient.
    pub fn check_recipient(&self, to: &MemberName, force: bool) -> Result<()> {
        if force || self.is_member(to.as_str()) {
            return Ok(());
        }
        let Some(_) = &self.config else {
            bail!(
                "team '{}' has no config.json, so '{to}' cannot be checked; pass --force to write anyway",
                self.name
            );
        };
        let members = self.member_names();
        let hint = match suggest(to.as_str(), &members) {
            Some(s) => format!(" (did you mean {}?)", quote(&s)),
            None => String::new(),
        };
        bail!(
            "'{to}' is not a member of team '{}'{hint}; members: {}. Pass --force to write anyway \
             (Claude Code creates an inbox for any name, but no teammate reads it)",
            self.name,
            shown_list(&members)
        )
    }

    /// Every member in `config.json` except `sender`: the names that pass the naming rules, and
    /// apart from them the ones that do not (which cannot be written to; the caller reports
    /// them after serving the others).
    ///
    /// # Errors
    /// When the team has no `config.json`.
    pub fn all_recipients(&self, sender: &MemberName) -> Result<(Vec<MemberName>, Vec<String>)> {
        if self.config.is_none() {
            bail!(
                "team '{}' has no config.json: --all needs its member list",
                self.name
            );
        }
        let (mut ok, mut bad) = (Vec::new(), Vec::new());
        for n in self.member_names() {
            if n == sender.as_str() {
                continue;
            }
            match MemberName::parse(&n) {
                Ok(m) => ok.push(m),
                Err(_) => bad.push(n),
            }
        }
        Ok((ok, bad))
    }

    /// The members that have an inbox file, sorted (for `inbox --all`). Temp files and lock
    /// directories are ignored, as are files whose name is not a valid member name.
    ///
    /// # Errors
    /// When the inbox folder exists but cannot be listed.
    pub fn inbox_owners(&self) -> Result<Vec<MemberName>> {
        let loc = self.layout.inboxes_dir(&self.name);
        let dir = match loc.open_dir() {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e).with_context(|| format!("could not list {}", loc.display())),
        };
        let entries = dir
            .names()
            .with_context(|| format!("could not list {}", loc.display()))?;
        let mut names: Vec<MemberName> = entries
            .iter()
            .filter_map(|n| {
                let n = n.to_str()?;
                let name = n.strip_suffix(".json")?;
                if !is_valid_member(name) {
                    return None;
                }
                dir.stat(n)
                    .ok()
                    .flatten()
                    .filter(|i| i.kind == Kind::File)?;
                MemberName::parse(name).ok()
            })
            .collect();
        names.sort();
        Ok(names)
    }
}

/// teamctl's record of leading team `name`, when there is one and `config` says it is the same
/// team (its lead session is the one recorded): the one rule for whether teamctl leads a team.
///
/// # Errors
/// When the record cannot be read.
pub fn recorded_lead(
    layout: &Layout,
    name: &TeamName,
    config: Option<&TeamConfig>,
    leads: Option<&Leads>,
) -> Result<Option<LeadRecord>> {
    Ok(match (leads, config) {
        (Some(leads), Some(cfg)) => leads.find(layout, name)?.filter(|r| cfg.recorded_by(r)),
        _ => None,
    })
}

/// The [`RunRecord`] of `name` in `leads`, when it names `config`'s `leadSessionId`.
///
/// # Errors
/// A record that cannot be read or parsed.
fn recorded_run(
    layout: &Layout,
    name: &TeamName,
    config: Option<&TeamConfig>,
    leads: Option<&Leads>,
) -> Result<Option<RunRecord>> {
    let (Some(leads), Some(id)) = (leads, config.and_then(|c| c.lead_session_id.as_deref())) else {
        return Ok(None);
    };
    Ok(leads
        .find_run(layout, name)?
        .filter(|r| r.lead_session_id == id))
}

/// The closest member name to `name`: same letters in another case, or at most two edits.
pub fn suggest(name: &str, candidates: &[String]) -> Option<String> {
    close_to(name, candidates).into_iter().next()
}

/// Every member name [`suggest`] could pick for `name` (same letters in another case, or at
/// most two edits), closest first (ties in `candidates` order). Whether the first is certain
/// is [`is_certain`]'s to say.
pub fn close_to(name: &str, candidates: &[String]) -> Vec<String> {
    let lower = name.to_lowercase();
    let mut near: Vec<(usize, &String)> = candidates
        .iter()
        .map(|c| {
            let d = if c.to_lowercase() == lower {
                0
            } else {
                strsim::levenshtein(&lower, &c.to_lowercase())
            };
            (d, c)
        })
        .filter(|(d, _)| *d <= 2)
        .collect();
    near.sort_by_key(|(d, _)| *d);
    near.into_iter().map(|(_, c)| c.clone()).collect()
}

/// Whether `name` was certainly meant for the one member in `candidates` ([`close_to`]'s answer
/// for it): the only member within two edits, at most one edit (case aside) from it, and
/// `name` at least 4 characters long. Short names are too close to each other to tell: `ci` is
/// two edits from `qa`, one from `cd`, so no two-letter name is ever certain.
pub fn is_certain(name: &str, candidates: &[String]) -> bool {
    let [only] = candidates else {
        return false;
    };
    name.chars().count() >= 4
        && strsim::levenshtein(&name.to_lowercase(), &only.to_lowercase()) <= 1
}

/// Sets `tmuxPaneId` and `backendType: "tmux"` on a member, under the config lock.
///
/// # Errors
/// Lock timeout, a corrupt `config.json`, I/O.
pub fn set_pane(
    layout: &Layout,
    team: &TeamName,
    member: &str,
    pane: &str,
    opts: &LockOptions,
) -> Result<()> {
    let path = layout.config_path(team);
    store::rewrite(
        &path,
        opts,
        |b| store::parse_object(b, &path),
        |doc| {
            let entry = doc
                .get_mut("members")
                .and_then(Value::as_array_mut)
                .and_then(|ms| {
                    ms.iter_mut()
                        .filter_map(Value::as_object_mut)
                        .find(|m| m.get("name").and_then(Value::as_str) == Some(member))
                });
            let Some(entry) = entry else {
                bail!("member '{member}' disappeared from {}", path.display());
            };
            entry.insert("tmuxPaneId".into(), pane.into());
            entry.insert("backendType".into(), "tmux".into());
            Ok((true, ()))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let m = vec![
            "alice".to_string(),
            "bob".to_string(),
            "team-lead".to_string(),
        ];
        assert_eq!(suggest("alcie", &m).as_deref(), Some("alice"));
        assert_eq!(suggest("Alice", &m).as_deref(), Some("alice"));
        assert_eq!(suggest("teamlead", &m).as_deref(), Some("team-lead"));
        assert_eq!(suggest("zed", &m), None);
        assert_eq!(close_to("alise", &m), ["alice"]);
        let m2 = vec![
            "alice".to_string(),
            "alise2".to_string(),
            "elise".to_string(),
        ];
        assert_eq!(close_to("alise", &m2), ["alice", "alise2", "elise"]);
        assert!(close_to("lead", &m).is_empty());
    }

    fn write_team(root: &Path, name: &str, lead_cwd: &str) {
        let dir = root.join("teams").join(name);
        fs::create_dir_all(&dir).unwrap();
        let cfg = format!(
            r#"{{"name":"{name}","leadAgentId":"team-lead@{name}","members":[{{"agentId":"team-lead@{name}","name":"team-lead","cwd":"{lead_cwd}"}},{{"name":"alice","color":"blue"}},{{"agentId":"x"}}]}}"#
        );
        fs::write(dir.join("config.json"), cfg).unwrap();
    }

    #[test]
    fn resolution_order() {
        let tmp = tempfile::tempdir().unwrap();
        let layout = Layout::new(tmp.path());
        let here = tmp.path().join("work");
        fs::create_dir_all(&here).unwrap();
        assert!(resolve(&layout, None, &here).is_err());
        write_team(tmp.path(), "one", "/elsewhere");
        assert_eq!(resolve(&layout, None, &here).unwrap().as_str(), "one");
        write_team(tmp.path(), "two", here.to_str().unwrap());
        assert_eq!(resolve(&layout, None, &here).unwrap().as_str(), "two");
        write_team(tmp.path(), "three", here.to_str().unwrap());
        let err = resolve(&layout, None, &here).unwrap_err().to_string();
        assert!(err.contains("one, three, two"), "{err}");
        assert_eq!(
            resolve(&layout, Some("one"), &here).unwrap().as_str(),
            "one"
        );
        assert!(resolve(&layout, Some("../x"), &here).is_err());
        // A folder without config.json is not a team.
        fs::create_dir_all(tmp.path().join("teams/four")).unwrap();
        assert_eq!(list_teams(&layout).unwrap().len(), 3);
    }

    #[test]
    fn config_members() {
        let tmp = tempfile::tempdir().unwrap();
        write_team(tmp.path(), "one", "/w");
        let c = read_config(&Layout::new(tmp.path()).config_path(&TeamName::parse("one").unwrap()))
            .unwrap()
            .unwrap();
        let names: Vec<&str> = c.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["team-lead", "alice"]);
        assert_eq!(c.lead().unwrap().cwd.as_deref(), Some("/w"));
        assert_eq!(c.member("alice").unwrap().color.as_deref(), Some("blue"));
    }
}
