//! `teamctl top`'s screen: the event loop (file changes, keys, resizes, signals, the results of
//! actions, a one-second clock for liveness and ages), the actions (a message, an answer) run
//! off the loop so a busy lock never freezes the screen, and the one-frame `--once` rendering.
//! The data comes from [`teamctl::observe::top`]; [`app`] holds the state, [`render`] draws.
//!
//! The team is read through one [`TeamReader`], kept for the whole session: a refresh parses
//! only the inboxes that changed and what the transcripts gained. Their folders wake the loop too, but a transcript is appended many times a
//! second while its member works: a change there refreshes at most every [`TRANSCRIPT_EVERY`]
//! (a message or a task change still refreshes at once), and a frame is drawn only when
//! something on it changed.

pub(crate) mod app;
pub(crate) mod render;
mod terminal;

use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use teamctl::host::proc::pid_alive;
use teamctl::observe::log::{Filter, LogLine, MemberLog};
use teamctl::observe::reader::{self, TeamReader};
use teamctl::observe::top::{self, TIMELINE_LEN, Timeline};
use teamctl::observe::watch::{Changes, Outside, Watch};
use teamctl::store::paths::MemberName;
use teamctl::team::config::{LEAD, Team};
use teamctl::team::mailbox::{self, SendRequest, Text};
use teamctl::team::protocol::{self, Verdict};

use crate::cli::answer;
use crate::cli::context::Ctx;
use crate::cli::signals;
use crate::cli::tui::app::{Answer, App, Effect};

/// How `top` runs.
#[derive(Clone, Copy)]
pub(crate) struct Options {
    /// Poll every so often instead of using file notifications.
    pub(crate) poll: Option<Duration>,
    /// A member with no event for this long is idle.
    pub(crate) idle_after: Duration,
    /// Colour (off under `NO_COLOR`).
    pub(crate) colors: bool,
    /// A member inside a turn whose transcript has not grown for this long is stalled.
    pub(crate) stall_after: Duration,
}

/// How often the clock ticks: liveness checks and the ages on screen, nothing else.
const TICK: Duration = Duration::from_secs(1);

/// A change in the transcripts refreshes the view at most this often (they are appended many
/// times a second while a member works).
pub(crate) const TRANSCRIPT_EVERY: Duration = Duration::from_millis(250);

/// How many events of a member's story the story view keeps (the oldest go first).
const STORY_LEN: usize = 5000;

/// What the loop reacts to.
enum Msg {
    Term(Event),
    TermGone(String),
    Files(Changes),
    /// Something changed in the transcripts' folders (what, in [`Pending`]).
    Transcripts,
    Signal,
    Done(Result<String, String>),
    /// A member's story, read ([`open_story`]).
    Story(String, Box<(Option<MemberLog>, app::Story)>),
}

/// The transcript changes the watcher saw and the loop has not read yet. The watcher tells the
/// loop once ([`Msg::Transcripts`]) until the loop takes them: a transcript appended twenty
/// times a second wakes the loop only when it reads.
#[derive(Default)]
struct Pending {
    /// The loop was told and has not taken them yet.
    told: bool,
    /// The paths notified.
    paths: BTreeSet<PathBuf>,
    /// Nothing says which (polling, lost notifications).
    unknown: bool,
}

/// Takes what the watcher saw; whether a file nobody owns yet is among it.
fn take(pending: &Mutex<Pending>, reader: &TeamReader) -> bool {
    let mut p = pending.lock().unwrap_or_else(PoisonError::into_inner);
    let p = std::mem::take(&mut *p);
    p.unknown || p.paths.iter().any(|path| !reader.knows(path))
}

/// Moves the start of the transcript window after a read that found the transcripts `grew` (or
/// not). It runs from the last read that found something, so that the read after the close
/// that follows a write (which finds nothing) does not delay the next write's; a second read
/// in a row that finds nothing starts it too (a file in a watched folder that is nobody's,
/// appended all the time, is read at most every [`TRANSCRIPT_EVERY`]).
fn window(start: &mut Instant, found_last: &mut bool, grew: bool) {
    if grew || !*found_last {
        *start = Instant::now();
    }
    *found_last = grew;
}

/// Tells the loop when the thread holding it ends by a panic (the panic hook has given the
/// terminal back by then; the loop must stop, not draw on the main screen).
struct Watchdog(mpsc::Sender<Msg>, &'static str);

impl Drop for Watchdog {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.0.send(Msg::TermGone(format!("{} panicked", self.1)));
        }
    }
}

/// The screen's data and how to renew it.
struct Live<'c> {
    ctx: &'c Ctx,
    /// The team, its transcripts and what teamctl sent, read again on every refresh.
    reader: TeamReader,
    app: App,
    idle_after: Duration,
    stall_after: Duration,
    /// The story being shown, read as it grows.
    story: Option<MemberLog>,
    /// Whose story is shown or being read.
    story_of: Option<String>,
    /// Whether the last refresh found the transcripts grown.
    grew: bool,
}

impl<'c> Live<'c> {
    fn new(ctx: &'c Ctx, team: Team, timeline: Timeline, opts: &Options) -> Result<Live<'c>> {
        let read = reader::Options {
            idle_after: opts.idle_after,
            stall_after: opts.stall_after,
            ..reader::Options::default()
        };
        let mut reader = TeamReader::of(team, ctx.records(), read);
        let present = reader.read_opened(ctx.clock())?;
        let view = top::view(
            &present,
            reader.team(),
            reader.board(),
            &timeline,
            TIMELINE_LEN,
        );
        let team = reader.team();
        let mut app = App::new(view, timeline, ctx.identity(team), opts.colors);
        app.refusal = refusal(team);
        Ok(Live {
            ctx,
            reader,
            app,
            idle_after: opts.idle_after,
            stall_after: opts.stall_after,
            story: None,
            story_of: None,
            grew: false,
        })
    }

    /// Reads the team again (its config may have changed), what its transcripts gained, and
    /// computes a new view. Returns whether anything on screen changed.
    fn refresh(&mut self) -> bool {
        let before = self.reader.spend().map(|s| s.spend().clone());
        let changed = match top::read(
            &mut self.reader,
            &self.app.timeline,
            self.ctx.clock(),
            TIMELINE_LEN,
        ) {
            Ok(v) => {
                let changed = self.app.trouble.is_some() || v != self.app.view;
                self.app.trouble = None;
                if changed {
                    self.app.set_view(v);
                }
                changed
            }
            Err(e) => {
                let trouble = Some(format!("{e:#}"));
                let changed = self.app.trouble != trouble;
                self.app.trouble = trouble;
                return changed;
            }
        };
        self.grew = self.reader.spend().map(|s| s.spend()) != before.as_ref();
        let team = self.reader.team();
        self.app.identity = self.ctx.identity(team);
        self.app.refusal = refusal(team);
        let story = self.read_story();
        self.grew |= story;
        changed | story
    }

    /// Opens or closes the story the screen asks for; returns whether it changed. A story is
    /// read on a thread of its own when the loop gave one (`opened`: a transcript of a hundred
    /// megabytes takes a while), the screen saying it is reading meanwhile.
    fn sync_story(&mut self, opened: Option<&mpsc::Sender<Msg>>) -> bool {
        let wanted = match self.app.beneath() {
            app::Mode::Story { member, .. } => Some(member.clone()),
            _ => None,
        };
        if wanted == self.story_of {
            return false;
        }
        self.story = None;
        self.app.story = None;
        self.story_of.clone_from(&wanted);
        let Some(member) = wanted else {
            return true;
        };
        let team = self.reader.team().clone();
        match opened {
            Some(tx) => {
                let tx = tx.clone();
                let dog = Watchdog(tx.clone(), "the story reader");
                std::thread::spawn(move || {
                    let _dog = dog;
                    let read = open_story(team, &member);
                    let _ = tx.send(Msg::Story(member, Box::new(read)));
                });
            }
            None => {
                let read = open_story(team, &member);
                self.opened(&member, read);
            }
        }
        true
    }

    /// A story read ([`open_story`]), shown if the screen still asks for it.
    fn opened(&mut self, member: &str, read: (Option<MemberLog>, app::Story)) {
        if self.story_of.as_deref() == Some(member) {
            self.story = read.0;
            self.app.story = Some(read.1);
        }
    }

    /// Reads what the story's transcripts gained; returns whether anything did.
    fn read_story(&mut self) -> bool {
        let (Some(log), Some(shown)) = (self.story.as_mut(), self.app.story.as_mut()) else {
            return false;
        };
        let mut added = 0;
        log.poll(&mut |l| {
            shown.lines.push_back(l);
            added += 1;
        });
        while shown.lines.len() > STORY_LEN {
            shown.lines.pop_front();
        }
        let warnings = log.take_warnings();
        let files = log.files().len();
        let changed = added > 0 || !warnings.is_empty() || files != shown.files;
        shown.warnings.extend(warnings);
        shown.files = files;
        // Scrolled up, the lines on screen stay where they are.
        if let app::Mode::Story { scroll, .. } = &mut self.app.mode
            && *scroll > 0
        {
            *scroll += added;
        }
        changed
    }

    /// The folders whose changes should wake the loop besides the team's own: the transcripts'
    /// (as the reader found them, `projects/` itself among them) and the story's.
    fn transcript_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.reader.transcript_dirs();
        if let Some(log) = &self.story {
            dirs.extend(log.dirs());
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// The clock's tick: whether anything that no file tells about changed (a pane died, the
    /// lead's process ended, a member's last event aged past the idle threshold, a member inside
    /// a turn went quiet for the stall threshold).
    fn tick(&mut self) -> bool {
        let panes = self.reader.probe();
        let lead_alive = self
            .reader
            .team()
            .config
            .as_ref()
            .and_then(|c| c.lead_process.as_ref())
            .and_then(|p| pid_alive(p.pid, p.proc_start.as_deref()));
        let changed = panes || lead_alive != self.app.view.team.lead_alive;
        let now = self.ctx.clock();
        let aged = self
            .app
            .view
            .next_change(self.idle_after)
            .is_some_and(|t| now >= t);
        let members = self.reader.spend().map(|s| &s.spend().members);
        let stalled = members.into_iter().flatten().any(|(name, m)| {
            m.stalled(now, self.stall_after)
                && self
                    .app
                    .view
                    .member(name)
                    .is_some_and(|r| r.waiting.is_none())
        });
        changed || aged || stalled
    }
}

/// Why answering as team-lead is refused in `team`, the words `approve` uses.
fn refusal(team: &Team) -> Option<String> {
    answer::check_lead(team, false).err().map(|e| {
        format!("{e:#}").replace(
            " (--force writes anyway)",
            " (`teamctl approve --force` writes anyway)",
        )
    })
}

/// `member`'s story in `team`: its log, followed from here on, and what it holds so far (the
/// last [`STORY_LEN`] events), or why there is none.
fn open_story(team: Team, member: &str) -> (Option<MemberLog>, app::Story) {
    let mut shown = app::Story {
        member: member.to_string(),
        lines: VecDeque::new(),
        error: None,
        warnings: Vec::new(),
        files: 0,
    };
    match MemberLog::open(team, member) {
        Ok(mut log) => {
            let _ = log.history(
                Filter {
                    since: None,
                    last: Some(STORY_LEN),
                },
                &mut |l: &LogLine| {
                    shown.lines.push_back(l.clone());
                    Ok(())
                },
            );
            shown.files = log.files().len();
            shown.warnings = log.take_warnings();
            (Some(log), shown)
        }
        Err(e) => {
            shown.error = Some(format!("{e:#}"));
            (None, shown)
        }
    }
}

/// The timeline at start: what teamctl sent, then what the inboxes hold.
fn first_timeline(ctx: &Ctx, team: &Team, existing: &Changes) -> Timeline {
    let mut timeline = Timeline::new(TIMELINE_LEN);
    timeline.seed_sent(team.name.as_str(), &ctx.sent());
    timeline.load(existing);
    timeline
}

/// One frame as plain text, `width` wide and `height` tall (`None`: tall enough for
/// everything), and the warnings of the files that could not be read.
pub(crate) fn once(
    ctx: &Ctx,
    team: Team,
    opts: &Options,
    width: u16,
    height: Option<u16>,
) -> Result<(String, Vec<String>)> {
    let live = snapshot(ctx, team, opts)?;
    let height = height.unwrap_or_else(|| render::natural_height(&live.app, 10));
    Ok((
        frame_text(&live.app, ctx.clock(), width, height),
        live.app.view.warnings.clone(),
    ))
}

/// The team read once, as a live screen would start (no colour), the transcript index saved.
fn snapshot<'a>(ctx: &'a Ctx, team: Team, opts: &Options) -> Result<Live<'a>> {
    let (_, existing) = Watch::new(team.clone(), None, ctx.clock());
    let timeline = first_timeline(ctx, &team, &existing);
    let mut live = Live::new(
        ctx,
        team,
        timeline,
        &Options {
            colors: false,
            ..*opts
        },
    )?;
    // A cache: a failure to save it only makes the next read longer.
    let _ = live.reader.save();
    Ok(live)
}

/// The view model as `top --json` prints it.
pub(crate) fn view(ctx: &Ctx, team: Team, opts: &Options) -> Result<top::View> {
    let live = snapshot(ctx, team, opts)?;
    Ok(live.app.view)
}

/// `app` drawn at `width` x `height`, as text.
pub(crate) fn frame_text(app: &App, now: DateTime<Utc>, width: u16, height: u16) -> String {
    let mut term = match Terminal::new(TestBackend::new(width.max(20), height.max(6))) {
        Ok(t) => t,
        Err(e) => match e {},
    };
    let Ok(done) = term.draw(|f| render::draw(f, app, now));
    render::text(done.buffer)
}

/// The live view, until `q`, Ctrl-C or a signal.
pub(crate) fn run(ctx: &Ctx, team: Team, opts: &Options) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Msg>();
    let (mut watch, existing) = Watch::new(team.clone(), None, ctx.clock());
    let timeline = first_timeline(ctx, &team, &existing);
    let mut waker = watch.waker(opts.poll);
    waker.set_idle_wake(TICK);
    let mut live = Live::new(ctx, team, timeline, opts)?;
    // The transcripts' folders wake the loop too; new ones are handed to the watcher thread.
    let (dirs_tx, dirs_rx) = mpsc::channel::<PathBuf>();
    let mut watched: BTreeSet<PathBuf> = BTreeSet::new();
    for d in live.transcript_dirs() {
        watched.insert(d.clone());
        waker.add(&d);
    }
    // What changed before the watches were in place.
    let missed = watch.rescan(ctx.clock());
    live.app.timeline.apply(&missed);
    live.refresh();
    let pending = Arc::new(Mutex::new(Pending::default()));
    spawn_watcher(
        watch,
        waker,
        dirs_rx,
        &tx,
        Arc::clone(&pending),
        ctx.clock_fn(),
    );

    // From here a signal is a message to the loop, which gives the terminal back first.
    let wake = tx.clone();
    signals::notify(Box::new(move || {
        let _ = wake.send(Msg::Signal);
    }));
    let mut screen = terminal::Screen::take().context("could not set up the terminal")?;
    spawn_keys(&tx);
    let mut l = Loop {
        ctx,
        live: &mut live,
        tx: &tx,
        pending: &pending,
        dirs_tx: &dirs_tx,
        watched,
        next_tick: Instant::now() + TICK,
        transcripts_due: None,
        transcripts_read: Instant::now(),
        found_last: true,
        dirty: true,
    };
    let result = std::thread::scope(|scope| l.run(&rx, &mut screen, scope));
    // The terminal first (raw mode off, main screen, cursor), then what a signal asks for.
    drop(screen);
    let _ = live.reader.save();
    if signals::received() {
        teamctl::store::lock::drain(std::time::Duration::from_secs(5));
    }
    result
}

/// File changes, on a thread of their own (it blocks on the notifications): changes to the
/// team's files go to the loop as they come; transcript changes are noted in `pending` and the
/// loop told once until it takes them.
fn spawn_watcher(
    mut watch: Watch,
    mut waker: teamctl::observe::watch::Waker,
    dirs_rx: mpsc::Receiver<PathBuf>,
    tx: &mpsc::Sender<Msg>,
    pending: Arc<Mutex<Pending>>,
    clock: impl Fn() -> DateTime<Utc> + Send + 'static,
) {
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
fn spawn_keys(tx: &mpsc::Sender<Msg>) {
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
struct Loop<'a, 'c> {
    ctx: &'c Ctx,
    live: &'a mut Live<'c>,
    tx: &'a mpsc::Sender<Msg>,
    pending: &'a Mutex<Pending>,
    dirs_tx: &'a mpsc::Sender<PathBuf>,
    /// The transcript folders the watcher was given.
    watched: BTreeSet<PathBuf>,
    next_tick: Instant,
    /// A transcript change waiting for its turn, and when a read last found one.
    transcripts_due: Option<Instant>,
    transcripts_read: Instant,
    found_last: bool,
    dirty: bool,
}

/// What the loop does after a message.
enum Flow {
    Go,
    Quit,
}

impl<'c> Loop<'_, 'c> {
    /// Draws, waits for messages and handles them, until `q`, a signal or a failure.
    fn run<'s>(
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
                // At most every TRANSCRIPT_EVERY: a burst of appends is one read.
                let due = (self.transcripts_read + TRANSCRIPT_EVERY).max(Instant::now());
                self.transcripts_due = Some(due);
            }
        }
    }

    /// The clock's tick, also when changes keep coming faster than it: the ages on screen
    /// move, so it draws.
    fn clock(&mut self) {
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
    fn read_transcripts(&mut self) {
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

    fn hand_dirs(&mut self) {
        for d in self.live.transcript_dirs() {
            if self.watched.insert(d.clone()) {
                let _ = self.dirs_tx.send(d);
            }
        }
    }

    /// One message other than a file change.
    fn handle<'s>(&mut self, msg: Msg, scope: &'s std::thread::Scope<'s, '_>) -> Result<Flow>
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
    fn act<'s>(&mut self, effect: Effect, scope: &'s std::thread::Scope<'s, '_>)
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
fn send(ctx: &Ctx, team: &Team, to: &str, text: String) -> Result<String, String> {
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
        let d = mailbox::send(team, &req, ctx.clock(), &ctx.lock, ctx.sent_log.as_ref())?;
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
fn reply(ctx: &Ctx, team: &Team, a: &Answer) -> Result<String, String> {
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
        let (request, _, d) = protocol::answer(
            team,
            &lead,
            &a.id,
            &verdict,
            ctx.clock(),
            &ctx.lock,
            ctx.sent_log.as_ref(),
        )?;
        Ok(answer::line(&verdict, &request, &d))
    };
    go().map_err(|e| format!("{e:#}"))
}

/// A team on screen without files: three members, a blocked task, a request, hostile text.
#[cfg(test)]
pub(crate) mod fixture {
    use serde_json::json;
    use teamctl::observe::status::{State, TaskCounts};
    use teamctl::observe::top::{
        Card, Columns, Delivery, Header, MemberRow, Message, RequestRow, Timeline, View,
    };
    use teamctl::team::model::Frame;
    use teamctl::team::protocol::{Kind, Request};
    use teamctl::team::transcript::{Activity, Tokens};

    use super::app::App;

    pub(crate) const NOW: &str = "2026-11-29T10:00:30.000Z";

    pub(crate) fn now() -> chrono::DateTime<chrono::Utc> {
        NOW.parse().unwrap()
    }

    fn member(name: &str, lead: bool, state: State, color: Option<&str>) -> MemberRow {
        MemberRow {
            name: name.into(),
            lead,
            color: color.map(String::from),
            state,
            waiting: None,
            waiting_detail: None,
            doing: None,
            activity: None,
            cost_usd: None,
            cost_source: None,
            tokens: None,
            unread: 0,
            tasks_in_progress: 0,
            tasks_owned: 0,
            last_event_at: Some("2026-11-29T10:00:00.000Z".into()),
            last_event_kind: Some("message".into()),
            process_alive: None,
            in_config: true,
            context: None,
            worktree: None,
        }
    }

    pub(crate) fn message(from: &str, to: &str, text: &str, at: &str, d: Delivery) -> Message {
        Message {
            at: at.into(),
            from: from.into(),
            to: to.into(),
            id: format!("{from}-{at}"),
            frame: Frame::decode(text).map(|f| f.frame_type),
            preview: Frame::decode(text).map_or_else(
                || teamctl::team::model::first_line(text, 80),
                |f| teamctl::observe::top::frame_summary(&f),
            ),
            text: Some(text.into()),
            delivery: d,
            source: "inbox",
        }
    }

    fn activity(at: &str, tool: Option<&str>, summary: &str) -> Activity {
        Activity {
            at: Some(at.into()),
            kind: if tool.is_some() { "tool_use" } else { "text" }.into(),
            tool: tool.map(String::from),
            summary: summary.into(),
        }
    }

    pub(crate) fn view() -> View {
        let mut lead = member("team-lead", true, State::Active, None);
        let a = activity("2026-11-29T10:00:10.000Z", None, "Waiting for alice's fix");
        lead.doing = Some(teamctl::observe::top::doing(&a));
        lead.activity = Some(a);
        lead.cost_usd = Some(1.2);
        lead.tokens = Some(Tokens {
            input: 1000,
            ..Tokens::default()
        });
        let mut alice = member("alice", false, State::Active, Some("blue"));
        let a = activity("2026-11-29T10:00:25.000Z", Some("Bash"), "npm test");
        alice.doing = Some(teamctl::observe::top::doing(&a));
        alice.activity = Some(a);
        alice.cost_usd = Some(0.42);
        alice.tokens = Some(Tokens {
            input: 500,
            ..Tokens::default()
        });
        alice.waiting = Some("permission".into());
        alice.unread = 2;
        alice.tasks_in_progress = 1;
        alice.tasks_owned = 1;
        alice.process_alive = Some(true);
        let mut bob = member("bob", false, State::Idle, Some("green"));
        bob.waiting = Some("blocked".into());
        bob.tasks_owned = 1;
        bob.last_event_at = Some("2026-11-29T09:40:00.000Z".into());
        let frame = json!({"type": "permission_request", "request_id": "perm-1-abc",
            "agent_id": "alice", "tool_name": "Bash", "tool_use_id": "toolu_1",
            "description": "Run the tests", "input": {"command": "npm test"}});
        let request = Request {
            request_id: "perm-1-abc".into(),
            kind: Kind::Permission,
            from: "alice".into(),
            at: "2026-11-29T10:00:20.000Z".into(),
            age_seconds: 10,
            tool_name: Some("Bash".into()),
            description: Some("Run the tests".into()),
            input: Some(json!({"command": "npm test"})),
            plan_file_path: None,
            plan_content: None,
            host: None,
            frame: Frame::decode(&frame.to_string()).unwrap(),
        };
        let card = |id: &str, subject: &str, owner: Option<&str>, blocked: &[&str]| Card {
            id: id.into(),
            subject: subject.into(),
            owner: owner.map(String::from),
            active_form: None,
            blocked_by: blocked.iter().map(|s| s.to_string()).collect(),
        };
        View {
            team: Header {
                name: "demo".into(),
                description: None,
                lead: Some("team-lead".into()),
                lead_alive: Some(true),
                teamctl_leads: true,
                created_at: Some("2026-11-29T08:00:00.000Z".into()),
                cost_usd: Some(1.62),
                tokens: Some(Tokens {
                    input: 1500,
                    ..Tokens::default()
                }),
                last_change_at: Some("2026-11-29T10:00:20.000Z".into()),
            },
            members: vec![lead, alice, bob],
            tasks: Columns {
                pending: vec![card("3", "Ship it", Some("bob"), &["2"])],
                in_progress: vec![card("2", "Fix the race", Some("alice"), &[])],
                completed: vec![card("1", "Find the race", Some("alice"), &[])],
                counts: TaskCounts::default(),
            },
            messages: vec![
                message(
                    "team-lead",
                    "alice",
                    "Please fix the race",
                    "2026-11-29T10:00:00.000Z",
                    Delivery::Delivered,
                ),
                message(
                    "alice",
                    "team-lead",
                    &frame.to_string(),
                    "2026-11-29T10:00:20.000Z",
                    Delivery::Unread,
                ),
            ],
            requests: vec![RequestRow {
                request_id: "perm-1-abc".into(),
                kind: Kind::Permission,
                from: "alice".into(),
                at: "2026-11-29T10:00:20.000Z".into(),
                summary: "Bash: npm test".into(),
                request,
            }],
            warnings: Vec::new(),
        }
    }

    pub(crate) fn app() -> App {
        App::new(view(), Timeline::new(100), "team-lead".into(), true)
    }
}
