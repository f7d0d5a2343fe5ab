//! The rules themselves: a policy file parsed ([`Policy`], [`load`], [`parse`]), one permission
//! rule in Claude Code's syntax ([`Rule`]) and what it covers, with the wildcard of `Bash(…)`
//! rules.

use std::path::Path;

use anyhow::Result;
use serde::Serialize;
use serde_json::Value;

use super::hosts::{HostPattern, url_host};
use super::paths::{Anchors, PathPattern, request_path};
use crate::error::usage;
use crate::store::named::{NAMED_FILE_LIMIT, read_named_text};

/// `plans` in a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Plans {
    /// Approve every plan.
    Approve,
    /// Deny every plan.
    Deny,
    /// Leave plans to a person (the default).
    Leave,
}

/// `unmatched` in a policy: what happens to a request no rule matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unmatched {
    /// Leave it pending for a person (the default).
    Leave,
    /// Deny it.
    Deny,
}

/// Which kind of file the policy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A teamctl policy (has at least one of `plans`, `sandbox_hosts`, `unmatched`).
    Policy,
    /// A Claude Code `settings.json`: only its `permissions` block is read.
    ClaudeSettings,
}

/// A parsed policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Where it came from.
    pub source: Source,
    pub(super) allow: Vec<Rule>,
    pub(super) deny: Vec<Rule>,
    pub(super) ask: Vec<Rule>,
    /// What to do with plans.
    pub plans: Plans,
    pub(super) hosts_allow: Vec<HostPattern>,
    pub(super) hosts_deny: Vec<HostPattern>,
    /// What to do with requests no rule matches.
    pub unmatched: Unmatched,
}

const POLICY_KEYS: [&str; 4] = ["permissions", "plans", "sandbox_hosts", "unmatched"];
const OWN_KEYS: [&str; 3] = ["plans", "sandbox_hosts", "unmatched"];
/// Keys of Claude Code's `permissions` block that mean nothing for answering requests.
const IGNORED_PERMISSION_KEYS: [&str; 4] = [
    "defaultMode",
    "additionalDirectories",
    "disableBypassPermissionsMode",
    "disableAutoMode",
];

/// Reads and parses the policy file at `path`.
///
/// # Errors
/// A usage error (exit 2) naming the file when it cannot be read or is not a valid policy.
pub fn load(path: &Path) -> Result<Policy> {
    let text = read_named_text(path, NAMED_FILE_LIMIT).map_err(|e| {
        let e = format!("{e:#}");
        let why = e
            .strip_prefix(&format!("could not read {}: ", path.display()))
            .unwrap_or(&e);
        usage(format!(
            "could not read the policy {}: {why}",
            path.display()
        ))
    })?;
    parse(&text).map_err(|e| usage(format!("invalid policy {}: {e:#}", path.display())))
}

/// Parses a policy (a teamctl policy or a Claude Code `settings.json`).
///
/// A document with any of `plans`, `sandbox_hosts`, `unmatched` is a teamctl policy, and any
/// other top-level key in it is an error (a typo would otherwise change what is answered). A
/// document with none of them is read as a Claude Code settings file: its `permissions` block
/// (which must be there) is the policy, its other keys are ignored, plans and sandbox hosts are
/// left to a person and unmatched requests are left pending.
///
/// # Errors
/// Text naming what is wrong: bad JSON, a key or value that is not allowed, an invalid rule.
pub fn parse(text: &str) -> Result<Policy> {
    let doc: Value = serde_json::from_str(text).map_err(|e| anyhow::anyhow!("not JSON: {e}"))?;
    let Value::Object(doc) = doc else {
        anyhow::bail!("the top level is not a JSON object");
    };
    let source = if OWN_KEYS.iter().any(|k| doc.contains_key(*k)) {
        Source::Policy
    } else {
        Source::ClaudeSettings
    };
    if source == Source::Policy {
        if let Some(k) = doc.keys().find(|k| !POLICY_KEYS.contains(&k.as_str())) {
            anyhow::bail!(
                "unknown key \"{k}\" (a policy has permissions, plans, sandbox_hosts, unmatched)"
            );
        }
    } else if !doc.contains_key("permissions") {
        anyhow::bail!(
            "no \"permissions\" block and none of plans, sandbox_hosts, unmatched: nothing to \
             answer by"
        );
    }
    let mut p = Policy {
        source,
        allow: Vec::new(),
        deny: Vec::new(),
        ask: Vec::new(),
        plans: Plans::Leave,
        hosts_allow: Vec::new(),
        hosts_deny: Vec::new(),
        unmatched: Unmatched::Leave,
    };
    if let Some(perms) = doc.get("permissions") {
        read_permissions(&mut p, perms)?;
    }
    if let Some(v) = doc.get("plans") {
        p.plans = match v.as_str() {
            Some("approve") => Plans::Approve,
            Some("deny") => Plans::Deny,
            Some("leave") => Plans::Leave,
            _ => anyhow::bail!("\"plans\" must be \"approve\", \"deny\" or \"leave\", not {v}"),
        };
    }
    if let Some(v) = doc.get("unmatched") {
        p.unmatched = match v.as_str() {
            Some("leave") => Unmatched::Leave,
            Some("deny") => Unmatched::Deny,
            _ => anyhow::bail!("\"unmatched\" must be \"leave\" or \"deny\", not {v}"),
        };
    }
    if let Some(v) = doc.get("sandbox_hosts") {
        read_sandbox_hosts(&mut p, v)?;
    }
    Ok(p)
}

/// The `permissions` block into the policy's allow, deny and ask lists.
fn read_permissions(p: &mut Policy, perms: &Value) -> Result<()> {
    let Value::Object(perms) = perms else {
        anyhow::bail!("\"permissions\" is not an object");
    };
    for (k, v) in perms {
        let list = match k.as_str() {
            "allow" => &mut p.allow,
            "deny" => &mut p.deny,
            "ask" => &mut p.ask,
            k if IGNORED_PERMISSION_KEYS.contains(&k) => continue,
            _ if p.source == Source::ClaudeSettings => continue,
            _ => anyhow::bail!("unknown key \"permissions.{k}\" (allow, deny and ask hold rules)"),
        };
        for s in strings(v, &format!("permissions.{k}"))? {
            list.push(Rule::parse(&s)?);
        }
    }
    Ok(())
}

/// The `sandbox_hosts` block into the policy's host lists.
fn read_sandbox_hosts(p: &mut Policy, v: &Value) -> Result<()> {
    let Value::Object(hosts) = v else {
        anyhow::bail!("\"sandbox_hosts\" is not an object");
    };
    for (k, v) in hosts {
        let list = match k.as_str() {
            "allow" => &mut p.hosts_allow,
            "deny" => &mut p.hosts_deny,
            _ => anyhow::bail!("unknown key \"sandbox_hosts.{k}\" (allow and deny)"),
        };
        for s in strings(v, &format!("sandbox_hosts.{k}"))? {
            list.push(HostPattern::parse(&s)?);
        }
    }
    Ok(())
}

fn strings(v: &Value, what: &str) -> Result<Vec<String>> {
    let Value::Array(a) = v else {
        anyhow::bail!("\"{what}\" is not an array of strings");
    };
    a.iter()
        .map(|s| {
            s.as_str()
                .map(String::from)
                .ok_or_else(|| anyhow::anyhow!("\"{what}\" holds {s}, not a string"))
        })
        .collect()
}

/// Tools an `Edit(…)` rule covers (Claude Code: "all built-in tools that edit files").
const EDIT_TOOLS: [&str; 4] = ["Edit", "Write", "MultiEdit", "NotebookEdit"];
/// Tools a `Read(…)` rule covers (Claude Code: "best effort" for the tools that read files).
const READ_TOOLS: [&str; 5] = ["Read", "Grep", "Glob", "LS", "NotebookRead"];

/// One permission rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub(super) text: String,
    tool: String,
    pub(super) spec: Spec,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Spec {
    /// Every use of the tool.
    Any,
    /// `mcp__server` / `mcp__server__*`: every tool of the server.
    McpServer(String),
    /// `Bash(cmd)`: exactly this command.
    BashExact(String),
    /// `Bash(cmd *)`, `Bash(cmd:*)`: a wildcard pattern.
    BashWildcard(String),
    /// `Read(…)`, `Edit(…)`.
    Path(PathPattern),
    /// `WebFetch(domain:…)`.
    Domain(HostPattern),
    /// `Agent(type)` / `Task(type)`: the subagent type.
    Subagent(String),
}

impl Rule {
    /// Parses one rule in Claude Code's syntax.
    ///
    /// # Errors
    /// Text naming the rule and what is wrong with it.
    pub fn parse(text: &str) -> Result<Rule> {
        let bad = |why: &str| anyhow::anyhow!("invalid rule {text:?}: {why}");
        let t = text.trim();
        let (tool, inner) = match t.find('(') {
            None => (t, None),
            Some(open) => {
                if !t.ends_with(')') {
                    return Err(bad("a \"(\" without a closing \")\" at the end"));
                }
                (&t[..open], Some(&t[open + 1..t.len() - 1]))
            }
        };
        let (tool, spec) = if let Some(server) = tool.strip_prefix("mcp__") {
            if inner.is_some() {
                return Err(bad(
                    "MCP rules take no parentheses (mcp__server or mcp__server__tool)",
                ));
            }
            mcp_spec(tool, server).map_err(bad)?
        } else {
            if tool.is_empty()
                || !tool.starts_with(|c: char| c.is_ascii_alphabetic())
                || !valid_name(tool)
            {
                return Err(bad("not a tool name (Bash, Edit, mcp__server__tool, …)"));
            }
            let spec = match inner {
                None => Spec::Any,
                Some(inner) => tool_spec(tool, inner).map_err(|why| bad(&why))?,
            };
            (tool.to_string(), spec)
        };
        Ok(Rule {
            text: t.to_string(),
            tool,
            spec,
        })
    }

    /// The rule as written.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the rule covers this tool at all.
    pub(super) fn covers_tool(&self, tool: &str) -> bool {
        match &self.spec {
            Spec::McpServer(server) => tool
                .strip_prefix("mcp__")
                .and_then(|r| r.strip_prefix(server.as_str()))
                .is_some_and(|r| r.starts_with("__")),
            _ if self.tool == "Edit" => EDIT_TOOLS.contains(&tool),
            _ if self.tool == "Read" => READ_TOOLS.contains(&tool),
            // Agent is the current name of the Task tool.
            _ if self.tool == "Agent" || self.tool == "Task" => tool == "Agent" || tool == "Task",
            _ => self.tool == tool,
        }
    }

    /// Whether the rule matches one use of `tool` with `input` (for Bash: one command, already
    /// split off a compound command by the caller).
    pub(super) fn matches(&self, tool: &str, input: &Value, anchors: &Anchors) -> bool {
        if !self.covers_tool(tool) {
            return false;
        }
        let s = |k: &str| input.get(k).and_then(Value::as_str);
        match &self.spec {
            Spec::Any | Spec::McpServer(_) => true,
            Spec::BashExact(cmd) => s("command").is_some_and(|c| c.trim() == cmd),
            Spec::BashWildcard(p) => s("command").is_some_and(|c| bash_wildcard(p, c.trim())),
            Spec::Path(p) => {
                request_path(tool, input, anchors).is_some_and(|path| p.matches(&path, anchors))
            }
            Spec::Domain(h) => s("url")
                .and_then(url_host)
                .is_some_and(|host| h.matches(&host)),
            Spec::Subagent(t) => s("subagent_type").is_some_and(|x| x == t),
        }
    }
}

/// An MCP rule (`mcp__server`, `mcp__server__*`, `mcp__server__tool`; `server` is what follows
/// `mcp__`): the tool it names and what of it it covers.
fn mcp_spec(tool: &str, server: &str) -> std::result::Result<(String, Spec), &'static str> {
    let (server, rest) = match server.split_once("__") {
        Some((s, r)) => (s, Some(r)),
        None => (server, None),
    };
    if server.is_empty() || !valid_name(server) {
        return Err("no valid server name after mcp__");
    }
    let spec = match rest {
        None | Some("*") => Spec::McpServer(server.to_string()),
        Some(r) if !r.is_empty() && valid_name(r) => Spec::Any,
        Some(_) => return Err("not a valid MCP tool name"),
    };
    let tool = match spec {
        Spec::Any => tool.to_string(),
        _ => format!("mcp__{server}"),
    };
    Ok((tool, spec))
}

/// What the parentheses of `Tool(inner)` say, for the tools that take a specifier.
fn tool_spec(tool: &str, inner: &str) -> std::result::Result<Spec, String> {
    if inner.trim().is_empty() {
        return Err("empty parentheses".into());
    }
    let spec = match tool {
        _ if inner == "*" && tool != "Read" && tool != "Edit" => Spec::Any,
        "Bash" => {
            let pattern = match inner.strip_suffix(":*") {
                // Documented as the same as a trailing ` *`.
                Some(prefix) if !prefix.trim().is_empty() => format!("{} *", prefix.trim_end()),
                Some(_) => return Err("nothing before :*".into()),
                None => inner.trim().to_string(),
            };
            if pattern.contains('*') {
                Spec::BashWildcard(pattern)
            } else {
                Spec::BashExact(pattern)
            }
        }
        "Read" | "Edit" => Spec::Path(PathPattern::parse(inner)?),
        "WebFetch" => {
            let Some(host) = inner.strip_prefix("domain:") else {
                return Err("WebFetch rules are written WebFetch(domain:example.com)".into());
            };
            Spec::Domain(HostPattern::parse(host).map_err(|e| format!("{e:#}"))?)
        }
        "Agent" | "Task" => Spec::Subagent(inner.trim().to_string()),
        t if EDIT_TOOLS.contains(&t) || READ_TOOLS.contains(&t) => {
            let family = if EDIT_TOOLS.contains(&t) {
                "Edit"
            } else {
                "Read"
            };
            return Err(format!(
                "path rules are written {family}(…), which covers {t} too"
            ));
        }
        _ => {
            return Err(format!(
                "teamctl cannot match a specifier for {tool} (only Bash, Read, Edit, \
                 WebFetch, Agent and Task take one; {tool} alone matches every use)"
            ));
        }
    };
    Ok(spec)
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `*` matches any text (spaces included); when the pattern's only `*` ends it after a space,
/// that ` *` may also match nothing (`ls *` matches `ls`), as Claude Code documents.
fn bash_wildcard(pattern: &str, cmd: &str) -> bool {
    if pattern.matches('*').count() == 1
        && let Some(base) = pattern.strip_suffix(" *")
        && cmd == base
    {
        return true;
    }
    wildcard(pattern.as_bytes(), cmd.as_bytes())
}

/// `*` matches any run of bytes, everything else itself.
fn wildcard(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::policy::Answer;
    use crate::ops::policy::fixture::{anchors, bash, path, perm, policy};
    use serde_json::json;

    #[test]
    fn bare_tool_matches_every_use() {
        let p = policy(&["Bash"], &[]);
        assert_eq!(bash(&p, "anything at all").0, Answer::Approve);
        let p = policy(&["Bash(*)"], &[]);
        assert_eq!(bash(&p, "rm -rf x").0, Answer::Approve);
        assert_eq!(
            path(&p, "Edit", "/w/proj/a"),
            Answer::Leave,
            "Bash rules are not Edit rules"
        );
    }

    #[test]
    fn legacy_prefix_has_a_word_boundary() {
        let p = policy(&["Bash(npm test:*)"], &[]);
        assert_eq!(bash(&p, "npm test").0, Answer::Approve);
        assert_eq!(bash(&p, "npm test -- --watch").0, Answer::Approve);
        assert_eq!(bash(&p, "npm testing").0, Answer::Leave);
        assert_eq!(bash(&p, "npm tes").0, Answer::Leave);
        assert_eq!(bash(&p, "xnpm test").0, Answer::Leave);
    }

    #[test]
    fn exact_command() {
        let p = policy(&["Bash(git status)"], &[]);
        assert_eq!(bash(&p, "git status").0, Answer::Approve);
        assert_eq!(bash(&p, "  git status ").0, Answer::Approve);
        assert_eq!(bash(&p, "git status --short").0, Answer::Leave);
        assert_eq!(bash(&p, "git statu").0, Answer::Leave);
    }

    #[test]
    fn wildcards_as_documented() {
        let p = policy(&["Bash(ls *)"], &[]);
        assert_eq!(bash(&p, "ls -la").0, Answer::Approve);
        assert_eq!(
            bash(&p, "ls").0,
            Answer::Approve,
            "a single trailing ` *` is optional"
        );
        assert_eq!(
            bash(&p, "lsof").0,
            Answer::Leave,
            "the space is a word boundary"
        );
        let p = policy(&["Bash(ls*)"], &[]);
        assert_eq!(bash(&p, "lsof").0, Answer::Approve);
        let p = policy(&["Bash(git * main)"], &[]);
        assert_eq!(bash(&p, "git push origin main").0, Answer::Approve);
        assert_eq!(bash(&p, "git push origin dev").0, Answer::Leave);
        let p = policy(&["Bash(* --version)"], &[]);
        assert_eq!(bash(&p, "node --version").0, Answer::Approve);
        assert_eq!(bash(&p, "node --help").0, Answer::Leave);
        let p = policy(&["Bash(npm run *)"], &[]);
        assert_eq!(bash(&p, "npm run build").0, Answer::Approve);
        assert_eq!(bash(&p, "npm install").0, Answer::Leave);
    }

    #[test]
    fn mcp_rules() {
        let p = policy(&["mcp__github", "mcp__fs__*", "mcp__db__query"], &[]);
        let call = |t: &str| p.decide(&perm(t, json!({})), &anchors()).answer;
        assert_eq!(call("mcp__github__create_issue"), Answer::Approve);
        assert_eq!(call("mcp__fs__read"), Answer::Approve);
        assert_eq!(call("mcp__db__query"), Answer::Approve);
        assert_eq!(call("mcp__db__drop"), Answer::Leave);
        assert_eq!(call("mcp__githubx__a"), Answer::Leave);
        assert_eq!(call("mcp__github"), Answer::Leave, "a server is not a tool");
    }

    #[test]
    fn subagents() {
        let p = policy(&["Agent(Explore)"], &[]);
        let call = |t: &str| {
            p.decide(&perm("Task", json!({"subagent_type": t})), &anchors())
                .answer
        };
        assert_eq!(call("Explore"), Answer::Approve);
        assert_eq!(call("general-purpose"), Answer::Leave);
    }

    #[test]
    fn invalid_rules_and_files_are_errors_naming_them() {
        for (doc, needle) in [
            ("not json", "not JSON"),
            ("[]", "not a JSON object"),
            (r#"{"env":{}}"#, "no \"permissions\" block"),
            (r#"{"plans":"maybe"}"#, "\"plans\" must be"),
            (r#"{"unmatched":"allow"}"#, "\"unmatched\" must be"),
            (
                r#"{"plans":"leave","permision":{}}"#,
                "unknown key \"permision\"",
            ),
            (
                r#"{"plans":"leave","permissions":{"alow":[]}}"#,
                "permissions.alow",
            ),
            (r#"{"permissions":{"allow":"Bash"}}"#, "not an array"),
            (r#"{"permissions":{"allow":[1]}}"#, "not a string"),
            (r#"{"permissions":{"allow":["Bash(ls"]}}"#, "\"Bash(ls\""),
            (
                r#"{"permissions":{"allow":["Bash()"]}}"#,
                "empty parentheses",
            ),
            (
                r#"{"permissions":{"deny":["Bash(:*)"]}}"#,
                "nothing before :*",
            ),
            (
                r#"{"permissions":{"allow":["WebFetch(example.com)"]}}"#,
                "domain:",
            ),
            (
                r#"{"permissions":{"allow":["WebFetch(domain:a b)"]}}"#,
                "invalid host",
            ),
            (r#"{"permissions":{"allow":["Write(src/**)"]}}"#, "Edit("),
            (
                r#"{"permissions":{"allow":["Frobnicate(x)"]}}"#,
                "cannot match a specifier",
            ),
            (
                r#"{"permissions":{"allow":["mcp__x(y)"]}}"#,
                "no parentheses",
            ),
            (r#"{"permissions":{"allow":["mcp__"]}}"#, "server name"),
            (r#"{"permissions":{"allow":["*"]}}"#, "not a tool name"),
            (r#"{"permissions":{"allow":["Read(../x)"]}}"#, "\"..\""),
            (r#"{"sandbox_hosts":{"allow":["*"]}}"#, "invalid host"),
            (r#"{"sandbox_hosts":{"permit":[]}}"#, "sandbox_hosts.permit"),
        ] {
            let err = format!("{:#}", parse(doc).unwrap_err());
            assert!(err.contains(needle), "{doc}: {err}");
        }
    }

    #[test]
    fn settings_files_keep_only_permissions() {
        let p = parse(
            r#"{"model":"x","hooks":{},"permissions":{"allow":["Bash(ls)"],"defaultMode":"default","additionalDirectories":[],"someNewKey":1}}"#,
        )
        .unwrap();
        assert_eq!(p.source, Source::ClaudeSettings);
        assert_eq!(p.unmatched, Unmatched::Leave);
        assert_eq!(p.plans, Plans::Leave);
        // In a teamctl policy the same ignorable keys are accepted too.
        parse(r#"{"unmatched":"leave","permissions":{"defaultMode":"plan"}}"#).unwrap();
    }
}
