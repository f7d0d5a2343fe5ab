//! Files that run code for the person once a teammate's branch lands: what `diff` and `merge`
//! name apart, however small the change, since a sandbox confines the teammate but not what its
//! work does later on the person's machine (Claude Code's project settings, hooks and MCP
//! servers, CI workflows, git hook managers, direnv, an editor's folder tasks). Matched at any
//! depth and ignoring case (a case-insensitive file system reads `.Claude/` as `.claude/`).

/// Folders (ending in `/`) and files, each with who runs it.
pub const RUNS_CODE: [(&str, &str); 21] = [
    (
        ".claude/",
        "Claude Code (settings, hooks, agents, commands, skills)",
    ),
    (".mcp.json", "Claude Code (MCP servers it starts)"),
    (".github/workflows/", "GitHub Actions"),
    (".github/actions/", "GitHub Actions"),
    (".husky/", "git hooks (husky)"),
    (".githooks/", "git hooks"),
    (".git-hooks/", "git hooks"),
    (".lefthook/", "git hooks (lefthook)"),
    ("lefthook.yml", "git hooks (lefthook)"),
    ("lefthook.yaml", "git hooks (lefthook)"),
    (".lefthook.yml", "git hooks (lefthook)"),
    (".lefthook.yaml", "git hooks (lefthook)"),
    ("lefthook-local.yml", "git hooks (lefthook)"),
    (".pre-commit-config.yaml", "git hooks (pre-commit)"),
    (".overcommit.yml", "git hooks (overcommit)"),
    (".simple-git-hooks.json", "git hooks (simple-git-hooks)"),
    (".simple-git-hooks.js", "git hooks (simple-git-hooks)"),
    (".simple-git-hooks.cjs", "git hooks (simple-git-hooks)"),
    (".envrc", "direnv"),
    (
        ".vscode/tasks.json",
        "VS Code (tasks run when the folder opens)",
    ),
    (".devcontainer/", "dev containers"),
];

/// Who runs `path` for the person, when it is one of [`RUNS_CODE`].
pub fn runs(path: &str) -> Option<&'static str> {
    let p = path.to_ascii_lowercase();
    RUNS_CODE.iter().find_map(|(pat, who)| {
        let hit = if pat.ends_with('/') {
            p.starts_with(pat) || p.contains(&format!("/{pat}"))
        } else {
            p == *pat || p.ends_with(&format!("/{pat}"))
        };
        hit.then_some(*who)
    })
}

/// Those of `paths` that run code for the person, in their order, each once.
pub fn runs_code<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in paths {
        if runs(p).is_some() && !out.iter().any(|o| o == p) {
            out.push(p.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_runs_code_at_any_depth_and_case() {
        for p in [
            ".claude/settings.json",
            "sub/.claude/agents/a.md",
            ".Claude/hooks/x.sh",
            ".mcp.json",
            "pkg/.mcp.json",
            ".github/workflows/ci.yml",
            ".husky/pre-commit",
            "lefthook.yml",
            ".pre-commit-config.yaml",
            ".envrc",
            ".vscode/tasks.json",
        ] {
            assert!(runs(p).is_some(), "{p}");
        }
        for p in [
            "src/claude.rs",
            "docs/.mcp.json.md",
            "my.envrc",
            ".github/CODEOWNERS",
            "README.md",
        ] {
            assert!(runs(p).is_none(), "{p}");
        }
        assert_eq!(
            runs_code([".mcp.json", "a.rs", ".mcp.json", ".husky/x"]),
            [".mcp.json", ".husky/x"]
        );
    }
}
