//! OpenTelemetry: what `run`, `wait`, `ask`, `watch` and `create` see, exported over OTLP/HTTP
//! when an endpoint is set in the standard variables ([`Config::from_vars`]).
//!
//! - a trace per command: its span (`teamctl <verb>`), a span per teammate's time in the team
//!   (from its `joinedAt`, or when first seen, to when it left or the command ended), and span
//!   events for messages (`teamctl.message`: the event, who to whom, kind, frame type, id and
//!   size), task changes (`teamctl.task`: id, status, owner) and policy decisions
//!   (`teamctl.decision`); no teammate text unless `--otel-content`;
//! - metrics: `teamctl.messages`, `teamctl.task.changes`, `teamctl.policy.decisions` (counters),
//!   `teamctl.command.duration` (seconds), and for `run` and `wait` `teamctl.tokens` (by
//!   `gen_ai.token.type`) and `teamctl.cost.usd` (gauges per member, from the transcripts), with
//!   the team and member as attributes.
//!
//! Nothing is set up, and nothing costs more than a few environment lookups, when no endpoint is
//! set. Export problems never change a command's result or exit code: the first is one warning on
//! stderr. The exporters are flushed before exit, bounded by [`config::FLUSH_DEADLINE`]. A build without
//! the `otel` feature keeps this interface and exports nothing.

mod config;
#[cfg(feature = "otel")]
mod export;

use clap::Args;

use config::Config;

/// `--otel-content` for the verbs that export telemetry.
#[derive(Debug, Clone, Copy, Args)]
#[command(next_help_heading = "OpenTelemetry")]
pub(crate) struct OtelArgs {
    /// With an OpenTelemetry endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT): also export message
    /// texts, summaries, task subjects and what a request asks (by default only names, kinds,
    /// ids and sizes: teammate text may be confidential)
    #[arg(long)]
    #[arg(
        help = "Also export texts (messages, summaries, task subjects, requests)",
        long_help
    )]
    pub(crate) otel_content: bool,
}

/// Starts the telemetry of the command `verb` when an endpoint is set (once per process).
pub(crate) fn start(verb: &'static str, content: bool) {
    let Some(config) = Config::from_vars(&|k| std::env::var(k).ok()) else {
        return;
    };
    #[cfg(feature = "otel")]
    {
        export::start(verb, content, config);
        crate::cli::signals::before_exit(export::finish);
    }
    #[cfg(not(feature = "otel"))]
    {
        let _ = (verb, content, config);
        crate::cli::output::warn(
            "an OpenTelemetry endpoint is set, but this teamctl was built without the otel \
             feature: nothing is exported",
        );
    }
}

/// Whether telemetry is being recorded.
pub(crate) fn enabled() -> bool {
    #[cfg(feature = "otel")]
    {
        export::enabled()
    }
    #[cfg(not(feature = "otel"))]
    {
        false
    }
}

/// The team the command works on.
pub(crate) fn team(name: &str) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.team(name));
    }
    #[cfg(not(feature = "otel"))]
    let _ = name;
}

/// The members of the followed team as it is now (each gets its span).
pub(crate) fn members(watch: &teamctl::observe::watch::Watch) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.members(watch));
    }
    #[cfg(not(feature = "otel"))]
    let _ = watch;
}

/// What changed in the followed team.
pub(crate) fn changes(changes: &teamctl::observe::watch::Changes) {
    #[cfg(feature = "otel")]
    if export::enabled() && !changes.events.is_empty() {
        export::with(|r| r.changes(changes));
    }
    #[cfg(not(feature = "otel"))]
    let _ = changes;
}

/// One decision of a policy.
pub(crate) fn decision(o: &teamctl::ops::policy::Outcome) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.decision(o));
    }
    #[cfg(not(feature = "otel"))]
    let _ = o;
}

/// What each member of the team has used and cost so far (`run`, `wait`).
pub(crate) fn spend(spend: &teamctl::observe::spend::TeamSpend) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.spend(spend));
    }
    #[cfg(not(feature = "otel"))]
    let _ = spend;
}

/// An action taken for a stuck member (`wait`, `run`: a nudge, a restart).
pub(crate) fn acted(a: &teamctl::observe::keep::Acted) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.acted(a));
    }
    #[cfg(not(feature = "otel"))]
    let _ = a;
}

/// Spend crossed `--warn-at` of a limit (`teamctl.budget_warning` on the command's span).
pub(crate) fn budget_warning(w: &teamctl::observe::budget::Warning) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.budget_warning(w));
    }
    #[cfg(not(feature = "otel"))]
    let _ = w;
}

/// A step of the command (`run`, `create`): its state and one line.
pub(crate) fn step(state: &str, message: &str) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::with(|r| r.step(state, message));
    }
    #[cfg(not(feature = "otel"))]
    let _ = (state, message);
}

/// Ends the command's trace with its exit code and sends everything (at most
/// [`FLUSH_DEADLINE`]); the first export problem is one warning on stderr.
pub(crate) fn finish(code: u8) {
    #[cfg(feature = "otel")]
    if export::enabled() {
        export::finish(code);
    }
    #[cfg(not(feature = "otel"))]
    let _ = code;
}
