//! What a create reports: the steps of its state machine, each teammate's state, the result.

use serde::Serialize;

use crate::host::claude::ClaudeInfo;
use crate::sandbox::Shown;

/// A step of the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// Checking names, the binary, tmux and what already exists.
    Validating,
    /// Writing `config.json`, the task folder and the inboxes.
    Provisioning,
    /// Starting the teammates.
    Launching,
    /// Waiting for every teammate to take its brief.
    Waiting,
    /// Every teammate took its brief.
    Ready,
    /// Provisioned, not launched (`--launch none`).
    Provisioned,
    /// Something went wrong; see the reason.
    Failed,
}

impl Step {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Validating => "validating",
            Step::Provisioning => "provisioning",
            Step::Launching => "launching",
            Step::Waiting => "waiting",
            Step::Ready => "ready",
            Step::Provisioned => "provisioned",
            Step::Failed => "failed",
        }
    }
}

/// A teammate's state in the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberState {
    /// Provisioned, not started.
    Provisioned,
    /// Started, brief not taken yet.
    Starting,
    /// Took its brief or reported to the lead.
    Ready,
    /// Its process exited before it took its brief.
    Exited,
    /// Its pane could not be started.
    NotStarted,
}

/// One teammate in the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberOutcome {
    /// Name.
    pub name: String,
    /// Palette colour.
    pub color: String,
    /// tmux pane id, when started.
    pub pane: Option<String>,
    /// State.
    pub state: MemberState,
    /// The brief's `msg_id`.
    #[serde(skip)]
    pub brief_id: String,
    /// Its sandbox (`null`: it runs unconfined).
    pub sandbox: Option<Shown>,
}

/// The result of a create.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Final state: `ready`, `provisioned` or `failed`.
    pub state: Step,
    /// Why it failed.
    pub reason: Option<String>,
    /// `leadSessionId`.
    pub lead_session_id: String,
    /// The teammates.
    pub members: Vec<MemberOutcome>,
    /// The binary, when launching.
    pub claude: Option<ClaudeInfo>,
    /// The tmux session, when launching.
    pub tmux_session: Option<String>,
}
