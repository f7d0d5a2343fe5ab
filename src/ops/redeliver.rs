//! `teamctl redeliver`: what was written to an inbox nobody reads
//! ([`crate::observe::misaddressed`]) moved to the member it was meant for, exactly once
//! ([`crate::store::moving`]), and recorded in the sent log, which tells a later move that a
//! message its reader has taken since was delivered already.

use std::cell::RefCell;
use std::collections::HashSet;

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::error::usage;
use crate::observe::misaddressed::{self, Misaddressed, is_unread};
use crate::store::dir::Loc;
use crate::store::lock::LockOptions;
use crate::store::moving::{self, Journal, Move, Moved, NoJournal};
use crate::store::paths::{MemberName, quote, shown_list};
use crate::store::{Entry, id};
use crate::team::config::{Team, suggest};
use crate::team::sentlog::{Pending, Sent, SentLog};

/// What to move, and where.
pub struct Redeliver<'a> {
    /// The team, opened.
    pub team: &'a Team,
    /// The inbox nobody reads (its file is `inboxes/<inbox>.json`).
    pub inbox: &'a MemberName,
    /// The member to move to; `None`: the inbox's certain suggestion.
    pub to: Option<&'a MemberName>,
    /// Only say what would move.
    pub dry_run: bool,
    /// How long to wait for the locks.
    pub lock: &'a LockOptions,
    /// teamctl's sent log: the journal of moves, if any.
    pub sent_log: Option<&'a SentLog>,
    /// The time recorded for an entry without a timestamp of its own.
    pub now: DateTime<Utc>,
}

/// What [`redeliver`] did (or, dry, would do).
#[derive(Debug, Clone)]
pub struct Redelivered {
    /// The inbox moved from.
    pub inbox: String,
    /// Its file.
    pub path: Loc,
    /// The member moved to (`None`: there was nothing to move and no member was named).
    pub to: Option<String>,
    /// That member's inbox file.
    pub target: Option<Loc>,
    /// The entries moved, those only removed, and how many stayed.
    pub moved: Moved,
    /// Nothing was written.
    pub dry_run: bool,
}

/// Moves the unread entries of [`Redeliver::inbox`] to [`Redeliver::to`] (or to the member it
/// most likely meant, when that is certain).
///
/// # Errors
/// A usage error for a reserved name; an inbox that is a member's, or does not exist; a target
/// that is no member, or none named when the suggestion is not certain (saying why); the move's
/// errors (lock timeout, a corrupt or misplaced file left as it was, failed read-back).
pub fn redeliver(req: &Redeliver) -> Result<Redelivered> {
    let team = req.team;
    let name = req.inbox.as_str();
    if req.inbox.is_reserved() {
        return Err(usage(format!(
            "'{name}' is a name Claude Code reserves: its inbox is read by the lead or by \
             teamctl (`teamctl inbox {name}`), so it is not misaddressed"
        )));
    }
    if team.config.is_none() {
        bail!(
            "team '{}' has no config.json, so nothing tells which inboxes its members read",
            team.name
        );
    }
    if team.is_member(name) {
        bail!(
            "'{name}' is a member of team '{}': its own Claude Code reads its inbox; redeliver \
             moves only an inbox that no member reads",
            team.name
        );
    }
    let path = team.inbox_path(req.inbox);
    if path.stat()?.is_none() {
        bail!("{}", no_such_inbox(team, name));
    }
    let found = misaddressed::scan(team)
        .misaddressed
        .into_iter()
        .find(|m| m.inbox == name);
    let to = match req.to {
        Some(to) => Some(target(team, name, to)?),
        None => found.as_ref().map(certain_target).transpose()?,
    };
    let Some(to) = to else {
        // Nothing unread there, and no member named: nothing to move (a file that cannot be
        // read fails here, as the move would).
        let kept = crate::store::read_inbox_each(&path, |_, _| Some(()))?.map_or(0, |e| e.len());
        return Ok(Redelivered {
            inbox: name.to_string(),
            path,
            to: None,
            target: None,
            moved: Moved::kept_only(kept),
            dry_run: req.dry_run,
        });
    };
    let target = team.inbox_path(&to);
    let (delivered, stale) = journaled(req.sent_log, team, to.as_str(), &target)?;
    let sent = match req.sent_log {
        Some(log) if !req.dry_run => Some(Journaling {
            req,
            log,
            target: target.display().to_string(),
            to: to.as_str(),
            pending: RefCell::new(None),
        }),
        _ => None,
    };
    let m = Move {
        from: &path,
        to: &target,
        pick: &is_unread,
        delivered: &|i| delivered.contains(i),
        stale: &stale,
        journal: sent
            .as_ref()
            .map_or(&NoJournal as &dyn Journal, |j| j as &dyn Journal),
    };
    let moved = if req.dry_run {
        moving::plan(&m)?
    } else {
        moving::move_entries(&m, req.lock)?
    };
    Ok(Redelivered {
        inbox: name.to_string(),
        path,
        to: Some(to.to_string()),
        target: Some(target),
        moved,
        dry_run: req.dry_run,
    })
}

/// Every inbox nobody reads whose suggestion is certain, moved there (`doctor --fix`), each
/// with its result.
pub fn fix(
    team: &Team,
    lock: &LockOptions,
    sent_log: Option<&SentLog>,
    now: DateTime<Utc>,
) -> Vec<(Misaddressed, Result<Redelivered>)> {
    let mut out = Vec::new();
    for m in misaddressed::scan(team).misaddressed {
        if !m.certain {
            continue;
        }
        let Ok(inbox) = MemberName::parse(&m.inbox) else {
            continue;
        };
        let r = redeliver(&Redeliver {
            team,
            inbox: &inbox,
            to: None,
            dry_run: false,
            lock,
            sent_log,
            now,
        });
        out.push((m, r));
    }
    out
}

fn no_such_inbox(team: &Team, name: &str) -> String {
    let listed: Vec<String> = misaddressed::scan(team)
        .misaddressed
        .into_iter()
        .map(|m| m.inbox)
        .collect();
    let hint = suggest(name, &listed)
        .map(|s| format!(" (did you mean {}?)", quote(&s)))
        .unwrap_or_default();
    let known = if listed.is_empty() {
        "none holds unread messages".to_string()
    } else {
        shown_list(&listed)
    };
    format!(
        "team '{}' has no inbox {}{hint}; inboxes nobody reads: {known}",
        team.name,
        quote(name)
    )
}

/// `to` checked: a member of `config.json`, not the inbox itself.
fn target(team: &Team, inbox: &str, to: &MemberName) -> Result<MemberName> {
    if to.as_str() == inbox {
        return Err(usage(format!(
            "--to {to} is the inbox itself: name the member the messages were meant for"
        )));
    }
    if !team.is_member(to.as_str()) {
        let members = team.member_names();
        let hint = suggest(to.as_str(), &members)
            .map(|s| format!(" (did you mean {}?)", quote(&s)))
            .unwrap_or_default();
        bail!(
            "'{to}' is not a member of team '{}'{hint}; members: {}",
            team.name,
            shown_list(&members)
        );
    }
    Ok(to.clone())
}

/// The member an inbox was certainly meant for, or why there is none (name one with `--to`).
fn certain_target(m: &Misaddressed) -> Result<MemberName> {
    if m.certain
        && let Some(s) = &m.suggestion
    {
        return MemberName::parse(s);
    }
    let why = if m.has_sent {
        format!(
            "'{}' has written to the team itself, so it is more likely a former member than a \
             misspelling",
            m.inbox
        )
    } else if m.candidates.is_empty() {
        format!("no member's name is close to '{}'", m.inbox)
    } else if m.candidates.len() == 1 {
        format!(
            "'{}' is close to {} but not certainly meant for it (a name of 4 characters or \
             more, one edit away, is)",
            m.inbox, m.candidates[0]
        )
    } else {
        format!(
            "several members are close to '{}': {}",
            m.inbox,
            m.candidates.join(", ")
        )
    };
    bail!(
        "not moving {}.json: {why}; name the member with --to MEMBER",
        m.inbox
    )
}

/// The ids the sent log says were moved (or sent) to `to` in this team, and the copies left
/// beside `target` by moves stopped before their rename. A move's entry names the copy that
/// carried it ([`Sent::moving`]): the move happened exactly when that copy is gone; while it is
/// there, its entries were not delivered (they are still in the source, and move again).
fn journaled(
    log: Option<&SentLog>,
    team: &Team,
    to: &str,
    target: &Loc,
) -> Result<(HashSet<String>, Vec<String>)> {
    let Some(log) = log else {
        return Ok((HashSet::new(), Vec::new()));
    };
    let dir = target.parent_dir().ok();
    let left = |copy: &str| {
        dir.as_ref()
            .is_some_and(|d| d.stat(copy).ok().flatten().is_some())
    };
    let mut delivered = HashSet::new();
    let mut stale = Vec::new();
    // Read a line at a time: only this member's entries are kept.
    log.each(&mut |s| {
        if s.team != team.name.as_str() || s.to != to {
            return;
        }
        match &s.moving {
            Some(copy) if left(copy) => {
                if !stale.contains(copy) {
                    stale.push(copy.clone());
                }
            }
            _ => {
                delivered.insert(s.id);
            }
        }
    })?;
    Ok((delivered, stale))
}

/// The sent log as a move's journal: each entry that may move gets its line, naming the copy
/// of the target that carries it until it replaces the target, while the move is planned
/// (kept in the log's pending file, not in memory); under the locks the lines of those
/// appended are written.
struct Journaling<'a> {
    req: &'a Redeliver<'a>,
    log: &'a SentLog,
    /// The target inbox's path, as the log names it.
    target: String,
    to: &'a str,
    /// The lines made, and the copy they name.
    pending: RefCell<Option<(Pending, String)>>,
}

impl Journal for Journaling<'_> {
    fn start(&self, copy: &str) -> Result<()> {
        let mut p = self.pending.borrow_mut();
        match p.as_mut() {
            Some((lines, named)) => {
                lines.clear()?;
                *named = copy.to_string();
            }
            None => *p = Some((self.log.pending()?, copy.to_string())),
        }
        Ok(())
    }

    fn note(&self, e: &Entry) -> Result<()> {
        let mut p = self.pending.borrow_mut();
        let Some((lines, copy)) = p.as_mut() else {
            bail!("the sent log's lines were not started");
        };
        let field = |k: &str| e.get(k).and_then(Value::as_str).map(String::from);
        lines.push(&Sent {
            id: id::entry_id(e),
            team: self.req.team.name.to_string(),
            to: self.to.to_string(),
            from: field("from").unwrap_or_default(),
            at: field("timestamp").unwrap_or_else(|| crate::time::iso_millis(self.req.now)),
            summary: field("summary"),
            inbox: self.target.clone(),
            idempotency_key: None,
            answers: None,
            moving: Some(copy.clone()),
        })
    }

    fn record(&self, which: &[u32]) -> Result<()> {
        let mut p = self.pending.borrow_mut();
        let Some((lines, _)) = p.as_mut() else {
            bail!("the sent log's lines were not started");
        };
        self.log.record_pending(lines, which)
    }
}
