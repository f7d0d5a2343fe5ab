//! What Claude Code writes for a session, and how a sandbox gives it that without giving it the
//! person's config dir. Found by running the real client 2.1.332 as a teammate that answered a
//! message and ran a Bash command (`tests/e2e/probe-sandbox.js`; docs/sandbox.md, "What the
//! client writes"). In its config dir:
//!
//! - `.claude.json` (rewritten at start and after turns), `backups/.claude.json.backup.<ms>`;
//! - `settings.json` (rewritten at start, unchanged);
//! - `projects/<project>/<session>.jsonl` (the transcript) and `projects/<project>/memory/`;
//! - `session-env/<session>/`, `sessions/<pid>.<hash>.key` (removed at exit),
//!   `shell-snapshots/snapshot-bash-<ms>-<rand>.sh` (removed at exit), `plugins/marketplaces/`;
//! - `teams/<team>/` (`config.json`'s `isActive`, inboxes) and `tasks/<team>/`;
//!
//! and in `$TMPDIR`: `cc-socks/<pid>.sock` (a Unix socket it listens on) and
//! `claude-<uid>/<project>/<session>/` (tool output).
//!
//! In a sandbox, the config dir is a private folder of the sandbox's own: the person's
//! configuration is laid in it read-only ([`is_private`] says what is not), `.claude.json`
//! is a private copy (written freely, gone with the sandbox: it never reaches the person's own
//! sessions), and only the team's folder, the task folder and the transcripts' project folder
//! are the real ones, writable. The client copes with a read-only `settings.json` and with
//! no socket to listen on (seen: it answers and runs its tools as usual).

/// Top-level names of the config dir a sandboxed session does not see as they are: its own
/// state (made afresh, private), the files that carry the person's other sessions (their
/// transcripts, their shell snapshots, which their Bash tool sources, the IDE's lock files with
/// their tokens), and the folders it shares with teamctl (given again, narrowed to its own).
pub const PRIVATE: [&str; 17] = [
    ".claude.json",
    ".config.json",
    "backups",
    "debug",
    "file-history",
    "ide",
    "paste-cache",
    "plans",
    "projects",
    "session-env",
    "sessions",
    "shell-snapshots",
    "statsig",
    "tasks",
    "teams",
    "todos",
    "logs",
];

/// The files the client reads its own state from, in the order it looks (`.config.json`, the
/// old name, wins when it is there): the first that exists is copied into the sandbox.
pub const STATE_FILES: [&str; 2] = [".config.json", ".claude.json"];

/// Whether the top-level entry `name` of the config dir is private to the sandbox (not shown).
pub fn is_private(name: &str) -> bool {
    PRIVATE.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_person_s_configuration_is_shown() {
        for n in [
            "settings.json",
            "CLAUDE.md",
            "agents",
            "skills",
            "plugins",
            ".credentials.json",
        ] {
            assert!(!is_private(n), "{n}");
        }
        for n in [
            "projects",
            "teams",
            ".claude.json",
            "shell-snapshots",
            "ide",
        ] {
            assert!(is_private(n), "{n}");
        }
    }
}
