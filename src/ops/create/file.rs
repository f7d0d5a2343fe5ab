//! A team file (TOML, docs/team-file.md): the team `create --file` stands up, its teammates and
//! each one's own settings, parsed with the `toml` crate into serde structs that refuse unknown
//! keys. Every problem is a usage error as `FILE:LINE:COL: message`, found before anything is
//! written. Paths in the file (`cwd`, `policy`, `brief_file`, `mcp_config`, `settings`) are
//! relative to the file's folder; the files it names (all but `cwd`) must be inside it, and
//! those teamctl reads (`policy`, `brief_file`) regular and at most 1 MiB
//! ([`crate::store::named`]). Each teammate's MCP servers, settings, effort and env are read
//! here too, at the top level for every teammate and in a `[[member]]` for one (a member's `env`
//! is merged over the top level's, its other keys replace the top level's); [`super::runtime`]
//! checks that they can be given.
//!
//! What the command line gives wins over the file: [`Overrides`].

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::spec::{Branch, MemberSpec};
use crate::error::usage;
use crate::host::claude::Permission;
use crate::sandbox::{Network, Wish};
use crate::store::named::{NAMED_FILE_LIMIT, inside, read_named_text};
use crate::store::paths::{MemberName, TeamName};
use crate::team::runtime::{self, Runtime};

/// `mcp_config = "file"` or `["file", …]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig(pub Vec<String>);

impl<'de> Deserialize<'de> for McpConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = McpConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a file or a list of files")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<McpConfig, E> {
                Ok(McpConfig(vec![v.to_string()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<McpConfig, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(McpConfig(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// A team file as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamFile {
    /// The team's name; `{n}` (the lowest free number from 1) and `{date}` (`YYYYMMDD`, UTC)
    /// make one per run.
    pub name: Option<Spanned<String>>,
    /// `description` in `config.json`.
    pub description: Option<String>,
    /// The teammates' working directory, relative to the file [default: the current one].
    pub cwd: Option<String>,
    /// The model of every teammate that names none.
    pub model: Option<String>,
    /// The agent type of every teammate that names none.
    pub agent_type: Option<String>,
    /// The permission mode of every teammate that names none.
    pub permission_mode: Option<String>,
    /// `--mcp-config`: a file of MCP servers or a list of them, inside the file's folder
    /// (a member's replaces this).
    pub mcp_config: Option<Spanned<McpConfig>>,
    /// `--strict-mcp-config`: no MCP servers but those of `mcp_config`.
    pub strict_mcp_config: Option<bool>,
    /// `--settings`: a settings file inside the file's folder.
    pub settings: Option<Spanned<String>>,
    /// `--effort`: `low`, `medium`, `high`, … (the client's `--help` lists them).
    pub effort: Option<Spanned<String>>,
    /// Environment variables, a literal or `${NAME}` each (a member's are merged over these).
    pub env: Option<BTreeMap<String, Spanned<String>>>,
    /// A policy file (docs/policy.md), relative to the file: what the teammates asked while
    /// starting is answered by it once they are ready, as `--policy`.
    pub policy: Option<String>,
    /// A worktree for every teammate that does not say otherwise.
    pub worktree: Option<bool>,
    /// A sandbox for every teammate that does not say otherwise (docs/sandbox.md).
    pub sandbox: Option<bool>,
    /// Paths every sandbox hides too (relative to the file, absolute, or `~/…`).
    pub sandbox_hide: Option<Vec<String>>,
    /// Paths every sandbox may write too (relative to the file, absolute, or `~/…`).
    pub sandbox_write: Option<Vec<String>>,
    /// The sandboxes' network: `on` (the default), `off` (`api` is not built).
    pub sandbox_network: Option<Spanned<String>>,
    /// The teammates, in order.
    #[serde(default, rename = "member")]
    pub members: Vec<FileMember>,
}

/// One `[[member]]` of a team file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileMember {
    /// Its name (the rules of `--member`).
    pub name: Spanned<String>,
    /// Its brief, the first message it gets.
    pub brief: Option<String>,
    /// A file holding its brief, relative to the team file.
    pub brief_file: Option<Spanned<String>>,
    /// `--model` (an alias such as `sonnet`, or a model id).
    pub model: Option<String>,
    /// `--agent-type`: Claude Code loads `.claude/agents/<type>.md` (its prompt, and its model
    /// unless one is given).
    pub agent_type: Option<String>,
    /// `--permission-mode`.
    pub permission_mode: Option<String>,
    /// `--mcp-config`: a file of MCP servers or a list of them, inside the file's folder.
    pub mcp_config: Option<Spanned<McpConfig>>,
    /// `--strict-mcp-config`: no MCP servers but those of `mcp_config`.
    pub strict_mcp_config: Option<bool>,
    /// `--settings`: a settings file inside the file's folder.
    pub settings: Option<Spanned<String>>,
    /// `--effort`: `low`, `medium`, `high`, … (the client's `--help` lists them).
    pub effort: Option<Spanned<String>>,
    /// Environment variables, a literal or `${NAME}` each (over the top level's).
    pub env: Option<BTreeMap<String, Spanned<String>>>,
    /// Its own git worktree: `true` (branch `teamctl/<team>/<member>`), `false`, or a branch
    /// name.
    pub worktree: Option<WorktreeValue>,
    /// Its own sandbox (docs/sandbox.md): `true` or `false`.
    pub sandbox: Option<bool>,
    /// More paths its sandbox hides.
    pub sandbox_hide: Option<Vec<String>>,
    /// More paths its sandbox may write.
    pub sandbox_write: Option<Vec<String>>,
    /// Its sandbox's network: `on`, `off`.
    pub sandbox_network: Option<Spanned<String>>,
}

/// `worktree = true | false | "branch"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum WorktreeValue {
    /// `true` or `false`.
    On(bool),
    /// A branch name.
    Branch(String),
}

impl<'de> Deserialize<'de> for WorktreeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = WorktreeValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("true, false or a branch name")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<WorktreeValue, E> {
                Ok(WorktreeValue::On(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<WorktreeValue, E> {
                if v.is_empty() {
                    return Err(E::custom("a branch name cannot be empty"));
                }
                Ok(WorktreeValue::Branch(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A team file read and checked.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The file, as named.
    pub path: PathBuf,
    /// What it says.
    pub file: TeamFile,
    /// Its teammates with their briefs and settings (the file's team-wide ones applied).
    pub members: Vec<MemberSpec>,
    text: String,
}

/// What the command line says over a team file (`None`, `false`: the file decides).
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--model`, for every teammate.
    pub model: Option<String>,
    /// `--agent-type`, for every teammate.
    pub agent_type: Option<String>,
    /// `--permission-mode` or `--dangerously-skip-permissions`, for every teammate.
    pub permission: Option<Permission>,
    /// `--worktree`: a worktree for every teammate (a branch a teammate names is kept).
    pub worktree: bool,
    /// `--sandbox`: a sandbox for every teammate (one a teammate describes is kept).
    pub sandbox: bool,
}

impl Overrides {
    /// Applies these to `m`.
    pub fn apply(&self, m: &mut MemberSpec) {
        if let Some(x) = &self.model {
            m.model = Some(x.clone());
        }
        if let Some(x) = &self.agent_type {
            m.agent_type = Some(x.clone());
        }
        if let Some(p) = &self.permission {
            m.permission = p.clone();
        }
        if self.worktree && m.worktree.is_none() {
            m.worktree = Some(Branch::Default);
        }
        if self.sandbox && m.sandbox.is_none() {
            m.sandbox = Some(Wish::default());
        }
    }
}

/// Reads and checks the team file at `path`.
///
/// # Errors
/// The file cannot be read; a usage error `FILE:LINE:COL: message` for what it says wrong
/// (TOML syntax, an unknown key, a wrong type, a bad member name, a brief missing or given
/// twice); a brief file that cannot be read.
pub fn load(path: &Path) -> Result<Loaded> {
    let text = read_named_text(path, NAMED_FILE_LIMIT)?;
    let file: TeamFile = toml::from_str(&text).map_err(|e| {
        let at = e.span().map(|s| position(&text, s.start));
        usage(located(path, at, e.message().trim_end()))
    })?;
    let mut loaded = Loaded {
        path: path.to_path_buf(),
        file,
        members: Vec::new(),
        text,
    };
    loaded.members = loaded.read_members()?;
    Ok(loaded)
}

impl Loaded {
    /// The folder its relative paths start from.
    pub fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// `cwd`, resolved against the file's folder.
    pub fn cwd(&self) -> Option<PathBuf> {
        self.file.cwd.as_ref().map(|c| self.dir().join(c))
    }

    /// `policy`, resolved inside the file's folder ([`inside`]).
    ///
    /// # Errors
    /// A usage error: an absolute path, one leading outside the folder, one that is not there.
    pub fn policy(&self) -> Result<Option<PathBuf>> {
        self.file
            .policy
            .as_ref()
            .map(|c| {
                inside(&self.dir(), c)
                    .map_err(|e| usage(format!("{}: policy: {e:#}", self.path.display())))
            })
            .transpose()
    }

    /// A usage error at `span` of the file.
    pub(super) fn error_at(&self, span: Range<usize>, msg: &str) -> anyhow::Error {
        usage(located(
            &self.path,
            Some(position(&self.text, span.start)),
            msg,
        ))
    }

    /// The name, if the file gives one, checked (placeholders aside).
    ///
    /// # Errors
    /// A usage error at the name.
    pub fn name(
        &self,
        now: DateTime<Utc>,
        free: &dyn Fn(&TeamName) -> bool,
    ) -> Result<Option<TeamName>> {
        let Some(n) = &self.file.name else {
            return Ok(None);
        };
        expand_name(n.get_ref(), now, free)
            .map(Some)
            .map_err(|e| self.error_at(n.span(), &format!("{e:#}")))
    }

    fn read_members(&self) -> Result<Vec<MemberSpec>> {
        let f = &self.file;
        let mut out = Vec::new();
        for m in &f.members {
            let name = MemberName::parse(m.name.get_ref())
                .map_err(|e| self.error_at(m.name.span(), &format!("{e:#}")))?;
            let brief = match (&m.brief, &m.brief_file) {
                (Some(b), None) => b.clone(),
                (None, Some(file)) => {
                    let p = inside(&self.dir(), file.get_ref()).map_err(|e| {
                        self.error_at(file.span(), &format!("brief_file of {name}: {e:#}"))
                    })?;
                    read_named_text(&p, NAMED_FILE_LIMIT)
                        .with_context(|| format!("brief file of {name}"))?
                        .trim_end_matches(['\n', '\r'])
                        .to_string()
                }
                (Some(_), Some(file)) => {
                    return Err(self.error_at(
                        file.span(),
                        &format!("member '{name}' has both brief and brief_file: keep one"),
                    ));
                }
                (None, None) => {
                    return Err(self.error_at(
                        m.name.span(),
                        &format!("member '{name}' has no brief: give brief or brief_file"),
                    ));
                }
            };
            let worktree = match m.worktree.clone().or(f.worktree.map(WorktreeValue::On)) {
                Some(WorktreeValue::On(true)) => Some(Branch::Default),
                Some(WorktreeValue::Branch(b)) => Some(Branch::Named(b)),
                Some(WorktreeValue::On(false)) | None => None,
            };
            let mode = m.permission_mode.as_ref().or(f.permission_mode.as_ref());
            out.push(MemberSpec {
                model: m.model.clone().or_else(|| f.model.clone()),
                agent_type: m.agent_type.clone().or_else(|| f.agent_type.clone()),
                permission: Permission::from_flags(mode.map(String::as_str), false),
                runtime: self.runtime_of(m)?,
                worktree,
                sandbox: self.sandbox_of(m, &name)?,
                ..MemberSpec::new(name, brief)
            });
        }
        Ok(out)
    }
}

impl Loaded {
    /// `m`'s runtime: its own keys over the file's top-level ones, its files resolved inside the
    /// team file's folder, its `env` checked (not read: see [`super::runtime::check_env`]).
    ///
    /// # Errors
    /// A usage error at the key: a file that is absolute, outside the folder or missing; an effort
    /// that is no word; a bad `env` entry ([`runtime::check_env`]).
    fn runtime_of(&self, m: &FileMember) -> Result<Runtime> {
        let (l, top) = (self, &self.file);
        let name = m.name.get_ref();
        let file = |key: &str, rel: &str, at: Range<usize>| {
            inside(&l.dir(), rel)
                .map(|p| p.to_string_lossy().into_owned())
                .map_err(|e| l.error_at(at, &format!("{key} of {name}: {e:#}")))
        };
        let mut mcp_config = Vec::new();
        if let Some(list) = m.mcp_config.as_ref().or(top.mcp_config.as_ref()) {
            for f in &list.get_ref().0 {
                mcp_config.push(file("mcp_config", f, list.span())?);
            }
        }
        let settings = m.settings.as_ref().or(top.settings.as_ref());
        let effort = m.effort.as_ref().or(top.effort.as_ref());
        if let Some(e) = effort {
            let word = e.get_ref();
            if !(1..=32).contains(&word.len()) || !word.bytes().all(|b| b.is_ascii_lowercase()) {
                return Err(l.error_at(
                    e.span(),
                    &format!(
                        "effort of {name}: {word:?} is no effort level (low, medium, high, …)"
                    ),
                ));
            }
        }
        let mut env = BTreeMap::new();
        for (k, v) in top.env.iter().chain(m.env.iter()).flatten() {
            runtime::check_env(k, v.get_ref())
                .map_err(|e| l.error_at(v.span(), &format!("{name}: {e}")))?;
            env.insert(k.clone(), v.get_ref().clone());
        }
        Ok(Runtime {
            mcp_config,
            strict_mcp_config: m
                .strict_mcp_config
                .or(top.strict_mcp_config)
                .unwrap_or(false),
            settings: settings
                .map(|s| file("settings", s.get_ref(), s.span()))
                .transpose()?,
            effort: effort.map(|e| e.get_ref().clone()),
            env,
        })
    }

    /// `m`'s sandbox: its own `sandbox` key, else the file's; the file's paths, then its own.
    fn sandbox_of(&self, m: &FileMember, name: &MemberName) -> Result<Option<Wish>> {
        let f = &self.file;
        if !m.sandbox.or(f.sandbox).unwrap_or(false) {
            if m.sandbox_hide.is_some() || m.sandbox_write.is_some() || m.sandbox_network.is_some()
            {
                return Err(self.error_at(
                    m.name.span(),
                    &format!(
                        "member '{name}' has sandbox_* keys but no sandbox: add sandbox = true"
                    ),
                ));
            }
            return Ok(None);
        }
        let network = match m.sandbox_network.as_ref().or(f.sandbox_network.as_ref()) {
            None => Network::On,
            Some(n) => match Network::parse(n.get_ref()) {
                Ok(Network::Api) => {
                    return Err(self.error_at(
                        n.span(),
                        "sandbox_network = \"api\" (a network of its own with only a proxy to \
                         the API) is not built yet: use \"on\" or \"off\" (docs/sandbox.md \
                         says what it needs)",
                    ));
                }
                Ok(net) => net,
                Err(e) => return Err(self.error_at(n.span(), &format!("{e:#}"))),
            },
        };
        let paths = |all: &Option<Vec<String>>, own: &Option<Vec<String>>| -> Vec<PathBuf> {
            all.iter()
                .chain(own.iter())
                .flatten()
                .map(|p| match p.strip_prefix("~") {
                    Some(rest) if rest.is_empty() || rest.starts_with('/') => PathBuf::from(p),
                    _ => self.dir().join(p),
                })
                .collect()
        };
        Ok(Some(Wish {
            hide: paths(&f.sandbox_hide, &m.sandbox_hide),
            write: paths(&f.sandbox_write, &m.sandbox_write),
            network,
        }))
    }
}

/// `FILE:LINE:COL: message`, or `FILE: message` without a place.
fn located(path: &Path, at: Option<(usize, usize)>, msg: &str) -> String {
    match at {
        Some((line, col)) => format!("{}:{line}:{col}: {msg}", path.display()),
        None => format!("{}: {msg}", path.display()),
    }
}

/// The 1-based line and column (in characters) of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(offset.min(text.len()))];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// A team name with its placeholders filled: `{date}` is `now` as `YYYYMMDD` (UTC), `{n}` the
/// lowest number from 1 that makes a name `free` says is free.
///
/// # Errors
/// An unknown placeholder, or a name that breaks the naming rules.
pub fn expand_name(
    pattern: &str,
    now: DateTime<Utc>,
    free: &dyn Fn(&TeamName) -> bool,
) -> Result<TeamName> {
    let dated = pattern.replace("{date}", &now.format("%Y%m%d").to_string());
    let check = dated.replace("{n}", "1");
    if let Some(at) = check.find(['{', '}']) {
        return Err(usage(format!(
            "team name '{pattern}' has an unknown placeholder at '{}': use {{n}} or {{date}}",
            &check[at..]
        )));
    }
    TeamName::parse(&check)?;
    if !dated.contains("{n}") {
        return TeamName::parse(&dated);
    }
    for n in 1..=100_000u32 {
        let t = TeamName::parse(&dated.replace("{n}", &n.to_string()))?;
        if free(&t) {
            return Ok(t);
        }
    }
    Err(usage(format!("no free team name for '{pattern}'")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        fs::write(&p, text).unwrap();
        p
    }

    fn err(text: &str) -> String {
        let tmp = tempfile::tempdir().unwrap();
        let p = write(tmp.path(), "t.toml", text);
        let e = load(&p).unwrap_err();
        assert!(matches!(
            e.downcast_ref::<crate::Error>(),
            Some(crate::Error::Usage(_))
        ));
        e.to_string().replace(&p.display().to_string(), "F")
    }

    #[test]
    fn a_file_with_two_members() {
        let tmp = tempfile::tempdir().unwrap();
        write(tmp.path(), "b.md", "Check the tests\n");
        write(tmp.path(), "p.json", "{}");
        let p = write(
            tmp.path(),
            "t.toml",
            r#"name = "review-{n}"
model = "haiku"
permission_mode = "acceptEdits"
policy = "p.json"
[[member]]
name = "alice"
brief = "Review the auth changes"
model = "sonnet"
agent_type = "security-reviewer"
worktree = true
[[member]]
name = "bob"
brief_file = "b.md"
permission_mode = "plan"
worktree = "bob-work"
"#,
        );
        let l = load(&p).unwrap();
        let [a, b] = &l.members[..] else { panic!() };
        assert_eq!(
            (a.name.as_str(), a.model.as_deref(), a.agent_type.as_deref()),
            ("alice", Some("sonnet"), Some("security-reviewer"))
        );
        assert_eq!(a.permission, Permission::Mode("acceptEdits".into()));
        assert_eq!(a.worktree, Some(Branch::Default));
        assert_eq!(
            (b.brief.as_str(), b.model.as_deref()),
            ("Check the tests", Some("haiku"))
        );
        assert_eq!(b.permission, Permission::Mode("plan".into()));
        assert_eq!(b.worktree, Some(Branch::Named("bob-work".into())));
        assert_eq!(
            l.policy().unwrap(),
            Some(tmp.path().canonicalize().unwrap().join("p.json"))
        );
        let now = "2026-11-29T10:00:00Z".parse().unwrap();
        let taken = |t: &TeamName| t.as_str() != "review-1";
        assert_eq!(l.name(now, &taken).unwrap().unwrap().as_str(), "review-2");
    }

    #[test]
    fn errors_name_the_line_and_column() {
        assert_eq!(
            err("name = \"x\"\n[[member]]\nname = \"a\"\nbrief = \"b\"\nmodle = \"m\"\n"),
            "F:5:1: unknown field `modle`, expected one of `name`, `brief`, `brief_file`, \
             `model`, `agent_type`, `permission_mode`, `mcp_config`, `strict_mcp_config`, \
             `settings`, `effort`, `env`, `worktree`, `sandbox`, `sandbox_hide`, `sandbox_write`, \
             `sandbox_network`"
        );
        assert_eq!(
            err("[[member]]\nname = \"a\"\nbrief = \"b\"\nworktree = 3\n"),
            "F:4:12: invalid type: integer `3`, expected true, false or a branch name"
        );
        assert_eq!(
            err("[[member]]\nname = \"a b\"\nbrief = \"b\"\n"),
            "F:2:8: invalid member name 'a b': use 1 to 64 letters, digits, '_' or '-'"
        );
        assert_eq!(
            err("[[member]]\nname = \"a\"\n"),
            "F:2:8: member 'a' has no brief: give brief or brief_file"
        );
        assert!(err("name = [").starts_with("F:1:"));
        assert!(
            err("cwd = 1\n").starts_with("F:1:7: invalid type: integer `1`, expected a string")
        );
    }

    #[test]
    fn sandbox_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let p = write(
            tmp.path(),
            "t.toml",
            r#"sandbox = true
sandbox_hide = ["~/.config/op"]
sandbox_network = "off"
[[member]]
name = "alice"
brief = "b"
sandbox_write = ["cache", "/srv/out"]
[[member]]
name = "bob"
brief = "b"
sandbox = false
"#,
        );
        let l = load(&p).unwrap();
        let a = l.members[0].sandbox.as_ref().unwrap();
        assert_eq!(a.hide, [PathBuf::from("~/.config/op")]);
        assert_eq!(
            a.write,
            [tmp.path().join("cache"), PathBuf::from("/srv/out")]
        );
        assert_eq!(a.network, Network::Off);
        assert!(l.members[1].sandbox.is_none());
        assert_eq!(
            err("[[member]]\nname = \"a\"\nbrief = \"b\"\nsandbox_hide = [\"x\"]\n"),
            "F:2:8: member 'a' has sandbox_* keys but no sandbox: add sandbox = true"
        );
        assert!(
            err("sandbox = true\nsandbox_network = \"api\"\n[[member]]\nname = \"a\"\nbrief = \"b\"\n")
                .starts_with("F:2:19: sandbox_network = \"api\" (a network of its own")
        );
        assert!(
            err("sandbox = true\nsandbox_network = \"lan\"\n[[member]]\nname = \"a\"\nbrief = \"b\"\n")
                .starts_with("F:2:19: sandbox_network 'lan' is not one of on, off, api")
        );
    }

    #[test]
    fn runtime_keys_top_level_and_per_member() {
        let tmp = tempfile::tempdir().unwrap();
        for f in ["a.json", "b.json", "c.json", "s.json"] {
            write(tmp.path(), f, "{}");
        }
        let p = write(
            tmp.path(),
            "t.toml",
            r#"mcp_config = ["a.json", "b.json"]
effort = "high"
strict_mcp_config = true
env = { LOG = "debug", TOKEN = "${TEAM_TOKEN}" }
[[member]]
name = "alice"
brief = "b"
mcp_config = "c.json"
settings = "s.json"
effort = "low"
env = { TOKEN = "${ALICE_TOKEN}", MORE = "x" }
[[member]]
name = "bob"
brief = "b"
strict_mcp_config = false
"#,
        );
        let l = load(&p).unwrap();
        let [a, b] = &l.members[..] else { panic!() };
        let dir = tmp.path().canonicalize().unwrap();
        let at = |f: &str| dir.join(f).to_string_lossy().into_owned();
        assert_eq!(a.runtime.mcp_config, [at("c.json")]);
        assert_eq!(a.runtime.settings, Some(at("s.json")));
        assert_eq!(a.runtime.effort.as_deref(), Some("low"));
        assert!(a.runtime.strict_mcp_config);
        let env = |m: &MemberSpec| {
            m.runtime
                .env
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(env(a), "LOG=debug MORE=x TOKEN=${ALICE_TOKEN}");
        assert_eq!(b.runtime.mcp_config, [at("a.json"), at("b.json")]);
        assert_eq!(b.runtime.effort.as_deref(), Some("high"));
        assert!(!b.runtime.strict_mcp_config && b.runtime.settings.is_none());
        assert_eq!(env(b), "LOG=debug TOKEN=${TEAM_TOKEN}");
    }

    #[test]
    fn runtime_mistakes_name_the_line() {
        let m = "[[member]]\nname = \"a\"\nbrief = \"b\"\n";
        assert!(
            err(&format!("{m}mcp_config = \"/etc/x.json\"\n"))
                .starts_with("F:4:14: mcp_config of a: \"/etc/x.json\" is an absolute path")
        );
        assert!(
            err(&format!("{m}settings = \"missing.json\"\n"))
                .starts_with("F:4:12: settings of a: could not read")
        );
        assert_eq!(
            err(&format!("{m}effort = \"Very High\"\n")),
            "F:4:10: effort of a: \"Very High\" is no effort level (low, medium, high, …)"
        );
        assert!(
            err(&format!("{m}mcp_config = 3\n"))
                .starts_with("F:4:14: invalid type: integer `3`, expected a file or a list")
        );
        assert_eq!(
            err(&format!(
                "{m}env = {{ GH = \"${{TEAMCTL_SLACK_TOKEN}}\" }}\n"
            )),
            "F:4:14: a: env GH: \"${TEAMCTL_SLACK_TOKEN}\": TEAMCTL_SLACK_TOKEN is one of \
             teamctl's own secrets (TEAMCTL_*_TOKEN, *_SECRET), never given to a teammate"
        );
        assert_eq!(
            err(&format!("env = {{ CLAUDE_CONFIG_DIR = \"/x\" }}\n{m}")),
            "F:1:29: a: env CLAUDE_CONFIG_DIR: teamctl sets CLAUDE_CONFIG_DIR for every \
             teammate itself"
        );
        assert!(err(&format!("{m}env = {{ A = 1 }}\n")).starts_with("F:4:13: invalid type"));
    }

    #[test]
    fn placeholders() {
        let now = "2026-11-29T10:00:00Z".parse().unwrap();
        let all = |_: &TeamName| true;
        assert_eq!(
            expand_name("nightly-{date}", now, &all).unwrap().as_str(),
            "nightly-20261129"
        );
        assert_eq!(expand_name("r-{n}", now, &all).unwrap().as_str(), "r-1");
        assert!(expand_name("r-{x}", now, &all).is_err());
        assert!(expand_name("R", now, &all).is_err());
    }
}
