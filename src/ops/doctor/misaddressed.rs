//! The inboxes no member reads that hold unread messages ([`crate::observe::misaddressed`]),
//! one warning each with the member it was most likely meant for; `doctor --fix` moves those
//! whose member is certain ([`crate::ops::redeliver::fix`]). An inbox that cannot be read is
//! the `inbox` check's.

use std::path::Path;

use super::finding::{Check, ok, warn};
use super::inputs::Inputs;
use crate::observe::misaddressed::{self, Misaddressed};
use crate::store::paths::TeamName;
use crate::team::config::Team;

/// The `misaddressed` checks of team `t` (one that cannot be opened has none: `team_config`
/// reports it).
pub(super) fn misaddressed_checks(inputs: &Inputs, t: &TeamName) -> Vec<Check> {
    let Ok(team) = Team::open(&inputs.layout, t, &inputs.records) else {
        return Vec::new();
    };
    let name = Some(t.as_str());
    let found = misaddressed::scan(&team).misaddressed;
    if found.is_empty() {
        let message = format!("team '{t}': no inbox that no member reads holds messages");
        return vec![ok("misaddressed", name, None, message)];
    }
    found
        .iter()
        .map(|m| {
            let path = Path::new(&m.path);
            warn("misaddressed", name, Some(path), m.summary(), &fix(m))
        })
        .collect()
}

fn fix(m: &Misaddressed) -> String {
    match (&m.suggestion, m.certain) {
        (Some(s), true) => format!(
            "`teamctl redeliver {}` (to {s}), or `teamctl doctor --fix`",
            m.inbox
        ),
        _ => format!("`teamctl redeliver {} --to MEMBER`", m.inbox),
    }
}
