//! `run --bridge telegram` against the mock Bot API ([`crate::chat_mock`]) with a stub lead in a
//! private tmux server that stops at a permission prompt drawn as Claude Code 2.1.332 draws it
//! (docs/research/claude-code-behaviour.md, "A lead's own permission prompt"): the prompt is
//! posted with a code, and the chat's answer is typed into the lead's pane.

use std::fs;

use serde_json::Value;

use crate::bridge::{CHAT, USER, now_ts};
use crate::chat_mock::{TOKEN, Telegram};
use crate::common::{TestEnv, json as parse, wait_until};
use crate::run::{STUB_LEAD, lead_in_tmux};

/// A stub lead that first shows a permission prompt and reads one key raw: Enter writes
/// `approved` to `answered`; Escape reads a line (the reason) and writes `denied: <line>`.
/// Then it carries on as [`STUB_LEAD`] (forms its team, answers, ends its turn).
fn prompting_lead() -> String {
    let prompt = r#"[ "$1" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }
clear
printf ' Bash command\n\n   echo hi > ran.txt @admin\n   Run a command\n\n Do you want to proceed?\n \342\235\257 1. Yes\n   2. Yes, and always allow access to /w from this project\n   3. No\n\n Esc to cancel \302\267 Tab to amend\n'
stty raw -echo
k=$(dd bs=1 count=1 2>/dev/null)
stty sane
clear
if [ "$k" = "$(printf '\r')" ]; then
  echo approved > "$CLAUDE_CONFIG_DIR/answered"
else
  IFS= read -r reason
  printf 'denied: %s\n' "$reason" > "$CLAUDE_CONFIG_DIR/answered"
fi
"#;
    format!("{prompt}{STUB_LEAD}")
}

/// Runs `run --bridge telegram` until the prompt is posted, answers it with `answer <code>
/// <rest>` from the allowed user, and returns the run's result, what the lead was typed, and
/// every message posted.
fn answer_the_prompt(
    answer: &str,
    rest: &str,
    extra: &[&str],
) -> Option<(Value, String, Vec<Value>)> {
    let (env, _server, lead) = lead_in_tmux("prompting-lead", &prompting_lead())?;
    let mock = Telegram::start();
    let mut cmd = env.std_cmd();
    cmd.env("TEAMCTL_CLAUDE_BIN", &lead)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("IS_SANDBOX")
        .args([
            "run",
            "--json",
            "go",
            "--settle",
            "300ms",
            "--timeout",
            "60s",
        ])
        .args(["--bridge", "telegram", "--chat", &CHAT.to_string()])
        .args(["--allow", &USER.to_string(), "--api", &mock.url])
        .args(extra)
        .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let is_prompt = |m: &Value| {
        m["text"]
            .as_str()
            .is_some_and(|t| t.contains("permission prompt"))
            && m.get("reply_markup").is_some()
    };
    assert!(
        wait_until(std::time::Duration::from_secs(30), || mock
            .sent()
            .iter()
            .any(is_prompt)),
        "no prompt posted: {:?}",
        mock.sent()
    );
    let posted = mock.sent().into_iter().find(is_prompt).unwrap();
    let code = posted["reply_markup"]["inline_keyboard"][0][0]["callback_data"]
        .as_str()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    // A stranger's answer changes nothing; the allowed user's does.
    mock.say(USER + 1, CHAT, now_ts(), &format!("approve {code}"));
    mock.say(USER, CHAT, now_ts(), &format!("{answer} {code} {rest}"));
    let out = child.wait_with_output().unwrap();
    let typed = fs::read_to_string(env.root.join("answered")).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    Some((parse(&out.stdout), typed, mock.sent()))
}

#[test]
fn a_leads_permission_prompt_is_approved_from_the_chat() {
    // The stub's lead spends $0.014: past 1% of $1.
    let cap = ["--max-cost", "1", "--warn-at", "1"];
    let Some((r, typed, sent)) = answer_the_prompt("approve", "", &cap) else {
        return;
    };
    assert_eq!(r["state"], "done");
    assert_eq!(typed, "approved\n");
    let prompt = sent
        .iter()
        .find(|m| m.get("reply_markup").is_some())
        .unwrap();
    let text = prompt["text"].as_str().unwrap();
    // The pane's text is posted as a code block, never as markup.
    assert!(text.contains("echo hi > ran.txt @admin"), "{text}");
    assert!(text.contains("Do you want to proceed?"), "{text}");
    let pre = prompt["entities"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["type"] == "pre");
    assert!(pre, "{prompt}");
    let texts: Vec<&str> = sent.iter().filter_map(|m| m["text"].as_str()).collect();
    assert!(
        texts
            .iter()
            .any(|t| t.contains("spend warning: budget warning: the team has spent")),
        "{texts:?}"
    );
    let last = texts.last().unwrap();
    assert!(last.contains("ended: done (cost $"), "{last}");
}

#[test]
fn a_leads_permission_prompt_is_denied_from_the_chat_with_the_reason() {
    let Some((r, typed, _)) = answer_the_prompt("deny", "use a branch", &[]) else {
        return;
    };
    assert_eq!(r["state"], "done");
    assert_eq!(typed, "denied: use a branch\n");
}

#[test]
fn the_chats_flags_go_with_bridge() {
    let env = TestEnv::new();
    env.cmd()
        .args(["run", "hello", "--chat", "42"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("go with --bridge"));
    env.cmd()
        .args(["run", "hello", "--bridge", "telegram", "--chat", "42"])
        .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--allow"));
}
