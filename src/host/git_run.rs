//! Where and how teamctl runs one `git` command ([`At`]), so that nothing a teammate
//! configured runs as the person (docs/security.md, "Git over the teammates' work"):
//!
//! - Every command gets settings on its command line, which no config file overrides ([`SET`]):
//!   no hook, no fsmonitor, no signing or signature check, no automatic gc, no submodule
//!   recursion, no rerere, no pager; and no transport (`GIT_ALLOW_PROTOCOL`, but for the two
//!   commands below; `GIT_NO_LAZY_FETCH`: a promisor remote a teammate named is never fetched
//!   from). Diffs
//!   also get `--no-ext-diff --no-textconv` ([`super::git`]).
//! - In a worktree ([`At::worktree`]), git is told the worktree's admin folder, the
//!   repository's common folder and the work tree itself (`GIT_DIR`, `GIT_COMMON_DIR`,
//!   `GIT_WORK_TREE`), once its `.git` file, and its admin folder's `gitdir` and `commondir`
//!   files, are found to say what `git worktree add` wrote: then a `.git` file, `commondir` or
//!   `core.worktree` a teammate changed later chooses nothing, and a worktree that is not as
//!   git made it is refused, naming why.
//! - In a sandboxed teammate's own clone ([`At::clone`]), git is told the clone's `.git` as
//!   both folders and the clone as the work tree, once the clone is found as teamctl made it
//!   (`host::sandbox::clone`): its `.git` a folder of its own, not a link or a file, whose
//!   `commondir` names itself, whose objects borrow the repository's, and whose config is a
//!   file. Nothing else is read from where a teammate could point it.
//! - Transport is allowed for two commands only, and only the `file` protocol: the clone
//!   teamctl makes of the repository ([`At::clone_into`]) and the fetch of a teammate's branch
//!   home from its clone ([`At::fetch_from_clone`]), which names the clone's `.git` to a strict
//!   `git-upload-pack` (no `.git` below it is looked for). git gives that `upload-pack` none of
//!   the settings above (a local transport drops `GIT_CONFIG_PARAMETERS`): it reads the clone's
//!   config, which is teamctl's and read-only in the sandbox, and upload-pack runs no program
//!   a repository's own config names (`uploadpack.packObjectsHook` is taken from the person's
//!   config only).
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

/// `GIT_ALLOW_PROTOCOL` for every command: no transport (`none` is no protocol's name).
const NO_PROTOCOL: &str = "none";

/// `GIT_ALLOW_PROTOCOL` for the clone teamctl makes and the fetch from it: a local path only.
const FILE: &str = "file";

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

    /// The sandboxed teammate's own clone at `path` of the repository at `repo`
    /// (`host::sandbox::clone`), checked to be as teamctl made it (see the module docs): git is
    /// given its `.git` as both the git folder and the common one, and the clone as the work
    /// tree. Its drivers are checked against `recorded` before each command.
    ///
    /// # Errors
    /// The clone's `.git` says otherwise, naming what and where; git failing.
    pub fn clone(repo: &Path, path: &Path, recorded: Option<&Drivers>) -> Result<At> {
        let common = common_dir(repo)?;
        let git = clone_git_dir(&common, path)?;
        Ok(At {
            dir: path.to_path_buf(),
            admin: Some((git.clone(), git)),
            vet: Some(recorded.cloned()),
        })
    }

    /// `git clone --shared --no-checkout` of the repository here into `into` (which must not
    /// exist): the one command besides [`At::fetch_from_clone`] that may use a transport, the
    /// `file` protocol (the repository's own `upload-pack`, in the person's repository).
    ///
    /// # Errors
    /// git cannot be run.
    pub fn clone_into(&self, into: &Path) -> Result<Output> {
        let args = [
            OsStr::new("clone"),
            OsStr::new("--shared"),
            OsStr::new("--no-checkout"),
            OsStr::new("--quiet"),
            OsStr::new("--"),
            self.dir.as_os_str(),
            into.as_os_str(),
        ];
        self.raw_with(&args, FILE)
    }

    /// `git fetch` here of `refspec` from the clone `from` (an [`At::clone`]), with the `file`
    /// protocol allowed for this command alone: no tags, no `FETCH_HEAD`, no submodule, and
    /// `git-upload-pack --strict` given the clone's `.git` itself. Runs no driver (refs and
    /// objects only), so none is checked.
    ///
    /// # Errors
    /// `from` is no clone; git cannot be run.
    pub fn fetch_from_clone(&self, from: &At, refspec: &str) -> Result<Output> {
        let Some((git, _)) = from.admin.as_ref().filter(|(g, c)| g == c) else {
            bail!("{} is no clone of teamctl's", from.dir.display());
        };
        if refspec.starts_with('-') {
            bail!("not a refspec: {refspec}");
        }
        let args = [
            OsStr::new("fetch"),
            OsStr::new("--quiet"),
            OsStr::new("--no-tags"),
            OsStr::new("--no-write-fetch-head"),
            OsStr::new("--no-recurse-submodules"),
            OsStr::new("--upload-pack=git-upload-pack --strict"),
            OsStr::new("--"),
            git.as_os_str(),
            OsStr::new(refspec),
        ];
        self.raw_with(&args, FILE)
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
        self.raw_with(args, NO_PROTOCOL)
    }

    /// `git args` here, with `protocols` the only transports allowed ([`NO_PROTOCOL`] but for
    /// [`At::clone_into`] and [`At::fetch_from_clone`]).
    fn raw_with(&self, args: &[&OsStr], protocols: &str) -> Result<Output> {
        let mut cmd = Command::new("git");
        cmd.arg("--no-pager").arg("-C").arg(&self.dir);
        for s in SET {
            cmd.arg("-c").arg(s);
        }
        cmd.args(args).stdin(Stdio::null());
        for k in REDIRECTS {
            cmd.env_remove(k);
        }
        // The list outranks the config; `none` is no protocol's name.
        cmd.env("GIT_ALLOW_PROTOCOL", protocols)
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

/// The `.git` folder of the clone at `tree`, checked to be as teamctl made it: a folder of its
/// own (not a link, not a `.git` file pointing elsewhere), its `commondir` naming itself (so
/// git reads its config and no other), its config a file, and its objects borrowing those of
/// the repository whose common folder is `common` (`objects/info/alternates`).
fn clone_git_dir(common: &Path, tree: &Path) -> Result<PathBuf> {
    let refuse = |why: anyhow::Error| {
        anyhow!(
            "{} is not a sandboxed teammate's clone of the repository {} as teamctl made it \
             ({why:#}); teamctl runs no git in it (a teammate may have changed it: its settings \
             would run as you). Look at it, and remove it (`rm -r {}`) once you kept what you need",
            tree.display(),
            common.display(),
            tree.display()
        )
    };
    let dot_git = tree.join(".git");
    let meta = fs::symlink_metadata(&dot_git).map_err(|e| refuse(anyhow!("its .git: {e}")))?;
    if !meta.file_type().is_dir() {
        return Err(refuse(anyhow!("its .git is not a folder")));
    }
    let real_tree = fs::canonicalize(tree).map_err(|e| refuse(e.into()))?;
    let git = fs::canonicalize(&dot_git).map_err(|e| refuse(e.into()))?;
    if git != real_tree.join(".git") {
        return Err(refuse(anyhow!("its .git resolves to {}", git.display())));
    }
    let own = pointer(&git.join("commondir"), "", &git).map_err(refuse)?;
    if own != git {
        return Err(refuse(anyhow!(
            "{} names {}, not the clone's own .git",
            git.join("commondir").display(),
            own.display()
        )));
    }
    let config = fs::symlink_metadata(git.join("config")).map_err(|e| refuse(e.into()))?;
    if !config.file_type().is_file() {
        return Err(refuse(anyhow!("its .git/config is not a file")));
    }
    let objects = fs::canonicalize(common.join("objects")).map_err(|e| refuse(e.into()))?;
    let alternates = git.join("objects/info/alternates");
    let mut text = String::new();
    fs::File::open(&alternates)
        .and_then(|f| f.take(POINTER_MAX).read_to_string(&mut text))
        .map_err(|e| refuse(anyhow!("{}: {e}", alternates.display())))?;
    let borrows = text
        .lines()
        .filter_map(|l| fs::canonicalize(git.join("objects").join(l.trim_end())).ok())
        .any(|p| p == objects);
    if !borrows {
        return Err(refuse(anyhow!(
            "{} does not name the repository's objects {}",
            alternates.display(),
            objects.display()
        )));
    }
    Ok(git)
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
