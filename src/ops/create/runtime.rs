//! The checks that each teammate's own runtime (its MCP servers, settings, effort and env: read
//! from a team file in [`super::file`]) can be given: every `${NAME}` set in teamctl's
//! environment, and the client taking each flag.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};

use super::spec::MemberSpec;
use crate::error::usage;
use crate::team::runtime::Vars;

/// The names every teammate's `${NAME}` takes from teamctl's environment.
pub fn env_names(members: &[MemberSpec]) -> BTreeSet<&str> {
    members.iter().flat_map(|m| m.runtime.env_names()).collect()
}

/// Checks that `vars` holds every `${NAME}` of every teammate: run before anything starts.
///
/// # Errors
/// A usage error naming the teammate, the entry and the variable not set.
pub fn check_env(members: &[MemberSpec], vars: &Vars) -> Result<()> {
    for m in members {
        m.runtime
            .env_values(vars)
            .map_err(|e| usage(format!("member '{}': {e}", m.name)))?;
    }
    Ok(())
}

/// Checks that the client takes every flag the teammates' runtimes need, and each effort
/// level, by what its `--help` (`help`) lists; `version` names it.
///
/// # Errors
/// A usage error naming the version, the flag (or the level) and the teammate; an error when
/// flags are needed and the help could not be read.
pub(super) fn check_client(
    members: &[MemberSpec],
    help: Option<&str>,
    version: Option<&str>,
) -> Result<()> {
    if members.iter().all(|m| m.runtime.flags().is_empty()) {
        return Ok(());
    }
    let version = version.unwrap_or("of an unknown version");
    let Some(help) = help else {
        bail!(
            "could not read `claude --help` (claude {version}) to check that it takes the \
             team file's --mcp-config, --settings or --effort"
        );
    };
    let listed = options(help);
    for m in members {
        for flag in m.runtime.flags() {
            if !listed.contains_key(flag) {
                return Err(usage(format!(
                    "claude {version} has no {flag} (member '{}', `{}` in the team file): \
                     update Claude Code, or take the key out",
                    m.name,
                    flag.trim_start_matches('-').replace('-', "_")
                )));
            }
        }
        let (Some(level), Some(text)) = (&m.runtime.effort, listed.get("--effort")) else {
            continue;
        };
        if let Some(levels) = choices(text)
            && !levels.contains(&level.as_str())
        {
            return Err(usage(format!(
                "claude {version} takes --effort {}, not {level:?} (member '{}')",
                levels.join(", "),
                m.name
            )));
        }
    }
    Ok(())
}

/// The options a client's `--help` lists, each with its description: an option's line starts
/// with two spaces and a dash (`  -c, --continue  …`, `  --effort <level>  …`), and runs on
/// over the more deeply indented lines after it.
fn options(help: &str) -> BTreeMap<&str, String> {
    let mut out: BTreeMap<&str, String> = BTreeMap::new();
    let mut current: Vec<&str> = Vec::new();
    for line in help.lines() {
        if line.starts_with("  -") {
            current = line
                .split_whitespace()
                .map(|w| w.trim_end_matches(','))
                .take_while(|w| w.starts_with('-') || w.starts_with('<'))
                .filter(|w| w.starts_with('-'))
                .collect();
            for f in &current {
                out.insert(f, line.to_string());
            }
        } else if line.starts_with("   ") {
            for f in &current {
                out.entry(f).or_default().push_str(line);
            }
        } else {
            current.clear();
        }
    }
    out
}

/// The choices an option's description lists in parentheses, `(low, medium, high)`, when it
/// is a list of lowercase words.
fn choices(text: &str) -> Option<Vec<&str>> {
    let inner = text.split_once('(')?.1.split_once(')')?.0;
    let words: Vec<&str> = inner.split(',').map(str::trim).collect();
    words
        .iter()
        .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
        .then_some(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::paths::MemberName;
    use crate::team::runtime::Runtime;

    /// 2.1.332's `--help`, wrapped at 80 columns (parts).
    const HELP_332: &str = "Usage: claude [options] [command] [prompt]

Options:
  --bare                                Minimal mode: skip hooks, LSP, plugin
                                        (CLAUDE.md dirs), --mcp-config,
                                        --settings, --agents, --plugin-dir.
  --disallowedTools, --disallowed-tools <tools...>
      Comma or space-separated list of tool names to deny (e.g. \"Bash(git *)
      Edit\")
  --effort <level>                      Effort level for the current session
                                        (low, medium, high, xhigh, max)
  --mcp-config <configs...>             Load MCP servers from JSON files or
                                        strings (space-separated)
  --settings <file-or-json>             Settings file or JSON string to load
                                        more settings from
  --strict-mcp-config                   Only use MCP servers from --mcp-config,
                                        ignoring all other MCP configurations

Commands:
  mcp                                   Configure and manage MCP servers
";

    /// An old client's: one line per option, no --effort, --settings only mentioned.
    const HELP_OLD: &str = "Options:
  --bare    Minimal mode, via --settings, --effort
  --mcp-config <configs...>    Load MCP servers (space-separated)
";

    fn member(runtime: Runtime) -> MemberSpec {
        MemberSpec {
            runtime,
            ..MemberSpec::new(MemberName::parse("alice").unwrap(), "b".into())
        }
    }

    #[test]
    fn the_help_lists_options_not_mentions() {
        let o = options(HELP_332);
        for f in [
            "--bare",
            "--disallowedTools",
            "--disallowed-tools",
            "--effort",
            "--mcp-config",
            "--settings",
            "--strict-mcp-config",
        ] {
            assert!(o.contains_key(f), "{f}");
        }
        assert!(!o.contains_key("--agents") && !o.contains_key("mcp"));
        assert_eq!(
            choices(&o["--effort"]),
            Some(vec!["low", "medium", "high", "xhigh", "max"])
        );
        assert_eq!(choices(&o["--disallowed-tools"]), None);
        let old = options(HELP_OLD);
        assert!(old.contains_key("--mcp-config"));
        assert!(!old.contains_key("--settings") && !old.contains_key("--effort"));
    }

    #[test]
    fn a_missing_flag_or_level_names_the_version() {
        let effort = |e: &str| {
            member(Runtime {
                effort: Some(e.into()),
                ..Runtime::default()
            })
        };
        let v = Some("2.1.1 (Claude Code)");
        assert!(check_client(&[effort("low")], Some(HELP_332), v).is_ok());
        let e = check_client(&[effort("low")], Some(HELP_OLD), v).unwrap_err();
        assert_eq!(
            e.to_string(),
            "claude 2.1.1 (Claude Code) has no --effort (member 'alice', `effort` in the team \
             file): update Claude Code, or take the key out"
        );
        assert!(matches!(
            e.downcast_ref::<crate::Error>(),
            Some(crate::Error::Usage(_))
        ));
        let e = check_client(&[effort("ultra")], Some(HELP_332), v).unwrap_err();
        assert_eq!(
            e.to_string(),
            "claude 2.1.1 (Claude Code) takes --effort low, medium, high, xhigh, max, not \
             \"ultra\" (member 'alice')"
        );
        // Nothing needed: nothing asked, even without a help.
        assert!(check_client(&[member(Runtime::default())], None, None).is_ok());
        assert!(check_client(&[effort("low")], None, v).is_err());
    }
}
