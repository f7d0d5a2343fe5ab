//! All the checks, in the order they are printed: the config dir, the machine, then each team.

use super::finding::{Check, warn};
use super::inputs::Inputs;
use super::machine::machine;
use super::team::team_checks;
use super::tree::{config_dir, symlinks, team_dirs};

/// Runs every check, in the order they are printed.
pub fn run(inputs: &Inputs) -> Vec<Check> {
    let (found, usable) = config_dir(inputs);
    let mut out = vec![found];
    out.extend(machine(inputs));
    if !usable {
        return out;
    }
    let teams = match &inputs.team {
        Some(t) => vec![t.clone()],
        None => team_dirs(&inputs.layout),
    };
    out.extend(symlinks(&inputs.layout));
    if teams.is_empty() {
        out.push(warn(
            "teams",
            None,
            Some(&inputs.layout.teams_dir()),
            "no teams found".into(),
            "ask Claude Code to create an agent team (with agent teams enabled)",
        ));
    }
    for t in &teams {
        out.extend(team_checks(inputs, t));
    }
    out
}
