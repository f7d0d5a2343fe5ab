//! `teamctl top`'s screen: the event loop (`event_loop.rs`: file changes, keys, resizes, signals,
//! the results of actions, a one-second clock for liveness and ages), the actions (a message, an
//! answer) run off the loop so a busy lock never freezes the screen, and the team as shown
//! (`live.rs`, with the one-frame `--once` rendering). The data comes from
//! [`teamctl::observe::top`]; [`app`] holds the state, [`render`] draws. This face starts it all
//! ([`run`]).
//!
//! The team is read through one `TeamReader`, kept for the whole session: a refresh parses only
//! the inboxes that changed and what the transcripts gained. Their folders wake the loop too, but
//! a transcript is appended many times a second while its member works: a change there refreshes
//! at most every `TRANSCRIPTS_EVERY` (a message or a task change still refreshes at once), and a
//! frame is drawn only when something on it changed.

pub(crate) mod app;
mod event_loop;
mod live;
pub(crate) mod render;
mod terminal;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use teamctl::observe::watch::Watch;
use teamctl::team::config::Team;

use crate::cli::context::Ctx;
use crate::cli::signals;

use event_loop::*;
use live::*;

pub(crate) use live::{Options, once, view};

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
    let watcher = Watcher {
        watch,
        waker,
        dirs_rx,
        tx: &tx,
        pending: Arc::clone(&pending),
    };
    spawn_watcher(watcher, ctx.clock_fn());

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

/// A team on screen without files: three members, a blocked task, a request, hostile text.
#[cfg(test)]
pub(crate) mod fixture {
    use serde_json::json;
    use teamctl::observe::status::{State, TaskCounts};
    use teamctl::observe::timeline::{Delivery, Mail, Timeline};
    use teamctl::observe::top::{Card, Columns, Header, MemberRow, RequestRow, View};
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

    pub(crate) fn message(from: &str, to: &str, text: &str, at: &str, d: Delivery) -> Mail {
        Mail {
            at: at.into(),
            from: from.into(),
            to: to.into(),
            id: format!("{from}-{at}"),
            frame: Frame::decode(text).map(|f| f.frame_type),
            preview: Frame::decode(text).map_or_else(
                || teamctl::team::model::first_line(text, 80),
                |f| teamctl::observe::timeline::frame_summary(&f),
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
