//! `teamctl top`'s screen: the event loop (file changes, keys, resizes, signals, the results of
//! actions, a one-second clock for liveness and ages), the actions (a message, an answer) run
//! off the loop so a busy lock never freezes the screen, and the one-frame `--once` rendering.
//! The data comes from [`teamctl::observe::top`]; [`app`] holds the state, [`render`] draws.

pub(crate) mod app;
pub(crate) mod render;
mod terminal;

use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use crossterm::event::Event;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use teamctl::host::proc::pid_alive;
use teamctl::host::tmux::Liveness;
use teamctl::observe::top::{self, Inputs, TIMELINE_LEN, Timeline};
use teamctl::observe::watch::{Changes, Watch};
use teamctl::store::paths::{MemberName, TeamName};
use teamctl::team::config::{LEAD, Team};
use teamctl::team::mailbox::{self, SendRequest, Text};
use teamctl::team::protocol::{self, Verdict};
use teamctl::team::sentlog::Sent;

use crate::cli::answer;
use crate::cli::context::Ctx;
use crate::cli::signals;
use crate::cli::tui::app::{Answer, App, Effect};

/// How `top` runs.
pub(crate) struct Options {
    /// Poll every so often instead of using file notifications.
    pub(crate) poll: Option<Duration>,
    /// A member with no event for this long is idle.
    pub(crate) idle_after: Duration,
    /// Colour (off under `NO_COLOR`).
    pub(crate) colors: bool,
}

/// How often the clock ticks: liveness checks and the ages on screen, nothing else.
const TICK: Duration = Duration::from_secs(1);

/// What the loop reacts to.
enum Msg {
    Term(Event),
    TermGone(String),
    Files(Changes),
    Signal,
    Done(Result<String, String>),
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

/// teamctl's sent log, re-read only when the file changed (it can hold megabytes).
struct SentCache {
    stamp: Option<(SystemTime, u64)>,
    entries: Vec<Sent>,
}

impl SentCache {
    fn get(&mut self, ctx: &Ctx) -> &[Sent] {
        let stamp = ctx
            .sent_log
            .as_ref()
            .and_then(|l| std::fs::metadata(l.path()).ok())
            .and_then(|m| Some((m.modified().ok()?, m.len())));
        if stamp.is_none() || stamp != self.stamp {
            self.entries = ctx.sent();
            self.stamp = stamp;
        }
        &self.entries
    }
}

/// The screen's data and how to renew it.
struct Live<'c> {
    ctx: &'c Ctx,
    name: TeamName,
    team: Team,
    app: App,
    sent: SentCache,
    live: Liveness,
    idle_after: Duration,
}

impl<'c> Live<'c> {
    fn new(
        ctx: &'c Ctx,
        team: Team,
        timeline: Timeline,
        colors: bool,
        idle_after: Duration,
    ) -> Result<Live<'c>> {
        let mut sent = SentCache {
            stamp: None,
            entries: Vec::new(),
        };
        let live = top::liveness(&team);
        let view = top::view(
            &team,
            &timeline,
            ctx.clock(),
            &Inputs {
                idle_after,
                live: &live,
                sent: sent.get(ctx),
                messages: TIMELINE_LEN,
            },
        )?;
        let mut app = App::new(view, timeline, ctx.identity(&team), colors);
        app.refusal = refusal(&team);
        Ok(Live {
            ctx,
            name: team.name.clone(),
            team,
            app,
            sent,
            live,
            idle_after,
        })
    }

    /// Reads the team again (its config may have changed) and computes a new view.
    fn refresh(&mut self) {
        let team = match Team::open(&self.ctx.layout, &self.name, self.ctx.leads.as_ref()) {
            Ok(t) => t,
            Err(e) => {
                self.app.trouble = Some(format!("{e:#}"));
                return;
            }
        };
        let inputs = Inputs {
            idle_after: self.idle_after,
            live: &self.live,
            sent: self.sent.get(self.ctx),
            messages: TIMELINE_LEN,
        };
        match top::view(&team, &self.app.timeline, self.ctx.clock(), &inputs) {
            Ok(v) => {
                self.app.trouble = None;
                self.app.set_view(v);
            }
            Err(e) => self.app.trouble = Some(format!("{e:#}")),
        }
        self.app.identity = self.ctx.identity(&team);
        self.app.refusal = refusal(&team);
        self.team = team;
    }

    /// The clock's tick: whether anything that no file tells about changed (a pane died, the
    /// lead's process ended, a member's last event aged past the idle threshold).
    fn tick(&mut self) -> bool {
        let live = top::liveness(&self.team);
        let lead_alive = self
            .team
            .config
            .as_ref()
            .and_then(|c| c.lead_process.as_ref())
            .and_then(|p| pid_alive(p.pid, p.proc_start.as_deref()));
        let changed =
            live.tmux_panes != self.live.tmux_panes || lead_alive != self.app.view.team.lead_alive;
        self.live = live;
        let aged = self
            .app
            .view
            .next_change(self.idle_after)
            .is_some_and(|t| self.ctx.clock() >= t);
        changed || aged
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

/// The timeline at start: what teamctl sent, then what the inboxes hold.
fn first_timeline(ctx: &Ctx, team: &Team, existing: &Changes) -> Timeline {
    let mut timeline = Timeline::new(TIMELINE_LEN);
    timeline.seed_sent(team.name.as_str(), &ctx.sent());
    timeline.load(existing);
    timeline
}

/// One frame as plain text, `width` wide and `height` tall (`None`: tall enough for
/// everything).
pub(crate) fn once(
    ctx: &Ctx,
    team: Team,
    opts: &Options,
    width: u16,
    height: Option<u16>,
) -> Result<String> {
    let (_, existing) = Watch::new(team.clone(), None, ctx.clock());
    let timeline = first_timeline(ctx, &team, &existing);
    let live = Live::new(ctx, team, timeline, false, opts.idle_after)?;
    let height = height.unwrap_or_else(|| render::natural_height(&live.app, 10));
    Ok(frame_text(&live.app, ctx.clock(), width, height))
}

/// The view model as `top --json` prints it.
pub(crate) fn view(ctx: &Ctx, team: Team, opts: &Options) -> Result<top::View> {
    let (_, existing) = Watch::new(team.clone(), None, ctx.clock());
    let timeline = first_timeline(ctx, &team, &existing);
    Ok(Live::new(ctx, team, timeline, false, opts.idle_after)?
        .app
        .view)
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
    let mut live = Live::new(ctx, team, timeline, opts.colors, opts.idle_after)?;
    // What changed before the watches were in place.
    let missed = watch.rescan(ctx.clock());
    live.app.timeline.apply(&missed);
    live.refresh();

    // File changes, on a thread of their own (it blocks on the notifications).
    let clock = ctx.clock_fn();
    let files = tx.clone();
    let dog = Watchdog(tx.clone(), "the file watcher");
    std::thread::spawn(move || {
        let _dog = dog;
        loop {
            let changes = watch.next(&mut waker, TICK, &clock);
            if crate::cli::context::TEST_PANIC.load(Ordering::SeqCst) && !changes.events.is_empty()
            {
                panic!("TEAMCTL_TEST_FAULTS=top_panic: a change");
            }
            if (!changes.events.is_empty() || !changes.warnings.is_empty())
                && files.send(Msg::Files(changes)).is_err()
            {
                break;
            }
        }
    });

    // From here a signal is a message to the loop, which gives the terminal back first.
    let wake = tx.clone();
    signals::notify(Box::new(move || {
        let _ = wake.send(Msg::Signal);
    }));
    let mut screen = terminal::Screen::take().context("could not set up the terminal")?;
    // Keys and resizes, on a thread of their own (it blocks on the terminal).
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

    let result = std::thread::scope(|scope| -> Result<()> {
        let mut next_tick = Instant::now() + TICK;
        loop {
            if !terminal::taken() {
                anyhow::bail!("top stopped: a panic gave the terminal back");
            }
            // The clock's tick, also when changes keep coming faster than it.
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + TICK;
                if live.tick() {
                    live.refresh();
                }
            }
            let now = ctx.clock();
            screen
                .terminal
                .draw(|f| render::draw(f, &live.app, now))
                .context("could not draw on the terminal")?;
            let first = match rx.recv_timeout(next_tick.saturating_duration_since(Instant::now())) {
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
            let mut changed = false;
            for msg in batch {
                match msg {
                    Msg::Files(c) => {
                        live.app.timeline.apply(&c);
                        changed = true;
                    }
                    Msg::Term(Event::Key(k)) => match live.app.key(k) {
                        Effect::None => {}
                        Effect::Quit => return Ok(()),
                        Effect::Send { to, text } => {
                            live.app.busy = Some(format!("sending to {to}…"));
                            let done = tx.clone();
                            let team = live.team.clone();
                            let dog = Watchdog(tx.clone(), "sending");
                            scope.spawn(move || {
                                let _dog = dog;
                                let _ = done.send(Msg::Done(send(ctx, &team, &to, text)));
                            });
                        }
                        Effect::Answer(a) => {
                            live.app.busy = Some(format!(
                                "{} {}…",
                                if a.approve { "approving" } else { "denying" },
                                a.id
                            ));
                            let done = tx.clone();
                            let team = live.team.clone();
                            let dog = Watchdog(tx.clone(), "answering");
                            scope.spawn(move || {
                                let _dog = dog;
                                let _ = done.send(Msg::Done(reply(ctx, &team, &a)));
                            });
                        }
                    },
                    Msg::Term(Event::Paste(text)) => live.app.paste(&text),
                    // A resize is drawn by the next frame (ratatui resizes its buffers).
                    Msg::Term(_) => {}
                    Msg::TermGone(e) if !terminal::taken() => anyhow::bail!("top stopped: {e}"),
                    Msg::TermGone(e) => anyhow::bail!("lost the terminal: {e}"),
                    Msg::Signal => return Ok(()),
                    Msg::Done(r) => {
                        live.app.busy = None;
                        match r {
                            Ok(line) => live.app.say(&line, false),
                            Err(e) => live.app.say(&e, true),
                        }
                        // The write shows as a file change too; the notice needs no refresh.
                    }
                }
            }
            if changed {
                live.refresh();
            }
        }
    });
    // The terminal first (raw mode off, main screen, cursor), then what a signal asks for.
    drop(screen);
    if signals::received() {
        teamctl::store::lock::drain(std::time::Duration::from_secs(5));
    }
    result
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
            doing: None,
            cost_usd: None,
            unread: 0,
            tasks_in_progress: 0,
            tasks_owned: 0,
            last_event_at: Some("2026-11-29T10:00:00.000Z".into()),
            last_event_kind: Some("message".into()),
            process_alive: None,
            in_config: true,
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

    pub(crate) fn view() -> View {
        let mut alice = member("alice", false, State::Active, Some("blue"));
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
                cost_usd: None,
                last_change_at: Some("2026-11-29T10:00:20.000Z".into()),
            },
            members: vec![member("team-lead", true, State::Active, None), alice, bob],
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
