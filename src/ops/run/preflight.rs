//! Before the lead starts: the run's name and its lock, and the files the start-up dialogs it
//! would stop at are judged from ([`crate::ops::dialogs`]).

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::error::usage;
use crate::store::dir::Loc;

/// Reads a JSON object file; `None` when missing, not a regular file (a FIFO is never opened
/// for a blocking read) or not an object.
pub(super) fn read_json(path: &Path) -> Option<Value> {
    let v: Value = serde_json::from_slice(&crate::store::dir::read_regular(path).ok()??).ok()?;
    v.is_object().then_some(v)
}

/// [`read_json`] of a file under the config dir, reached without following a symlink.
pub(super) fn read_json_loc(path: &Loc) -> Option<Value> {
    let v: Value = serde_json::from_slice(&path.read().ok()??).ok()?;
    v.is_object().then_some(v)
}

/// Checks a `--name`: 1–64 of `A-Z a-z 0-9 _ -`.
///
/// # Errors
/// A usage error.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(usage(format!(
            "invalid --name '{name}': use 1-64 letters, digits, '_' or '-'"
        )))
    }
}

/// The per-name lock: a file held with an OS lock for the whole run, released on exit.
///
/// # Errors
/// When another run of that name holds it.
pub fn lock_name(run_dir: &Path, name: &str) -> Result<File> {
    let dir = crate::team::data_dir::private_dir(run_dir)
        .with_context(|| format!("could not create {}", run_dir.display()))?;
    let path = run_dir.join(format!("{name}.lock"));
    // Never through a symlink, never a FIFO (see store::dir).
    let mut f = dir
        .open_or_create(format!("{name}.lock"), 0o600)
        .with_context(|| format!("could not open {}", path.display()))?;
    match f.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            bail!(
                "a run named '{name}' is already running (pid {}); pick another --name",
                holder.trim()
            );
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("could not lock {}", path.display()));
        }
    }
    f.set_len(0)?;
    write!(f, "{}", std::process::id())?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_per_name() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_name(dir.path(), "a").unwrap();
        let err = lock_name(dir.path(), "a").unwrap_err().to_string();
        assert!(
            err.contains("already running") && err.contains(&std::process::id().to_string()),
            "{err}"
        );
        assert!(lock_name(dir.path(), "b").is_ok());
        drop(held);
        assert!(lock_name(dir.path(), "a").is_ok());
    }
}
