//! The lanes' tests: what a record's lines make of a member's time.
use super::*;
use serde_json::json;

fn t(s: &str) -> DateTime<Utc> {
    parse_time(&format!("2026-12-01T{s}Z")).unwrap()
}

fn feed(b: &mut LaneBuilder, v: serde_json::Value) {
    let bytes = v.to_string();
    b.feed(
        "w",
        &crate::team::transcript::entry::parse(bytes.as_bytes()).unwrap(),
    );
}

fn cx<'a>(frames: &'a [FrameAt<'a>], waiting: Option<Waiting>) -> Context<'a> {
    Context {
        end: t("01:00:00"),
        stall_after: Duration::from_secs(300),
        frames,
        waiting_at_end: waiting,
        max_spans: MAX_SPANS,
    }
}

fn states(l: &Lane) -> Vec<(String, &'static str)> {
    l.spans
        .iter()
        .map(|s| (s.from.format("%H:%M:%S").to_string(), s.state.as_str()))
        .collect()
}

#[test]
fn turns_rate_limits_stalls_permissions_and_sessions() {
    let mut b = LaneBuilder::default();
    let user = |at: &str, sid: &str| {
        json!({"type":"user","timestamp":format!("2026-12-01T{at}Z"),
        "sessionId":sid,"message":{"role":"user","content":"go"}})
    };
    let said = |at: &str, stop: &str| {
        json!({"type":"assistant","timestamp":format!("2026-12-01T{at}Z"),
        "sessionId":"s1","message":{"id":at,"model":"m","content":[],"stop_reason":stop}})
    };
    feed(&mut b, user("00:00:00", "s1"));
    feed(
        &mut b,
        json!({"type":"system","subtype":"api_error","timestamp":"2026-12-01T00:01:00Z",
        "sessionId":"s1","error":{"status":429}}),
    );
    feed(&mut b, said("00:02:00", "tool_use"));
    // Silent for 10 minutes inside the turn: stalled after 5.
    feed(&mut b, said("00:12:00", "end_turn"));
    // A new session: a restart.
    feed(&mut b, user("00:20:00", "s2"));
    feed(
        &mut b,
        json!({"type":"assistant","isApiErrorMessage":true,"apiErrorStatus":529,
        "timestamp":"2026-12-01T00:21:00Z","sessionId":"s2",
        "message":{"id":"x","model":"<synthetic>","content":[]}}),
    );
    feed(&mut b, user("00:30:00", "s2"));
    let frames = [
        FrameAt {
            at: t("00:31:00"),
            from: "w",
            to: "team-lead",
            kind: "permission_request",
        },
        FrameAt {
            at: t("00:33:00"),
            from: "team-lead",
            to: "w",
            kind: "permission_response",
        },
        FrameAt {
            at: t("00:40:00"),
            from: "w",
            to: "team-lead",
            kind: "idle_notification",
        },
    ];
    let lane = b.lane("w", &cx(&frames, Some(Waiting::Dead)));
    assert_eq!(
        states(&lane),
        [
            ("00:00:00".into(), "working"),
            ("00:01:00".into(), "rate_limited"),
            ("00:02:00".into(), "working"),
            ("00:07:00".into(), "stalled"),
            ("00:12:00".into(), "idle"),
            ("00:20:00".into(), "working"),
            ("00:21:00".into(), "overloaded"),
            ("00:30:00".into(), "working"),
            ("00:31:00".into(), "permission"),
            ("00:33:00".into(), "working"),
            // Silent inside its turn from 00:30 (the request aside): stalled after 5 minutes.
            ("00:35:00".into(), "stalled"),
            ("00:40:00".into(), "dead"),
        ]
    );
    assert_eq!(lane.spans.last().unwrap().to, t("01:00:00"));
    assert_eq!(
        lane.marks,
        [
            MarkAt {
                at: t("00:00:00"),
                mark: Mark::Started,
                why: None,
            },
            MarkAt {
                at: t("00:20:00"),
                mark: Mark::NewSession,
                why: None,
            }
        ]
    );
    let json = serde_json::to_value(&lane).unwrap();
    assert_eq!(
        json["spans"][1],
        json!([
            "2026-12-01T00:01:00.000Z",
            "2026-12-01T00:02:00.000Z",
            "rate_limited"
        ])
    );
    assert_eq!(
        json["marks"][1],
        json!(["2026-12-01T00:20:00.000Z", "new_session"])
    );
    assert!(b.lane("nobody", &cx(&[], None)).spans.is_empty());
}

#[test]
fn a_repeated_request_is_a_retry_and_long_lanes_keep_their_waits() {
    let mut b = LaneBuilder::default();
    let req = |at: &str| json!({"type":"api-request","timestamp":format!("2026-12-01T{at}Z"),"requestDigest":"d1"});
    feed(&mut b, req("00:00:00"));
    feed(&mut b, req("00:00:10"));
    let lane = b.lane("w", &cx(&[], None));
    assert_eq!(
        states(&lane),
        [
            ("00:00:00".into(), "working"),
            ("00:00:10".into(), "api_error")
        ]
    );

    let mut spans = Vec::new();
    for i in 0..1000 {
        let from = t("00:00:00") + chrono::Duration::seconds(i * 3);
        let state = if i == 500 {
            LaneState::RateLimited
        } else if i % 2 == 0 {
            LaneState::Working
        } else {
            LaneState::Idle
        };
        spans.push(Span {
            from,
            to: from + chrono::Duration::seconds(3),
            state,
        });
    }
    let r = resample(&spans, 100);
    assert!(r.len() <= 100);
    assert!(r.iter().any(|s| s.state == LaneState::RateLimited));
    assert_eq!(r.first().unwrap().from, spans[0].from);
    assert_eq!(r.last().unwrap().to, spans[999].to);
}

#[test]
fn a_tool_loop_keeps_few_events_and_the_same_lane() {
    let mut b = LaneBuilder::default();
    let at = |sec: i64| (t("00:00:00") + chrono::Duration::seconds(sec)).to_rfc3339();
    feed(
        &mut b,
        json!({"type":"user","timestamp":at(0),"message":{"content":"go"}}),
    );
    // 20 minutes of a tool loop, a line a second: a call, then its result.
    for k in 1..1200 {
        let v = if k % 2 == 1 {
            json!({"type":"assistant","timestamp":at(k),"message":{"id":format!("r{k}"),
                "model":"m","content":[],"stop_reason":"tool_use"}})
        } else {
            json!({"type":"user","timestamp":at(k),"message":{"content":[
                {"type":"tool_result","tool_use_id":"x","content":"ok"}]}})
        };
        feed(&mut b, v);
    }
    feed(
        &mut b,
        json!({"type":"assistant","timestamp":at(1200),"message":{"id":"end",
        "model":"m","content":[],"stop_reason":"end_turn"}}),
    );
    let events = b.members["w"].events.len();
    assert!(events < 60, "{events} events kept");
    let lane = b.lane("w", &cx(&[], None));
    assert_eq!(
        states(&lane),
        [("00:00:00".into(), "working"), ("00:20:00".into(), "idle")]
    );
}

/// A restart and a resume from teamctl's journal mark the member's lane at their times, with
/// why, among its sessions' marks; one of another member, or after the record's time, does not.
#[test]
fn teamctl_restarts_and_resumes_are_marked_from_its_journal() {
    use crate::team::actions::{Action, Kind};
    let mut b = LaneBuilder::default();
    let user = |at: &str| {
        json!({"type":"user","timestamp":format!("2026-12-01T{at}Z"),
        "sessionId":"s1","message":{"role":"user","content":"go"}})
    };
    feed(&mut b, user("00:00:00"));
    // Restarted and resumed onto the same session: its transcript shows only a gap.
    feed(&mut b, user("00:20:00"));
    feed(&mut b, user("00:40:00"));
    let action = |at: &str, member: &str, action: Kind, why: &str| Action {
        at: format!("2026-12-01T{at}.000Z"),
        team: "t".into(),
        member: member.into(),
        action,
        session_id: Some("s1".into()),
        pane: "%1".into(),
        why: why.into(),
    };
    b.note_action(&action("00:19:00", "w", Kind::Restart, "dead"));
    b.note_action(&action("00:39:00", "w", Kind::Resume, "the team stopped"));
    b.note_action(&action("00:10:00", "other", Kind::Restart, "stalled"));
    b.note_action(&action("02:00:00", "w", Kind::Restart, "after the record"));
    b.note_action(&action("not a time", "w", Kind::Restart, "x"));
    // Before the team's first line: an earlier team of the same name.
    let earlier = Action {
        at: "2026-11-30T23:00:00.000Z".into(),
        ..action("00:00:00", "w", Kind::Resume, "earlier team")
    };
    b.note_action(&earlier);
    assert!(!b.has("other"), "a journal line alone makes no lane");
    // The lanes reach the last restart, even after the last line.
    assert_eq!(b.extent(), Some((t("00:00:00"), t("02:00:00"))));
    let lane = b.lane("w", &cx(&[], None));
    let marks: Vec<(String, Mark, Option<&str>)> = lane
        .marks
        .iter()
        .map(|m| (iso_millis(m.at), m.mark, m.why.as_deref()))
        .collect();
    assert_eq!(
        marks,
        [
            ("2026-12-01T00:00:00.000Z".into(), Mark::Started, None),
            (
                "2026-12-01T00:19:00.000Z".into(),
                Mark::Restart,
                Some("dead")
            ),
            (
                "2026-12-01T00:39:00.000Z".into(),
                Mark::Resume,
                Some("the team stopped")
            ),
        ]
    );
    let json = serde_json::to_value(&lane).unwrap();
    assert_eq!(
        json["marks"][1],
        json!(["2026-12-01T00:19:00.000Z", "restart", "dead"])
    );
    assert_eq!(
        json["marks"][0],
        json!(["2026-12-01T00:00:00.000Z", "started"])
    );
    assert!(b.lane("other", &cx(&[], None)).marks.is_empty());
}
