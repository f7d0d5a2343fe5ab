//! A team's `config.json` (read-only here) and which team a command addresses.

use std::fs;
use std::io;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::paths::{Layout, TeamName};
use crate::store;

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
#[derive(Debug, Clone, PartialEq)]
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
    /// Whether teamctl leads this team (`"teamctl": {"leads": true}`, written by
    /// `teamctl create`).
    pub teamctl_leads: bool,
    /// The tmux session teamctl started the teammates in (`teamctl.tmuxSession`).
    pub teamctl_tmux_session: Option<String>,
}

impl TeamConfig {
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
            teamctl_leads: map
                .get(crate::create::TEAMCTL_KEY)
                .and_then(|t| t.get("leads"))
                .and_then(Value::as_bool)
                == Some(true),
            teamctl_tmux_session: map
                .get(crate::create::TEAMCTL_KEY)
                .and_then(|t| t.get("tmuxSession"))
                .and_then(Value::as_str)
                .map(String::from),
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
pub fn read_config(path: &Path) -> Result<Option<TeamConfig>> {
    store::read_unlocked(path, |bytes| TeamConfig::parse(bytes, path))
}

/// The teams under `teams/` that have a `config.json` and a name teamctl accepts, sorted.
///
/// # Errors
/// When `teams/` exists but cannot be listed.
pub fn list_teams(layout: &Layout) -> Result<Vec<TeamName>> {
    let dir = layout.teams_dir();
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
    };
    let mut teams: Vec<TeamName> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| TeamName::parse(e.file_name().to_str()?).ok())
        .filter(|t| layout.config_path(t).is_file())
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
    let here = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut led_here = teams.iter().filter(|t| {
        let lead_cwd = read_config(&layout.config_path(t))
            .ok()
            .flatten()
            .and_then(|c| c.lead().and_then(|l| l.cwd.clone()));
        lead_cwd.is_some_and(|c| {
            let c = Path::new(&c);
            c == cwd || fs::canonicalize(c).is_ok_and(|c| c == here)
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let c = read_config(&tmp.path().join("teams/one/config.json"))
            .unwrap()
            .unwrap();
        let names: Vec<&str> = c.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["team-lead", "alice"]);
        assert_eq!(c.lead().unwrap().cwd.as_deref(), Some("/w"));
        assert_eq!(c.member("alice").unwrap().color.as_deref(), Some("blue"));
    }
}
