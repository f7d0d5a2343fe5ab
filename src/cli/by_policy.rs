//! Answering pending requests by a policy file, one pass at a time, and reporting each
//! decision: what `approve --policy` runs on every wake-up (and what `wait`/`ask --policy`
//! call while they block).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};
use teamctl::observe::follow::Observer;
use teamctl::observe::unreported::TurnEnds;
use teamctl::observe::watch::{Changes, Watch};
use teamctl::ops::policy::{self, Answer, Outcome, Policy};
use teamctl::store::paths::MemberName;
use teamctl::team::config::Team;
use teamctl::team::protocol::Kind;
use teamctl::time::iso_millis;

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::term::escape_line as esc;

/// Where decision events go: the result of `approve --policy` (stdout with `--json`, like
/// `watch`), or a side effect of a command with its own result (always stderr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventsTo {
    Stdout,
    /// For `wait`/`ask --policy`: their stdout is their result.
    Stderr,
}

/// How many requests were answered, and how many are left for a person.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub(crate) struct Counts {
    pub(crate) approved: usize,
    pub(crate) denied: usize,
    pub(crate) left: usize,
}

/// One decision, as a JSON Lines event. Every key always present.
#[derive(Serialize)]
struct DecisionEvent<'a> {
    schema_version: u32,
    event: &'static str,
    team: &'a str,
    at: String,
    request_id: &'a str,
    kind: Kind,
    from: &'a str,
    asks: String,
    tool_name: Option<&'a str>,
    input: Option<&'a Value>,
    host: Option<&'a str>,
    plan_file_path: Option<&'a str>,
    answer: Answer,
    rule: &'a str,
    list: &'a str,
    reason: &'a str,
    dry_run: bool,
    deferred: bool,
    written: bool,
    inbox: Option<String>,
    id: Option<&'a str>,
    response: Option<&'a Map<String, Value>>,
    error: Option<&'a str>,
}

/// The last event of `approve --follow`.
#[derive(Serialize)]
struct EndEvent<'a> {
    schema_version: u32,
    event: &'static str,
    team: &'a str,
    at: String,
    why: &'a str,
    #[serde(flatten)]
    counts: Counts,
}

/// A policy and what has been reported so far.
pub(crate) struct Runner {
    policy: Policy,
    lead: MemberName,
    home: Option<PathBuf>,
    dry_run: bool,
    to: EventsTo,
    json: bool,
    /// Requests already reported without being answered (left, or dry run): reported once.
    reported: HashSet<String>,
    /// Whether the last pass could not write an answer (it is tried again).
    failed: bool,
    /// Whether the last pass held a plan back until its teammate's turn ends.
    deferred: bool,
    /// The last error of a pass in a loop, warned about once.
    last_error: Option<String>,
    pub(crate) counts: Counts,
    /// The teammates' turn ends in their transcripts, for the team of the last pass (a plan
    /// of a teammate that never reports idle is answered by them).
    ends: Option<(String, TurnEnds)>,
}

impl Runner {
    /// Loads the policy (a usage error, exit 2, when it is not valid).
    pub(crate) fn new(
        ctx: &Ctx,
        path: &Path,
        lead: &str,
        dry_run: bool,
        to: EventsTo,
    ) -> Result<Runner> {
        Ok(Runner {
            policy: policy::load(path)?,
            lead: MemberName::parse(lead)?,
            home: dirs::home_dir(),
            dry_run,
            to,
            json: ctx.out.json,
            reported: HashSet::new(),
            failed: false,
            deferred: false,
            last_error: None,
            counts: Counts::default(),
            ends: None,
        })
    }

    /// Whether a pass is due without a change: the last one could not write an answer, or held
    /// a plan back (a teammate that never reports idle is answered once its transcript's turn
    /// end has gone unreported for `UNREPORTED_AFTER`, which no file change marks).
    pub(crate) fn due(&self) -> bool {
        self.failed || self.deferred
    }

    /// [`Runner::step`] on `team` as it is now on disk (a teammate that joined since brings
    /// its cwd), or as given when it cannot be re-read. For the passes of a loop: a file that
    /// cannot be read (a torn write, a corrupt inbox) is a warning (once per message) and the
    /// pass is tried again, instead of ending the command.
    pub(crate) fn step_reopened(&mut self, ctx: &Ctx, team: &Team) -> Result<()> {
        let now =
            Team::open(&ctx.layout, &team.name, &ctx.records).unwrap_or_else(|_| team.clone());
        match self.pass(ctx, &now) {
            Ok(outcomes) => {
                self.last_error = None;
                self.report_all(ctx, &now, outcomes)
            }
            Err(e) => {
                let msg = format!("{e:#}");
                if self.last_error.as_deref() != Some(msg.as_str()) {
                    warn(&format!("{msg} (tried again)"));
                    self.last_error = Some(msg);
                }
                self.failed = true;
                Ok(())
            }
        }
    }

    /// Answers what is pending in `team` now and reports each decision not reported yet.
    pub(crate) fn step(&mut self, ctx: &Ctx, team: &Team) -> Result<()> {
        let outcomes = self.pass(ctx, team)?;
        self.report_all(ctx, team, outcomes)
    }

    fn pass(&mut self, ctx: &Ctx, team: &Team) -> Result<Vec<Outcome>> {
        let answering = policy::Answering {
            policy: &self.policy,
            home: self.home.as_deref(),
            dry_run: self.dry_run,
        };
        let name = team.name.to_string();
        if self.ends.as_ref().is_some_and(|(n, _)| *n != name) {
            self.ends = None;
        }
        let (_, ends) = self
            .ends
            .get_or_insert_with(|| (name, TurnEnds::new(team, &ctx.records)));
        let w = ctx.writing(ctx.clock());
        policy::answer_pending(team, &self.lead, &answering, w, ends)
    }

    fn report_all(&mut self, ctx: &Ctx, team: &Team, outcomes: Vec<Outcome>) -> Result<()> {
        self.failed = outcomes.iter().any(|o| o.error.is_some());
        self.deferred = outcomes.iter().any(|o| o.deferred);
        for o in outcomes {
            if o.answered_elsewhere {
                continue;
            }
            if o.deferred {
                // Reported once, and again when it is answered.
                if self
                    .reported
                    .insert(format!("deferred {}", o.request.request_id))
                {
                    self.report(ctx, team, &o)?;
                }
                continue;
            }
            // A write that keeps failing is reported once, then again when it succeeds.
            if o.error.is_some()
                && !self
                    .reported
                    .insert(format!("error {}", o.request.request_id))
            {
                continue;
            }
            let once = o.decision.answer == Answer::Leave || self.dry_run;
            if once && !self.reported.insert(o.request.request_id.clone()) {
                continue;
            }
            if o.error.is_none() {
                match o.decision.answer {
                    Answer::Approve => self.counts.approved += 1,
                    Answer::Deny => self.counts.denied += 1,
                    Answer::Leave => self.counts.left += 1,
                }
            }
            if let Some(e) = o.delivery.as_ref().and_then(|d| d.log_error.as_ref()) {
                warn(e);
            }
            self.report(ctx, team, &o)?;
        }
        Ok(())
    }

    fn report(&self, ctx: &Ctx, team: &Team, o: &Outcome) -> Result<()> {
        crate::cli::otel::decision(o);
        let r = &o.request;
        let d = &o.decision;
        if self.json {
            let ev = DecisionEvent {
                schema_version: 1,
                event: "decision",
                team: team.name.as_str(),
                at: iso_millis(ctx.clock()),
                request_id: &r.request_id,
                kind: r.kind,
                from: &r.from,
                asks: policy::asks(r),
                tool_name: r.tool_name.as_deref(),
                input: r.input.as_ref(),
                host: r.host.as_deref(),
                plan_file_path: r.plan_file_path.as_deref(),
                answer: d.answer,
                rule: &d.rule,
                list: d.list,
                reason: &d.reason,
                dry_run: self.dry_run,
                deferred: o.deferred,
                written: o.response.is_some(),
                inbox: o.delivery.as_ref().map(|d| d.inbox.display().to_string()),
                id: o.delivery.as_ref().map(|d| d.id.as_str()),
                response: o.response.as_ref(),
                error: o.error.as_deref(),
            };
            return self.emit_json(&ev);
        }
        if o.deferred {
            eprintln!(
                "waiting {} from {}: {}: answered ({}) once {} reports idle",
                printable(&r.request_id, 100),
                printable(&r.from, 64),
                printable(&policy::asks(r), 120),
                if d.answer == Answer::Approve {
                    "approve"
                } else {
                    "deny"
                },
                printable(&r.from, 64),
            );
            return Ok(());
        }
        let verb = match (d.answer, self.dry_run) {
            (Answer::Approve, false) => "approved",
            (Answer::Deny, false) => "denied",
            (Answer::Approve, true) => "would approve",
            (Answer::Deny, true) => "would deny",
            (Answer::Leave, _) => "left",
        };
        let rule = if d.list == d.rule || d.list == "unmatched" || d.list == "plans" {
            format!("{}: {}", d.list, d.rule)
        } else {
            format!("{} {}", d.list, d.rule)
        };
        let mut line = format!(
            "{verb} {} from {}: {} (by {})",
            printable(&r.request_id, 100),
            printable(&r.from, 64),
            printable(&policy::asks(r), 120),
            printable(&rule, 200),
        );
        if d.answer == Answer::Leave {
            line.push_str(": pending for `teamctl approve`/`deny`");
        }
        match &o.error {
            Some(e) => warn(&format!(
                "could not answer {}: {e} (tried again)",
                r.request_id
            )),
            None => eprintln!("{line}"),
        }
        Ok(())
    }

    /// Reports why `--follow` stopped.
    pub(crate) fn end(&self, ctx: &Ctx, team: &str, why: &str) -> Result<()> {
        if self.json {
            return self.emit_json(&EndEvent {
                schema_version: 1,
                event: "end",
                team,
                at: iso_millis(ctx.clock()),
                why,
                counts: self.counts,
            });
        }
        let c = self.counts;
        eprintln!(
            "stopped ({}): {} approved, {} denied, {} left pending",
            why.replace('_', " "),
            c.approved,
            c.denied,
            c.left
        );
        Ok(())
    }

    fn emit_json<T: Serialize>(&self, v: &T) -> Result<()> {
        let mut line = serde_json::to_string(v)?;
        line.push('\n');
        match self.to {
            EventsTo::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(line.as_bytes())?;
                out.flush()?;
            }
            EventsTo::Stderr => {
                let mut err = std::io::stderr().lock();
                err.write_all(line.as_bytes())?;
            }
        }
        Ok(())
    }
}

/// What `ask` and `wait` do while they block: answer teammates' requests by the policy, if
/// one was given (on the first call, on new events, and again after a pass that could not
/// write or held a plan back), and report progress, warnings and hints on stderr.
pub(crate) struct Blocking<'a> {
    pub(crate) ctx: &'a Ctx,
    pub(crate) runner: Option<Runner>,
    /// Progress lines start `<verb>: `.
    pub(crate) verb: &'static str,
}

impl Observer for Blocking<'_> {
    fn changed(&mut self, watch: &Watch, changes: Option<&Changes>) -> Result<()> {
        match changes {
            None => crate::cli::otel::members(watch),
            Some(c) => crate::cli::otel::changes(c),
        }
        match self.runner.as_mut() {
            Some(r) if changes.is_none_or(|c| !c.events.is_empty() || r.due()) => {
                r.step_reopened(self.ctx, watch.team())
            }
            _ => Ok(()),
        }
    }
    fn note(&mut self, msg: &str) {
        eprintln!("{}: {}", self.verb, esc(msg));
    }
    fn warn(&mut self, msg: &str) {
        warn(msg);
    }
    fn hint(&mut self, msg: &str) {
        crate::cli::output::hint(msg);
    }
    fn budget_warning(&mut self, w: &teamctl::observe::budget::Warning) {
        crate::cli::going::tell_budget(self.ctx, w);
    }
}

/// Teammate text for a terminal or a CI log (control characters and bidi overrides escaped, see
/// `term`), cut at `max` characters.
fn printable(s: &str, max: usize) -> String {
    let cut: String = s.chars().take(max).collect();
    let more = if cut.len() < s.len() { "…" } else { "" };
    format!("{}{more}", esc(&cut))
}
