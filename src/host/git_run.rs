//! Where and how teamctl runs one `git` command ([`At`]), so that nothing a teammate
//! configured runs as the person (docs/security.md, "Git over the teammates' work"):
//!
//! - Every command gets settings on its command line, which no config file overrides ([`SET`]):
//!   no hook, no fsmonitor, no signing or signature check, no automatic gc, no submodule
//!   recursion, no rerere, no pager; and no transport at all (`GIT_ALLOW_PROTOCOL`,
//!   `GIT_NO_LAZY_FETCH`: a promisor remote a teammate named is never fetched from). Diffs
//!   also get `--no-ext-diff --no-textconv` ([`super::git`]).
//! - In a worktree ([`At::worktree`]), git is told the worktree's admin folder, the
//!   repository's common folder and the work tree itself (`GIT_DIR`, `GIT_COMMON_DIR`,
//!   `GIT_WORK_TREE`), once its `.git` file, and its admin folder's `gitdir` and `commondir`
//!   files, are found to say what `git worktree add` wrote: then a `.git` file, `commondir` or
//!   `core.worktree` a teammate changed later chooses nothing, and a worktree that is not as
//!   git made it is refused, naming why.
//! - A filter or merge driver (a program `.gitattributes` choose) runs only as the repository's
//!   own config had it when the team started ([`drivers`], recorded by `create` and `run`).
//!   Before each command that could run one, the config git would read there is listed, and a
//!   driver of the repository's own config (its `.git/config`, a worktree's `config.worktree`,
//!   and what they include) added or changed since is named in an error: the command does not
//!   run. The person's own config (system and global: git-lfs's filter is there) is theirs.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result, anyhow, bail};

/// The filter and merge drivers of a repository's own config (`.git/config` and the worktree
/// config, with what they include): key as `git config --list` names it
/// (`filter.<name>.clean`, `.smudge`, `.process`, `.required`; `merge.<name>.driver`) ->
/// value.
pub type Drivers = BTreeMap<String, String>;

/// Settings every git command gets on its command line: they outrank every config file.
pub const SET: [&str; 10] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "submodule.recurse=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "merge.verifySignatures=false",
    "log.showSignature=false",
    "rerere.enabled=false",
];

/// Variables of the caller's that would point git at another repository or index than the
/// folder named.
const REDIRECTS: [&str; 5] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
];

/// Where a git command runs, and whether a driver may be about to run there.
#[derive(Debug, Clone)]
pub struct At {
    dir: PathBuf,
    /// A worktree's admin folder and the repository's common folder, given to git.
    admin: Option<(PathBuf, PathBuf)>,
    /// `Some`: the drivers are checked before each command, against these (`None` inside:
    /// none was recorded, so none of the repository's own may run).
    vet: Option<Option<Drivers>>,
}

impl At {
    /// `git -C dir` with [`SET`]: for commands that run no driver (refs, history, the
    /// repository's folders).
    pub fn plain(dir: &Path) -> At {
        At {
            dir: dir.to_path_buf(),
            admin: None,
            vet: None,
        }
    }

    /// The repository at `top` (the person's checkout, where branches move and worktrees are
    /// added), its drivers checked against `recorded` before each command.
    pub fn repo(top: &Path, recorded: Option<&Drivers>) -> At {
        At {
            vet: Some(recorded.cloned()),
            ..At::plain(top)
        }
    }

    /// The worktree at `path` of the repository at `repo`, checked to be one `git worktree
    /// add` made (see the module docs), its drivers checked against `recorded` before each
    /// command.
    ///
    /// # Errors
    /// The worktree's `.git` file or admin folder says otherwise, naming what and where; git
    /// failing.
    pub fn worktree(repo: &Path, path: &Path, recorded: Option<&Drivers>) -> Result<At> {
        let common = common_dir(repo)?;
        let admin = admin_dir(&common, path)?;
        Ok(At {
            dir: path.to_path_buf(),
            admin: Some((admin, common)),
            vet: Some(recorded.cloned()),
        })
    }

    /// The folder git runs in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs `git args` here, once the drivers are checked.
    ///
    /// # Errors
    /// A driver added or changed since the start (named); git cannot be run.
    pub fn output(&self, args: &[&OsStr]) -> Result<Output> {
        if let Some(recorded) = &self.vet {
            self.check_drivers(recorded.as_ref())?;
        }
        self.raw(args)
    }

    /// Runs `git args` here without listing the drivers first: only for commands that run
    /// none (refs and history, `git var`, the list of untracked files: no file's content goes
    /// through git's conversion), where the check would be a second git process for nothing.
    ///
    /// # Errors
    /// git cannot be run.
    pub fn output_no_driver(&self, args: &[&OsStr]) -> Result<Output> {
        self.raw(args)
    }

    fn raw(&self, args: &[&OsStr]) -> Result<Output> {
        let mut cmd = Command::new("git");
        cmd.arg("--no-pager").arg("-C").arg(&self.dir);
        for s in SET {
            cmd.arg("-c").arg(s);
        }
        cmd.args(args).stdin(Stdio::null());
        for k in REDIRECTS {
            cmd.env_remove(k);
        }
        // No transport: `none` is no protocol's name, and the list outranks the config.
        cmd.env("GIT_ALLOW_PROTOCOL", "none")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_TERMINAL_PROMPT", "0");
        if let Some((admin, common)) = &self.admin {
            cmd.env("GIT_DIR", admin)
                .env("GIT_COMMON_DIR", common)
                .env("GIT_WORK_TREE", &self.dir);
        }
        cmd.output()
            .context("could not run git (is it installed and on PATH?)")
    }

    /// The repository's own drivers as git would read them here now.
    fn own_drivers(&self) -> Result<Vec<Setting>> {
        let args = ["config", "--list", "-z", "--show-scope", "--show-origin"].map(OsStr::new);
        let out = self.raw(&args)?;
        if !out.status.success() {
            bail!(
                "git config --list in {} failed: {}",
                self.dir.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(own(settings(&out.stdout)))
    }

    /// An error naming each driver of the repository's own config that `recorded` does not
    /// have as it is now.
    fn check_drivers(&self, recorded: Option<&Drivers>) -> Result<()> {
        let now = self.own_drivers()?;
        let changed: Vec<String> = now
            .iter()
            .filter(|s| recorded.and_then(|r| r.get(&s.key)) != Some(&s.value))
            .map(|s| {
                let v: String = s.value.chars().take(120).collect();
                format!("{} = \"{v}\" ({})", s.key, s.origin)
            })
            .collect();
        if changed.is_empty() {
            return Ok(());
        }
        let since = if recorded.is_some() {
            "that it did not have when the team started"
        } else {
            "and teamctl kept no record of the drivers it had when the team started (a team made \
             by an older teamctl)"
        };
        bail!(
            "the git config of {} names a filter or merge driver {since}: {}; teamctl runs no \
             program a teammate could have configured, so it runs no git there. Remove it if you \
             did not add it (`git config --unset KEY`); one you added yourself is taken from the \
             next team or run on, which records the config as it is then",
            self.dir.display(),
            changed.join(", ")
        )
    }
}

/// The drivers of the repository's own config at `top` now: what [`At::repo`] and
/// [`At::worktree`] later take as there at the start.
///
/// # Errors
/// git failing.
pub fn drivers(top: &Path) -> Result<Drivers> {
    Ok(At::plain(top)
        .own_drivers()?
        .into_iter()
        .map(|s| (s.key, s.value))
        .collect())
}

/// One entry of `git config --list --show-scope --show-origin`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Setting {
    scope: String,
    origin: String,
    key: String,
    value: String,
}

/// The entries of `git config --list -z --show-scope --show-origin`: `scope\0origin\0key\nvalue\0`
/// (`key\0` alone for a key without a value).
fn settings(raw: &[u8]) -> Vec<Setting> {
    let mut fields = raw.split(|b| *b == 0).map(String::from_utf8_lossy);
    let mut out = Vec::new();
    while let (Some(scope), Some(origin), Some(kv)) = (fields.next(), fields.next(), fields.next())
    {
        let (key, value) = kv.split_once('\n').unwrap_or((&kv, ""));
        out.push(Setting {
            scope: scope.into_owned(),
            origin: origin.into_owned(),
            key: key.to_string(),
            value: value.to_string(),
        });
    }
    out
}

/// The driver settings of the repository's own config (local and worktree scopes, which is
/// also what they include), each key's last value (the one git uses).
fn own(all: Vec<Setting>) -> Vec<Setting> {
    let mut last: BTreeMap<String, Setting> = BTreeMap::new();
    for s in all {
        if matches!(s.scope.as_str(), "local" | "worktree") && is_driver(&s.key) {
            last.insert(s.key.clone(), s);
        }
    }
    last.into_values().collect()
}

/// Whether `key` (as `git config --list` names it: section and variable in lower case) sets a
/// filter or merge driver.
fn is_driver(key: &str) -> bool {
    let Some((section, rest)) = key.split_once('.') else {
        return false;
    };
    let Some((name, var)) = rest.rsplit_once('.') else {
        return false;
    };
    !name.is_empty()
        && match section {
            "filter" => matches!(var, "clean" | "smudge" | "process" | "required"),
            "merge" => var == "driver",
            _ => false,
        }
}

/// The common folder of the repository at `top`, as a real path.
fn common_dir(top: &Path) -> Result<PathBuf> {
    let args = ["rev-parse", "--path-format=absolute", "--git-common-dir"].map(OsStr::new);
    let out = At::plain(top).raw(&args)?;
    if !out.status.success() {
        bail!(
            "{} is not in a git repository: {}",
            top.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
    fs::canonicalize(&text).with_context(|| format!("could not resolve {text}"))
}

/// The most of a `.git`, `gitdir` or `commondir` file read.
const POINTER_MAX: u64 = 4096;

/// The path a pointer file (`.git`, `gitdir`, `commondir`) names, resolved from `base` as git
/// resolves it, as a real path. `prefix` is what the file starts with (`gitdir: ` for `.git`).
fn pointer(file: &Path, prefix: &str, base: &Path) -> Result<PathBuf> {
    let meta =
        fs::symlink_metadata(file).with_context(|| format!("{} cannot be read", file.display()))?;
    if !meta.file_type().is_file() {
        bail!("{} is not a file", file.display());
    }
    let mut text = String::new();
    fs::File::open(file)
        .and_then(|f| f.take(POINTER_MAX).read_to_string(&mut text))
        .with_context(|| format!("{} cannot be read", file.display()))?;
    let Some(named) = text.strip_prefix(prefix) else {
        bail!("{} does not start with '{prefix}'", file.display());
    };
    let named = named.trim_end_matches(['\n', '\r']);
    fs::canonicalize(base.join(named))
        .with_context(|| format!("{} names {named}, which cannot be resolved", file.display()))
}

/// The admin folder of the worktree at `tree`, checked: its `.git` file names a folder
/// `<common>/worktrees/<name>` whose `gitdir` file names that `.git` file back (which is how
/// `git worktree list` lists the worktree) and whose `commondir` file names `common`.
fn admin_dir(common: &Path, tree: &Path) -> Result<PathBuf> {
    let refuse = |why: anyhow::Error| {
        anyhow!(
            "{} is not a worktree of the repository {} as git made it ({why:#}); teamctl runs no \
             git in it (a teammate may have pointed it elsewhere: its settings would run as you). \
             Look at it, and restore its .git file or remove it (`git worktree remove`, `git \
             worktree prune`)",
            tree.display(),
            common.display()
        )
    };
    let dot_git = tree.join(".git");
    let admin = pointer(&dot_git, "gitdir: ", tree).map_err(refuse)?;
    let folder = fs::canonicalize(common.join("worktrees")).map_err(|e| refuse(e.into()))?;
    if admin.parent() != Some(folder.as_path()) {
        return Err(refuse(anyhow!(
            "its .git file points at {}, not at a folder of {}",
            admin.display(),
            folder.display()
        )));
    }
    let back = pointer(&admin.join("gitdir"), "", &admin).map_err(refuse)?;
    let here = fs::canonicalize(&dot_git).map_err(|e| refuse(e.into()))?;
    if back != here {
        return Err(refuse(anyhow!(
            "{} names {}, another worktree",
            admin.join("gitdir").display(),
            back.display()
        )));
    }
    let shared = pointer(&admin.join("commondir"), "", &admin).map_err(refuse)?;
    if shared != common {
        return Err(refuse(anyhow!(
            "{} names {}, not the repository's folder",
            admin.join("commondir").display(),
            shared.display()
        )));
    }
    Ok(admin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_are_the_repositorys_own_last_values() {
        let raw = b"global\0file:/h/.gitconfig\0filter.lfs.clean\ngit-lfs clean -- %f\0\
                    local\0file:.git/config\0filter.evil.clean\nfirst\0\
                    local\0file:.git/inc\0filter.evil.clean\nlast\0\
                    local\0file:.git/config\0merge.ours.driver\ntrue\0\
                    local\0file:.git/config\0merge.ff\nfalse\0\
                    worktree\0file:.git/worktrees/a/config.worktree\0filter.a.b.process\nx\0\
                    local\0file:.git/config\0filter.x.required\0\
                    command\0command line:\0filter.c.clean\nc\0";
        let got: Vec<(String, String)> = own(settings(raw))
            .into_iter()
            .map(|s| (s.key, s.value))
            .collect();
        let want = [
            ("filter.a.b.process", "x"),
            ("filter.evil.clean", "last"),
            ("filter.x.required", ""),
            ("merge.ours.driver", "true"),
        ];
        assert_eq!(
            got,
            want.map(|(k, v)| (k.to_string(), v.to_string())).to_vec()
        );
        assert!(!is_driver("filter.clean") && !is_driver("merge..driver"));
    }
}
