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

impl Part {
    /// Its text, as shown.
    pub fn text(&self) -> &str {
        match self {
            Part::Ours(s) | Part::Theirs(s) | Part::TheirsBlock(s) => s,
        }
    }

    /// The same kind of run with `text`.
    fn with(&self, text: &str) -> Part {
        match self {
            Part::Ours(_) => Part::Ours(text.into()),
            Part::Theirs(_) => Part::Theirs(text.into()),
            Part::TheirsBlock(_) => Part::TheirsBlock(text.into()),
        }
    }
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
        self.parts.iter().map(Part::text).collect()
    }

    /// This post cut to what a chat takes: at most `max` as `measure` counts each part (as the
    /// chat counts what the transport sends for it). The teammate's runs are cut, the longest
    /// first, each followed by teamctl's `… (cut: N more characters)` (N of the run as shown);
    /// teamctl's own words (the code, the answer line) are never cut. A run cut to nothing is
    /// left out (a chat refuses an empty code entity). When teamctl's words alone are over, what
    /// is left is returned (the chat refuses it, and it is dropped, never holding up the next:
    /// [`super::run`]).
    pub fn fit(&self, max: usize, measure: &dyn Fn(&Part) -> usize) -> Post {
        let mut parts = self.parts.clone();
        // Whether each part may still be cut (a teammate's run not cut yet).
        let mut open: Vec<bool> = parts.iter().map(|p| !matches!(p, Part::Ours(_))).collect();
        loop {
            let total: usize = parts.iter().map(measure).sum();
            let longest = (0..parts.len())
                .filter(|&i| open[i])
                .max_by_key(|&i| measure(&parts[i]));
            let (Some(i), Some(over)) = (longest, total.checked_sub(max).filter(|o| *o > 0)) else {
                return Post {
                    parts,
                    code: self.code.clone(),
                };
            };
            let run = parts[i].clone();
            let text = run.text();
            let bounds: Vec<usize> = text
                .char_indices()
                .map(|(b, _)| b)
                .chain([text.len()])
                .collect();
            let chars = bounds.len() - 1;
            let block = matches!(run, Part::TheirsBlock(_));
            let note = |cut: usize| {
                let sep = if block { "\n" } else { " " };
                Part::Ours(format!("{sep}… (cut: {cut} more characters)"))
            };
            // Room for the run once the notice (at its longest) is added.
            let room = measure(&run).saturating_sub(over + measure(&note(chars)));
            let fits = |k: usize| measure(&run.with(&text[..bounds[k]])) <= room;
            let (mut lo, mut hi) = (0, chars);
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if fits(mid) { lo = mid } else { hi = mid - 1 }
            }
            let kept = if lo > 0 && fits(lo) { lo } else { 0 };
            // Never half an escape `visible` wrote: cut before it instead.
            let kept = text[..unsplit(&text[..bounds[kept]])].chars().count();
            let cut = run.with(&text[..bounds[kept]]);
            parts[i] = note(chars - kept);
            open[i] = false;
            if kept > 0 {
                parts.insert(i, cut);
                open.insert(i, false);
            }
        }
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

/// The length of `prefix` (a cut of [`visible`]'s text) without an escape it would split: the
/// `\u{20` of `\u{202e}`, the `\` of `\n` (an escape is at most 10 characters).
fn unsplit(prefix: &str) -> usize {
    let tail = prefix
        .char_indices()
        .rev()
        .take(10)
        .last()
        .map_or(prefix.len(), |(b, _)| b);
    let Some(at) = prefix[tail..].rfind('\\').map(|at| tail + at) else {
        return prefix.len();
    };
    let rest = &prefix[at + 1..];
    let split = rest.is_empty() || rest == "u" || (rest.starts_with("u{") && !rest.contains('}'));
    if split { at } else { prefix.len() }
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

    /// A request whose teammate text, escaped, is longer than a chat takes (Telegram: 4,096
    /// UTF-16 units): cut to fit, saying how much, its code and answer line whole.
    #[test]
    fn a_post_is_cut_to_fit_in_the_teammates_text_only() {
        let code = Code::parse("ab12cd34ef").unwrap();
        // Tag characters: each shown as a 9-character escape.
        let tags: String = std::iter::repeat_n('\u{e0041}', 300).collect();
        let p = request("alpha", &bash(&tags, &tags[..40]), &code);
        let units = |p: &Part| p.text().encode_utf16().count();
        let total: usize = p.parts.iter().map(units).sum();
        assert!(total > 2800, "{total}");
        assert_eq!(p.fit(total, &units), p);
        let fitted = p.fit(1000, &units);
        let size: usize = fitted.parts.iter().map(units).sum();
        assert!((990..=1000).contains(&size), "{size}");
        let text = fitted.text();
        assert!(
            text.ends_with("answer: approve ab12cd34ef   or: deny ab12cd34ef [reason]"),
            "{text}"
        );
        assert_eq!(fitted.code, Some(code));
        // teamctl's own words are all there, in order; the longest run (the command) is cut.
        let ours = |p: &Post| -> Vec<String> {
            p.parts
                .iter()
                .filter_map(|x| match x {
                    Part::Ours(s) if !s.contains("(cut: ") => Some(s.clone()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(ours(&fitted), ours(&p));
        let Part::TheirsBlock(cmd) = &fitted.parts[3] else {
            panic!("{:?}", fitted.parts)
        };
        let Part::Ours(note) = &fitted.parts[4] else {
            panic!("{:?}", fitted.parts)
        };
        let shown = 300 * "\\u{e0041}".len();
        assert_eq!(
            note,
            &format!("\n… (cut: {} more characters)", shown - cmd.chars().count())
        );
        assert!(cmd.starts_with("\\u{e0041}") && cmd.ends_with('}'), "{cmd}");
        assert_eq!(unsplit("ab\\u{20"), 2);
        assert_eq!(unsplit("ab\\"), 2);
        assert_eq!(unsplit("ab\\u{202e}"), 10);
        assert_eq!(unsplit("a\\nb"), 4);
        // Too little room for any of it: every run of theirs goes, teamctl's words stay.
        let bare = p.fit(10, &units);
        assert!(bare.text().ends_with("[reason]"));
        assert!(
            !bare
                .parts
                .iter()
                .any(|x| matches!(x, Part::Theirs(_) | Part::TheirsBlock(_)))
        );
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
