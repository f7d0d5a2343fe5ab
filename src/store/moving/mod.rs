//! Moving entries from one inbox to another exactly once (`teamctl redeliver`): what a message
//! written to the wrong inbox needs to reach the right one without being lost or doubled.
//!
//! Invariants:
//! - Lock order: both inboxes' lock directories, the one whose path sorts first first. The first
//!   is waited for politely (proper-lockfile's backoff, up to the caller's deadline); the second
//!   only for [`SECOND_LOCK_WAIT`]. When it is not free by then, the first is released, left
//!   free at least as long as it was held, and both are tried again: a Claude Code writer of the
//!   first (it retries every 100 ms at most and gives up after about 0.65 s) finds it free.
//! - Planned without a lock (the `plan` module): the source is read and parsed one
//!   entry at a time, each kept as its text, before any lock is taken, so a Claude Code writer
//!   of either inbox is never kept waiting while a large inbox is parsed. Under both locks the
//!   move reads the source again and compares it byte for byte with what it planned from: when
//!   it changed, both locks are released and the move is planned again ([`PLANS`]). The
//!   target's new copy is written before the locks too, from the target as it was then, under
//!   an ordinary temp name (swept as a stale temp file if the move never comes back to it);
//!   under the locks it is used when the target is still those bytes (compared), renamed to the
//!   move's copy name and synced before the journal names it, and otherwise removed and the
//!   target read and its copy written under the locks, as every locked append does. Memory:
//!   about the source's bytes, plus the target's, plus 12 bytes per entry that stays and about
//!   40 per entry that moves (the journal keeps its lines out of memory, and 4 bytes of each);
//!   never every entry parsed at once, nor a list of every entry's text.
//! - Order of writes, under both locks: the target's new content in a copy beside it
//!   ([`super::moving_temp_name`]), synced; then the caller's journal, told that copy's name;
//!   then the copy renamed over the target (read back); then the source (atomic replace, read
//!   back). A journal entry thus records a move that happened exactly when the copy it names
//!   is gone (`write_journaled`). A signal finishes the move before the process exits
//!   (the CLI drains held locks); a SIGKILL or a crash at any point leaves files and journal
//!   that the next move reads right.
//! - Exactly once: an entry the target already holds (by id, [`crate::store::id::entry_id`],
//!   counted: two entries with one id need two there) or that the journal says was moved before
//!   (its reader may have taken it since) is not appended again, only removed from the source. A
//!   move stopped between the two writes leaves the entry in both inboxes; the next move finds
//!   it in the target, or in the journal, and only removes it from the source. A move stopped
//!   after its journal entry and before its rename leaves its copy: the journal's caller then
//!   counts those entries undelivered ([`Move::delivered`]) and names the copy in
//!   [`Move::stale`], which the next move removes once it has written the target.
//! - Bytes: each moved entry is written by the layout writer ([`crate::store::format`]), which
//!   gives back a source entry's own bytes when the source is in `JSON.stringify` layout; the
//!   target keeps every byte it had when it is in that layout (the new entries are spliced in);
//!   the source keeps its other entries, re-rendered as every locked update renders them.
//! - The source is never removed, only emptied: Claude Code's writer creates an inbox and then
//!   locks it with `realpath`, which fails on a file removed in between, and then drops its
//!   message.
//! - Paths: both files are reached as every inbox is ([`crate::store::dir`]); a symlink, FIFO or
//!   anything but a regular file at either is refused before a lock is taken, and a source or
//!   target that does not parse is left byte for byte as it was.

use std::io::{self, Write};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::dir::{Dir, Loc};
use super::faults::{faults, pause};
use super::lock::{self, LockGuard, LockOptions};
use super::{Entry, leaf, read_locked, read_unlocked, read_unlocked_keeping};
use crate::error::Error;

mod plan;

use plan::Plan;
pub use plan::{Entries, Moved};

/// How long the second lock of a move is waited for while the first is held.
pub const SECOND_LOCK_WAIT: Duration = Duration::from_millis(100);

/// A move plans again, without its locks, when the source changed since it was planned: at
/// least this many times, and as long as the lock timeout lasts.
pub const PLANS: usize = 3;

/// What to move, from where to where.
pub struct Move<'a> {
    /// The inbox the entries leave.
    pub from: &'a Loc,
    /// The inbox they go to.
    pub to: &'a Loc,
    /// Which of the source's entries move.
    pub pick: &'a dyn Fn(&Entry) -> bool,
    /// Whether the entry with this id was moved to the target before (the journal).
    pub delivered: &'a dyn Fn(&str) -> bool,
    /// Copies ([`super::moving_temp_name`]) left beside the target by moves that were stopped
    /// before their rename, as the journal names them: removed once this move has written the
    /// target, whose entries they did not deliver.
    pub stale: &'a [String],
    /// The journal of the move.
    pub journal: &'a dyn Journal,
}

/// The journal of a move (`redeliver`'s is the sent log): told each picked entry while the move
/// is planned, before any lock is taken, and asked, under the locks, once the target's copy
/// holds them and before it replaces the target, to record the entries appended.
pub trait Journal {
    /// The move is planned (again), the target's new content to go to the copy `copy`: what
    /// was noted before is forgotten.
    ///
    /// # Errors
    /// The journal's (the move stops, nothing written).
    fn start(&self, copy: &str) -> Result<()>;
    /// The next picked entry, in source order.
    ///
    /// # Errors
    /// As [`Journal::start`].
    fn note(&self, entry: &Entry) -> Result<()>;
    /// Records the noted entries at `which` (their places in the order noted, ascending): the
    /// ones appended to the target.
    ///
    /// # Errors
    /// The journal's: the copy is removed and nothing is written.
    fn record(&self, which: &[u32]) -> Result<()>;
}

/// A journal that keeps nothing (a move nobody needs to record).
pub struct NoJournal;

impl Journal for NoJournal {
    fn start(&self, _: &str) -> Result<()> {
        Ok(())
    }
    fn note(&self, _: &Entry) -> Result<()> {
        Ok(())
    }
    fn record(&self, _: &[u32]) -> Result<()> {
        Ok(())
    }
}

/// Moves the picked entries of `m.from` to `m.to` (see the module docs), recording the
/// appended ones in [`Move::journal`] once the target's copy holds them and before it replaces
/// the target. A source that does not exist is an error; one with nothing to move is left
/// untouched and so is the target (not even created).
///
/// The move is planned without any lock (the source read and parsed, one entry at a time);
/// under both locks it only checks that the source is still what was planned from (else it
/// plans again, unlocked), reads the target and writes.
///
/// # Errors
/// [`Error::LockTimeout`] (nothing written), a source or target that does not parse or is not
/// a regular file (left unchanged), a source that kept changing while the move was planned
/// (nothing written), [`Error::VerifyFailed`], I/O.
pub fn move_entries(m: &Move, opts: &LockOptions) -> Result<Moved> {
    let (from_dir, from_name) = source_place(m.from)?;
    let to_name = leaf(m.to)?;
    let copy = super::moving_temp_name(to_name);
    let start = Instant::now();
    let mut plans = 0;
    loop {
        let plan = planned(m, Some(&copy))?;
        if plan.is_empty() {
            return Ok(plan.nothing());
        }
        let to_dir = super::ensure_inbox_in(m.to)?;
        let early = early(m, &plan, &to_dir, to_name)?;
        pause(faults().before_lock);
        let locked = lock_pair((&from_dir, from_name), (&to_dir, to_name), opts);
        let (from_lock, to_lock) = locked.inspect_err(|_| discard(&to_dir, early.as_ref()))?;
        pause(faults().after_lock);
        let context = || format!("could not read {}", m.from.display());
        if super::holds(&from_dir, from_name, &[plan.source()]).with_context(context)? {
            let locks = Locks {
                from: (&from_dir, from_name, from_lock),
                to: (&to_dir, to_name, to_lock),
            };
            return write_planned(m, plan, locks, &copy, early);
        }
        // Changed since it was read: planned again, with neither lock held meanwhile.
        discard(&to_dir, early.as_ref());
        to_lock.release()?;
        from_lock.release()?;
        plans += 1;
        if plans >= PLANS && start.elapsed() >= opts.timeout {
            bail!(
                "could not move from {}: it changed each of the {plans} times the move was \
                 planned (nothing written; run it again)",
                m.from.display()
            );
        }
    }
}

/// Both inboxes of a move, each with its folder, name and held lock.
struct Locks<'a> {
    from: (&'a Dir, &'a str, LockGuard),
    to: (&'a Dir, &'a str, LockGuard),
}

/// The target's new copy written before the locks, from the target as it was then, and what
/// it was made from: under the locks it is used only when the target is still those bytes.
struct Early {
    target: Vec<u8>,
    t: plan::Target,
    split: plan::Split,
    /// The copy's temp file ([`super::write_early`]), when anything is appended.
    tmp: Option<String>,
}

/// [`Early`] for `plan`, or `None` when the target cannot be read or does not parse now (all is
/// then done under the locks, where such a target is refused).
fn early(m: &Move, plan: &Plan, to_dir: &Dir, to_name: &str) -> Result<Option<Early>> {
    let Ok(Some(target)) = to_dir.read(to_name) else {
        return Ok(None);
    };
    let Ok(t) = plan::target_of(&target, m.to) else {
        return Ok(None);
    };
    let split = plan.split(&t.ids);
    let tmp = if split.appended.is_empty() {
        None
    } else {
        let laid_out = t.laid_out(&target);
        let mut fill = |w: &mut dyn Write| -> Result<()> {
            Ok(plan.write_target(w, laid_out, t.count, &split)?)
        };
        Some(super::write_early(to_dir, to_name, &mut fill)?)
    };
    Ok(Some(Early {
        target,
        t,
        split,
        tmp,
    }))
}

/// Removes an early copy that will not be used.
fn discard(to_dir: &Dir, early: Option<&Early>) {
    if let Some(tmp) = early.and_then(|e| e.tmp.as_deref()) {
        let _ = to_dir.unlink(tmp);
    }
}

/// The writes of a move whose source is as `plan` read it, under both `locks`: the target
/// (its copy, written before the locks when the target is still as it was then, the journal,
/// the rename; read back), then the source (read back). Each is written as it is made from the
/// plan, a piece at a time, and read back against it again.
fn write_planned(
    m: &Move,
    plan: Plan,
    locks: Locks,
    copy: &str,
    early: Option<Early>,
) -> Result<Moved> {
    let (from_dir, from_name, from_lock) = locks.from;
    let (to_dir, to_name, to_lock) = locks.to;
    let context = || format!("could not read {}", m.to.display());
    let early = match early {
        Some(e) if super::holds(to_dir, to_name, &[&e.target]).with_context(context)? => Some(e),
        stale => {
            discard(to_dir, stale.as_ref());
            None
        }
    };
    let (target, t, split, tmp) = match early {
        Some(e) => (e.target, e.t, e.split, e.tmp),
        None => {
            let target = read_locked(to_dir, to_name, m.to)?;
            let t = plan::target_of(&target, m.to)?;
            let split = plan.split(&t.ids);
            (target, t, split, None)
        }
    };
    {
        if !split.appended.is_empty() {
            let laid_out = t.laid_out(&target);
            let mut fill = |w: &mut dyn Write| -> Result<()> {
                Ok(plan.write_target(w, laid_out, t.count, &split)?)
            };
            to_lock.verify()?;
            // The journal says which copy carries the move before the copy replaces the
            // target: the move happened exactly when that copy is gone (a SIGKILL at any
            // point leaves a journal and a target that agree).
            let record = |_: &str| m.journal.record(&split.appended);
            match &tmp {
                Some(early) => super::journal_early(to_dir, to_name, early, copy, record)?,
                None => super::write_journaled(to_dir, to_name, copy, &mut fill, record)?,
            }
            pause(faults().before_verify);
            super::verify_written_with(to_dir, to_name, &mut fill)?;
            for stale in m
                .stale
                .iter()
                .filter(|c| super::is_moving_temp_name(c, to_name))
            {
                let _ = to_dir.unlink(stale);
            }
        }
    }
    drop((target, t));
    lock::sleep_unless_draining(faults().between_moves);
    let mut fill = |w: &mut dyn Write| -> Result<()> { Ok(plan.write_source(w)?) };
    from_lock.verify()?;
    super::write_in_if_with(from_dir, from_name, 0o666, &mut fill, || Ok(true))?;
    pause(faults().before_verify);
    super::verify_written_with(from_dir, from_name, &mut fill)?;
    to_lock.release()?;
    from_lock.release()?;
    Ok(plan.into_moved(split))
}

/// The source planned without a lock, read as Claude Code's readers read it (a file caught
/// half-written is read again).
fn planned(m: &Move, copy: Option<&str>) -> Result<Plan> {
    let (bytes, plan) = read_unlocked_keeping(m.from, |b| Plan::new(b, m.from, m, copy))?
        .ok_or_else(|| missing(m.from))?;
    Ok(plan.keep(bytes))
}

/// What [`move_entries`] would do now, read without locks; nothing is written.
///
/// # Errors
/// A missing source; a source or target that does not parse or is not a regular file; I/O.
pub fn plan(m: &Move) -> Result<Moved> {
    source_place(m.from)?;
    let plan = planned(m, None)?;
    let target = match m.to.parent_dir() {
        Ok(dir) => {
            dir.expect_file(leaf(m.to)?)
                .with_context(|| format!("could not read {}", m.to.display()))?;
            read_unlocked(m.to, |b| plan::target_of(b, m.to).map(|t| t.ids))?
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("could not read {}", m.to.display())),
    };
    let split = plan.split(&target.unwrap_or_default());
    Ok(plan.into_moved(split))
}

fn missing(path: &Loc) -> anyhow::Error {
    anyhow::anyhow!("could not move from {}: it does not exist", path.display())
}

/// The source's folder and name, checked before any lock: a regular file, or an error naming
/// what is there instead.
fn source_place(from: &Loc) -> Result<(Dir, &str)> {
    let context = || format!("could not move from {}", from.display());
    let dir = match from.parent_dir() {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing(from)),
        Err(e) => return Err(e).with_context(context),
    };
    let name = leaf(from)?;
    if dir.expect_file(name).with_context(context)?.is_none() {
        return Err(missing(from));
    }
    Ok((dir, name))
}

/// Takes the lock directories of `a` and `b` (a file's folder and name each) in a fixed order,
/// never holding one while waiting longer than [`SECOND_LOCK_WAIT`] for the other. Returns the
/// guards in the order given.
fn lock_pair(
    a: (&Dir, &str),
    b: (&Dir, &str),
    opts: &LockOptions,
) -> Result<(LockGuard, LockGuard)> {
    let swap = b.0.path().join(b.1) < a.0.path().join(a.1);
    let (first, second) = if swap { (b, a) } else { (a, b) };
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let mut attempt = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let held = lock::acquire_in(first.0, first.1, &with_timeout(opts, left))?;
        let brief = SECOND_LOCK_WAIT.min(deadline.saturating_duration_since(Instant::now()));
        match lock::acquire_in(second.0, second.1, &with_timeout(opts, brief)) {
            Ok(other) => return Ok(if swap { (other, held) } else { (held, other) }),
            Err(e) if is_timeout(&e) => {
                held.release()?;
                let now = Instant::now();
                if now >= deadline {
                    return Err(Error::LockTimeout {
                        lock: lock::lock_dir(&second.0.path().join(second.1)),
                        waited: now - start,
                    }
                    .into());
                }
                // At least as long free as it was held: a Claude Code writer of the first,
                // retrying every 100 ms at most, finds it free.
                let pause = SECOND_LOCK_WAIT + lock::backoff(attempt);
                thread::sleep(pause.min(deadline - now));
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

fn with_timeout(opts: &LockOptions, timeout: Duration) -> LockOptions {
    LockOptions { timeout, ..*opts }
}

fn is_timeout(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<Error>(), Some(Error::LockTimeout { .. }))
}

#[cfg(test)]
mod tests;
