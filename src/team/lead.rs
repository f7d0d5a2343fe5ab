//! teamctl's private record of the teams it leads: the evidence, kept outside the team's files,
//! that decides whether teamctl speaks as `team-lead` in a team and may take it down.
//!
//! A team's files are written by its teammates too, so nothing in `config.json` can say who
//! leads it. `teamctl create` writes one record per team into teamctl's own data dir
//! (`<data dir>/leads/<team>.<16 hex>.json`, the hex naming the config dir; folder 0700, file
//! 0600) before it publishes `config.json`. teamctl leads a team only while a record for that
//! config dir and team exists and matches the team's `leadSessionId` and `createdAt` (which
//! `create` generated): a team deleted and made again by someone else, or a record copied from
//! another config dir, does not match. A teammate can make teamctl lead *less* (by editing
//! those keys) but never more. The record also holds the tmux session `create` started, the
//! only one `delete` ever kills.
//!
//! A team a Claude Code lead formed under `teamctl run` has a smaller record
//! (`<data dir>/runs/<team>.<16 hex>.json`, [`RunRecord`]): the tmux server the run started its
//! lead on, where that lead starts its pane teammates, so that their panes are asked about
//! there whatever `TMUX` and `TMUX_TMPDIR` say later. It grants nothing, and holds only while
//! it names the team's `leadSessionId`.

use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store;
use crate::store::dir::Loc;
use crate::store::paths::{Layout, TeamName};
use crate::team::data_dir::private_dir;
use crate::team::runtime::Runtime;

/// One record: what `create` made, as it made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeadRecord {
    /// Always 1.
    pub schema_version: u32,
    /// The team.
    pub team: String,
    /// The config dir the team lives in (canonical).
    pub config_dir: String,
    /// `leadSessionId` as written into `config.json`.
    pub lead_session_id: String,
    /// `createdAt` as written into `config.json` (ms since the epoch).
    pub created_at: i64,
    /// The tmux session `create` started its teammates in, if any.
    pub tmux_session: Option<String>,
    /// Its tmux session id (`$3`), once started: a session of the same name made later by
    /// someone else is not ours.
    pub tmux_session_id: Option<String>,
    /// The working directory `create` gave the teammates: where the policy anchors their
    /// relative path rules (a teammate can rewrite its `cwd` in `config.json`).
    #[serde(default)]
    pub cwd: Option<String>,
    /// How `create` started the teammates (what a restart starts them with again).
    #[serde(default)]
    pub launch: Option<Launch>,
    /// The socket of the tmux server the teammates were started in (`#{socket_path}`): the
    /// server their panes are asked about, whatever `TMUX` and `TMUX_TMPDIR` say later; when it
    /// has no server any more, every pane of the team is gone.
    #[serde(default)]
    pub tmux_socket: Option<String>,
    /// Which server that was (`#{start_time}/#{pid}`): a server started later on the same
    /// socket (after a reboot) is another, and none of its panes is the team's. Absent from
    /// records written before it was kept: then whatever server runs there is taken for it.
    #[serde(default)]
    pub tmux_server_id: Option<String>,
}

/// How `create` started a team's teammates, besides their names and colours.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launch {
    /// `--permission-mode`, if given.
    pub permission_mode: Option<String>,
    /// `--dangerously-skip-permissions`.
    pub skip_permissions: bool,
    /// `--model`, if given.
    pub model: Option<String>,
    /// `--agent-type`, if given.
    pub agent_type: Option<String>,
    /// Each teammate's own settings, in member order (a record written before teamctl 0.1's
    /// team files has none: then the team-wide settings above hold for every teammate).
    #[serde(default)]
    pub members: Vec<MemberLaunch>,
}

impl Launch {
    /// `name`'s own settings, if recorded.
    pub fn member(&self, name: &str) -> Option<&MemberLaunch> {
        self.members.iter().find(|m| m.name == name)
    }
}

/// How `create` started one teammate: what a restart starts it with again.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberLaunch {
    /// Its name.
    pub name: String,
    /// `--model`, if given.
    #[serde(default)]
    pub model: Option<String>,
    /// `--agent-type`, if given.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// `--permission-mode`, if given.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// `--dangerously-skip-permissions`.
    #[serde(default)]
    pub skip_permissions: bool,
    /// Its own MCP servers, settings, effort and env (`${NAME}` kept as written, never the
    /// value).
    #[serde(default, skip_serializing_if = "Runtime::is_empty")]
    pub runtime: Runtime,
    /// Where it runs (absolute): its worktree, or the team's working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Its own git worktree, if it has one.
    #[serde(default)]
    pub worktree: Option<Worktree>,
    /// The sandbox it runs in, if it is confined (what a restart confines it with again).
    #[serde(default)]
    pub sandbox: Option<crate::sandbox::Rules>,
}

/// A teammate's own git worktree, as `create` made it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worktree {
    /// The worktree's folder (absolute).
    pub path: String,
    /// Its branch.
    pub branch: String,
    /// The repository it belongs to (the top folder of the team's working directory).
    pub repo: String,
    /// The commit it started from.
    pub base: String,
    /// The filter and merge drivers of the repository's own git config (`git config` key ->
    /// program) when the worktree was made: the only ones teamctl lets git run over the
    /// teammate's work (`None`: a record written before teamctl kept them; then none of the
    /// repository's own runs).
    #[serde(default)]
    pub drivers: Option<std::collections::BTreeMap<String, String>>,
    /// Set when it is a sandboxed teammate's own clone rather than a worktree of `repo`: the
    /// branch lives in the clone until teamctl fetches it home
    /// (`host::sandbox::clone`).
    #[serde(default)]
    pub clone: Option<OwnClone>,
}

/// A sandboxed teammate's own clone of the repository.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnClone {
    /// Whether teamctl made its branch for it (then the teammate's history is fetched home
    /// even when rewritten; an existing branch only moves forward).
    pub new_branch: bool,
}

/// Where the lead of a team `teamctl run` formed runs: the tmux server its pane teammates are
/// started on (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Always 1.
    pub schema_version: u32,
    /// The team.
    pub team: String,
    /// The config dir the team lives in (canonical).
    pub config_dir: String,
    /// The lead's session id: the record holds while `config.json`'s `leadSessionId` says it.
    pub lead_session_id: String,
    /// The tmux session `run` started the lead in (`teamctl-run-<name>`).
    pub tmux_session: String,
    /// Its server's socket (`#{socket_path}`).
    pub tmux_socket: String,
    /// Which server that was (`#{start_time}/#{pid}`).
    pub tmux_server_id: String,
    /// The tmux session's id (`$3`), unique for the life of its server: a later session under
    /// the same name is another (`None` in a record written before teamctl kept it).
    #[serde(default)]
    pub tmux_session_id: Option<String>,
    /// The sandbox the lead's tmux server runs in (`run --sandbox`), which the lead and its
    /// teammates share; `None`: unconfined.
    #[serde(default)]
    pub sandbox: Option<crate::sandbox::Rules>,
}

/// A record of the Claude-led `team` under `layout`, whose lead (`lead_session_id`) `run`
/// started in tmux session `tmux_session`, on the server on `tmux_socket` whose identity is
/// `tmux_server_id`.
pub fn run_record(
    layout: &Layout,
    team: &TeamName,
    lead_session_id: &str,
    tmux_session: &str,
    tmux_socket: &str,
    tmux_server_id: &str,
) -> RunRecord {
    RunRecord {
        schema_version: 1,
        team: team.to_string(),
        config_dir: config_dir_text(layout),
        lead_session_id: lead_session_id.to_string(),
        tmux_session: tmux_session.to_string(),
        tmux_socket: tmux_socket.to_string(),
        tmux_server_id: tmux_server_id.to_string(),
        tmux_session_id: None,
        sandbox: None,
    }
}

/// The records, in `<data dir>/leads` (and the [`RunRecord`]s, in `<data dir>/runs`).
#[derive(Debug, Clone)]
pub struct Leads {
    data_dir: PathBuf,
}

impl Leads {
    /// The records kept in `data_dir` (teamctl's private data dir).
    pub fn in_dir(data_dir: &Path) -> Leads {
        Leads {
            data_dir: data_dir.to_path_buf(),
        }
    }

    /// The data dir.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Where `create` puts the teammates' git worktrees of `team` under `layout`:
    /// `<data dir>/worktrees/<team>.<16 hex>/` (one folder per teammate inside), outside the
    /// user's checkout so that nothing in it, nor its `git status`, changes.
    pub fn worktrees_dir(&self, layout: &Layout, team: &TeamName) -> PathBuf {
        self.data_dir
            .join("worktrees")
            .join(format!("{team}.{}", dir_key(layout)))
    }

    /// Where the record of `team` under `layout` lives.
    pub fn path(&self, layout: &Layout, team: &TeamName) -> Loc {
        self.path_in(LEADS, layout, team)
    }

    /// Where the [`RunRecord`] of `team` under `layout` lives.
    pub fn run_path(&self, layout: &Layout, team: &TeamName) -> Loc {
        self.path_in(RUNS, layout, team)
    }

    fn path_in(&self, folder: &str, layout: &Layout, team: &TeamName) -> Loc {
        Loc::root(&self.data_dir)
            .join(folder)
            .join(format!("{team}.{}.json", dir_key(layout)))
    }

    /// Makes sure records can be written (the data dir and its `leads` folder, private, and
    /// reached without a symlink below the data dir), before anything else is: `create` calls
    /// it before it touches the config dir.
    ///
    /// # Errors
    /// I/O errors, naming the folder.
    pub fn prepare(&self) -> Result<()> {
        let leads = self.data_dir.join(LEADS);
        let context = || format!("teamctl cannot keep its records in {}", leads.display());
        let data = private_dir(&self.data_dir).with_context(context)?;
        data.sub_create(LEADS, 0o700).with_context(context)?;
        Ok(())
    }

    /// Makes the folder `path` below the data dir (0700 each, those missing), never through a
    /// link: every component below the data dir is opened without following a symlink, so a
    /// link planted at `worktrees` (or below) is refused, not followed.
    ///
    /// # Errors
    /// `path` not below the data dir; a symlink or anything but a folder on the way; I/O.
    pub fn make_below(&self, path: &Path) -> Result<()> {
        let rel = path.strip_prefix(&self.data_dir).map_err(|_| {
            anyhow::anyhow!(
                "{} is not below teamctl's data dir {}",
                path.display(),
                self.data_dir.display()
            )
        })?;
        let context = || format!("could not create {}", path.display());
        let mut dir = private_dir(&self.data_dir).with_context(context)?;
        for c in rel.components() {
            let std::path::Component::Normal(name) = c else {
                anyhow::bail!("{} is not a plain path below the data dir", path.display());
            };
            dir = dir.sub_create(name, 0o700).with_context(context)?;
        }
        Ok(())
    }

    /// Whether the folder `path` below the data dir is reached from it without a link: every
    /// component below the data dir, `path` itself included, a real folder (opened without
    /// following a symlink). `false` for a path not below the data dir.
    pub fn reaches_without_links(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.data_dir) else {
            return false;
        };
        let Ok(mut dir) = crate::store::dir::Loc::root(&self.data_dir).open_dir() else {
            return false;
        };
        for c in rel.components() {
            let std::path::Component::Normal(name) = c else {
                return false;
            };
            match dir.sub(name) {
                Ok(d) => dir = d,
                Err(_) => return false,
            }
        }
        true
    }

    /// Writes (or replaces) the record of `team` under `layout`: folder 0700, file 0600.
    ///
    /// # Errors
    /// I/O errors, naming the file.
    pub fn record(&self, layout: &Layout, team: &TeamName, rec: &LeadRecord) -> Result<()> {
        let what = format!("that teamctl leads team '{team}'");
        self.write_in(LEADS, layout, team, rec, &what)
    }

    /// Writes (or replaces) the [`RunRecord`] of `team` under `layout`, as [`Leads::record`].
    ///
    /// # Errors
    /// I/O errors, naming the file.
    pub fn record_run(&self, layout: &Layout, team: &TeamName, rec: &RunRecord) -> Result<()> {
        let what = format!("the tmux server of team '{team}'");
        self.write_in(RUNS, layout, team, rec, &what)
    }

    fn write_in(
        &self,
        folder: &str,
        layout: &Layout,
        team: &TeamName,
        rec: &impl Serialize,
        what: &str,
    ) -> Result<()> {
        let path = self.path_in(folder, layout, team);
        let context = || format!("could not record {what} in {}", path.display());
        let data = private_dir(&self.data_dir).with_context(context)?;
        data.sub_create(folder, 0o700).with_context(context)?;
        let mut bytes = serde_json::to_vec_pretty(rec)?;
        bytes.push(b'\n');
        store::atomic_write_mode(&path, &bytes, 0o600).with_context(context)
    }

    /// The record of `team` under `layout`, whatever `config.json` says; `None` when there is
    /// none.
    ///
    /// # Errors
    /// A record that cannot be read or parsed (a symlink, a FIFO, …).
    pub fn find(&self, layout: &Layout, team: &TeamName) -> Result<Option<LeadRecord>> {
        let rec: Option<LeadRecord> = self.read_in(LEADS, layout, team, "lead record")?;
        Ok(rec.filter(|r| r.team == team.as_str() && r.config_dir == config_dir_text(layout)))
    }

    /// The [`RunRecord`] of `team` under `layout`, whatever `config.json` says; `None` when
    /// there is none.
    ///
    /// # Errors
    /// As [`Leads::find`].
    pub fn find_run(&self, layout: &Layout, team: &TeamName) -> Result<Option<RunRecord>> {
        let rec: Option<RunRecord> = self.read_in(RUNS, layout, team, "run record")?;
        Ok(rec.filter(|r| r.team == team.as_str() && r.config_dir == config_dir_text(layout)))
    }

    fn read_in<T: serde::de::DeserializeOwned>(
        &self,
        folder: &str,
        layout: &Layout,
        team: &TeamName,
        what: &str,
    ) -> Result<Option<T>> {
        let path = self.path_in(folder, layout, team);
        let Some(bytes) = path
            .read()
            .with_context(|| format!("could not read {}", path.display()))?
        else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a teamctl {what}", path.display()))
    }

    /// Removes the record of `team` under `layout` (after `delete`). A missing one is fine.
    ///
    /// # Errors
    /// I/O errors other than it being missing.
    pub fn remove(&self, layout: &Layout, team: &TeamName) -> Result<()> {
        remove_file(&self.path(layout, team))
    }

    /// Removes the [`RunRecord`] of `team` under `layout` (its lead removed the team). A
    /// missing one is fine.
    ///
    /// # Errors
    /// I/O errors other than it being missing.
    pub fn remove_run(&self, layout: &Layout, team: &TeamName) -> Result<()> {
        remove_file(&self.run_path(layout, team))
    }
}

/// The folders of the records in the data dir.
const LEADS: &str = "leads";
const RUNS: &str = "runs";

/// Removes the file at `path`; a missing one is fine.
fn remove_file(path: &Loc) -> Result<()> {
    let dir = match path.parent_dir() {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(e).with_context(|| format!("could not remove {}", path.display()));
        }
    };
    match dir.unlink(path.name().unwrap_or_default()) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("could not remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// The config dir as records name it: canonical where it exists, else absolute.
fn config_dir_text(layout: &Layout) -> String {
    let root = layout.root();
    std::fs::canonicalize(root)
        .or_else(|_| std::path::absolute(root))
        .unwrap_or_else(|_| root.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

/// 16 hex digits of sha256 of [`config_dir_text`]: keeps records of same-named teams in two
/// config dirs apart.
fn dir_key(layout: &Layout) -> String {
    let digest = Sha256::digest(config_dir_text(layout).as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// A new record for `team` under `layout`, naming no tmux session yet (the caller sets
/// [`LeadRecord::tmux_session`] and the rest when it made one).
pub fn new_record(
    layout: &Layout,
    team: &TeamName,
    lead_session_id: &str,
    created_at: i64,
    cwd: Option<&Path>,
) -> LeadRecord {
    LeadRecord {
        schema_version: 1,
        team: team.to_string(),
        config_dir: config_dir_text(layout),
        lead_session_id: lead_session_id.to_string(),
        created_at,
        tmux_session: None,
        tmux_session_id: None,
        cwd: cwd.map(|c| c.to_string_lossy().into_owned()),
        launch: None,
        tmux_socket: None,
        tmux_server_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn records_are_private_and_keyed_by_config_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        let leads = Leads::in_dir(&tmp.path().join("data"));
        let team = TeamName::parse("demo").unwrap();
        let (la, lb) = (Layout::new(&a), Layout::new(&b));
        let mut rec = new_record(&la, &team, "s-1", 5, None);
        rec.tmux_session = Some("teamctl-demo".into());
        leads.record(&la, &team, &rec).unwrap();
        assert_eq!(leads.find(&la, &team).unwrap(), Some(rec));
        assert_eq!(leads.find(&lb, &team).unwrap(), None);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.path().join("data")), 0o700);
        assert_eq!(mode(&tmp.path().join("data/leads")), 0o700);
        assert_eq!(mode(&leads.path(&la, &team)), 0o600);
        leads.remove(&la, &team).unwrap();
        assert_eq!(leads.find(&la, &team).unwrap(), None);
        leads.remove(&la, &team).unwrap();
    }

    #[test]
    fn run_records_are_kept_apart_from_lead_records() {
        let tmp = tempfile::tempdir().unwrap();
        let leads = Leads::in_dir(&tmp.path().join("data"));
        let team = TeamName::parse("session-0a1b2c3d").unwrap();
        let layout = Layout::new(tmp.path());
        let rec = run_record(&layout, &team, "s-1", "teamctl-run-x", "/tmp/s", "5/7");
        leads.record_run(&layout, &team, &rec).unwrap();
        assert_eq!(leads.find_run(&layout, &team).unwrap(), Some(rec));
        assert_eq!(leads.find(&layout, &team).unwrap(), None);
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&tmp.path().join("data/runs")), 0o700);
        assert_eq!(mode(&leads.run_path(&layout, &team)), 0o600);
        // A record that is not one is an error naming it, and is left as it was.
        fs::write(leads.run_path(&layout, &team), "{").unwrap();
        let err = leads.find_run(&layout, &team).unwrap_err().to_string();
        assert!(err.contains("is not a teamctl run record"), "{err}");
        assert_eq!(fs::read(leads.run_path(&layout, &team)).unwrap(), b"{");
        leads.remove_run(&layout, &team).unwrap();
        assert_eq!(leads.find_run(&layout, &team).unwrap(), None);
    }
}
