//! `run --bridge telegram|slack|webhook` against the mock services ([`crate::chat_mock`]) with a
//! stub lead in a private tmux server that stops at a permission prompt drawn as Claude Code
//! 2.1.332 draws it (docs/research/claude-code-behaviour.md, "A lead's own permission prompt"):
//! the prompt is posted with a code, and the chat's answer is typed into the lead's pane.

use std::fs;

use serde_json::{Value, json};
use teamctl::ops::chat::webhook::sign;

use crate::bridge::{CHAT, USER, now_ts};
use crate::chat_mock::{Receiver, SLACK_TOKEN, Slack, TOKEN, Telegram, free_addr, post_answer};
use crate::common::{TestEnv, TmuxServer, json as parse, wait_until};
use crate::run::{STUB_LEAD, lead_in_tmux};

/// The start of a stub lead's script: `--version` answered as 2.1.332, the names of its
/// `TEAMCTL_*` variables written to `lead-env`, the screen cleared.
const STUB_START: &str = r#"[ "$1" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }
env | sed -n 's/^\(TEAMCTL_[A-Za-z0-9_]*\)=.*/\1/p' > "$CLAUDE_CONFIG_DIR/lead-env.tmp"
mv "$CLAUDE_CONFIG_DIR/lead-env.tmp" "$CLAUDE_CONFIG_DIR/lead-env"
clear
"#;

/// A script line that draws a permission prompt for the Bash command `cmd` as Claude Code
/// 2.1.332 draws it.
fn draw_prompt(cmd: &str) -> String {
    format!(
        "printf ' Bash command\\n\\n   {cmd} @admin\\n   Run a command\\n\\n Do you want to proceed?\\n \
         \\342\\235\\257 1. Yes\\n   2. Yes, and always allow access to /w from this project\\n   \
         3. No\\n\\n Esc to cancel \\302\\267 Tab to amend\\n'\n"
    )
}

/// Reads one key raw: Enter writes `approved` to `answered`; Escape reads a line (the reason)
/// and writes `denied: <line>`.
const READ_ANSWER: &str = r#"stty raw -echo
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

/// A stub lead that first shows a permission prompt and reads the answer ([`READ_ANSWER`]),
/// then carries on as [`STUB_LEAD`] (forms its team, answers, ends its turn).
fn prompting_lead() -> String {
    format!(
        "{STUB_START}{}{READ_ANSWER}{STUB_LEAD}",
        draw_prompt("echo hi > ran.txt")
    )
}

/// `run --json go` of the stub lead `(name, script)` ([`prompting_lead`] or
/// [`switching_lead`]) with the chat flags `bridge` and the chat's secret `(variable, value)` in
/// its environment: the test env (its tmux server kept with it) and the running child.
fn run_bridged(
    (name, script): (&str, &str),
    bridge: &[&str],
    secret: (&str, &str),
) -> Option<(Run, std::process::Child)> {
    let (env, server, lead) = lead_in_tmux(name, script)?;
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
        .args(bridge)
        .env(secret.0, secret.1)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    Some((
        Run {
            env,
            _server: server,
        },
        child,
    ))
}

/// The test env of a run and the private tmux server its lead runs on.
struct Run {
    env: TestEnv,
    _server: TmuxServer,
}

impl Run {
    /// Waits for the run to end, done (exit 0); its result and what the lead was typed.
    fn ended(&self, child: std::process::Child) -> (Value, String) {
        let out = child.wait_with_output().unwrap();
        let typed = fs::read_to_string(self.env.root.join("answered")).unwrap_or_default();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        (parse(&out.stdout), typed)
    }
}

/// The one-time code in a post's text (`approve CODE`).
fn code_in(text: &str) -> String {
    let after = text.split("approve ").nth(1).expect("no code in the post");
    after
        .chars()
        .take_while(char::is_ascii_alphanumeric)
        .collect()
}

/// Runs `run --bridge telegram` until the prompt is posted, answers it with `answer <code>
/// <rest>` from the allowed user, and returns the run's result, what the lead was typed, and
/// every message posted.
fn answer_the_prompt(
    answer: &str,
    rest: &str,
    extra: &[&str],
) -> Option<(Value, String, Vec<Value>)> {
    let mock = Telegram::start();
    let (chat, user) = (CHAT.to_string(), USER.to_string());
    let mut bridge = vec!["--bridge", "telegram", "--chat", &chat];
    bridge.extend(["--allow", &user, "--api", &mock.url]);
    bridge.extend(extra);
    let lead = prompting_lead();
    let (run, child) = run_bridged(
        ("prompting-lead", &lead),
        &bridge,
        ("TEAMCTL_TELEGRAM_TOKEN", TOKEN),
    )?;
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
    let (result, typed) = run.ended(child);
    Some((result, typed, mock.sent()))
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

/// The same through Slack: the prompt posted to the channel, a stranger's reply in its thread
/// changing nothing, the allowed user's `approve CODE` pressing Enter in the lead's pane.
#[test]
fn a_leads_permission_prompt_is_approved_from_a_slack_thread() {
    let mock = Slack::start();
    let bridge = ["--bridge", "slack", "--channel", "C1", "--allow", "U7"];
    let lead = prompting_lead();
    let Some((run, child)) = run_bridged(
        ("prompting-lead", &lead),
        &[&bridge[..], &["--api", &mock.url]].concat(),
        ("TEAMCTL_SLACK_TOKEN", SLACK_TOKEN),
    ) else {
        return;
    };
    let is_prompt = |m: &Value| {
        m["text"]
            .as_str()
            .is_some_and(|t| t.contains("permission prompt"))
    };
    assert!(
        wait_until(std::time::Duration::from_secs(30), || mock
            .posts()
            .iter()
            .any(is_prompt)),
        "no prompt posted: {:?}",
        mock.posts()
    );
    let posted = mock.posts().into_iter().find(is_prompt).unwrap();
    assert_eq!(posted["channel"], "C1");
    let code = code_in(posted["text"].as_str().unwrap());
    let ts = posted["ts"].as_str().unwrap();
    mock.reply(ts, "U8", now_ts(), &format!("approve {code}"));
    mock.reply(ts, "U7", now_ts(), &format!("approve {code}"));
    let (r, typed) = run.ended(child);
    assert_eq!(r["state"], "done");
    assert_eq!(typed, "approved\n");
}

/// The same through the signed webhook: the prompt POSTed to the receiver; an unsigned answer
/// is refused (401) and changes nothing, a signed one from the allowed user presses Enter.
#[test]
fn a_leads_permission_prompt_is_approved_by_a_signed_webhook_answer() {
    const SECRET: &str = "0123456789abcdef-webhook";
    let receiver = Receiver::start();
    let addr = free_addr();
    let bridge = ["--bridge", "webhook", "--chat", "ops", "--allow", "alice"];
    let lead = prompting_lead();
    let Some((run, child)) = run_bridged(
        ("prompting-lead", &lead),
        &[&bridge[..], &["--url", &receiver.url, "--listen", &addr]].concat(),
        ("TEAMCTL_WEBHOOK_SECRET", SECRET),
    ) else {
        return;
    };
    let prompt = || {
        receiver
            .wait(1)
            .into_iter()
            .map(|(raw, _, _)| serde_json::from_str::<Value>(&raw).unwrap())
            .find(|b| b["code"].is_string())
    };
    assert!(wait_until(std::time::Duration::from_secs(30), || prompt().is_some()));
    let code = prompt().unwrap()["code"].as_str().unwrap().to_string();
    let answer =
        json!({"user": "alice", "chat": "ops", "text": format!("approve {code}")}).to_string();
    assert_eq!(post_answer(&addr, &[], &answer), 401);
    let now = now_ts();
    let signed = vec![
        ("X-Teamctl-Timestamp", now.to_string()),
        ("X-Teamctl-Signature", sign(SECRET, now, answer.as_bytes())),
    ];
    assert_eq!(post_answer(&addr, &signed, &answer), 202);
    // The secret reached neither the lead nor the tmux server (whose panes inherit its
    // environment): a teammate could sign answers with it.
    crate::secrets::no_secret_in(&run.env.root.join("lead-env"));
    crate::secrets::no_secret_in_the_servers_environment(&run.env);
    let (r, typed) = run.ended(child);
    assert_eq!(r["state"], "done");
    assert_eq!(typed, "approved\n");
}

/// A stub lead whose permission prompt is replaced by another before anything is typed (the
/// first answered at its terminal, the second drawn before the run looked between them): the
/// first shows until `$CLAUDE_CONFIG_DIR/switch` exists, then the second reads the answer as
/// [`prompting_lead`]'s does.
fn switching_lead() -> String {
    format!(
        "{STUB_START}{}while [ ! -e \"$CLAUDE_CONFIG_DIR/switch\" ]; do sleep 0.05; done\nclear\n{}\
         {READ_ANSWER}{STUB_LEAD}",
        draw_prompt("echo first > a.txt"),
        draw_prompt("rm -rf ./second"),
    )
}

/// The code posted for one prompt never answers another: when the lead's screen shows a
/// different prompt, the first code is retired and the new prompt posted with its own; an
/// `approve` with the first code then types nothing, and the second prompt takes only its own.
#[test]
fn a_code_answers_only_the_prompt_it_was_posted_for() {
    let mock = Telegram::start();
    let (chat, user) = (CHAT.to_string(), USER.to_string());
    let lead = switching_lead();
    let Some((run, child)) = run_bridged(
        ("switching-lead", &lead),
        &[
            "--bridge", "telegram", "--chat", &chat, "--allow", &user, "--api", &mock.url,
        ],
        ("TEAMCTL_TELEGRAM_TOKEN", TOKEN),
    ) else {
        return;
    };
    let prompt_with = |needle: &str| {
        mock.sent().into_iter().find(|m| {
            m.get("reply_markup").is_some()
                && m["text"].as_str().is_some_and(|t| t.contains(needle))
        })
    };
    let posted = |needle: &str| {
        assert!(
            wait_until(std::time::Duration::from_secs(30), || prompt_with(needle)
                .is_some()),
            "{needle} not posted: {:?}",
            mock.sent()
        );
        code_in(prompt_with(needle).unwrap()["text"].as_str().unwrap())
    };
    let first = posted("echo first > a.txt");
    fs::write(run.env.root.join("switch"), "").unwrap();
    let second = posted("rm -rf ./second");
    assert_ne!(first, second);
    mock.say(USER, CHAT, now_ts(), &format!("approve {first}"));
    assert!(
        wait_until(std::time::Duration::from_secs(30), || mock
            .sent()
            .iter()
            .any(|m| m["text"]
                .as_str()
                .is_some_and(|t| t.contains("already used or retired")))),
        "{:?}",
        mock.sent()
    );
    mock.say(USER, CHAT, now_ts(), &format!("deny {second} not that"));
    let (r, typed) = run.ended(child);
    assert_eq!(r["state"], "done");
    assert_eq!(typed, "denied: not that\n");
}
