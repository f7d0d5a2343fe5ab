//! The members as the team's reader sees them, transcripts included: a teammate that never
//! reports idle (`idle_unreported`, [`crate::observe::unreported`]).

use chrono::{DateTime, Utc};

use super::finding::{Check, ok, warn};
use super::inputs::Inputs;
use crate::observe::reader::{Options, TeamReader};
use crate::observe::status::UNREPORTED_TEXT;
use crate::store::paths::TeamName;

/// The `idle_unreported` checks of team `t`: one warning per teammate whose turns end in its
/// transcript but who reports no idle, else one `ok` (none when the team cannot be read:
/// `team_config` says why).
pub(super) fn unreported_checks(inputs: &Inputs, t: &TeamName) -> Vec<Check> {
    let opts = Options {
        probe: false,
        ..Options::default()
    };
    let Ok(mut reader) = TeamReader::open(&inputs.layout, t, inputs.records.clone(), opts) else {
        return Vec::new();
    };
    let now: DateTime<Utc> = inputs.now.into();
    let Ok(present) = reader.read(now) else {
        return Vec::new();
    };
    let name = Some(t.as_str());
    let found: Vec<Check> = present
        .status
        .members
        .iter()
        .filter_map(|m| {
            let since = m.idle_unreported_since.as_deref()?;
            let transcript = m.transcripts.first().map(std::path::Path::new);
            Some(warn(
                "idle_unreported",
                name,
                transcript,
                format!(
                    "{} of team '{t}': {UNREPORTED_TEXT} (its last turn ended at {since} in its \
                     transcript, and no idle_notification came; `wait --idle`, `ask` and plan \
                     approvals go by its transcript, 5 s late)",
                    m.name
                ),
                "restart it: `teamctl wait --on-stall restart …` does (a team teamctl made), or \
                 end its pane and start it again on its session (`claude --resume`)",
            ))
        })
        .collect();
    if found.is_empty() {
        let message = format!("team '{t}': every teammate whose turn ended reported idle");
        return vec![ok("idle_unreported", name, None, message)];
    }
    found
}
