//! What a transcript reader tells about the files it skipped: one warning per file or folder,
//! each once.

use std::io;
use std::path::Path;

use crate::store::dir::Unexpected;

/// Adds `w` to `warnings` unless it is there already (a folder looked into for several
/// members is reported once).
pub fn note(warnings: &mut Vec<String>, w: String) {
    if !warnings.contains(&w) {
        warnings.push(w);
    }
}

/// The warning for a transcript or folder that could not be used: `skipped <path> is a
/// symlink, which teamctl never follows (…)` for one that is not what it should be.
pub fn refusal(path: &Path, e: &io::Error) -> String {
    match e.get_ref().and_then(|i| i.downcast_ref::<Unexpected>()) {
        Some(u) => format!("skipped {u}"),
        None => format!("could not read {}: {e}", path.display()),
    }
}
