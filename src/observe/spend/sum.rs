//! The sum: what each member spent, from its located sessions as the index last read them.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};

use serde::Serialize;

use crate::store::dir::Loc;
use crate::team::config::TeamConfig;
use crate::team::transcript::api::Api;
use crate::team::transcript::index::{Index, LineTap};
use crate::team::transcript::locate::{self, Kind, Session};
use crate::team::transcript::{Activity, FileState, Tokens, pricing, window};

/// Where a cost figure comes from (`status --json` `cost_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// Claude Code's own accounting (`cost-state`), written when the session ended.
    ClaudeCode,
    /// Computed from the responses' usage with Claude Code's prices.
    Computed,
}

impl CostSource {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            CostSource::ClaudeCode => "claude_code",
            CostSource::Computed => "computed",
        }
    }
}

/// One member's work, from its transcripts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemberSpend {
    /// Tokens by kind.
    pub tokens: Tokens,
    /// Cost in USD; `None` when a model has no price.
    pub cost_usd: Option<f64>,
    /// The part of its cost that could be priced.
    pub known_usd: f64,
    /// Tokens of its responses whose model has no price, by model.
    pub unpriced: Unpriced,
    /// Where the cost comes from (`None` with the cost).
    pub cost_source: Option<CostSource>,
    /// The model of its newest response.
    pub model: Option<String>,
    /// The context its newest response was given (input, cache read and cache creation
    /// tokens).
    pub context_tokens: Option<u64>,
    /// What it is doing.
    pub activity: Option<Activity>,
    /// Its transcript files (sessions, then their subagents).
    pub transcripts: Vec<PathBuf>,
    /// When its newest transcript was last written.
    pub last_write: Option<SystemTime>,
    /// Whether its newest session is inside a turn (its last entry is not an ended assistant
    /// turn).
    pub in_turn: bool,
    /// Where the API calls of its newest transcript stand.
    pub api: Api,
    /// When the turn of its newest session (its own file, not a subagent's) began and ended
    /// (`Turn::began_at`, `Turn::ended_at`): what tells a turn's end without its
    /// `idle_notification` ([`crate::observe::unreported::judge`]).
    pub turn: TurnTimes,
}

/// When a session's newest turn began and ended, as its transcript says (RFC 3339).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnTimes {
    /// Its prompt's time.
    pub began_at: Option<String>,
    /// Its end's time (`None` inside a turn).
    pub ended_at: Option<String>,
}

/// `unpriced` at the highest prices teamctl knows for each model's family.
pub fn estimate(unpriced: &Unpriced) -> f64 {
    unpriced
        .iter()
        .map(|(model, t)| pricing::at(&pricing::ceiling(model).1, t))
        .sum()
}

impl MemberSpend {
    /// What a spending cap counts for it: its known cost, and its unpriced tokens estimated
    /// as [`TeamSpend::capped_cost_usd`] does.
    pub fn capped_cost_usd(&self) -> f64 {
        let known = self.cost_usd.unwrap_or(self.known_usd);
        known + estimate(&self.unpriced)
    }

    /// How full its context is: its newest response's context against its model's window
    /// (`None` before its first response).
    pub fn context(&self) -> Option<ContextUse> {
        let used = self.context_tokens?;
        let window = self.model.as_deref().and_then(window::context_window);
        Some(ContextUse {
            used,
            window,
            percent: window
                .filter(|w| *w > 0)
                .map(|w| (used as f64 * 1000.0 / w as f64).round() / 10.0),
        })
    }

    /// Whether it is stalled at `now`: inside a turn, its transcripts quiet for `after`.
    pub fn stalled(&self, now: DateTime<Utc>, after: Duration) -> bool {
        self.in_turn
            && self.last_write.is_some_and(|t| {
                SystemTime::from(now)
                    .duration_since(t)
                    .is_ok_and(|d| d >= after)
            })
    }
}

/// How full a member's context is (`status --json` members' `context`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContextUse {
    /// Tokens its newest response was given: input, cache read and cache creation.
    pub used: u64,
    /// Its model's context window (`null`: a model teamctl does not know).
    pub window: Option<u64>,
    /// `used` as a percentage of `window`, to one decimal (`null` with the window).
    pub percent: Option<f64>,
}

/// A team's work: each member with a transcript, and the totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TeamSpend {
    /// By member name.
    pub members: BTreeMap<String, MemberSpend>,
    /// Tokens of every session.
    pub tokens: Tokens,
    /// The sum of every session's cost; `None` when one is unknown.
    pub cost_usd: Option<f64>,
    /// The sum of the costs that are known.
    pub known_cost_usd: f64,
    /// Tokens of responses whose model has no price, by model (their cost is unknown).
    pub unpriced: Unpriced,
    /// Transcripts and folders skipped (a symlink, a FIFO, … where one belongs) or unreadable.
    pub warnings: Vec<String>,
}

impl TeamSpend {
    /// What a spending cap counts: every known cost, and the tokens of each model without a
    /// price at the highest prices teamctl knows for its family ([`pricing::ceiling`]): a model
    /// newer than teamctl is never counted as free.
    pub fn capped_cost_usd(&self) -> f64 {
        self.known_cost_usd + estimate(&self.unpriced)
    }

    /// Whether any transcript was found.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

/// Reads the transcripts of `team` (whose config is `cfg`, under the config dir `root`)
/// through `index`: only what was appended since the index last saw each file is parsed.
pub fn read_team(root: &Loc, team: &str, cfg: &TeamConfig, index: &mut Index) -> TeamSpend {
    let mut warnings = Vec::new();
    let located = locate::locate(root, team, cfg, index, &mut warnings);
    let mut spend = read_located(&located, index);
    for w in std::mem::take(&mut spend.warnings) {
        locate::note(&mut warnings, w);
    }
    spend.warnings = warnings;
    spend
}

/// A sum of costs: unknown as soon as one part is.
fn add_cost(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? + b?)
}

/// What one file (or session) spent as computed from its responses: tokens, the cost (unknown
/// when a model has no price), the part that could be priced, and the tokens of models without
/// a price, by model.
#[derive(Debug, Clone, Default)]
struct Computed {
    tokens: Tokens,
    cost: Option<f64>,
    known: f64,
    unpriced: Unpriced,
}

impl Computed {
    fn of(spend: &crate::team::transcript::Spend) -> Computed {
        Computed {
            tokens: spend.tokens(),
            cost: spend.computed_usd(),
            known: spend.known_usd(),
            unpriced: spend.unpriced(),
        }
    }

    fn add(&mut self, o: &Computed) {
        self.tokens.add(&o.tokens);
        self.cost = add_cost(self.cost, o.cost);
        self.known += o.known;
        for (m, t) in &o.unpriced {
            self.unpriced.entry(m.clone()).or_default().add(t);
        }
    }
}

/// Tokens of models without a price, by model.
pub type Unpriced = BTreeMap<String, Tokens>;

/// Each in-process teammate's file with what it spent. Up to 2.1.178 a teammate writes a copy
/// of its whole history per turn: only the longest copy is kept.
type Shares = BTreeMap<PathBuf, Computed>;

fn in_process_shares(located: &BTreeMap<String, Vec<Session>>, index: &Index) -> Shares {
    let mut shares = Shares::new();
    let mut copies: BTreeMap<(String, String), (u64, PathBuf)> = BTreeMap::new();
    for (name, sessions) in located {
        for s in sessions.iter().filter(|s| s.kind == Kind::InProcess) {
            let st = state(index, &s.path);
            if let Some(first) = &st.first_uuid {
                let key = (name.clone(), first.clone());
                match copies.get(&key) {
                    Some((len, _)) if *len >= st.offset => continue,
                    _ => {
                        if let Some((_, shorter)) =
                            copies.insert(key, (st.offset, s.path.to_path_buf()))
                        {
                            shares.remove(&shorter);
                        }
                    }
                }
            }
            shares.insert(s.path.to_path_buf(), Computed::of(&st.spend));
        }
    }
    shares
}

fn state(index: &Index, p: &Loc) -> FileState {
    index.get(p).cloned().unwrap_or_default()
}

/// One session's figures: the member's own share, and what the session counts for in the
/// team's total (as a process: an in-process teammate's counts through its lead's session).
struct Figures {
    share_tokens: Tokens,
    share_cost: Option<f64>,
    share_unpriced: Unpriced,
    share_known: f64,
    session_tokens: Tokens,
    session_cost: Option<f64>,
    /// What the session counts for with its unpriced responses left out, and those.
    session_known: f64,
    session_unpriced: Unpriced,
    source: CostSource,
}

fn figures(s: &Session, main: &FileState, files: &[(&Loc, FileState)], shares: &Shares) -> Figures {
    match (s.kind, main.spend.claude_code()) {
        (Kind::InProcess, _) => {
            let own = shares
                .get(s.path.path())
                .cloned()
                .unwrap_or_else(|| Computed::of(&main.spend));
            Figures {
                share_tokens: own.tokens,
                share_cost: own.cost,
                share_known: own.known,
                share_unpriced: own.unpriced,
                session_tokens: Tokens::default(),
                session_cost: Some(0.0),
                session_known: 0.0,
                session_unpriced: Unpriced::new(),
                source: CostSource::Computed,
            }
        }
        // Claude Code's own figure covers its in-process teammates: their part is taken out.
        (_, Some(cs)) => {
            let mut tokens = cs.tokens;
            let mut cost = Some(cs.total_cost_usd);
            for c in s.in_process.iter().filter_map(|p| shares.get(p.path())) {
                tokens.sub(&c.tokens);
                cost = add_cost(cost, c.cost.map(|c| -c)).map(|v| v.max(0.0));
            }
            Figures {
                share_tokens: tokens,
                share_cost: cost,
                share_known: cost.unwrap_or(0.0),
                share_unpriced: Unpriced::new(),
                session_tokens: cs.tokens,
                session_cost: Some(cs.total_cost_usd),
                session_known: cs.total_cost_usd,
                session_unpriced: Unpriced::new(),
                source: CostSource::ClaudeCode,
            }
        }
        (_, None) => {
            let mut own = Computed {
                cost: Some(0.0),
                ..Computed::default()
            };
            for (_, st) in files {
                own.add(&Computed::of(&st.spend));
            }
            let mut all = own.clone();
            for c in s.in_process.iter().filter_map(|p| shares.get(p.path())) {
                all.add(c);
            }
            Figures {
                share_tokens: own.tokens,
                share_cost: own.cost,
                share_known: own.known,
                share_unpriced: own.unpriced,
                session_tokens: all.tokens,
                session_cost: all.cost,
                session_known: all.known,
                session_unpriced: all.unpriced,
                source: CostSource::Computed,
            }
        }
    }
}

/// [`read_team`] for sessions already located.
pub fn read_located(located: &BTreeMap<String, Vec<Session>>, index: &mut Index) -> TeamSpend {
    read_located_tapped(located, index, None)
}

/// [`read_located`], handing `tap` each line read ([`Index::update_all_tapped`]).
pub(super) fn read_located_tapped(
    located: &BTreeMap<String, Vec<Session>>,
    index: &mut Index,
    tap: Option<&LineTap>,
) -> TeamSpend {
    // Everything read up to its end first (in parallel when there is much to read); below,
    // each file's state is then only looked at.
    let all: Vec<Loc> = located
        .values()
        .flatten()
        .flat_map(|s| s.files().cloned())
        .collect();
    index.update_all_tapped(&all, tap);
    let mut out = TeamSpend {
        cost_usd: Some(0.0),
        ..TeamSpend::default()
    };
    // In-process teammates first: the lead's share leaves their part out.
    let shares = in_process_shares(located, index);
    // Members in config order is the caller's business; sessions in name order here.
    for (name, sessions) in located {
        // A shorter copy of an in-process teammate's history is left out (see above).
        let sessions = sessions
            .iter()
            .filter(|s| s.kind != Kind::InProcess || shares.contains_key(s.path.path()));
        let m = member_spend(sessions, index, &shares, &mut out);
        out.members.insert(name.clone(), m);
    }
    if out.members.is_empty() {
        out.cost_usd = None;
    }
    out.warnings = index.take_warnings();
    for (model, t) in &out.unpriced {
        out.warnings.push(unpriced_warning(model, t));
    }
    for p in &all {
        let st = state(index, p);
        if let Some(w) = unread_warning(p, st.oversized, st.unreadable) {
            out.warnings.push(w);
        }
    }
    out
}

/// What a cap does with a model teamctl has no price for.
fn unpriced_warning(model: &str, t: &Tokens) -> String {
    let (like, p) = pricing::ceiling(model);
    format!(
        "no price for model {model:?} in this teamctl: its cost shows as unknown, and a \
         --max-cost cap counts its {} tokens at the prices of {like} (${}/${} per million \
         input/output tokens), the highest teamctl knows for it",
        t.total(),
        p.input,
        p.output
    )
}

/// What reading `p` could not count, if anything.
fn unread_warning(p: &Loc, oversized: u64, unreadable: u64) -> Option<String> {
    let mut what = Vec::new();
    if oversized > 0 {
        what.push(format!(
            "{oversized} line(s) over {} MiB skipped",
            crate::team::transcript::MAX_LINE >> 20
        ));
    }
    if unreadable > 0 {
        what.push(format!(
            "{unreadable} assistant entr(ies) that could not be read"
        ));
    }
    (!what.is_empty()).then(|| {
        format!(
            "{}: {}; the tokens and cost they hold are not counted",
            p.display(),
            what.join(", ")
        )
    })
}

/// One member's work from its `sessions`, adding what they count for to the team's `out`.
fn member_spend<'a>(
    sessions: impl Iterator<Item = &'a Session>,
    index: &Index,
    shares: &Shares,
    out: &mut TeamSpend,
) -> MemberSpend {
    let mut m = MemberSpend {
        cost_usd: Some(0.0),
        ..MemberSpend::default()
    };
    let mut all_claude_code = true;
    let mut newest: Option<SystemTime> = None;
    let mut newest_session: Option<SystemTime> = None;
    for s in sessions {
        let files: Vec<(&Loc, FileState)> = s.files().map(|p| (p, state(index, p))).collect();
        let main = &files[0].1;
        let f = figures(s, main, &files, shares);
        all_claude_code &= f.source == CostSource::ClaudeCode;
        m.tokens.add(&f.share_tokens);
        m.cost_usd = add_cost(m.cost_usd, f.share_cost);
        m.known_usd += f.share_known;
        for (model, t) in &f.share_unpriced {
            m.unpriced.entry(model.clone()).or_default().add(t);
        }
        out.tokens.add(&f.session_tokens);
        // The known part still counts towards a budget, and the unpriced tokens are kept for it.
        out.known_cost_usd += f.session_known;
        out.cost_usd = add_cost(out.cost_usd, f.session_cost);
        for (model, t) in f.session_unpriced {
            out.unpriced.entry(model).or_default().add(&t);
        }
        for (p, st) in &files {
            m.transcripts.push(p.to_path_buf());
            let mtime = p.stat().ok().flatten().map(|i| i.mtime);
            if let Some(t) = mtime
                && newest.is_none_or(|n| t > n)
            {
                newest = Some(t);
                m.in_turn = st.turn.messages > 0 && !st.turn.ended;
                m.api = st.api.clone();
            }
            if let Some(t) = mtime
                && p.path() == s.path.path()
                && newest_session.is_none_or(|n| t > n)
            {
                newest_session = Some(t);
                m.turn = TurnTimes {
                    began_at: st.turn.began_at.clone(),
                    ended_at: st.turn.ended_at.clone(),
                };
            }
            if let Some(model) = &st.model
                && (m.model.is_none() || p.path() == s.path.path())
            {
                m.model = Some(model.clone());
                m.context_tokens = st.context_tokens;
            }
        }
        // The activity of the session written last (its own file, not a subagent's).
        let act = main.activity().cloned();
        if act.is_some()
            && m.activity
                .as_ref()
                .is_none_or(|a| a.at.as_deref() <= act.as_ref().and_then(|x| x.at.as_deref()))
        {
            m.activity = act;
        }
    }
    m.last_write = newest;
    m.cost_source = m.cost_usd.map(|_| {
        if all_claude_code {
            CostSource::ClaudeCode
        } else {
            CostSource::Computed
        }
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;
    use std::path::Path;

    fn write(path: &Path, lines: &[serde_json::Value]) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut s = String::new();
        for l in lines {
            s.push_str(&l.to_string());
            s.push('\n');
        }
        fs::write(path, s).unwrap();
    }

    fn response(id: &str, team: Option<&str>, agent: Option<&str>) -> serde_json::Value {
        json!({"type":"assistant","teamName":team,"agentName":agent,"timestamp":"2026-12-01T00:00:00.000Z",
            "message":{"id":id,"model":"claude-opus-5-5","content":[{"type":"text","text":id}],"stop_reason":"end_turn",
            "usage":{"input_tokens":10,"output_tokens":5}}})
    }

    fn cost_state(total: f64, input: u64, output: u64) -> serde_json::Value {
        json!({"type":"cost-state","totalCostUSD":total,"modelUsage":{"claude-opus-5-5":{"inputTokens":input,"outputTokens":output,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":total}}})
    }

    #[test]
    fn lead_pane_and_in_process_as_claude_code_recorded_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let proj = root.join("projects/-w");
        let lead_id = "11111111-2222-3333-4444-555555555555";
        let cfg = TeamConfig::parse(
            json!({"name":"t","createdAt":0,"leadSessionId":lead_id,"leadAgentId":"team-lead@t","members":[
                {"name":"team-lead","agentId":"team-lead@t","cwd":"/w"},
                {"name":"worker","cwd":"/w","backendType":"tmux"},
                {"name":"inner","cwd":"/w","backendType":"in-process"}]})
            .to_string()
            .as_bytes(),
            Path::new("config.json"),
        )
        .unwrap();
        // The lead: 2 responses of its own, 3 of its in-process teammate, and its cost-state over
        // all five, as 2.1.332 wrote them.
        let lead = proj.join(format!("{lead_id}.jsonl"));
        write(
            &lead,
            &[
                response("l1", None, None),
                response("l2", None, None),
                cost_state(0.0007000000000000001, 50, 25),
            ],
        );
        let subs = proj.join(lead_id).join("subagents");
        write(
            &subs.join("agent-ainner-1.jsonl"),
            &[
                response("i1", None, None),
                response("i2", None, None),
                response("i3", None, None),
            ],
        );
        fs::write(
            subs.join("agent-ainner-1.meta.json"),
            r#"{"name":"inner","teamName":"t"}"#,
        )
        .unwrap();
        // A plain subagent of the lead counts towards the lead.
        write(&subs.join("agent-x.jsonl"), &[response("x1", None, None)]);
        // The pane teammate, still running (no cost-state).
        write(
            &proj.join("w1.jsonl"),
            &[response("w1", Some("t"), Some("worker"))],
        );
        // Someone else's session in the same project.
        write(
            &proj.join("other.jsonl"),
            &[response("o1", Some("u"), Some("worker"))],
        );
        let mut ix = Index::in_memory();
        let s = read_team(&Loc::root(root), "t", &cfg, &mut ix);
        let lead = &s.members["team-lead"];
        assert_eq!(lead.cost_source, Some(CostSource::ClaudeCode));
        assert_eq!(lead.tokens.input, 20);
        assert_eq!(lead.cost_usd, Some(0.0007000000000000001 - 0.00042));
        assert_eq!(
            lead.transcripts.len(),
            2,
            "its file and its plain subagent's"
        );
        let inner = &s.members["inner"];
        assert_eq!(
            (inner.cost_source, inner.cost_usd),
            (Some(CostSource::Computed), Some(0.00042))
        );
        let worker = &s.members["worker"];
        assert_eq!(
            (worker.cost_source, worker.cost_usd, worker.tokens.input),
            (Some(CostSource::Computed), Some(0.00014000000000000001), 10)
        );
        assert_eq!(worker.activity.as_ref().unwrap().summary, "w1");
        assert_eq!(s.tokens.input, 60);
        assert_eq!(
            s.cost_usd,
            Some(0.0007000000000000001 + 0.00014000000000000001)
        );
        assert_eq!(s.members.len(), 3);
    }

    #[test]
    fn old_per_turn_copies_of_an_in_process_history_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let lead_id = "21111111-2222-3333-4444-555555555555";
        let cfg = TeamConfig::parse(
            json!({"name":"lead-team","leadSessionId":lead_id,"members":[
                {"name":"team-lead","cwd":"/w"},{"name":"inner","cwd":"/w","backendType":"in-process"}]})
            .to_string()
            .as_bytes(),
            Path::new("config.json"),
        )
        .unwrap();
        let proj = root.join("projects/-w");
        write(
            &proj.join(format!("{lead_id}.jsonl")),
            &[response("l1", None, None)],
        );
        let subs = proj.join(lead_id).join("subagents");
        let mut first = response("i1", None, None);
        first["uuid"] = "u-1".into();
        write(&subs.join("agent-a1.jsonl"), std::slice::from_ref(&first));
        write(
            &subs.join("agent-a2.jsonl"),
            &[first.clone(), response("i2", None, None)],
        );
        // As Claude Code 2.1.160 writes them: the meta is only the name, as agentType.
        for f in ["agent-a1", "agent-a2"] {
            fs::write(
                subs.join(format!("{f}.meta.json")),
                r#"{"agentType":"inner"}"#,
            )
            .unwrap();
        }
        let s = read_team(&Loc::root(root), "lead-team", &cfg, &mut Index::in_memory());
        assert_eq!(s.members["inner"].tokens.input, 20);
        assert_eq!(s.members["inner"].transcripts.len(), 1);
        assert_eq!(s.tokens.input, 30);
    }
}
