//! `run --bridge`: a chat beside a run. A run's team is led by Claude, whose teammates take
//! answers only from their own lead, so the chat does not answer their requests; it is told
//! what needs a person (a member gone or out of retries, through the bridge's own look at the
//! team; a cap warning and what teamctl did for a stuck member, as the run tells them; the
//! run's end with its state and cost), answers `status` and `say`, and takes the answer to a
//! permission prompt on the lead's own screen, which the run types into the lead's pane
//! ([`Desk::verdict`], see the monitor).
//!
//! The [`Desk`] is a thread of its own that owns the bridge and the chat and runs the chat's one
//! loop, `bridge`'s ([`crate::ops::chat::run`]), with the run plugged into its hooks: the
//! run's notes each round, the prompt's answer handed back. The run talks to it through
//! channels and never waits on the chat (but for the last post at the end).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::outcome::{Outcome, RunEvent};
use crate::host::claude::Dialog;
use crate::host::tmux;
use crate::ops::chat::render::{Part, Post, visible};
use crate::ops::chat::{Ahead, Bridge, Chat, Hooks, Outgoing, Record, Stop};
use crate::ops::dialogs::detect_dialog;
use crate::store::paths::TeamName;
use crate::team::protocol::Verdict;
use crate::text::is_control;

/// What the run tells the desk.
enum Note {
    /// The lead formed its team.
    Team(TeamName),
    /// Something to post.
    Post(Post),
    /// The lead's screen shows a permission prompt: its number ([`Desk::ask`]) and text.
    Prompt(u64, String),
    /// The prompt left the screen.
    Gone,
    /// The run ended: the last post.
    End(Post),
}

/// A chat beside a run (see the module docs).
pub struct Desk {
    tx: Sender<Note>,
    verdicts: Mutex<Receiver<(u64, Verdict)>>,
    /// The number of the last prompt asked.
    asked: AtomicU64,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Desk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Desk")
    }
}

/// The clock the desk's thread stamps with.
pub type Clock = Box<dyn Fn() -> DateTime<Utc> + Send>;

/// What the desk's thread owns.
struct Served {
    bridge: Bridge,
    chat: Box<dyn Chat + Send>,
    hooks: Box<dyn Hooks + Send>,
    clock: Clock,
}

impl Desk {
    /// Starts the desk's thread on `bridge` (made with [`crate::ops::chat::Scope::Run`]),
    /// posting through `chat`, reporting through `hooks`, stamping with `clock`.
    pub fn start(
        bridge: Bridge,
        chat: Box<dyn Chat + Send>,
        hooks: Box<dyn Hooks + Send>,
        clock: Clock,
    ) -> Desk {
        let (tx, notes) = mpsc::channel();
        let (answers, verdicts) = mpsc::channel();
        let served = Served {
            bridge,
            chat,
            hooks,
            clock,
        };
        let thread = thread::spawn(move || serve(served, notes, answers));
        Desk {
            tx,
            verdicts: Mutex::new(verdicts),
            asked: AtomicU64::new(0),
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Tells the desk of a run's event: its team, a cap warning, an action for a stuck member.
    pub fn tell(&self, e: &RunEvent) {
        let note = match e {
            RunEvent::TeamFormed(t) => Note::Team((*t).clone()),
            RunEvent::BudgetWarning(w) => Note::Post(Post {
                parts: vec![
                    Part::Ours("[run] spend warning: ".into()),
                    Part::Theirs(visible(&w.to_string(), false, 300)),
                ],
                code: None,
            }),
            RunEvent::Acted(a) => {
                let action = serde_json::to_value(a.action)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default();
                Note::Post(Post {
                    parts: vec![
                        Part::Ours(format!("[run] teamctl: {action} of ")),
                        Part::Theirs(visible(&a.stuck.member, false, 64)),
                        Part::Ours(": ".into()),
                        Part::Theirs(visible(&a.outcome, false, 300)),
                    ],
                    code: None,
                })
            }
            _ => return,
        };
        let _ = self.tx.send(note);
    }

    /// The lead's screen shows a permission prompt: post it with a code (once per prompt; the
    /// monitor calls this when it first sees one). Returns the prompt's number, which its
    /// answer carries ([`Desk::verdict`]).
    pub fn ask(&self, screen: &str) -> u64 {
        let n = self.asked.fetch_add(1, Ordering::SeqCst) + 1;
        let _ = self.tx.send(Note::Prompt(n, screen.to_string()));
        n
    }

    /// The prompt left the screen without an answer from the chat: retire its code.
    pub fn gone(&self) {
        let _ = self.tx.send(Note::Gone);
    }

    /// The chat's answer to a prompt, with that prompt's number, once given (taken once).
    pub fn verdict(&self) -> Option<(u64, Verdict)> {
        self.verdicts.lock().ok()?.try_recv().ok()
    }

    /// Posts the run's end (its state, why, its cost) and stops the desk, waiting for that
    /// last post (its retries are the chat's own, bounded).
    pub fn finish(&self, name: &str, outcome: &Outcome) {
        let _ = self.tx.send(Note::End(end_post(name, outcome)));
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(h) = handle {
            let _ = h.join();
        }
    }
}

/// The post at a run's end: `[run NAME] ended: STATE` and the first line of why, and its cost.
fn end_post(name: &str, o: &Outcome) -> Post {
    let cost = match o.spend.as_ref() {
        Some(s) => s.cost_usd.map_or("unknown".into(), crate::units::usd),
        None => "not read".into(),
    };
    let mut parts = vec![Part::Ours(format!(
        "[run {name}] ended: {} (cost {cost})",
        o.state.as_str()
    ))];
    if let Some(why) = o.reason.as_deref().and_then(|r| r.lines().next()) {
        parts.push(Part::Ours("\n".into()));
        parts.push(Part::Theirs(visible(why, false, 300)));
    }
    Post { parts, code: None }
}

/// The desk's thread: the chat's loop ([`crate::ops::chat::run`]) with the run plugged in,
/// until the run's end (or the run is gone).
fn serve(s: Served, notes: Receiver<Note>, answers: Sender<(u64, Verdict)>) {
    let Served {
        mut bridge,
        mut chat,
        hooks,
        clock,
    } = s;
    let mut plug = Plug {
        hooks,
        notes,
        answers,
        screen: None,
    };
    if let Err(e) = crate::ops::chat::run(&mut bridge, chat.as_mut(), &mut plug, None, &*clock) {
        plug.hooks.warn(&format!("{e:#}"));
    }
}

/// What a run adds to the chat's loop: its notes (its team, its events, its lead's permission
/// prompt and its end), and the prompt's answer handed back.
struct Plug {
    hooks: Box<dyn Hooks + Send>,
    notes: Receiver<Note>,
    answers: Sender<(u64, Verdict)>,
    /// The prompt on the screen: its number and text.
    screen: Option<(u64, String)>,
}

impl Hooks for Plug {
    fn record(&mut self, r: &Record) -> anyhow::Result<()> {
        self.hooks.record(r)
    }

    fn warn(&mut self, msg: &str) {
        self.hooks.warn(msg);
    }

    fn round(
        &mut self,
        bridge: &mut Bridge,
        ahead: &mut Ahead,
        now: DateTime<Utc>,
    ) -> Option<Stop> {
        if let Some(bye) = self.take_notes(bridge, ahead, now) {
            return Some(Stop {
                why: "run_ended",
                bye,
            });
        }
        if bridge.prompt_expired(now) {
            let screen = self.screen.as_ref().map(|(_, sc)| sc.clone());
            ahead.asking = screen.and_then(|sc| self.ask(bridge, &sc, now));
        }
        None
    }

    fn heard(&mut self, bridge: &mut Bridge) {
        if let Some(v) = bridge.take_verdict()
            && let Some((n, _)) = self.screen.take()
        {
            let _ = self.answers.send((n, v));
        }
    }

    /// The run goes on, and so does its chat: said.
    fn hear_failed(&mut self, e: anyhow::Error) -> anyhow::Result<()> {
        self.hooks.warn(&format!("{e:#}"));
        Ok(())
    }
}

impl Plug {
    /// Applies the run's notes; `Some(the last post)` at the run's end.
    fn take_notes(
        &mut self,
        bridge: &mut Bridge,
        ahead: &mut Ahead,
        now: DateTime<Utc>,
    ) -> Option<Option<Post>> {
        loop {
            match self.notes.try_recv() {
                Ok(Note::Team(t)) => bridge.serve(t),
                Ok(Note::Post(p)) => ahead.posts.push_back(p),
                Ok(Note::Prompt(n, sc)) => {
                    ahead.asking = self.ask(bridge, &sc, now);
                    self.screen = Some((n, sc));
                }
                Ok(Note::Gone) => {
                    self.screen = None;
                    ahead.asking = None;
                    match bridge.withdraw_prompt(now) {
                        Ok(Some(p)) => ahead.posts.push_back(p),
                        Ok(None) => {}
                        Err(e) => self.hooks.warn(&format!("{e:#}")),
                    }
                }
                Ok(Note::End(p)) => return Some(Some(p)),
                Err(TryRecvError::Empty) => return None,
                Err(TryRecvError::Disconnected) => return Some(None),
            }
        }
    }

    /// A new code for the prompt showing `screen` (`None`, said, when no code could be drawn).
    fn ask(&mut self, bridge: &mut Bridge, screen: &str, now: DateTime<Utc>) -> Option<Outgoing> {
        match bridge.ask_prompt(screen, now) {
            Ok(o) => Some(o),
            Err(e) => {
                self.hooks
                    .warn(&format!("{e:#} (the prompt is not posted)"));
                None
            }
        }
    }
}

/// Where the lead's permission prompt stands with the chat (the monitor keeps one).
#[derive(Debug, Default)]
pub(super) struct Prompting {
    /// The prompt posted that awaits its answer: its number ([`Desk::ask`]) and the dialog's
    /// text as posted.
    asked: Option<(u64, String)>,
    /// When an answer was last typed (the screen takes a moment to change).
    answered: Option<Instant>,
}

/// How long after typing an answer the prompt still on the screen is taken as the old one.
const REDRAW: Duration = Duration::from_secs(2);
/// How long a denied prompt may take to close before the reason is typed.
const CLOSE: Duration = Duration::from_secs(3);

/// The lead's screen as the monitor last read it, and which pane it is.
struct Screen<'a> {
    /// What the pane shows.
    text: &'a str,
    /// The dialog it shows, if any.
    dialog: Option<Dialog>,
    /// The lead's pane, which teamctl started.
    pane: &'a str,
    /// The run's tmux session, which that pane must still be in.
    session: &'a str,
}

impl Prompting {
    /// The monitor's look at the lead's `text` (in `pane` of the run's `session`) with the
    /// chat, if any: `None` while the chat has the prompt (the run is not stuck), else what to
    /// add to the reason should the screen show a dialog (empty, or why the chat's answer
    /// could not be typed).
    pub(super) fn check(
        &mut self,
        desk: Option<&Desk>,
        text: &str,
        (pane, session): (&str, &str),
    ) -> Option<String> {
        let Some(desk) = desk else {
            return Some(String::new());
        };
        let screen = Screen {
            text,
            dialog: detect_dialog(text),
            pane,
            session,
        };
        match self.step(desk, &screen) {
            Ok(true) => None,
            Ok(false) => Some(String::new()),
            Err(e) => Some(format!("; the chat's answer could not be typed: {e:#}")),
        }
    }

    /// With a desk: a permission prompt on the lead's screen is posted once and, once the
    /// chat answers, the answer typed into the lead's pane. `Ok(true)` while the chat has it
    /// (the run is not stuck), `Ok(false)` for any other screen; an answer that could not be
    /// typed is an error (the run is stuck after all).
    ///
    /// # Errors
    /// The pane is no longer the one teamctl started, or tmux failed.
    fn step(&mut self, desk: &Desk, s: &Screen) -> anyhow::Result<bool> {
        if s.dialog != Some(Dialog::PermissionPrompt) {
            if self.asked.take().is_some() {
                desk.gone();
            }
            return Ok(false);
        }
        if self.answered.is_some_and(|t| t.elapsed() < REDRAW) {
            return Ok(true);
        }
        let text = dialog_text(s.text);
        match &self.asked {
            Some((_, posted)) if *posted == text => {}
            other => {
                // Not posted yet, or another prompt than the one posted (that one answered at
                // the terminal and the next drawn before a look saw the screen between): the
                // code posted must not answer this one.
                if other.is_some() {
                    desk.gone();
                }
                self.asked = Some((desk.ask(&text), text));
                return Ok(true);
            }
        }
        // An answer to a prompt that left the screen is dropped (its code was retired).
        while let Some((n, v)) = desk.verdict() {
            if self.asked.as_ref().is_some_and(|(asked, _)| *asked == n) {
                self.asked = None;
                self.answered = Some(Instant::now());
                type_answer(s, &v)?;
                break;
            }
        }
        Ok(true)
    }
}

/// The dialog's part of a screen: below the last rule (a line of `─`), without the dashed
/// lines around a command.
fn dialog_text(screen: &str) -> String {
    let lines: Vec<&str> = screen.lines().collect();
    let rule = |l: &&str| !l.trim().is_empty() && l.trim().chars().all(|c| c == '─');
    let from = lines.iter().rposition(rule).map_or(0, |i| i + 1);
    lines[from..]
        .iter()
        .filter(|l| !l.trim().chars().all(|c| c == '╌'))
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Types `v` into the lead's pane: approve is Enter on the first choice (`❯ 1. Yes`, checked
/// on the screen), deny is Escape (Claude Code 2.1.332: "Interrupted · What should Claude do
/// instead?") and then the reason typed as the lead's next prompt. Only into the pane teamctl
/// started, while it is still in the run's session.
fn type_answer(s: &Screen, v: &Verdict) -> anyhow::Result<()> {
    let server = tmux::Server::env();
    if server.pane_session(s.pane).as_deref() != Some(s.session) {
        anyhow::bail!(
            "the lead's pane {} is no longer in the run's tmux session: the answer is not typed",
            s.pane
        );
    }
    match v {
        Verdict::Approve { .. } => {
            let first = s
                .text
                .lines()
                .any(|l| l.trim_start().starts_with("❯ 1. Yes"));
            if !first {
                anyhow::bail!(
                    "the prompt's first choice is not highlighted as `❯ 1. Yes`: approve is not \
                     typed"
                );
            }
            server.send_keys(s.pane, &["Enter"])
        }
        Verdict::Deny { reason } => {
            server.send_keys(s.pane, &["Escape"])?;
            let until = Instant::now() + CLOSE;
            while detect_dialog(&server.screen(s.pane)) == Some(Dialog::PermissionPrompt) {
                if Instant::now() >= until {
                    anyhow::bail!("the prompt did not close on Escape");
                }
                thread::sleep(Duration::from_millis(50));
            }
            let line: String = reason
                .chars()
                .map(|c| if is_control(c) { ' ' } else { c })
                .take(500)
                .collect();
            server.send_text(s.pane, &line)?;
            server.send_keys(s.pane, &["Enter"])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialog_is_what_is_below_the_last_rule_without_the_dashed_lines() {
        let screen = "❯ Exec: echo probe\n● Running 1 shell command…\n────────\n Bash command\n \
                      Run a command\n╌╌╌╌\n echo probe > probed.txt\n╌╌╌╌\n Do you want to \
                      proceed?\n ❯ 1. Yes\n   4. No\n Esc to cancel · Tab to amend";
        assert_eq!(
            dialog_text(screen),
            " Bash command\n Run a command\n echo probe > probed.txt\n Do you want to \
             proceed?\n ❯ 1. Yes\n   4. No\n Esc to cancel · Tab to amend"
        );
        assert_eq!(dialog_text("no rule\nat all"), "no rule\nat all");
    }
}
