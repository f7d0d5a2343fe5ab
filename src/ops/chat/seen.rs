//! The webhook's replay cache: the signatures of the signed answers it took, kept while they
//! could still verify ([`super::webhook::WINDOW`] after their timestamp), so that the same
//! bytes sent again are refused, by this bridge, by another on the same data dir, and after a
//! restart.
//!
//! Kept in teamctl's data dir (`webhook-seen`, one `<timestamp> <signature>` line each; 0600 in
//! the 0700 folder, reached without following a link), read and replaced whole under an
//! exclusive lock on `webhook-seen.lock` (a temporary file renamed over it, synced: a crash
//! leaves the old set or the new, never half), so that of two answers with one signature
//! exactly one is taken. Bounded: at most [`MAX`] live signatures; past that an answer is
//! refused (the sender may send it again once older ones expire), never taken unchecked.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};

use crate::store::dir::{OWN_LOCK_WAIT, lock_own_file};
use crate::team::data_dir::private_dir;

/// The file of signatures.
const FILE: &str = "webhook-seen";
/// Its lock.
const LOCK: &str = "webhook-seen.lock";
/// The file written before it is renamed over [`FILE`].
const TEMP: &str = "webhook-seen.tmp";
/// How many live signatures are kept at most (about 85 bytes each): 33 answers a second for 5
/// minutes, far above what people send.
pub const MAX: usize = 10_000;

/// What the cache says of a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// Never taken before: it is now.
    First,
    /// Taken before, within its window: a replay.
    Again,
    /// The cache is full of live signatures: not taken (send it again later).
    Full,
}

/// The replay cache in a data dir.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    window: Duration,
}

impl Cache {
    /// The cache in teamctl's data dir `dir`, keeping each signature for `window` past its
    /// timestamp (created on the first answer).
    pub fn in_dir(dir: &Path, window: Duration) -> Cache {
        Cache {
            dir: dir.to_path_buf(),
            window,
        }
    }

    /// Takes `signature` (of an answer signed at `ts`, Unix seconds) at `now`, unless it was
    /// taken before: the signatures whose window has passed are forgotten meanwhile.
    ///
    /// # Errors
    /// The cache cannot be locked, read or written (a link or a FIFO there, I/O): the caller
    /// refuses the answer rather than take it unchecked.
    pub fn take(&self, ts: i64, signature: &str, now: DateTime<Utc>) -> Result<Seen> {
        let path = self.dir.join(FILE);
        let context = || {
            format!(
                "could not check the webhook's replay cache {}",
                path.display()
            )
        };
        let dir = private_dir(&self.dir).with_context(context)?;
        let lock = dir.open_or_create(LOCK, 0o600).with_context(context)?;
        lock_own_file(&lock, OWN_LOCK_WAIT).with_context(context)?;
        let bytes = dir.read(FILE).with_context(context)?.unwrap_or_default();
        let text = String::from_utf8_lossy(&bytes);
        // A signature verifies until `window` past its timestamp; one from the future is kept.
        let oldest = now.timestamp() - self.window.as_secs() as i64;
        let mut live: Vec<(i64, &str)> = text
            .lines()
            .filter_map(|l| {
                let (t, s) = l.split_once(' ')?;
                Some((t.parse::<i64>().ok()?, s))
            })
            .filter(|(t, _)| *t >= oldest)
            .collect();
        if live.iter().any(|(_, s)| *s == signature) {
            return Ok(Seen::Again);
        }
        if live.len() >= MAX {
            return Ok(Seen::Full);
        }
        live.push((ts, signature));
        let mut out = String::with_capacity(live.len() * 86);
        for (t, s) in &live {
            out.push_str(&format!("{t} {s}\n"));
        }
        match dir.unlink(TEMP) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(context);
            }
            _ => {}
        }
        let mut f = dir.create_new(TEMP, 0o600).with_context(context)?;
        f.write_all(out.as_bytes()).with_context(context)?;
        f.sync_all().with_context(context)?;
        dir.rename(TEMP, FILE).with_context(context)?;
        dir.sync().with_context(context)?;
        Ok(Seen::First)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::<Utc>::from_timestamp(1_795_946_400 + secs, 0).unwrap()
    }

    #[test]
    fn a_signature_is_taken_once_while_it_can_verify_across_caches() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let window = Duration::from_secs(300);
        let (a, b) = (Cache::in_dir(&data, window), Cache::in_dir(&data, window));
        let t = at(0).timestamp();
        assert_eq!(a.take(t, "sha256=aa", at(0)).unwrap(), Seen::First);
        // Again, by this cache or another on the same data dir (a restarted bridge).
        assert_eq!(a.take(t, "sha256=aa", at(10)).unwrap(), Seen::Again);
        assert_eq!(b.take(t, "sha256=aa", at(300)).unwrap(), Seen::Again);
        assert_eq!(b.take(t, "sha256=bb", at(1)).unwrap(), Seen::First);
        // Past its window it could not verify any more: forgotten.
        assert_eq!(b.take(t, "sha256=aa", at(301)).unwrap(), Seen::First);
        let file = data.join(FILE);
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // bb's window has passed too: only aa is kept.
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
        // A link planted in its place is refused, never followed.
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), &file).unwrap();
        assert!(a.take(t, "sha256=cc", at(2)).is_err());
        assert!(!tmp.path().join("elsewhere").exists());
    }

    #[test]
    fn a_full_cache_refuses_rather_than_forgets() {
        let tmp = tempfile::tempdir().unwrap();
        let lines: String = (0..MAX)
            .map(|i| format!("{} sha256={i:064x}\n", at(0).timestamp()))
            .collect();
        std::fs::write(tmp.path().join(FILE), lines).unwrap();
        let c = Cache::in_dir(tmp.path(), Duration::from_secs(300));
        assert_eq!(
            c.take(at(5).timestamp(), "sha256=new", at(5)).unwrap(),
            Seen::Full
        );
        assert_eq!(
            c.take(at(0).timestamp(), &format!("sha256={:064x}", 7), at(5))
                .unwrap(),
            Seen::Again
        );
        // Once they expire, there is room again.
        assert_eq!(
            c.take(at(301).timestamp(), "sha256=new", at(301)).unwrap(),
            Seen::First
        );
    }
}
