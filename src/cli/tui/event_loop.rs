//! `top`'s event loop: file changes, keys, resizes, signals and the results of actions reach
//! one [`Loop`] as messages; actions (a message, an answer) run off the loop so a busy lock never
//! freezes the screen.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use crossterm::event::Event;
use teamctl::observe::reader::{LOOK_EVERY, TRANSCRIPTS_EVERY, TeamReader};
use teamctl::observe::watch::{Outside, Watch};
use teamctl::store::paths::MemberName;
use teamctl::team::config::{LEAD, Team};
use teamctl::team::mailbox::{self, SendRequest, Text};
use teamctl::team::protocol::{self, Verdict};

use super::live::{Live, Msg, Watchdog};
use super::{render, terminal};
use crate::cli::answer;
use crate::cli::context::Ctx;
use crate::cli::tui::app::{Answer, Effect};

/// How often the clock ticks: liveness checks and the ages on screen, nothing else.
pub(super) const TICK: Duration = LOOK_EVERY;

/// The transcript changes the watcher saw and the loop has not read yet. The watcher tells the
/// loop once ([`Msg::Transcripts`]) until the loop takes them: a transcript appended twenty
/// times a second wakes the loop only when it reads.
#[derive(Default)]
pub(super) struct Pending {
    /// The loop was told and has not taken them yet.
    pub(super) told: bool,
    /// The paths notified.
    pub(super) paths: BTreeSet<PathBuf>,
    /// Nothing says which (polling, lost notifications).
    pub(super) unknown: bool,
}

/// Takes what the watcher saw; whether a file nobody owns yet is among it.
pub(super) fn take(pending: &Mutex<Pending>, reader: &TeamReader) -> bool {
    let mut p = pending.lock().unwrap_or_else(PoisonError::into_inner);
    let p = std::mem::take(&mut *p);
    p.unknown || p.paths.iter().any(|path| !reader.knows(path))
}

/// Moves the start of the transcript window after a read that found the transcripts `grew` (or
/// not). It runs from the last read that found something, so that the read after the close
/// that follows a write (which finds nothing) does not delay the next write's; a second read
/// in a row that finds nothing starts it too (a file in a watched folder that is nobody's,
/// appended all the time, is read at most every [`TRANSCRIPTS_EVERY`]).
pub(super) fn window(start: &mut Instant, found_last: &mut bool, grew: bool) {
    if grew || !*found_last {
        *start = Instant::now();
    }
    *found_last = grew;
}

/// What the file watcher's thread is given: the team's watch and the waker it waits on, the
/// transcript folders handed to it later, the loop it tells, and where it notes the transcript
/// changes for the loop.
pub(super) struct Watcher<'a> {
    pub(super) watch: Watch,
    pub(super) waker: teamctl::observe::waker::Waker,
    pub(super) dirs_rx: mpsc::Receiver<PathBuf>,
    pub(super) tx: &'a mpsc::Sender<Msg>,
    pub(super) pending: Arc<Mutex<Pending>>,
}

/// File changes, on a thread of their own (it blocks on the notifications): changes to the
/// team's files go to the loop as they come; transcript changes are noted in `pending` and the
/// loop told once until it takes them.
pub(super) fn spawn_watcher(watcher: Watcher, clock: impl Fn() -> DateTime<Utc> + Send + 'static) {
    let Watcher {
        mut watch,
        mut waker,
        dirs_rx,
        tx,
        pending,
    } = watcher;
    let files = tx.clone();
    let dog = Watchdog(tx.clone(), "the file watcher");
    std::thread::spawn(move || {
        let _dog = dog;
        loop {
            for d in dirs_rx.try_iter() {
                waker.add(&d);
            }
            let (changes, outside) = watch.next_seen(&mut waker, TICK, &clock);
            if crate::cli::context::TEST_PANIC.load(Ordering::SeqCst) && !changes.events.is_empty()
            {
                panic!("TEAMCTL_TEST_FAULTS=top_panic: a change");
            }
            if (!changes.events.is_empty() || !changes.warnings.is_empty())
                && files.send(Msg::Files(changes)).is_err()
            {
                break;
            }
            let tell = {
                let mut p = pending.lock().unwrap_or_else(PoisonError::into_inner);
                match outside {
                    Outside::None => false,
                    Outside::Paths(paths) => {
                        p.paths.extend(paths);
                        !std::mem::replace(&mut p.told, true)
                    }
                    Outside::Unknown => {
                        p.unknown = true;
                        !std::mem::replace(&mut p.told, true)
                    }
                }
            };
            if tell && files.send(Msg::Transcripts).is_err() {
                break;
            }
        }
    });
}

/// Keys and resizes, on a thread of their own (it blocks on the terminal).
pub(super) fn spawn_keys(tx: &mpsc::Sender<Msg>) {
    let keys = tx.clone();
    let dog = Watchdog(tx.clone(), "the terminal reader");
    std::thread::spawn(move || {
        let _dog = dog;
        loop {
            match crossterm::event::read() {
                Ok(ev) => {
                    if keys.send(Msg::Term(ev)).is_err() {
                        break;
                    }
                }
                Err(e) => {
                    let _ = keys.send(Msg::TermGone(e.to_string()));
                    break;
                }
            }
        }
    });
}

/// The event loop's state.
pub(super) struct Loop<'a, 'c> {
    pub(super) ctx: &'c Ctx,
    pub(super) live: &'a mut Live<'c>,
    pub(super) tx: &'a mpsc::Sender<Msg>,
    pub(super) pending: &'a Mutex<Pending>,
    pub(super) dirs_tx: &'a mpsc::Sender<PathBuf>,
    /// The transcript folders the watcher was given.
    pub(super) watched: BTreeSet<PathBuf>,
    pub(super) next_tick: Instant,
    /// A transcript change waiting for its turn, and when a read last found one.
    pub(super) transcripts_due: Option<Instant>,
    pub(super) transcripts_read: Instant,
    pub(super) found_last: bool,
    pub(super) dirty: bool,
}

/// What the loop does after a message.
pub(super) enum Flow {
    Go,
    Quit,
}

impl<'c> Loop<'_, 'c> {
    /// Draws, waits for messages and handles them, until `q`, a signal or a failure.
    pub(super) fn run<'s>(
        &mut self,
        rx: &mpsc::Receiver<Msg>,
        screen: &mut terminal::Screen,
        scope: &'s std::thread::Scope<'s, '_>,
    ) -> Result<()>
    where
        'c: 's,
    {
        loop {
            if !terminal::taken() {
                // A panic hook gave the terminal back. The thread that panicked says which it
                // was as it unwinds, once the hook has printed (a backtrace takes a while).
                let end = Instant::now() + Duration::from_secs(2);
                while let Ok(m) = rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
                    if let Msg::TermGone(e) = m {
                        anyhow::bail!("top stopped: {e}");
                    }
                }
                anyhow::bail!("top stopped: a panic gave the terminal back");
            }
            self.clock();
            if self.transcripts_due.is_some_and(|t| Instant::now() >= t) {
                self.transcripts_due = None;
                self.read_transcripts();
            }
            if self.dirty {
                let now = self.ctx.clock();
                screen
                    .terminal
                    .draw(|f| render::draw(f, &self.live.app, now))
                    .context("could not draw on the terminal")?;
                self.dirty = false;
            }
            let until = self
                .transcripts_due
                .map_or(self.next_tick, |t| t.min(self.next_tick));
            let first = match rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    anyhow::bail!("top's event threads stopped")
                }
            };
            // Everything already waiting is handled before the next draw: a burst of writes
            // is one refresh and one frame.
            let mut batch = vec![first];
            batch.extend(rx.try_iter());
            let (mut changed, mut transcripts) = (false, false);
            for msg in batch {
                match msg {
                    Msg::Files(c) => {
                        self.live.app.timeline.apply(&c);
                        changed = true;
                    }
                    Msg::Transcripts => transcripts = true,
                    other => {
                        if let Flow::Quit = self.handle(other, scope)? {
                            return Ok(());
                        }
                    }
                }
            }
            if changed {
                // A message or a task at once (the transcripts are read with it).
                self.transcripts_due = None;
                self.read_transcripts();
            } else if transcripts && self.transcripts_due.is_none() {
                // At most every TRANSCRIPTS_EVERY: a burst of appends is one read.
                let due = (self.transcripts_read + TRANSCRIPTS_EVERY).max(Instant::now());
                self.transcripts_due = Some(due);
            }
        }
    }

    /// The clock's tick, also when changes keep coming faster than it: the ages on screen
    /// move, so it draws.
    pub(super) fn clock(&mut self) {
        if Instant::now() >= self.next_tick {
            self.next_tick = Instant::now() + TICK;
            if self.live.tick() {
                self.live.refresh();
            }
            self.dirty = true;
        }
    }

    /// Reads the team again with what the transcripts gained, looking for new owners when a
    /// file nobody owns changed, and hands new transcript folders to the watcher.
    pub(super) fn read_transcripts(&mut self) {
        if take(self.pending, &self.live.reader)
            && let Some(s) = self.live.reader.spend_mut()
        {
            s.relocate();
        }
        self.dirty |= self.live.refresh();
        window(
            &mut self.transcripts_read,
            &mut self.found_last,
            self.live.grew,
        );
        self.hand_dirs();
    }

    pub(super) fn hand_dirs(&mut self) {
        for d in self.live.transcript_dirs() {
            if self.watched.insert(d.clone()) {
                let _ = self.dirs_tx.send(d);
            }
        }
    }

    /// One message other than a file change.
    pub(super) fn handle<'s>(
        &mut self,
        msg: Msg,
        scope: &'s std::thread::Scope<'s, '_>,
    ) -> Result<Flow>
    where
        'c: 's,
    {
        match msg {
            Msg::Term(Event::Key(k)) => {
                self.dirty = true;
                let effect = self.live.app.key(k);
                if let Effect::Quit = effect {
                    return Ok(Flow::Quit);
                }
                self.act(effect, scope);
                self.live.sync_story(Some(self.tx));
            }
            Msg::Term(Event::Paste(text)) => {
                self.live.app.paste(&text);
                self.dirty = true;
            }
            // A resize is drawn by the next frame (ratatui resizes its buffers).
            Msg::Term(_) => self.dirty = true,
            Msg::TermGone(e) if !terminal::taken() => anyhow::bail!("top stopped: {e}"),
            Msg::TermGone(e) => anyhow::bail!("lost the terminal: {e}"),
            Msg::Signal => return Ok(Flow::Quit),
            Msg::Story(member, read) => {
                self.live.opened(&member, *read);
                // Its folders wake the loop too; what was written meanwhile is read.
                self.hand_dirs();
                self.live.read_story();
                self.dirty = true;
            }
            Msg::Done(r) => {
                self.live.app.busy = None;
                match r {
                    Ok(line) => self.live.app.say(&line, false),
                    Err(e) => self.live.app.say(&e, true),
                }
                // The write shows as a file change too; the notice needs no refresh.
                self.dirty = true;
            }
            Msg::Files(_) | Msg::Transcripts => {}
        }
        Ok(Flow::Go)
    }

    /// A message or an answer, written off the loop so that a busy lock never freezes the
    /// screen.
    pub(super) fn act<'s>(&mut self, effect: Effect, scope: &'s std::thread::Scope<'s, '_>)
    where
        'c: 's,
    {
        let ctx = self.ctx;
        let done = self.tx.clone();
        let team = self.live.reader.team().clone();
        match effect {
            Effect::None | Effect::Quit => {}
            Effect::Send { to, text } => {
                self.live.app.busy = Some(format!("sending to {to}…"));
                let dog = Watchdog(self.tx.clone(), "sending");
                scope.spawn(move || {
                    let _dog = dog;
                    let _ = done.send(Msg::Done(send(ctx, &team, &to, text)));
                });
            }
            Effect::Answer(a) => {
                self.live.app.busy = Some(format!(
                    "{} {}…",
                    if a.approve { "approving" } else { "denying" },
                    a.id
                ));
                let dog = Watchdog(self.tx.clone(), "answering");
                scope.spawn(move || {
                    let _dog = dog;
                    let _ = done.send(Msg::Done(reply(ctx, &team, &a)));
                });
            }
        }
    }
}

/// `m`: the message, sent as `teamctl send` sends it (your identity, the lock, the read-back).
pub(super) fn send(ctx: &Ctx, team: &Team, to: &str, text: String) -> Result<String, String> {
    let go = || -> Result<String> {
        let from = MemberName::parse(&ctx.identity(team))?;
        let req = SendRequest {
            to: MemberName::parse(to)?,
            from: from.clone(),
            text: Text::new(text)?,
            summary: None,
            color: None,
            force: false,
            idempotency_key: None,
        };
        let d = mailbox::send(team, &req, ctx.clock(), &ctx.lock, ctx.records.sent_log())?;
        let short: String = d.id.chars().take(8).collect();
        let mut line = format!("sent {short} to {} as {from}", d.to);
        if let Some(e) = d.log_error {
            line.push_str(&format!(" (not in the sent log: {e})"));
        }
        if let Some(why) = mailbox::unreachable_reason(team, from.as_str()) {
            line.push_str(&format!("; teammates cannot answer you: {why}"));
        }
        Ok(line)
    };
    go().map_err(|e| format!("could not send to {to}: {e:#}"))
}

/// `a`/`d` then `y`: the answer, written as `teamctl approve`/`deny` writes it.
pub(super) fn reply(ctx: &Ctx, team: &Team, a: &Answer) -> Result<String, String> {
    let go = || -> Result<String> {
        answer::check_lead(team, false)?;
        let verdict = if a.approve {
            Verdict::Approve {
                feedback: None,
                mode: None,
            }
        } else {
            Verdict::Deny {
                reason: a.reason.clone(),
            }
        };
        let lead = MemberName::parse(
            team.config
                .as_ref()
                .and_then(|c| c.lead())
                .map_or(LEAD, |m| m.name.as_str()),
        )?;
        let (request, _, d) =
            protocol::answer(team, &lead, &a.id, &verdict, ctx.writing(ctx.clock()))?;
        Ok(answer::line(&verdict, &request, &d))
    };
    go().map_err(|e| format!("{e:#}"))
}
