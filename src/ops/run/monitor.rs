//! The run's monitoring loop: the lead's team looked at every [`super::POLL`] until the done
//! rule holds, the lead fails, the cap is crossed or the time is up.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::host::claude::{Dialog, shell_quote};
use crate::host::tmux;
use crate::observe::spend::SpendReader;
use crate::observe::status::task_counts;
use crate::store::dir::Loc;
use crate::store::paths::{Layout, TeamName};
use crate::team::config::TeamConfig;
use crate::team::lead::{self, Leads};
use crate::team::tasks::Board;
use crate::team::transcript::locate;

use super::done::{Look, Observation, Settle, find_team, live_panes, observe};
use super::outcome::{Outcome, RunEvent, State};
use super::spec::{POLL, RunEnv, Running, Spec};
use crate::observe::budget::Warner;
use crate::observe::keep::{Keeper, Rules};
use crate::observe::reader::{Options, TeamReader};
use crate::ops::dialogs::detect_dialog;
use crate::ops::rescue::{Relaunch, Rescue};
use crate::store::lock::LockOptions;
use crate::store::paths::MemberName;
use crate::team::records::Records;

/// What a run does about its stuck members once the lead has a team: the rules, the team read
/// as it is now, and the hand that nudges and restarts.
pub(super) struct Keeping<'a> {
    pub(super) keeper: Keeper,
    pub(super) rescue: Rescue<'a>,
    reader: Option<TeamReader>,
}

impl<'a> Keeping<'a> {
    /// Keeping by `rules` (`None` when they only wait), with `relaunch` for restarts.
    pub(super) fn new(
        rules: Rules,
        layout: &Layout,
        env: &RunEnv,
        relaunch: Relaunch,
        clock: &'a dyn Fn() -> chrono::DateTime<chrono::Utc>,
    ) -> Option<Keeping<'a>> {
        rules.is_active().then(|| Keeping {
            keeper: Keeper::new(rules),
            rescue: Rescue {
                layout: layout.clone(),
                // Set once the lead's team is known.
                team: TeamName::parse("pending").expect("a valid name"),
                records: env.records.clone(),
                // Not a member: its nudge starts a turn, and a reply to it goes nowhere.
                from: MemberName::parse("teamctl").expect("a valid name"),
                lock: LockOptions::default(),
                relaunch: Some(relaunch),
                clock,
            },
            reader: None,
        })
    }

    /// Acts on the team's stuck members; `Err` when an `exit` action ends the run.
    fn step(
        &mut self,
        layout: &Layout,
        team: &TeamName,
        progress: &mut dyn FnMut(RunEvent),
    ) -> Result<(), anyhow::Error> {
        if self.reader.is_none() {
            let opts = Options {
                stall_after: self.keeper.rules().stall_after,
                no_response_after: self.keeper.rules().no_response_after,
                ..Options::default()
            };
            // The team may not be readable yet (the lead still writing it): next time.
            let records = self.rescue.records.clone();
            let Ok(reader) = TeamReader::open(layout, team, records, opts) else {
                return Ok(());
            };
            self.rescue.team = team.clone();
            self.reader = Some(reader);
        }
        let Some(reader) = self.reader.as_mut() else {
            return Ok(());
        };
        reader.probe();
        let now = (self.rescue.clock)();
        let Ok(present) = reader.read(now) else {
            return Ok(());
        };
        for a in self
            .keeper
            .check(&present, reader.board(), now, &mut self.rescue)?
        {
            progress(RunEvent::Acted(&a));
        }
        Ok(())
    }
}

/// Where the lead runs and what it was given.
pub(super) struct Pane<'a> {
    /// The tmux session.
    pub(super) session: &'a str,
    /// The lead's pane.
    pub(super) pane: &'a str,
    /// The lead's session id.
    pub(super) session_id: &'a str,
    /// The file its prompt is read from (removed once it has it).
    pub(super) prompt_file: &'a Path,
    /// A lead resumed ([`super::resume`]): not a new session.
    pub(super) resuming: Option<Resuming>,
    /// Where the record of the team's tmux server is kept, and where the lead's session runs
    /// ([`crate::team::lead::RunRecord`]); `None` without a data dir, or when tmux did not say.
    pub(super) record: Option<(Leads, tmux::Where)>,
}

/// A resumed lead: the team it carries on, and how many prompts its transcript held before it
/// started (its turn is not over before it has the new one).
pub(super) struct Resuming {
    /// The team.
    pub(super) team: TeamName,
    /// `prompts` of its transcript before it started.
    pub(super) prompts_before: u64,
}

/// What a run watches: the run under way (the config dir, the run as asked, what it needs from
/// the environment, teamctl's records among it, and when it started), its lead, and what it
/// does about stuck members.
pub(super) struct Watched<'a> {
    pub(super) running: Running<'a>,
    pub(super) lead: &'a Pane<'a>,
    pub(super) keeping: Option<Keeping<'a>>,
}

/// What the loop has seen so far.
struct Monitor<'a> {
    layout: &'a Layout,
    spec: &'a Spec,
    env: &'a RunEnv,
    lead: &'a Pane<'a>,
    keeping: Option<Keeping<'a>>,
    team: Option<TeamName>,
    transcript: Option<Loc>,
    settle: Settle,
    /// The done rule, but for a lead whose turn ended with an API error.
    failed: Settle,
    joined: BTreeMap<String, Instant>,
    reported: Vec<String>,
    last_cfg: Option<TeamConfig>,
    last_screen_check: Instant,
    last_wait_note: Instant,
    warner: Warner,
    /// Teammates stopped for `--max-teammates`.
    stopped: Vec<String>,
    /// Whether the lead has its prompt (the prompt file is removed then).
    has_prompt: bool,
    /// The lead's permission prompt and the chat (`run --bridge`).
    prompting: super::bridge::Prompting,
}

/// Follows the lead in `lead` until the run ends (`out.state` says how), then reads its result
/// and the team's task counts.
///
/// # Errors
/// None of its own today; the caller treats an error as a failed run.
pub(super) fn watch(
    run: Watched,
    out: &mut Outcome,
    spend: &mut SpendReader,
    progress: &mut dyn FnMut(RunEvent),
    interrupted: &dyn Fn() -> bool,
) -> Result<()> {
    let Watched {
        running:
            Running {
                layout,
                spec,
                env,
                start,
            },
        lead,
        keeping,
    } = run;
    let deadline = start + spec.timeout;
    progress(RunEvent::Progress(
        State::Monitoring,
        &format!("waiting for the team of lead session {}", lead.session_id),
    ));
    let mut m = Monitor {
        layout,
        spec,
        env,
        lead,
        keeping,
        team: None,
        transcript: None,
        settle: Settle::default(),
        failed: Settle::default(),
        joined: BTreeMap::new(),
        reported: Vec::new(),
        last_cfg: None,
        last_screen_check: Instant::now(),
        last_wait_note: Instant::now(),
        warner: Warner::default(),
        stopped: Vec::new(),
        has_prompt: false,
        prompting: Default::default(),
    };
    loop {
        if interrupted() {
            out.state = State::Failed;
            out.reason = Some("interrupted by a signal".into());
            break;
        }
        if m.step(out, spend, progress, deadline) {
            break;
        }
        thread::sleep(POLL);
    }
    m.finish(out, spend);
    Ok(())
}

impl Monitor<'_> {
    /// One look at the lead and its team; true once the run has ended (`out` says how).
    fn step(
        &mut self,
        out: &mut Outcome,
        spend: &mut SpendReader,
        progress: &mut dyn FnMut(RunEvent),
        deadline: Instant,
    ) -> bool {
        let panes = live_panes(self.lead.session);
        self.find_transcript(out, spend);
        self.find_team(out, spend, progress);
        let read = self.spec.cap.is_set().then(|| spend.read());
        for w in read.map_or_else(Vec::new, |s| self.warner.check(&self.spec.cap, s)) {
            progress(RunEvent::BudgetWarning(&w));
        }
        if let Some(e) = read.and_then(|s| self.spec.cap.exceeded(s)) {
            out.state = State::Budget;
            out.reason = Some(format!(
                "{e}; last lines of the lead's pane:\n{}",
                self.tail()
            ));
            return true;
        }
        if self.look_at_team(out, spend, progress, &panes) {
            return true;
        }
        if let (Some(k), Some(team)) = (self.keeping.as_mut(), &self.team)
            && let Err(e) = k.step(self.layout, team, progress)
        {
            out.state = State::Stuck;
            out.stuck = e.downcast_ref::<crate::Error>().and_then(|e| match e {
                crate::Error::Stuck(kind, _) => Some(*kind),
                _ => None,
            });
            out.reason = Some(format!(
                "{e:#}; last lines of the lead's pane:\n{}",
                self.tail()
            ));
            return true;
        }
        if panes.get(self.lead.pane) != Some(&true) {
            self.lead_exited(out);
            return true;
        }
        if (self.last_screen_check.elapsed() >= Duration::from_millis(500) || self.team.is_none())
            && self.stuck_at_dialog(out)
        {
            return true;
        }
        if Instant::now() >= deadline {
            self.timed_out(out, spend, &panes);
            return true;
        }
        false
    }

    /// The lead's transcript, once it exists, and whether the lead has its prompt: a new lead
    /// has it once its transcript exists (its shell read the file before it started), a
    /// resumed one once its transcript holds a prompt more than before.
    fn find_transcript(&mut self, out: &mut Outcome, spend: &mut SpendReader) {
        if self.transcript.is_none() {
            let root = self.layout.root_loc();
            self.transcript =
                locate::find_session(root, self.lead.session_id, &[], &mut Vec::new());
            out.transcript = self.transcript.as_ref().map(|t| t.to_path_buf());
        }
        if self.has_prompt {
            return;
        }
        self.has_prompt = match (&self.transcript, &self.lead.resuming) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(t), Some(r)) => spend.file(t).turn.prompts > r.prompts_before,
        };
        if self.has_prompt {
            let _ = fs::remove_file(self.lead.prompt_file);
        }
    }

    /// The lead's team, once it has formed one (a resumed lead's: the team it carries on, once
    /// its `config.json` reads).
    fn find_team(
        &mut self,
        out: &mut Outcome,
        spend: &mut SpendReader,
        progress: &mut dyn FnMut(RunEvent),
    ) {
        if self.team.is_some() {
            return;
        }
        let found = match &self.lead.resuming {
            None => find_team(self.layout, self.lead.session_id),
            Some(r) => {
                let path = self.layout.config_path(&r.team);
                let cfg = path.read().ok().flatten();
                cfg.and_then(|b| TeamConfig::parse(&b, &path).ok())
                    .map(|cfg| (r.team.clone(), cfg))
            }
        };
        let Some((name, cfg)) = found else {
            return;
        };
        // A resumed lead's team names the old lead's process until it rewrites it.
        let pid = cfg
            .lead_process
            .as_ref()
            .filter(|_| self.lead.resuming.is_none())
            .map(|p| format!(" (lead pid {})", p.pid))
            .unwrap_or_default();
        let how = if self.lead.resuming.is_some() {
            "carried on"
        } else {
            "formed"
        };
        progress(RunEvent::Progress(
            State::Running,
            &format!("team {name} {how}{pid}"),
        ));
        progress(RunEvent::TeamFormed(&name));
        out.team = Some(name.to_string());
        spend.set_team(self.layout, &name);
        self.record_server(&name, progress);
        self.team = Some(name);
    }

    /// Records the tmux server the lead runs on as `team`'s ([`crate::team::lead::RunRecord`]),
    /// so that its pane teammates are asked about there later, from any environment; a failure
    /// is said, not fatal.
    fn record_server(&self, team: &TeamName, progress: &mut dyn FnMut(RunEvent)) {
        let Some((leads, at)) = &self.lead.record else {
            return;
        };
        let mut rec = lead::run_record(
            self.layout,
            team,
            self.lead.session_id,
            self.lead.session,
            &at.socket,
            &at.server_id,
        );
        rec.tmux_session_id = Some(at.session_id.clone());
        rec.sandbox = self.env.sandbox.clone();
        if let Err(e) = leads.record_run(self.layout, team, &rec) {
            progress(RunEvent::Progress(
                State::Running,
                &format!(
                    "{e:#}: `teamctl status` from a shell whose TMUX or TMUX_TMPDIR selects \
                     another tmux server will not see this team's panes"
                ),
            ));
        }
    }

    /// A resumed lead's team must name the resumed session as its lead's
    /// (anthropics/claude-code#90332): put it back when `cfg` says otherwise.
    fn keep_lead_session(
        &self,
        name: &TeamName,
        cfg: &TeamConfig,
        out: &mut Outcome,
        progress: &mut dyn FnMut(RunEvent),
    ) {
        let id = self.lead.session_id;
        if self.lead.resuming.is_none() || cfg.lead_session_id.as_deref() == Some(id) {
            return;
        }
        let lock = LockOptions::default();
        let message = match super::interrupted::fix_lead_session(self.layout, name, id, &lock) {
            Ok(None) => return,
            Ok(Some(was)) => {
                if let Some(r) = out.resumed.as_mut() {
                    r.lead_session_fixed += 1;
                }
                format!(
                    "team {name}'s config.json named {was} as its lead session, not the resumed \
                     session {id}: set it back (anthropics/claude-code#90332)"
                )
            }
            Err(e) => format!("could not set team {name}'s leadSessionId back to {id}: {e:#}"),
        };
        progress(RunEvent::Progress(State::Running, &message));
    }

    /// Reads the team's members and the done rule's signals; true once the work is done
    /// (`out.state` done), or once only the lead's failed turn keeps it from being done
    /// (`stuck`, exit 7: nothing will prompt the lead again).
    fn look_at_team(
        &mut self,
        out: &mut Outcome,
        spend: &mut SpendReader,
        progress: &mut dyn FnMut(RunEvent),
        panes: &std::collections::HashMap<String, bool>,
    ) -> bool {
        let Some(name) = &self.team else {
            return false;
        };
        let path = self.layout.config_path(name);
        // Claude Code rewrites config.json in place: a torn read keeps the last good one.
        if let Ok(Some(bytes)) = path.read() {
            if let Ok(cfg) = TeamConfig::parse(&bytes, &path) {
                self.last_cfg = Some(cfg);
            }
        } else if panes.get(self.lead.pane) == Some(&true) {
            self.last_cfg = None;
        }
        let Some(cfg) = &self.last_cfg else {
            return false;
        };
        self.keep_lead_session(name, cfg, out, progress);
        let look = Look {
            team: name,
            cfg,
            lead_transcript: self.transcript.as_ref(),
            panes,
        };
        let (mut obs, mates) = observe(self.layout, &look, spend);
        // A resumed lead's old turn ended long ago: its new one counts once it has its prompt.
        obs.lead_turn_ended &= self.has_prompt;
        for m in &mates {
            let first = *self
                .joined
                .entry(m.name.clone())
                .or_insert_with(Instant::now);
            let settled = m.backend.is_some() || first.elapsed() >= Duration::from_secs(10);
            if settled && !self.reported.contains(&m.name) {
                self.reported.push(m.name.clone());
                progress(RunEvent::Joined(m));
            }
        }
        let name = name.clone();
        self.limit_teammates(&name, &mates, progress);
        out.teammates = mates;
        if self.settle.update(&obs, Instant::now(), self.spec.settle) {
            out.state = State::Done;
            return true;
        }
        if self.lead_failed_for_good(&obs, out) {
            return true;
        }
        if self.last_wait_note.elapsed() >= Duration::from_secs(30) {
            self.last_wait_note = Instant::now();
            progress(RunEvent::Progress(
                State::Running,
                &format!("waiting for {}", obs.waiting_for()),
            ));
        }
        false
    }

    /// `--max-teammates`: each teammate past the limit (in the order config.json lists them,
    /// which is the order they joined) is stopped once: its pane ended when it is one of the
    /// run's own tmux session (a lead-spawned teammate holds a lead key and refuses a shutdown
    /// request from anyone but its lead: docs/research/claude-code-behaviour.md), and the lead
    /// is told in its inbox to carry on with the teammates it has.
    fn limit_teammates(
        &mut self,
        team: &TeamName,
        mates: &[super::outcome::Teammate],
        progress: &mut dyn FnMut(RunEvent),
    ) {
        let Some(max) = self.spec.max_teammates else {
            return;
        };
        let extra: Vec<&super::outcome::Teammate> = mates
            .iter()
            .skip(max)
            .filter(|m| !self.stopped.contains(&m.name))
            .collect();
        for m in extra {
            let ours = m.pane.as_deref().filter(|p| {
                tmux::Server::env()
                    .panes(self.lead.session)
                    .iter()
                    .any(|q| q.id == *p && q.id != self.lead.pane)
            });
            let how = match ours {
                Some(p) => match tmux::Server::env().kill_pane(p) {
                    Ok(_) => {
                        self.stopped.push(m.name.clone());
                        format!("its pane {p} was ended")
                    }
                    Err(e) => format!("its pane {p} could not be ended: {e:#}"),
                },
                None if m.backend.as_deref() == Some("in-process") => {
                    self.stopped.push(m.name.clone());
                    "it runs inside the lead (in-process) and cannot be stopped alone; use \
                     --teammate-mode tmux"
                        .to_string()
                }
                // Not placed yet: looked at again on the next pass.
                None => continue,
            };
            progress(RunEvent::Progress(
                State::Running,
                &format!(
                    "teammate {} is past --max-teammates {max}: {how}",
                    shell_quote(&m.name)
                ),
            ));
            let _ = tell_lead(
                self.layout,
                team,
                &self.env.records,
                &format!(
                    "teamctl: this run allows at most {max} teammate(s), so {} was stopped. \
                     Do not start more teammates; carry on with the ones you have.",
                    m.name
                ),
            );
        }
    }

    /// Whether only the lead's failed turn (its retries ran out) has kept the work from being
    /// done, for --settle: then nothing will prompt it again, and the run ends `stuck` (exit 7).
    fn lead_failed_for_good(&mut self, obs: &Observation, out: &mut Outcome) -> bool {
        let Some(failed) = obs.failed_quiet() else {
            self.failed = Settle::default();
            return false;
        };
        if !self
            .failed
            .update(&failed, Instant::now(), self.spec.settle)
        {
            return false;
        }
        out.state = State::Stuck;
        out.stuck = Some(crate::error::Stuck::Api);
        out.reason = Some(format!(
            "the lead's turn ended with an API error once Claude Code's retries ran out ({}), \
             and nothing is left to prompt it again; last lines of the lead's pane:\n{}",
            crate::team::model::first_line(obs.lead_failed.as_deref().unwrap_or(""), 200),
            self.tail()
        ));
        true
    }

    /// The lead's pane is gone before the work was done.
    fn lead_exited(&self, out: &mut Outcome) {
        let status = tmux::Server::env()
            .panes(self.lead.session)
            .into_iter()
            .find(|p| p.id == self.lead.pane)
            .and_then(|p| p.status)
            .map(|s| format!(" with status {s}"))
            .unwrap_or_default();
        out.state = State::Failed;
        out.reason = Some(format!(
            "the lead exited{status} before its work was done; last lines of its pane:\n{}",
            self.tail()
        ));
    }

    /// Whether the lead's screen shows a dialog nobody can answer (said in `out`).
    fn stuck_at_dialog(&mut self, out: &mut Outcome) -> bool {
        self.last_screen_check = Instant::now();
        let text = tmux::Server::env().screen(self.lead.pane);
        let dialog = detect_dialog(&text);
        let (pane, session) = (self.lead.pane, self.lead.session);
        let Some(why) = self
            .prompting
            .check(self.env.desk.as_deref(), &text, (pane, session))
        else {
            return false;
        };
        let Some(d) = dialog else {
            return false;
        };
        out.state = State::Failed;
        out.dialog = Some(d);
        // A start-up dialog the files did not predict (a Claude Code that reads them
        // differently): prepare writes the settings that skip it.
        let hint = match d {
            Dialog::Onboarding | Dialog::ApiKey | Dialog::Trust | Dialog::Bypass => format!(
                "; `teamctl prepare --cwd {}{}` writes the settings that skip it",
                shell_quote(&self.spec.cwd.to_string_lossy()),
                if self.spec.permission.bypasses() {
                    " --skip-permissions"
                } else {
                    ""
                }
            ),
            _ => String::new(),
        };
        out.reason = Some(format!(
            "the lead is stuck at {} ({}); nobody can answer it in a headless run{hint}{why}; \
             last lines of its pane:\n{}",
            d.title(),
            d.as_str(),
            self.tail()
        ));
        true
    }

    /// `--timeout` ran out: what was still awaited.
    fn timed_out(
        &self,
        out: &mut Outcome,
        spend: &mut SpendReader,
        panes: &std::collections::HashMap<String, bool>,
    ) {
        out.state = State::Timeout;
        let what = match (&self.team, &self.last_cfg) {
            (None, _) => "the lead formed no team".to_string(),
            (Some(t), Some(cfg)) => {
                let look = Look {
                    team: t,
                    cfg,
                    lead_transcript: self.transcript.as_ref(),
                    panes,
                };
                let (obs, _) = observe(self.layout, &look, spend);
                format!(
                    "the team's work was not done (waiting for {})",
                    obs.waiting_for()
                )
            }
            (Some(_), None) => "the team's work was not done".to_string(),
        };
        out.reason = Some(format!(
            "{what} within {} s; last lines of the lead's pane:\n{}",
            self.spec.timeout.as_secs_f64(),
            self.tail()
        ));
    }

    /// The result, read before cleanup removes the team: the lead's last text, else its pane;
    /// and the team's task counts.
    fn finish(&self, out: &mut Outcome, spend: &mut SpendReader) {
        let t = self.transcript.as_ref().map(|p| spend.file(p));
        if let Some(text) = t.and_then(|t| t.turn.last_text) {
            out.result = Some(text);
            out.result_source = Some("transcript");
        } else {
            let tail = tmux::Server::env().tail(self.lead.pane, 20);
            if !tail.is_empty() {
                out.result = Some(tail);
                out.result_source = Some("pane");
            }
        }
        if let Some(name) = &self.team
            && let Ok(board) = Board::load(&self.layout.tasks_dir(name))
        {
            out.tasks = task_counts(&board);
        }
    }

    /// The last lines of the lead's pane (or a note that there are none).
    fn tail(&self) -> String {
        tail_or_empty(self.lead.pane)
    }
}

fn tail_or_empty(pane: &str) -> String {
    let t = tmux::Server::env().tail(pane, 15);
    if t.is_empty() { "(empty)".into() } else { t }
}

/// A message to the lead's inbox from `teamctl` (it reads its inbox once it has teammates).
fn tell_lead(layout: &Layout, team: &TeamName, records: &Records, text: &str) -> Result<()> {
    use crate::team::config::Team;
    use crate::team::mailbox::{self, SendRequest, Text};
    let t = Team::open(layout, team, records)?;
    let lead = t
        .config
        .as_ref()
        .and_then(|c| c.lead().map(|l| l.name.clone()))
        .unwrap_or_else(|| crate::team::config::LEAD.to_string());
    let req = SendRequest {
        to: MemberName::parse(&lead)?,
        from: MemberName::parse("teamctl")?,
        text: Text::new(text.to_string())?,
        summary: None,
        color: None,
        force: true,
        idempotency_key: None,
    };
    let now = chrono::Utc::now();
    mailbox::send(&t, &req, now, &LockOptions::default(), records.sent_log())?;
    Ok(())
}
