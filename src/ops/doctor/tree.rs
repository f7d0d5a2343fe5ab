//! The config dir's tree: symlinks where team files live, the team folders, a folder's entries.

use std::fs;
use std::path::{Path, PathBuf};

use super::finding::{Check, fail, ok, warn};
use super::inputs::Inputs;
use crate::store::dir::{Kind, Loc};
use crate::store::paths::{Layout, TeamName};

/// The config dir: there, and a directory. The flag says whether the team checks can go on.
pub(super) fn config_dir(inputs: &Inputs) -> (Check, bool) {
    let root = inputs.layout.root();
    let Ok(meta) = fs::metadata(root) else {
        let c = fail(
            "config_dir",
            None,
            Some(root),
            format!(
                "config dir {} not found ({})",
                root.display(),
                inputs.layout_source
            ),
            "start Claude Code once, or point --claude-dir / CLAUDE_CONFIG_DIR at its config dir",
        );
        return (c, false);
    };
    if !meta.is_dir() {
        let c = fail(
            "config_dir",
            None,
            Some(root),
            format!("{} is not a directory", root.display()),
            "point --claude-dir / CLAUDE_CONFIG_DIR at Claude Code's config dir",
        );
        return (c, false);
    }
    let c = ok(
        "config_dir",
        None,
        Some(root),
        format!("config dir {} ({})", root.display(), inputs.layout_source),
    );
    (c, true)
}

/// Symlinks where team files live: the config dir itself, `teams/` and `tasks/` and
/// everything under them (never followed). Other parts of the config dir (`settings.json`,
/// `CLAUDE.md`, often linked to a dotfiles repository) are none of teamctl's business.
pub(super) fn symlinks(layout: &Layout) -> Vec<Check> {
    let root = layout.root();
    let mut found = Vec::new();
    for p in [
        root.to_path_buf(),
        layout.teams_dir().to_path_buf(),
        layout.tasks_root().to_path_buf(),
    ] {
        if fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            found.push(p.clone());
            continue;
        }
        if p != root {
            walk_symlinks(&p, &mut |p| found.push(p));
        }
    }
    if found.is_empty() {
        return vec![ok(
            "symlink",
            None,
            None,
            "no symlinks where team files live".into(),
        )];
    }
    found
        .into_iter()
        .map(|p| {
            let team = p
                .strip_prefix(root)
                .ok()
                .and_then(|rel| rel.iter().nth(1))
                .and_then(|t| t.to_str())
                .map(String::from);
            let to = fs::read_link(&p)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            // The config dir itself is followed (it is the user's choice); below it teamctl
            // follows no symlink, so a command that needs the file fails.
            let level = if p == root { warn } else { fail };
            level(
                "symlink",
                team.as_deref(),
                Some(&p),
                format!("{} is a symlink (to {to})", p.display()),
                "replace it with what it points to (or point --claude-dir / CLAUDE_CONFIG_DIR at \
                 the real path): Claude Code takes some locks on the path as written and others \
                 on its realpath, so through a symlink two writers can miss each other's lock; \
                 below the config dir teamctl refuses to read or write through one",
            )
        })
        .collect()
}

/// Calls `found` for every symlink under `dir`, without following any.
fn walk_symlinks(dir: &Path, found: &mut dyn FnMut(PathBuf)) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        match e.file_type() {
            Ok(t) if t.is_symlink() => found(e.path()),
            Ok(t) if t.is_dir() => walk_symlinks(&e.path(), found),
            _ => {}
        }
    }
}

/// Every folder under `teams/` with a name teamctl accepts (with or without `config.json`).
pub(super) fn team_dirs(layout: &Layout) -> Vec<TeamName> {
    let Ok(dir) = layout.teams_dir().open_dir() else {
        return Vec::new();
    };
    let mut v: Vec<TeamName> = dir
        .names()
        .unwrap_or_default()
        .iter()
        .filter_map(|n| TeamName::parse(n.to_str()?).ok())
        .filter(|t| {
            dir.stat(t.as_str())
                .is_ok_and(|i| i.is_some_and(|i| i.kind == Kind::Dir))
        })
        .collect();
    v.sort();
    v
}

/// The entries of the folder `dir` (reached without following a symlink), sorted; none when it
/// cannot be listed.
pub(super) fn files_in(dir: &Loc) -> Vec<Loc> {
    let mut v: Vec<Loc> = dir
        .open_dir()
        .and_then(|d| d.names())
        .map(|names| names.into_iter().map(|n| dir.join(n)).collect())
        .unwrap_or_default();
    v.sort_by(|a, b| a.path().cmp(b.path()));
    v
}
