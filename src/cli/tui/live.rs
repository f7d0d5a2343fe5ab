//! The team as `top` shows it: one [`Live`] keeps the reader and the view, refreshed on a change,
//! and the one-frame `--once` and `--json` reads.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::{self};
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use teamctl::observe::log::{Filter, LogLine, MemberLog};
use teamctl::observe::reader::{self, TeamReader};
use teamctl::observe::timeline::{TIMELINE_LEN, Timeline};
use teamctl::observe::top;
use teamctl::observe::watch::{Changes, Watch};
use teamctl::team::config::Team;

use crate::cli::answer;
use crate::cli::context::Ctx;
use crate::cli::tui::app::App;

use super::{app, render};

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

/// `app` drawn at `width` x `height`, as text.
pub(crate) fn frame_text(app: &App, now: DateTime<Utc>, width: u16, height: u16) -> String {
    let mut term = match Terminal::new(TestBackend::new(width.max(20), height.max(6))) {
        Ok(t) => t,
        Err(e) => match e {},
    };
    let Ok(done) = term.draw(|f| render::draw(f, app, now));
    render::text(done.buffer)
}

/// What the loop reacts to.
pub(super) enum Msg {
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

/// Tells the loop when the thread holding it ends by a panic (the panic hook has given the
/// terminal back by then; the loop must stop, not draw on the main screen).
pub(super) struct Watchdog(pub(super) mpsc::Sender<Msg>, pub(super) &'static str);

impl Drop for Watchdog {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.0.send(Msg::TermGone(format!("{} panicked", self.1)));
        }
    }
}

/// How many events of a member's story the story view keeps (the oldest go first).
pub(super) const STORY_LEN: usize = 5000;

/// The screen's data and how to renew it.
pub(super) struct Live<'c> {
    pub(super) ctx: &'c Ctx,
    /// The team, its transcripts and what teamctl sent, read again on every refresh.
    pub(super) reader: TeamReader,
    pub(super) app: App,
    /// The story being shown, read as it grows.
    pub(super) story: Option<MemberLog>,
    /// Whose story is shown or being read.
    pub(super) story_of: Option<String>,
    /// Whether the last refresh found the transcripts grown.
    pub(super) grew: bool,
}

impl<'c> Live<'c> {
    pub(super) fn new(
        ctx: &'c Ctx,
        team: Team,
        timeline: Timeline,
        opts: &Options,
    ) -> Result<Live<'c>> {
        let read = reader::Options {
            idle_after: opts.idle_after,
            stall_after: opts.stall_after,
            ..reader::Options::default()
        };
        let mut reader = TeamReader::of(team, ctx.records.clone(), read);
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
            story: None,
            story_of: None,
            grew: false,
        })
    }

    /// Reads the team again (its config may have changed), what its transcripts gained, and
    /// computes a new view. Returns whether anything on screen changed.
    pub(super) fn refresh(&mut self) -> bool {
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
    pub(super) fn sync_story(&mut self, opened: Option<&mpsc::Sender<Msg>>) -> bool {
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
    pub(super) fn opened(&mut self, member: &str, read: (Option<MemberLog>, app::Story)) {
        if self.story_of.as_deref() == Some(member) {
            self.story = read.0;
            self.app.story = Some(read.1);
        }
    }

    /// Reads what the story's transcripts gained; returns whether anything did.
    pub(super) fn read_story(&mut self) -> bool {
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
    pub(super) fn transcript_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = self.reader.transcript_dirs();
        if let Some(log) = &self.story {
            dirs.extend(log.dirs());
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// The clock's tick: whether anything that no file tells about changed
    /// ([`teamctl::observe::reader::TeamReader::changed_unseen`]).
    pub(super) fn tick(&mut self) -> bool {
        self.reader.changed_unseen(self.ctx.clock())
    }
}

/// Why answering as team-lead is refused in `team`, the words `approve` uses.
pub(super) fn refusal(team: &Team) -> Option<String> {
    answer::check_lead(team, false).err().map(|e| {
        format!("{e:#}").replace(
            " (--force writes anyway)",
            " (`teamctl approve --force` writes anyway)",
        )
    })
}

/// `member`'s story in `team`: its log, followed from here on, and what it holds so far (the
/// last [`STORY_LEN`] events), or why there is none.
pub(super) fn open_story(team: Team, member: &str) -> (Option<MemberLog>, app::Story) {
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
pub(super) fn first_timeline(ctx: &Ctx, team: &Team, existing: &Changes) -> Timeline {
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
pub(super) fn snapshot<'a>(ctx: &'a Ctx, team: Team, opts: &Options) -> Result<Live<'a>> {
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
