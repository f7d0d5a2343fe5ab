//! Claude Code's start-up dialogs, the service every flow that starts a client shares: the
//! ones it would stop at, read from its files before it starts ([`blockers`]), and the one a
//! pane shows once it runs ([`detect_dialog`]). `create`, `run` and `doctor` judge by it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

pub use crate::host::claude::Dialog;
use crate::host::claude::approved_key;

/// A dialog found before starting, with the setting that skips it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocker {
    /// Which dialog.
    pub dialog: Dialog,
    /// The setting that skips it.
    pub fix: String,
}

/// The start-up dialogs a lead would stop at, from Claude Code's files (2.1.332):
/// onboarding unless `hasCompletedOnboarding`; the API key approval when `api_key` is set and
/// its last 20 characters are not in `customApiKeyResponses.approved`; the trust dialog unless
/// `projects[<cwd or a parent>].hasTrustDialogAccepted`; the bypass prompt, when `bypass`,
/// unless `bypassPermissionsModeAccepted` or a settings file has
/// `skipDangerousModePermissionPrompt`.
pub fn blockers(
    claude_json_path: &Path,
    claude_json: Option<&Value>,
    settings: &[(PathBuf, Option<Value>)],
    cwd: &Path,
    api_key: Option<&str>,
    bypass: bool,
) -> Vec<Blocker> {
    let empty = Value::Null;
    let cj = claude_json.unwrap_or(&empty);
    let at = claude_json_path.display();
    let mut out = Vec::new();
    if cj.get("hasCompletedOnboarding").and_then(Value::as_bool) != Some(true) {
        out.push(Blocker {
            dialog: Dialog::Onboarding,
            fix: format!("`teamctl prepare` sets \"hasCompletedOnboarding\": true in {at}"),
        });
    }
    if let Some(tail) = api_key.and_then(approved_key) {
        let approved = cj
            .pointer("/customApiKeyResponses/approved")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(tail.as_str())));
        if !approved {
            out.push(Blocker {
                dialog: Dialog::ApiKey,
                fix: format!(
                    "`teamctl prepare` (with ANTHROPIC_API_KEY set) adds the key's last 20 \
                     characters to \"customApiKeyResponses\": {{\"approved\": [...]}} in {at}"
                ),
            });
        }
    }
    let projects = cj.get("projects").and_then(Value::as_object);
    let trusted = cwd.ancestors().any(|dir| {
        projects
            .and_then(|p| p.get(dir.to_string_lossy().as_ref()))
            .and_then(|p| p.get("hasTrustDialogAccepted"))
            .and_then(Value::as_bool)
            == Some(true)
    });
    if !trusted {
        out.push(Blocker {
            dialog: Dialog::Trust,
            fix: format!(
                "`teamctl prepare --cwd {}` sets \"projects\": {{\"{}\": \
                 {{\"hasTrustDialogAccepted\": true}}}} in {at}",
                crate::host::claude::shell_quote(&cwd.to_string_lossy()),
                cwd.display()
            ),
        });
    }
    if bypass {
        let accepted = cj
            .get("bypassPermissionsModeAccepted")
            .and_then(Value::as_bool)
            == Some(true);
        let skipped = settings.iter().any(|(_, s)| {
            s.as_ref()
                .and_then(|s| s.get("skipDangerousModePermissionPrompt"))
                .and_then(Value::as_bool)
                == Some(true)
        });
        if !accepted && !skipped {
            let file = settings
                .first()
                .map(|(p, _)| p.display().to_string())
                .unwrap_or_else(|| "settings.json".into());
            out.push(Blocker {
                dialog: Dialog::Bypass,
                fix: format!(
                    "`teamctl prepare --skip-permissions` sets \
                     \"skipDangerousModePermissionPrompt\": true in {file}"
                ),
            });
        }
    }
    out
}

/// The dialog `screen` (a pane's visible text) shows, if any. Only dialogs with their
/// footer count, so a model that merely writes "Do you want to …" is not mistaken for one.
pub fn detect_dialog(screen: &str) -> Option<Dialog> {
    if screen.contains("Choose the text style") || screen.contains("Let's get started") {
        return Some(Dialog::Onboarding);
    }
    let footer = screen.contains("Esc to cancel") || screen.contains("Enter to confirm");
    if !footer {
        return None;
    }
    Some(if screen.contains("Do you want to use this API key") {
        Dialog::ApiKey
    } else if screen.contains("Yes, I trust this folder") || screen.contains("Accessing workspace")
    {
        Dialog::Trust
    } else if screen.contains("Bypass Permissions mode") && screen.contains("Yes, I accept") {
        Dialog::Bypass
    } else if screen.contains("Do you want to") || screen.contains("Would you like to") {
        Dialog::PermissionPrompt
    } else if screen.contains("Background work is running") {
        // The /exit confirmation, only ever shown while cleaning up.
        return None;
    } else {
        Dialog::Other
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dialogs_from_the_screen() {
        // Screens as 2.1.332 shows them (trimmed).
        let api = "  Detected a custom API key in your environment\n  ANTHROPIC_API_KEY: sk-ant-...0000\n  Do you want to use this API key?\n    Yes\n  ❯ No (recommended)\n  Enter to confirm · Esc to cancel";
        let trust = " Accessing workspace:\n /tmp/w\n Quick safety check: Is this a project you created or one you trust?\n ❯ No, exit\n   Yes, I trust this folder\n Enter to confirm · Esc to cancel";
        let bypass = "  WARNING: Claude Code running in Bypass Permissions mode\n  ❯ No, exit\n    Yes, I accept\n  Enter to confirm · Esc to cancel";
        let onboarding = " Let's get started.\n Choose the text style that looks best with your terminal\n ❯ ✔ Auto (match terminal)";
        let perm = " Bash command\n Tip: auto mode handles these prompts for you\n Write PERM1 to a file\n echo PERM1 > ran-PERM1.txt\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and always allow access to /w from this project\n   4. No\n Esc to cancel · Tab to amend";
        let idle = "❯ Spawn: worker TOK1\n● Do you want to deploy it now?\n❯ \n  ⏵⏵ bypass permissions on (shift+tab to cycle)";
        let exit = "  Background work is running\n  ❯ 1. Exit and stop tasks\n  Enter to confirm · Esc to cancel";
        assert_eq!(detect_dialog(api), Some(Dialog::ApiKey));
        assert_eq!(detect_dialog(trust), Some(Dialog::Trust));
        assert_eq!(detect_dialog(bypass), Some(Dialog::Bypass));
        assert_eq!(detect_dialog(onboarding), Some(Dialog::Onboarding));
        assert_eq!(detect_dialog(perm), Some(Dialog::PermissionPrompt));
        assert_eq!(detect_dialog(idle), None);
        assert_eq!(detect_dialog(exit), None);
        assert_eq!(
            detect_dialog("Pick one\nEnter to confirm"),
            Some(Dialog::Other)
        );
    }

    #[test]
    fn dialogs_from_the_files() {
        let cj = Path::new("/c/.claude.json");
        let cwd = Path::new("/w/repo");
        let key = "sk-ant-mock-000000000000000000000000";
        let tail = &key[key.len() - 20..];
        let names = |b: Vec<Blocker>| b.into_iter().map(|b| b.dialog).collect::<Vec<_>>();
        assert_eq!(
            names(blockers(cj, None, &[], cwd, Some(key), true)),
            [
                Dialog::Onboarding,
                Dialog::ApiKey,
                Dialog::Trust,
                Dialog::Bypass
            ]
        );
        let good = json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [tail], "rejected": []},
            "projects": {"/w": {"hasTrustDialogAccepted": true}},
        });
        assert_eq!(
            names(blockers(cj, Some(&good), &[], cwd, Some(key), false)),
            []
        );
        // Bypass: either key skips it.
        assert_eq!(
            names(blockers(cj, Some(&good), &[], cwd, Some(key), true)),
            [Dialog::Bypass]
        );
        let s = vec![(
            PathBuf::from("/c/settings.json"),
            Some(json!({"skipDangerousModePermissionPrompt": true})),
        )];
        assert_eq!(
            names(blockers(cj, Some(&good), &s, cwd, Some(key), true)),
            []
        );
        let mut accepted = good.clone();
        accepted["bypassPermissionsModeAccepted"] = true.into();
        assert_eq!(
            names(blockers(cj, Some(&accepted), &[], cwd, Some(key), true)),
            []
        );
        // Another key, another folder.
        assert_eq!(
            names(blockers(
                cj,
                Some(&good),
                &[],
                Path::new("/x"),
                Some("sk-other-key-1234567890abcdef"),
                false
            )),
            [Dialog::ApiKey, Dialog::Trust]
        );
        // No key in the environment (a login): no approval dialog.
        assert_eq!(names(blockers(cj, Some(&good), &[], cwd, None, false)), []);
        let b = blockers(cj, None, &[], cwd, None, false);
        assert!(
            b[0].fix.contains("hasCompletedOnboarding") && b[0].fix.contains("/c/.claude.json")
        );
        assert!(b[1].fix.contains("\"/w/repo\""));
    }
}
