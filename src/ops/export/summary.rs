//! `summary.json`: the record for a program ([`Summary`]), and what [`super::markdown`] renders.

use serde::Serialize;

use crate::observe::document::StatusDocument;
use crate::observe::spend::{CostSource, TeamSpend};
use crate::observe::status::MemberStatus;
use crate::team::actions::Action;
use crate::team::model::Kind;
use crate::team::tasks::TaskView;
use crate::team::transcript::Tokens;

/// The run a record ends (`run --export`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// `--name`.
    pub name: String,
    /// The run's state as the record was taken: `done`, `failed`, `timeout`, …
    pub state: String,
    /// Why it failed or timed out.
    pub reason: Option<String>,
    /// The lead's answer as the run found it (its transcript, else its pane).
    pub result: Option<String>,
    /// Milliseconds from the run's start to the record.
    pub elapsed_ms: u64,
    /// The run's spending limits (`--max-cost`, `--max-tokens`, `--max-cost-per-member`,
    /// `--warn-at`), each `null` when not set.
    pub cap: RunCap,
    /// What `--merge-into` merged before the record was taken; the key only with
    /// `--merge-into` (a record of any other run is as it always was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<RunMerge>,
}

/// What `run --merge-into` merged once the run was done, before its record was taken
/// (`summary.json` `run.merge`): the `merge --json` document's own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunMerge {
    /// The branch merged onto.
    pub into: String,
    /// Where it pointed before (`null`: the merge made it, or nothing was merged).
    pub before: Option<String>,
    /// Where it points after (`null`: nothing was merged).
    pub after: Option<String>,
    /// The check run after each merge (`--check`).
    pub check: Option<String>,
    /// How many times it ran.
    pub checks_run: u32,
    /// Each helper's work, in the order merged.
    pub members: Vec<MergedMember>,
    /// Why nothing was merged (the run was not done, no helper had a worktree, the queue
    /// failed), else `null`.
    pub error: Option<String>,
}

impl RunMerge {
    /// Nothing merged onto `into`, for `why`.
    pub fn nothing(into: &str, why: &str) -> RunMerge {
        RunMerge {
            into: into.to_string(),
            before: None,
            after: None,
            check: None,
            checks_run: 0,
            members: Vec::new(),
            error: Some(why.to_string()),
        }
    }
}

/// One helper's work in a run's merge (`summary.json` `run.merge.members[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MergedMember {
    /// Its name (the helper's own label: untrusted).
    pub name: String,
    /// Its branch.
    pub branch: String,
    /// `merged`, `up_to_date`, `conflict`, `check_failed` or `missing` (as `merge --json`).
    pub status: String,
    /// The commit its merge made on the branch (`null` unless merged).
    pub merged_as: Option<String>,
    /// The files its merge conflicted in.
    pub conflicts: Vec<String>,
}

/// A run's spending limits, as it was given them (`summary.json` `run.cap`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunCap {
    /// `--max-cost`: USD, the team's total.
    pub max_cost_usd: Option<f64>,
    /// `--max-tokens`: all kinds together.
    pub max_tokens: Option<u64>,
    /// `--max-cost-per-member`: USD, each member on its own.
    pub max_cost_per_member: Option<f64>,
    /// `--warn-at`: the percentage of a limit at which the run warned.
    pub warn_at_percent: Option<f64>,
}

impl From<crate::observe::budget::Cap> for RunCap {
    fn from(c: crate::observe::budget::Cap) -> RunCap {
        RunCap {
            max_cost_usd: c.max_cost_usd,
            max_tokens: c.max_tokens,
            max_cost_per_member: c.max_cost_per_member,
            warn_at_percent: c.warn_at_percent,
        }
    }
}

/// What the team cost, per member and in total (`summary.json` `cost`), as `status --json`
/// reports it ([`crate::observe::spend`]): read from every member's transcripts when the record
/// was taken.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cost {
    /// Each member with a transcript, in `status` order.
    pub members: Vec<MemberCost>,
    /// Tokens by kind of every session.
    pub tokens: Tokens,
    /// What every session cost in USD (`null` when one cost is unknown: a model without a
    /// price).
    pub cost_usd: Option<f64>,
    /// The sum of the costs that are known.
    pub known_cost_usd: f64,
    /// `claude_code` when every member's figure is Claude Code's own, `computed` otherwise,
    /// `null` with the cost.
    pub cost_source: Option<CostSource>,
}

/// One member's cost (`summary.json` `cost.members[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberCost {
    /// Name.
    pub name: String,
    /// Tokens by kind.
    pub tokens: Tokens,
    /// Cost in USD (`null` for a model without a price).
    pub cost_usd: Option<f64>,
    /// `claude_code` (Claude Code's own figure, from an ended session) or `computed` (from the
    /// responses' usage with Claude Code's prices).
    pub cost_source: Option<CostSource>,
    /// The model of its newest response.
    pub model: Option<String>,
}

impl Cost {
    /// The cost of `spend`, members in the order of `members` (then any others); `None` when
    /// no transcript was found.
    pub fn of(spend: &TeamSpend, members: &[MemberStatus]) -> Option<Cost> {
        if spend.is_empty() {
            return None;
        }
        let mut names: Vec<&String> = members
            .iter()
            .map(|m| &m.name)
            .filter(|n| spend.members.contains_key(*n))
            .collect();
        for n in spend.members.keys() {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let members: Vec<MemberCost> = names
            .into_iter()
            .map(|n| {
                let m = &spend.members[n];
                MemberCost {
                    name: n.clone(),
                    tokens: m.tokens,
                    cost_usd: m.cost_usd,
                    cost_source: m.cost_source,
                    model: m.model.clone(),
                }
            })
            .collect();
        let cost_source = spend.cost_usd.map(|_| {
            if members
                .iter()
                .all(|m| m.cost_source == Some(CostSource::ClaudeCode))
            {
                CostSource::ClaudeCode
            } else {
                CostSource::Computed
            }
        });
        Some(Cost {
            members,
            tokens: spend.tokens,
            cost_usd: spend.cost_usd,
            known_cost_usd: spend.known_cost_usd,
            cost_source,
        })
    }
}

/// Where a message is now, as far as the record tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageState {
    /// In its recipient's inbox, not taken yet.
    Unread,
    /// In its recipient's inbox, marked read (Claude Code 2.1.159 and older).
    Read,
    /// Its recipient's transcript shows it was delivered.
    Delivered,
    /// It left its recipient's inbox (teamctl sent it; the inbox no longer holds it).
    Consumed,
    /// Only its sender's side knows of it.
    Sent,
}

impl MessageState {
    /// Its name, as summary.json writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageState::Unread => "unread",
            MessageState::Read => "read",
            MessageState::Delivered => "delivered",
            MessageState::Consumed => "consumed",
            MessageState::Sent => "sent",
        }
    }
}

/// A message's line in a report: its frame type, else its summary, else its text's first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Headline<'a> {
    /// A protocol frame, by its type.
    Frame(&'a str),
    /// A message, by its summary or the first line of its text.
    Said(std::borrow::Cow<'a, str>),
    /// A message with neither.
    Bare,
}

impl Message {
    /// What a report says the message is.
    pub fn headline(&self) -> Headline<'_> {
        match (&self.frame_type, &self.summary, &self.text) {
            (Some(f), _, _) => Headline::Frame(f),
            (None, Some(sum), _) => Headline::Said(sum.into()),
            (None, None, Some(t)) => Headline::Said(crate::team::model::first_line(t, 60).into()),
            (None, None, None) => Headline::Bare,
        }
    }
}

/// What a report says of a record made after the team's folder was removed
/// ([`Summary::team_folder`] false).
pub const FOLDER_GONE: &str =
    "The team's folder was already gone: its members, inboxes and config are not in this record.";

/// How a report words a cost: `… (Claude Code)` or `… (computed)` with `shown` of the amount,
/// `unknown (a model without a price)` when tokens were counted (`known`) but not priced, `—`
/// without a transcript.
pub fn cost_words(
    usd: Option<f64>,
    source: Option<CostSource>,
    known: bool,
    shown: impl Fn(f64) -> String,
) -> String {
    match (usd, source) {
        (Some(v), Some(CostSource::ClaudeCode)) => format!("{} (Claude Code)", shown(v)),
        (Some(v), _) => format!("{} (computed)", shown(v)),
        (None, _) if known => "unknown (a model without a price)".into(),
        (None, _) => "—".into(),
    }
}

/// Where the record knows a message from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// An inbox file.
    Inbox,
    /// teamctl's sent log.
    SentLog,
    /// A transcript.
    Transcript,
}

/// One message of the conversation (`summary.json` `messages[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// When it was sent (its `timestamp`), else when it was delivered.
    pub at: Option<String>,
    /// Sender.
    pub from: String,
    /// Recipient (`*`: a broadcast).
    pub to: String,
    /// Plain message or protocol frame.
    pub kind: Kind,
    /// The frame's type (protocol frames).
    pub frame_type: Option<String>,
    /// Its summary, if any.
    pub summary: Option<String>,
    /// The text as written (`null`: only the sent log knows of it, which keeps no text).
    pub text: Option<String>,
    /// Its id (`msg_id`, or the entry id teamctl derives), when known.
    pub id: Option<String>,
    /// Where it is now.
    pub state: MessageState,
    /// When its recipient's transcript shows it delivered.
    pub delivered_at: Option<String>,
    /// Where the record knows it from.
    pub sources: Vec<Source>,
}

/// A transcript in the record (`summary.json` `transcripts[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptInfo {
    /// Whose.
    pub member: String,
    /// Its session id.
    pub session_id: Option<String>,
    /// `lead`, `in_process` or `pane`.
    pub kind: &'static str,
    /// Its path in the bundle (`null`: not found).
    pub path: Option<String>,
    /// Where it was found.
    pub source: Option<String>,
    /// Whole lines copied.
    pub lines: usize,
    /// Bytes copied.
    pub bytes: u64,
}

/// A file of the bundle (`summary.json` `files[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileInfo {
    /// Its path in the bundle.
    pub path: String,
    /// Size.
    pub bytes: u64,
    /// SHA-256, hex.
    pub sha256: String,
    /// Whether it was copied as one settled version (`false`: it kept changing, or did not
    /// parse, until the deadline; the bytes are the last read).
    pub settled: bool,
}

/// A teammate's branch and where it ended (`summary.json` `worktrees[]`): the work of a
/// teammate `create` gave a git worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BranchInfo {
    /// Whose.
    pub member: String,
    /// Its branch.
    pub branch: String,
    /// The commit the branch points at now (`null`: git could not tell).
    pub commit: Option<String>,
    /// The commit it started from.
    pub base: String,
    /// Its worktree's folder.
    pub path: String,
    /// Files that differ from `base` in the worktree (`null`: git could not tell, e.g. the
    /// worktree was removed).
    pub changed: Option<u64>,
    /// The repository.
    pub repo: String,
    /// The tracked files that differ from `base`, as `git diff --numstat` counts them: in the
    /// worktree (committed or not), else on the branch (`null`: git could not tell). `added`
    /// and `deleted` are null for a binary file.
    pub files: Option<Vec<crate::host::git::NumStat>>,
    /// The worktree as teamctl's record has it (where git reads its work, and how).
    #[serde(skip)]
    pub tree: crate::team::lead::Worktree,
}

impl BranchInfo {
    /// Where its work is read: the worktree when its folder is there (against the work tree),
    /// else the repository (against the branch's commit).
    ///
    /// # Errors
    /// Neither is there; the worktree is not as git made it (named).
    pub fn work(&self) -> anyhow::Result<(crate::host::git::At, Option<String>)> {
        use crate::observe::worktree::{at, repo_at};
        if std::path::Path::new(&self.path).is_dir() {
            return Ok((at(&self.tree)?, None));
        }
        match &self.commit {
            Some(c) => Ok((repo_at(&self.tree), Some(c.clone()))),
            None => anyhow::bail!("its worktree and its branch {} are both gone", self.branch),
        }
    }

    /// Its patch against `base` (binary files included, as `git apply` takes them).
    ///
    /// # Errors
    /// Neither its worktree nor its branch is there, or git failing.
    pub fn patch(&self) -> anyhow::Result<String> {
        let (place, to) = self.work()?;
        crate::host::git::diff_text(&place, &self.base, to.as_deref(), false)
    }

    /// The branches of the worktrees teamctl's record of a team names.
    pub fn of(members: &[crate::team::lead::MemberLaunch]) -> Vec<BranchInfo> {
        members
            .iter()
            .filter_map(|m| {
                let t = m.worktree.as_ref()?;
                let now = crate::observe::worktree::WorktreeStatus::read(t);
                Some(BranchInfo {
                    member: m.name.clone(),
                    commit: crate::host::git::branch_commit(
                        std::path::Path::new(&t.repo),
                        &t.branch,
                    ),
                    branch: t.branch.clone(),
                    base: t.base.clone(),
                    path: t.path.clone(),
                    changed: now.changed,
                    repo: t.repo.clone(),
                    files: None,
                    tree: t.clone(),
                })
                .map(|mut b| {
                    b.files = b.work().ok().and_then(|(place, to)| {
                        crate::host::git::numstat(&place, &b.base, to.as_deref()).ok()
                    });
                    b
                })
            })
            .collect()
    }
}

/// `summary.json`. Every key always present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Always 1.
    pub schema_version: u32,
    /// When the record was taken.
    pub generated_at: String,
    /// `teamctl <version>`.
    pub generator: String,
    /// The team.
    pub team: String,
    /// Whether `teams/<team>` existed when the record was taken.
    pub team_folder: bool,
    /// The run this record ends (`run --export`), else `null`.
    pub run: Option<RunInfo>,
    /// The `status --json` document, as `status` would have printed it (for teamctl's default
    /// identity in the team).
    pub status: StatusDocument,
    /// Every task (`tasks --json` shape), internal ones too.
    pub tasks: Vec<TaskView>,
    /// Every message on record, oldest first.
    pub messages: Vec<Message>,
    /// The lead's last answer (its last text), when there is one.
    pub result: Option<String>,
    /// Whether that answer ended the lead's turn (its final answer).
    pub result_final: bool,
    /// The transcripts.
    pub transcripts: Vec<TranscriptInfo>,
    /// Cost per member and in total ([`Cost`]); `null` when no transcript was found.
    pub cost: Option<Cost>,
    /// Each teammate's branch and final commit, for teammates with their own worktree.
    pub worktrees: Vec<BranchInfo>,
    /// What teamctl did to the team's members itself, oldest first: each restart and resume
    /// (its journal's lines for this team, as `actions.jsonl` holds them).
    pub actions: Vec<Action>,
    /// Every file of the bundle but `summary.json` and `report.md`.
    pub files: Vec<FileInfo>,
    /// What could not be read or was odd (files left as they are).
    pub warnings: Vec<String>,
}
