//! `teamctl ask`: send a teammate a question and wait for its answer.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use clap::Args;
use serde::Serialize;
use teamctl::Error;
use teamctl::error::usage;
use teamctl::observe::budget::Exceeded;
use teamctl::observe::spend::TeamSpend;
use teamctl::observe::watch::Watch;
use teamctl::ops;
use teamctl::ops::ask::{Ask, Asked, Asking, Outcome, Question};
use teamctl::store::Entry;
use teamctl::store::paths::MemberName;
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, Mark, Text};
use teamctl::team::model::MessageView;
use teamctl::time::{iso_millis, parse_duration};

use crate::cli::args::{CapArgs, TotalsJson};
use crate::cli::by_policy::{Blocking, EventsTo, Runner};
use crate::cli::compose::{Words, message_text, recipient_and_text, sender};
use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::otel::{self, OtelArgs};
use crate::cli::output::warn;

/// Ask a teammate something and wait for its answer
///
/// Sends TEXT exactly as `send` does (text or stdin, --from, --join, --summary,
/// --idempotency-key, the member check with "did you mean", every refusal), then waits until
/// MEMBER answers and prints the answer's text alone on stdout, so `answer=$(teamctl ask alice
/// "...")` works. Progress (`ask: alice took the question`, …) goes to stderr. The answer is data:
/// printed exactly as written when stdout is not a terminal (a pipe, `$(…)`) or with --raw; on a
/// terminal its control and invisible characters are shown as escapes and each further line
/// starts with `  | `. It wakes on file notifications as `watch` does (--poll MS to poll
/// instead).
///
/// The answer is the first plain message (not a protocol frame) from MEMBER that lands in the
/// inbox of the identity you asked as after the question was written, and not in the turn MEMBER
/// was in when it arrived: what MEMBER writes until that turn ends (its idle_notification)
/// answers something else, say its brief, and ask says so on stderr. The whole rule, and why
/// nothing in it rests on timestamps: docs/design.md, "What counts as the answer".
///
/// Outcomes: answered (exit 0); MEMBER went idle without answering (exit 5: an idle_notification
/// from it written after the question, the question taken, no answer, and no sign of a new turn
/// for 1.5 s after both; the error says what the notification says: reason, summary, the turn's
/// last words, and whether MEMBER's transcript holds the text that ended that turn, or shows
/// it wrote to someone else then; or, for a MEMBER that never reports idle, its transcript's
/// turn end after taking the question, with no idle_notification for 5 s); MEMBER is gone (shut down, left config.json, or its recorded tmux pane or process
/// died: exit 1 at once; see `teamctl wait --help`); --timeout passed (exit 3, saying whether the
/// question still waits in MEMBER's inbox or was taken). A teammate that is gone before the
/// question is written is not asked (exit 1, nothing written).
///
/// With --from-transcript, a MEMBER that goes idle without answering but ended the turn that
/// took the question with plain text, writing to nobody else, answers with that text: the last
/// text of that turn, read from its Claude Code transcript (as `teamctl log` reads it), else
/// from the idle_notification's result (Claude Code 2.1.332 and later put the text there too).
/// It is printed as any answer and exits 0.
///
/// Refused before anything is written (exit 2): asking as an identity MEMBER cannot reply to, by
/// the rules `status` prints on its `you:` line (`user`, `team-lead` of a team a Claude Code
/// session leads, a non-member: use --join --from NAME).
///
/// --all asks every teammate (members with agentType, color or backendType, not the lead, not
/// you: a name added by `send --join` is not asked), waits for each, and prints a table of
/// outcomes and answers; exit 0 only if every teammate answered, else the worst outcome's code:
/// gone (1), then timeout (3), then idle (5).
///
/// With --policy FILE, requests the teammates send their lead while `ask` waits (tool
/// permissions, plans, sandbox hosts) are answered by the rules in FILE, exactly as `approve
/// --follow --policy` answers them (docs/policy.md): a teammate that must run a command to answer
/// is not stuck on a permission prompt. One line per decision on stderr (with --json, a JSON
/// Lines decision event on stderr; stdout keeps the answer). Only in a team teamctl leads (else
/// exit 2); a bad policy file is exit 2 and nothing is sent.
///
/// With an OpenTelemetry endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT), what it sees is exported as
/// a trace and metrics (docs/observability.md, "OpenTelemetry"; --otel-content adds the texts).
///
/// With --json: `{"schema_version":1,"team","to","as","question":{the entry sent},"outcome",
/// "reply","source","text","taken_at","answered_at","waited_ms","detail","totals"}`: outcome is
/// answered, idle, gone, timeout or budget; reply is the answer with the keys of an `inbox
/// --json` message, or null (also for an answer from the transcript); source is where the answer
/// was read: inbox, transcript or idle_notification (null without one); text is the answer's
/// text (null without one); detail is what the idle notification says, why MEMBER is gone, or where the question
/// is at a timeout (null when answered); totals is the team's spend when a cap was given,
/// `{"tokens":{"input","output","cache_read","cache_creation"},"cost_usd"}`, else null. With
/// --all: `{"schema_version":1,"team","as","answers":{MEMBER:{"to","question","outcome","reply",
/// "source","text","taken_at","answered_at","waited_ms","detail"}},"waited_ms","totals"}`.
///
/// With --max-cost USD or --max-tokens N, ask stops with exit 6 the moment the team's total
/// spend crosses the cap ("budget exceeded: $X of $Y, by alice $a, bob $b"; with --all, budget
/// ranks between gone and timeout); the total comes from the members' Claude Code transcripts
/// (see `teamctl status --help`) and includes what the team spent before ask started, so a team
/// already over the cap is not asked at all.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  answer=$(teamctl ask alice \"Which files did you change?\")
  teamctl ask --join --from ops bob \"Is the migration safe to run?\" --timeout 5m
  git diff | teamctl ask alice --summary \"review this diff\"
  teamctl ask --all \"Status report, one line please\" --json | jq '.answers[].reply.text'
  teamctl ask alice \"Run the tests and report\" --policy ci-policy.json
  teamctl ask --all \"Wrap up\" --max-cost 3.50   # exit 6 once the team has spent $3.50
  teamctl ask alice \"Summarise your findings\" --from-transcript")]
pub(crate) struct AskArgs {
    /// The teammate to ask (with --all: omit it; the only argument is TEXT)
    #[arg(value_name = "MEMBER")]
    to: Option<String>,

    /// The question; read from stdin when it is `-` or absent and stdin is not a terminal
    #[arg(value_name = "TEXT")]
    text: Option<String>,

    /// Ask as NAME: the answer lands in NAME's inbox [default: team-lead in a team teamctl
    /// leads, else user]
    #[arg(long, value_name = "NAME", env = env::FROM)]
    #[arg(help = "Ask as NAME: the answer lands in NAME's inbox", long_help)]
    from: Option<String>,

    /// Short preview shown by Claude Code [default: the first line, cut to about 60 characters]
    #[arg(long, value_name = "TEXT")]
    #[arg(help = "Short preview shown by Claude Code", long_help)]
    summary: Option<String>,

    /// Ask every teammate and wait for each
    #[arg(long)]
    all: bool,

    /// Join the team first as --from, so teammates can answer you
    #[arg(long)]
    join: bool,

    /// Make the question's id deterministic: asking again with the same key sends nothing and
    /// waits for (or finds) the answer to the first question; if that was already taken, an
    /// entry from MEMBER in your inbox stamped at or after it counts as its answer (the only
    /// record left is time)
    #[arg(long, value_name = "KEY")]
    #[arg(
        help = "Make the question's id deterministic: asking again sends nothing",
        long_help
    )]
    idempotency_key: Option<String>,

    /// Give up after this long (exit 3)
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    timeout: String,

    /// Remove the answer from your inbox once it is printed [default: leave it there]
    #[arg(long)]
    #[arg(
        help = "Remove the answer from your inbox once it is printed",
        long_help
    )]
    consume: bool,

    /// Print the answer exactly as written even to a terminal [default: exact when piped,
    /// control characters shown as escapes on a terminal]
    #[arg(long)]
    #[arg(
        help = "Print the answer exactly as written even to a terminal",
        long_help
    )]
    raw: bool,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,

    /// While waiting, answer teammates' requests by the rules in FILE (as `approve --follow
    /// --policy`; decisions on stderr)
    #[arg(long, value_name = "FILE", help_heading = "Answering requests")]
    #[arg(
        help = "While waiting, answer requests by the rules in FILE",
        long_help
    )]
    policy: Option<PathBuf>,

    /// A teammate that goes idle without answering, having ended the question's turn with
    /// plain text (and written to nobody else), answers with that text, read from its transcript
    #[arg(long)]
    #[arg(
        help = "An idle teammate's last plain text answers (from its transcript)",
        long_help
    )]
    from_transcript: bool,

    #[command(flatten)]
    cap: CapArgs,

    #[command(flatten)]
    otel: OtelArgs,
}

#[derive(Serialize)]
struct AnswerJson<'a> {
    to: &'a str,
    question: Option<&'a Entry>,
    outcome: &'static str,
    reply: Option<MessageView>,
    source: Option<&'static str>,
    text: Option<&'a str>,
    taken_at: Option<String>,
    answered_at: Option<String>,
    waited_ms: u64,
    detail: Option<String>,
}

#[derive(Serialize)]
struct Single<'a> {
    schema_version: u32,
    team: &'a str,
    #[serde(rename = "as")]
    asker: &'a str,
    #[serde(flatten)]
    answer: AnswerJson<'a>,
    totals: Option<TotalsJson>,
}

#[derive(Serialize)]
struct All<'a> {
    schema_version: u32,
    team: &'a str,
    #[serde(rename = "as")]
    asker: &'a str,
    answers: BTreeMap<&'a str, AnswerJson<'a>>,
    waited_ms: u64,
    totals: Option<TotalsJson>,
}

pub(crate) fn run(ctx: &Ctx, args: AskArgs) -> Result<()> {
    otel::start("ask", args.otel.otel_content);
    let (to, text) = recipient_and_text(
        args.all,
        args.to.clone(),
        args.text.clone(),
        &Words {
            text: "question",
            recipient: "member",
            synopsis: "teamctl ask <MEMBER> [TEXT]",
        },
    )?;
    let text = Text::new(message_text(text)?)?;
    if text.is_frame() {
        return Err(usage(
            "a question is plain text; send protocol frames with `teamctl send`",
        ));
    }
    let text = Text::plain(text.as_str())?;
    let timeout = parse_duration(&args.timeout)?;
    let cap = args.cap.cap()?;
    // A bad policy is exit 2 before anything is sent.
    let runner = args
        .policy
        .as_deref()
        .map(|p| Runner::new(ctx, p, "team-lead", false, EventsTo::Stderr))
        .transpose()?;
    if runner.is_some() {
        // Before `sender`, which may write (--join).
        crate::cli::answer::check_lead(&ctx.team()?, false)?;
    }
    let (team, asker) = sender(ctx, args.from.as_deref(), args.join, false)?;
    if let Some(why) = mailbox::unreachable_reason(&team, asker.as_str()) {
        return Err(usage(format!(
            "cannot ask as '{asker}': nobody can answer it: {why}"
        )));
    }
    if let Some(to) = &to {
        if to == &asker {
            return Err(usage(format!(
                "cannot ask '{to}' as '{asker}': that is asking yourself; use --from NAME"
            )));
        }
        team.check_recipient(to, false)?;
    }

    let req = Ask {
        team: &team,
        asker: &asker,
        to,
        text: &text,
        summary: args.summary.clone(),
        idempotency_key: args.idempotency_key.clone(),
        timeout,
        poll: args.poll.map(Duration::from_millis),
        now: ctx.now,
        lock: &ctx.lock,
        records: &ctx.records,
        cap,
        from_transcript: args.from_transcript,
    };
    let mut reporter = Blocking {
        ctx,
        runner,
        verb: "ask",
    };
    let Asking {
        asked,
        send_error,
        warnings,
        waited_ms,
        watch,
        waker,
        budget,
        spend,
    } = ops::ask::ask(&req, &|| ctx.clock(), &mut reporter)?;
    // The watch stays open to the end: see quick_exit.
    std::mem::forget(waker);
    crate::cli::quick_exit::arm();
    for w in warnings {
        warn(&w);
    }

    let ended = Ended {
        team: &team,
        asker: &asker,
        watch: &watch,
        asked: &asked,
        waited_ms,
        spend: spend.as_ref(),
    };
    print_answers(ctx, &args, &ended, budget.is_some())?;
    if args.consume {
        let replies: Vec<Entry> = asked
            .iter()
            .filter_map(|a| match &a.q.outcome {
                Some(Outcome::Answered(e)) => Some(e.clone()),
                _ => None,
            })
            .collect();
        mailbox::mark(&team, &asker, &replies, Mark::Consume, &ctx.lock)?;
    }
    if let Some(e) = send_error {
        return Err(e.context("not every teammate could be asked"));
    }
    worst_outcome(&ended, &args.timeout, budget)
}

/// How the asking ended: the team, who asked, the files as last seen, each question's end,
/// how long it took and the team's spend (when a cap was held).
struct Ended<'a> {
    team: &'a Team,
    asker: &'a MemberName,
    watch: &'a Watch,
    asked: &'a [Asked],
    waited_ms: u64,
    spend: Option<&'a TeamSpend>,
}

/// Prints the answers: `--json` one document, `--all` a table, else the one answer as data.
fn print_answers(ctx: &Ctx, args: &AskArgs, ended: &Ended, over: bool) -> Result<()> {
    let Ended {
        team,
        asker,
        watch,
        asked,
        waited_ms,
        spend,
    } = *ended;
    let answers: Vec<AnswerJson> = asked.iter().map(|a| answer_json(ended, a, over)).collect();
    let totals = spend.map(TotalsJson::of);
    if ctx.out.json {
        if args.all {
            ctx.out.json(&All {
                schema_version: 1,
                team: team.name.as_str(),
                asker: asker.as_str(),
                answers: answers.into_iter().map(|a| (a.to, a)).collect(),
                waited_ms,
                totals,
            })?;
        } else if let Some(a) = answers.into_iter().next() {
            ctx.out.json(&Single {
                schema_version: 1,
                team: team.name.as_str(),
                asker: asker.as_str(),
                answer: a,
                totals,
            })?;
        }
    } else if args.all {
        let mut rows = vec![vec![
            "MEMBER".to_string(),
            "OUTCOME".to_string(),
            "ANSWER".to_string(),
        ]];
        for a in asked {
            let (outcome, detail) = describe(watch, a, over);
            rows.push(vec![a.q.to.clone(), outcome.to_string(), detail]);
        }
        ctx.out.table(rows)?;
    } else if let Some(text) = asked.first().and_then(|a| answer_text(&a.q.outcome)) {
        // The answer is data: exact when piped or with --raw, neutralised for a terminal.
        let mut out = std::io::stdout().lock();
        if args.raw || !out.is_terminal() {
            writeln!(out, "{text}")?;
        } else {
            // One line per line of the answer, each further one behind `  | `: no line of the
            // terminal begins with what the teammate wrote after a newline.
            writeln!(out, "{}", crate::cli::term::escape_message(text))?;
        }
        out.flush()?;
    }
    Ok(())
}

/// The exit: the worst outcome decides (gone, then over the cap or timed out, then idle).
fn worst_outcome(ended: &Ended, timeout: &str, budget: Option<Exceeded>) -> Result<()> {
    let (team, watch, asker) = (ended.team, ended.watch, ended.asker.as_str());
    let mut gone = Vec::new();
    let mut timed_out = Vec::new();
    let mut idle = Vec::new();
    for a in ended.asked {
        match &a.q.outcome {
            Some(Outcome::Answered(_) | Outcome::Said(..)) => {}
            Some(Outcome::Gone(why)) => gone.push(format!("{}: {why}", a.q.to)),
            Some(Outcome::Idle(note)) => idle.push(format!(
                "{} went idle without answering ({}){}",
                a.q.to,
                Question::idle_text(note),
                said_hint(team, a, asker)
            )),
            Some(Outcome::Unreported(ended)) => idle.push(format!(
                "{} went idle without answering ({}){}",
                a.q.to,
                Question::unreported_text(*ended),
                said_hint(team, a, asker)
            )),
            None => timed_out.push(timeout_text(watch, a, timeout)),
        }
    }
    if !gone.is_empty() {
        bail!("no answer: {}", gone.join("; "));
    }
    if let Some(e) = budget
        && !timed_out.is_empty()
    {
        return Err(Error::Budget(e.to_string()).into());
    }
    if !timed_out.is_empty() {
        return Err(Error::Timeout(timed_out.join("; ")).into());
    }
    if !idle.is_empty() {
        return Err(Error::Unanswered(idle.join("; ")).into());
    }
    Ok(())
}

/// The answer's text, from whichever source.
fn answer_text(outcome: &Option<Outcome>) -> Option<&str> {
    match outcome {
        Some(Outcome::Answered(reply)) => reply.get("text").and_then(|t| t.as_str()),
        Some(Outcome::Said(s)) => Some(&s.text),
        _ => None,
    }
}

/// What the exit 5 message adds about the turn: that its transcript holds the text that ended
/// it (and how to get it), or that it wrote to someone else.
fn said_hint(team: &Team, a: &Asked, asker: &str) -> String {
    let Some(s) = &a.said else {
        return String::new();
    };
    if let Some(to) = s.sent_to.iter().find(|t| *t != asker) {
        let lost = if team.is_member(to) {
            ""
        } else {
            ", which is no member of the team: `teamctl status` shows whether it landed in an \
             inbox nobody reads, and `teamctl redeliver` moves it from there"
        };
        return format!(
            "; in that turn it sent a message to {}, not to {asker}{lost}",
            teamctl::store::paths::quote(to)
        );
    }
    format!(
        "; it ended that turn with text ({}), which its {} holds: `teamctl log {} -n 1` shows \
         it, and `ask --from-transcript` takes it as the answer",
        teamctl::team::model::first_line(&s.text, 60),
        s.source.as_str().replace('_', " "),
        a.q.to
    )
}

fn timeout_text(watch: &Watch, a: &Asked, timeout: &str) -> String {
    if a.q.waiting(watch) {
        format!(
            "no answer from {} after {timeout}: the question still waits in its inbox",
            a.q.to
        )
    } else {
        format!(
            "no answer from {} after {timeout}: it took the question but has not answered",
            a.q.to
        )
    }
}

fn describe(watch: &Watch, a: &Asked, over_budget: bool) -> (&'static str, String) {
    match &a.q.outcome {
        Some(Outcome::Answered(e)) => (
            "answered",
            teamctl::team::model::first_line(
                e.get("text").and_then(|t| t.as_str()).unwrap_or(""),
                80,
            ),
        ),
        Some(Outcome::Said(s)) => ("answered", teamctl::team::model::first_line(&s.text, 80)),
        Some(Outcome::Idle(note)) => ("idle", Question::idle_text(note)),
        Some(Outcome::Unreported(ended)) => ("idle", Question::unreported_text(*ended)),
        Some(Outcome::Gone(why)) => ("gone", why.clone()),
        None if over_budget => (
            "budget",
            "the team's spend crossed the cap before it answered".into(),
        ),
        None if a.q.waiting(watch) => ("timeout", "the question still waits in its inbox".into()),
        None => ("timeout", "took the question, no answer yet".into()),
    }
}

fn answer_json<'a>(ended: &Ended, a: &'a Asked, over_budget: bool) -> AnswerJson<'a> {
    let (watch, team, asker) = (ended.watch, ended.team, ended.asker.as_str());
    let waited_ms = ended.waited_ms;
    let iso = |t: Option<DateTime<Utc>>| t.map(iso_millis);
    let (outcome, detail) = describe(watch, a, over_budget);
    let reply = match &a.q.outcome {
        Some(Outcome::Answered(e)) => {
            let inbox = MemberName::parse(asker)
                .map(|m| team.inbox_path(&m).display().to_string())
                .unwrap_or_default();
            MessageView::from_entry(e, &inbox, asker).ok()
        }
        _ => None,
    };
    let source = match &a.q.outcome {
        Some(Outcome::Answered(_)) => Some("inbox"),
        Some(Outcome::Said(s)) => Some(s.source.as_str()),
        _ => None,
    };
    AnswerJson {
        to: &a.q.to,
        question: a.question.as_ref(),
        outcome,
        reply,
        source,
        text: answer_text(&a.q.outcome),
        taken_at: iso(a.q.taken_at),
        answered_at: iso(a.q.answered_at),
        waited_ms: a.ended_ms.unwrap_or(waited_ms),
        detail: (outcome != "answered").then_some(detail),
    }
}
