//! What the bridge says in a chat: a [`Post`] is our own words and the teammate's text kept
//! apart ([`Part`]), so each transport can show the teammate's text as plain code (Telegram's
//! `code`/`pre` entities, Slack's escaped code) and it never becomes a link, a mention, a bot
//! command or markup. Teammate text has its control and invisible characters written as
//! visible escapes (`\u{202e}`) and is cut to a length.

use std::fmt::Write as _;

use serde::Serialize;

use super::code::Code;
use crate::observe::need::Need;
use crate::team::protocol::{Kind, Request};
use crate::text::is_control;

/// How many characters of a command, a host or a path a post shows.
const SHORT: usize = 300;
/// How many characters of a plan's start a post shows.
const PLAN: usize = 600;

/// One run of a post's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "text")]
pub enum Part {
    /// teamctl's own words (a team name, a verb, a code).
    Ours(String),
    /// Text a teammate wrote, on one line, shown as code.
    Theirs(String),
    /// Text a teammate wrote, its lines kept, shown as a code block.
    TheirsBlock(String),
}

/// A chat message: its parts, and the code it asks to be answered with (for buttons).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Post {
    /// The text, in runs.
    pub parts: Vec<Part>,
    /// The code the message offers (`approve <code>` / `deny <code>`).
    pub code: Option<Code>,
}

impl Post {
    fn ours(mut self, s: impl Into<String>) -> Post {
        self.parts.push(Part::Ours(s.into()));
        self
    }
    fn theirs(mut self, s: &str, max: usize) -> Post {
        self.parts.push(Part::Theirs(visible(s, false, max)));
        self
    }
    fn block(mut self, s: &str, max: usize) -> Post {
        self.parts.push(Part::TheirsBlock(visible(s, true, max)));
        self
    }

    /// A reply in teamctl's own words only.
    pub fn say(text: impl Into<String>) -> Post {
        Post::default().ours(text)
    }

    /// The whole text as one string (each part as it is shown, without markup).
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                Part::Ours(s) | Part::Theirs(s) | Part::TheirsBlock(s) => s.as_str(),
            })
            .collect()
    }
}

/// Untrusted text for a chat: controls and invisible characters as visible escapes (line
/// breaks kept when `lines`, else written `\n`), at most `max` characters (then `…`), `—` when
/// empty.
pub fn visible(text: &str, lines: bool, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4) + 8);
    for (n, c) in text.trim().chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '\n' if lines => out.push('\n'),
            '\t' => out.push(' '),
            '\n' => out.push_str("\\n"),
            c if is_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    if out.is_empty() { "—".into() } else { out }
}

/// How long something has waited, as `45s`, `3m 05s`.
fn waited(secs: i64) -> String {
    crate::units::duration(secs.max(0) as u64)
}

/// The message for one request of `team`, answered with `code`.
pub fn request(team: &str, r: &Request, code: &Code) -> Post {
    let p = Post::default()
        .ours(format!("[{team}] "))
        .theirs(&r.from, 64);
    let s = |k: &str| {
        r.input
            .as_ref()
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
    };
    let p = match (r.kind, r.tool_name.as_deref()) {
        (Kind::Permission, Some("Bash")) => p
            .ours(" asks to run:\n")
            .block(s("command").unwrap_or(""), SHORT),
        (Kind::Permission, _) => p
            .ours(" asks to use ")
            .theirs(&crate::ops::policy::asks(r), SHORT),
        (Kind::PlanApproval, _) => p
            .ours(" asks to start on its plan, which begins:\n")
            .block(r.plan_content.as_deref().unwrap_or(""), PLAN),
        (Kind::SandboxPermission, _) => p
            .ours(" asks its sandbox to reach ")
            .theirs(r.host.as_deref().unwrap_or(""), SHORT),
    };
    let mut p = p
        .ours(format!("\nwaiting {} (request ", waited(r.age_seconds)))
        .theirs(&r.request_id, 100)
        .ours(format!(
            ")\nanswer: approve {code}   or: deny {code} [reason]"
        ));
    p.code = Some(code.clone());
    p
}

/// The message for a need that is not a request (a member gone, out of retries, a stopped team).
pub fn need(team: &str, n: &Need) -> Post {
    let what = match n.cause {
        "dead" => "a member is gone with work waiting",
        "stalled" => "a member has stalled inside a turn",
        "out_of_retries" => "a member's API calls ran out of retries",
        "idle_unreported" => "a member's turns end but it reports no idle",
        "misaddressed" => "messages sit in an inbox nobody reads",
        "team_stopped" => "the team has stopped with work open",
        other => other,
    };
    Post::default()
        .ours(format!("[{team}] needs you: {what}\n"))
        .theirs(&n.todo, SHORT)
}

/// The message for a permission prompt on the screen of a run's lead (`run --bridge`): the
/// pane's text (untrusted: shown as a code block) and the code that answers it.
pub fn prompt(team: &str, screen: &str, code: &Code) -> Post {
    let mut p = Post::default()
        .ours(format!(
            "[{team}] the lead is at a permission prompt; its screen shows:\n"
        ))
        .block(screen, PLAN)
        .ours(format!(
            "\nanswer: approve {code} (its first choice, Yes)   or: deny {code} [what to do \
             instead]"
        ));
    p.code = Some(code.clone());
    p
}

/// The message that retires a prompt's code: the prompt left the lead's screen unanswered
/// from the chat.
pub fn prompt_gone(team: &str, code: &Code) -> Post {
    Post::default().ours(format!(
        "[{team}] the lead's permission prompt is gone (answered in its pane, or the run \
         ended): code {code} no longer works"
    ))
}

/// The message that closes a code: its request was answered elsewhere (at a terminal, by a
/// policy) or is gone.
pub fn closed(team: &str, request_id: &str, code: &Code) -> Post {
    Post::default()
        .ours(format!("[{team}] request "))
        .theirs(request_id, 100)
        .ours(format!(
            " was answered elsewhere: code {code} no longer works"
        ))
}

/// The message that retires an expired code (a new message with a new code follows while the
/// request stays open).
pub fn expired(team: &str, request_id: &str, code: &Code) -> Post {
    Post::default()
        .ours(format!("[{team}] code {code} for request "))
        .theirs(request_id, 100)
        .ours(" expired; a new code follows")
}

/// The reply to an answer that was written.
pub fn answered(team: &str, approved: bool, r: &Request) -> Post {
    Post::default()
        .ours(format!(
            "[{team}] {} ",
            if approved { "approved" } else { "denied" }
        ))
        .theirs(&r.request_id, 100)
        .ours(" of ")
        .theirs(&r.from, 64)
}

/// The reply to `say` that was written.
pub fn said(team: &str, to: &str) -> Post {
    Post::default()
        .ours(format!("[{team}] sent to "))
        .theirs(to, 64)
}

/// One team's line of a `status` reply: its members and states, and its open codes.
pub fn status_line(team: &str, members: &[(String, String)], open: &[(Code, String)]) -> Post {
    let mut p = Post::default().ours(format!("[{team}]"));
    for (name, state) in members {
        p = p.ours(" ").theirs(name, 64).ours(format!(": {state};"));
    }
    if open.is_empty() {
        return p.ours(" no open requests");
    }
    for (code, id) in open {
        p = p.ours(format!("\n  {code} answers ")).theirs(id, 100);
    }
    p
}

/// The most characters a joined post holds (Telegram takes 4,096 per message).
const MAX_JOINED: usize = 3500;

/// Posts joined by line breaks (a `status` reply for several teams), as many as fit in one
/// chat message, then how many were left out.
pub fn join(posts: Vec<Post>) -> Post {
    let mut out = Post::default();
    let total = posts.len();
    for (i, p) in posts.into_iter().enumerate() {
        if out.text().chars().count() + p.text().chars().count() > MAX_JOINED {
            out.parts
                .push(Part::Ours(format!("\n… and {} more", total - i)));
            break;
        }
        if i > 0 {
            out.parts.push(Part::Ours("\n".into()));
        }
        out.parts.extend(p.parts);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::team::model::Frame;

    fn bash(command: &str, from: &str) -> Request {
        let frame = json!({"type": "permission_request", "request_id": "perm-1-a",
            "agent_id": from, "tool_name": "Bash", "tool_use_id": "t1", "description": "d",
            "input": {"command": command}, "permission_suggestions": []});
        let frame = Frame::decode(&frame.to_string()).unwrap();
        Request {
            request_id: "perm-1-a".into(),
            kind: Kind::Permission,
            from: from.into(),
            at: "2026-11-29T09:58:00.000Z".into(),
            age_seconds: 125,
            tool_name: Some("Bash".into()),
            description: Some("d".into()),
            input: Some(json!({"command": command})),
            plan_file_path: None,
            plan_content: None,
            host: None,
            frame,
        }
    }

    #[test]
    fn a_bash_request_says_who_what_how_long_and_how_to_answer() {
        let code = Code::parse("ab12cd34ef").unwrap();
        let p = request("alpha", &bash("npm test\nnpm run lint", "worker"), &code);
        assert_eq!(
            p.text(),
            "[alpha] worker asks to run:\nnpm test\nnpm run lint\nwaiting 2m 05s (request \
             perm-1-a)\nanswer: approve ab12cd34ef   or: deny ab12cd34ef [reason]"
        );
        assert_eq!(p.code, Some(code));
        assert!(matches!(&p.parts[1], Part::Theirs(s) if s == "worker"));
        assert!(matches!(&p.parts[3], Part::TheirsBlock(s) if s.starts_with("npm test")));
    }

    #[test]
    fn teammate_text_is_kept_apart_escaped_and_cut() {
        let code = Code::parse("ab12cd34ef").unwrap();
        let evil = format!("rm -rf /\u{202e}\u{1b}[31m {}", "x".repeat(400));
        let p = request("alpha", &bash(&evil, "w\norker"), &code);
        let theirs: Vec<&str> = p
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Theirs(s) | Part::TheirsBlock(s) => Some(s.as_str()),
                Part::Ours(_) => None,
            })
            .collect();
        assert_eq!(theirs[0], "w\\norker");
        assert!(theirs[1].starts_with("rm -rf /\\u{202e}\\u{1b}[31m x"));
        assert!(theirs[1].ends_with('…'));
        assert_eq!(
            theirs[1].chars().count(),
            SHORT + "\\u{202e}\\u{1b}".len() - 2 + 1
        );
        // The teammate's text never lands in our own runs.
        for part in &p.parts {
            if let Part::Ours(s) = part {
                assert!(!s.contains("rm -rf") && !s.contains("orker"), "{s}");
            }
        }
        assert_eq!(visible("  ", false, 5), "—");
    }

    #[test]
    fn a_joined_post_fits_one_chat_message() {
        let many: Vec<Post> = (0..100).map(|i| Post::say(format!("{i:>99}"))).collect();
        let joined = join(many).text();
        assert!(joined.chars().count() <= MAX_JOINED + 20);
        assert!(joined.ends_with("… and 65 more"), "{joined}");
        assert_eq!(join(vec![Post::say("a"), Post::say("b")]).text(), "a\nb");
    }
}
