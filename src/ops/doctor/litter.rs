//! Locks and temp files left next to the files Claude Code writes: stale locks, lock paths that
//! are not directories, leftover temp files.

use std::fs;

use super::finding::{Check, fail, ok, warn};
use super::inputs::Inputs;
use super::tree::files_in;
use crate::store::dir::Loc;
use crate::store::lock::LockOptions;
use crate::store::paths::TeamName;
use crate::store::{self, STALE_TEMP};

/// Locks and temp files in the team's folder, its inboxes and its tasks; one `ok` when there
/// are none.
pub(super) fn team_litter(inputs: &Inputs, t: &TeamName) -> Vec<Check> {
    let layout = &inputs.layout;
    let folders = [
        layout.team_dir(t),
        layout.inboxes_dir(t),
        layout.tasks_dir(t),
    ];
    let mut out = Vec::new();
    for folder in &folders {
        out.extend(litter(inputs, t, folder));
    }
    if out.is_empty() {
        out.push(ok(
            "lock",
            Some(t.as_str()),
            None,
            format!("team '{t}': no stale or foreign locks, no leftover temp files"),
        ));
    }
    out
}

/// Lock paths and temp files in `folder`.
fn litter(inputs: &Inputs, t: &TeamName, folder: &Loc) -> Vec<Check> {
    let name = Some(t.as_str());
    let stale_after = LockOptions::default().stale;
    let mut out = Vec::new();
    for path in files_in(folder) {
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        let age = meta
            .modified()
            .ok()
            .and_then(|m| inputs.now.duration_since(m).ok())
            .unwrap_or_default();
        if file.ends_with(".lock") && file != ".lock" {
            if !meta.is_dir() {
                out.push(fail(
                    "lock",
                    name,
                    Some(&path),
                    format!(
                        "{} is a file, not a lock directory: left by another tool, it blocks \
                         Claude Code's own writers of that file",
                        path.display()
                    ),
                    "remove it once no program uses it",
                ));
            } else if age > stale_after {
                out.push(warn(
                    "lock",
                    name,
                    Some(&path),
                    format!(
                        "stale lock {} ({} s old): its holder died",
                        path.display(),
                        age.as_secs()
                    ),
                    "nothing to do: the next writer reclaims it (or remove it: rmdir)",
                ));
            }
        } else if let Some((target, _)) = file.split_once(".tmp.") {
            let own = store::is_own_temp_name(file, target);
            let fix = if own && age > STALE_TEMP {
                "nothing to do: the next teamctl write of that file removes it".to_string()
            } else if own {
                "nothing to do if a writer is at work; teamctl removes it once it is a minute old"
                    .to_string()
            } else {
                "remove it once no program writes that file".to_string()
            };
            out.push(warn(
                "temp_file",
                name,
                Some(&path),
                format!(
                    "leftover temp file {} ({} s old)",
                    path.display(),
                    age.as_secs()
                ),
                &fix,
            ));
        }
    }
    out
}
