//! `teamctl bridge slack` and `teamctl bridge webhook` against mock services on 127.0.0.1
//! ([`crate::chat_mock`]): the same promises as Telegram's (`tests/it/bridge.rs`), through a
//! thread's replies and through signed POSTs.

use serde_json::{Value, json};
use teamctl::ops::chat::webhook::sign;

use crate::bridge::{REQUEST, expect, fixture, now_ts, worker_inbox};
use crate::chat_mock::{Receiver, SLACK_TOKEN, Slack, free_addr, post_answer};
use crate::common::{JsonLines, TestEnv};

fn slack_bridge(env: &TestEnv, mock: &Slack) -> JsonLines {
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge",
        "slack",
        "--channel",
        "C1",
        "--allow",
        "U7",
        "--api",
        &mock.url,
    ])
    .args(["--team", "alpha", "--timeout", "60s", "--json"])
    .env("TEAMCTL_SLACK_TOKEN", SLACK_TOKEN);
    JsonLines::spawn_with_stderr(cmd)
}

#[test]
fn slack_a_reply_in_the_thread_answers_and_others_change_nothing() {
    let env = fixture();
    let mock = Slack::start();
    mock.rate_limit(1);
    let mut b = slack_bridge(&env, &mock);
    let code = expect(&b, "posted")["code"].as_str().unwrap().to_string();
    let post = &mock.wait_posts(1)[0];
    assert_eq!(post["channel"], "C1");
    let text = post["text"].as_str().unwrap();
    // The teammate's `@admin https://…` is inside a code block, `<`/`>` could not form links.
    assert!(
        text.contains("```echo hi &gt; ran.txt @admin https://evil.example/x```"),
        "{text}"
    );
    assert!(text.contains(&format!("approve {code}")), "{text}");
    assert_eq!(post["parse"], "none");
    let ts = post["ts"].as_str().unwrap().to_string();

    mock.reply(&ts, "U8", now_ts(), &format!("approve {code}"));
    assert_eq!(expect(&b, "refused")["detail"], "user not allowed");
    mock.reply(&ts, "U7", now_ts() - 60, &format!("approve {code}"));
    mock.reply(&ts, "U7", now_ts(), "approve 0000000000");
    assert_eq!(expect(&b, "refused")["detail"], "unknown code");
    assert_eq!(worker_inbox(&env), Vec::<Value>::new());
    mock.reply(&ts, "U7", now_ts(), &format!("approve {code}"));
    let approved = expect(&b, "approved");
    assert_eq!(
        (&approved["user"], &approved["chat"]),
        (&json!("U7"), &json!("C1"))
    );
    let inbox = worker_inbox(&env);
    assert_eq!(inbox.len(), 1);
    assert!(inbox[0]["text"].as_str().unwrap().contains(REQUEST));
    b.child.kill().unwrap();
    let err = b.stderr();
    assert!(
        err.contains("slack chat.postMessage: rate limited (429), waiting 1s"),
        "{err}"
    );
    assert!(!err.contains("SECRET"), "{err}");
    assert_eq!(mock.unauthorized(), 0);
}

const SECRET: &str = "0123456789abcdef-webhook";

#[test]
fn webhook_posts_are_signed_and_only_fresh_signed_answers_count() {
    let env = fixture();
    let receiver = Receiver::start();
    let addr = free_addr();
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge",
        "webhook",
        "--url",
        &receiver.url,
        "--listen",
        &addr,
    ])
    .args(["--chat", "ops", "--allow", "alice", "--team", "alpha"])
    .args(["--timeout", "60s", "--json"])
    .env("TEAMCTL_WEBHOOK_SECRET", SECRET);
    let mut b = JsonLines::spawn_with_stderr(cmd);
    let code = expect(&b, "posted")["code"].as_str().unwrap().to_string();
    let (raw, ts, sig) = receiver.wait(1)[0].clone();
    let body: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(body["code"], code.as_str());
    assert!(body["text"].as_str().unwrap().contains("echo hi > ran.txt"));
    assert_eq!(
        body["parts"][1],
        json!({"kind": "theirs", "text": "worker"})
    );
    let ts = ts.unwrap();
    assert_eq!(
        sig.unwrap(),
        sign(SECRET, ts.parse().unwrap(), raw.as_bytes())
    );

    let answer =
        json!({"user": "alice", "chat": "ops", "text": format!("approve {code}")}).to_string();
    let now = now_ts();
    let signed = |t: i64, body: &str, secret: &str| {
        vec![
            ("X-Teamctl-Timestamp", t.to_string()),
            ("X-Teamctl-Signature", sign(secret, t, body.as_bytes())),
        ]
    };
    assert_eq!(post_answer(&addr, &[], &answer), 401);
    assert_eq!(
        post_answer(&addr, &signed(now, &answer, "wrong-secret-wrong"), &answer),
        401
    );
    assert_eq!(
        post_answer(&addr, &signed(now - 301, &answer, SECRET), &answer),
        401
    );
    let mut tampered = signed(now, &answer, SECRET);
    tampered[1].1 = sign(SECRET, now, b"{}");
    assert_eq!(post_answer(&addr, &tampered, &answer), 401);
    let bob = json!({"user": "bob", "chat": "ops", "text": format!("approve {code}")}).to_string();
    assert_eq!(post_answer(&addr, &signed(now, &bob, SECRET), &bob), 202);
    assert_eq!(expect(&b, "refused")["detail"], "user not allowed");
    assert_eq!(worker_inbox(&env), Vec::<Value>::new());

    assert_eq!(
        post_answer(&addr, &signed(now, &answer, SECRET), &answer),
        202
    );
    expect(&b, "approved");
    assert_eq!(worker_inbox(&env).len(), 1);
    // The same signed answer again: a replay, refused before the bridge hears it (409).
    assert_eq!(
        post_answer(&addr, &signed(now, &answer, SECRET), &answer),
        409
    );
    // Signed anew, it is heard, and refused (the code is spent).
    assert_eq!(
        post_answer(&addr, &signed(now + 1, &answer, SECRET), &answer),
        202
    );
    assert_eq!(
        expect(&b, "refused")["detail"],
        "code already used or retired"
    );
    assert_eq!(worker_inbox(&env).len(), 1);
    b.child.kill().unwrap();
    assert!(!b.stderr().contains(SECRET));
}

/// A running `teamctl bridge webhook --json` on team alpha, answers on `addr`.
fn webhook_bridge(env: &TestEnv, receiver: &Receiver, addr: &str) -> JsonLines {
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge",
        "webhook",
        "--url",
        &receiver.url,
        "--listen",
        addr,
    ])
    .args(["--chat", "ops", "--allow", "alice", "--team", "alpha"])
    .args(["--timeout", "60s", "--json"])
    .env("TEAMCTL_WEBHOOK_SECRET", SECRET);
    JsonLines::spawn_with_stderr(cmd)
}

/// A signed `say`, sent again with the same bytes within its window, is said once: refused as
/// a replay (409) by the bridge that took it, and by the bridge started after it on the same
/// data dir; the same words signed anew are said again.
#[test]
fn a_signed_answer_sent_again_is_taken_once_across_a_restart() {
    let env = fixture();
    let receiver = Receiver::start();
    let addr = free_addr();
    let mut first = webhook_bridge(&env, &receiver, &addr);
    expect(&first, "posted");
    let say = json!({"user": "alice", "chat": "ops", "text": "say worker hi"}).to_string();
    let now = now_ts();
    let signed = |t: i64| {
        vec![
            ("X-Teamctl-Timestamp", t.to_string()),
            ("X-Teamctl-Signature", sign(SECRET, t, say.as_bytes())),
        ]
    };
    assert_eq!(post_answer(&addr, &signed(now), &say), 202);
    expect(&first, "said");
    for _ in 0..5 {
        assert_eq!(post_answer(&addr, &signed(now), &say), 409);
    }
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let mut second = webhook_bridge(&env, &receiver, &addr);
    assert!(crate::common::wait_until(
        std::time::Duration::from_secs(30),
        || std::net::TcpStream::connect(&addr).is_ok()
    ));
    assert_eq!(post_answer(&addr, &signed(now), &say), 409);
    assert_eq!(worker_inbox(&env).len(), 1);
    assert_eq!(post_answer(&addr, &signed(now + 1), &say), 202);
    expect(&second, "said");
    assert_eq!(worker_inbox(&env).len(), 2);
    let kept = std::fs::read_to_string(env.data_dir().join("webhook-seen")).unwrap();
    assert_eq!(kept.lines().count(), 2, "{kept}");
    second.child.kill().unwrap();
}

#[test]
fn all_teams_posts_each_teams_requests_and_say_names_the_team() {
    use crate::bridge::{CHAT, USER};
    use crate::chat_mock::{TOKEN, Telegram};
    let env = fixture();
    env.team("beta", &[("tester", Some("green"))]);
    env.lead_by_teamctl("beta");
    std::fs::copy(
        env.inbox("alpha", "team-lead"),
        env.inbox("beta", "team-lead"),
    )
    .unwrap();
    // A team teamctl does not lead is left alone.
    env.team("gamma", &[("x", None)]);
    let mock = Telegram::start();
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge", "telegram", "--chat", "42", "--allow", "7", "--api", &mock.url,
    ])
    .args(["--all-teams", "--timeout", "60s", "--json"])
    .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN);
    let mut b = JsonLines::spawn_with_stderr(cmd);
    let mut teams = [expect(&b, "posted"), expect(&b, "posted")].map(|p| p["team"].clone());
    teams.sort_by_key(|t| t.to_string());
    assert_eq!(teams, [json!("alpha"), json!("beta")]);
    mock.say(USER, CHAT, now_ts(), "say worker hi");
    assert!(
        expect(&b, "refused")["detail"]
            .as_str()
            .unwrap()
            .contains("team/member")
    );
    mock.say(USER, CHAT, now_ts(), "say beta/tester hi");
    assert_eq!(expect(&b, "said")["team"], "beta");
    assert_eq!(
        crate::common::read_entries(&env.inbox("beta", "tester"))[0]["text"],
        "hi"
    );
    b.child.kill().unwrap();
    let err = b.stderr();
    assert!(err.contains("team 'gamma' is left alone"), "{err}");
}

#[test]
fn a_need_is_posted_once_across_restarts() {
    use crate::chat_mock::{TOKEN, Telegram};
    let env = fixture();
    // An inbox nobody reads, holding an unread message (a teammate wrote to a wrong name).
    let entry = json!([{"from": "worker", "text": "done", "timestamp": "2026-11-29T09:59:30.000Z",
        "color": "blue", "read": false}]);
    std::fs::write(env.inbox("alpha", "ghost"), entry.to_string()).unwrap();
    let mock = Telegram::start();
    let run = || {
        let mut cmd = env.std_cmd();
        cmd.args([
            "bridge", "telegram", "--chat", "42", "--allow", "7", "--api", &mock.url,
        ])
        .args(["--team", "alpha", "--timeout", "60s", "--json"])
        .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN);
        JsonLines::spawn_with_stderr(cmd)
    };
    let mut first = run();
    let mut events = [first.next(), first.next()].map(|e| e["event"].as_str().unwrap().to_string());
    events.sort();
    assert_eq!(events, ["notice", "posted"]);
    let notice = mock
        .wait_sent(2)
        .into_iter()
        .find(|m| m["text"].as_str().unwrap().contains("needs you"))
        .unwrap();
    assert!(
        notice["text"].as_str().unwrap().contains("ghost"),
        "{notice}"
    );
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    let mut second = run();
    mock.say(crate::bridge::USER, crate::bridge::CHAT, now_ts(), "status");
    expect(&second, "status");
    assert_eq!(mock.wait_sent(3).len(), 3);
    second.child.kill().unwrap();
}

/// The bridge answers 300 requests from the chat while proper-lockfile writers (the lock
/// library Claude Code's own writers follow) append to the lead's and the worker's inboxes:
/// every request is answered exactly once, and no message of anyone's is lost, doubled or
/// altered.
#[test]
fn three_hundred_answers_beside_proper_lockfile_writers_lose_nothing() {
    use std::collections::HashMap;

    use crate::bridge::{CHAT, USER, fixture_with};
    use crate::chat_mock::{TOKEN, Telegram};
    use crate::common::{
        Sent, assert_exactly_once, json_lines, node_peer, peer, read_entries, write_in,
    };

    let Some(script) = node_peer() else { return };
    let env = fixture_with(&[]);
    fs_write(&env.inbox("alpha", "worker"), "[]");
    let team = teamctl::team::config::Team::open(
        &teamctl::store::paths::Layout::new(&env.root),
        &teamctl::store::paths::TeamName::parse("alpha").unwrap(),
        &teamctl::team::records::Records::none(),
    )
    .unwrap();
    let (lead, worker) = (
        env.inbox("alpha", "team-lead"),
        env.inbox("alpha", "worker"),
    );
    let writers: Vec<_> = [
        (&lead, "peer-lead-a-"),
        (&lead, "peer-lead-b-"),
        (&worker, "peer-w-"),
    ]
    .iter()
    .map(|(inbox, prefix)| {
        let args = [
            "append",
            inbox.to_str().unwrap(),
            "--from",
            "bob",
            "--count",
            "150",
        ];
        peer(&script, &args)
            .args(["--prefix", prefix])
            .spawn()
            .unwrap()
    })
    .collect();
    let mock = Telegram::start();
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge", "telegram", "--chat", "42", "--allow", "7", "--api", &mock.url,
    ])
    .args([
        "--team",
        "alpha",
        "--timeout",
        "300s",
        "--json",
        "--lock-timeout",
        "30s",
    ])
    .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN);
    let mut b = JsonLines::spawn_with_stderr(cmd);
    let mut answered: HashMap<String, usize> = HashMap::new();
    for batch in 0..3 {
        for i in 0..100 {
            let id = format!("perm-{batch}{i:02}-load");
            let perm = json!({"type": "permission_request", "request_id": id,
                "agent_id": "worker", "tool_name": "Bash", "tool_use_id": format!("t-{id}"),
                "description": "d", "input": {"command": format!("echo {id}")},
                "permission_suggestions": []});
            write_in(&team, "worker", "team-lead", &perm.to_string());
        }
        let mut codes = Vec::new();
        while codes.len() < 100 {
            let v = b.next();
            if v["event"] == "posted" {
                codes.push(v["code"].as_str().unwrap().to_string());
            }
        }
        for code in &codes {
            mock.say(USER, CHAT, now_ts(), &format!("approve {code}"));
        }
        let mut done = 0;
        while done < 100 {
            let v = b.next();
            assert_ne!(v["event"], "refused", "{v}");
            if v["event"] == "approved" {
                *answered
                    .entry(v["request_id"].as_str().unwrap().into())
                    .or_default() += 1;
                done += 1;
            }
        }
    }
    b.child.kill().unwrap();
    assert_eq!(answered.len(), 300);
    assert!(answered.values().all(|n| *n == 1));

    let mut peers: HashMap<String, String> = HashMap::new();
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in json_lines(&out.stdout) {
            peers.insert(
                line["msg_id"].as_str().unwrap().into(),
                line["text"].as_str().unwrap().into(),
            );
        }
    }
    assert_eq!(peers.len(), 450);
    let (lead, worker) = (read_entries(&lead), read_entries(&worker));
    assert_exactly_once(
        Sent::ById(&peers),
        lead.iter().chain(&worker).filter(|e| e["from"] == "bob"),
    );
    let responses: Vec<&str> = worker
        .iter()
        .filter(|e| e["from"] == "team-lead")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(responses.len(), 300);
    for id in answered.keys() {
        let n = responses
            .iter()
            .filter(|t| t.contains(&format!("\"{id}\"")))
            .count();
        assert_eq!(n, 1, "{id}");
    }
    assert_eq!(lead.iter().filter(|e| e["from"] == "worker").count(), 300);
}

fn fs_write(path: &std::path::Path, s: &str) {
    std::fs::write(path, s).unwrap();
}

/// With a cap, the team's spend past --warn-at is posted once, and the cap crossed is posted
/// and ends the bridge with exit 6 (as `wait` would); neither twice.
#[test]
fn spend_past_warn_at_and_past_the_cap_is_posted_and_the_bridge_ends_with_exit_6() {
    use crate::chat_mock::{TOKEN, Telegram};
    let env = crate::bridge::fixture_with(&[]);
    // $0.00028 of a $0.0005 cap: 56%, past --warn-at 50%.
    env.spend_as("alpha", "worker", "r1");
    env.spend_as("alpha", "worker", "r2");
    let mock = Telegram::start();
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge", "telegram", "--chat", "42", "--allow", "7", "--api", &mock.url,
    ])
    .args(["--team", "alpha", "--timeout", "60s", "--json"])
    .args(["--max-cost", "0.0005", "--warn-at", "50"])
    .env("TEAMCTL_TELEGRAM_TOKEN", TOKEN);
    let mut b = JsonLines::spawn_with_stderr(cmd);
    let warned = expect(&b, "notice");
    assert_eq!(warned["detail"], "alpha budget_warning --max-cost ");
    let text = mock.wait_sent(1)[0]["text"].as_str().unwrap().to_string();
    assert!(
        text.contains("budget warning: the team has spent") && text.contains("--max-cost"),
        "{text}"
    );
    env.spend_as("alpha", "worker", "r3");
    env.spend_as("alpha", "worker", "r4");
    let over = expect(&b, "notice");
    assert_eq!(over["detail"], "alpha budget_exceeded");
    assert_eq!(expect(&b, "end")["detail"], "budget");
    assert_eq!(b.child.wait().unwrap().code(), Some(6));
    let sent = mock.sent();
    assert!(
        sent[1]["text"]
            .as_str()
            .unwrap()
            .contains("budget exceeded"),
        "{sent:?}"
    );
    assert!(b.stderr().contains("budget exceeded"));
}
