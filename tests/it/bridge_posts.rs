//! What a chat takes from the bridge: a post is cut to the service's length (Telegram's 4,096
//! characters), in the teammate's text only, saying so, its code and answer line whole; a post
//! the service refuses for good (a 400 Bad Request, Slack's `msg_too_long`) is dropped,
//! journaled and never holds up the next ([`crate::chat_mock`]'s services refuse as the real
//! ones do).

use std::fs;

use serde_json::{Value, json};

use crate::bridge::{CHAT, REQUEST, USER, expect, fixture_with, now_ts};
use crate::chat_mock::{SLACK_TOKEN, Slack, TOKEN, Telegram};
use crate::common::{JsonLines, TestEnv, idle_frame};

/// A running `teamctl bridge telegram --json` on team alpha against `mock`.
fn telegram_bridge(env: &TestEnv, mock: &Telegram) -> JsonLines {
    let mut cmd = env.std_cmd();
    cmd.args(["bridge", "telegram", "--chat", &CHAT.to_string()])
        .args(["--allow", &USER.to_string(), "--api", &mock.url])
        .args(["--team", "alpha", "--timeout", "60s", "--json"])
        .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN);
    JsonLines::spawn_with_stderr(cmd)
}

/// Team alpha whose worker asks to start on a plan of 600 tag characters (each shown as a
/// 9-character escape: 5,400 in all, over Telegram's 4,096) and has reported idle since, then
/// asks to run `echo next` ([`REQUEST`]).
fn a_plan_too_long_for_telegram() -> TestEnv {
    let env = fixture_with(&[(REQUEST, "echo next")]);
    let plan: String = std::iter::repeat_n('\u{e0041}', 600).collect();
    let frame = json!({"type": "plan_approval_request", "from": "worker",
        "timestamp": "2026-11-29T09:58:00.000Z", "planFilePath": "/w/plan.md",
        "planContent": plan, "requestId": "plan_approval-1@worker@alpha"});
    let inbox = env.inbox("alpha", "team-lead");
    let mut entries: Vec<Value> = serde_json::from_slice(&fs::read(&inbox).unwrap()).unwrap();
    entries.insert(
        0,
        json!({"from": "worker", "text": frame.to_string(),
            "timestamp": "2026-11-29T09:58:00.000Z", "color": "blue", "read": false}),
    );
    entries.insert(
        1,
        json!({"from": "worker", "text": idle_frame("worker"),
            "timestamp": "2026-11-29T09:58:30.000Z", "color": "blue", "read": false}),
    );
    fs::write(&inbox, serde_json::to_string_pretty(&entries).unwrap()).unwrap();
    env
}

/// Telegram refuses a text over 4,096 characters (400, "message is too long"): the plan's
/// post is cut to fit, in the plan only, saying how much was cut, its code and answer line
/// whole; the next request is posted after it (before, the plan was tried again for ever and
/// nothing after it was posted).
#[test]
fn a_post_longer_than_telegram_takes_is_cut_to_fit_and_the_next_follows() {
    let env = a_plan_too_long_for_telegram();
    let mock = Telegram::start();
    let mut b = telegram_bridge(&env, &mock);
    let plan = expect(&b, "posted");
    assert_eq!(plan["request_id"], "plan_approval-1@worker@alpha");
    let next = expect(&b, "posted");
    assert_eq!(next["request_id"], REQUEST);
    assert!(mock.refused().is_empty(), "{:?}", mock.refused());
    let sent = mock.sent();
    let text = sent[0]["text"].as_str().unwrap();
    assert!(text.encode_utf16().count() <= 4096);
    let code = plan["code"].as_str().unwrap();
    assert!(
        text.ends_with(&format!(
            "answer: approve {code}   or: deny {code} [reason]"
        )),
        "{text}"
    );
    let shown = text.matches("\\u{e0041}").count();
    assert!((300..600).contains(&shown), "{shown}");
    assert!(
        text.contains(&format!(
            "\n… (cut: {} more characters)",
            (600 - shown) * "\\u{e0041}".len()
        )),
        "{text}"
    );
    // The plan's block entity covers the plan as shown, and nothing after it.
    let pre = &sent[0]["entities"][1];
    assert_eq!(pre["type"], "pre");
    assert_eq!(pre["length"], shown * "\\u{e0041}".len());
    b.child.kill().unwrap();
}

/// A post Telegram refuses for good (a 400 Bad Request) is dropped: journaled (`dropped`, with
/// what Telegram said), never tried again while the bridge runs, and the next is posted.
#[test]
fn a_post_refused_for_good_is_dropped_and_holds_up_nothing() {
    let env = fixture_with(&[(REQUEST, "echo first"), ("perm-2-second", "echo second")]);
    let mock = Telegram::start();
    mock.refuse(1);
    let mut b = telegram_bridge(&env, &mock);
    let dropped = expect(&b, "dropped");
    assert_eq!(dropped["request_id"], REQUEST);
    assert!(
        dropped["detail"]
            .as_str()
            .unwrap()
            .contains("HTTP 400: Bad Request: can't parse entities"),
        "{dropped}"
    );
    let posted = expect(&b, "posted");
    assert_eq!(posted["request_id"], "perm-2-second");
    // A round trip later, the dropped post was not tried again.
    mock.say(USER, CHAT, now_ts(), "status");
    expect(&b, "status");
    mock.wait_sent(2);
    assert_eq!(mock.refused().len(), 1);
    assert_eq!(mock.sent().len(), 2, "{:?}", mock.sent());
    let journal = fs::read_to_string(env.data_dir().join("bridge.jsonl")).unwrap();
    let events: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["event"], "dropped");
    assert_eq!(events[0]["request_id"], REQUEST);
    b.child.kill().unwrap();
}

/// Slack's `msg_too_long` refuses that message for good: dropped, and the next posted.
#[test]
fn a_post_slack_refuses_for_good_is_dropped_and_holds_up_nothing() {
    let env = fixture_with(&[(REQUEST, "echo first"), ("perm-2-second", "echo second")]);
    let mock = Slack::start();
    mock.refuse(1);
    let mut cmd = env.std_cmd();
    cmd.args(["bridge", "slack", "--channel", "C1", "--allow", "U7"])
        .args([
            "--api",
            &mock.url,
            "--team",
            "alpha",
            "--timeout",
            "60s",
            "--json",
        ])
        .env("TEAMCTL_SLACK_TOKEN", SLACK_TOKEN);
    let mut b = JsonLines::spawn_with_stderr(cmd);
    let dropped = expect(&b, "dropped");
    assert_eq!(dropped["request_id"], REQUEST);
    assert!(
        dropped["detail"].as_str().unwrap().contains("msg_too_long"),
        "{dropped}"
    );
    assert_eq!(expect(&b, "posted")["request_id"], "perm-2-second");
    assert_eq!(mock.posts().len(), 1);
    b.child.kill().unwrap();
}
