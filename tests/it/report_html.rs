//! The record's `report.html`: one self-contained page that loads nothing, whose embedded JSON
//! has each member's cost equal to summary.json's (its cost over time ending there), where no
//! teammate text becomes markup, and which stays small for a big team.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::{TestEnv, assistant_entry, run_json, tags};

/// HTML a teammate could write to run a script, load something or hide what it says.
pub(crate) const ATTACK: &str = "<script>alert(1)</script></script><img src=x onerror=alert(2)>\
    <a href=\"javascript:alert(3)\">click</a> https://evil.example/x <style>*{x:url(http://evil.example)}</style>\
    <!-- <svg onload=alert(4)> \u{202e}evil\u{2066} line\u{2028}sep\u{2029} &amp; ' \" <iframe srcdoc=x>";

/// The tags the page itself writes; anything else came from somewhere it must not.
const TAGS: &[&str] = &[
    "!doctype", "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "p",
    "strong", "em", "code", "pre", "div", "table", "tr", "th", "td", "ol", "ul", "li", "span",
    "svg", "path", "text", "polyline", "rect", "h3", "script",
];

/// A pane teammate's session: `n` responses a minute apart, each naming the team and itself,
/// each after the first a turn of its own (a prompt half a minute before it).
fn transcript(env: &TestEnv, team: &str, member: &str, i: usize, n: usize) {
    let dir = env.root.join("projects/-tmp");
    fs::create_dir_all(&dir).unwrap();
    let mut out = String::new();
    let sid = format!("9a8b7c6d-0000-4000-8000-{i:012x}");
    for k in 0..n {
        if k > 0 {
            let at = format!(
                "2026-11-29T{:02}:{:02}:{:02}.000Z",
                8 + (k - 1) / 60,
                (k - 1) % 60,
                30 + i
            );
            let e = json!({"type": "user", "timestamp": at, "teamName": team, "agentName": member,
                "sessionId": sid, "message": {"role": "user", "content": "next"}});
            out.push_str(&format!("{e}\n"));
        }
        let at = format!("2026-11-29T{:02}:{:02}:{:02}.000Z", 8 + k / 60, k % 60, i);
        let mut e = assistant_entry(
            &format!("msg_{member}_{k}"),
            &at,
            json!([{"type": "text", "text": "working"}]),
            "end_turn",
            (100 + k as u64, 20),
        );
        e["teamName"] = team.into();
        e["agentName"] = member.into();
        e["sessionId"] = sid.clone().into();
        out.push_str(&format!("{e}\n"));
    }
    fs::write(dir.join(format!("{sid}.jsonl")), out).unwrap();
}

/// A team whose every field a teammate writes carries [`ATTACK`]: a member's type, messages'
/// texts and summaries, a task's subject; two teammates with transcripts.
pub(crate) fn hostile_team() -> TestEnv {
    let env = TestEnv::new();
    env.team("h", &[("worker", Some("blue")), ("helper", None)]);
    env.edit_config("h", |cfg| {
        cfg["members"][1]["agentType"] = ATTACK.into();
    });
    let msgs: Vec<Value> = (0..3)
        .map(|k| {
            json!({"from": "worker", "text": ATTACK, "summary": ATTACK,
                   "timestamp": format!("2026-11-29T09:5{k}:00.000Z"), "read": false})
        })
        .collect();
    fs::write(
        env.inbox("h", "team-lead"),
        serde_json::to_string(&msgs).unwrap(),
    )
    .unwrap();
    let tasks = env.root.join("tasks/h");
    fs::create_dir_all(&tasks).unwrap();
    let task = json!({"id": "1", "subject": ATTACK, "description": ATTACK,
                      "status": "in_progress", "owner": ATTACK, "blocks": [], "blockedBy": []});
    fs::write(tasks.join("1.json"), task.to_string()).unwrap();
    transcript(&env, "h", "worker", 1, 5);
    transcript(&env, "h", "helper", 2, 3);
    env
}

fn export(env: &TestEnv, team: &str, out: &Path) -> (String, Value) {
    run_json(
        env,
        &["--team", team, "export", "--out", out.to_str().unwrap()],
    );
    let page = fs::read_to_string(out.join("report.html")).unwrap();
    let summary = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    (page, summary)
}

/// The embedded JSON block, parsed.
fn embedded(page: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"teamctl-record\">";
    let start = page.find(open).expect("the JSON block") + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

/// Every tag of the page is one the page writes, with no handler, link, source or style
/// attribute and no URL; the only script is the JSON block; nothing in the style loads.
fn check_markup(page: &str) {
    let lower = page.to_lowercase();
    assert_eq!(lower.matches("<script").count(), 1, "one script element");
    assert_eq!(lower.matches("</script").count(), 1, "closed once");
    for (name, tag) in tags(page) {
        assert!(TAGS.contains(&name.as_str()), "tag <{tag}>");
        let t = tag.to_lowercase();
        for bad in [
            " on",
            "href",
            "src=",
            "style=",
            "http:",
            "https:",
            "javascript:",
        ] {
            assert!(!t.contains(bad), "{bad:?} in <{tag}>");
        }
    }
    let style = &page[page.find("<style>").unwrap()..page.find("</style>").unwrap()];
    for bad in ["url(", "@import", "http", "@font-face"] {
        assert!(!style.contains(bad), "{bad} in the style");
    }
    assert!(page.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">"
    ));
    assert!(page.contains("<meta name=\"viewport\" content=\"width=device-width"));
}

/// Each member's cost in the page equals summary.json's, and its series ends there.
fn check_costs(page: &str, summary: &Value) -> usize {
    let e = embedded(page);
    let members = e["members"].as_array().unwrap();
    let want = summary["cost"]["members"].as_array().unwrap();
    assert!(!want.is_empty());
    for w in want {
        let m = members
            .iter()
            .find(|m| m["name"] == w["name"])
            .unwrap_or_else(|| panic!("{} in the page", w["name"]));
        let (got, cost) = (
            m["cost_usd"].as_f64().unwrap(),
            w["cost_usd"].as_f64().unwrap(),
        );
        assert!((got - cost).abs() < 1e-9, "{got} {cost}");
        let series = m["cost_series"].as_array().unwrap();
        assert!(!series.is_empty(), "{m}");
        let last = series.last().unwrap()[1].as_f64().unwrap();
        assert!((last - cost).abs() < 1e-9, "{last} {cost}");
        // Times in order, costs never falling.
        for p in series.windows(2) {
            assert!(p[0][0].as_str().unwrap() <= p[1][0].as_str().unwrap());
            assert!(p[0][1].as_f64().unwrap() <= p[1][1].as_f64().unwrap() + 1e-15);
        }
    }
    members.len()
}

#[test]
fn the_page_is_in_the_record_with_the_costs_of_summary_json() {
    let env = hostile_team();
    let out = env.dir.path().join("rec");
    let (page, summary) = export(&env, "h", &out);
    check_markup(&page);
    assert!(check_costs(&page, &summary) >= 2);
    let e = embedded(&page);
    assert_eq!(e["team"], "h");
    let worker = e["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "worker")
        .unwrap();
    assert_eq!(worker["cost_series"].as_array().unwrap().len(), 5);
    assert!(page.contains("<polyline class=\"c"), "the chart");
    // Tokens per minute: five responses a minute apart, 100+k input and 20 output tokens each.
    assert_eq!(worker["tokens_bucket_minutes"], 1);
    let tokens: Vec<f64> = worker["tokens_series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_f64().unwrap())
        .collect();
    assert_eq!(tokens, [120.0, 121.0, 122.0, 123.0, 124.0]);
    assert!(page.contains("Tokens per minute"));
    // A lane: every response ended its turn, so the worker is idle from its first line on,
    // its one session marked as its start; the page's legend says what a lane cannot know.
    let lane = &worker["lane"];
    assert_eq!(lane["spans"][0][0], "2026-11-29T08:00:01.000Z");
    assert_eq!(lane["spans"][0][2], "idle");
    assert_eq!(lane["marks"].as_array().unwrap().len(), 1);
    assert_eq!(lane["marks"][0][1], "started");
    assert!(page.contains("<rect class=\"s-idle\""));
    assert!(
        page.contains("It cannot know a member&#39;s state before its first transcript line")
            || page.contains("It cannot know a member's state before its first transcript line")
    );
    // No run: no limits.
    assert_eq!(e["cap"], Value::Null);
    assert!(page.contains("No run took this record: no limits are known."));
    // The archive holds the same page.
    let tgz = env.dir.path().join("rec.tar.gz");
    run_json(
        &env,
        &["--team", "h", "export", "--out", tgz.to_str().unwrap()],
    );
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(fs::File::open(&tgz).unwrap()));
    let names: Vec<String> = ar
        .entries()
        .unwrap()
        .map(|e| e.unwrap().path().unwrap().display().to_string())
        .collect();
    assert!(names.contains(&"rec/report.html".to_string()), "{names:?}");
}

#[test]
fn teammate_html_never_becomes_markup() {
    let env = hostile_team();
    let out = env.dir.path().join("rec");
    let (page, _) = export(&env, "h", &out);
    check_markup(&page);
    // Shown as text, escaped, in each place: the message, its summary, the task, the owner.
    let shown =
        "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;";
    assert!(page.matches(shown).count() >= 5, "{page}");
    assert!(page.contains("&lt;a href=&quot;javascript:alert(3)&quot;&gt;click&lt;/a&gt;"));
    // Bidi overrides and the line separators are visible escapes, never raw.
    assert!(page.contains("\\u{202e}evil\\u{2066}"));
    for c in ['\u{202e}', '\u{2066}', '\u{2028}', '\u{2029}'] {
        let outside = page.split("id=\"teamctl-record\"").next().unwrap();
        assert!(!outside.contains(c), "{c:?} raw in the page");
    }
    assert!(!page.contains('\u{2028}') && !page.contains('\u{2029}'));
    // Every URL in the page is teammate text shown escaped, in no tag (checked above).
    let urls = page.matches("http://").count() + page.matches("https://").count();
    let planted = page.matches("https://evil.example/x").count()
        + page.matches("url(http://evil.example)").count();
    assert_eq!(urls, planted);
}

/// Team `big`: 10 teammates × 300 messages each (each carrying [`ATTACK`]), with transcripts.
pub(crate) fn big_team() -> TestEnv {
    let env = TestEnv::new();
    let names: Vec<String> = (0..10).map(|i| format!("mate{i}")).collect();
    let members: Vec<(&str, Option<&str>)> = names.iter().map(|n| (n.as_str(), None)).collect();
    env.team("big", &members);
    let text = format!("{} {}", "a plausible report line ".repeat(12), ATTACK);
    for (i, name) in names.iter().enumerate() {
        let msgs: Vec<Value> = (0..300)
            .map(|k| {
                json!({"from": names[(i + 1) % 10], "text": text, "summary": "progress",
                       "timestamp": format!("2026-11-29T09:{:02}:{:02}.{i:03}Z", k / 60, k % 60),
                       "read": true})
            })
            .collect();
        fs::write(
            env.inbox("big", name),
            serde_json::to_string(&msgs).unwrap(),
        )
        .unwrap();
        transcript(&env, "big", name, i + 1, 300);
    }
    env
}

/// 10 teammates × 300 messages each, with transcripts: the page stays under 2 MB.
#[test]
fn a_big_team_has_a_small_page() {
    let env = big_team();
    let out = env.dir.path().join("rec");
    let (page, summary) = export(&env, "big", &out);
    // 300 turns each: every lane was resampled, its waits none, its turns still there.
    let e = embedded(&page);
    for m in e["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] != "team-lead")
    {
        assert_eq!(m["lane"]["resampled"], true, "{}", m["name"]);
        let spans = m["lane"]["spans"].as_array().unwrap();
        assert!(spans.len() > 100 && spans.len() <= 240, "{}", spans.len());
        assert!(spans.iter().all(|s| s[2] == "working" || s[2] == "idle"));
    }
    eprintln!(
        "report.html for 10 members x 300 messages: {} bytes",
        page.len()
    );
    assert_eq!(summary["messages"].as_array().unwrap().len(), 3000);
    assert!(page.len() < 2_000_000, "{} bytes", page.len());
    // Every message is listed; the texts past the budget are left to summary.json, and said so.
    assert_eq!(page.matches("<li><div>").count(), 3000);
    assert!(page.contains("more message(s) are left out to keep this page small"));
    check_markup(&page);
    assert!(check_costs(&page, &summary) >= 10);
}

/// A lead whose session ended (Claude Code's own figure, `cost-state`) with an in-process
/// teammate: each member's series ends at its figure in summary.json (the lead's share without
/// its teammate's), and the copies of the teammate's history count once.
#[test]
fn claude_codes_own_figures_end_the_series() {
    let env = TestEnv::new();
    env.team("cc", &[("helper", None)]);
    let dir = env.root.join("projects/-tmp");
    fs::create_dir_all(&dir).unwrap();
    let sid = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";
    let said = |id: &str, at: &str| {
        assistant_entry(
            id,
            at,
            json!([{"type": "text", "text": id}]),
            "end_turn",
            (1000, 100),
        )
    };
    let lead = [
        said("l1", "2026-11-29T09:00:00.000Z"),
        said("l2", "2026-11-29T09:05:00.000Z"),
        json!({"type": "cost-state", "totalCostUSD": 0.5, "modelUsage": {"claude-opus-5-5":
            {"inputTokens": 5000, "outputTokens": 500, "cacheReadInputTokens": 0,
             "cacheCreationInputTokens": 0, "costUSD": 0.5}}}),
    ];
    let text: String = lead.iter().map(|l| format!("{l}\n")).collect();
    fs::write(dir.join(format!("{sid}.jsonl")), text).unwrap();
    let subs = dir.join(sid).join("subagents");
    fs::create_dir_all(&subs).unwrap();
    // Two copies of the teammate's history, as Claude Code up to 2.1.178 wrote them.
    let mut first = said("h1", "2026-11-29T09:01:00.000Z");
    first["uuid"] = "u-1".into();
    let copies = [
        vec![first.clone()],
        vec![first, said("h2", "2026-11-29T09:02:00.000Z")],
    ];
    for (k, copy) in copies.iter().enumerate() {
        let text: String = copy.iter().map(|l| format!("{l}\n")).collect();
        fs::write(subs.join(format!("agent-a{k}.jsonl")), text).unwrap();
        fs::write(
            subs.join(format!("agent-a{k}.meta.json")),
            r#"{"name":"helper"}"#,
        )
        .unwrap();
    }
    let out = env.dir.path().join("rec");
    let (page, summary) = export(&env, "cc", &out);
    assert_eq!(check_costs(&page, &summary), 2);
    let e = embedded(&page);
    let m = |name: &str| {
        e["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(m("team-lead")["cost_source"], "claude_code");
    assert_eq!(m("team-lead")["cost_series"].as_array().unwrap().len(), 2);
    assert_eq!(m("helper")["cost_series"].as_array().unwrap().len(), 2);
    // The helper's own responses, as computed: its points are those costs, unscaled.
    let h = m("helper");
    let pts = h["cost_series"].as_array().unwrap();
    let one = pts[0][1].as_f64().unwrap();
    assert!(
        (pts[1][1].as_f64().unwrap() - 2.0 * one).abs() < 1e-12,
        "{h}"
    );
}

/// 09:mm on the day `a_teammates_day` tells.
fn at(m: u32) -> String {
    format!("2026-11-29T09:{m:02}:00.000Z")
}

/// Team `l` and its worker's day, as files: a turn with a task tool call and a rate-limited
/// call, a permission request answered two minutes later, an idle notification, then a second
/// session (a restart), and the task the worker did.
fn a_teammates_day(env: &TestEnv) {
    env.team("l", &[("worker", None)]);
    let dir = env.root.join("projects/-tmp");
    fs::create_dir_all(&dir).unwrap();
    let mine = |mut e: Value, sid: &str| {
        e["teamName"] = "l".into();
        e["agentName"] = "worker".into();
        e["sessionId"] = sid.into();
        format!("{e}\n")
    };
    let s1 = "1a2b3c4d-0000-4000-8000-000000000001";
    let s2 = "1a2b3c4d-0000-4000-8000-000000000002";
    let prompt = |m: u32| {
        json!({"type": "user", "timestamp": at(m),
        "message": {"role": "user", "content": "do task 1"}})
    };
    let first = [
        mine(prompt(0), s1),
        mine(
            assistant_entry(
                "r1",
                &at(1),
                json!([{"type": "tool_use", "id": "tu1",
            "name": "TaskUpdate", "input": {"taskId": "1", "status": "in_progress",
            "owner": "worker"}}]),
                "tool_use",
                (10, 5),
            ),
            s1,
        ),
        mine(
            json!({"type": "system", "subtype": "api_error", "level": "error",
            "timestamp": at(2), "error": {"status": 429}, "retryAttempt": 1, "maxRetries": 10}),
            s1,
        ),
        mine(
            assistant_entry(
                "r2",
                &at(3),
                json!([{"type": "text", "text": "asking"}]),
                "tool_use",
                (10, 5),
            ),
            s1,
        ),
        mine(
            assistant_entry(
                "r3",
                &at(8),
                json!([{"type": "tool_use", "id": "tu2",
            "name": "TaskUpdate", "input": {"taskId": "1", "status": "completed"}}]),
                "end_turn",
                (10, 5),
            ),
            s1,
        ),
    ];
    fs::write(dir.join(format!("{s1}.jsonl")), first.concat()).unwrap();
    let second = [
        mine(prompt(20), s2),
        mine(
            assistant_entry(
                "r4",
                &at(21),
                json!([{"type": "text", "text": "back"}]),
                "end_turn",
                (10, 5),
            ),
            s2,
        ),
    ];
    fs::write(dir.join(format!("{s2}.jsonl")), second.concat()).unwrap();
    let frame = |v: Value, m: u32| {
        json!({"from": "worker", "text": v.to_string(),
        "timestamp": at(m), "read": true})
    };
    let lead_inbox = [
        frame(
            json!({"type": "permission_request", "request_id": "perm-1", "agent_id": "worker",
            "tool_name": "Bash", "tool_use_id": "t", "description": "x", "input": {},
            "permission_suggestions": []}),
            4,
        ),
        frame(
            json!({"type": "idle_notification", "from": "worker",
            "timestamp": at(9)}),
            9,
        ),
    ];
    fs::write(
        env.inbox("l", "team-lead"),
        serde_json::to_string(&lead_inbox).unwrap(),
    )
    .unwrap();
    let answer = json!([{"from": "team-lead", "timestamp": at(6), "read": true,
        "text": json!({"type": "permission_response", "request_id": "perm-1",
            "subtype": "success", "response": {"updated_input": {}, "permission_updates": []}})
            .to_string()}]);
    fs::write(env.inbox("l", "worker"), answer.to_string()).unwrap();
    let tasks = env.root.join("tasks/l");
    fs::create_dir_all(&tasks).unwrap();
    let task = json!({"id": "1", "subject": "Fix it", "description": "", "status": "completed",
                      "owner": "worker", "blocks": [], "blockedBy": []});
    fs::write(tasks.join("1.json"), task.to_string()).unwrap();
}

/// A teammate's day as its record tells it: a turn with a task tool call and a rate-limited
/// call, a permission request answered two minutes later, an idle notification, then a second
/// session (a restart); the lane, the marks and the task's times are in the page.
#[test]
fn lanes_and_tasks_over_time_come_from_the_record() {
    let env = TestEnv::new();
    a_teammates_day(&env);

    let out = env.dir.path().join("rec");
    let (page, summary) = export(&env, "l", &out);
    check_markup(&page);
    check_costs(&page, &summary);
    let e = embedded(&page);
    let worker = e["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "worker")
        .unwrap()
        .clone();
    let spans: Vec<(String, String)> = worker["lane"]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s[0].as_str().unwrap()[11..16].to_string(),
                s[2].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("09:00", "working"),
        ("09:02", "rate_limited"),
        ("09:03", "working"),
        ("09:04", "permission"),
        ("09:06", "working"),
        ("09:08", "idle"),
        ("09:20", "working"),
        ("09:21", "idle"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(spans, want, "{}", worker["lane"]);
    assert_eq!(
        worker["lane"]["marks"],
        json!([[at(0), "started"], [at(20), "new_session"]])
    );
    assert!(page.contains("<rect class=\"s-rate_limited\""));
    assert!(page.contains("<rect class=\"s-permission\""));
    assert!(page.contains("<path class=\"mk-new\""));
    // The task: claimed and in progress at 09:01, completed at 09:08 (the worker's calls).
    let t = &e["tasks"][0];
    assert_eq!(t["id"], "1");
    let ev: Vec<(String, String, bool)> = t["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["time"].as_str().unwrap()[11..16].to_string(),
                format!(
                    "{}={}",
                    v["what"].as_str().unwrap(),
                    v["value"].as_str().unwrap_or("")
                ),
                v["approximate"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ev,
        [
            ("09:01".to_string(), "status=in_progress".to_string(), false),
            ("09:01".to_string(), "owner=worker".to_string(), false),
            ("09:08".to_string(), "status=completed".to_string(), false),
        ]
    );
    assert!(page.contains("<rect class=\"t-in_progress\""));
    assert!(page.contains("<rect class=\"t-completed\""));
}

/// 40 teammates with 300 turns each: the drawings share the page (fewer points and spans
/// each), each series still ends at its member's cost, and the page stays under 2 MB.
#[test]
fn a_team_of_forty_shares_the_page() {
    let env = TestEnv::new();
    let names: Vec<String> = (0..40).map(|i| format!("mate{i}")).collect();
    let members: Vec<(&str, Option<&str>)> = names.iter().map(|n| (n.as_str(), None)).collect();
    env.team("forty", &members);
    for (i, name) in names.iter().enumerate() {
        transcript(&env, "forty", name, i + 1, 300);
    }
    let out = env.dir.path().join("rec");
    let (page, summary) = export(&env, "forty", &out);
    eprintln!(
        "report.html for 40 members x 300 turns: {} bytes",
        page.len()
    );
    assert!(page.len() < 2_000_000, "{} bytes", page.len());
    check_markup(&page);
    assert!(check_costs(&page, &summary) >= 40);
    let e = embedded(&page);
    for m in e["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] != "team-lead")
    {
        assert_eq!(
            m["cost_series"].as_array().unwrap().len(),
            100,
            "{}",
            m["name"]
        );
        assert!(m["tokens_series"].as_array().unwrap().len() <= 100);
        assert!(m["tokens_bucket_minutes"].as_u64().unwrap() > 1);
        assert!(m["lane"]["spans"].as_array().unwrap().len() <= 60);
    }
}
