//! A teammate's own runtime: what it is started with besides the team's flags, as a team file
//! gives it and teamctl's record of the team keeps it. MCP servers (`--mcp-config`, and
//! `--strict-mcp-config` to use no others), a settings file (`--settings`), an effort level
//! (`--effort`) and environment variables.
//!
//! An `env` value is either a literal or `${NAME}`, taken from teamctl's environment when the
//! teammate starts (and again at each restart), so that a secret stays out of the team file
//! and out of every file teamctl writes: a [`Runtime`] holds `${NAME}` as written, and only
//! [`Runtime::env_values`] turns it into the value, for that one teammate's process. teamctl's
//! own secrets (`TEAMCTL_*_TOKEN`, `*_SECRET`) are never taken.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

/// Variables teamctl sets on every teammate's command line itself: an `env` entry could not
/// change them.
pub const SET_BY_TEAMCTL: [&str; 3] = [
    "CLAUDECODE",
    "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS",
    "CLAUDE_CONFIG_DIR",
];

/// One teammate's runtime (every field empty: none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Runtime {
    /// `--mcp-config`: MCP server files (absolute paths).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_config: Vec<String>,
    /// `--strict-mcp-config`: only the servers of `mcp_config`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_mcp_config: bool,
    /// `--settings`: a settings file (an absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<String>,
    /// `--effort`: an effort level (`low`, `medium`, `high`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Environment variables as written: a literal, or `${NAME}` ([`EnvValue`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

impl Runtime {
    /// Whether it sets nothing.
    pub fn is_empty(&self) -> bool {
        *self == Runtime::default()
    }

    /// The client's flags it needs (`--mcp-config`, …), in command-line order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.mcp_config.is_empty() {
            out.push("--mcp-config");
        }
        if self.strict_mcp_config {
            out.push("--strict-mcp-config");
        }
        if self.settings.is_some() {
            out.push("--settings");
        }
        if self.effort.is_some() {
            out.push("--effort");
        }
        out
    }

    /// Its words for the client's command line, unquoted: `--mcp-config A B
    /// --strict-mcp-config --settings S --effort E` (what is set of them).
    pub fn args(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.mcp_config.is_empty() {
            out.push("--mcp-config".to_string());
            out.extend(self.mcp_config.iter().cloned());
        }
        if self.strict_mcp_config {
            out.push("--strict-mcp-config".into());
        }
        if let Some(s) = &self.settings {
            out.extend(["--settings".into(), s.clone()]);
        }
        if let Some(e) = &self.effort {
            out.extend(["--effort".into(), e.clone()]);
        }
        out
    }

    /// Of the variables passed on to every teammate on its command line, those its own `env`
    /// does not set (there, the member's value wins).
    pub fn passthrough(&self, all: &[(String, String)]) -> Vec<(String, String)> {
        all.iter()
            .filter(|(k, _)| !self.env.contains_key(k))
            .cloned()
            .collect()
    }

    /// The `NAME`s its `env` takes from teamctl's environment.
    pub fn env_names(&self) -> BTreeSet<&str> {
        self.env
            .values()
            .filter_map(|v| match EnvValue::parse(v) {
                Ok(EnvValue::From(n)) => Some(n),
                _ => None,
            })
            .collect()
    }

    /// Its `env` with every `${NAME}` taken from `vars`: what the teammate's process gets.
    ///
    /// # Errors
    /// A bad entry ([`check_env`]), or a `NAME` that `vars` does not hold (unset), naming the
    /// variable and the entry.
    pub fn env_values(&self, vars: &Vars) -> Result<Vec<(String, String)>, String> {
        self.env
            .iter()
            .map(|(k, v)| {
                check_env(k, v)?;
                let value = match EnvValue::parse(v)? {
                    EnvValue::Literal(l) => l.to_string(),
                    EnvValue::From(n) => vars.0.get(n).cloned().ok_or_else(|| {
                        format!(
                            "env {k} = \"${{{n}}}\", and {n} is not set in teamctl's \
                             environment: set it, or remove {k}"
                        )
                    })?,
                };
                Ok((k.clone(), value))
            })
            .collect()
    }
}

/// An `env` value: a literal, or `${NAME}` alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvValue<'a> {
    /// Given as it is.
    Literal(&'a str),
    /// `${NAME}`: teamctl's own `NAME`.
    From(&'a str),
}

impl EnvValue<'_> {
    /// Reads `v`.
    ///
    /// # Errors
    /// `${` anywhere but as the whole value `${NAME}`; a `NAME` that is no variable name, or
    /// one of teamctl's own secrets; a NUL.
    pub fn parse(v: &str) -> Result<EnvValue<'_>, String> {
        if v.contains('\0') {
            return Err("an env value cannot hold a NUL".into());
        }
        let Some(inner) = v.strip_prefix("${").and_then(|r| r.strip_suffix('}')) else {
            if v.contains("${") {
                return Err(format!(
                    "{v:?}: `${{NAME}}` is taken only as a whole value, not inside text"
                ));
            }
            return Ok(EnvValue::Literal(v));
        };
        if !is_name(inner) {
            return Err(format!("{v:?}: {inner:?} is not a variable name"));
        }
        if is_teamctl_secret(inner) {
            return Err(format!(
                "{v:?}: {inner} is one of teamctl's own secrets (TEAMCTL_*_TOKEN, *_SECRET), \
                 never given to a teammate"
            ));
        }
        Ok(EnvValue::From(inner))
    }
}

/// Checks one `env` entry: a variable name that teamctl does not set itself, and a value
/// [`EnvValue::parse`] takes.
///
/// # Errors
/// What is wrong, in a sentence.
pub fn check_env(key: &str, value: &str) -> Result<(), String> {
    if !is_name(key) {
        return Err(format!(
            "env {key:?} is not a variable name (letters, digits and '_', not first a digit)"
        ));
    }
    if SET_BY_TEAMCTL.contains(&key) {
        return Err(format!(
            "env {key}: teamctl sets {key} for every teammate itself"
        ));
    }
    EnvValue::parse(value)
        .map(|_| ())
        .map_err(|e| format!("env {key}: {e}"))
}

/// A variable name: an ASCII letter or `_`, then letters, digits and `_`.
pub fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// teamctl's own secrets: `TEAMCTL_*_TOKEN` and `*_SECRET`.
pub fn is_teamctl_secret(name: &str) -> bool {
    (name.starts_with("TEAMCTL_") && name.ends_with("_TOKEN")) || name.ends_with("_SECRET")
}

/// The variables of teamctl's environment that teammates' `${NAME}`s take, read once: their
/// values never show in `Debug`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Vars(BTreeMap<String, String>);

impl Vars {
    /// The `names` that `lookup` finds set (an empty value is set).
    pub fn read<'a>(
        names: impl IntoIterator<Item = &'a str>,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Vars {
        Vars(
            names
                .into_iter()
                .filter_map(|n| Some((n.to_string(), lookup(n)?)))
                .collect(),
        )
    }
}

impl Vars {
    /// The names it holds.
    pub fn names(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

impl fmt::Debug for Vars {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(env: &[(&str, &str)]) -> Runtime {
        Runtime {
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Runtime::default()
        }
    }

    #[test]
    fn values_are_literals_or_a_whole_name() {
        assert_eq!(EnvValue::parse("debug"), Ok(EnvValue::Literal("debug")));
        assert_eq!(EnvValue::parse("$HOME"), Ok(EnvValue::Literal("$HOME")));
        assert_eq!(
            EnvValue::parse("${GH_TOKEN}"),
            Ok(EnvValue::From("GH_TOKEN"))
        );
        for bad in ["Bearer ${X}", "${1X}", "${}", "${A-B}", "a\0b"] {
            assert!(EnvValue::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn teamctl_secrets_are_refused() {
        for name in [
            "TEAMCTL_TELEGRAM_TOKEN",
            "TEAMCTL_SLACK_TOKEN",
            "TEAMCTL_WEBHOOK_SECRET",
            "AWS_SECRET",
        ] {
            let e = EnvValue::parse(&format!("${{{name}}}")).unwrap_err();
            assert!(e.contains("teamctl's own secrets"), "{e}");
        }
        assert!(EnvValue::parse("${GH_TOKEN}").is_ok());
        assert!(EnvValue::parse("${TEAMCTL_TEAM}").is_ok());
    }

    #[test]
    fn keys_are_names_teamctl_does_not_set() {
        assert!(check_env("API_TOKEN", "${X}").is_ok());
        assert!(check_env("1A", "x").is_err());
        assert!(check_env("A B", "x").is_err());
        assert!(check_env("", "x").is_err());
        let e = check_env("CLAUDE_CONFIG_DIR", "/x").unwrap_err();
        assert!(e.contains("teamctl sets"), "{e}");
    }

    #[test]
    fn names_are_taken_from_vars_and_an_unset_one_is_named() {
        let r = runtime(&[("A", "${X}"), ("B", "lit"), ("C", "${Y}")]);
        assert_eq!(r.env_names(), BTreeSet::from(["X", "Y"]));
        let lookup = |n: &str| (n == "X").then(|| "s3cret".to_string());
        let vars = Vars::read(r.env_names(), &lookup);
        assert!(!format!("{vars:?}").contains("s3cret"));
        let e = r.env_values(&vars).unwrap_err();
        assert!(e.contains("env C = \"${Y}\", and Y is not set"), "{e}");
        let r = runtime(&[("A", "${X}"), ("B", "lit")]);
        assert_eq!(
            r.env_values(&vars).unwrap(),
            [("A".into(), "s3cret".into()), ("B".into(), "lit".into())]
        );
    }

    #[test]
    fn args_and_flags() {
        let r = Runtime {
            mcp_config: vec!["/t/a.json".into(), "/t/b.json".into()],
            strict_mcp_config: true,
            settings: Some("/t/s.json".into()),
            effort: Some("low".into()),
            env: BTreeMap::new(),
        };
        assert_eq!(
            r.args().join(" "),
            "--mcp-config /t/a.json /t/b.json --strict-mcp-config --settings /t/s.json \
             --effort low"
        );
        assert_eq!(
            r.flags(),
            [
                "--mcp-config",
                "--strict-mcp-config",
                "--settings",
                "--effort"
            ]
        );
        assert!(Runtime::default().args().is_empty() && Runtime::default().is_empty());
        let json = serde_json::to_string(&runtime(&[("A", "${X}")])).unwrap();
        assert_eq!(json, r#"{"env":{"A":"${X}"}}"#);
    }
}
