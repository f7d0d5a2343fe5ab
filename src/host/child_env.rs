//! The environment a child process gets: none of teamctl's secrets. The chat bridge's tokens
//! and secret (and `teamctl serve`'s token) are teamctl's to use, never a teammate's: with
//! one, a teammate could sign answers as anyone allowed, or read the chat.
//!
//! Every child teamctl starts inherits its environment unless told otherwise, so the rule is
//! kept where children start:
//! - every `tmux` command runs without them ([`scrub`]): a tmux server that teamctl starts
//!   takes teamctl's environment as its global environment, which every pane inherits;
//! - a session teamctl makes marks them removed (`set-environment -r`, [`SECRETS`]), so a pane
//!   in it (a teammate, a lead, and the teammates a lead starts there) lacks them even on a
//!   tmux server someone started with them in its global environment;
//! - a pane's `-e` variables never carry one ([`is_secret`]);
//! - `claude --version`, the hooks of `watch --exec` and the checks of `merge --check` run
//!   without them ([`scrub`]).

use std::process::Command;

/// The secrets teamctl reads from its environment: every `TEAMCTL_*_TOKEN` and
/// `TEAMCTL_*_SECRET` (the bridge's Telegram and Slack tokens and webhook secret, `serve`'s
/// token). A test of the binary checks that every such variable it names is here.
pub const SECRETS: [&str; 4] = [
    "TEAMCTL_TELEGRAM_TOKEN",
    "TEAMCTL_SLACK_TOKEN",
    "TEAMCTL_WEBHOOK_SECRET",
    "TEAMCTL_SERVE_TOKEN",
];

/// Whether `name` is a secret no child gets: one of [`SECRETS`], or any other
/// `TEAMCTL_*_TOKEN` or `TEAMCTL_*_SECRET`.
pub fn is_secret(name: &str) -> bool {
    SECRETS.contains(&name)
        || (name.starts_with("TEAMCTL_") && (name.ends_with("_TOKEN") || name.ends_with("_SECRET")))
}

/// `cmd` without any of [`SECRETS`] in the environment it would inherit.
pub fn scrub(cmd: &mut Command) -> &mut Command {
    for k in SECRETS {
        cmd.env_remove(k);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_and_secret_of_teamctl_is_one() {
        for s in SECRETS {
            assert!(is_secret(s), "{s}");
        }
        assert!(is_secret("TEAMCTL_DISCORD_TOKEN"));
        for plain in [
            "TEAMCTL_TEAM",
            "TEAMCTL_DATA_DIR",
            "ANTHROPIC_API_KEY",
            "TOKEN",
        ] {
            assert!(!is_secret(plain), "{plain}");
        }
        let mut cmd = Command::new("true");
        cmd.env("TEAMCTL_WEBHOOK_SECRET", "x");
        scrub(&mut cmd);
        let set: Vec<_> = cmd.get_envs().filter(|(_, v)| v.is_some()).collect();
        assert!(set.is_empty(), "{set:?}");
    }

    /// Every `TEAMCTL_*_TOKEN` or `TEAMCTL_*_SECRET` the source names (in `cli/env.rs` and
    /// anywhere else) is one of [`SECRETS`]: a secret added later is kept from children too.
    #[test]
    fn every_secret_the_source_names_is_listed() {
        fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let path = e.unwrap().path();
                if path.is_dir() {
                    walk(&path, found);
                } else if path.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    for piece in text.split('"').skip(1).step_by(2) {
                        let name = piece.trim_end_matches(['=', ' ']);
                        let word = name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
                        if word && is_secret(name) {
                            found.push(name.to_string());
                        }
                    }
                }
            }
        }
        let mut found = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut found,
        );
        assert!(found.iter().any(|n| n == "TEAMCTL_WEBHOOK_SECRET"));
        let missing: Vec<_> = found
            .iter()
            .filter(|n| !SECRETS.contains(&n.as_str()) && *n != "TEAMCTL_DISCORD_TOKEN")
            .collect();
        assert!(missing.is_empty(), "not in SECRETS: {missing:?}");
    }
}
