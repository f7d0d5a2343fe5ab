//! Each teammate's own runtime from a team file (docs/team-file.md): `mcp_config`,
//! `strict_mcp_config`, `settings`, `effort` and `env`, at the top level for every teammate and
//! in a `[[member]]` for one (a member's `env` is merged over the top level's, its other keys
//! replace the top level's); the checks that it can be given: every `${NAME}` set in teamctl's
//! environment, and the client taking each flag.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::ops::Range;

use anyhow::{Result, bail};
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};

use super::file::{FileMember, Loaded, TeamFile};
use super::spec::MemberSpec;
use crate::error::usage;
use crate::store::named::inside;
use crate::team::runtime::{self, Runtime, Vars};

/// `mcp_config = "file"` or `["file", …]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConfig(pub Vec<String>);

impl<'de> Deserialize<'de> for McpConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = McpConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a file or a list of files")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<McpConfig, E> {
                Ok(McpConfig(vec![v.to_string()]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<McpConfig, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<String>()? {
                    out.push(s);
                }
                Ok(McpConfig(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// `m`'s runtime: its own keys over the file's top-level ones, its files resolved inside the
/// team file's folder, its `env` checked (not read: see [`check_env`]).
///
/// # Errors
/// A usage error at the key: a file that is absolute, outside the folder or missing; an effort
/// that is no word; a bad `env` entry ([`runtime::check_env`]).
pub(super) fn of(l: &Loaded, top: &TeamFile, m: &FileMember) -> Result<Runtime> {
    let name = m.name.get_ref();
    let file = |key: &str, rel: &str, at: Range<usize>| {
        inside(&l.dir(), rel)
            .map(|p| p.to_string_lossy().into_owned())
            .map_err(|e| l.error_at(at, &format!("{key} of {name}: {e:#}")))
    };
    let mut mcp_config = Vec::new();
    if let Some(list) = m.mcp_config.as_ref().or(top.mcp_config.as_ref()) {
        for f in &list.get_ref().0 {
            mcp_config.push(file("mcp_config", f, list.span())?);
        }
    }
    let settings = m.settings.as_ref().or(top.settings.as_ref());
    let effort = m.effort.as_ref().or(top.effort.as_ref());
    if let Some(e) = effort {
        let word = e.get_ref();
        if !(1..=32).contains(&word.len()) || !word.bytes().all(|b| b.is_ascii_lowercase()) {
            return Err(l.error_at(
                e.span(),
                &format!("effort of {name}: {word:?} is no effort level (low, medium, high, …)"),
            ));
        }
    }
    let mut env = BTreeMap::new();
    for (k, v) in top.env.iter().chain(m.env.iter()).flatten() {
        runtime::check_env(k, v.get_ref())
            .map_err(|e| l.error_at(v.span(), &format!("{name}: {e}")))?;
        env.insert(k.clone(), v.get_ref().clone());
    }
    Ok(Runtime {
        mcp_config,
        strict_mcp_config: m
            .strict_mcp_config
            .or(top.strict_mcp_config)
            .unwrap_or(false),
        settings: settings
            .map(|s| file("settings", s.get_ref(), s.span()))
            .transpose()?,
        effort: effort.map(|e| e.get_ref().clone()),
        env,
    })
}

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
