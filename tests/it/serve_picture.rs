//! The README's picture of `teamctl serve`: a plausible team (a lead and three teammates with
//! transcripts, a Bash request and a plan waiting, tasks in every column, ordinary messages)
//! in headless Chromium (tests/e2e/serve-browser.js --picture), at a desktop's width in light
//! mode and at a phone's in dark mode. Every member shows its cost and context, the cost chart
//! is drawn from the transcripts, no task column is squeezed; `TEAMCTL_BLESS=1` writes the
//! desktop's screenshot to docs/img/serve.png.

use std::fs;
use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::serve::serve_with;
use crate::serve_browser::drive;

const TEAM: &str = "checkout-v2";

/// `minutes` ago, as Claude Code writes a time.
fn ago(now: DateTime<Utc>, minutes: f64) -> String {
    let t = now - Duration::milliseconds((minutes * 60_000.0) as i64);
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// An API response of claude-sonnet-4-5 at `at`: its context (`cached` tokens read from the
/// cache, 3k new) and `out` tokens written, ending with `block`.
fn response(id: &str, at: &str, (cached, out): (u64, u64), block: Value) -> Value {
    let stop = if block["type"] == "tool_use" {
        "tool_use"
    } else {
        "end_turn"
    };
    json!({"type": "assistant", "timestamp": at, "sessionId": "s", "uuid": id,
        "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [block], "stop_reason": stop,
            "usage": {"input_tokens": 3000, "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 1200, "output_tokens": out}}})
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

fn bash(id: &str, command: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
}

/// `n` responses of `member` from `from` minutes ago to `to`, their context growing, the last
/// ending with `last`.
fn work(
    member: &str,
    now: DateTime<Utc>,
    (from, to): (f64, f64),
    n: u64,
    last: Value,
) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let at = ago(now, from - (from - to) * i as f64 / (n - 1) as f64);
            let block = if i + 1 == n {
                last.clone()
            } else {
                text("Reading the code.")
            };
            let context = 18_000 + i * 2_600 + (i * 7_919) % 5_000;
            response(
                &format!("msg_{member}_{i}"),
                &at,
                (context, 250 + (i * 131) % 900),
                block,
            )
        })
        .collect()
}

fn message(from: &str, text: &str, at: &str) -> Value {
    json!({"from": from, "text": text, "timestamp": at, "color": "blue", "read": true})
}

/// The team `checkout-v2` (see the module docs), its times counted back from now.
fn plausible() -> TestEnv {
    let env = TestEnv::new();
    let now = Utc::now();
    env.team(
        TEAM,
        &[
            ("backend", Some("blue")),
            ("frontend", Some("green")),
            ("tester", Some("yellow")),
        ],
    );
    env.lead_by_teamctl(TEAM);
    env.edit_config(TEAM, |c| {
        c["description"] = "One-page checkout with saved cards, behind the checkout_v2 flag".into();
    });
    let lead = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";
    let done = text("Three teammates are on it; I review each step as it lands.");
    env.transcript("/tmp", lead, &work("lead", now, (52.0, 9.0), 14, done));
    let parts = [
        (
            "backend",
            (47.0, 0.4),
            26,
            bash("t1", "cargo test -p payments saved_cards"),
        ),
        (
            "frontend",
            (44.0, 0.2),
            22,
            bash("t2", "npm run test -- CheckoutForm"),
        ),
        (
            "tester",
            (30.0, 1.5),
            12,
            bash("t3", "npx playwright test checkout.spec.ts"),
        ),
    ];
    for (member, span, n, last) in parts {
        for e in work(member, now, span, n, last) {
            env.transcript_line_as(TEAM, member, e);
        }
    }
    tasks(&env);
    let perm = json!({"type": "permission_request", "request_id": "perm-1795946280000-k3p9x2a",
        "agent_id": "tester", "tool_name": "Bash", "tool_use_id": "toolu_01",
        "description": "Run the end-to-end checkout suite against the local stack",
        "input": {"command": "npx playwright test checkout.spec.ts --project=chromium --reporter=line"},
        "permission_suggestions": []});
    let plan_id = format!("plan_approval-1795946290000@backend@{TEAM}");
    let plan = json!({"type": "plan_approval_request", "from": "backend", "timestamp": ago(now, 2.0),
        "planFilePath": "/home/dev/.claude/plans/saved-cards-api.md", "requestId": plan_id,
        "planContent": "## Saved cards API\n1. Add a `saved_cards` table (user id, token, last4, brand, expiry)\n2. POST /api/cards stores the processor's token, never the number\n3. GET /api/cards lists them for the signed-in user\n4. Tests: the handlers, and a migration test on a copy of staging"});
    let inbox = vec![
        message(
            "backend",
            "Schema for saved cards is in; moving on to the API once the plan is approved.",
            &ago(now, 14.0),
        ),
        message(
            "frontend",
            "The one-page form renders behind the flag. Card fields validate as you type.",
            &ago(now, 9.5),
        ),
        json!({"from": "backend", "text": plan.to_string(), "timestamp": ago(now, 2.0), "read": false}),
        json!({"from": "tester", "text": perm.to_string(), "timestamp": ago(now, 1.2), "read": false}),
    ];
    fs::write(
        env.inbox(TEAM, "team-lead"),
        serde_json::to_string_pretty(&inbox).unwrap(),
    )
    .unwrap();
    let to = |who: &str, t: &str, at: f64| {
        fs::write(
            env.inbox(TEAM, who),
            serde_json::to_string_pretty(&json!([message("team-lead", t, &ago(now, at))])).unwrap(),
        )
        .unwrap();
    };
    to(
        "backend",
        "Go ahead with the schema; keep card numbers out of our database entirely.",
        20.0,
    );
    to(
        "frontend",
        "Looks good. Please keep the old form reachable while the flag is off.",
        8.0,
    );
    to(
        "tester",
        "Task 5 is yours: the end-to-end checkout run, guest and signed-in.",
        6.0,
    );
    env
}

/// Tasks in every column, one blocked.
fn tasks(env: &TestEnv) {
    let dir = env.root.join("tasks").join(TEAM);
    fs::create_dir_all(&dir).unwrap();
    let all = [
        (
            "1",
            "Design the saved-cards schema and migration",
            "completed",
            Some("backend"),
            &[][..],
        ),
        (
            "2",
            "Build the one-page checkout form behind the checkout_v2 flag",
            "completed",
            Some("frontend"),
            &[],
        ),
        (
            "3",
            "Saved cards API: store the processor token, list cards per user",
            "in_progress",
            Some("backend"),
            &[],
        ),
        (
            "4",
            "Card field validation and error messages",
            "in_progress",
            Some("frontend"),
            &[],
        ),
        (
            "5",
            "End-to-end checkout tests (guest and signed-in)",
            "in_progress",
            Some("tester"),
            &[],
        ),
        (
            "6",
            "Wire the saved-cards picker into the checkout form",
            "pending",
            None,
            &["3"],
        ),
        (
            "7",
            "Accessibility pass: labels, focus order, screen-reader errors",
            "pending",
            None,
            &[],
        ),
    ];
    for (id, subject, status, owner, blocked) in all {
        let mut t = json!({"id": id, "subject": subject, "description": subject, "status": status,
            "blocks": [], "blockedBy": blocked});
        if let Some(o) = owner {
            t["owner"] = o.into();
        }
        fs::write(dir.join(format!("{id}.json")), t.to_string()).unwrap();
    }
}

#[test]
fn the_readme_picture_is_a_plausible_team_with_costs_and_a_chart() {
    let env = plausible();
    // The real clock: the team's times are counted back from it, and the transcripts' own
    // times (when each was last written) are real.
    let s = serve_with(&env, &["--team", TEAM], |c| {
        c.env_remove("TEAMCTL_NOW");
    });
    let picture = match std::env::var_os("TEAMCTL_BLESS") {
        Some(_) => Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/img/serve.png"),
        None => env.dir.path().join("serve.png"),
    };
    let phone = env.dir.path().join("serve-phone.png");
    let url = format!("{}#token={}", s.base, s.token);
    let p = s.picture(TEAM);
    assert_eq!(
        p["cost"]["members"].as_array().unwrap().len(),
        4,
        "{}",
        p["cost"]
    );
    let args = [
        "--picture",
        picture.to_str().unwrap(),
        "--phone-picture",
        phone.to_str().unwrap(),
    ];
    let Some(seen) = drive(&env, &url, &args) else {
        return;
    };
    assert_eq!(
        seen["desktop"]["members"].as_array().unwrap().len(),
        4,
        "{seen}"
    );
    assert!(picture.is_file() && phone.is_file());
}
