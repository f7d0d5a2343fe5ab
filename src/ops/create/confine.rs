//! Each sandboxed teammate's rules (docs/sandbox.md): the engine found and checked before
//! anything is written ([`engine`], [`check`]), then, once the team's folders exist, what each
//! one may write, what stays read-only, what it cannot see ([`rules`]).
//!
//! Writable: its working folder (its own clone, or the team's working directory), its team's
//! folder, its task folder, its transcripts' project folder, `sandbox_write`. Read-only inside
//! that: a clone's `.git` config, hooks and `commondir` (its `.git` pinned in place), or the
//! repository's whole `.git` when it runs in the checkout. Hidden: the secrets in the home
//! directory and `sandbox_hide`. The rest of the machine is read-only, `/tmp` private, and no
//! Unix socket can be opened.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::spec::{Creating, Launch, MemberSpec};
use super::worktree::Trees;
use crate::error::usage;
use crate::host::git;
use crate::host::sandbox::{self, clone, seccomp};
use crate::sandbox::{
    ClientDir, Engine, Network, Rules, Wish, below_tmp, binary_dirs, hidden_paths, text,
};
use crate::team::transcript::locate::project_name;

/// The longest project folder name teamctl can give (Claude Code cuts longer ones and adds a
/// hash of its own).
const PROJECT_NAME_MAX: usize = 200;

/// The engine, found and checked, when a teammate is to be confined and started; a missing or
/// blocked engine is a usage error naming the cause and the fix.
///
/// # Errors
/// As [`sandbox::find`].
pub(super) fn engine(c: &Creating) -> Result<Option<Engine>> {
    let Creating { spec, launch, .. } = *c;
    let wishes: Vec<&Wish> = spec
        .members
        .iter()
        .filter_map(|m| m.sandbox.as_ref())
        .collect();
    if wishes.is_empty() {
        return Ok(None);
    }
    // A teammate started later by someone else, or by a restart from a record without rules,
    // would run unconfined: a sandbox is made by the create that starts it.
    let (Launch::Tmux, Some(env)) = (spec.launch, launch) else {
        return Err(usage(
            "a sandbox is made for the teammates create starts: drop --launch none, or the \
             sandbox",
        ));
    };
    let off = wishes.iter().any(|w| w.network == Network::Off);
    let path = env.claude.resolve.path_var.as_deref();
    sandbox::find(env.sandbox_bin.as_deref(), path, off).map(Some)
}

/// Checks what the sandboxed teammates ask before anything is written: every `sandbox_write`
/// there, `~` only with a home directory, a project folder name teamctl can give, no `env` key
/// the sandbox sets or removes itself (it would not reach the teammate).
///
/// # Errors
/// A usage error naming the teammate and the problem.
pub(super) fn check(c: &Creating, trees: &Trees) -> Result<()> {
    let home = home(c);
    let taken = crate::sandbox::EngineKind::native().map_or(&[][..], sandbox::env_taken);
    for (i, m) in c.spec.members.iter().enumerate() {
        let Some(w) = &m.sandbox else { continue };
        if let Some(k) = m.runtime.env.keys().find(|k| taken.contains(&k.as_str())) {
            return Err(usage(format!(
                "member '{}': env {k}: its sandbox sets or removes {k} itself (docs/sandbox.md), \
                 so the value would not reach it: drop it from env, or the sandbox",
                m.name
            )));
        }
        let write = resolved(&w.write, home, &m.name.to_string())?;
        sandbox::check_writable(&write, &format!("sandbox_write of {}", m.name))?;
        resolved(&w.hide, home, &m.name.to_string())?;
        let cwd = trees.cwd(c.spec, i);
        if project_name(&text(cwd)).len() > PROJECT_NAME_MAX {
            return Err(usage(format!(
                "{}'s working folder {} has a path too long for a sandbox (Claude Code names \
                 its transcripts' folder with a hash teamctl cannot give over {PROJECT_NAME_MAX} \
                 characters): use a shorter --cwd or data dir (TEAMCTL_DATA_DIR)",
                m.name,
                cwd.display()
            )));
        }
    }
    Ok(())
}

/// The rules of each teammate, in member order (`None`: not confined). Makes what they need
/// first: the seccomp program in teamctl's data dir, each one's transcripts' project folder.
///
/// # Errors
/// I/O making those.
pub(super) fn rules(
    c: &Creating,
    trees: &Trees,
    engine: &Engine,
    claude: &Path,
) -> Result<Vec<Option<Rules>>> {
    let dir = c.leads.data_dir().join("sandbox");
    c.leads.make_below(&dir)?;
    let filter = seccomp::install(&dir)?;
    let confining = Confining {
        c,
        trees,
        engine,
        filter: &filter,
        claude,
    };
    c.spec
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            m.sandbox
                .as_ref()
                .map(|w| one(&confining, i, (m, w)))
                .transpose()
        })
        .collect()
}

/// What every sandboxed teammate's rules are made from: the create, the teammates' working
/// folders, the engine found and checked, the seccomp program installed, and the `claude`
/// binary the teammates run.
struct Confining<'a> {
    c: &'a Creating<'a>,
    trees: &'a Trees,
    engine: &'a Engine,
    filter: &'a Path,
    claude: &'a Path,
}

/// The rules of member `i`, `m`, whose sandbox is `wish`.
fn one(confining: &Confining, i: usize, (m, wish): (&MemberSpec, &Wish)) -> Result<Rules> {
    let Confining {
        c,
        trees,
        engine,
        filter,
        claude,
    } = *confining;
    let Creating { layout, spec, .. } = *c;
    let home = home(c);
    let name = m.name.to_string();
    let cwd = canonical(trees.cwd(spec, i))?;
    let mut writable = vec![text(&cwd)];
    let mut read_only = Vec::new();
    match trees.get(i) {
        Some(p) if p.tree.clone.is_some() => {
            let (git_dir, fixed) = clone::protected(Path::new(&p.tree.path));
            writable.push(text(&git_dir));
            read_only.extend(fixed.iter().map(|p| text(p)));
        }
        _ => {
            // In the checkout itself: its `.git` stays as it is, whole.
            if let Ok(top) = git::toplevel(&cwd) {
                let dot_git = top.join(".git");
                if dot_git.starts_with(&cwd) {
                    read_only.push(text(&dot_git));
                }
            }
        }
    }
    for w in resolved(&wish.write, home, &name)? {
        writable.push(text(&canonical(&w)?));
    }
    let hide: Vec<PathBuf> = resolved(&wish.hide, home, &name)?
        .into_iter()
        .map(|p| p.canonicalize().unwrap_or(p))
        .collect();
    let root = std::path::absolute(layout.root())
        .with_context(|| format!("could not resolve {}", layout.root().display()))?;
    let project = layout
        .root_loc()
        .join("projects")
        .join(project_name(&text(&cwd)));
    project
        .create_dir_all()
        .with_context(|| format!("could not create {}", project.display()))?;
    let shared = [
        layout.team_dir(&spec.team).path().to_path_buf(),
        layout.tasks_dir(&spec.team).path().to_path_buf(),
        project.path().to_path_buf(),
    ];
    Ok(Rules {
        engine: engine.clone(),
        cwd: text(&cwd),
        writable,
        read_only,
        hidden: hidden_paths(home, &hide),
        visible: visible(home, &spec.cwd, claude),
        client: Some(ClientDir {
            root: text(&root),
            shared: shared.iter().map(|p| text(&absolute(p))).collect(),
            state: None,
        }),
        network: wish.network,
        no_unix_sockets: true,
        filter: Some(text(filter)),
        shared_pids: false,
    })
}

/// The home directory the teammates run with.
fn home<'a>(c: &Creating<'a>) -> Option<&'a Path> {
    c.launch.and_then(|l| l.claude.resolve.home.as_deref())
}

/// `paths` with `~` made the home directory.
fn resolved(paths: &[PathBuf], home: Option<&Path>, member: &str) -> Result<Vec<PathBuf>> {
    paths
        .iter()
        .map(|p| match p.strip_prefix("~") {
            Ok(rest) => home.map(|h| h.join(rest)).ok_or_else(|| {
                usage(format!(
                    "{member}'s sandbox names {}, and there is no home directory",
                    p.display()
                ))
            }),
            Err(_) => Ok(absolute(p)),
        })
        .collect()
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn canonical(p: &Path) -> Result<PathBuf> {
    p.canonicalize()
        .with_context(|| format!("could not resolve {}", p.display()))
}

/// Folders below `/tmp` the private `/tmp` would hide and a session needs to read: the home
/// directory (and teamctl's data dir in it), the repository of the team's working folder, and
/// the `claude` binary's.
fn visible(home: Option<&Path>, cwd: &Path, claude: &Path) -> Vec<String> {
    let top = git::toplevel(cwd).ok();
    below_tmp(
        home.map(Path::to_path_buf)
            .into_iter()
            .chain(top)
            .chain(binary_dirs(claude)),
    )
}
